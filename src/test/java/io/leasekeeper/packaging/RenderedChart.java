package io.leasekeeper.packaging;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The chart rendered by Helm itself ({@code helm template}, through helm-java's bundled library) and
 * read back as typed Kubernetes objects; kinds the model does not know (the prometheus-operator's) as
 * generic resources.
 */
record RenderedChart(String manifest, List<HasMetadata> objects) {

    static final Path CHART = Path.of("helm/leasekeeper");
    static final Path ALL_OPTIONS = Path.of("src/test/resources/helm/all-options.yaml");
    /** The values the chart requires and has no default for. */
    static final Path REQUIRED = Path.of("src/test/resources/helm/required.yaml");
    private static final KubernetesSerialization KUBERNETES = new KubernetesSerialization();

    /** The chart's defaults, and the one value it requires ({@link #REQUIRED}). */
    static RenderedChart withDefaults() {
        return render(template -> template.withValuesFile(REQUIRED));
    }

    static RenderedChart withEveryOptionOn() {
        return render(template -> template.withValuesFile(ALL_OPTIONS));
    }

    static RenderedChart render(UnaryOperator<TemplateCommand> values) {
        String manifest = values.apply(new Helm(CHART).template().withName("lk").withNamespace("leases")).call();
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : manifest.split("(?m)^---\\s*$")) {
            if (!document.lines().allMatch(line -> line.isBlank() || line.startsWith("#"))) {
                objects.add(KUBERNETES.unmarshal(document, HasMetadata.class));
            }
        }
        return new RenderedChart(manifest, objects);
    }

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    <T extends HasMetadata> T one(Class<T> type) {
        List<T> found = all(type);
        if (found.size() != 1) {
            throw new AssertionError("expected one " + type.getSimpleName() + ", found " + found.size());
        }
        return found.getFirst();
    }

    List<String> kinds() {
        return objects.stream().map(HasMetadata::getKind).toList();
    }

    /** A prometheus-operator object (or any kind without a typed model) by kind. */
    GenericKubernetesResource custom(String kind) {
        return objects.stream().filter(o -> o instanceof GenericKubernetesResource && o.getKind().equals(kind))
                .map(GenericKubernetesResource.class::cast).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " in " + kinds()));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> spec(GenericKubernetesResource resource) {
        return (Map<String, Object>) resource.getAdditionalProperties().get("spec");
    }
}
