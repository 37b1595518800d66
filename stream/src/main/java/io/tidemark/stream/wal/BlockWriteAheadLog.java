package io.tidemark.stream.wal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A write-ahead log on a preallocated file or a raw block device, written in aligned blocks with
 * {@code O_DIRECT} (or buffered I/O + {@code fdatasync} where the filesystem refuses it, see
 * {@link WalFile}), with group commit and circular reuse of space after {@link #trim}.
 *
 * <h2>Layout</h2>
 * Block 0 and block 1 are two header slots ({@link BlockWalHeader}); the rest, rounded down to a
 * whole number of blocks, is a circular data area. Positions in it are <em>logical</em>: they only
 * grow, and logical position {@code p} lives at {@code 2 * blockSize + p % dataCapacity}. A record's
 * WAL offset is its logical position, so offsets are monotonic but not dense. Records are framed by
 * {@link BlockRecordFrame} and may wrap around the end of the data area (the write or read is split
 * in two). Each group commit starts on a block boundary; its last record carries a batch-end flag and
 * points past the padding to the next block.
 *
 * <h2>Group commit</h2>
 * One writer thread owns the file. {@link #append} queues a reference to the record's bytes (no
 * copy: the caller must not change them before the future completes) in a bounded queue; the
 * writer lays out everything queued (up to its write buffer) as one aligned write, copying each
 * record once into the aligned buffer and taking its CRC there, and the syncer syncs once and
 * completes the futures in offset order (on the syncer thread: callbacks must be quick). An append
 * wakes the writer only when it was waiting for work or when the group it lingers for is full, so
 * a group of N appends costs one writer wake-up, one {@code pwrite} (two when it wraps around the
 * end of the file) and at most one {@code fdatasync}, not N. {@code append} never blocks its caller: when the queue already holds
 * {@code maxPendingBytes}, the record is refused at once with an already failed future
 * ({@link WalFullException}, nothing written), so that the caller (the stream engine's loop) keeps
 * it and appends it again after an earlier append completed. When fewer bytes are queued than the
 * previous group held, the writer first waits up to 1 ms for the appenders it just released (see
 * {@code linger}). When the data area has no room before the scan start, the head of the queue
 * waits for a trim for as long as it takes: an accepted record fails only when the log fails or
 * closes, never because space ran out (which would leave a hole between records written before
 * and after it). {@link #trimWanted()} tells the owner early that space is running low.
 *
 * <h2>Trim</h2>
 * {@code trim(x)} maps {@code x} to the last group commit starting at or below it (the new scan
 * start), writes a header with both values into the other slot and syncs it <em>before</em> the
 * freed space is reused; a crash between the two leaves the old header, which still describes
 * intact data. Recovery skips records below {@code x} in the first group commit.
 *
 * <h2>Recovery</h2>
 * {@link #recover()} reads both header slots and takes the valid one with the highest sequence;
 * a header of another writer id fails with a clear {@link WalException}, one of a higher epoch
 * with {@link WalFencedException}; when neither slot is valid and both are blank the file is
 * formatted, otherwise recovery refuses (it never reformats a file it cannot read). It then writes
 * a new header carrying this epoch (the session marker for records written from now on) and
 * returns an iterator that lazily walks the record chain ({@link BlockWalScanner}), returning exactly
 * the complete group commits and stopping cleanly at the first torn or foreign record. Writes
 * resume at the end of the last complete group commit.
 *
 * <h2>States and threads</h2>
 * {@code NEW → RECOVERING → STARTED → CLOSED}, plus {@code FAILED} after an I/O error while
 * writing (an {@code fsync} failure cannot be retried safely: every pending and later append fails;
 * reopen to recover). Lifecycle calls ({@code recover}, {@code start}, {@code close}) come from one
 * thread; {@code append} and {@code trim} from any thread. Two threads own the file: the writer
 * (layout, writes, trims and header writes; it owns the write position and the trim state) and the
 * syncer (data syncs and completion of futures), so one group is written while the previous one
 * syncs. A written group is acknowledged only after a sync that began after its write finished.
 * The queues between them are guarded by a lock held only to hand work over.
 */
public final class BlockWriteAheadLog implements WriteAheadLog {

  private static final Logger LOG = LoggerFactory.getLogger(BlockWriteAheadLog.class);
  private static final int MAX_WRITE_BUFFER_BYTES = 8 << 20;
  /** Longest the writer waits for a group to reach the previous group's size (see {@link #linger()}). */
  private static final long MAX_LINGER_NANOS = 1_000_000;

  private enum State { NEW, RECOVERING, STARTED, CLOSING, CLOSED, FAILED }

  /** A queued record: {@code head} then {@code body} (head empty for a one-part append). */
  private record PendingAppend(ByteBuffer head, ByteBuffer body, int frameBytes, CompletableFuture<Long> future) {}

  private static final ByteBuffer NO_HEAD = ByteBuffer.allocate(0);

  private record PendingTrim(long walOffset, CompletableFuture<Void> future) {}

  /** A group commit written to the file, waiting for the sync that makes it durable. */
  private record WrittenBatch(List<PendingAppend> appends, long[] offsets, long frameBytes) {}

  private final BlockWalOptions options;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition writerWake = lock.newCondition();
  private final Condition syncWake = lock.newCondition();
  private final ArrayDeque<WrittenBatch> written = new ArrayDeque<>();
  private final ArrayDeque<PendingAppend> appends = new ArrayDeque<>();
  private final ArrayDeque<PendingTrim> trims = new ArrayDeque<>();
  private long pendingBytes; // queued + written but not yet synced: the bound appenders wait on
  private long queuedBytes; // queued for the writer only
  /** An append wakes the writer only once this many bytes are queued: 1 while it waits for work, the group's target while it lingers. */
  private long writerWakeBytes = 1;
  private boolean writerDone;
  private volatile State state = State.NEW;
  private Throwable failure;

  // Set by recover(); owned by the writer thread after start().
  private WalFile file;
  private BlockWalHeader header;
  private int headerSlot;
  private long dataStart;
  private long dataCapacity;
  private int blockSize;
  private int writeBufferBytes;
  private long maxPayloadBytes;
  private BlockWalScanner scanner;
  private BlockWalScanner.BatchStarts batchStarts;
  private ByteBuffer writeBuffer;
  private ByteBuffer headerBuffer;
  private long writeOffset;
  private long scanStart;
  private long trimOffset;
  private long session;
  private long lastBatchBytes;
  private volatile long groupCommits;
  private volatile long syncs;
  private volatile long writtenBytes;
  /** Bytes of the data area between the scan start and the write position (written by the writer). */
  private volatile long spaceInUse;
  private Thread writer;
  private Thread syncer;

  public BlockWriteAheadLog(BlockWalOptions options) {
    this.options = options;
  }

  /** True when the file was opened with {@code O_DIRECT} (known after {@link #recover()}). */
  public boolean directIo() {
    return file != null && file.direct();
  }

  /** The I/O alignment in bytes (known after {@link #recover()}). */
  public int blockSize() {
    return blockSize;
  }

  /** Bytes of the circular data area (known after {@link #recover()}). */
  public long dataCapacityBytes() {
    return dataCapacity;
  }

  /** Group commits (one aligned write each) since start, for monitoring and benchmarks. */
  public long groupCommits() {
    return groupCommits;
  }

  /** Data syncs ({@code fdatasync}) since start; one covers every group commit written before it. */
  public long syncs() {
    return syncs;
  }

  /** Bytes written to the data area (frames and padding) since start. */
  public long writtenBytes() {
    return writtenBytes;
  }

  /** The largest payload {@link #append} accepts (known after {@link #recover()}). */
  public long maxRecordBytes() {
    return maxPayloadBytes;
  }

  @Override
  public Iterator<WalRecord> recover() {
    if (state != State.NEW) {
      throw new IllegalStateException("recover() called in state " + state);
    }
    try {
      openAndClaim();
    } catch (IOException e) {
      closeQuietly();
      throw new WalException("cannot open WAL " + options.path() + ": " + e, e);
    } catch (RuntimeException e) {
      closeQuietly();
      throw e;
    }
    state = State.RECOVERING;
    return new Iterator<>() {
      private Iterator<WalRecord> current = Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!current.hasNext()) {
          if (state != State.RECOVERING) {
            return false;
          }
          List<WalRecord> batch = scanner.nextBatch();
          if (batch == null) {
            return false;
          }
          current = batch.iterator();
        }
        return true;
      }

      @Override
      public WalRecord next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return current.next();
      }
    };
  }

  private void openAndClaim() throws IOException {
    file = WalFile.open(options.path(), options.capacityBytes(), options.blockSizeBytes(), options.directIo());
    blockSize = file.blockSize();
    ByteBuffer slots = file.allocate(2 * blockSize);
    file.read(0, slots);
    BlockWalHeader first = BlockWalHeader.decode(slots.slice(0, blockSize));
    BlockWalHeader second = BlockWalHeader.decode(slots.slice(blockSize, blockSize));
    if (first == null && second == null) {
      if (!BlockWalHeader.blank(slots.slice(0, blockSize)) || !BlockWalHeader.blank(slots.slice(blockSize, blockSize))) {
        throw new WalException("WAL " + options.path() + " has no valid header in either slot: it is not a Tidemark"
            + " WAL or both headers are damaged; nothing was changed. Move the file away to start with an empty WAL.");
      }
      header = format();
      headerSlot = 0;
    } else if (second == null || (first != null && first.sequence() > second.sequence())) {
      header = first;
      headerSlot = 0;
    } else {
      header = second;
      headerSlot = 1;
    }
    if (header.writerId() != options.writerId()) {
      throw new WalException("WAL " + options.path() + " belongs to writer (node) " + header.writerId()
          + ", not to this node " + options.writerId() + "; nothing was changed. Point wal.path at this node's own WAL.");
    }
    if (header.epoch() > options.epoch()) {
      throw new WalFencedException("WAL " + options.path() + " was already opened with epoch " + header.epoch()
          + ", newer than this writer's epoch " + options.epoch());
    }
    if (header.blockSize() != blockSize) {
      throw new WalException("WAL " + options.path() + " was formatted with block size " + header.blockSize()
          + " but is opened with " + blockSize + "; set wal.block.size.bytes=" + header.blockSize());
    }
    if (header.capacityBytes() != options.capacityBytes()) {
      LOG.warn("WAL {} keeps its formatted capacity {} (configured {}); reformat to change it",
          options.path(), header.capacityBytes(), options.capacityBytes());
    }
    dataStart = 2L * blockSize;
    dataCapacity = (header.capacityBytes() - dataStart) / blockSize * blockSize;
    long bufferBytes = Math.min(Math.min(MAX_WRITE_BUFFER_BYTES, roundUp(options.maxPendingBytes())), dataCapacity / 2);
    writeBufferBytes = (int) Math.max(2L * blockSize, bufferBytes / blockSize * blockSize);
    maxPayloadBytes = writeBufferBytes - BlockRecordFrame.HEADER_BYTES;
    headerBuffer = file.allocate(blockSize);
    // Claim the log: a header with this epoch, whose sequence also tags every record of this session.
    writeHeader(header.next(options.epoch(), header.scanStart(), header.trimOffset(), header.nextWriteHint()));
    session = header.sequence();
    batchStarts = new BlockWalScanner.BatchStarts(dataCapacity, blockSize);
    scanner = new BlockWalScanner(file, dataStart, dataCapacity, header, batchStarts);
  }

  private BlockWalHeader format() throws IOException {
    Instant now = options.clock().instant();
    long formatId = (now.getEpochSecond() * 1_000_000_000L + now.getNano()) * 31 + options.writerId();
    BlockWalHeader fresh = new BlockWalHeader(blockSize, options.capacityBytes(), formatId, options.writerId(),
        options.epoch(), 1, 0, 0, 0);
    ByteBuffer block = file.allocate(blockSize);
    fresh.encode(block);
    file.write(0, block);
    file.sync();
    LOG.info("formatted WAL {}: capacity {} bytes, block size {}, direct I/O {}", options.path(),
        options.capacityBytes(), blockSize, file.direct());
    return fresh;
  }

  /** Writes {@code next} into the slot not holding the current header and syncs; then it is current. */
  private void writeHeader(BlockWalHeader next) throws IOException {
    int slot = 1 - headerSlot;
    next.encode(headerBuffer);
    file.write((long) slot * blockSize, headerBuffer);
    file.sync();
    header = next;
    headerSlot = slot;
  }

  @Override
  public void start() {
    if (state == State.NEW) {
      recover();
    }
    if (state != State.RECOVERING) {
      throw new IllegalStateException("start() called in state " + state);
    }
    while (scanner.nextBatch() != null) {
      // drain what the caller did not read: the write position is the end of the last complete group commit
    }
    writeOffset = scanner.end();
    scanStart = header.scanStart();
    trimOffset = header.trimOffset();
    scanner = null;
    if (writeOffset < header.nextWriteHint()) {
      LOG.warn("WAL {} recovery stopped at {} before the last recorded write position {}: records in between were"
          + " damaged and are lost", options.path(), writeOffset, header.nextWriteHint());
    }
    if (writeOffset < trimOffset) {
      // The chain ends below the trim point (damage): restart the chain above it.
      long restart = roundUp(trimOffset);
      try {
        writeHeader(header.next(options.epoch(), restart, restart, restart));
      } catch (IOException e) {
        throw new WalException("cannot write WAL header of " + options.path() + ": " + e, e);
      }
      batchStarts.clear();
      writeOffset = restart;
      scanStart = restart;
      trimOffset = restart;
    }
    writeBuffer = file.allocate(writeBufferBytes);
    spaceInUse = writeOffset - scanStart;
    state = State.STARTED;
    writer = Thread.ofPlatform().name("tidemark-wal-writer").daemon(true).start(this::runWriter);
    syncer = Thread.ofPlatform().name("tidemark-wal-syncer").daemon(true).start(this::runSyncer);
  }

  @Override
  public CompletableFuture<Long> append(ByteBuffer record) {
    return append(NO_HEAD, record);
  }

  /** Both parts are copied once, straight into the aligned write buffer (never joined first). */
  @Override
  public CompletableFuture<Long> append(ByteBuffer head, ByteBuffer body) {
    State current = state;
    if (current != State.STARTED) {
      return CompletableFuture.failedFuture(notWritable(current));
    }
    long length = (long) head.remaining() + body.remaining();
    if (length > maxPayloadBytes) {
      return CompletableFuture.failedFuture(new WalException("record of " + length
          + " bytes exceeds the largest record this WAL accepts (" + maxPayloadBytes + " bytes)"));
    }
    // no copy: the bytes are copied once, into the aligned write buffer
    ByteBuffer first = head.slice();
    ByteBuffer payload = body.slice();
    int frameBytes = BlockRecordFrame.HEADER_BYTES + (int) length;
    CompletableFuture<Long> future = new CompletableFuture<>();
    lock.lock();
    try {
      if (state != State.STARTED) {
        return CompletableFuture.failedFuture(notWritable(state));
      }
      if (pendingBytes > 0 && pendingBytes + frameBytes > options.maxPendingBytes()) {
        return CompletableFuture.failedFuture(new WalFullException("WAL " + options.path() + " already holds "
            + pendingBytes + " bytes not yet durable (bound " + options.maxPendingBytes() + "); nothing was written,"
            + " append again once an earlier append completed"));
      }
      appends.add(new PendingAppend(first, payload, frameBytes, future));
      pendingBytes += frameBytes;
      queuedBytes += frameBytes;
      if (queuedBytes >= writerWakeBytes) {
        writerWake.signal();
      }
    } finally {
      lock.unlock();
    }
    return future;
  }

  /**
   * True while more than half of the data area holds records not yet trimmed: the owner should
   * upload and trim soon, or appends will wait for space. Read from any thread.
   */
  @Override
  public boolean trimWanted() {
    return spaceInUse * 2 > dataCapacity;
  }

  @Override
  public boolean healthy() {
    return state != State.FAILED;
  }

  @Override
  public CompletableFuture<Void> trim(long walOffset) {
    lock.lock();
    try {
      if (state != State.STARTED) {
        return CompletableFuture.failedFuture(notWritable(state));
      }
      CompletableFuture<Void> future = new CompletableFuture<>();
      trims.add(new PendingTrim(walOffset, future));
      writerWake.signal();
      return future;
    } finally {
      lock.unlock();
    }
  }

  private WalException notWritable(State current) {
    if (current == State.FAILED) {
      return new WalException("WAL " + options.path() + " failed after an I/O error (" + failure
          + "); reopen it to recover", failure);
    }
    return new WalException("WAL " + options.path() + " is not open for writes (state " + current + ")");
  }

  // ---------------------------------------------------------------- writer thread

  private void runWriter() {
    try {
      writeLoop();
    } finally {
      lock.lock();
      try {
        writerDone = true;
        syncWake.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  private void writeLoop() {
    while (true) {
      List<PendingTrim> trimBatch = new ArrayList<>();
      List<PendingAppend> batch = new ArrayList<>();
      lock.lock();
      try {
        if (!awaitWork()) {
          return;
        }
        linger();
        trimBatch.addAll(trims);
        trims.clear();
        if (trimBatch.isEmpty()) {
          takeFitting(batch);
        }
      } catch (InterruptedException e) {
        failAll(new WalException("WAL writer interrupted"));
        return;
      } finally {
        lock.unlock();
      }
      try {
        if (!trimBatch.isEmpty()) {
          applyTrims(trimBatch);
        } else {
          writeBatch(batch);
        }
      } catch (IOException | RuntimeException e) {
        WalException error = new WalException("WAL " + options.path() + " write failed: " + e, e);
        trimBatch.forEach(t -> t.future.completeExceptionally(error));
        batch.forEach(a -> a.future.completeExceptionally(error));
        lock.lock();
        try {
          failure = e;
          state = State.FAILED;
          failAll(error);
        } finally {
          lock.unlock();
        }
        LOG.error("WAL {} failed; every pending and later append fails until it is reopened", options.path(), e);
        return;
      }
    }
  }

  /** Waits (lock held) until there is a trim or an append that fits; false when the writer should exit. */
  private boolean awaitWork() throws InterruptedException {
    while (true) {
      if (!trims.isEmpty() || (!appends.isEmpty() && fits(appends.peekFirst()))) {
        return true;
      }
      if (state != State.STARTED) {
        failAll(new WalException("WAL " + options.path() + " closed before the record could be written"));
        return false;
      }
      writerWake.await(); // an append, a trim (which frees space) or close wakes it
    }
  }

  /**
   * Adaptive group commit (lock held): when fewer bytes are queued than the previous group had,
   * the appenders it released are most likely about to append again; waiting up to
   * {@link #MAX_LINGER_NANOS} for them turns two half-size groups (two syncs) into one. A lone
   * appender never waits: its previous group was its own single record.
   */
  private void linger() throws InterruptedException {
    long target = Math.min(lastBatchBytes, Math.min(writeBufferBytes, dataCapacity - (writeOffset - scanStart)));
    long remaining = MAX_LINGER_NANOS;
    writerWakeBytes = Math.max(1, target); // appenders below the target do not wake the writer (one wake per group)
    try {
      while (queuedBytes < target && remaining > 0 && trims.isEmpty() && state == State.STARTED) {
        remaining = writerWake.awaitNanos(remaining);
      }
    } finally {
      writerWakeBytes = 1;
    }
  }

  private boolean fits(PendingAppend append) {
    return writeOffset + roundUp(append.frameBytes) - scanStart <= dataCapacity;
  }

  private void failAll(WalException error) {
    appends.forEach(a -> a.future.completeExceptionally(error));
    pendingBytes -= queuedBytes;
    queuedBytes = 0;
    appends.clear();
    trims.forEach(t -> t.future.completeExceptionally(error));
    trims.clear();
  }

  /** Moves the longest prefix of the queue that fits in one write and in the free space into {@code batch}. */
  private void takeFitting(List<PendingAppend> batch) {
    long free = dataCapacity - (writeOffset - scanStart);
    long limit = Math.min(free, writeBufferBytes);
    long used = 0;
    while (!appends.isEmpty()) {
      long next = roundUp(used + appends.peekFirst().frameBytes);
      if (next > limit) {
        break;
      }
      used += appends.peekFirst().frameBytes;
      batch.add(appends.pollFirst());
    }
    queuedBytes -= used;
  }

  private void writeBatch(List<PendingAppend> batch) throws IOException {
    ByteBuffer buffer = writeBuffer.clear();
    long[] offsets = new long[batch.size()];
    long at = writeOffset;
    for (int i = 0; i < batch.size(); i++) {
      PendingAppend append = batch.get(i);
      boolean last = i == batch.size() - 1;
      long next = last ? roundUp(at + append.frameBytes) : at + append.frameBytes;
      BlockRecordFrame.encode(buffer, header.formatId(), at, next, session, append.head, append.body,
          last ? BlockRecordFrame.FLAG_BATCH_END : 0);
      offsets[i] = at;
      at = next;
    }
    int total = (int) (at - writeOffset);
    while (buffer.position() < total) {
      buffer.put((byte) 0);
    }
    buffer.flip();
    long physical = dataStart + writeOffset % dataCapacity;
    long toEnd = dataStart + dataCapacity - physical;
    if (total <= toEnd) {
      file.write(physical, buffer);
    } else {
      file.write(physical, buffer.slice(0, (int) toEnd));
      file.write(dataStart, buffer.slice((int) toEnd, total - (int) toEnd));
    }
    batchStarts.add(writeOffset);
    writeOffset = at;
    spaceInUse = writeOffset - scanStart;
    groupCommits++;
    writtenBytes += total;
    long frameBytes = batch.stream().mapToLong(PendingAppend::frameBytes).sum();
    lock.lock();
    try {
      if (state == State.FAILED) {
        WalException error = notWritable(State.FAILED);
        batch.forEach(a -> a.future.completeExceptionally(error));
        pendingBytes -= frameBytes;
      } else {
        written.add(new WrittenBatch(List.copyOf(batch), offsets, frameBytes));
        syncWake.signal();
      }
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- syncer thread

  /**
   * Makes written group commits durable: takes every batch written so far, syncs once, completes
   * their futures in offset order. Runs beside the writer, so the next group is laid out and
   * written while the previous one syncs; a sync covers every write that finished before it began.
   */
  private void runSyncer() {
    while (true) {
      List<WrittenBatch> toSync;
      lock.lock();
      try {
        while (written.isEmpty() && !writerDone) {
          syncWake.await();
        }
        if (written.isEmpty()) {
          return;
        }
        toSync = new ArrayList<>(written);
        written.clear();
      } catch (InterruptedException e) {
        return;
      } finally {
        lock.unlock();
      }
      long released = toSync.stream().mapToLong(WrittenBatch::frameBytes).sum();
      try {
        file.sync();
      } catch (IOException | RuntimeException e) {
        WalException error = new WalException("WAL " + options.path() + " sync failed: " + e, e);
        lock.lock();
        try {
          failure = e;
          state = State.FAILED;
          for (WrittenBatch b : written) {
            toSync.add(b);
            released += b.frameBytes;
          }
          written.clear();
          pendingBytes -= released;
          failAll(error);
          writerWake.signalAll();
        } finally {
          lock.unlock();
        }
        toSync.forEach(b -> b.appends.forEach(a -> a.future.completeExceptionally(error)));
        LOG.error("WAL {} failed; every pending and later append fails until it is reopened", options.path(), e);
        return;
      }
      syncs++;
      for (WrittenBatch b : toSync) {
        for (int i = 0; i < b.appends.size(); i++) {
          b.appends.get(i).future.complete(b.offsets[i]);
        }
      }
      lock.lock();
      try {
        pendingBytes -= released;
        lastBatchBytes = released;
        writerWake.signal();
      } finally {
        lock.unlock();
      }
    }
  }

  private void applyTrims(List<PendingTrim> requests) throws IOException {
    long requested = requests.stream().mapToLong(PendingTrim::walOffset).max().orElse(trimOffset);
    long target = Math.min(requested, writeOffset);
    if (target > trimOffset) {
      long newScanStart = batchStarts.trimTo(target, writeOffset);
      writeHeader(header.next(options.epoch(), newScanStart, target, writeOffset));
      // Only now, with the header durable, may the space below the new scan start be overwritten.
      scanStart = newScanStart;
      trimOffset = target;
      spaceInUse = writeOffset - scanStart;
    }
    requests.forEach(t -> t.future.complete(null));
  }

  private long roundUp(long value) {
    return (value + blockSize - 1) / blockSize * blockSize;
  }

  // ---------------------------------------------------------------- close

  @Override
  public void close() {
    lock.lock();
    try {
      if (state == State.CLOSED) {
        return;
      }
      if (state == State.STARTED) {
        state = State.CLOSING;
      }
      writerWake.signalAll();
    } finally {
      lock.unlock();
    }
    for (Thread thread : new Thread[] {writer, syncer}) {
      if (thread != null) {
        try {
          thread.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    closeQuietly();
    state = State.CLOSED;
  }

  private void closeQuietly() {
    if (file != null) {
      try {
        file.close();
      } catch (IOException e) {
        LOG.warn("closing WAL {} failed", options.path(), e);
      }
    }
  }
}
