package io.tidemark.registry.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Goal: every SchemaStore gives increasing offsets (dense from 0 on a fresh log), reads back byte-identical records and tombstones, and pages by maxRecords. */
abstract class SchemaStoreContractTest {

  protected abstract SchemaStore newStore();

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void offsetsAreDenseAndRecordsReadBackIdentical() {
    // Goal: appends return 0,1,2; reads return the same bytes, null values stay null.
    SchemaStore store = newStore();
    assertThat(store.endOffset()).isZero();
    assertThat(store.append(b("k0"), b("v0"))).isZero();
    assertThat(store.append(b("k1"), null)).isEqualTo(1);
    assertThat(store.append(b("k2"), b("v2"))).isEqualTo(2);
    assertThat(store.endOffset()).isEqualTo(3);
    List<StoredRecord> all = store.read(0, 10);
    assertThat(all).extracting(StoredRecord::offset).containsExactly(0L, 1L, 2L);
    assertThat(all.get(0).value()).isEqualTo(b("v0"));
    assertThat(all.get(1).value()).isNull();
    assertThat(all.get(2).key()).isEqualTo(b("k2"));
  }

  @Test
  void readsPageAndStopAtTheEnd() {
    // Goal: read(from, max) returns at most max records and nothing at the end offset.
    SchemaStore store = newStore();
    for (int i = 0; i < 5; i++) {
      store.append(b("k" + i), b("v" + i));
    }
    assertThat(store.read(1, 2)).extracting(StoredRecord::offset).containsExactly(1L, 2L);
    assertThat(store.read(5, 10)).isEmpty();
    assertThat(store.read(0, 100)).hasSize(5);
  }

  @Test
  void appendedBytesAreCopied() {
    // Goal: a caller reusing its buffer does not change the log.
    SchemaStore store = newStore();
    byte[] key = b("key");
    store.append(key, b("value"));
    key[0] = 'X';
    assertThat(new String(store.read(0, 1).get(0).key(), StandardCharsets.UTF_8)).isEqualTo("key");
  }
}
