package io.leasekeeper.web;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.RequestFacade;
import org.apache.coyote.AbstractProcessor;
import org.apache.coyote.ActionHook;
import org.apache.tomcat.util.net.SocketWrapperBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the client of a request has closed its connection. The Servlet API tells nothing of a client that went
 * away until a write fails (and a small write to a closed connection does not fail), and Tomcat does not watch the
 * socket of a request in progress, synchronous or asynchronous. So a waiting request looks at its connection
 * itself: a non-blocking read into Tomcat's own buffer of the connection ({@code SocketWrapperBase.isReadyForRead},
 * as Tomcat does for non-blocking I/O), which finds the end of the stream once the client's FIN has arrived. Bytes
 * the client sent meanwhile (a pipelined request) stay in that buffer, where Tomcat reads its next request from. One
 * system call, on this request's connection only.
 *
 * <p>Tomcat does not expose the connection of a request: it is reached through the fields its own classes use
 * (the facade's request, the processor that serves it), found once. Under another container, or should a version
 * of Tomcat move them, the answer is "not known to be closed" (logged once), and a waiter whose client has gone is
 * answered at its deadline; {@code ClientConnectionsTest} fails first, on the Tomcat this service ships with.
 */
public final class ClientConnections {

    private static final Logger log = LoggerFactory.getLogger(ClientConnections.class);

    /** The paths to a request's connection, or null when this Tomcat does not have them. */
    private record Paths(VarHandle facadeRequest, VarHandle hook, MethodHandle socketWrapper) {
    }

    private static final Paths PATHS = paths();

    private ClientConnections() {
    }

    /** True when the request's client has closed its connection (its end of the stream has arrived). */
    public static boolean closedByClient(HttpServletRequest request) {
        SocketWrapperBase<?> socket = connection(request);
        if (socket == null) {
            return false;
        }
        if (socket.isClosed()) {
            return true;
        }
        try {
            socket.isReadyForRead(); // true: the client sent more (kept for Tomcat); false: nothing yet
            return false;
        } catch (IOException endOrReset) { // EOFException at the end of the stream; a reset; a closed channel
            return true;
        }
    }

    /** Whether requests' connections can be looked at here: false under another container. */
    static boolean available() {
        return PATHS != null;
    }

    private static SocketWrapperBase<?> connection(ServletRequest request) {
        if (PATHS == null) {
            return null;
        }
        while (request instanceof ServletRequestWrapper wrapper) {
            request = wrapper.getRequest();
        }
        if (!(request instanceof RequestFacade facade)) {
            return null;
        }
        try {
            Request connector = (Request) PATHS.facadeRequest().get(facade);
            ActionHook hook = connector == null ? null : (ActionHook) PATHS.hook().get(connector.getCoyoteRequest());
            return hook instanceof AbstractProcessor processor
                    ? (SocketWrapperBase<?>) PATHS.socketWrapper().invoke(processor) : null;
        } catch (Throwable e) {
            return null;
        }
    }

    private static Paths paths() {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            return new Paths(
                    MethodHandles.privateLookupIn(RequestFacade.class, lookup)
                            .findVarHandle(RequestFacade.class, "request", Request.class),
                    MethodHandles.privateLookupIn(org.apache.coyote.Request.class, lookup)
                            .findVarHandle(org.apache.coyote.Request.class, "hook", ActionHook.class),
                    MethodHandles.privateLookupIn(AbstractProcessor.class, lookup)
                            .findVirtual(AbstractProcessor.class, "getSocketWrapper",
                                    MethodType.methodType(SocketWrapperBase.class)));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            log.warn("Clients that hang up cannot be seen on this container ({}): a waiting request whose client has"
                    + " gone is answered at its deadline", e.toString());
            return null;
        }
    }
}
