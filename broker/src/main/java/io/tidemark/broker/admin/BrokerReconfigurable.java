package io.tidemark.broker.admin;

import java.util.Map;

/**
 * A part of the broker that applies some of Kafka's dynamic broker configs itself (Kafka's
 * {@code Reconfigurable}): the network threads, the log cleaner's threads, a TLS listener's key and
 * trust stores. It names its keys, says which may be set only per broker, checks a candidate set of
 * this broker's effective values before anything is written, and applies the values that the
 * cluster's config records give this broker. {@link DynamicBrokerConfigs} owns the values and calls
 * it; a part never reads the store itself.
 *
 * <p>Threading: {@link #check} runs on request threads, {@link #apply} on whichever thread refreshes
 * the dynamic configs (never two at once for one part); implementations publish what they apply
 * safely for their own readers.
 */
public interface BrokerReconfigurable {

  /** Whether Kafka broker config {@code key} is one of its keys. */
  boolean owns(String key);

  /** Whether {@code key} may be set only for one broker (Kafka refuses it at the cluster default). */
  boolean perBrokerOnly(String key);

  /** Whether {@code key}'s value is secret: described as null and sensitive. */
  boolean sensitive(String key);

  /** Kafka's type name of {@code key} ("int", "string", "password"). */
  String type(String key);

  /**
   * The keys described on every broker even when no dynamic value is set, each with its static
   * value (from the configuration file or the default); keys missing are described only when set.
   */
  Map<String, String> staticValues();

  /** The Tidemark setting that gives {@code key} its static value (described as its synonym), or null. */
  default String staticKey(String key) {
    return null;
  }

  /**
   * Why this broker cannot apply {@code values} (every key of this part that would be set on this
   * broker after the change, per-broker values over cluster defaults), or null when it can. Pure
   * apart from reading files the values name; changes nothing.
   */
  String check(Map<String, String> values);

  /**
   * Applies {@code values} (as in {@link #check}; a key missing goes back to its static value).
   * Values the cluster holds but this broker cannot apply (a file gone since) are logged and the
   * previous state kept, as Kafka keeps it.
   */
  void apply(Map<String, String> values);
}
