package io.tidemark.metadata.image;

import io.tidemark.metadata.record.MetadataRecord;
import java.util.List;

/**
 * Told of every new image, with the records that produced it (empty after a snapshot load). Called
 * on the replica's apply thread: implementations hand work over and return quickly.
 */
@FunctionalInterface
public interface MetadataListener {
  void onImage(MetadataImage image, List<MetadataRecord> records);
}
