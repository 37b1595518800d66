package io.tidemark.metadata.raft;

import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.RecordCodec;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Test child JVM: one controller voter. Arguments: node id, voters spec, directory and, optionally,
 * the session timeout in ms (default one hour: no broker is ever fenced). Every 200 ms
 * it writes {@code <offset> <crc32c of the image's records> <is leader>} to {@code <dir>/image.txt} (atomically),
 * so the parent can check that voters in other processes converge. Runs until killed.
 */
public final class VoterProcess {
  private VoterProcess() {}

  public static void main(String[] args) throws Exception {
    int nodeId = Integer.parseInt(args[0]);
    Path dir = Path.of(args[2]);
    ControllerConfig config = new ControllerConfig(new Settings(Map.of(
        ControllerConfig.NODE_ID.name(), String.valueOf(nodeId),
        ControllerConfig.VOTERS.name(), args[1],
        ControllerConfig.DIR.name(), dir.resolve("raft").toString(),
        ControllerConfig.ELECTION_TIMEOUT_MS.name(), "500",
        ControllerConfig.SESSION_TIMEOUT_MS.name(), args.length > 3 ? args[3] : "3600000")));
    ControllerNode node = new ControllerNode(config, Clock.systemUTC(), new MemoryObjectStorage(),
        ObjectKeys.defaults()::key).start();
    System.out.println("READY " + nodeId);
    System.out.flush();
    Path report = dir.resolve("image.txt");
    Path tmp = dir.resolve("image.txt.tmp");
    while (true) {
      MetadataImage image = node.image();
      Files.writeString(tmp, image.offset() + " " + digest(image) + " " + node.isLeader(), StandardCharsets.UTF_8);
      Files.move(tmp, report, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      Thread.sleep(200);
    }
  }

  /** A content digest of an image that is equal across processes exactly when the records are. */
  static long digest(MetadataImage image) {
    CRC32C crc = new CRC32C();
    for (MetadataRecord r : image.toRecords()) {
      crc.update(RecordCodec.encode(r));
    }
    return crc.getValue();
  }
}
