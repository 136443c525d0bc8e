package io.leasekeeper.web;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Requests Tomcat refuses before any servlet runs (an encoded NUL in the path, a malformed request
 * line) answer a problem too, instead of Tomcat's HTML error page.
 */
@Configuration(proxyBeanMethods = false)
class ContainerProblems {

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> problemErrorReports() {
        return factory -> factory.addContextCustomizers(context -> {
            if (context.getParent() instanceof StandardHost host) {
                host.setErrorReportValveClass(ProblemReportValve.class.getName());
            }
        });
    }

    /** Writes the problem for an error response nothing else has written a body for. */
    public static class ProblemReportValve extends ErrorReportValve {

        @Override
        protected void report(Request request, Response response, Throwable throwable) {
            int status = response.getStatus();
            if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
                return;
            }
            ErrorCode code = switch (status) {
                case 404 -> ErrorCode.NOT_FOUND;
                case 405 -> ErrorCode.METHOD_NOT_ALLOWED;
                case 413 -> ErrorCode.REQUEST_TOO_LARGE;
                default -> status >= 500 ? ErrorCode.INTERNAL_ERROR : ErrorCode.REQUEST_REJECTED;
            };
            String detail = status >= 500 ? "The request could not be completed." : "The request could not be parsed.";
            String body = "{\"type\":\"" + code.typeUri() + "\",\"title\":\"" + code.title() + "\",\"status\":" + status
                    + ",\"detail\":\"" + detail + "\",\"code\":\"" + code.name() + "\",\"traceId\":\""
                    + TraceIds.fresh() + "\"}";
            try {
                response.setContentType("application/problem+json");
                response.setCharacterEncoding(StandardCharsets.UTF_8.name());
                Writer writer = response.getReporter();
                if (writer != null) {
                    writer.write(body);
                    response.finishResponse();
                }
            } catch (IOException | IllegalStateException e) {
                // The client is gone or the response was committed meanwhile: nothing more to say.
            }
        }
    }
}
