package io.leasekeeper.web;

import java.util.List;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.accept.ContentNegotiationStrategy;
import org.springframework.web.accept.HeaderContentNegotiationStrategy;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.servlet.config.annotation.ContentNegotiationConfigurer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The {@code Accept} header read as Spring reads it, except that any failure to parse it is the client's 406
 * NOT_ACCEPTABLE. Spring turns a malformed header into 406 only when its parser says so with an
 * {@code InvalidMediaTypeException}; some malformed values (such as {@code "/!}, a quote never closed) make the parser
 * itself throw a {@code StringIndexOutOfBoundsException} instead, which, thrown again while Spring picks the handler
 * of the first error, was answered 500 (found by {@code ServiceFuzzTest}).
 */
@Configuration(proxyBeanMethods = false)
class AcceptHeaders implements WebMvcConfigurer {

    @Override
    public void configureContentNegotiation(ContentNegotiationConfigurer configurer) {
        configurer.strategies(List.of(new Parsed()));
    }

    /** Spring's strategy for the header, its parser's failures made 406. Not a bean: Spring Security takes the one. */
    private static final class Parsed implements ContentNegotiationStrategy {

        private final HeaderContentNegotiationStrategy header = new HeaderContentNegotiationStrategy();

        @Override
        public List<MediaType> resolveMediaTypes(NativeWebRequest request) throws HttpMediaTypeNotAcceptableException {
            try {
                return header.resolveMediaTypes(request);
            } catch (HttpMediaTypeNotAcceptableException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new HttpMediaTypeNotAcceptableException("Could not parse the 'Accept' header: " + e.getMessage());
            }
        }
    }
}
