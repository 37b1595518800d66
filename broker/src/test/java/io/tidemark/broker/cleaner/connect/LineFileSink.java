package io.tidemark.broker.cleaner.connect;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/** A file sink connector for tests: appends each record's value as a line of {@code file}. */
public final class LineFileSink extends SinkConnector {

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
    return new ConfigDef().define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "file to append to");
  }

  @Override
  public String version() {
    return "test";
  }

  /** Appends values, one line each. */
  public static final class LineTask extends SinkTask {
    private Path file;

    @Override
    public void start(Map<String, String> props) {
      file = Path.of(props.get("file"));
    }

    @Override
    public void put(Collection<SinkRecord> records) {
      StringBuilder text = new StringBuilder();
      records.forEach(r -> text.append(r.value()).append('\n'));
      try {
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
            StandardOpenOption.SYNC);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void stop() {}

    @Override
    public String version() {
      return "test";
    }
  }
}
