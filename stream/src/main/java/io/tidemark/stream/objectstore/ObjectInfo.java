package io.tidemark.stream.objectstore;

/** One listed object: its key, size in bytes and last-modified time in epoch milliseconds. */
public record ObjectInfo(String key, long sizeBytes, long lastModifiedMs) {}
