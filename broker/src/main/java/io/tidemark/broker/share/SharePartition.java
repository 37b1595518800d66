package io.tidemark.broker.share;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.protocol.Errors;

/**
 * The delivery state of one share partition (KIP-932): which records of one topic partition a
 * share group has delivered, to whom, how often, and which are done.
 *
 * <p>The share-partition start offset (SPSO) is the first offset not yet done; every offset in
 * {@code [SPSO, SPEO)} (the share-partition end offset: one past the highest offset ever acquired)
 * has an entry here, so the window is bounded by the record-lock limit. Each record moves through
 * <pre>
 *   AVAILABLE --acquire (deliveryCount+1)--> ACQUIRED --accept--> ACKNOWLEDGED
 *                  ^                            |  --reject--> ARCHIVED
 *                  +-- release / lock expiry ---+  (ARCHIVED instead once deliveryCount reaches the limit)
 * </pre>
 * ACKNOWLEDGED and ARCHIVED are final; the SPSO moves past a prefix of final records and their
 * entries are dropped. Offsets below SPSO are done; offsets at or above SPEO were never delivered.
 *
 * <p>Pure state, no I/O: {@link SharePartitionManager} owns every instance on its thread, hands
 * in the time and the batch bounds it read, and persists {@link #snapshot()} after each change.
 */
final class SharePartition {

  /** A record's delivery state; the ids are Kafka's (persisted). */
  enum RecordState {
    AVAILABLE(0), ACQUIRED(1), ACKNOWLEDGED(2), ARCHIVED(4);

    final byte id;

    RecordState(int id) {
      this.id = (byte) id;
    }

    static RecordState of(byte id) {
      for (RecordState s : values()) {
        if (s.id == id) {
          return s;
        }
      }
      throw new IllegalArgumentException("unknown record state " + id);
    }

    boolean done() {
      return this == ACKNOWLEDGED || this == ARCHIVED;
    }
  }

  private static final class InFlight {
    RecordState state = RecordState.AVAILABLE;
    int deliveryCount;
    String memberId;
    long lockDeadlineMs;
  }

  /** A run of offsets acquired together with the same delivery count. */
  record Acquired(long firstOffset, long lastOffset, int deliveryCount) {}

  /** A run of offsets in one persisted state ({@code ACQUIRED} is persisted as AVAILABLE: locks do not survive). */
  record StateRun(long firstOffset, long lastOffset, RecordState state, int deliveryCount) {}

  /** What is persisted: the SPSO and the state of every offset of the window. */
  record Snapshot(long startOffset, List<StateRun> runs) {}

  /** The limits of the group in force at an operation. */
  record Limits(long lockDurationMs, int deliveryCountLimit, int maxRecordLocks) {}

  private final TreeMap<Long, InFlight> window = new TreeMap<>();
  private long startOffset;
  private long endOffset;

  private SharePartition(long startOffset) {
    this.startOffset = startOffset;
    this.endOffset = startOffset;
  }

  /** A share partition starting at {@code startOffset} (the reset offset) with nothing delivered. */
  static SharePartition starting(long startOffset) {
    return new SharePartition(startOffset);
  }

