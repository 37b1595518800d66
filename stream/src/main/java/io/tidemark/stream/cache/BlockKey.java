package io.tidemark.stream.cache;

/**
 * Names one data block of one object: the object's id and the block's byte position in the
 * object. Object ids are never reused, so a key never names two different contents.
 */
public record BlockKey(long objectId, long position) {}
