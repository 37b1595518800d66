package io.tidemark.bench.kafka;

/** A system under test, in the order the comparison runs them (one after the other, never at once). */
enum Contender {
  TIDEMARK("Tidemark") {
    @Override
    BrokerNode start(Setup setup) throws Exception {
      return TidemarkNode.start(setup, label(), "tidemark");
    }
  },
  KAFKA_DURABLE("Kafka, durable (`" + ApacheKafka.DURABLE_SETTING + "=1`)") {
    @Override
    BrokerNode start(Setup setup) throws Exception {
      return ApacheKafka.start(setup, label(), "kafka-durable", true);
    }
  },
  KAFKA_DEFAULT("Kafka, default (no fsync)") {
    @Override
    BrokerNode start(Setup setup) throws Exception {
      return ApacheKafka.start(setup, label(), "kafka-default", false);
    }
  };

  private final String label;

  Contender(String label) {
    this.label = label;
  }

  String label() {
    return label;
  }

  abstract BrokerNode start(Setup setup) throws Exception;
}
