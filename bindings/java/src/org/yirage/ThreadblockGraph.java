package org.yirage;

import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_block_graph_options;

/**
 * A thread-block graph (µGraph): one fused kernel run on a grid of blocks, each looping
 * {@code forloopRange} times over tiles (docs/ugraphs.md). Add it to a kernel graph with
 * {@link KernelGraph#customized}; it may be closed or reused after that.
 */
public final class ThreadblockGraph extends GraphBuilder {
    /**
     * @param grid          blocks along x, y, z (three values, each >= 1)
     * @param blockThreads  threads per block
     * @param forloopRange  iterations of the for-loop
     */
    public ThreadblockGraph(long[] grid, long blockThreads, long forloopRange) {
        this(grid, blockThreads, forloopRange, 0);
    }

    /** As above, refusing tiles that need more than {@code sharedMemoryLimit} bytes (0: unchecked). */
    public ThreadblockGraph(long[] grid, long blockThreads, long forloopRange, long sharedMemoryLimit) {
        super(create(grid, blockThreads, forloopRange, sharedMemoryLimit), false);
    }

    private static long create(long[] grid, long blockThreads, long forloopRange, long sharedMemoryLimit) {
        if (grid.length != 3) {
            throw new IllegalArgumentException("grid has 3 entries (x, y, z), not " + grid.length);
        }
        yirage_block_graph_options o = new yirage_block_graph_options();
        try {
            o.setGrid(grid);
            o.setBlock_threads(blockThreads);
            o.setForloop_range(forloopRange);
            o.setShared_memory_limit(sharedMemoryLimit);
            long[] out = new long[1];
            return Native.checked(YirageNative.yirage_block_graph_create(o, out), out);
        } finally {
            o.delete();
        }
    }

    @Override
    void release(long handle) {
        YirageNative.yirage_block_graph_release(handle);
    }

    /**
     * An input iterator over a kernel-graph tensor: {@code imap[axis]} is the tensor dim split
     * across that grid axis (-1: none), {@code forloopDim} the dim split across iterations (-1:
     * the same tile every iteration).
     */
    public Tensor newInput(Tensor dtensor, int[] imap, int forloopDim) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_block_graph_new_input(handle(), Tensor.handleOf(dtensor, "dtensor"),
                                                                 imap, forloopDim, out), out);
    }

    /** An after-loop tile accumulating x over the iterations. */
    public Tensor accumulate(Tensor x, Accumulator kind) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_block_graph_accumulate(handle(), Tensor.handleOf(x, "x"), kind.code, out),
                      out);
    }

    /** The online-softmax accumulator Σ_i x_i · exp(m_i − max_i m_i). */
    public Tensor accumulateRescale(Tensor x, Tensor m) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_block_graph_accumulate_rescale(handle(), Tensor.handleOf(x, "x"),
                                                                          Tensor.handleOf(m, "m"), out), out);
    }

    /** Saves tile s as the customized operator's next output ({@code omap}: 3 entries). */
    public void newOutput(Tensor s, int[] omap, int forloopDim) {
        Status.check(YirageNative.yirage_block_graph_new_output(handle(), Tensor.handleOf(s, "s"), omap, forloopDim));
    }

    /** As {@link #newOutput(Tensor, int[], int)}, written as {@code dtype} rather than the tile's own
     *  dtype (float32 partial sums of a 16-bit graph; docs/ugraphs.md). */
    public void newOutput(Tensor s, int[] omap, int forloopDim, DType dtype) {
        Status.check(YirageNative.yirage_block_graph_new_output_as(handle(), Tensor.handleOf(s, "s"), omap, forloopDim,
                                                                  dtype.code));
    }

    /** The shared-memory estimate of its tiles in bytes. */
    public long sharedMemoryBytes() {
        long[] out = new long[1];
        return Native.checked(YirageNative.yirage_block_graph_shared_memory_bytes(handle(), out), out);
    }
}
