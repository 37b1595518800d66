package io.tidemark.server.cluster;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the controller's topic record does not hold about a Kafka topic: whether it is internal
 * and the configs set on it. Kept as one value in the controller's key-value space (namespace
 * {@value #NAMESPACE}, key = topic id), so a config change replaces the whole set atomically.
 * Encoding: version (short), internal (boolean), count (int), then key and value (UTF) pairs in
 * key order. Immutable.
 */
record TopicDescriptor(boolean internal, Map<String, String> configs) {

  static final String NAMESPACE = "kafka.topic";
  private static final short VERSION = 1;

  TopicDescriptor {
    configs = Map.copyOf(configs);
  }

  byte[] encode() {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(VERSION);
      out.writeBoolean(internal);
      Map<String, String> sorted = new TreeMap<>(configs);
      out.writeInt(sorted.size());
      for (Map.Entry<String, String> e : sorted.entrySet()) {
        out.writeUTF(e.getKey());
        out.writeUTF(e.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  /** The descriptor in {@code bytes}; a topic without one (not written yet) is not internal and has no configs. */
  static TopicDescriptor decode(byte[] bytes) {
    if (bytes == null) {
      return new TopicDescriptor(false, Map.of());
    }
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      short version = in.readShort();
      if (version != VERSION) {
        throw new IllegalStateException("topic descriptor version " + version + " is newer than this broker reads ("
            + VERSION + ")");
      }
      boolean internal = in.readBoolean();
      int count = in.readInt();
      Map<String, String> configs = new LinkedHashMap<>();
      for (int i = 0; i < count; i++) {
        configs.put(in.readUTF(), in.readUTF());
      }
      return new TopicDescriptor(internal, configs);
    } catch (IOException e) {
      throw new UncheckedIOException("unreadable topic descriptor", e);
    }
  }
}
