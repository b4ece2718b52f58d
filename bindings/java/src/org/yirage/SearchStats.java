package org.yirage;

/**
 * What a search did: partial graphs built, complete candidates, checks, its wall time, and the
 * candidates that passed verification but that the device's backend cannot build.
 */
public record SearchStats(long states, long candidates, long fingerprintChecks, long z3Queries,
                          double z3Seconds, double firstFusedSeconds, double seconds,
                          boolean fromCache, long unbuildable) {}
