package io.tidemark.broker.security;

/** A user's salted SCRAM credential as stored: never the password, only what verifies a proof of it. */
public record ScramCredential(ScramAlgorithm algorithm, byte[] salt, byte[] storedKey, byte[] serverKey, int iterations) {}
