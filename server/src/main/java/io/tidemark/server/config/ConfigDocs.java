package io.tidemark.server.config;

import io.tidemark.stream.config.ConfigKey;
import java.util.Locale;

/**
 * Renders {@code docs/configuration.md} and the commented example {@code config/tidemark.properties}
 * from a {@link ConfigCatalog}. The output depends only on the declarations (no dates, no machine
 * paths), so a test can regenerate both and compare them with the committed files.
 */
public final class ConfigDocs {

  /** Where the generated files live, relative to the project root. */
  public static final String REFERENCE_PATH = "docs/configuration.md";
  public static final String PROPERTIES_PATH = "config/tidemark.properties";

  /** The command that regenerates the page, printed in it. */
  public static final String REGENERATE_COMMAND =
      "java -cp 'server/target/tidemark-server.jar:server/target/lib/*' io.tidemark.server.Main config-docs";

  private ConfigDocs() {}

  public static String render(ConfigCatalog catalog) {
    StringBuilder out = new StringBuilder();
    out.append("# Configuration reference\n\n");
    out.append("<!-- Generated from the declared settings (ConfigCatalog); do not edit by hand. -->\n");
    out.append("<!-- Regenerate after `bin/tidemark build` with: ").append(REGENERATE_COMMAND).append(" -->\n\n");
    out.append("Tidemark reads its settings from three sources; a later one wins:\n\n");
    out.append("1. a properties file: `bin/tidemark start --config config/tidemark.properties`;\n");
    out.append("2. the environment: `TIDEMARK_` followed by the key in upper case with `_` for `.` ")
        .append("(`TIDEMARK_ADMIN_PORT=9645` sets `admin.port`);\n");
    out.append("3. the command line: `--set key=value` (or `--key=value`), repeatable.\n\n");
    out.append("At start-up every value is checked against the declarations below: a value that does not parse or is ")
        .append("out of range stops the process with a message naming the setting; an unknown key is logged as a ")
        .append("warning with the closest known key. Sizes are in bytes and durations in milliseconds unless the key ")
        .append("says otherwise.\n\n");
    out.append("Some broker settings also change at run time, as Kafka's dynamic broker configs (`kafka-configs --alter ")
        .append("--entity-type brokers`): the topic defaults, `num.network.threads` (`kafka.network.threads`), ")
        .append("`log.cleaner.threads` (`kafka.log.cleaner.threads`) and a TLS listener's key and trust stores. Which Kafka keys ")
        .append("apply live and which are refused, and why: [operations.md](operations.md#dynamic-broker-configs).\n");
    for (ConfigCatalog.Section section : catalog.sections()) {
      out.append("\n## ").append(section.title()).append("\n\n");
      out.append(section.description()).append("\n\n");
      out.append("| Setting | Type | Default | Environment variable | Description |\n");
      out.append("| --- | --- | --- | --- | --- |\n");
      for (ConfigKey<?> key : section.keys()) {
        out.append("| `").append(key.name()).append("` | ")
            .append(cell(key.type())).append(" | ")
            .append(defaultCell(key)).append(" | `")
            .append(variableOf(key.name())).append("` | ")
            .append(cell(key.doc())).append(" |\n");
      }
    }
    return out.toString();
  }

  /** Every setting with its documentation and its default, commented out, section by section. */
  public static String renderProperties(ConfigCatalog catalog) {
    StringBuilder out = new StringBuilder();
    out.append("# Tidemark configuration: every setting with its default, commented out.\n");
    out.append("# Generated from the declared settings (ConfigCatalog); do not edit: copy it and uncomment what you change.\n");
    out.append("#   bin/tidemark start --config my.properties\n");
    out.append("# Environment variables (TIDEMARK_ADMIN_PORT=9645) and --set key=value override this file.\n");
    out.append("# Reference: docs/configuration.md. Example for S3: config/s3.properties.\n");
    for (ConfigCatalog.Section section : catalog.sections()) {
      out.append("\n######## ").append(section.title()).append("\n");
      for (ConfigKey<?> key : section.keys()) {
        out.append("\n");
        wrap(out, key.doc() + " (" + key.type() + ")");
        Object value = key.defaultValue();
        out.append("#").append(key.name()).append("=")
            .append(value == null || key.secret() ? "" : value.toString()).append("\n");
      }
    }
    return out.toString();
  }

  private static void wrap(StringBuilder out, String text) {
    StringBuilder line = new StringBuilder("#");
    for (String word : text.split("\\s+")) {
      if (line.length() + word.length() + 1 > 100 && line.length() > 1) {
        out.append(line).append("\n");
        line = new StringBuilder("#");
      }
      line.append(' ').append(word);
    }
    out.append(line).append("\n");
  }

  /** {@code wal.capacity.bytes} → {@code TIDEMARK_WAL_CAPACITY_BYTES}. */
  public static String variableOf(String key) {
    return ConfigLoader.ENV_PREFIX + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  private static String defaultCell(ConfigKey<?> key) {
    Object value = key.defaultValue();
    if (value == null || value.toString().isEmpty()) {
      return "(none)";
    }
    if (key.secret()) {
      return "(secret)";
    }
    return "`" + value.toString().replace("|", "\\|") + "`";
  }

  private static String cell(String text) {
    return text == null ? "" : text.replace("|", "\\|").replace("\n", " ");
  }
}
