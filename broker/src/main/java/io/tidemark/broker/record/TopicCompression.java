package io.tidemark.broker.record;

import java.util.List;

/**
 * A topic's {@code compression.type} with the level of its codec ({@code compression.gzip.level},
 * {@code compression.lz4.level}, {@code compression.zstd.level}), as Kafka names them: {@code producer}
 * (keep the producer's codec), {@code uncompressed}, {@code gzip}, {@code snappy}, {@code lz4}, {@code zstd}.
 * The level is used only when the broker recompresses (KIP-390): a batch already in the topic's codec
 * is stored as sent, whatever level the producer used. Immutable.
 *
 * @param type one of {@link #TYPES}
 * @param level the codec's level; ignored for producer, uncompressed and snappy
 */
public record TopicCompression(String type, int level) {

  /** The values Kafka accepts for {@code compression.type}, in its order. */
  public static final List<String> TYPES = List.of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer");

  /** Keep whatever codec the producer chose. */
  public static final TopicCompression PRODUCER = new TopicCompression("producer", 0);

  public TopicCompression {
    if (!TYPES.contains(type)) {
      throw new IllegalArgumentException("compression.type '" + type + "' is not one of " + TYPES);
    }
  }

  /** True when batches keep the producer's codec. */
  public boolean keepsProducerCodec() {
    return type.equals("producer");
  }

  /** The name of the codec stored batches must have, as kafka-clients names it ({@code none} for uncompressed). */
  String codecName() {
    return type.equals("uncompressed") ? "none" : type;
  }
}
