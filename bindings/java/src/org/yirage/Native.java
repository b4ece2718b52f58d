package org.yirage;

/** Small helpers over the SWIG layer (org.yirage.jni), which loads the JNI library itself. */
final class Native {
    private Native() {}

    /** The value a C call left in its out-parameter {@code out[0]}, or the status's exception. */
    static long checked(int status, long[] out) {
        Status.check(status);
        return out[0];
    }
}
