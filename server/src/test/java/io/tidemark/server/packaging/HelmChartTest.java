package io.tidemark.server.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.tidemark.server.config.ConfigCatalog;
import io.tidemark.server.config.ConfigLoader;
import java.io.StringReader;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: the Helm chart {@code packaging/helm/tidemark} renders what docs/kubernetes.md promises, as
 * valid Kubernetes objects, and the configuration each pod ends up with is a valid Tidemark
 * configuration of the cluster it belongs to.
 *
 * <p>There is no {@code helm} binary on the build machine; helm-java (Maven Central) embeds Helm's
 * own Go library, so {@code helm lint --strict} and {@code helm template} run here exactly as the
 * CLI would. Every rendered document is parsed by fabric8's Kubernetes model into its typed class,
 * and a field the model does not know fails the test (fabric8 keeps unknown fields in
 * {@code additionalProperties} instead of refusing them, so every object graph is walked). Then each
 * pod's start: the chart's {@code start.sh} runs for every ordinal with the environment the
 * StatefulSet gives the pod, against a stand-in {@code bin/tidemark} that records its environment
 * and arguments; that environment plus the ConfigMap's {@code tidemark.properties} go through the
 * server's own {@link ConfigLoader} with the standard catalog (no unknown key, every value valid).
 * Not covered here: a real cluster (no Kubernetes or container engine on the build machine).
 */
class HelmChartTest {

  private static final Path CHART = Path.of("..", "packaging", "helm", "tidemark").toAbsolutePath().normalize();
  private static final String NAMESPACE = "streaming";
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  @TempDir
  Path dir;

  @Test
  void helmLintStrictFindsNothing() {
    LintResult lint = new Helm(CHART).lint().strict().call();
    assertThat(lint.isFailed()).as("helm lint --strict: %s", lint.getMessages()).isFalse();
    assertThat(lint.getMessages()).as("lint messages").noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
  }

