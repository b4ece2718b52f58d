package org.yirage;

import org.yirage.jni.YirageNative;

/**
 * What kernel graphs and thread-block graphs share: a native handle released by
 * {@link #close()} (try-with-resources; there is no finalizer), and the compute operators.
 * Tensors are owned by their graph and die with it; the library refuses (never dereferences) a
 * tensor of a closed graph. A graph is not safe to modify from two threads at once.
 */
public abstract class GraphBuilder implements AutoCloseable {
    private long handle;
    /** True: kernel-level C functions; false: block-level ones. */
    private final boolean kernelLevel;

    GraphBuilder(long handle, boolean kernelLevel) {
        this.handle = handle;
        this.kernelLevel = kernelLevel;
    }

    /** The live native handle; IllegalStateException after close(). */
    final long handle() {
        if (handle == 0) {
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
        return handle;
    }

    /** True once close() has run. */
    public final boolean isClosed() {
        return handle == 0;
    }

    /** Releases the graph and its tensors; later calls do nothing. */
    @Override
    public final void close() {
        if (handle != 0) {
            release(handle);
            handle = 0;
        }
    }

    abstract void release(long handle);

    final Tensor tensor(int status, long[] out) {
        return new Tensor(this, Native.checked(status, out));
    }

    private Tensor unary(Operators.Unary op, Tensor x) {
        long[] out = new long[1];
        long g = handle();
        int status = kernelLevel ? op.kernel.call(g, Tensor.handleOf(x, "x"), out)
                                 : op.block.call(g, Tensor.handleOf(x, "x"), out);
        return tensor(status, out);
    }

    private Tensor binary(Operators.Binary op, Tensor a, Tensor b) {
        long[] out = new long[1];
        long g = handle();
        long ha = Tensor.handleOf(a, "a"), hb = Tensor.handleOf(b, "b");
        int status = kernelLevel ? op.kernel.call(g, ha, hb, out) : op.block.call(g, ha, hb, out);
        return tensor(status, out);
    }

    private Tensor overDim(Operators.OverDim op, Tensor x, int dim) {
        long[] out = new long[1];
        long g = handle();
        long hx = Tensor.handleOf(x, "x");
        int status = kernelLevel ? op.kernel.call(g, hx, dim, out) : op.block.call(g, hx, dim, out);
        return tensor(status, out);
    }

    /** Batched matrix product a[..., m, k] · b[..., k, n]. */
    public Tensor matmul(Tensor a, Tensor b) { return binary(Operators.Binary.MATMUL, a, b); }
    public Tensor add(Tensor a, Tensor b) { return binary(Operators.Binary.ADD, a, b); }
    public Tensor sub(Tensor a, Tensor b) { return binary(Operators.Binary.SUB, a, b); }
    public Tensor mul(Tensor a, Tensor b) { return binary(Operators.Binary.MUL, a, b); }
    public Tensor div(Tensor a, Tensor b) { return binary(Operators.Binary.DIV, a, b); }
    public Tensor pow(Tensor a, Tensor b) { return binary(Operators.Binary.POW, a, b); }
    public Tensor max(Tensor a, Tensor b) { return binary(Operators.Binary.MAX, a, b); }

    public Tensor exp(Tensor x) { return unary(Operators.Unary.EXP, x); }
    public Tensor silu(Tensor x) { return unary(Operators.Unary.SILU, x); }
    public Tensor gelu(Tensor x) { return unary(Operators.Unary.GELU, x); }
    public Tensor relu(Tensor x) { return unary(Operators.Unary.RELU, x); }
    public Tensor sqrt(Tensor x) { return unary(Operators.Unary.SQRT, x); }
    public Tensor square(Tensor x) { return unary(Operators.Unary.SQUARE, x); }
    public Tensor sigmoid(Tensor x) { return unary(Operators.Unary.SIGMOID, x); }
    public Tensor log(Tensor x) { return unary(Operators.Unary.LOG, x); }
    public Tensor neg(Tensor x) { return unary(Operators.Unary.NEG, x); }

    /** Sum over {@code dim}; that dim becomes 1. */
    public Tensor reduction(Tensor x, int dim) { return overDim(Operators.OverDim.REDUCTION, x, dim); }

    /** Maximum over {@code dim}; that dim becomes 1. */
    public Tensor reductionMax(Tensor x, int dim) {
        return overDim(Operators.OverDim.REDUCTION_MAX, x, dim);
    }

    /** min(max(x, lo), hi). */
    public Tensor clamp(Tensor x, double lo, double hi) {
        long[] out = new long[1];
        long hx = Tensor.handleOf(x, "x");
        return tensor(kernelLevel ? YirageNative.yirage_graph_clamp(handle(), hx, lo, hi, out)
                                  : YirageNative.yirage_block_graph_clamp(handle(), hx, lo, hi, out),
                      out);
    }

    /** x · scalar. */
    public Tensor mulScalar(Tensor x, double scalar) {
        long[] out = new long[1];
        long hx = Tensor.handleOf(x, "x");
        return tensor(kernelLevel ? YirageNative.yirage_graph_mul_scalar(handle(), hx, scalar, out)
                                  : YirageNative.yirage_block_graph_mul_scalar(handle(), hx, scalar, out),
                      out);
    }

    /** RMS normalization over the trailing dims {@code normalizedShape}; weight may be null. */
    public Tensor rmsNorm(Tensor x, long[] normalizedShape, double eps, Tensor weight) {
        long[] out = new long[1];
        long hx = Tensor.handleOf(x, "x");
        long hw = weight == null ? 0 : Tensor.handleOf(weight, "weight");
        return tensor(kernelLevel
                ? YirageNative.yirage_graph_rms_norm(handle(), hx, normalizedShape, eps, hw, out)
                : YirageNative.yirage_block_graph_rms_norm(handle(), hx, normalizedShape, eps, hw, out),
                out);
    }

    /** rmsNorm without weight and with eps 0. */
    public Tensor rmsNorm(Tensor x, long... normalizedShape) {
        return rmsNorm(x, normalizedShape, 0.0, null);
    }

    /** a and b side by side along {@code dim}. */
    public Tensor concat(Tensor a, Tensor b, int dim) {
        long[] out = new long[1];
        long ha = Tensor.handleOf(a, "a"), hb = Tensor.handleOf(b, "b");
        return tensor(kernelLevel ? YirageNative.yirage_graph_concat(handle(), ha, hb, dim, out)
                                  : YirageNative.yirage_block_graph_concat(handle(), ha, hb, dim, out),
                      out);
    }
}
