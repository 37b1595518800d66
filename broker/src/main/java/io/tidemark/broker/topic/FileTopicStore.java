package io.tidemark.broker.topic;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.Uuid;

/**
 * Keeps the {@link RegistryState} in {@code topics.registry} (a small line-oriented text file)
 * under the broker's data directory, replaced atomically: written to a temporary file, forced to
 * disk, renamed over the old one. Used by single-node brokers until topic metadata moves to the
 * replicated controller.
 */
public final class FileTopicStore implements TopicStore {

  private static final String HEADER = "tidemark-topic-registry 1";
  private final Path file;

  public FileTopicStore(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create broker data directory " + dir, e);
    }
    this.file = dir.resolve("topics.registry");
  }

  @Override
  public Optional<RegistryState> load() {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
        throw new IllegalStateException(file + " is not a topic registry (first line must be '" + HEADER + "')");
      }
      String clusterId = "";
      long nextBlock = 0;
      Map<String, String[]> topicLines = new LinkedHashMap<>();
      Map<String, Map<String, String>> configs = new HashMap<>();
      Map<String, List<TopicInfo.PartitionInfo>> parts = new HashMap<>();
      for (String line : lines.subList(1, lines.size())) {
        if (line.isBlank()) {
          continue;
        }
        String[] f = line.split("\t", -1);
        switch (f[0]) {
          case "cluster" -> clusterId = f[1];
          case "producer-id-block" -> nextBlock = Long.parseLong(f[1]);
          case "topic" -> topicLines.put(f[1], f);
          case "config" -> configs.computeIfAbsent(f[1], k -> new HashMap<>()).put(decode(f[2]), decode(f[3]));
          case "partition" -> parts.computeIfAbsent(f[1], k -> new ArrayList<>()).add(new TopicInfo.PartitionInfo(
              Integer.parseInt(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), Integer.parseInt(f[5])));
          default -> throw new IllegalStateException("unknown line kind '" + f[0] + "' in " + file);
        }
      }
      Map<String, TopicInfo> topics = new LinkedHashMap<>();
      for (Map.Entry<String, String[]> t : topicLines.entrySet()) {
        List<TopicInfo.PartitionInfo> p = parts.getOrDefault(t.getKey(), List.of()).stream()
            .sorted(java.util.Comparator.comparingInt(TopicInfo.PartitionInfo::partition)).toList();
        topics.put(t.getKey(), new TopicInfo(t.getKey(), Uuid.fromString(t.getValue()[2]), Boolean.parseBoolean(t.getValue()[3]),
            configs.getOrDefault(t.getKey(), Map.of()), p));
      }
      return Optional.of(new RegistryState(clusterId, nextBlock, topics));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read topic registry " + file, e);
    }
  }

  @Override
  public void save(RegistryState state) {
    StringBuilder sb = new StringBuilder(HEADER).append('\n');
    sb.append("cluster\t").append(state.clusterId()).append('\n');
    sb.append("producer-id-block\t").append(state.nextProducerIdBlock()).append('\n');
    for (TopicInfo t : state.topics().values()) {
      sb.append("topic\t").append(t.name()).append('\t').append(t.id()).append('\t').append(t.internal()).append('\n');
      t.configs().forEach((k, v) -> sb.append("config\t").append(t.name()).append('\t').append(encode(k)).append('\t')
          .append(encode(v)).append('\n'));
      for (TopicInfo.PartitionInfo p : t.partitions()) {
        sb.append("partition\t").append(t.name()).append('\t').append(p.partition()).append('\t').append(p.dataStreamId())
            .append('\t').append(p.metaStreamId()).append('\t').append(p.leaderEpoch()).append('\n');
      }
    }
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      Files.writeString(tmp, sb, StandardCharsets.UTF_8);
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write topic registry " + file, e);
    }
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }
}
