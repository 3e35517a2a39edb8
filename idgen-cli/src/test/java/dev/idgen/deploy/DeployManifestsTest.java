package dev.idgen.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.yaml.snakeyaml.Yaml;

/**
 * deploy/ against the build: the Kubernetes manifests and the Dockerfile agree with each other and with
 * the server's reference.conf (ports, probes, configuration keys, shutdown timing, security), so that a
 * change on one side that the other does not follow fails here rather than in a cluster.
 */
class DeployManifestsTest {

  static final String GRPC_PORT = "idgen.grpc.port";
  static final String METRICS_PORT = "idgen.metrics.port";
  static final String QUIET_PERIOD = "idgen.shutdown.quiet-period";
  static final String SHUTDOWN_TIMEOUT = "idgen.shutdown.timeout";
  static final String GIVE_BACK_DEADLINE = "idgen.shutdown.give-back-deadline";
  static final String EMBEDDED_DIR = "idgen.embedded.dir";
  static final String MAX_CONNECTION_AGE = "idgen.grpc.keepalive.max-connection-age";
  static final String MAX_CONNECTION_AGE_GRACE = "idgen.grpc.keepalive.max-connection-age-grace";
  static final String MAX_CALL_DURATION = "idgen.limits.max-call-duration";
  /** Keys that are the user's (datacenter names), like the server's own check (ConfigLoader). */
  static final String OPEN_MAP = "idgen.cassandra.replication.";
  /**
   * After shutdown.timeout the server cancels the calls left and waits up to 5 s more for them
   * (IdGenServer.finishShutdown) before it closes the store.
   */
  static final Duration CANCEL_WAIT = Duration.ofSeconds(5);
  /** After the give-back, the store is closed (the Cassandra driver's session, the embedded store's file). */
  static final Duration STORE_CLOSE = Duration.ofSeconds(2);

  static Path root;
  static Config reference;
  static Set<String> environmentVariables;
  static Map<String, Object> configMap;
  static Config clusterConfig;
  static Config imageConfig;
  static Map<String, Object> workload;
  static Map<String, Object> service;
  static Map<String, Object> pdb;
  static Map<String, Object> kustomization;
  static Dockerfile dockerfile;

  @BeforeAll
  static void read() throws IOException {
    root = Path.of(System.getProperty("idgenProjectRoot", "..")).toAbsolutePath().normalize();
    Path resources = root.resolve("idgen-server/src/main/resources");
    reference = ConfigFactory.parseFile(resources.resolve("reference.conf").toFile(),
        ConfigParseOptions.defaults().setAllowMissing(false)).resolve();
    environmentVariables = new TreeSet<>();
    Matcher variables = Pattern.compile("\\$\\{\\?(IDGEN_[A-Z0-9_]+)}")
        .matcher(Files.readString(resources.resolve("dev/idgen/server/environment.conf")));
    while (variables.find()) {
      environmentVariables.add(variables.group(1));
    }
    Path k8s = root.resolve("deploy/k8s");
    configMap = yaml(k8s.resolve("configmap.yaml"));
    clusterConfig = ConfigFactory.parseString((String) at(configMap, "data", "idgen.conf"));
    imageConfig = ConfigFactory.parseFile(root.resolve("deploy/docker/idgen.conf").toFile(),
        ConfigParseOptions.defaults().setAllowMissing(false));
    workload = yaml(k8s.resolve("statefulset.yaml"));
    service = yaml(k8s.resolve("service.yaml"));
    pdb = yaml(k8s.resolve("pdb.yaml"));
    kustomization = yaml(k8s.resolve("kustomization.yaml"));
    dockerfile = Dockerfile.read(root.resolve("deploy/docker/Dockerfile"));
  }

  // Configuration keys

  @Test
  void should_define_every_configmap_key_in_reference_conf() {
    assertKnownKeys("deploy/k8s/configmap.yaml (data.idgen.conf)", clusterConfig);
  }

  @Test
  void should_define_every_key_of_the_image_config_in_reference_conf() {
    assertKnownKeys("deploy/docker/idgen.conf", imageConfig);
  }

