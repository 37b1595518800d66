package io.tidemark.broker.cleaner.connect;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * A file source connector for tests (Kafka's connect-file does not resolve on this build machine):
 * each line of {@code file} becomes a record of {@code topic}; the source offset is the line number,
 * stored by Connect in its (compacted) offset topic, so a restarted worker goes on after the last line sent.
 */
public final class LineFileSource extends SourceConnector {

  private Map<String, String> props;

  @Override
  public void start(Map<String, String> props) {
    this.props = props;
  }

  @Override
  public Class<? extends Task> taskClass() {
    return LineTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    return List.of(props);
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return new ConfigDef().define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "file to read")
        .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "topic to write");
  }

  @Override
  public String version() {
    return "test";
  }

  /** Reads the lines after the committed line number. */
  public static final class LineTask extends SourceTask {
    private Path file;
    private String topic;
    private long next;

    @Override
    public void start(Map<String, String> props) {
      file = Path.of(props.get("file"));
      topic = props.get("topic");
      Map<String, Object> offset = context.offsetStorageReader().offset(Map.of("file", file.toString()));
      next = offset == null ? 0 : ((Number) offset.get("line")).longValue();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
      List<String> lines;
      try {
        lines = Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      List<SourceRecord> out = new ArrayList<>();
      while (next < lines.size() && out.size() < 100) {
        out.add(new SourceRecord(Map.of("file", file.toString()), Map.of("line", next + 1), topic, null, null, null,
            Schema.STRING_SCHEMA, lines.get((int) next)));
        next++;
      }
      if (out.isEmpty()) {
        Thread.sleep(50);
        return null;
      }
      return out;
    }

    @Override
    public void stop() {}

    @Override
    public String version() {
      return "test";
    }
  }
}
