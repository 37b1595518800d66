package io.tidemark.stream.engine;

import io.tidemark.stream.wal.WalException;
import io.tidemark.stream.wal.WalRecord;
import io.tidemark.stream.wal.WriteAheadLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32C;

/**
 * A deliberately simple, durable file WAL for the crash test until the block WAL is merged:
 * records appended to {@code wal.log} as {@code length i32, crc32c i32, walOffset i64, payload}
 * with group commit (one writer thread writes everything queued, one fsync, then completes the
 * futures in order); the trim point is a separate file replaced atomically. Recovery returns the
 * intact prefix at or above the trim point and cuts a torn tail. Never reclaims space.
 */
final class SimpleFileWriteAheadLog implements WriteAheadLog {

  private record Pending(ByteBuffer record, CompletableFuture<Long> future) {}

  private final Path dir;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private FileChannel channel;
  private long nextOffset;
  private long trimOffset;
  private Thread writer;
  private volatile boolean closed;

  SimpleFileWriteAheadLog(Path dir) throws IOException {
    this.dir = Files.createDirectories(dir);
  }

  @Override
  public synchronized Iterator<WalRecord> recover() {
    try {
      Path trimFile = dir.resolve("trim");
      trimOffset = Files.exists(trimFile) ? Long.parseLong(Files.readString(trimFile).trim()) : 0;
      channel = FileChannel.open(dir.resolve("wal.log"), StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
      List<WalRecord> records = new ArrayList<>();
      long size = channel.size();
      long position = 0;
      nextOffset = trimOffset;
      ByteBuffer header = ByteBuffer.allocate(16);
      while (position + 16 <= size) {
        header.clear();
        channel.read(header, position);
        int length = header.getInt(0);
        int crc = header.getInt(4);
        long offset = header.getLong(8);
        if (length < 0 || position + 16 + length > size) {
          break;
        }
        ByteBuffer payload = ByteBuffer.allocate(length);
        while (payload.hasRemaining()) {
          channel.read(payload, position + 16 + payload.position());
        }
        payload.flip();
        CRC32C check = new CRC32C();
        check.update(header.duplicate().position(8).limit(16));
        check.update(payload.duplicate());
        if ((int) check.getValue() != crc) {
          break;
        }
        if (offset >= trimOffset) {
          records.add(new WalRecord(offset, payload));
        }
        nextOffset = Math.max(nextOffset, offset + 1);
        position += 16 + length;
      }
      channel.truncate(position);
      channel.force(true);
      channel.position(position);
      return records.iterator();
    } catch (IOException e) {
      throw new WalException("recovering " + dir + " failed", e);
    }
  }

  @Override
  public synchronized void start() {
    writer = new Thread(this::writeLoop, "simple-file-wal");
    writer.setDaemon(true);
    writer.start();
  }

  @Override
  public synchronized CompletableFuture<Long> append(ByteBuffer record) {
    if (closed || writer == null) {
      return CompletableFuture.failedFuture(new WalException("WAL not started or closed"));
    }
    CompletableFuture<Long> future = new CompletableFuture<>();
    queue.addLast(new Pending(record.duplicate(), future));
    notifyAll();
    return future;
  }

  private void writeLoop() {
    while (true) {
      List<Pending> batch = new ArrayList<>();
      long first;
      synchronized (this) {
        while (queue.isEmpty() && !closed) {
          try {
            wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (queue.isEmpty()) {
          return;
        }
        first = nextOffset;
        batch.addAll(queue);
        queue.clear();
        nextOffset += batch.size();
      }
      try {
        long offset = first;
        for (Pending p : batch) {
          ByteBuffer frame = ByteBuffer.allocate(16 + p.record().remaining());
          frame.putInt(p.record().remaining()).putInt(0).putLong(offset).put(p.record().duplicate()).flip();
          CRC32C crc = new CRC32C();
          crc.update(frame.duplicate().position(8));
          frame.putInt(4, (int) crc.getValue());
          while (frame.hasRemaining()) {
            channel.write(frame);
          }
          offset++;
        }
        channel.force(false);
        offset = first;
        for (Pending p : batch) {
          p.future().complete(offset++);
        }
      } catch (IOException e) {
        batch.forEach(p -> p.future().completeExceptionally(new WalException("WAL write failed", e)));
      }
    }
  }

  @Override
  public synchronized CompletableFuture<Void> trim(long walOffset) {
    if (walOffset <= trimOffset) {
      return CompletableFuture.completedFuture(null);
    }
    try {
      Path tmp = dir.resolve("trim.tmp");
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        ch.write(ByteBuffer.wrap(Long.toString(walOffset).getBytes()));
        ch.force(true);
      }
      Files.move(tmp, dir.resolve("trim"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      trimOffset = walOffset;
      return CompletableFuture.completedFuture(null);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(new WalException("trim failed", e));
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      notifyAll();
    }
    try {
      if (writer != null) {
        writer.join(10_000);
      }
      if (channel != null) {
        channel.close();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      throw new WalException("close failed", e);
    }
  }
}