  @Test
  void should_set_only_environment_variables_that_the_server_reads() {
    List<String> names = env().stream().map(e -> (String) e.get("name")).toList();

    assertThat(names).isNotEmpty();
    assertThat(environmentVariables)
        .as("IDGEN_* variables of idgen-server's environment.conf")
        .containsAll(names.stream().filter(n -> n.startsWith("IDGEN_")).toList());
  }

  // Ports

  @Test
  void should_agree_on_the_grpc_port_everywhere() {
    int port = referenceInt(GRPC_PORT);

    assertThat(clusterConfig.getInt(GRPC_PORT)).as("configmap " + GRPC_PORT).isEqualTo(port);
    assertThat(containerPort("grpc")).as("containerPort grpc").isEqualTo(port);
    for (String probe : List.of("readinessProbe", "livenessProbe", "startupProbe")) {
      assertThat(at(container(), probe, "grpc", "port")).as(probe + ".grpc.port").isEqualTo(port);
    }
    Map<String, Object> servicePort = servicePort("grpc");
    assertThat(servicePort.get("port")).as("Service port grpc").isEqualTo(port);
    assertThat(servicePort.get("targetPort")).as("Service targetPort (a container port's name)")
        .isIn("grpc", port);
    assertThat(exposedPorts()).as("Dockerfile EXPOSE").contains(port);
  }

  @Test
  void should_agree_on_the_http_port_everywhere() {
    int port = referenceInt("idgen.http.port");

    assertThat(containerPort("http")).as("containerPort http").isEqualTo(port);
    Map<String, Object> servicePort = servicePort("http");
    assertThat(servicePort.get("port")).as("Service port http").isEqualTo(port);
    assertThat(servicePort.get("targetPort")).as("Service targetPort (a container port's name)")
        .isIn("http", port);
    assertThat(exposedPorts()).as("Dockerfile EXPOSE").contains(port);
  }

  @Test
  void should_agree_on_the_metrics_port_everywhere() {
    int port = referenceInt(METRICS_PORT);

    assertThat(clusterConfig.getInt(METRICS_PORT)).as("configmap " + METRICS_PORT).isEqualTo(port);
    assertThat(imageConfig.getInt(METRICS_PORT)).as("image config " + METRICS_PORT).isEqualTo(port);
    assertThat(containerPort("metrics")).as("containerPort metrics").isEqualTo(port);
    assertThat(at(workload, "spec", "template", "metadata", "annotations", "prometheus.io/port"))
        .as("prometheus.io/port annotation").isEqualTo(Integer.toString(port));
    assertThat(at(workload, "spec", "template", "metadata", "annotations", "prometheus.io/scrape"))
        .isEqualTo("true");
    assertThat(at(workload, "spec", "template", "metadata", "annotations", "prometheus.io/path"))
        .isEqualTo("/metrics");
    assertThat(exposedPorts()).as("Dockerfile EXPOSE").contains(port);
  }

  @Test
  void should_expose_only_the_grpc_http_and_metrics_ports_in_the_image() {
    assertThat(exposedPorts()).containsExactlyInAnyOrder(
        referenceInt(GRPC_PORT), referenceInt("idgen.http.port"), referenceInt(METRICS_PORT));
  }

  // Probes

  @Test
  void should_probe_readiness_liveness_and_startup_with_native_grpc_probes() {
    for (String probe : List.of("readinessProbe", "livenessProbe", "startupProbe")) {
      Map<String, Object> spec = map(container().get(probe));
      assertThat(spec).as(probe).containsKey("grpc").doesNotContainKeys("httpGet", "tcpSocket", "exec");
      // Port numbers only: Kubernetes' grpc probe takes no port name.
      assertThat(at(spec, "grpc", "port")).as(probe + ".grpc.port").isInstanceOf(Integer.class);
    }
  }

  // Shutdown timing

  @Test
  void should_restart_no_pod_that_waits_for_cassandra_but_keep_it_out_of_the_service() {
    // The server reports "liveness" SERVING while it runs, and "" (the server as a whole) SERVING only
    // once its store answers (IdGenServer): liveness must not ask about "", or a pod started before
    // Cassandra would be restarted again and again.
    for (String probe : List.of("livenessProbe", "startupProbe")) {
      assertThat(at(container(), probe, "grpc", "service")).as(probe + ".grpc.service").isEqualTo("liveness");
    }
    assertThat(map(at(container(), "readinessProbe", "grpc")).getOrDefault("service", ""))
        .as("readinessProbe.grpc.service").isEqualTo("");
  }

