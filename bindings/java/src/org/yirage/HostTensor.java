package org.yirage;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Tensor data in host memory: a direct ByteBuffer in native byte order, compact row-major,
 * with a dtype and a shape. Made from float[] (float32), short[] (float16 or bfloat16 bit
 * patterns) or, without a copy, from the caller's direct ByteBuffer. Its buffer always holds at
 * least shape's elements, which is what lets native code read and write it safely.
 */
public final class HostTensor {
    // Read by the JNI layer (yirage_java.i) by name: keep the names and types.
    final ByteBuffer data;
    final int dtypeCode;
    final long[] shape;

    private final DType dtype;

    private HostTensor(ByteBuffer data, DType dtype, long[] shape) {
        this.data = data;
        this.dtype = dtype;
        this.dtypeCode = dtype.code;
        this.shape = shape;
    }

    /** Elements of a shape; IllegalArgumentException for a negative dim or more than a buffer holds. */
    static int elements(long[] shape, DType dtype) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dim in " + Arrays.toString(shape));
            }
            n *= d;
            if (n * dtype.size() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype
                        + " is larger than a Java buffer (2 GiB)");
            }
        }
        return (int) n;
    }

    private static HostTensor allocate(DType dtype, long[] shape) {
        long[] s = shape.clone();
        int n = elements(s, dtype);
        ByteBuffer b = ByteBuffer.allocateDirect(Math.max(1, n * dtype.size())).order(ByteOrder.nativeOrder());
        return new HostTensor(b, dtype, s);
    }

    private static void requireCount(int have, long[] shape, DType dtype) {
        int want = elements(shape, dtype);
        if (have != want) {
            throw new IllegalArgumentException(have + " values for shape " + Arrays.toString(shape)
                    + ", which has " + want + " elements");
        }
    }

    /** Zeros of a dtype and shape. */
    public static HostTensor zeros(DType dtype, long... shape) {
        return allocate(dtype, shape);
    }

    /** float32 data copied from {@code values}. */
    public static HostTensor of(float[] values, long... shape) {
        requireCount(values.length, shape, DType.FLOAT32);
        HostTensor t = allocate(DType.FLOAT32, shape);
        t.data.asFloatBuffer().put(values);
        return t;
    }

    /** float16 or bfloat16 data copied from 16-bit patterns. */
    public static HostTensor ofBits(short[] bits, DType dtype, long... shape) {
        if (dtype.size() != 2) {
            throw new IllegalArgumentException("16-bit patterns make float16 or bfloat16 tensors, not " + dtype);
        }
        requireCount(bits.length, shape, dtype);
        HostTensor t = allocate(dtype, shape);
        t.data.asShortBuffer().put(bits);
        return t;
    }

    /** Data of any dtype from float values, rounded to nearest even for 16-bit dtypes. */
    public static HostTensor fromFloats(float[] values, DType dtype, long... shape) {
        if (dtype == DType.FLOAT32) {
            return of(values, shape);
        }
        short[] bits = new short[values.length];
        for (int i = 0; i < values.length; ++i) {
            bits[i] = dtype == DType.FLOAT16 ? Float16Bits.floatToFloat16(values[i])
                                             : Float16Bits.floatToBFloat16(values[i]);
        }
        return ofBits(bits, dtype, shape);
    }

    /**
     * The caller's direct buffer, from its position on, without a copy (results written to it
     * are seen by the caller). It must hold at least shape's elements; its byte order must be
     * the platform's.
     */
    public static HostTensor wrap(ByteBuffer buffer, DType dtype, long... shape) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("wrap needs a direct ByteBuffer (ByteBuffer.allocateDirect)");
        }
        long[] s = shape.clone();
        int bytes = elements(s, dtype) * dtype.size();
        ByteBuffer view = buffer.slice().order(ByteOrder.nativeOrder());
        if (view.capacity() < bytes) {
            throw new IllegalArgumentException("the buffer has " + view.capacity() + " bytes from its position; shape "
                    + Arrays.toString(s) + " of " + dtype + " needs " + bytes);
        }
        if (buffer.order() != ByteOrder.nativeOrder() && dtype.size() > 1) {
            throw new IllegalArgumentException("the buffer's byte order is " + buffer.order()
                    + ", not the platform's " + ByteOrder.nativeOrder());
        }
        return new HostTensor(view, dtype, s);
    }

    public DType dtype() {
        return dtype;
    }

    public long[] shape() {
        return shape.clone();
    }

    /** The number of elements. */
    public int size() {
        return elements(shape, dtype);
    }

    /** The data (shared, not copied). */
    public ByteBuffer buffer() {
        return data.duplicate().order(ByteOrder.nativeOrder());
    }

    /** The values as floats (16-bit dtypes converted exactly). */
    public float[] toFloatArray() {
        float[] values = new float[size()];
        if (dtype == DType.FLOAT32) {
            data.duplicate().order(ByteOrder.nativeOrder()).asFloatBuffer().get(values);
            return values;
        }
        short[] bits = toShortArray();
        for (int i = 0; i < values.length; ++i) {
            values[i] = dtype == DType.FLOAT16 ? Float16Bits.float16ToFloat(bits[i])
                                               : Float16Bits.bfloat16ToFloat(bits[i]);
        }
        return values;
    }

    /** The 16-bit patterns of a float16 or bfloat16 tensor. */
    public short[] toShortArray() {
        if (dtype.size() != 2) {
            throw new IllegalStateException("toShortArray is for float16 and bfloat16 tensors, not " + dtype);
        }
        short[] bits = new short[size()];
        data.duplicate().order(ByteOrder.nativeOrder()).asShortBuffer().get(bits);
        return bits;
    }

    /** Fills a tensor of the given shapes for each graph output or input. */
    static HostTensor[] allocateAll(Tensor[] tensors) {
        HostTensor[] out = new HostTensor[tensors.length];
        for (int i = 0; i < tensors.length; ++i) {
            out[i] = zeros(tensors[i].dtype(), tensors[i].dims());
        }
        return out;
    }

    /** Refuses read-only buffers as outputs: native code would write into them. */
    static void requireWritable(HostTensor[] outputs) {
        for (HostTensor t : outputs) {
            if (t == null) {
                throw new NullPointerException("null output tensor");
            }
            if (t.data.isReadOnly()) {
                throw new IllegalArgumentException("an output tensor's buffer is read-only");
            }
        }
    }

    @Override
    public String toString() {
        return "HostTensor(shape=" + Arrays.toString(shape) + ", dtype=" + dtype + ")";
    }
}
