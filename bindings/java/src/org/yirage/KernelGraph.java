package org.yirage;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_equivalence_options;
import org.yirage.jni.yirage_equivalence_result;
import org.yirage.jni.yirage_search_options;
import org.yirage.jni.yirage_target_properties;

/**
 * A kernel graph: a DAG of tensor operators with static shapes (docs/c-api.md).
 *
 * <pre>{@code
 * try (KernelGraph g = new KernelGraph()) {
 *     Tensor x = g.newInput(new long[] {16, 4096}, DType.FLOAT16);
 *     Tensor w = g.newInput(new long[] {4096, 6144}, DType.FLOAT16);
 *     g.markOutput(g.matmul(g.rmsNorm(x, 4096), w));
 *     HostTensor[] out = g.runReference(xData, wData);
 * }
 * }</pre>
 */
public final class KernelGraph extends GraphBuilder {
    /** An empty graph. */
    public KernelGraph() {
        this(create());
    }

    private KernelGraph(long handle) {
        super(handle, true);
    }

    private static long create() {
        long[] out = new long[1];
        return Native.checked(YirageNative.yirage_graph_create(out), out);
    }

    /** Takes ownership of a graph handle the library made (a loaded graph, a search candidate). */
    static KernelGraph adopt(long handle) {
        return new KernelGraph(handle);
    }

    @Override
    void release(long handle) {
        YirageNative.yirage_graph_release(handle);
    }

