package io.leasekeeper.web;

import io.swagger.v3.oas.annotations.Hidden;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.catalina.valves.ValveBase;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * What the servlet container answers itself is a problem too, and never a 5xx for a request a client could send.
 * Requests Tomcat refuses before any servlet runs (an encoded NUL in the path, a malformed request line, a header
 * it cannot parse) get their problem from Tomcat's error report valve, replaced; errors dispatched to the error page
 * (a status sent by Spring's resource handling or by Tomcat, an exception a filter threw) get theirs from the error
 * page, which replaces Spring Boot's JSON of other fields. Tomcat answers 501 to a transfer coding or a method it
 * does not implement and 505 to an HTTP version: both refuse what the client sent, so they answer 400. A URL with a
 * path parameter ({@code ;}) is refused before any filter runs: Spring Security's firewall refuses it anyway, but only
 * after Spring has parsed the path, and a malformed escape in a path parameter made that parse throw.
 */
@Configuration(proxyBeanMethods = false)
class ContainerProblems {

    private static final String NOT_COMPLETED = "The request could not be completed.";

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> problemErrorReports() {
        return factory -> {
            factory.addContextCustomizers(context -> {
                if (context.getParent() instanceof StandardHost host) {
                    host.setErrorReportValveClass(ProblemReportValve.class.getName());
                }
            });
            factory.addContextValves(new PathParameterRefusal());
        };
    }

    /** The status a refusal answers with: a client's request is refused with a 4xx, not a 501 or 505. */
    static int refusal(int status) {
        return status == HttpStatus.NOT_IMPLEMENTED.value() || status == HttpStatus.HTTP_VERSION_NOT_SUPPORTED.value()
                ? HttpStatus.BAD_REQUEST.value() : status;
    }

    /** Writes the problem for an error response nothing else has written a body for. */
    public static class ProblemReportValve extends ErrorReportValve {

        @Override
        protected void report(Request request, Response response, Throwable throwable) {
            if (response.getStatus() < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
                return;
            }
            int status = refusal(response.getStatus());
            try {
                write(request, response, true, status, status >= 500 ? NOT_COMPLETED : "The request could not be parsed.");
            } catch (IOException | IllegalStateException e) {
                // The client is gone or the response was committed meanwhile: nothing more to say.
            }
        }
    }

    /** Answers a URL with a path parameter 400 before anything parses it; every other request passes on. */
    static final class PathParameterRefusal extends ValveBase {

        PathParameterRefusal() {
            super(true);
        }

        @Override
        public void invoke(Request request, Response response) throws IOException, ServletException {
            if (request.getRequestURI().indexOf(';') < 0) {
                getNext().invoke(request, response);
                return;
            }
            write(request, response, false, HttpStatus.BAD_REQUEST.value(), "The request URL is not acceptable.");
        }
    }

    /**
     * Writes the problem of a request the container answers itself, before (or without) the service's filters: as
     * the error report ({@code errorReport}, whose writer is null once nothing may be written) or as the response.
     */
    private static void write(Request request, Response response, boolean errorReport, int status, String detail)
            throws IOException {
        ErrorCode code = Problems.codeFor(status);
        response.setStatus(status);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        Writer writer = errorReport ? response.getReporter() : response.getWriter();
        if (writer == null) {
            return;
        }
        writer.write("{\"type\":\"" + code.typeUri() + "\",\"title\":\"" + code.title() + "\",\"status\":" + status
                + ",\"detail\":\"" + detail + "\",\"code\":\"" + code.name() + "\",\"traceId\":\""
                + TraceIds.traceId(request) + "\"}");
        response.finishResponse();
    }

    /**
     * The error page ({@code server.error.path}, {@code /error}), in place of Spring Boot's (which backs off when an
     * {@link ErrorController} exists). The exception of a 5xx was logged where it was thrown (Tomcat logs what a
     * filter throws); a request for the page itself finds no route. No operation of the API, so not in its document.
     */
    @Hidden
    @RestController
    static class ProblemErrorPage implements ErrorController {

        @RequestMapping("${server.error.path:/error}")
        ResponseEntity<ProblemDetail> error(HttpServletRequest request) {
            int status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer s
                    ? refusal(s) : HttpStatus.NOT_FOUND.value();
            HttpStatusCode statusCode = HttpStatusCode.valueOf(status);
            HttpStatus known = HttpStatus.resolve(status);
            ProblemDetail problem = ProblemDetail.forStatusAndDetail(statusCode, status >= 500 ? NOT_COMPLETED
                    : "The request was refused (" + (known == null ? status : known.getReasonPhrase()) + ").");
            if (request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI) instanceof String uri) {
                problem.setInstance(URI.create(uri));
            }
            return ResponseEntity.status(statusCode).contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .body(Problems.decorate(problem, Problems.codeFor(status), request));
        }
    }
}
