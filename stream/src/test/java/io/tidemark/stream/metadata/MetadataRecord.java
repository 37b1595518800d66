package io.tidemark.stream.metadata;

import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import java.util.List;
import java.util.Map;

/**
 * Test fixture: the changes of stream and object metadata, as produced by {@link MemoryStreamMetadata}'s
 * handlers and applied only by its {@code replay}. Each record is self-contained so that a journal
 * (or a replicated log) replays it to the same state.
 */
public sealed interface MetadataRecord {

  /** Id counters at least these values (written by journal compaction so that ids are never reused). */
  record IdsReserved(long nextStreamId, long nextObjectId) implements MetadataRecord {}

  /** Node {@code nodeId} registered with {@code nodeEpoch}; older epochs of the node are fenced. */
  record NodeRegistered(int nodeId, long nodeEpoch) implements MetadataRecord {}

  /** Stream {@code streamId} created: closed, epoch 0, offsets [0, 0). */
  record StreamCreated(long streamId, Map<String, String> tags) implements MetadataRecord {
    public StreamCreated {
      tags = Map.copyOf(tags);
    }
  }

  /** Stream opened with {@code epoch} by {@code nodeId}. */
  record StreamOpened(long streamId, long epoch, int nodeId) implements MetadataRecord {}

  /** Stream closed. */
  record StreamClosed(long streamId) implements MetadataRecord {}

  /** Stream start offset moved to {@code startOffset}. */
  record StreamTrimmed(long streamId, long startOffset) implements MetadataRecord {}

  /** Stream deleted. */
  record StreamDeleted(long streamId) implements MetadataRecord {}

  /** Stream end offset advanced by an upload commit. */
  record StreamEndAdvanced(long streamId, long endOffset) implements MetadataRecord {}

  /** Ids {@code [firstObjectId, firstObjectId + count)} reserved by {@code nodeId} until {@code expiresAtMs}. */
  record ObjectsPrepared(long firstObjectId, int count, int nodeId, long expiresAtMs) implements MetadataRecord {}

  /** A prepared object became committed and readable. */
  record ObjectCommitted(long objectId, long sizeBytes, ObjectKind kind, int nodeId, List<StreamRange> ranges,
      long orderId, long committedAtMs) implements MetadataRecord {
    public ObjectCommitted {
      ranges = List.copyOf(ranges);
    }
  }

  /** Objects (prepared or committed) no longer needed; physically deleted after the delay. */
  record ObjectsMarkedForDeletion(List<Long> objectIds, long markedAtMs) implements MetadataRecord {
    public ObjectsMarkedForDeletion {
      objectIds = List.copyOf(objectIds);
    }
  }

  /** Objects physically deleted from object storage; forgotten. */
  record ObjectsDeleted(List<Long> objectIds) implements MetadataRecord {
    public ObjectsDeleted {
      objectIds = List.copyOf(objectIds);
    }
  }
}
