package org.yirage;

import java.util.Arrays;
import org.yirage.jni.YirageNative;

/**
 * A tensor of a kernel graph or a tile of a thread-block graph: a symbol with a shape and a
 * dtype, owned by its graph (it has no data; see {@link HostTensor} for data).
 */
public final class Tensor {
    private final GraphBuilder graph;
    final long handle;

    Tensor(GraphBuilder graph, long handle) {
        this.graph = graph;
        this.handle = handle;
    }

    static long handleOf(Tensor t, String role) {
        if (t == null) {
            throw new NullPointerException(role + " is null");
        }
        return t.handle;
    }

    /** The graph that made it. */
    public GraphBuilder graph() {
        return graph;
    }

    /** Its dims (row-major). */
    public long[] dims() {
        long[] ndim = new long[1];
        Status.check(YirageNative.yirage_tensor_get_ndim(handle, ndim));
        long[] dims = new long[(int) ndim[0]];
        Status.check(YirageNative.yirage_tensor_get_dims(handle, dims));
        return dims;
    }

    public DType dtype() {
        int[] code = new int[1];
        Status.check(YirageNative.yirage_tensor_get_dtype(handle, code));
        return DType.of(code[0]);
    }

    @Override
    public String toString() {
        return "Tensor(dims=" + Arrays.toString(dims()) + ", dtype=" + dtype() + ")";
    }
}
