package io.tidemark.broker.logdir;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;

/**
 * DescribeLogDirs (v1–5): one log directory per broker, holding every partition this broker
 * serves. Partitions live on streams, not in a directory, so the directory is named after
 * {@code kafka.data.dir} (or {@value #MEMORY_LOG_DIR} when the broker keeps its metadata in
 * memory). Per partition: its size, {@link PartitionLog#sizeBytes()}: the bytes of the record
 * batches from its log start offset to its log end, counted by the partition as it appends and
 * trims (this includes appends still in flight, which become durable within the WAL's flush; it is
 * rebuilt from the last snapshot and the replayed data after an unclean stop; the streams' own
 * overhead is not included), offset lag 0 (there are no future replicas) and isFuture false. TotalBytes and
 * UsableBytes (v4+) are -1: the bytes live in the stream store, whose capacity is not a
 * directory's. Stateless; callable from any thread.
 */
public final class DescribeLogDirsHandler implements ApiHandler {

  static final String MEMORY_LOG_DIR = "tidemark:memory";

  private final Partitions partitions;
  private final String logDir;

  public DescribeLogDirsHandler(Partitions partitions, String dataDir) {
    this.partitions = partitions;
    this.logDir = dataDir.isEmpty() ? MEMORY_LOG_DIR : Path.of(dataDir).toAbsolutePath().normalize().toString();
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    DescribeLogDirsRequestData req = ((DescribeLogDirsRequest) request).data();
    Set<TopicPartition> asked = asked(req);
    Map<String, DescribeLogDirsResponseData.DescribeLogDirsTopic> topics = new TreeMap<>();
    partitions.all().stream().sorted(Comparator.comparing(PartitionLog::topicPartition, Comparator.comparing(TopicPartition::topic)
        .thenComparingInt(TopicPartition::partition))).forEach(log -> {
          TopicPartition tp = log.topicPartition();
          if (asked == null || asked.contains(tp)) {
            topics.computeIfAbsent(tp.topic(), n -> new DescribeLogDirsResponseData.DescribeLogDirsTopic().setName(n))
                .partitions().add(new DescribeLogDirsResponseData.DescribeLogDirsPartition().setPartitionIndex(tp.partition())
                    .setPartitionSize(log.sizeBytes()).setOffsetLag(0).setIsFutureKey(false));
          }
        });
    DescribeLogDirsResponseData.DescribeLogDirsResult dir = new DescribeLogDirsResponseData.DescribeLogDirsResult()
        .setErrorCode(Errors.NONE.code()).setLogDir(logDir).setTopics(List.copyOf(topics.values()));
    return CompletableFuture.completedFuture(new DescribeLogDirsResponseData().setErrorCode(Errors.NONE.code())
        .setResults(List.of(dir)));
  }

  /** The partitions asked for, or null for all. */
  private static Set<TopicPartition> asked(DescribeLogDirsRequestData req) {
    if (req.topics() == null) {
      return null;
    }
    Set<TopicPartition> out = new HashSet<>();
    req.topics().forEach(t -> t.partitions().forEach(p -> out.add(new TopicPartition(t.topic(), p))));
    return out;
  }
}
