package io.tidemark.stream.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.object.CorruptObjectException;
import io.tidemark.stream.object.IndexEntry;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class CoalescedGetsTest {

  private static IndexEntry block(long position, int size) {
    return new IndexEntry(1, position, position + 1, 1, position, size);
  }

  @Test
  void adjacentBlocksShareOneGetAndGapsOrTheSizeCapSplitIt() {
    // Goal: adjacent blocks cost one GET, a gap or the byte cap starts a new one, and each block gets exactly its bytes.
    MemoryObjectStorage store = new MemoryObjectStorage();
    byte[] object = new byte[1000];
    for (int i = 0; i < object.length; i++) {
      object[i] = (byte) i;
    }
    store.put("o", ByteBuffer.wrap(object)).join();
    GatedStorage counting = new GatedStorage(store);
    CoalescedGets gets = new CoalescedGets(counting, "o", 300);
    CompletableFuture<ByteBuffer> a = gets.add(block(0, 100));
    CompletableFuture<ByteBuffer> b = gets.add(block(100, 100));
    CompletableFuture<ByteBuffer> c = gets.add(block(200, 100)); // still within 300 bytes
    CompletableFuture<ByteBuffer> d = gets.add(block(300, 100)); // would pass the cap: new GET
    CompletableFuture<ByteBuffer> e = gets.add(block(600, 50)); // gap: new GET
    assertThat(e).isNotDone(); // the last run is issued only by flush()
    gets.flush();
    assertThat(counting.gets()).isEqualTo(3);
    assertThat(c.join()).isEqualTo(ByteBuffer.wrap(object, 200, 100));
    assertThat(a.join()).isEqualTo(ByteBuffer.wrap(object, 0, 100));
    assertThat(b.join()).isEqualTo(ByteBuffer.wrap(object, 100, 100));
    assertThat(d.join()).isEqualTo(ByteBuffer.wrap(object, 300, 100));
    assertThat(e.join()).isEqualTo(ByteBuffer.wrap(object, 600, 50));
  }

  @Test
  void shortResponseFailsEveryBlockOfTheGetNamingTheObject() {
    // Goal: an object shorter than its index says fails the blocks of that GET as corrupt, naming the key.
    MemoryObjectStorage store = new MemoryObjectStorage();
    store.put("short", ByteBuffer.wrap(new byte[150])).join();
    CoalescedGets gets = new CoalescedGets(store, "short", 1000);
    CompletableFuture<ByteBuffer> a = gets.add(block(0, 100));
    CompletableFuture<ByteBuffer> b = gets.add(block(100, 100));
    gets.flush();
    assertThatThrownBy(a::join).hasCauseInstanceOf(CorruptObjectException.class).hasMessageContaining("short");
    assertThatThrownBy(b::join).hasCauseInstanceOf(CorruptObjectException.class);
  }
}
