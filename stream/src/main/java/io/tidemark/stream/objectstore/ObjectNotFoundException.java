package io.tidemark.stream.objectstore;

/** The key does not exist in the store. */
public class ObjectNotFoundException extends ObjectStorageException {
  public ObjectNotFoundException(String key) {
    super("object not found: " + key);
  }
}
