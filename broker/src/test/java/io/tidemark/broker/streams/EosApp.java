package io.tidemark.broker.streams;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The Kafka Streams application of the exactly-once tests, in-process or as a child JVM
 * ({@link #main}, killed with SIGKILL by the test). Input records are keyed by a unique id with a
 * word as value ({@code word:id}); the topology copies every input record to {@value #COPY}
 * (stateless: each id must appear exactly once) and counts words through a repartition topic into
 * a state store with a changelog, writing every updated count to {@value #COUNTS} (each word's
 * counts must read 1, 2, 3, ... with nothing repeated or skipped). {@code exactly_once_v2}, no
 * record cache, a short commit interval, so that a kill almost always lands inside a transaction.
 */
public final class EosApp {

  public static final String INPUT = "eos-in";
  public static final String COPY = "eos-copy";
  public static final String COUNTS = "eos-counts";
  public static final String APP_ID = "eos-wordcount";
  /** Printed by a child once its instance is RUNNING. */
  public static final String RUNNING = "EOS-APP RUNNING";

  private EosApp() {}

  public static Topology topology() {
    StreamsBuilder builder = new StreamsBuilder();
    var input = builder.<String, String>stream(INPUT);
    input.to(COPY);
    input.map((id, value) -> KeyValue.pair(value.substring(0, value.indexOf(':')), id))
        .groupByKey()
        .count(Materialized.as("word-counts"))
        .toStream()
        .to(COUNTS, Produced.with(Serdes.String(), Serdes.Long()));
    return builder.build();
  }

  public static Properties config(String bootstrap, Path stateDir) {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP_ID);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    // a dead instance leaves the group and its open transaction aborts within seconds, not minutes
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);
    props.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), 5000);
    return props;
  }

  /** Runs one instance until killed: {@code EosApp <bootstrap> <state dir>}. */
  public static void main(String[] args) throws Exception {
    KafkaStreams streams = new KafkaStreams(topology(), config(args[0], Path.of(args[1])));
    CountDownLatch dead = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      if (now == KafkaStreams.State.RUNNING) {
        System.out.println(RUNNING);
      } else if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
        System.out.println("EOS-APP " + now);
        dead.countDown();
      }
    });
    streams.start();
    dead.await();
    streams.close(Duration.ofSeconds(5));
    System.exit(1);
  }
}
