package io.tidemark.server.compat;

import io.tidemark.server.FreePorts;
import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Tidemark side of the tests that run Apache Kafka beside it ({@link KafkaReference}): one
 * in-process node on embedded storage in {@code dir}, every listener on loopback and an ephemeral
 * port, one controller voter on a free port; {@code settings} ({@code key=value}) are added.
 */
final class TidemarkPeer {

  private TidemarkPeer() {}

  static TidemarkServer start(Path dir, String... settings) throws Exception {
    Files.createDirectories(dir);
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + dir, "--set", "admin.port=0", "--set", "admin.host=127.0.0.1",
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0", "--set", "kafka.advertised.host=127.0.0.1",
        "--set", "registry.host=127.0.0.1", "--set", "registry.port=0", "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=" + FreePorts.singleVoter()));
    for (String setting : settings) {
      args.add("--set");
      args.add(setting);
    }
    return Main.start(args, Map.of(), new EmbeddedStorage());
  }
}
