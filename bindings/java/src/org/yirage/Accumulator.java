package org.yirage;

import org.yirage.jni.yirage_accumulator;

/** For-loop accumulators of thread-block graphs (docs/ugraphs.md). */
public enum Accumulator {
    /** Σ_i x_i. */
    SUM(yirage_accumulator.YIRAGE_ACCUM_SUM),
    /** Σ_i Σ_last x_i; the last dim becomes 1. */
    REDUCE_SUM(yirage_accumulator.YIRAGE_ACCUM_REDUCE_SUM),
    /** That sum divided by the element count. */
    REDUCE_MEAN(yirage_accumulator.YIRAGE_ACCUM_REDUCE_MEAN),
    /** sqrt(Σ_i Σ_last x_i² / count). */
    RMS(yirage_accumulator.YIRAGE_ACCUM_REDUCE_RMS),
    /** Elementwise max_i x_i. */
    MAX(yirage_accumulator.YIRAGE_ACCUM_MAX);

    final int code;

    Accumulator(int code) {
        this.code = code;
    }
}
