package io.tidemark.stream.wal;

import java.nio.ByteBuffer;

/** One record read back by recovery: its WAL offset and its bytes exactly as appended. */
public record WalRecord(long walOffset, ByteBuffer payload) {}
