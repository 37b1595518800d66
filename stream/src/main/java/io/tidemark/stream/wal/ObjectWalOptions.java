package io.tidemark.stream.wal;

/**
 * What an {@link ObjectWriteAheadLog} needs. {@link WriteAheadLogs#create} builds one from {@link WalConfig}.
 *
 * @param nodeId the node whose log this is; objects live under {@code wal/<nodeId>/}
 * @param epoch this writer's epoch; a writer with a higher epoch fences this one
 * @param batchIntervalMs the longest a record waits before its batch is uploaded
 * @param batchMaxBytes a batch is uploaded as soon as it holds this many payload bytes
 * @param maxInflightUploads most batch uploads (and recovery reads) in flight at once
 * @param maxPendingBytes bound on payload bytes appended but not yet acknowledged; beyond it appends
 *     are refused at once with {@link WalFullException} (nothing written)
 * @param appendTimeoutMs how long {@code close()} waits for outstanding uploads
 */
public record ObjectWalOptions(
    int nodeId,
    long epoch,
    long batchIntervalMs,
    long batchMaxBytes,
    int maxInflightUploads,
    long maxPendingBytes,
    long appendTimeoutMs) {

  public ObjectWalOptions {
    if (nodeId < 0 || epoch < 0) {
      throw new IllegalArgumentException("nodeId and epoch must be >= 0, got " + nodeId + " and " + epoch);
    }
    if (batchIntervalMs < 1 || batchMaxBytes < 1 || maxInflightUploads < 1 || maxPendingBytes < 1 || appendTimeoutMs < 0) {
      throw new IllegalArgumentException("object WAL bounds must be positive: " + this);
    }
  }

  /** Options with the defaults of {@link WalConfig} for everything but the identity. */
  public static ObjectWalOptions of(int nodeId, long epoch) {
    return new ObjectWalOptions(nodeId, epoch, WalConfig.OBJECT_BATCH_INTERVAL_MS.defaultValue(),
        WalConfig.OBJECT_BATCH_MAX_BYTES.defaultValue(), WalConfig.OBJECT_MAX_INFLIGHT.defaultValue(),
        WalConfig.MAX_PENDING_BYTES.defaultValue(), WalConfig.APPEND_TIMEOUT_MS.defaultValue());
  }

  public ObjectWalOptions withEpoch(long newEpoch) {
    return new ObjectWalOptions(nodeId, newEpoch, batchIntervalMs, batchMaxBytes, maxInflightUploads, maxPendingBytes, appendTimeoutMs);
  }

  public ObjectWalOptions withBatching(long intervalMs, long maxBytes) {
    return new ObjectWalOptions(nodeId, epoch, intervalMs, maxBytes, maxInflightUploads, maxPendingBytes, appendTimeoutMs);
  }

  public ObjectWalOptions withBounds(int inflight, long pendingBytes, long timeoutMs) {
    return new ObjectWalOptions(nodeId, epoch, batchIntervalMs, batchMaxBytes, inflight, pendingBytes, timeoutMs);
  }
}
