package org.yirage;

import org.yirage.jni.yirage_dtype;

/** Element types of tensors. Kernels accumulate in float32; the reference executor in float64. */
public enum DType {
    FLOAT16(yirage_dtype.YIRAGE_FLOAT16, 2),
    BFLOAT16(yirage_dtype.YIRAGE_BFLOAT16, 2),
    FLOAT32(yirage_dtype.YIRAGE_FLOAT32, 4);

    final int code;
    private final int size;

    DType(int code, int size) {
        this.code = code;
        this.size = size;
    }

    /** Bytes per element. */
    public int size() {
        return size;
    }

    static DType of(int code) {
        for (DType d : values()) {
            if (d.code == code) {
                return d;
            }
        }
        throw new IllegalStateException("the library returned an unknown dtype " + code);
    }
}
