package org.yirage;

/**
 * One verified candidate of a search: the cost model's estimate, the fingerprint trials it
 * passed, a description (e.g. "customized grid 2x16x1 loop 16 (9 block operators)") and its
 * median time on the profiling device (-1 if not profiled).
 */
public record Candidate(String description, double estimatedSeconds, int verifiedTrials,
                        double measuredSeconds) {}
