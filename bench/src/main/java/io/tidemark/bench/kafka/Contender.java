package io.tidemark.bench.kafka;

/** A system under test, in the order the comparison runs them (one after the other, never at once). */
enum Contender {
  TIDEMARK("Tidemark") {
    @Override
    BrokerNode start(Setup setup, Extra extra) throws Exception {
      return TidemarkNode.start(setup, label(), "tidemark", extra.tidemark());
    }
  },
  KAFKA_DURABLE("Kafka, durable (`" + ApacheKafka.DURABLE_SETTING + "=1`)") {
    @Override
    BrokerNode start(Setup setup, Extra extra) throws Exception {
      return ApacheKafka.start(setup, label(), "kafka-durable", true, extra.kafka());
    }
  },
  KAFKA_DEFAULT("Kafka, default (no fsync)") {
    @Override
    BrokerNode start(Setup setup, Extra extra) throws Exception {
      return ApacheKafka.start(setup, label(), "kafka-default", false, extra.kafka());
    }
  };

  private final String label;

  Contender(String label) {
    this.label = label;
  }

  String label() {
    return label;
  }

  /** Starts the node with every setting at its default. */
  BrokerNode start(Setup setup) throws Exception {
    return start(setup, Extra.NONE);
  }

  /** Starts the node with {@code extra} properties lines appended to its configuration. */
  abstract BrokerNode start(Setup setup, Extra extra) throws Exception;

  /** Properties lines a benchmark adds to every Kafka node's and to the Tidemark node's configuration. */
  record Extra(String kafka, String tidemark) {
    static final Extra NONE = new Extra("", "");
  }
}