  @Test
  void should_give_the_pod_more_grace_than_the_server_needs_to_drain() {
    Config effective = clusterConfig.withFallback(reference);
    Duration drain = effective.getDuration(QUIET_PERIOD).plus(effective.getDuration(SHUTDOWN_TIMEOUT))
        .plus(CANCEL_WAIT).plus(effective.getDuration(GIVE_BACK_DEADLINE)).plus(STORE_CLOSE);
    int grace = (Integer) at(workload, "spec", "template", "spec", "terminationGracePeriodSeconds");

    assertThat(Duration.ofSeconds(grace)).as("terminationGracePeriodSeconds vs quiet-period + timeout + "
        + CANCEL_WAIT.toSeconds() + " s + give-back-deadline + " + STORE_CLOSE.toSeconds() + " s")
        .isGreaterThan(drain);
    assertThat(Duration.ofSeconds(grace)).as("vs reference.conf's defaults alone")
        .isGreaterThan(reference.getDuration(QUIET_PERIOD).plus(reference.getDuration(SHUTDOWN_TIMEOUT))
            .plus(CANCEL_WAIT).plus(reference.getDuration(GIVE_BACK_DEADLINE)).plus(STORE_CLOSE));
    // Kubernetes' default grace period (30 s) holds a stop at reference.conf's defaults.
    assertThat(reference.getDuration(QUIET_PERIOD).plus(reference.getDuration(SHUTDOWN_TIMEOUT)).plus(CANCEL_WAIT)
        .plus(reference.getDuration(GIVE_BACK_DEADLINE))).isLessThan(Duration.ofSeconds(30));
  }

  @Test
  void should_keep_serving_until_readiness_has_noticed_the_shutdown() {
    Map<String, Object> readiness = map(container().get("readinessProbe"));
    int noticed = (Integer) readiness.get("periodSeconds") * (Integer) readiness.get("failureThreshold")
        + (Integer) readiness.get("timeoutSeconds");

    assertThat(clusterConfig.withFallback(reference).getDuration(QUIET_PERIOD))
        .as("quiet-period vs readiness periodSeconds x failureThreshold + timeoutSeconds")
        .isGreaterThanOrEqualTo(Duration.ofSeconds(noticed));
  }

  // Connections

  @Test
  void should_close_client_connections_periodically_so_that_clients_find_new_pods() {
    Config effective = clusterConfig.withFallback(reference);
    Duration age = effective.getDuration(MAX_CONNECTION_AGE);
    Duration grace = effective.getDuration(MAX_CONNECTION_AGE_GRACE);

    assertThat(age).as(MAX_CONNECTION_AGE + " (0: never, and clients stay on the pods they found first)")
        .isPositive().isLessThanOrEqualTo(Duration.ofMinutes(30));
    assertThat(grace).as(MAX_CONNECTION_AGE_GRACE + " vs idgen.limits.max-call-duration (a shorter grace cancels"
        + " Allocate calls still open: their unsent IDs become a gap)")
        .isGreaterThan(effective.getDuration(MAX_CALL_DURATION));
  }

  // Security

  @Test
  void should_run_as_a_non_root_user_with_a_read_only_root_filesystem_and_no_capabilities() {
    Map<String, Object> security = map(container().get("securityContext"));

    assertThat(security.get("runAsNonRoot")).isEqualTo(true);
    assertThat(security.get("readOnlyRootFilesystem")).isEqualTo(true);
    assertThat(security.get("allowPrivilegeEscalation")).isEqualTo(false);
    assertThat(list(at(security, "capabilities", "drop"))).containsExactly("ALL");
    assertThat(map(at(security, "capabilities"))).doesNotContainKey("add");
    assertThat(at(podSpec(), "securityContext", "runAsNonRoot")).isEqualTo(true);
  }