  /** The share partition as persisted: acquired records come back AVAILABLE with their delivery counts. */
  static SharePartition restore(Snapshot s) {
    SharePartition p = new SharePartition(s.startOffset());
    for (StateRun r : s.runs()) {
      for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
        if (o < p.startOffset) {
          continue;
        }
        InFlight f = new InFlight();
        f.state = r.state() == RecordState.ACQUIRED ? RecordState.AVAILABLE : r.state();
        f.deliveryCount = r.deliveryCount();
        p.window.put(o, f);
        p.endOffset = Math.max(p.endOffset, o + 1);
      }
    }
    p.advanceStart();
    return p;
  }

  long startOffset() {
    return startOffset;
  }

  long endOffset() {
    return endOffset;
  }

  /** Records of the window already done (acknowledged or archived) above the SPSO, for the lag. */
  long doneInWindow() {
    return window.values().stream().filter(f -> f.state.done()).count();
  }

  /** Moves the SPSO up to the log start offset when retention removed records below it. */
  boolean skipTo(long logStartOffset) {
    if (logStartOffset <= startOffset) {
      return false;
    }
    window.headMap(logStartOffset).clear();
    startOffset = logStartOffset;
    endOffset = Math.max(endOffset, logStartOffset);
    advanceStart();
    return true;
  }

  /** Where the next read should start: the lowest record that can be acquired again, else the SPEO. */
  long nextFetchOffset() {
    for (Map.Entry<Long, InFlight> e : window.entrySet()) {
      if (e.getValue().state == RecordState.AVAILABLE) {
        return e.getKey();
      }
    }
    return endOffset;
  }

  /**
   * Acquires for {@code memberId} up to {@code maxRecords} records among the batches read (each
   * {@code [base, last]}), in offset order: AVAILABLE records of the window, then new records at
   * the SPEO while the window is below the record-lock limit. Returns the acquired runs.
   */
  List<Acquired> acquire(String memberId, List<long[]> batchBounds, int maxRecords, long nowMs, Limits limits) {
    List<Acquired> out = new ArrayList<>();
    int taken = 0;
    outer:
    for (long[] b : batchBounds) {
      for (long o = Math.max(b[0], startOffset); o <= b[1]; o++) {
        if (taken >= maxRecords) {
          break outer;
        }
        InFlight f;
        if (o < endOffset) {
          f = window.get(o);
          if (f == null || f.state != RecordState.AVAILABLE) {
            continue;
          }
        } else {
          if (window.size() >= limits.maxRecordLocks()) {
            break outer;
          }
          for (long gap = endOffset; gap < o; gap++) { // offsets without a record: nothing to deliver
            InFlight g = new InFlight();
            g.state = RecordState.ARCHIVED;
            window.put(gap, g);
          }
          f = new InFlight();
          window.put(o, f);
          endOffset = o + 1;
        }
        f.state = RecordState.ACQUIRED;
        f.deliveryCount++;
        f.memberId = memberId;
        f.lockDeadlineMs = nowMs + limits.lockDurationMs();
        taken++;
        Acquired last = out.isEmpty() ? null : out.get(out.size() - 1);
        if (last != null && last.lastOffset() == o - 1 && last.deliveryCount() == f.deliveryCount) {
          out.set(out.size() - 1, new Acquired(last.firstOffset(), o, f.deliveryCount));
        } else {
          out.add(new Acquired(o, o, f.deliveryCount));
        }
      }
    }
    advanceStart();
    return out;
  }

  /** One acknowledgement batch: one type for the whole range or one per offset (0 gap, 1 accept, 2 release, 3 reject, 4 renew). */
  record Ack(long first, long last, List<Byte> types) {}

  /**
   * Applies a member's acknowledgement batches to this share partition, all or none: every offset
   * must be ACQUIRED by {@code memberId} (INVALID_RECORD_STATE otherwise) and every batch well formed
   * (INVALID_REQUEST otherwise); a refused request changes nothing. Returns NONE or the error.
   */
  Errors acknowledge(String memberId, List<Ack> acks, long nowMs, Limits limits) {
    for (Ack a : acks) {
      Errors e = check(memberId, a);
      if (e != Errors.NONE) {
        return e;
      }
    }
    for (Ack a : acks) {
      for (long o = a.first(); o <= a.last(); o++) {
        InFlight f = window.get(o);
        byte type = a.types().size() == 1 ? a.types().get(0) : a.types().get((int) (o - a.first()));
        switch (type) {
          case 0, 3 -> finish(f, RecordState.ARCHIVED);
          case 1 -> finish(f, RecordState.ACKNOWLEDGED);
          case 2 -> release(f, limits);
          case 4 -> f.lockDeadlineMs = nowMs + limits.lockDurationMs();
          default -> throw new IllegalStateException("checked before: " + type);
        }
      }
    }
    advanceStart();
    return Errors.NONE;
  }

  private Errors check(String memberId, Ack a) {
    if (a.last() < a.first() || a.last() - a.first() >= limitOfBatch() || a.types().isEmpty()
        || (a.types().size() != 1 && a.types().size() != a.last() - a.first() + 1)) {
      return Errors.INVALID_REQUEST;
    }
    for (byte t : a.types()) {
      if (t < 0 || t > 4) {
        return Errors.INVALID_REQUEST;
      }
    }
    for (long o = a.first(); o <= a.last(); o++) {
      InFlight f = window.get(o);
      if (f == null || f.state != RecordState.ACQUIRED || !memberId.equals(f.memberId)) {
        return Errors.INVALID_RECORD_STATE;
      }
    }
    return Errors.NONE;
  }

  /** No batch can name more offsets than the window holds; larger ones are refused before any lookup. */
  private long limitOfBatch() {
    return Math.max(1, endOffset - startOffset);
  }

  /** Releases every lock that expired by {@code nowMs}; whether anything changed. */
  boolean expireLocks(long nowMs, Limits limits) {
    boolean changed = false;
    for (InFlight f : window.values()) {
      if (f.state == RecordState.ACQUIRED && f.lockDeadlineMs <= nowMs) {
        release(f, limits);
        changed = true;
      }
    }
    if (changed) {
      advanceStart();
    }
    return changed;
  }

  /** The earliest lock deadline, or {@code Long.MAX_VALUE} when nothing is acquired. */
  long nextLockDeadlineMs() {
    long min = Long.MAX_VALUE;
    for (InFlight f : window.values()) {
      if (f.state == RecordState.ACQUIRED) {
        min = Math.min(min, f.lockDeadlineMs);
      }
    }
    return min;
  }

  /** Releases every record {@code memberId} holds (it left the group or closed its session); whether anything changed. */
  boolean releaseMember(String memberId, Limits limits) {
    boolean changed = false;
    for (InFlight f : window.values()) {
      if (f.state == RecordState.ACQUIRED && memberId.equals(f.memberId)) {
        release(f, limits);
        changed = true;
      }
    }
    if (changed) {
      advanceStart();
    }
    return changed;
  }

  private static void release(InFlight f, Limits limits) {
    if (f.deliveryCount >= limits.deliveryCountLimit()) {
      finish(f, RecordState.ARCHIVED);
    } else {
      f.state = RecordState.AVAILABLE;
      f.memberId = null;
    }
  }

  private static void finish(InFlight f, RecordState state) {
    f.state = state;
    f.memberId = null;
  }

  private void advanceStart() {
    Iterator<Map.Entry<Long, InFlight>> it = window.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Long, InFlight> e = it.next();
      if (e.getKey() != startOffset || !e.getValue().state.done()) {
        break;
      }
      it.remove();
      startOffset++;
    }
    if (window.isEmpty()) {
      startOffset = Math.max(startOffset, endOffset);
      endOffset = startOffset;
    }
  }

  /** The persisted form: SPSO plus runs of equal state and delivery count. */
  Snapshot snapshot() {
    List<StateRun> runs = new ArrayList<>();
    for (Map.Entry<Long, InFlight> e : window.entrySet()) {
      RecordState s = e.getValue().state == RecordState.ACQUIRED ? RecordState.AVAILABLE : e.getValue().state;
      int count = e.getValue().deliveryCount;
      StateRun last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
      if (last != null && last.lastOffset() == e.getKey() - 1 && last.state() == s && last.deliveryCount() == count) {
        runs.set(runs.size() - 1, new StateRun(last.firstOffset(), e.getKey(), s, count));
      } else {
        runs.add(new StateRun(e.getKey(), e.getKey(), s, count));
      }
    }
    return new Snapshot(startOffset, runs);
  }
}
