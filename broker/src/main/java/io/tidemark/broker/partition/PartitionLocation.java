package io.tidemark.broker.partition;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * Where a partition's state lives: its data stream (Kafka record batches, Kafka offset = stream
 * offset) and its meta stream (snapshots of producer state, leader-epoch history and log start).
 */
public record PartitionLocation(TopicPartition topicPartition, Uuid topicId, long dataStreamId, long metaStreamId) {}
