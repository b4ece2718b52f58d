package org.yirage;

/**
 * The outcome of {@link KernelGraph#equivalent}: whether every output agreed in every trial,
 * the trials run, the wall time, and why not ("" when equivalent).
 */
public record EquivalenceResult(boolean equivalent, int trials, double seconds, String reason) {}
