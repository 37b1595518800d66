package io.tidemark.server.admin;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The ids of the streams created through the stream admin API, kept in {@code streams} (one
 * decimal id per line, appended and synced before the create is answered) so that
 * {@code GET /v1/streams} can list them after a restart. The stream metadata itself lives in the
 * metadata authority; this file only remembers which ids to ask about. A torn last line (crash
 * during an append) is ignored: its stream is empty, since it was never acknowledged to the client.
 *
 * <p>Thread-safe: every method synchronizes on the directory (writes are rare and tiny).
 */
final class StreamDirectory implements AutoCloseable {

  private final Path file;
  private final FileChannel channel;
  private final Set<Long> ids = new LinkedHashSet<>();

  StreamDirectory(Path dir) {
    try {
      Files.createDirectories(dir);
      this.file = dir.resolve("streams");
      if (Files.exists(file)) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          String trimmed = line.trim();
          if (trimmed.matches("\\d{1,19}")) {
            ids.add(Long.parseLong(trimmed));
          }
        }
      }
      this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
      if (channel.size() > 0 && !endsWithNewline()) {
        channel.write(ByteBuffer.wrap(new byte[] {'\n'}));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the stream directory in " + dir, e);
    }
  }

  /** Records {@code id} durably. */
  synchronized void add(long id) {
    if (!ids.add(id)) {
      return;
    }
    try {
      ByteBuffer line = ByteBuffer.wrap((id + "\n").getBytes(StandardCharsets.US_ASCII));
      while (line.hasRemaining()) {
        channel.write(line);
      }
      channel.force(false);
    } catch (IOException e) {
      ids.remove(id);
      throw new UncheckedIOException("cannot record stream " + id + " in " + file, e);
    }
  }

  synchronized List<Long> ids() {
    return new ArrayList<>(ids);
  }

  private boolean endsWithNewline() throws IOException {
    ByteBuffer last = ByteBuffer.allocate(1);
    try (FileChannel reader = FileChannel.open(file, StandardOpenOption.READ)) {
      reader.read(last, reader.size() - 1);
    }
    return last.get(0) == '\n';
  }

  @Override
  public synchronized void close() {
    try {
      channel.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
