package io.leasekeeper.web;

import com.github.benmanes.caffeine.cache.Ticker;
import io.leasekeeper.config.LeasekeeperProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/**
 * The bounds of request bodies: {@link BodyLimit} while the handler reads one, {@link UnreadBodies} for what an
 * answer leaves unread, both with {@code leasekeeper.requests.body-timeout} and the clock of a {@link Ticker} bean
 * when there is one (tests), else the system's.
 */
@Configuration(proxyBeanMethods = false)
class RequestBodies {

    @Bean
    FilterRegistrationBean<BodyLimit> bodyLimit(JsonMapper json, LeasekeeperProperties properties,
                                                ObjectProvider<Ticker> ticker) {
        FilterRegistrationBean<BodyLimit> registration = new FilterRegistrationBean<>(
                new BodyLimit(json, properties.requests().bodyTimeout(), ticker.getIfAvailable(Ticker::systemTicker)));
        registration.setOrder(FilterOrder.BODY_LIMIT);
        return registration;
    }

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> unreadBodies(LeasekeeperProperties properties,
                                                                           ObjectProvider<Ticker> ticker) {
        return factory -> factory.addEngineValves(
                new UnreadBodies(properties.requests().bodyTimeout(), ticker.getIfAvailable(Ticker::systemTicker)));
    }
}
