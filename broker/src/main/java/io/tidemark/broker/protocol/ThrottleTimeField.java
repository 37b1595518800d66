package io.tidemark.broker.protocol;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.kafka.common.protocol.ApiMessage;

/**
 * The {@code throttle_time_ms} field of a response body, found once per generated message class
 * (its {@code throttleTimeMs()} and {@code setThrottleTimeMs(int)}); bodies without the field are
 * left alone. Stateless apart from the per-class cache; thread-safe.
 */
final class ThrottleTimeField {
  private ThrottleTimeField() {}

  private record Accessors(MethodHandle get, MethodHandle set) {}

  private static final ClassValue<Accessors> ACCESSORS = new ClassValue<>() {
    @Override
    protected Accessors computeValue(Class<?> type) {
      try {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        return new Accessors(lookup.findVirtual(type, "throttleTimeMs", MethodType.methodType(int.class)),
            lookup.findVirtual(type, "setThrottleTimeMs", MethodType.methodType(type, int.class)));
      } catch (NoSuchMethodException | IllegalAccessException e) {
        return null;
      }
    }
  };

  /** The body's throttle time (0 when it has no such field). */
  static int get(ApiMessage body) {
    Accessors a = ACCESSORS.get(body.getClass());
    if (a == null) {
      return 0;
    }
    try {
      return (int) a.get().invoke(body);
    } catch (Throwable e) {
      throw new IllegalStateException("cannot read the throttle time of " + body.getClass().getSimpleName(), e);
    }
  }

  /** Raises the body's throttle time to {@code ms} when it is lower; false when the body has no such field. */
  static boolean raise(ApiMessage body, long ms) {
    Accessors a = ACCESSORS.get(body.getClass());
    if (a == null) {
      return false;
    }
    int value = (int) Math.min(Integer.MAX_VALUE, ms);
    try {
      if ((int) a.get().invoke(body) < value) {
        Object ignored = a.set().invoke(body, value);
      }
      return true;
    } catch (Throwable e) {
      throw new IllegalStateException("cannot set the throttle time of " + body.getClass().getSimpleName(), e);
    }
  }

  /** Sets the body's throttle time back to {@code ms} (after a version could not carry the raised one). */
  static void reset(ApiMessage body, int ms) {
    Accessors a = ACCESSORS.get(body.getClass());
    if (a != null) {
      try {
        Object ignored = a.set().invoke(body, ms);
      } catch (Throwable e) {
        throw new IllegalStateException("cannot set the throttle time of " + body.getClass().getSimpleName(), e);
      }
    }
  }
}