  @Test
  void should_run_as_the_uid_the_image_declares() {
    List<String> users = dockerfile.finalStage().all("USER");

    assertThat(users).hasSize(1);
    String uid = users.get(0).split(":")[0];
    assertThat(uid).as("Dockerfile USER must be numeric for runAsNonRoot").matches("[1-9][0-9]*");
    assertThat(at(podSpec(), "securityContext", "runAsUser")).isEqualTo(Integer.parseInt(uid));
  }

  @Test
  void should_keep_tmp_writable_and_mount_the_config_where_the_image_reads_it() {
    Map<String, Object> tmp = volumeMountedAt("/tmp");
    Map<String, Object> config = volumeMountedAt("/etc/idgen");
    Path configFile = Path.of(entrypointArgument("--config"));

    assertThat(tmp).containsKey("emptyDir");
    assertThat(at(config, "configMap", "name")).isEqualTo(at(configMap, "metadata", "name"));
    assertThat(configFile.getParent()).hasToString("/etc/idgen");
    assertThat(map(configMap.get("data"))).containsKey(configFile.getFileName().toString());
  }

  // Server names and memory

  @Test
  void should_run_a_statefulset_whose_pod_name_is_the_server_name() {
    // A pod that died must come back under its old server name: under a new one, the dead pod's announcement
    // holds every AdvanceSequence, UpdateSequence and DeleteSequence until it expires (1 1/8 server leases).
    Map<String, Object> serverName = env().stream().filter(e -> "IDGEN_SERVER_NAME".equals(e.get("name")))
        .findFirst().orElseThrow(() -> new AssertionError("the pod sets no IDGEN_SERVER_NAME: each restart of a"
            + " pod would announce under a new name (its host name, new for each pod of a Deployment)"));

    assertThat(at(workload, "kind")).as("kind (a Deployment's pods get new names)").isEqualTo("StatefulSet");
    assertThat(at(serverName, "valueFrom", "fieldRef", "fieldPath")).isEqualTo("metadata.name");
    assertThat(environmentVariables).contains("IDGEN_SERVER_NAME");
    assertThat(at(workload, "spec", "serviceName")).isEqualTo(at(service, "metadata", "name"));
  }

  /** How many sequences one pod of the manifests is sized to hold loaded (SCALING.md's measured row). */
  static final String SIZED_FOR_SEQUENCES = "10,000";

  @Test
  void should_give_the_pod_the_memory_scaling_md_measured() throws IOException {
    Scaling one = Scaling.row(root.resolve("SCALING.md"), "1");
    Scaling sized = Scaling.row(root.resolve("SCALING.md"), SIZED_FOR_SEQUENCES);
    long limitMb = mebibytes(at(container(), "resources", "limits", "memory"));
    double heapShare = Double.parseDouble(entrypoint().stream().filter(a -> a.startsWith("-XX:MaxRAMPercentage="))
        .findFirst().orElseThrow().split("=")[1]) / 100;

    // What the JVM holds besides the heap (threads, code, Netty's buffers) must fit outside the heap's share.
    assertThat(limitMb * (1 - heapShare)).as("limit outside the heap (MB) vs RSS - heap after GC with one sequence")
        .isGreaterThanOrEqualTo(one.rssMb() - one.heapMb());
    assertThat((double) limitMb).as("limit (MB) vs RSS at %s sequences", SIZED_FOR_SEQUENCES)
        .isGreaterThan(sized.rssMb());
    assertThat(limitMb * heapShare).as("heap (MB) vs twice the live heap at %s sequences", SIZED_FOR_SEQUENCES)
        .isGreaterThanOrEqualTo(2.0 * sized.heapMb());
    assertThat(at(container(), "resources", "requests", "memory")).as("requests = limits: evicted last")
        .isEqualTo(at(container(), "resources", "limits", "memory"));
  }

  /** One row of SCALING.md's table of sequences loaded: RSS and heap after a full GC, in MB. */
  record Scaling(double rssMb, double heapMb) {
    static Scaling row(Path file, String sequences) throws IOException {
      List<String> header = null;
      for (String line : Files.readAllLines(file)) {
        List<String> cells = Stream.of(line.split("\\|")).map(String::trim).toList();
        if (cells.size() > 2 && cells.get(1).equals("sequences") && cells.contains("RSS MB")) {
          header = cells;
        } else if (header != null && cells.size() == header.size() && cells.get(1).equals(sequences)) {
          return new Scaling(number(cells.get(header.indexOf("RSS MB"))),
              number(cells.get(header.indexOf("heap after GC MB"))));
        }
      }
      throw new AssertionError("SCALING.md has no row for " + sequences + " sequences under 'RSS MB'");
    }

