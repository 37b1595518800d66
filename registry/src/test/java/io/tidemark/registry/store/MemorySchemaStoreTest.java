package io.tidemark.registry.store;

/** Goal: the in-memory log passes the SchemaStore contract. */
class MemorySchemaStoreTest extends SchemaStoreContractTest {
  @Override
  protected SchemaStore newStore() {
    return new MemorySchemaStore();
  }
}
