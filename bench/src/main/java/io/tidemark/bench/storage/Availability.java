package io.tidemark.bench.storage;

import java.util.Optional;

/** A piece of the system the benchmark needs: present, or absent with the reason printed as "not measured: ...". */
record Availability<T>(Optional<T> value, String reason) {

  static <T> Availability<T> of(T value) {
    return new Availability<>(Optional.of(value), "");
  }

  static <T> Availability<T> missing(String reason) {
    return new Availability<>(Optional.empty(), reason);
  }
}
