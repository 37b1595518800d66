package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.docs.DocCommands;
import io.tidemark.server.storage.EmbeddedStorage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.tidemark.table.warehouse.LocalFileIO;
import java.util.HashMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: on the embedded default (local storage, embedded catalog) a table topic's table is read
 * through the REST catalog by a separate JVM whose class path holds only Apache Iceberg's jars from
 * Maven Central and the Hadoop client an engine ships ({@code server/iceberg-reader}), with the
 * catalog settings the README gives Spark, and every produced row comes back exactly once.
 */
class IcebergStandardReaderTest {

  private static final Path READER = Path.of("iceberg-reader");
  private static final Path READER_CLASSPATH = READER.resolve("target/iceberg-reader.classpath");
  private static final Pattern SPARK_CATALOG_CONF = Pattern.compile("spark\\.sql\\.catalog\\.tidemark\\.([^=]+)=(.*)");
  private static final Pattern SPARK_TABLE = Pattern.compile("FROM tidemark\\.(\\w+)\\.(\\w+)");
  private static final int RECORDS = 300;
  private static final int PARTITIONS = 3;

  @TempDir Path dataDir;
  private TidemarkServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aPlainIcebergJvmReadsEveryRowOfATableTopicThroughTheRestCatalog() throws Exception {
    String classpath = readerClasspath();
    DocCommands.Command spark = DocCommands.of(DocCommands.repositoryRoot().resolve("README.md")).stream()
        .filter(c -> c.tool().equals("spark-sql")).findFirst()
        .orElseThrow(() -> new AssertionError("README.md shows no spark-sql command"));
    Matcher table = SPARK_TABLE.matcher(spark.text());
    assertThat(table.find()).as("the table the README's spark-sql queries (%s)", spark.where()).isTrue();
    String topic = table.group(2);

    server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (64L << 20)), Map.of(), new EmbeddedStorage());
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1).configs(Map.of("table.topic.enable", "true",
          "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string",
          "table.topic.namespace", table.group(1))))).all().get(60, TimeUnit.SECONDS);
    }
    Set<String> produced = new TreeSet<>();
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrap, ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < RECORDS; i++) {
        acks.add(producer.send(new ProducerRecord<>(topic, i % PARTITIONS, "user-" + i, "page-" + i)));
      }
      for (int i = 0; i < RECORDS; i++) {
        RecordMetadata meta = acks.get(i).get(60, TimeUnit.SECONDS);
        produced.add(meta.partition() + "\t" + meta.offset() + "\tuser-" + i + "\tpage-" + i);
      }
    }

    Map<String, String> catalog = sparkCatalogProperties(spark, server.tableRestPort().orElseThrow());
    String identifier = table.group(1) + "." + topic;
    awaitCommitted(identifier, server.tableRestPort().orElseThrow());
    List<String> out = read(classpath, identifier, catalog);
    out.stream().filter(l -> !l.startsWith("row\t")).forEach(l -> System.out.println("[iceberg reader] " + l));
    assertThat(out).contains("tidemark-classes absent");
    assertThat(value(out, "io")).as("the reader's FileIO").startsWith("org.apache.iceberg.");
    assertThat(value(out, "location")).startsWith("file:");
    List<String> rows = rowsOf(out);
    assertThat(new TreeSet<>(rows)).as("every row once").hasSize(rows.size()).isEqualTo(produced);
  }

  /** The README's {@code --conf spark.sql.catalog.tidemark.<key>=<value>} settings, pointed at this node's port. */
  private static Map<String, String> sparkCatalogProperties(DocCommands.Command spark, int restPort) {
    Map<String, String> props = new LinkedHashMap<>();
    for (String word : DocCommands.words(spark.text())) {
      Matcher m = SPARK_CATALOG_CONF.matcher(word);
      if (m.matches()) {
        props.put(m.group(1), m.group(2).replace("localhost:8181", "127.0.0.1:" + restPort));
      }
    }
    assertThat(props).as("catalog settings of %s", spark.where()).containsEntry("type", "rest").containsKey("uri");
    assertThat(props.get("uri")).as("README's uri points at the REST port").contains(":" + restPort);
    return props;
  }

  /** The class path of the plain reader, checked to hold nothing of Tidemark. */
  static String readerClasspath() throws Exception {
    assertThat(READER_CLASSPATH).as("the reader class path is resolved by the iceberg-reader module"
        + " (build with: mvn -pl server -am test-compile)").exists();
    String classpath = Files.readString(READER_CLASSPATH).strip();
    Path repository = DocCommands.repositoryRoot();
    for (String entry : classpath.split(File.pathSeparator)) {
      assertThat(entry).as("reader class path entry").doesNotContain("io/tidemark").doesNotContain("tidemark-")
          .doesNotStartWith(repository.toString()).endsWith(".jar");
    }
    assertThat(classpath).contains("iceberg-core-").contains("iceberg-parquet-").contains("hadoop-client-api-");
    return classpath;
  }

  /** Waits (in this JVM) until the table's snapshot counts every produced record. */
  private static void awaitCommitted(String identifier, int restPort) throws Exception {
    try (RESTCatalog rest = new RESTCatalog()) {
      rest.initialize("wait", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + restPort,
          "io-impl", LocalFileIO.class.getName())));
      TableIdentifier id = TableIdentifier.parse(identifier);
      await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500)).until(() -> {
        if (!rest.tableExists(id)) {
          return false;
        }
        Snapshot current = rest.loadTable(id).currentSnapshot();
        return current != null && Long.parseLong(current.summary().getOrDefault("total-records", "0")) >= RECORDS;
      });
    }
  }

  /** Runs the reader JVM to its end; its output lines. */
  static List<String> read(String classpath, String table, Map<String, String> catalog) throws Exception {
    Path java = readerJava();
    System.out.println("[iceberg reader] java " + java);
    List<String> command = new ArrayList<>(List.of(java.toString(),
        "-Xmx256m", "-cp", classpath, READER.resolve("ReadTable.java").toString(), table));
    catalog.forEach((k, v) -> command.add(k + "=" + v));
    Path err = Files.createTempFile("reader", ".err");
    Process process = new ProcessBuilder(command).redirectError(err.toFile()).start();
    String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    boolean ended = process.waitFor(3, TimeUnit.MINUTES);
    if (!ended) {
      process.destroyForcibly();
    }
    String stderr = Files.readString(err);
    Files.delete(err);
    assertThat(ended && process.exitValue() == 0).as("reader JVM %s\nstdout:\n%s\nstderr:\n%s", command, stdout, stderr)
        .isTrue();
    return stdout.lines().toList();
  }

  /** A JDK 17 when one is installed (what Spark most often runs on; no Tidemark class could load there), else this JVM. */
  private static Path readerJava() throws Exception {
    Path jvms = Path.of("/usr/lib/jvm");
    if (Files.isDirectory(jvms)) {
      try (var dirs = Files.list(jvms)) {
        var jdk17 = dirs.filter(d -> d.getFileName().toString().contains("17"))
            .map(d -> d.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("javac"))).sorted().findFirst();
        if (jdk17.isPresent()) {
          return jdk17.get().resolve("java");
        }
      }
    }
    return Path.of(System.getProperty("java.home"), "bin", "java");
  }

  private static List<String> rowsOf(List<String> out) {
    return out.stream().filter(l -> l.startsWith("row\t")).map(l -> l.substring(4)).toList();
  }

  private static String value(List<String> out, String key) {
    return out.stream().filter(l -> l.startsWith(key + "\t")).map(l -> l.substring(key.length() + 1)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + key + " line in " + out));
  }
}
