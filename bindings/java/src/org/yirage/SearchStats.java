package org.yirage;

/** What a search did: partial graphs built, complete candidates, checks, and its wall time. */
public record SearchStats(long states, long candidates, long fingerprintChecks, long z3Queries,
                          double z3Seconds, double firstFusedSeconds, double seconds,
                          boolean fromCache) {}
