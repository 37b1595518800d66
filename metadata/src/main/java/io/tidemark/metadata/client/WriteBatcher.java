package io.tidemark.metadata.client;

import io.tidemark.metadata.controller.ControllerReply;
import io.tidemark.metadata.controller.ErrorCode;
import io.tidemark.metadata.record.FieldReader;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Controller writes of one kind that go out together: one request of the kind is outstanding at a
 * time; a lone item goes out at once as its single request, and the items that arrive meanwhile wait
 * and go out, when it is answered, as one batched request (at most {@code maxBatch}, in their order,
 * of one group, each key once; the rest in the next). Every item keeps its own outcome. So a
 * restart's hundreds of stream closes, stream opens or partition updates cost a few log entries
 * instead of one each. Bounded: beyond {@code maxWaiting} waiting items a new one fails at once as
 * unavailable (retriable).
 *
 * @param <T> one item
 */
final class WriteBatcher<T> {

  /** How items are sent: one alone, or several as one request answering one outcome per item, in order. */
  interface Sender<T> {
    CompletableFuture<FieldReader> single(T item);

    CompletableFuture<List<ControllerReply>> batch(List<T> items);
  }

  private record Pending<T>(T item, CompletableFuture<FieldReader> result) {}

  private final String what;
  private final int maxBatch;
  private final int maxWaiting;
  /** Items of one batch share their group (e.g. the node that sends them). */
  private final Function<T, Object> group;
  /** An item's key appears at most once per batch (each is checked against the image before the request). */
  private final Function<T, Object> key;
  private final Sender<T> sender;
  /** Guards itself and {@code inFlight}. */
  private final ArrayDeque<Pending<T>> pending = new ArrayDeque<>();
  private boolean inFlight;

  WriteBatcher(String what, int maxBatch, int maxWaiting, Function<T, Object> group, Function<T, Object> key,
      Sender<T> sender) {
    this.what = what;
    this.maxBatch = maxBatch;
    this.maxWaiting = maxWaiting;
    this.group = group;
    this.key = key;
    this.sender = sender;
  }

  /** Queues one item; completes with the reply body of its own outcome, or fails with its own rejection. */
  CompletableFuture<FieldReader> submit(T item) {
    CompletableFuture<FieldReader> result = new CompletableFuture<>();
    synchronized (pending) {
      if (pending.size() >= maxWaiting) {
        return CompletableFuture.failedFuture(new ErrorCode.ControllerUnavailableException(
            "more than " + maxWaiting + " " + what + " wait to be sent; retry later"));
      }
      pending.add(new Pending<>(item, result));
      if (inFlight) {
        return result;
      }
      inFlight = true;
    }
    sendNext();
    return result;
  }

  /** Sends the next batch of waiting items, or ends the sending when none waits. */
  private void sendNext() {
    List<Pending<T>> batch = new ArrayList<>();
    synchronized (pending) {
      Set<Object> keys = new HashSet<>();
      Pending<T> head;
      while ((head = pending.peek()) != null && batch.size() < maxBatch
          && (batch.isEmpty() || Objects.equals(group.apply(head.item()), group.apply(batch.get(0).item())))
          && keys.add(key.apply(head.item()))) {
        batch.add(pending.poll());
      }
      if (batch.isEmpty()) {
        inFlight = false;
        return;
      }
    }
    CompletableFuture<?> sent;
    if (batch.size() == 1) {
      Pending<T> p = batch.get(0);
      sent = sender.single(p.item()).whenComplete((r, e) -> {
        if (e != null) {
          p.result().completeExceptionally(e);
        } else {
          p.result().complete(r);
        }
      });
    } else {
      sent = sender.batch(batch.stream().map(Pending::item).toList()).whenComplete((outcomes, e) -> {
        for (int i = 0; i < batch.size(); i++) {
          CompletableFuture<FieldReader> result = batch.get(i).result();
          if (e != null) {
            result.completeExceptionally(e);
            continue;
          }
          try {
            result.complete(outcomes.get(i).bodyOrThrow());
          } catch (RuntimeException rejected) {
            result.completeExceptionally(rejected);
          }
        }
      });
    }
    sent.whenComplete((r, e) -> sendNext());
  }
}
