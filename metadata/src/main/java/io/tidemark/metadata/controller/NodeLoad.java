package io.tidemark.metadata.controller;

import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;

/**
 * A node's load as the node measured it: process and system CPU (0..1), Kafka bytes in and out,
 * Kafka requests and WAL bytes written, each per second over the node's last measuring interval.
 * {@link Double#NaN} is "not measured" (a node without a broker has no Kafka meters; a rate needs
 * two samples). Sent by every node to the controller leader ({@link ControllerRequest.ReportLoad})
 * so that any node's console can show every node's load ({@link ControllerRequest.DescribeLoads}).
 */
public record NodeLoad(double processCpu, double systemCpu, double bytesInPerSec, double bytesOutPerSec,
    double requestsPerSec, double walBytesPerSec) {

  /** Nothing measured. */
  public static final NodeLoad UNKNOWN = new NodeLoad(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
      Double.NaN);

  void write(FieldWriter w) {
    w.writeLong(Double.doubleToLongBits(processCpu)).writeLong(Double.doubleToLongBits(systemCpu))
        .writeLong(Double.doubleToLongBits(bytesInPerSec)).writeLong(Double.doubleToLongBits(bytesOutPerSec))
        .writeLong(Double.doubleToLongBits(requestsPerSec)).writeLong(Double.doubleToLongBits(walBytesPerSec));
  }

  static NodeLoad read(FieldReader r) {
    return new NodeLoad(d(r), d(r), d(r), d(r), d(r), d(r));
  }

  private static double d(FieldReader r) {
    return Double.longBitsToDouble(r.readLong());
  }
}