    private static double number(String cell) {
      return Double.parseDouble(cell.replace(",", ""));
    }
  }

  /** A Kubernetes memory quantity (512Mi, 1Gi) in MiB. */
  private static long mebibytes(Object quantity) {
    Matcher m = Pattern.compile("(\\d+)(Mi|Gi)").matcher(String.valueOf(quantity));
    assertThat(m.matches()).as("memory quantity %s in Mi or Gi", quantity).isTrue();
    return Long.parseLong(m.group(1)) * (m.group(2).equals("Gi") ? 1024 : 1);
  }

  // Service, replicas, disruption budget, kustomization

  @Test
  void should_put_everything_in_the_namespace_that_the_docs_commands_name() throws IOException {
    Set<String> named = new TreeSet<>();
    try (Stream<Path> docs = Stream.concat(Files.list(root.resolve("docs")), Stream.of(root.resolve("README.md")))) {
      for (Path doc : docs.filter(d -> d.toString().endsWith(".md")).toList()) {
        Matcher m = Pattern.compile("kubectl -n (\\S+)").matcher(Files.readString(doc));
        while (m.find()) {
          named.add(m.group(1));
        }
      }
    }

    assertThat(named).as("namespaces of the docs' kubectl commands").hasSize(1);
    assertThat(kustomization.get("namespace")).as("kustomization.yaml namespace").isEqualTo(named.iterator().next());
  }

  @Test
  void should_expose_the_grpc_and_http_ports_on_a_headless_service_that_selects_the_pods() {
    Map<String, Object> labels = map(at(workload, "spec", "template", "metadata", "labels"));

    assertThat(at(service, "spec", "clusterIP")).as("headless").isEqualTo("None");
    assertThat(at(service, "metadata", "name")).isEqualTo("idgen-headless");
    assertThat(labels).containsAllEntriesOf(map(at(service, "spec", "selector")));
    assertThat(labels).containsAllEntriesOf(map(at(workload, "spec", "selector", "matchLabels")));
    assertThat(list(at(service, "spec", "ports"))).hasSize(2); // grpc and http, checked by name above
  }

  @Test
  void should_run_three_replicas_under_a_disruption_budget_of_one() {
    Map<String, Object> labels = map(at(workload, "spec", "template", "metadata", "labels"));

    assertThat(at(workload, "spec", "replicas")).isEqualTo(3);
    assertThat(at(pdb, "kind")).isEqualTo("PodDisruptionBudget");
    assertThat(at(pdb, "spec", "maxUnavailable")).isEqualTo(1);
    assertThat(labels).containsAllEntriesOf(map(at(pdb, "spec", "selector", "matchLabels")));
    assertThat(at(workload, "spec", "updateStrategy", "type")).isEqualTo("RollingUpdate");
  }

  @Test
  void should_list_every_manifest_in_the_kustomization() throws IOException {
    Set<String> manifests;
    try (Stream<Path> files = Files.list(root.resolve("deploy/k8s"))) {
      manifests = files.map(f -> f.getFileName().toString())
          .filter(n -> n.endsWith(".yaml") && !n.equals("kustomization.yaml"))
          .collect(Collectors.toCollection(TreeSet::new));
    }

    assertThat(manifests).isNotEmpty();
    assertThat(list(kustomization.get("resources"))).containsExactlyInAnyOrderElementsOf(manifests);
    assertThat(list(kustomization.get("images")).stream().map(i -> map(i).get("name")))
        .contains(imageName());
  }

  // Dockerfile

