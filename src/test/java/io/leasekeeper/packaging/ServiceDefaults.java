package io.leasekeeper.packaging;

import java.util.Properties;
import org.springframework.beans.factory.config.YamlPropertiesFactoryBean;
import org.springframework.core.io.FileSystemResource;

/** The service's own defaults (src/main/resources/application.yml), which the image and the chart must match. */
final class ServiceDefaults {

    private ServiceDefaults() {
    }

    static Properties properties() {
        YamlPropertiesFactoryBean yaml = new YamlPropertiesFactoryBean();
        yaml.setResources(new FileSystemResource("src/main/resources/application.yml"));
        return yaml.getObject();
    }
}
