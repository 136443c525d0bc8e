package io.leasekeeper.packaging;

import static io.leasekeeper.packaging.RenderedChart.ALL_OPTIONS;
import static io.leasekeeper.packaging.RenderedChart.CHART;
import static io.leasekeeper.packaging.RenderedChart.REQUIRED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.leasekeeper.LeasekeeperApplication;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.SettingNames;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.config.YamlPropertiesFactoryBean;
import org.springframework.beans.factory.config.YamlMapFactoryBean;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;
import org.yaml.snakeyaml.Yaml;

/**
 * The Helm chart without a cluster: Helm itself lints and renders it (with its defaults and with every
 * option on), and the manifests, read back as typed Kubernetes objects, are checked against what the
 * service really is: the probes and the metrics path are asked of the running service on its
 * management port, the settings are bound to the service's own {@link LeasekeeperProperties}, the user
 * is the Dockerfile's, and the shipped dashboard and rules are the repository's files byte for byte.
 */
class HelmChartTest extends IntegrationTest {

    private static final Path DASHBOARD = CHART.resolve("files/leasekeeper-dashboard.json");
    private static final Path RULES = CHART.resolve("files/leasekeeper-alerts.yml");

    @Test
    void helmLintPassesStrictlyWithTheDefaultValuesAndWithEveryOptionOn(@TempDir Path copy) throws IOException {
        // helm lint takes no values file: lint a copy of the chart whose values.yaml has the required value
        // set, then every option on.
        Trees.copy(CHART, copy);
        for (Path values : List.of(REQUIRED, ALL_OPTIONS)) {
            Map<String, Object> merged = deepMerge(yaml(new FileSystemResource(CHART.resolve("values.yaml"))),
                    yaml(new FileSystemResource(values)));
            Files.writeString(copy.resolve("values.yaml"), new Yaml().dump(merged));
            LintResult lint = new Helm(copy).lint().strict().call();
            assertThat(lint.isFailed()).as(values + ": " + lint.getMessages()).isFalse();
        }
    }

    /** Contract 1.1, "Tokens": the chart sets the audiences a token must name, or says that the check is off. */
    @Test
    void anAudienceIsRequiredUnlessTheCheckIsSwitchedOffExplicitly() {
        assertThatThrownBy(() -> RenderedChart.render(template -> template))
                .hasMessageContaining("jwt.audiences is required")
                .hasMessageContaining("set leasekeeper.security.audienceCheck=false instead");
        assertThat(audiences(configFile(RenderedChart.withDefaults()))).containsExactly("leasekeeper");
        assertThat(audiences(configFile(RenderedChart.withEveryOptionOn())))
                .containsExactly("leasekeeper", "https://leases.internal");

        Properties off = configFile(RenderedChart.render(t -> t.set("leasekeeper.security.audienceCheck", "false")));
        assertThat(audiences(off)).isEmpty();
        assertThat(bind(off).security().audienceCheck()).isFalse();
        assertThatThrownBy(() -> RenderedChart.render(t -> t.withValuesFile(REQUIRED)
                .set("leasekeeper.security.audienceCheck", "false")))
                .hasMessageContaining("jwt.audiences is set, yet leasekeeper.security.audienceCheck is false");
    }

