package io.tidemark.server.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.ObjectNotFoundException;
import io.tidemark.stream.wal.MemoryWriteAheadLog;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

class MeteredStorageTest {

  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  @Test
  void walMetersCountDurableBytesAndTrackOpenState() {
    // Goal: appended bytes and append latency are counted only for durable appends; open follows start/close.
    MeteredWriteAheadLog wal = new MeteredWriteAheadLog(new MemoryWriteAheadLog(), meters);
    assertThat(wal.open()).isFalse();
    assertThatThrownBy(() -> wal.append(ByteBuffer.wrap(new byte[3])).join()).hasMessageContaining("before start");
    wal.recover();
    wal.start();
    assertThat(wal.open()).isTrue();
    wal.append(ByteBuffer.wrap(new byte[100])).join();
    wal.append(ByteBuffer.wrap(new byte[28])).join();
    assertThat(meters.get("tidemark.wal.appended.bytes").counter().count()).isEqualTo(128);
    assertThat(meters.get("tidemark.wal.append").timer().count()).isEqualTo(2);
    assertThat(meters.get("tidemark.wal.append.failures").counter().count()).isEqualTo(1);
    wal.close();
    assertThat(wal.open()).isFalse();
  }

  @Test
  void objectStorageMetersTagOperationAndOutcome() {
    // Goal: each request is timed under its operation and outcome, and bytes are counted by direction.
    MeteredObjectStorage storage = new MeteredObjectStorage(new MemoryObjectStorage(), meters);
    storage.put("a", ByteBuffer.wrap(new byte[10])).join();
    assertThat(storage.get("a", 2, 6).join().remaining()).isEqualTo(4);
    assertThatThrownBy(() -> storage.get("missing").join()).hasCauseInstanceOf(ObjectNotFoundException.class);
    var upload = storage.startMultipartUpload("b").join();
    upload.uploadPart(1, ByteBuffer.wrap(new byte[7])).join();
    upload.complete().join();
    storage.delete(List.of("a", "b")).join();
    assertThat(meters.get("tidemark.objectstore.requests").tags("operation", "put", "outcome", "success").timer().count()).isEqualTo(1);
    assertThat(meters.get("tidemark.objectstore.requests").tags("operation", "get", "outcome", "success").timer().count()).isEqualTo(1);
    assertThat(meters.get("tidemark.objectstore.requests").tags("operation", "get", "outcome", "error").timer().count()).isEqualTo(1);
    assertThat(meters.get("tidemark.objectstore.requests").tags("operation", "multipart.part", "outcome", "success").timer().count()).isEqualTo(1);
    assertThat(meters.get("tidemark.objectstore.bytes").tags("direction", "written").counter().count()).isEqualTo(17);
    assertThat(meters.get("tidemark.objectstore.bytes").tags("direction", "read").counter().count()).isEqualTo(4);
  }

  @Test
  void theTableTopicsStorageIsMeteredApartFromTheLog() {
    // Goal: the table path's requests and bytes are counted under their own names, the log's stay untouched.
    MeteredObjectStorage log = new MeteredObjectStorage(new MemoryObjectStorage(), meters);
    var tables = MeteredObjectStorage.forTables(new MemoryObjectStorage(), meters);
    tables.put("iceberg/t/data/f", ByteBuffer.wrap(new byte[12])).join();
    tables.list("iceberg/").join();
    assertThat(tables.get("iceberg/t/data/f", 0, 5).join().remaining()).isEqualTo(5);
    log.put("s/1", ByteBuffer.wrap(new byte[3])).join();
    assertThat(meters.get("tidemark.table.objectstore.requests").tags("operation", "put", "outcome", "success").timer().count()).isEqualTo(1);
    assertThat(meters.get("tidemark.table.objectstore.requests").tags("operation", "list", "outcome", "success").timer().count()).isEqualTo(1);
    assertThat(meters.get("tidemark.table.objectstore.bytes").tags("direction", "written").counter().count()).isEqualTo(12);
    assertThat(meters.get("tidemark.table.objectstore.bytes").tags("direction", "read").counter().count()).isEqualTo(5);
    assertThat(meters.get("tidemark.objectstore.requests").tags("operation", "put", "outcome", "success").timer().count()).isEqualTo(1);
    assertThat(meters.get("tidemark.objectstore.bytes").tags("direction", "written").counter().count()).isEqualTo(3);
  }
}