  @Test
  void threeReplicasRenderAStatefulSetWithStableIdentitiesVolumesProbesAndTheS3Secret() throws Exception {
    Map<String, HasMetadata> objects = render(template()
        .set("replicas", 3)
        .set("s3.bucket", "tm-bucket")
        .set("s3.endpoint", "http://minio.storage.svc:9000")
        .set("s3.pathStyle", true)
        .set("s3.accessKey", "AKIA-TEST")
        .set("s3.secretKey", "s3cr3t")
        .set("persistence.storageClass", "fast-ssd")
        .set("persistence.size", "50Gi")
        .set("jvm.heap", "3g")
        .set("metrics.serviceMonitor.enabled", true));
    assertThat(objects.keySet()).containsExactlyInAnyOrder("ServiceAccount/tm-tidemark", "Secret/tm-tidemark-s3",
        "ConfigMap/tm-tidemark", "Service/tm-tidemark-headless", "Service/tm-tidemark", "StatefulSet/tm-tidemark",
        "PodDisruptionBudget/tm-tidemark", "ServiceMonitor/tm-tidemark");
    assertThat(objects.values()).allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).isEqualTo(NAMESPACE));

    StatefulSet sts = (StatefulSet) objects.get("StatefulSet/tm-tidemark");
    assertThat(sts.getSpec().getReplicas()).isEqualTo(3);
    assertThat(sts.getSpec().getServiceName()).isEqualTo("tm-tidemark-headless");
    assertThat(sts.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
    Map<String, String> podLabels = sts.getSpec().getTemplate().getMetadata().getLabels();
    assertThat(podLabels).containsAllEntriesOf(sts.getSpec().getSelector().getMatchLabels());

    PersistentVolumeClaim claim = sts.getSpec().getVolumeClaimTemplates().getFirst();
    assertThat(sts.getSpec().getVolumeClaimTemplates()).hasSize(1);
    assertThat(claim.getMetadata().getName()).isEqualTo("data");
    assertThat(claim.getSpec().getStorageClassName()).isEqualTo("fast-ssd");
    assertThat(claim.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
    assertThat(claim.getSpec().getResources().getRequests().get("storage")).isEqualTo(new Quantity("50Gi"));

    Container node = sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
    assertThat(node.getVolumeMounts()).anySatisfy(m -> {
      assertThat(m.getName()).isEqualTo("data");
      assertThat(m.getMountPath()).isEqualTo("/var/lib/tidemark");
    });
    assertThat(node.getVolumeMounts()).anySatisfy(m -> {
      assertThat(m.getName()).isEqualTo("config");
      assertThat(m.getMountPath()).isEqualTo("/etc/tidemark");
    });
    assertThat(sts.getSpec().getTemplate().getSpec().getVolumes()).anySatisfy(v -> {
      assertThat(v.getName()).isEqualTo("config");
      assertThat(v.getConfigMap().getName()).isEqualTo("tm-tidemark");
    });
    int adminPort = containerPort(node, "admin");
    assertThat(adminPort).isEqualTo(9644);
    assertHttpProbe(node.getReadinessProbe(), "/ready");
    assertHttpProbe(node.getLivenessProbe(), "/health");
    assertThat(env(node).get("TIDEMARK_JAVA_OPTS").getValue()).isEqualTo("-Xms3g -Xmx3g");
    assertThat(node.getResources().getLimits().get("memory")).isEqualTo(new Quantity("4Gi"));

    Secret secret = (Secret) objects.get("Secret/tm-tidemark-s3");
    for (Map.Entry<String, String> ref : Map.of("TIDEMARK_STORAGE_S3_ACCESS_KEY", "AKIA-TEST",
        "TIDEMARK_STORAGE_S3_SECRET_KEY", "s3cr3t").entrySet()) {
      EnvVar var = env(node).get(ref.getKey());
      assertThat(var.getValue()).as(ref.getKey() + " comes from the Secret, not the pod spec").isNull();
      assertThat(var.getValueFrom().getSecretKeyRef().getName()).isEqualTo("tm-tidemark-s3");
      String data = secret.getData().get(var.getValueFrom().getSecretKeyRef().getKey());
      assertThat(new String(Base64.getDecoder().decode(data), StandardCharsets.UTF_8)).isEqualTo(ref.getValue());
    }

    Service headless = (Service) objects.get("Service/tm-tidemark-headless");
    assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
    assertThat(headless.getSpec().getPublishNotReadyAddresses()).isTrue();
    assertThat(podLabels).containsAllEntriesOf(headless.getSpec().getSelector());
    Service client = (Service) objects.get("Service/tm-tidemark");
    assertThat(client.getSpec().getClusterIP()).isNull();
    assertThat(podLabels).containsAllEntriesOf(client.getSpec().getSelector());
    assertThat(client.getSpec().getPorts()).extracting(p -> p.getName() + ":" + p.getPort())
        .contains("kafka:9092", "registry:8081", "catalog:8181");
    for (Service service : List.of(headless, client)) {
      assertThat(service.getSpec().getPorts()).allSatisfy(p -> containerPort(node, p.getTargetPort().getStrVal()));
    }

    PodDisruptionBudget pdb = (PodDisruptionBudget) objects.get("PodDisruptionBudget/tm-tidemark");
    assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    assertThat(podLabels).containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());

    ServiceMonitor monitor = (ServiceMonitor) objects.get("ServiceMonitor/tm-tidemark");
    assertThat(headless.getMetadata().getLabels()).containsAllEntriesOf(monitor.getSpec().getSelector().getMatchLabels());
    assertThat(client.getMetadata().getLabels()).as("only the headless Service is scraped (once per pod)")
        .doesNotContainEntry("app.kubernetes.io/component", "headless");
    assertThat(monitor.getSpec().getEndpoints()).singleElement().satisfies(e -> {
      assertThat(e.getPort()).isEqualTo("admin");
      assertThat(e.getPath()).isEqualTo("/metrics");
    });

    String voters = "0@tm-tidemark-0.tm-tidemark-headless.streaming.svc.cluster.local:9093,"
        + "1@tm-tidemark-1.tm-tidemark-headless.streaming.svc.cluster.local:9093,"
        + "2@tm-tidemark-2.tm-tidemark-headless.streaming.svc.cluster.local:9093";
    ConfigMap config = (ConfigMap) objects.get("ConfigMap/tm-tidemark");
    for (int ordinal = 0; ordinal < 3; ordinal++) {
      Map<String, String> settings = startPod(sts, config, secret, ordinal);
      String address = "tm-tidemark-" + ordinal + ".tm-tidemark-headless.streaming.svc.cluster.local";
      assertThat(settings).containsEntry("node.id", Integer.toString(ordinal))
          .containsEntry("process.roles", "controller,broker,registry")
          .containsEntry("controller.voters", voters)
          .containsEntry("controller.listener.host", "0.0.0.0")
          .containsEntry("kafka.advertised.host", address)
          .containsEntry("admin.host", "0.0.0.0")
          .containsEntry("admin.port", Integer.toString(adminPort))
          .containsEntry("data.dir", "/var/lib/tidemark")
          .containsEntry("wal.path", "/var/lib/tidemark/wal/wal.log")
          .containsEntry("storage.type", "s3")
          .containsEntry("storage.s3.bucket", "tm-bucket")
          .containsEntry("storage.s3.endpoint", "http://minio.storage.svc:9000")
          .containsEntry("storage.s3.path.style", "true")
          .containsEntry("storage.s3.access.key", "AKIA-TEST")
          .containsEntry("storage.s3.secret.key", "s3cr3t")
          .containsEntry("kafka.share.enable", "false")
          .containsEntry("table.enable", "false")
          .doesNotContainKey("controller.follower.address");
      assertThat(voters).as("this pod's own voter entry is its own stable address")
          .contains(ordinal + "@" + address + ":9093");
    }
  }

  @Test
  void podsBeyondTheVotersAreBrokersFollowingTheMetadataLog() throws Exception {
    Map<String, HasMetadata> objects = render(template().set("replicas", 5).set("controller.voters", 3)
        .set("tables.enabled", true).set("tables.catalog.type", "rest").set("tables.catalog.uri", "http://polaris:8181/api/catalog")
        .set("config.kafka\\.offsets\\.topic\\.partitions", "50"));
    StatefulSet sts = (StatefulSet) objects.get("StatefulSet/tm-tidemark");
    assertThat(sts.getSpec().getReplicas()).isEqualTo(5);
    ConfigMap config = (ConfigMap) objects.get("ConfigMap/tm-tidemark");
    Map<String, String> voter = startPod(sts, config, null, 2);
    assertThat(voter).containsEntry("process.roles", "controller,broker,registry").doesNotContainKey("controller.follower.address")
        .containsEntry("table.enable", "true").containsEntry("table.catalog.type", "rest")
        .containsEntry("table.catalog.uri", "http://polaris:8181/api/catalog")
        .containsEntry("kafka.offsets.topic.partitions", "50")
        .doesNotContainKeys("storage.s3.access.key", "storage.s3.secret.key");
    assertThat(voter.get("controller.voters").split(",")).hasSize(3);
    Map<String, String> broker = startPod(sts, config, null, 4);
    assertThat(broker).containsEntry("node.id", "4").containsEntry("process.roles", "broker,registry")
        .containsEntry("controller.follower.address", "tm-tidemark-4.tm-tidemark-headless.streaming.svc.cluster.local:9093")
        .containsEntry("controller.voters", voter.get("controller.voters"));
    assertThat(objects).doesNotContainKeys("Secret/tm-tidemark-s3", "ServiceMonitor/tm-tidemark");
  }

  @Test
  void anExistingSecretIsReferencedAndNoneIsCreated() throws Exception {
    Map<String, HasMetadata> objects = render(template().set("replicas", 1).set("s3.existingSecret", "team-s3")
        .set("s3.accessKeyKey", "id").set("s3.secretKeyKey", "key").set("podDisruptionBudget.enabled", false));
    assertThat(objects).doesNotContainKeys("Secret/tm-tidemark-s3", "PodDisruptionBudget/tm-tidemark");
    StatefulSet sts = (StatefulSet) objects.get("StatefulSet/tm-tidemark");
    Container node = sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
    assertThat(env(node).get("TIDEMARK_STORAGE_S3_SECRET_KEY").getValueFrom().getSecretKeyRef())
        .satisfies(ref -> {
          assertThat(ref.getName()).isEqualTo("team-s3");
          assertThat(ref.getKey()).isEqualTo("key");
        });
    assertThat(env(node).get("TIDEMARK_STORAGE_S3_ACCESS_KEY").getValueFrom().getSecretKeyRef().getKey()).isEqualTo("id");
    Map<String, String> only = startPod(sts, (ConfigMap) objects.get("ConfigMap/tm-tidemark"), null, 0);
    assertThat(only).containsEntry("controller.voters", "0@tm-tidemark-0.tm-tidemark-headless.streaming.svc.cluster.local:9093")
        .doesNotContainKey("kafka.share.enable");
  }

  @Test
  void settingsThatCannotWorkRefuseToRender() {
    assertThatThrownBy(() -> template().set("tables.enabled", true).call())
        .hasMessageContaining("tables.catalog");
    assertThatThrownBy(() -> template().set("s3.bucket", "").call()).hasMessageContaining("s3.bucket is required");
    assertThatThrownBy(() -> template().set("s3.accessKey", "only-half").call()).hasMessageContaining("s3.secretKey");
    assertThatThrownBy(() -> template().set("controller.voters", 0).call()).hasMessageContaining("controller.voters");
  }

  private static TemplateCommand template() {
    return new Helm(CHART).template().withName("tm").withNamespace(NAMESPACE);
  }

  /** Renders, parses every document into its typed model class and refuses unknown fields. */
  private static Map<String, HasMetadata> render(TemplateCommand command) {
    String yaml = command.call();
    Map<String, HasMetadata> objects = new LinkedHashMap<>();
    for (String document : yaml.split("(?m)^---\\s*$")) {
      if (document.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) {
        continue;
      }
      Object parsed = SERIALIZATION.unmarshal(document);
      assertThat(parsed).as("a typed Kubernetes object:\n%s", document).isInstanceOf(HasMetadata.class);
      assertThat(parsed.getClass().getPackageName()).as("model class of\n%s", document).startsWith("io.fabric8.");
      assertThat(parsed.getClass().getSimpleName()).as("not a generic resource").isNotEqualTo("GenericKubernetesResource");
      List<String> unknown = new ArrayList<>();
      unknownFields(parsed, parsed.getClass().getSimpleName(), unknown, new IdentityHashMap<>());
      assertThat(unknown).as("fields the Kubernetes schema does not have, in\n%s", document).isEmpty();
      HasMetadata object = (HasMetadata) parsed;
      assertThat(objects.put(object.getKind() + "/" + object.getMetadata().getName(), object)).as("duplicate").isNull();
    }
    return objects;
  }

  /** Walks a fabric8 model object; every non-empty additionalProperties map is a field the schema lacks. */
  private static void unknownFields(Object value, String path, List<String> unknown, IdentityHashMap<Object, Boolean> seen) {
    if (value == null || seen.put(value, Boolean.TRUE) != null) {
      return;
    }
    if (value instanceof Collection<?> items) {
      int i = 0;
      for (Object item : items) {
        unknownFields(item, path + "[" + i++ + "]", unknown, seen);
      }
      return;
    }
    if (value instanceof Map<?, ?> map) {
      map.forEach((k, v) -> unknownFields(v, path + "." + k, unknown, seen));
      return;
    }
    if (!value.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Method getter : value.getClass().getMethods()) {
      if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers()) || !getter.getName().startsWith("get")
          || getter.getDeclaringClass() == Object.class) {
        continue;
      }
      Object field;
      try {
        field = getter.invoke(value);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
      if (getter.getName().equals("getAdditionalProperties")) {
        if (field instanceof Map<?, ?> extra && !extra.isEmpty()) {
          unknown.add(path + " " + extra.keySet());
        }
      } else {
        unknownFields(field, path + "." + getter.getName().substring(3), unknown, seen);
      }
    }
  }

  private static Map<String, EnvVar> env(Container container) {
    return container.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, e -> e, (a, b) -> {
      throw new AssertionError("environment variable given twice: " + a.getName());
    }, LinkedHashMap::new));
  }

  private static int containerPort(Container container, String name) {
    return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
        .orElseThrow(() -> new AssertionError("no container port named " + name)).getContainerPort();
  }

  private static void assertHttpProbe(Probe probe, String path) {
    assertThat(probe).as("probe on " + path).isNotNull();
    assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
    assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("admin");
  }

  /**
   * Starts pod {@code ordinal} as Kubernetes would: the container's command ({@code sh start.sh}
   * from the ConfigMap) with the container's environment (values, the pod name from the downward
   * API, Secret references resolved), against a stand-in {@code bin/tidemark}. Returns the settings
   * the node would load: the ConfigMap's file plus the recorded environment, through
   * {@link ConfigLoader}, which must accept them without a warning.
   */
  private Map<String, String> startPod(StatefulSet sts, ConfigMap config, Secret secret, int ordinal) throws Exception {
    String podName = sts.getMetadata().getName() + "-" + ordinal;
    Container container = sts.getSpec().getTemplate().getSpec().getContainers().getFirst();
    assertThat(container.getCommand()).containsExactly("/bin/sh", "/etc/tidemark/start.sh");
    Path pod = Files.createDirectories(dir.resolve(podName));
    Path script = pod.resolve("start.sh");
    Files.writeString(script, config.getData().get("start.sh"));
    Path home = Files.createDirectories(pod.resolve("home/bin"));
    Path record = pod.resolve("recorded");
    Path fake = home.resolve("tidemark");
    Files.writeString(fake, "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + record + ".args'\nenv > '" + record + ".env'\n");
    Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));

    ProcessBuilder start = new ProcessBuilder("/bin/sh", script.toString()).redirectErrorStream(true);
    Map<String, String> environment = start.environment();
    environment.clear();
    environment.put("PATH", "/usr/bin:/bin");
    environment.put("TIDEMARK_HOME", home.getParent().toString());
    for (EnvVar var : container.getEnv()) {
      environment.put(var.getName(), resolve(var, podName, secret));
    }
    Process process = start.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as("start.sh of %s: %s", podName, output).isZero();
    assertThat(Files.readAllLines(Path.of(record + ".args")))
        .containsExactly("start", "--config", "/etc/tidemark/tidemark.properties");

    Map<String, String> recorded = new HashMap<>();
    for (String line : Files.readAllLines(Path.of(record + ".env"))) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        recorded.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    Path properties = pod.resolve("tidemark.properties");
    Files.writeString(properties, config.getData().get("tidemark.properties"));
    ConfigLoader.Loaded loaded = new ConfigLoader(ConfigCatalog.standard()).load(Optional.of(properties), List.of(), recorded);
    assertThat(loaded.warnings()).as("settings of " + podName).isEmpty();
    Properties file = new Properties();
    file.load(new StringReader(config.getData().get("tidemark.properties")));
    assertThat(loaded.settings().asMap().keySet()).containsAll(file.stringPropertyNames());
    return loaded.settings().asMap();
  }

  private static String resolve(EnvVar var, String podName, Secret secret) {
    if (var.getValue() != null) {
      return var.getValue();
    }
    if (var.getValueFrom().getFieldRef() != null) {
      assertThat(var.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
      return podName;
    }
    String name = var.getValueFrom().getSecretKeyRef().getName();
    String key = var.getValueFrom().getSecretKeyRef().getKey();
    if (secret == null || !secret.getMetadata().getName().equals(name)) {
      return "from-secret-" + name + "-" + key;
    }
    assertThat(Set.copyOf(secret.getData().keySet())).contains(key);
    return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
  }
}