    /** A new graph input (row-major dims, each >= 1, rank 1..6). */
    public Tensor newInput(long[] dims, DType dtype) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_graph_new_input(handle(), dims, dtype.code, out), out);
    }

    /** softmax over {@code dim}, recorded as the five operators it is made of. */
    public Tensor softmax(Tensor x, int dim) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_graph_softmax(handle(), Tensor.handleOf(x, "x"), dim, out), out);
    }

    /** x split along {@code dim} into consecutive pieces of the given sizes. */
    public Tensor[] split(Tensor x, int dim, long... sizes) {
        long[] parts = new long[sizes.length];
        Status.check(YirageNative.yirage_java_split(handle(), Tensor.handleOf(x, "x"), dim, sizes, parts));
        return tensors(parts);
    }

    /** x split along {@code dim} into {@code chunks} equal pieces. */
    public Tensor[] chunk(Tensor x, int chunks, int dim) {
        if (chunks < 1) {
            throw new IllegalArgumentException("chunk: chunks must be >= 1, not " + chunks);
        }
        long[] parts = new long[chunks];
        Status.check(YirageNative.yirage_java_chunk(handle(), Tensor.handleOf(x, "x"), chunks, dim, parts));
        return tensors(parts);
    }

    /** x's elements in row-major order under {@code shape} (one entry may be -1, inferred). */
    public Tensor reshape(Tensor x, long... shape) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_graph_reshape(handle(), Tensor.handleOf(x, "x"), shape, out), out);
    }

    /** x with its dims reordered: output dim i is x's dim {@code dims[i]}. */
    public Tensor permute(Tensor x, long... dims) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_graph_permute(handle(), Tensor.handleOf(x, "x"), dims, out), out);
    }

    /** x with dims {@code dim0} and {@code dim1} swapped. */
    public Tensor transpose(Tensor x, int dim0, int dim1) {
        long[] out = new long[1];
        return tensor(YirageNative.yirage_graph_transpose(handle(), Tensor.handleOf(x, "x"), dim0, dim1, out), out);
    }

    /** The outputs of a customized operator running {@code block} (which may be closed after). */
    public Tensor[] customized(ThreadblockGraph block) {
        long[] count = new long[1];
        Status.check(YirageNative.yirage_block_graph_num_outputs(block.handle(), count));
        long[] outs = new long[(int) count[0]];
        Status.check(YirageNative.yirage_java_customized(handle(), block.handle(), outs));
        return tensors(outs);
    }

    /** Marks a computed tensor as the graph's next output. */
    public void markOutput(Tensor x) {
        Status.check(YirageNative.yirage_graph_mark_output(handle(), Tensor.handleOf(x, "x")));
    }

    private Tensor[] tensors(long[] handles) {
        Tensor[] out = new Tensor[handles.length];
        for (int i = 0; i < handles.length; ++i) {
            out[i] = new Tensor(this, handles[i]);
        }
        return out;
    }

    private interface IndexedGetter { int call(long graph, long index, long[] out); }

    private Tensor[] list(int countStatus, long[] count, IndexedGetter get) {
        long n = Native.checked(countStatus, count);
        Tensor[] out = new Tensor[(int) n];
        for (int i = 0; i < n; ++i) {
            long[] t = new long[1];
            out[i] = tensor(get.call(handle(), i, t), t);
        }
        return out;
    }

    public Tensor[] inputs() {
        long[] n = new long[1];
        return list(YirageNative.yirage_graph_num_inputs(handle(), n), n, YirageNative::yirage_graph_get_input);
    }

    public Tensor[] outputs() {
        long[] n = new long[1];
        return list(YirageNative.yirage_graph_num_outputs(handle(), n), n, YirageNative::yirage_graph_get_output);
    }

    /** Operators, inputs included (softmax counts as five). */
    public long numOperators() {
        long[] n = new long[1];
        return Native.checked(YirageNative.yirage_graph_num_operators(handle(), n), n);
    }

    /**
     * Evaluates the graph in float64 on host data (one per input, with its shape and dtype) and
     * returns new outputs in the outputs' dtypes.
     */
    public HostTensor[] runReference(HostTensor... inputs) {
        HostTensor[] outputs = HostTensor.allocateAll(outputs());
        runReference(inputs, outputs);
        return outputs;
    }

    /** Evaluates into the caller's outputs (written only when the whole call succeeds). */
    public void runReference(HostTensor[] inputs, HostTensor[] outputs) {
        HostTensor.requireWritable(outputs);
        Status.check(YirageNative.yirage_graph_run_reference(handle(), inputs, outputs));
    }

    /** Fingerprint equivalence with a graph over the same inputs (docs/verification.md). */
    public EquivalenceResult equivalent(KernelGraph other, int trials, long seed, int threads) {
        yirage_equivalence_options options = new yirage_equivalence_options();
        yirage_equivalence_result result = new yirage_equivalence_result();
        try {
            options.setTrials(trials);
            options.setSeed(seed);
            options.setThreads(threads);
            Status.check(YirageNative.yirage_graph_equivalent(handle(), other.handle(), options, result));
            return new EquivalenceResult(result.getEquivalent() != 0, (int) result.getTrials(),
                                         result.getSeconds(), result.getReason());
        } finally {
            options.delete();
            result.delete();
        }
    }

    /** equivalent with seed 1 and all cores. */
    public EquivalenceResult equivalent(KernelGraph other, int trials) {
        return equivalent(other, trials, 1, 0);
    }

    /** The graph's bytes in a format; deterministic. */
    public byte[] toBytes(GraphFormat format) {
        long[] blob = new long[1];
        long b = Native.checked(YirageNative.yirage_graph_serialize(handle(), format.code, blob), blob);
        try {
            return blobBytes(b);
        } finally {
            YirageNative.yirage_blob_release(b);
        }
    }

    static byte[] blobBytes(long blob) {
        byte[] bytes = new byte[(int) YirageNative.yirage_blob_size(blob)];
        YirageNative.yirage_java_blob_copy(blob, bytes);
        return bytes;
    }

    /** A graph from bytes in either format; CorruptData for damaged or invalid bytes. */
    public static KernelGraph fromBytes(byte[] bytes) {
        long[] out = new long[1];
        return adopt(Native.checked(YirageNative.yirage_graph_deserialize(bytes, out), out));
    }

    /** Writes the graph: JSON when the path ends in .json, binary otherwise. */
    public void save(Path path) {
        Status.check(YirageNative.yirage_graph_save(handle(), path.toString()));
    }

    /** Reads a graph file in either format; NotFound when it is missing. */
    public static KernelGraph load(Path path) {
        long[] out = new long[1];
        return adopt(Native.checked(YirageNative.yirage_graph_load(path.toString(), out), out));
    }

    /** A listing for people, one line per operator (the format may change between releases). */
    public String describe() {
        long[] blob = new long[1];
        return blobText(Native.checked(YirageNative.yirage_graph_describe(handle(), blob), blob));
    }

    /**
     * The graph as Graphviz's DOT text: its tensors and operators, and each customized operator's
     * µGraph (grid, imap/fmap/omap, for-loop, accumulators) as a cluster (docs/pictures.md).
     */
    public String toDot() {
        long[] blob = new long[1];
        return blobText(Native.checked(YirageNative.yirage_graph_to_dot(handle(), blob), blob));
    }

    /** A text blob's characters (without its terminating NUL); releases the blob. */
    private static String blobText(long b) {
        try {
            byte[] text = blobBytes(b);
            int n = text.length > 0 && text[text.length - 1] == 0 ? text.length - 1 : text.length;
            return new String(text, 0, n, StandardCharsets.UTF_8);
        } finally {
            YirageNative.yirage_blob_release(b);
        }
    }

    /** The cost model's estimate in seconds on a built-in target ("cpu", "h100", "h200", "a100", "mi300x"). */
    public double estimateCost(String target) {
        yirage_target_properties t = new yirage_target_properties();
        try {
            Status.check(YirageNative.yirage_target_builtin(target, t));
            double[] seconds = new double[1];
            Status.check(YirageNative.yirage_graph_estimate_cost(handle(), t, seconds));
            return seconds[0];
        } finally {
            t.delete();
        }
    }

    /** This graph as it is, compiled for a device. */
    public Kernel compile(Device device) {
        return Kernel.compile(this, device);
    }

    /**
     * Searches for faster equivalent graphs on the device: profiles the cheapest verified
     * candidates and this graph there and orders them fastest first (docs/search.md). A search
     * that runs out of budget returns what it verified ({@link SearchResult#timedOut()}).
     */
    public SearchResult superoptimize(Device device, SearchOptions options) {
        yirage_search_options o = options.toNative();
        try {
            o.setDevice(device.handle());
            long[] out = new long[1];
            int status = YirageNative.yirage_java_superoptimize(handle(), o, options.cacheDirString(), out);
            if (status != Status.TIMEOUT.code || out[0] == 0) {
                Status.check(status);
            }
            return new SearchResult(out[0], status == Status.TIMEOUT.code);
        } finally {
            o.delete();
        }
    }
}