  @Test
  void should_run_the_jar_that_the_build_produces() throws Exception {
    String jar = serverJarName();
    List<String> runs = dockerfile.all("RUN");
    Matcher copied = Pattern.compile("cp (idgen-server/target/\\S+) (\\S+)")
        .matcher(String.join(" ", runs));

    assertThat(String.join(" ", runs)).contains("./mvnw").contains("-pl idgen-server").contains("package");
    assertThat(copied.find()).as("the build stage copies the shaded jar out: cp idgen-server/target/… …")
        .isTrue();
    PathMatcher glob = FileSystems.getDefault().getPathMatcher("glob:" + copied.group(1));
    assertThat(glob.matches(Path.of("idgen-server/target", jar)))
        .as("'%s' matches the build's %s", copied.group(1), jar).isTrue();
    String inImage = copied.group(2);
    String copy = dockerfile.finalStage().all("COPY").stream().filter(c -> c.startsWith("--from=build"))
        .findFirst().orElseThrow();
    assertThat(copy.split("\\s+")).containsExactly("--from=build", inImage, entrypointArgument("-jar"));
  }

  @Test
  void should_build_on_jdk_17_and_run_on_a_jre_17_base() {
    List<String> froms = dockerfile.all("FROM");

    assertThat(froms).hasSizeGreaterThanOrEqualTo(2);
    assertThat(froms.get(0)).matches("\\S+:17-jdk\\S* (?i:as) build");
    assertThat(froms.get(froms.size() - 1)).matches("\\S+:17-jre\\S*");
  }

  @Test
  void should_start_java_with_the_config_file_and_declare_the_data_volume() throws IOException {
    List<String> entrypoint = entrypoint();
    String imageConfigCopy = dockerfile.finalStage().all("COPY").stream()
        .filter(c -> c.startsWith("deploy/docker/idgen.conf")).findFirst().orElseThrow();

    assertThat(entrypoint.get(0)).isEqualTo("java");
    assertThat(entrypoint).containsSubsequence("-jar", "--config");
    assertThat(imageConfigCopy.split("\\s+")[1]).isEqualTo(entrypointArgument("--config"));
    assertThat(dockerfile.finalStage().all("VOLUME").toString())
        .contains(imageConfig.withFallback(reference).getString(EMBEDDED_DIR));
    assertThat(Files.readAllLines(root.resolve(".dockerignore"))).contains("**/target/", ".git");
  }

  @Test
  void should_tag_the_image_with_the_poms_version_wherever_a_build_command_is_shown() throws IOException {
    Pattern tag = Pattern.compile("docker build .*-t\\s+\"?(\\S+?)\"?(\\s|$)");
    List<String> tags = new ArrayList<>();
    for (String file : List.of("deploy/docker/Dockerfile", "docs/operations-cli-and-deploy.md")) {
      for (String line : Files.readAllLines(root.resolve(file))) {
        Matcher m = tag.matcher(line);
        if (m.find()) {
          tags.add(file + ": " + m.group(1));
        }
      }
    }

    assertThat(tags).as("docker build -t … in the Dockerfile's header and the docs").hasSize(2);
    assertThat(tags).as("the tag comes from the POM (help:evaluate -Dexpression=project.version)")
        .allMatch(t -> t.endsWith(":$version"));
    for (String file : List.of("deploy/docker/Dockerfile", "docs/operations-cli-and-deploy.md")) {
      assertThat(Files.readString(root.resolve(file))).as(file)
          .contains("version=\"$(./mvnw -q -N help:evaluate -Dexpression=project.version -DforceStdout)\"");
    }
  }

  // Helpers

  /** The keys of {@code config} that reference.conf lacks, all reported at once. */
  private static void assertKnownKeys(String where, Config config) {
    List<String> unknown = new ArrayList<>();
    for (String key : config.entrySet().stream().map(Map.Entry::getKey).sorted().toList()) {
      if (!key.startsWith(OPEN_MAP) && !reference.hasPath(key)) {
        unknown.add(key);
      }
    }
    if (!unknown.isEmpty()) {
      fail(where + " sets " + unknown + ", which idgen-server's reference.conf does not define: the server "
          + "would refuse to start. Misspelt, or a setting the server does not have (yet)?");
    }
  }

  private static int referenceInt(String key) {
    if (!reference.hasPath(key)) {
      fail("idgen-server's reference.conf has no '" + key + "', which deploy/ relies on (containerPort, "
          + "probes, EXPOSE, ConfigMap): add it to the server, or change deploy/ and this test");
    }
    return reference.getInt(key);
  }

