package io.tidemark.metadata.client;

import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.metadata.raft.ControllerNode;
import io.tidemark.metadata.raft.TestQuorum;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.engine.CrashTestNode;
import io.tidemark.stream.metadata.StreamMetadataContractTest.MetadataFixture;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.Map;

/**
 * The crash test node's metadata as the embedded shape: one Ratis voter in the node's process
 * (under {@code dir/controller}) reached through a {@link ControllerClient}. The voter's port is
 * chosen on the first open and kept in {@code dir/controller.port}, since the address is part of
 * the Raft configuration every later run recovers.
 */
public final class ControllerCrashMetadata implements CrashTestNode.MetadataOpener {

  @Override
  public MetadataFixture open(Path dir, ObjectStorage storage, ObjectKeys keys) throws IOException {
    ControllerConfig config = new ControllerConfig(new Settings(Map.of(
        ControllerConfig.NODE_ID.name(), "1",
        ControllerConfig.VOTERS.name(), "1@127.0.0.1:" + port(dir),
        ControllerConfig.DIR.name(), dir.resolve("controller").toString(),
        ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000",
        ControllerConfig.ELECTION_TIMEOUT_MS.name(), "300",
        ControllerConfig.REQUEST_TIMEOUT_MS.name(), "5000",
        ControllerConfig.CLIENT_MAX_ATTEMPTS.name(), "300"))); // a loaded machine may elect slowly
    ControllerNode node = new ControllerNode(config, Clock.systemUTC(), storage, keys::key).start();
    ControllerClient client = new ControllerClient(config);
    return ControllerFixtures.of(client, node::runHousekeeping, () -> {
      client.close();
      node.close();
    });
  }

  private static int port(Path dir) throws IOException {
    Path file = dir.resolve("controller.port");
    if (Files.exists(file)) {
      return Integer.parseInt(Files.readString(file, StandardCharsets.UTF_8).trim());
    }
    int port = TestQuorum.freePort();
    Path tmp = dir.resolve("controller.port.tmp");
    Files.writeString(tmp, Integer.toString(port), StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    return port;
  }
}
