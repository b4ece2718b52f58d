package org.yirage;

import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_measure_options;
import org.yirage.jni.yirage_measurement;

/**
 * A graph compiled for one device. Runs on host data whatever the device (on a GPU through
 * device memory the library allocates); {@link #measure} works on every device. Concurrent
 * runs from several threads are allowed as long as they write distinct outputs.
 */
public final class Kernel implements AutoCloseable {
    private long handle;
    private final long[][] outputDims;
    private final DType[] outputDtypes;

    private Kernel(long handle, DeviceInfo device, Tensor[] outputs) {
        this.handle = handle;
        this.outputDims = new long[outputs.length][];
        this.outputDtypes = new DType[outputs.length];
        for (int i = 0; i < outputs.length; ++i) {
            outputDims[i] = outputs[i].dims();
            outputDtypes[i] = outputs[i].dtype();
        }
    }

    static Kernel compile(KernelGraph graph, Device device) {
        DeviceInfo info = device.info();
        Tensor[] outputs = graph.outputs();
        long[] out = new long[1];
        long h = Native.checked(YirageNative.yirage_compile(graph.handle(), device.handle(), null, out), out);
        return new Kernel(h, info, outputs);
    }

    long handle() {
        if (handle == 0) {
            throw new IllegalStateException("Kernel is closed");
        }
        return handle;
    }

    @Override
    public void close() {
        if (handle != 0) {
            YirageNative.yirage_kernel_release(handle);
            handle = 0;
        }
    }

    /** Runs on host data (one per graph input) and returns new outputs. */
    public HostTensor[] run(HostTensor... inputs) {
        HostTensor[] outputs = new HostTensor[outputDims.length];
        for (int i = 0; i < outputs.length; ++i) {
            outputs[i] = HostTensor.zeros(outputDtypes[i], outputDims[i]);
        }
        run(inputs, outputs);
        return outputs;
    }

    /**
     * Runs into the caller's outputs, whatever the kernel's device: on a GPU the library copies
     * the inputs into device memory of its own, runs, waits and copies the outputs back
     * (yirage_kernel_run_host). An output sharing memory with an input or another output is
     * refused.
     */
    public void run(HostTensor[] inputs, HostTensor[] outputs) {
        HostTensor.requireWritable(outputs);
        Status.check(YirageNative.yirage_kernel_run_host(handle(), inputs, outputs));
    }

    /**
     * Checks the kernel against its graph in float64 on seeded random inputs (outputs poisoned
     * first) and times it with the backend's timers; a wrong kernel is a result, not an error.
     */
    public Measurement measure(long seed, int warmup, int repeats) {
        return measure(seed, warmup, repeats, 0);
    }

    /**
     * The same, with a kernel that writes {@code flushBytes} on the device before each
     * timed run, outside the timed span: with the device's L2 size (the C API's
     * {@code yirage_target_properties.l2_bytes}) each run starts with cold caches and the timing
     * holds the device's time alone (ABI 1.3, {@code yirage_measure_options.flush_bytes}).
     */
    public Measurement measure(long seed, int warmup, int repeats, long flushBytes) {
        yirage_measure_options o = new yirage_measure_options();
        yirage_measurement m = new yirage_measurement();
        try {
            o.setSeed(seed);
            o.setWarmup(warmup);
            o.setRepeats(repeats);
            o.setFlush_bytes(flushBytes);
            Status.check(YirageNative.yirage_kernel_measure(handle(), 0, o, m));
            return new Measurement(m.getCorrect() != 0, m.getRelative_error(), m.getMedian_seconds(),
                                   m.getMin_seconds(), m.getError());
        } finally {
            o.delete();
            m.delete();
        }
    }
}
