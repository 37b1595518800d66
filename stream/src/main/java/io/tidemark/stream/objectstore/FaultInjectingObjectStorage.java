package io.tidemark.stream.objectstore;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Wraps any {@link ObjectStorage} and injects faults into its calls by rules, for deterministic
 * fault-injection tests and simulations: fail, delay, throttle, and the two "unknown outcome"
 * cases (the call took effect but the answer was lost; the call was lost). With no rules it is a
 * transparent pass-through.
 *
 * <p>Each call is matched against the rules in order. A matching rule fires with its probability
 * (drawn from the seeded {@link Random} given at construction; print the seed in tests) and at
 * most {@link Rule#maxInjections()} times. Every firing {@link Fault#DELAY} rule adds its delay
 * (waited on the injected scheduler, never on the caller's thread); the first firing rule of any
 * other kind decides the outcome. Rules are replaced atomically at runtime by {@link #setRules},
 * so a test can turn faults on and off while calls are running. Counters of injected faults are
 * kept per fault kind and per operation.
 *
 * <p>Thread-safe: the rule list is an immutable snapshot, counters are atomic, draws from the
 * random source are serialised (so a single-threaded run is reproducible from its seed).
 */
public final class FaultInjectingObjectStorage implements ObjectStorage {

  /** The calls a rule can target. */
  public enum Operation { PUT, GET, DELETE, LIST, START_MULTIPART, UPLOAD_PART, COMPLETE_MULTIPART, ABORT_MULTIPART }

  /** What a firing rule does. */
  public enum Fault {
    /** Fails with {@link ObjectStorageException}; the store is not called. */
    FAIL,
    /** Waits {@link Rule#delayMs()} before calling the store. */
    DELAY,
    /** Fails with {@link ThrottledException} (like S3's 503 SlowDown); the store is not called. */
    THROTTLE,
    /** Calls the store, then reports {@link UnknownOutcomeException} whatever happened. */
    UNKNOWN_AFTER_APPLY,
    /** Does not call the store and reports {@link UnknownOutcomeException}. */
    UNKNOWN_DROPPED
  }

  /**
   * One fault rule.
   *
   * @param operation the call it targets, or null for every call
   * @param keyPrefix only keys (or list prefixes) starting with it; empty for all
   * @param probability chance in [0, 1] that a matching call fires the rule
   * @param fault what happens when it fires
   * @param delayMs the delay of a {@link Fault#DELAY} rule
   * @param maxInjections how many times the rule may fire in all
   */
  public record Rule(Operation operation, String keyPrefix, double probability, Fault fault, long delayMs,
      long maxInjections) {

    public Rule {
      Objects.requireNonNull(keyPrefix, "keyPrefix");
      Objects.requireNonNull(fault, "fault");
      if (probability < 0 || probability > 1 || delayMs < 0 || maxInjections < 0) {
        throw new IllegalArgumentException("rule needs probability in [0, 1], delayMs >= 0, maxInjections >= 0");
      }
    }

    /** A rule on {@code operation} (null: every call) firing with {@code probability}, unlimited. */
    public static Rule of(Operation operation, Fault fault, double probability) {
      return new Rule(operation, "", probability, fault, 0, Long.MAX_VALUE);
    }

    public static Rule delay(Operation operation, long delayMs, double probability) {
      return new Rule(operation, "", probability, Fault.DELAY, delayMs, Long.MAX_VALUE);
    }

    /** The same rule, firing at most {@code times} times. */
    public Rule times(long times) {
      return new Rule(operation, keyPrefix, probability, fault, delayMs, times);
    }

    /** The same rule, only for keys starting with {@code prefix}. */
    public Rule forKeysStartingWith(String prefix) {
      return new Rule(operation, prefix, probability, fault, delayMs, maxInjections);
    }

    boolean matches(Operation op, String key) {
      return (operation == null || operation == op) && (key == null || key.startsWith(keyPrefix));
    }
  }

  /** The rules in force and how often each has fired. */
  private record RuleSet(List<Rule> rules, Map<Rule, AtomicLong> fired) {
    static RuleSet of(List<Rule> rules) {
      Map<Rule, AtomicLong> fired = new IdentityHashMap<>();
      rules.forEach(r -> fired.put(r, new AtomicLong()));
      return new RuleSet(List.copyOf(rules), fired);
    }
  }

  private final ObjectStorage delegate;
  private final Random random;
  private final ScheduledExecutorService scheduler;
  private volatile RuleSet ruleSet = RuleSet.of(List.of());
  private final Map<Fault, AtomicLong> byFault = new EnumMap<>(Fault.class);
  private final Map<Operation, AtomicLong> byOperation = new EnumMap<>(Operation.class);

  /**
   * @param delegate the store that really does the work
   * @param random seeded source of every probabilistic decision
   * @param scheduler runs delayed calls (a test may pass a manually advanced one)
   */
  public FaultInjectingObjectStorage(ObjectStorage delegate, Random random, ScheduledExecutorService scheduler) {
    this.delegate = Objects.requireNonNull(delegate);
    this.random = Objects.requireNonNull(random);
    this.scheduler = Objects.requireNonNull(scheduler);
    for (Fault f : Fault.values()) {
      byFault.put(f, new AtomicLong());
    }
    for (Operation o : Operation.values()) {
      byOperation.put(o, new AtomicLong());
    }
  }

  /** Replaces every rule (an empty list turns faults off). Calls already decided are not affected. */
  public void setRules(List<Rule> rules) {
    ruleSet = RuleSet.of(rules);
  }

  public void setRules(Rule... rules) {
    setRules(List.of(rules));
  }

  public void clearRules() {
    setRules(List.of());
  }

  /** Faults of this kind injected so far. */
  public long injected(Fault fault) {
    return byFault.get(fault).get();
  }

  /** Faults of any kind injected into this operation so far. */
  public long injected(Operation operation) {
    return byOperation.get(operation).get();
  }

  /** Faults of any kind injected so far. */
  public long injectedTotal() {
    return byFault.values().stream().mapToLong(AtomicLong::get).sum();
  }

  public ObjectStorage delegate() {
    return delegate;
  }

  // ---- operations -------------------------------------------------------------------------

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    return inject(Operation.PUT, key, () -> delegate.put(key, data));
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    return inject(Operation.START_MULTIPART, key,
        () -> delegate.startMultipartUpload(key).thenApply(FaultyUpload::new));
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    return inject(Operation.GET, key, () -> delegate.get(key, start, end));
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
    return inject(Operation.DELETE, keys.isEmpty() ? "" : keys.get(0), () -> delegate.delete(keys));
  }

  @Override
  public CompletableFuture<List<ObjectInfo>> list(String prefix) {
    return inject(Operation.LIST, prefix, () -> delegate.list(prefix));
  }

  @Override
  public long minPartSizeBytes() {
    return delegate.minPartSizeBytes();
  }

  @Override
  public void close() {
    delegate.close();
  }

  // ---- injection --------------------------------------------------------------------------

  /** The decision for one call: total delay, then the outcome-deciding fault (or none). */
  private record Decision(long delayMs, Fault fault) {}

  private Decision decide(Operation operation, String key) {
    RuleSet current = ruleSet;
    long delayMs = 0;
    List<Fault> fired = new ArrayList<>(2);
    synchronized (random) {
      for (Rule rule : current.rules()) {
        if (!rule.matches(operation, key)) {
          continue;
        }
        AtomicLong count = current.fired().get(rule);
        if (count.get() >= rule.maxInjections() || random.nextDouble() >= rule.probability()) {
          continue;
        }
        count.incrementAndGet();
        fired.add(rule.fault());
        if (rule.fault() == Fault.DELAY) {
          delayMs += rule.delayMs();
          continue;
        }
        break;
      }
    }
    Fault outcome = null;
    for (Fault f : fired) {
      byFault.get(f).incrementAndGet();
      byOperation.get(operation).incrementAndGet();
      if (f != Fault.DELAY) {
        outcome = f;
      }
    }
    return new Decision(delayMs, outcome);
  }

  private <T> CompletableFuture<T> inject(Operation operation, String key, Supplier<CompletableFuture<T>> call) {
    Decision decision = decide(operation, key);
    if (decision.delayMs() == 0) {
      return apply(operation, key, decision.fault(), call);
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    scheduler.schedule(() -> {
      apply(operation, key, decision.fault(), call).whenComplete((v, e) -> {
        if (e != null) {
          result.completeExceptionally(e);
        } else {
          result.complete(v);
        }
      });
    }, decision.delayMs(), TimeUnit.MILLISECONDS);
    return result;
  }

  private static <T> CompletableFuture<T> apply(Operation operation, String key, Fault fault,
      Supplier<CompletableFuture<T>> call) {
    String what = operation.name().toLowerCase(java.util.Locale.ROOT) + " " + key;
    if (fault == null) {
      return call.get();
    }
    return switch (fault) {
      case FAIL -> CompletableFuture.failedFuture(new ObjectStorageException("injected failure: " + what));
      case THROTTLE -> CompletableFuture.failedFuture(new ThrottledException("injected throttling (SlowDown): " + what));
      case UNKNOWN_DROPPED -> CompletableFuture.failedFuture(
          new UnknownOutcomeException("injected unknown outcome (request dropped): " + what, null));
      case UNKNOWN_AFTER_APPLY -> call.get().handle((v, e) -> {
        throw new UnknownOutcomeException("injected unknown outcome (request applied"
            + (e == null ? "" : " and failed") + "): " + what, e);
      });
      case DELAY -> call.get();
    };
  }

  /** A multipart upload of the delegate with faults injected into its calls. */
  private final class FaultyUpload implements MultipartUpload {
    private final MultipartUpload upload;

    FaultyUpload(MultipartUpload upload) {
      this.upload = upload;
    }

    @Override
    public String key() {
      return upload.key();
    }

    @Override
    public CompletableFuture<Void> uploadPart(int partNumber, ByteBuffer data) {
      return inject(Operation.UPLOAD_PART, upload.key(), () -> upload.uploadPart(partNumber, data));
    }

    @Override
    public CompletableFuture<Void> complete() {
      return inject(Operation.COMPLETE_MULTIPART, upload.key(), upload::complete);
    }

    @Override
    public CompletableFuture<Void> abort() {
      return inject(Operation.ABORT_MULTIPART, upload.key(), upload::abort);
    }
  }
}