  private static String serverJarName() throws Exception {
    Document pom;
    try (InputStream in = Files.newInputStream(root.resolve("idgen-server/pom.xml"))) {
      pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
    }
    String artifactId = ((Element) pom.getDocumentElement().getElementsByTagName("artifactId").item(1))
        .getTextContent();
    assertThat(((Element) pom.getDocumentElement().getElementsByTagName("parent").item(0))
        .getElementsByTagName("artifactId").item(0).getTextContent()).isEqualTo("idgen-parent");
    String classifier = pom.getElementsByTagName("shadedClassifierName").item(0).getTextContent().trim();
    String version = System.getProperty("idgenVersion");
    assertThat(version).as("idgenVersion (set by the build)").isNotBlank();
    return artifactId + "-" + version + "-" + classifier + ".jar";
  }

  private static List<String> entrypoint() {
    List<String> entrypoints = dockerfile.finalStage().all("ENTRYPOINT");
    assertThat(entrypoints).hasSize(1);
    // Exec form: a JSON array, which YAML reads too.
    return list(new Yaml().load(entrypoints.get(0))).stream().map(String::valueOf).toList();
  }

  private static String entrypointArgument(String option) {
    List<String> entrypoint = entrypoint();
    int at = entrypoint.indexOf(option);
    assertThat(at).as("ENTRYPOINT has %s VALUE", option).isBetween(0, entrypoint.size() - 2);
    return entrypoint.get(at + 1);
  }

  private static Set<Integer> exposedPorts() {
    Set<Integer> ports = new LinkedHashSet<>();
    for (String expose : dockerfile.finalStage().all("EXPOSE")) {
      for (String port : expose.split("\\s+")) {
        ports.add(Integer.parseInt(port.replace("/tcp", "")));
      }
    }
    return ports;
  }

  private static String imageName() {
    String image = (String) container().get("image");
    return image.contains(":") ? image.substring(0, image.lastIndexOf(':')) : image;
  }

  private static Map<String, Object> podSpec() {
    return map(at(workload, "spec", "template", "spec"));
  }

  private static Map<String, Object> container() {
    List<Object> containers = list(podSpec().get("containers"));
    assertThat(containers).hasSize(1);
    return map(containers.get(0));
  }

  private static List<Map<String, Object>> env() {
    return list(container().get("env")).stream().map(DeployManifestsTest::map).toList();
  }

  private static int containerPort(String name) {
    return list(container().get("ports")).stream().map(DeployManifestsTest::map)
        .filter(p -> name.equals(p.get("name"))).map(p -> (Integer) p.get("containerPort"))
        .findFirst().orElseThrow(() -> new AssertionError("no containerPort named " + name));
  }

  private static Map<String, Object> servicePort(String name) {
    return list(at(service, "spec", "ports")).stream().map(DeployManifestsTest::map)
        .filter(p -> name.equals(p.get("name"))).findFirst()
        .orElseThrow(() -> new AssertionError("no Service port named " + name));
  }

  private static Map<String, Object> volumeMountedAt(String path) {
    String volume = list(container().get("volumeMounts")).stream().map(DeployManifestsTest::map)
        .filter(m -> path.equals(m.get("mountPath"))).map(m -> (String) m.get("name")).findFirst()
        .orElseThrow(() -> new AssertionError("nothing is mounted at " + path));
    return list(podSpec().get("volumes")).stream().map(DeployManifestsTest::map)
        .filter(v -> volume.equals(v.get("name"))).findFirst()
        .orElseThrow(() -> new AssertionError("no volume named " + volume));
  }

  private static Map<String, Object> yaml(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return map(new Yaml().load(in));
    }
  }

  @SuppressWarnings("unchecked")
  private static Object at(Map<String, Object> node, String... path) {
    Object current = node;
    for (String key : path) {
      assertThat(current).as("parent of '%s' in %s", key, String.join(".", path)).isInstanceOf(Map.class);
      current = ((Map<String, Object>) current).get(key);
      assertThat(current).as(String.join(".", path)).isNotNull();
    }
    return current;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object node) {
    assertThat(node).isInstanceOf(Map.class);
    return (Map<String, Object>) node;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object node) {
    assertThat(node).isInstanceOf(List.class);
    return (List<Object>) node;
  }
}
