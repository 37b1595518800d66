package io.tidemark.stream.object;

/**
 * Object keys from object ids: {@code <hash4>/<namespace>/o/<objectId>}. The four hex digits of a
 * hash of the id come first so that consecutive ids land in different S3 key partitions
 * (S3 scales request rates per key prefix). Immutable.
 */
public final class ObjectKeys {

  /** The namespace used by a standalone node unless configured otherwise. */
  public static final String DEFAULT_NAMESPACE = "tidemark";

  private final String namespace;

  public ObjectKeys(String namespace) {
    if (namespace == null || namespace.isEmpty() || namespace.contains("/")) {
      throw new IllegalArgumentException("object key namespace '" + namespace + "' must be non-empty without '/'");
    }
    this.namespace = namespace;
  }

  public static ObjectKeys defaults() {
    return new ObjectKeys(DEFAULT_NAMESPACE);
  }

  /** The key of object {@code objectId}. */
  public String key(long objectId) {
    if (objectId < 0) {
      throw new IllegalArgumentException("object id " + objectId + " must be >= 0");
    }
    return String.format("%04x/%s/o/%d", hash(objectId) & 0xffff, namespace, objectId);
  }

  /** The object id in {@code key}, or -1 when the key is not an object key of this namespace. */
  public long objectId(String key) {
    String marker = "/" + namespace + "/o/";
    int at = key.indexOf(marker);
    if (at != 4) {
      return -1;
    }
    try {
      long id = Long.parseLong(key.substring(at + marker.length()));
      return key.equals(key(id)) ? id : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static long hash(long id) {
    long z = id + 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