    /** The chart's switch reaches the service, which says at start what it means. */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void withTheAudienceCheckOffTheServiceWarnsAtStartThatTokensOfAnyAudienceAreAccepted(@TempDir Path config,
            CapturedOutput output) throws IOException {
        Files.writeString(config.resolve("application.yaml"),
                configText(RenderedChart.render(t -> t.set("leasekeeper.security.audienceCheck", "false"))));
        TestDatabase.Connection db = TestDatabase.connection();
        try (ConfigurableApplicationContext service = new SpringApplicationBuilder(LeasekeeperApplication.class).run(
                "--spring.config.additional-location=file:" + config + "/", "--server.port=0",
                "--leasekeeper.sweeper.enabled=false", "--leasekeeper.idempotency.cleanup-enabled=false",
                "--leasekeeper.audit.cleanup-enabled=false", "--spring.datasource.url=" + db.url(),
                "--spring.datasource.username=" + db.username(), "--spring.datasource.password=" + db.password(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation())) {
            assertThat(output.getOut().lines().filter(l -> l.contains("The audience check is off")))
                    .singleElement().satisfies(line -> assertThat(line)
                            .contains("WARN").contains("tokens of any audience are accepted"));
            Api api = new Api(((WebServerApplicationContext) service).getWebServer().getPort());
            String foreign = TestTokens.with("alice", tenant, TestTokens.READ, c -> c.audience("https://billing.example.test"));
            assertThat(api.get("/v1/leases", foreign).status()).isEqualTo(200);
        }
    }

    @Test
    void byDefaultThreeReplicasRollOneAtATimeSpreadOverZonesAndNodesWithAtMostOneDisrupted() {
        RenderedChart chart = RenderedChart.withDefaults();
        assertThat(chart.kinds()).containsExactlyInAnyOrder(
                "ServiceAccount", "ConfigMap", "Service", "Service", "Deployment", "PodDisruptionBudget", "NetworkPolicy");
        Deployment deployment = chart.one(Deployment.class);
        Map<String, String> podLabels = deployment.getSpec().getTemplate().getMetadata().getLabels();
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(3);
        assertThat(deployment.getSpec().getSelector().getMatchLabels()).isEqualTo(podLabels);
        assertThat(deployment.getSpec().getStrategy().getType()).isEqualTo("RollingUpdate");
        assertThat(deployment.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal()).isZero();
        assertThat(deployment.getSpec().getStrategy().getRollingUpdate().getMaxSurge().getIntVal()).isEqualTo(1);
        List<TopologySpreadConstraint> spread = deployment.getSpec().getTemplate().getSpec().getTopologySpreadConstraints();
        assertThat(spread).extracting(TopologySpreadConstraint::getTopologyKey)
                .containsExactly("topology.kubernetes.io/zone", "kubernetes.io/hostname");
        assertThat(spread).allSatisfy(c -> assertThat(c.getLabelSelector().getMatchLabels()).isEqualTo(podLabels));

        PodDisruptionBudget budget = chart.one(PodDisruptionBudget.class);
        assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        assertThat(budget.getSpec().getSelector().getMatchLabels()).isEqualTo(podLabels);
        for (Service service : chart.all(Service.class)) {
            assertThat(service.getSpec().getSelector()).isEqualTo(podLabels);
            assertThat(service.getSpec().getPorts()).extracting(ServicePort::getTargetPort)
                    .allSatisfy(target -> assertThat(portNamed(container(deployment), target.getStrVal())).isNotNull());
        }
        assertThat(chart.one(ServiceAccount.class).getMetadata().getName())
                .isEqualTo(deployment.getSpec().getTemplate().getSpec().getServiceAccountName());
    }

    @Test
    void theManagementPortHasAServiceOfItsOwnAndOnlyTheMonitoringNamespaceMayReachIt() {
        RenderedChart chart = RenderedChart.withDefaults();
        Service api = service(chart, "api");
        Service management = service(chart, "management");
        assertThat(api.getSpec().getPorts()).extracting(ServicePort::getName).containsExactly("http");
        assertThat(management.getSpec().getPorts()).extracting(ServicePort::getName).containsExactly("management");
        assertThat(management.getSpec().getType()).isEqualTo("ClusterIP");
        assertThat(management.getMetadata().getName()).isEqualTo(api.getMetadata().getName() + "-management");
        assertThat(container(chart.one(Deployment.class)).getImage()).as("a tag when no digest is given")
                .endsWith(":" + chartAppVersion());

        NetworkPolicy policy = chart.one(NetworkPolicy.class);
        assertThat(policy.getSpec().getPodSelector().getMatchLabels())
                .isEqualTo(chart.one(Deployment.class).getSpec().getTemplate().getMetadata().getLabels());
        assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
        List<NetworkPolicyIngressRule> rules = policy.getSpec().getIngress();
        assertThat(rules).hasSize(2);
        assertThat(rules.get(0).getPorts()).singleElement()
                .satisfies(p -> assertThat(p.getPort().getStrVal()).isEqualTo("http"));
        assertThat(rules.get(0).getFrom()).as("the API from its labelled clients by default (below)").hasSize(1);
        assertThat(rules.get(1).getPorts()).singleElement()
                .satisfies(p -> assertThat(p.getPort().getStrVal()).isEqualTo("management"));
        assertThat(rules.get(1).getFrom()).singleElement().satisfies(peer -> {
            assertThat(peer.getNamespaceSelector().getMatchLabels())
                    .containsExactlyEntriesOf(Map.of("kubernetes.io/metadata.name", "monitoring"));
            assertThat(peer.getPodSelector()).isNull();
        });

        NetworkPolicy custom = RenderedChart.withEveryOptionOn().one(NetworkPolicy.class);
        assertThat(custom.getSpec().getIngress().get(0).getFrom()).singleElement().satisfies(peer -> assertThat(
                peer.getNamespaceSelector().getMatchLabels()).containsEntry("leasekeeper-client", "true"));
        assertThat(custom.getSpec().getIngress().get(1).getFrom()).singleElement().satisfies(peer -> {
            assertThat(peer.getNamespaceSelector().getMatchLabels())
                    .containsEntry("kubernetes.io/metadata.name", "observability");
            assertThat(peer.getPodSelector().getMatchLabels()).containsEntry("app.kubernetes.io/name", "prometheus");
        });
        assertThat(RenderedChart.render(v -> v.withValuesFile(REQUIRED).set("networkPolicy.enabled", "false")).kinds())
                .doesNotContain("NetworkPolicy");
    }

    /**
     * Issue 33: by default the API port answers only this namespace's pods labelled as its clients, not every peer;
     * networkPolicy.api.from names other peers, everyone included when that is meant.
     */
    @Test
    void theApiPortIsClosedToAllButItsLabelledClientsUnlessOpenedOnPurpose(@TempDir Path values) throws IOException {
        assertThat(apiPeers(RenderedChart.withDefaults())).singleElement().satisfies(peer -> {
            assertThat(peer.getPodSelector().getMatchLabels())
                    .containsExactlyEntriesOf(Map.of("leasekeeper-client", "true"));
            assertThat(peer.getNamespaceSelector()).as("none: the policy's own namespace only").isNull();
            assertThat(peer.getIpBlock()).isNull();
        });

        assertThat(apiPeers(RenderedChart.render(t -> t.withValuesFile(REQUIRED)
                .set("networkPolicy.api.clientLabels.leasekeeper-client", "yes")
                .set("networkPolicy.api.clientLabels.team", "payments")))).singleElement().satisfies(peer ->
                assertThat(peer.getPodSelector().getMatchLabels())
                        .containsExactlyInAnyOrderEntriesOf(Map.of("leasekeeper-client", "yes", "team", "payments")));

        Path everyone = values.resolve("everyone.yaml");
        Files.writeString(everyone, """
                networkPolicy:
                  api:
                    from: [{namespaceSelector: {}}, {ipBlock: {cidr: 0.0.0.0/0}}]
                """);
        List<NetworkPolicyPeer> open = apiPeers(RenderedChart.render(t -> t.withValuesFile(REQUIRED)
                .withValuesFile(everyone)));
        assertThat(open).hasSize(2);
        assertThat(open.get(0).getNamespaceSelector()).as("every namespace").isNotNull()
                .satisfies(all -> assertThat(all.getMatchLabels()).isNullOrEmpty());
        assertThat(open.get(0).getPodSelector()).isNull();
        assertThat(open.get(1).getIpBlock().getCidr()).isEqualTo("0.0.0.0/0");
    }

    private static List<NetworkPolicyPeer> apiPeers(RenderedChart chart) {
        NetworkPolicyIngressRule api = chart.one(NetworkPolicy.class).getSpec().getIngress().getFirst();
        assertThat(api.getPorts()).singleElement()
                .satisfies(p -> assertThat(p.getPort().getStrVal()).isEqualTo("http"));
        return api.getFrom();
    }

    private static Service service(RenderedChart chart, String component) {
        return chart.all(Service.class).stream()
                .filter(s -> component.equals(s.getMetadata().getLabels().get("app.kubernetes.io/component")))
                .findFirst().orElseThrow(() -> new AssertionError("no Service of component " + component));
    }

    private static String chartAppVersion() {
        try {
            return Files.readAllLines(CHART.resolve("Chart.yaml")).stream().filter(l -> l.startsWith("appVersion:"))
                    .map(l -> l.substring("appVersion:".length()).trim().replace("\"", "")).findFirst().orElseThrow();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void theProbesAndPortsAreThoseTheServiceServes() {
        for (RenderedChart chart : List.of(RenderedChart.withDefaults(), RenderedChart.withEveryOptionOn())) {
            Container container = container(chart.one(Deployment.class));
            Properties defaults = ServiceDefaults.properties();
            assertThat(portNamed(container, "http").getContainerPort())
                    .isEqualTo(Integer.valueOf(defaults.getProperty("server.port")));
            assertThat(portNamed(container, "management").getContainerPort())
                    .isEqualTo(Integer.valueOf(defaults.getProperty("management.server.port")));
            assertThat(container.getEnv()).extracting(EnvVar::getName)
                    .doesNotContain("SERVER_PORT", "MANAGEMENT_SERVER_PORT");

            Map<String, HTTPGetAction> probes = Map.of(
                    "startup", container.getStartupProbe().getHttpGet(),
                    "liveness", container.getLivenessProbe().getHttpGet(),
                    "readiness", container.getReadinessProbe().getHttpGet());
            assertThat(probes.get("liveness").getPath()).isEqualTo("/actuator/health/liveness");
            assertThat(probes.get("readiness").getPath()).isEqualTo("/actuator/health/readiness");
            probes.forEach((probe, get) -> {
                assertThat(get.getPort().getStrVal()).as(probe).isEqualTo("management");
                // This test's service serves the management port on a port of its own.
                assertThat(new Api(managementPort).get(get.getPath(), null).status())
                        .as(probe + " " + get.getPath()).isEqualTo(200);
            });
        }
    }

    @Test
    void podAndContainerRunAsTheImagesNonRootUserWithNoPrivilegeOnAReadOnlyRootFilesystem() throws IOException {
        Deployment deployment = RenderedChart.withDefaults().one(Deployment.class);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        Container container = container(deployment);
        Dockerfile.Stage image = Dockerfile.read(Path.of("Dockerfile")).last();
        long imageUser = Long.parseLong(image.last("USER").orElseThrow().split(":")[0]);

        PodSecurityContext podContext = pod.getSecurityContext();
        assertThat(podContext.getRunAsNonRoot()).isTrue();
        assertThat(podContext.getRunAsUser()).isEqualTo(imageUser).isPositive();
        assertThat(podContext.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        SecurityContext context = container.getSecurityContext();
        assertThat(context.getReadOnlyRootFilesystem()).isTrue();
        assertThat(context.getAllowPrivilegeEscalation()).isFalse();
        assertThat(context.getPrivileged()).isFalse();
        assertThat(context.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(context.getCapabilities().getAdd()).isNullOrEmpty();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getHostNetwork()).isNotEqualTo(Boolean.TRUE);

        // The only writable place is the emptyDir at the image's java.io.tmpdir; the rest is mounted read-only.
        String tmpdir = image.last("ENTRYPOINT").orElseThrow().replaceAll(".*-Djava\\.io\\.tmpdir=([^\"]+)\".*", "$1");
        assertThat(tmpdir).isEqualTo("/tmp");
        for (VolumeMount mount : container.getVolumeMounts()) {
            Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
            if (mount.getMountPath().equals(tmpdir)) {
                assertThat(volume.getEmptyDir().getSizeLimit()).isNotNull();
            } else {
                assertThat(mount.getReadOnly()).as(mount.getMountPath()).isTrue();
            }
        }
        assertThat(container.getVolumeMounts()).extracting(VolumeMount::getMountPath).contains(tmpdir);
    }

    @Test
    void databaseCredentialsComeOnlyFromTheExistingSecret() {
        for (RenderedChart chart : List.of(RenderedChart.withDefaults(), RenderedChart.withEveryOptionOn())) {
            Container container = container(chart.one(Deployment.class));
            EnvVar user = env(container, "SPRING_DATASOURCE_USERNAME");
            EnvVar password = env(container, "SPRING_DATASOURCE_PASSWORD");
            assertThat(user.getValue()).isNull();
            assertThat(password.getValue()).isNull();
            assertThat(user.getValueFrom().getSecretKeyRef().getName())
                    .isEqualTo(password.getValueFrom().getSecretKeyRef().getName())
                    .isIn("leasekeeper-database", "leasekeeper-app");
            assertThat(chart.kinds()).doesNotContain("Secret");
        }
        Container custom = container(RenderedChart.withEveryOptionOn().one(Deployment.class));
        assertThat(env(custom, "SPRING_DATASOURCE_USERNAME").getValueFrom().getSecretKeyRef().getKey()).isEqualTo("user");
        assertThat(env(custom, "SPRING_DATASOURCE_PASSWORD").getValueFrom().getSecretKeyRef().getKey()).isEqualTo("pass");
        assertThat(env(custom, "SPRING_DATASOURCE_URL").getValue())
                .isEqualTo("jdbc:postgresql://pg-rw.databases:5432/leasekeeper?sslmode=require");
        assertThat(env(custom, "SPRING_SECURITY_OAUTH2_RESOURCESERVER_JWT_ISSUER_URI").getValue())
                .isEqualTo("https://login.internal/realms/platform");
        assertThat(env(custom, "LOGGING_STRUCTURED_FORMAT_CONSOLE").getValue()).isEqualTo("logstash");
        assertThat(env(custom, "JAVA_TOOL_OPTIONS").getValue()).isEqualTo("-XX:+UseZGC");
    }

    @Test
    void everyLeasekeeperSettingIsAChartValueAndTheChartsDefaultsAreTheServicesOwn() {
        RenderedChart defaults = RenderedChart.withDefaults();
        Properties rendered = configFile(defaults);
        Set<String> settings = rendered.keySet().stream().map(Object::toString).filter(k -> k.startsWith("leasekeeper."))
                .map(SettingNames::kebab).collect(Collectors.toCollection(TreeSet::new));
        assertThat(settings).isEqualTo(SettingNames.of(LeasekeeperProperties.class, "leasekeeper"));
        LeasekeeperProperties serviceDefaults = bind(new Properties());
        assertThat(bind(rendered)).isEqualTo(serviceDefaults);

        // Every option on: the values reach the service as given (and they are not the defaults).
        Properties custom = configFile(RenderedChart.withEveryOptionOn());
        Properties given = new Properties();
        yamlProperties(new FileSystemResource(ALL_OPTIONS)).forEach((k, v) -> {
            if (k.toString().startsWith("leasekeeper.")) {
                given.put(k, v);
            }
        });
        assertThat(bind(custom)).isEqualTo(bind(given)).isNotEqualTo(serviceDefaults);
        assertThat(custom.getProperty("spring.datasource.hikari.maximum-pool-size")).isEqualTo("20");

        // The service reads that file: the variable names the directory the ConfigMap is mounted at.
        Container container = container(defaults.one(Deployment.class));
        String location = env(container, "SPRING_CONFIG_ADDITIONAL_LOCATION").getValue();
        VolumeMount config = container.getVolumeMounts().stream().filter(m -> m.getName().equals("config")).findFirst().orElseThrow();
        assertThat(location).isEqualTo("optional:file:" + config.getMountPath() + "/");
        assertThat(defaults.one(Deployment.class).getSpec().getTemplate().getMetadata().getAnnotations())
                .containsKey("checksum/config");
    }

    @Test
    void everyOptionOnAddsTheAutoscalerMonitorRulesAndDashboardWiredToTheDeployment() {
        RenderedChart chart = RenderedChart.withEveryOptionOn();
        assertThat(chart.kinds()).containsExactlyInAnyOrder("ServiceAccount", "ConfigMap", "ConfigMap", "Service",
                "Service", "Deployment", "PodDisruptionBudget", "NetworkPolicy", "HorizontalPodAutoscaler",
                "ServiceMonitor", "PrometheusRule");
        Deployment deployment = chart.one(Deployment.class);
        assertThat(deployment.getSpec().getReplicas()).as("the autoscaler owns the replica count").isNull();
        HorizontalPodAutoscaler autoscaler = chart.one(HorizontalPodAutoscaler.class);
        assertThat(autoscaler.getSpec().getScaleTargetRef().getName()).isEqualTo(deployment.getMetadata().getName());
        assertThat(autoscaler.getSpec().getScaleTargetRef().getKind()).isEqualTo("Deployment");
        assertThat(autoscaler.getSpec().getMinReplicas()).isEqualTo(4);
        assertThat(autoscaler.getSpec().getMaxReplicas()).isEqualTo(12);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        assertThat(pod.getPriorityClassName()).isEqualTo("platform-critical");
        assertThat(pod.getServiceAccountName()).isEqualTo("leases-sa");
        assertThat(pod.getTolerations()).hasSize(1);
        assertThat(pod.getAffinity().getNodeAffinity()).isNotNull();
        assertThat(container(deployment).getImage()).as("the digest pins the image, whatever the tag").isEqualTo(
                "registry.internal/platform/leasekeeper@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
        assertThat(env(container(deployment), "TZ").getValue()).isEqualTo("UTC");

        Service service = service(chart, "management");
        Map<String, Object> monitor = RenderedChart.spec(chart.custom("ServiceMonitor"));
        @SuppressWarnings("unchecked")
        Map<String, Object> endpoint = ((List<Map<String, Object>>) monitor.get("endpoints")).getFirst();
        assertThat(service.getSpec().getPorts()).extracting(ServicePort::getName).contains((String) endpoint.get("port"));
        assertThat(service.getSpec().getPorts()).filteredOn(p -> p.getName().equals(endpoint.get("port")))
                .singleElement().satisfies(p -> assertThat(p.getTargetPort().getStrVal()).isEqualTo("management"));
        assertThat(new Api(managementPort).get((String) endpoint.get("path"), null).raw())
                .contains("leasekeeper_sweeper_interval_seconds");
        @SuppressWarnings("unchecked")
        Map<String, String> selector = (Map<String, String>) ((Map<String, Object>) monitor.get("selector")).get("matchLabels");
        assertThat(service.getMetadata().getLabels()).containsAllEntriesOf(selector);
        assertThat(chart.custom("ServiceMonitor").getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
        assertThat(chart.custom("PrometheusRule").getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");

        ConfigMap dashboard = chart.all(ConfigMap.class).stream()
                .filter(c -> c.getData().containsKey("leasekeeper-dashboard.json")).findFirst().orElseThrow();
        assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
        assertThat(dashboard.getMetadata().getAnnotations()).containsEntry("grafana_folder", "Platform");
    }

    @Test
    void theShippedDashboardAndAlertRulesAreTheRepositorysFilesByteForByte() throws IOException {
        RenderedChart chart = RenderedChart.withEveryOptionOn();
        String dashboard = Files.readString(DASHBOARD);
        assertThat(chart.all(ConfigMap.class)).anySatisfy(c ->
                assertThat(c.getData().get("leasekeeper-dashboard.json")).isEqualTo(dashboard));

        String rules = Files.readString(RULES);
        // Helm's indent: two spaces before every line of the file, blank ones included.
        String indented = rules.lines().map(l -> "  " + l).collect(Collectors.joining("\n"));
        assertThat(chart.manifest()).contains("spec:\n" + indented);
        GenericKubernetesResource rule = chart.custom("PrometheusRule");
        assertThat(RenderedChart.spec(rule)).isEqualTo(yaml(new ByteArrayResource(rules.getBytes(StandardCharsets.UTF_8))));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "replicaCount | 0",
            "database.existingSecret | ''",
            "database.url | postgres://db/leasekeeper",
            "leasekeeper.lease.maxTtl | an hour",
            "leasekeeper.lease.metadataMaxSize | 8 kilobytes",
            "leasekeeper.sweeper.batchSize | 0",
            "leasekeeper.sweeper.workers | 17",
            "leasekeeper.sweeper.interval | -1s",
            "leasekeeper.metrics.maxTenants | 100000",
            "leasekeeper.lease.minTTL | 1s",
            "logging.format | json",
            "jwt.audiences | leasekeeper",
            "leasekeeper.security.audienceCheck | maybe",
            "service.managementPort | 70000",
            "image.digest | latest",
            "networkPolicy.enabled | sometimes",
            "networkPolicy.api.clientLabels.leasekeeper-client | true",
            "leasekeeper.limits.requestsInProgress | -1",
            "leasekeeper.limits.queueTimeout | soon",
            "replicas | 3"})
    void theValuesSchemaRejectsABadValue(String key, String value) {
        assertThatThrownBy(() -> RenderedChart.render(template -> template.set(key, value)))
                .hasMessageContaining("schema");
    }

    private static Container container(Deployment deployment) {
        List<Container> containers = deployment.getSpec().getTemplate().getSpec().getContainers();
        assertThat(containers).hasSize(1);
        return containers.getFirst();
    }

    private static ContainerPort portNamed(Container container, String name) {
        return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst().orElse(null);
    }

    private static EnvVar env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in the container's environment"));
    }

    /** The service's configuration file as the chart renders it into its ConfigMap. */
    private static Properties configFile(RenderedChart chart) {
        return yamlProperties(new ByteArrayResource(configText(chart).getBytes(StandardCharsets.UTF_8)));
    }

    private static String configText(RenderedChart chart) {
        return chart.all(ConfigMap.class).stream().filter(c -> c.getData().containsKey("application.yaml"))
                .findFirst().orElseThrow().getData().get("application.yaml");
    }

    /** The token audiences the service binds from a configuration file. */
    private static List<String> audiences(Properties properties) {
        return new Binder(new MapConfigurationPropertySource(properties))
                .bind("spring.security.oauth2.resourceserver.jwt.audiences", Bindable.listOf(String.class))
                .orElse(List.of());
    }

    private static LeasekeeperProperties bind(Properties properties) {
        return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("leasekeeper", LeasekeeperProperties.class);
    }

    private static Properties yamlProperties(Resource resource) {
        YamlPropertiesFactoryBean yaml = new YamlPropertiesFactoryBean();
        yaml.setResources(resource);
        return yaml.getObject();
    }

    private static Map<String, Object> yaml(Resource resource) {
        YamlMapFactoryBean yaml = new YamlMapFactoryBean();
        yaml.setResources(resource);
        return yaml.getObject();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> deepMerge(Map<String, Object> base, Map<String, Object> over) {
        Map<String, Object> merged = new LinkedHashMap<>(base);
        over.forEach((key, value) -> merged.merge(key, value, (a, b) -> a instanceof Map && b instanceof Map
                ? deepMerge((Map<String, Object>) a, (Map<String, Object>) b) : b));
        return merged;
    }
}
