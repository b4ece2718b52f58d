package org.yirage;

import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_status;

/** The C library's statuses (yirage_status); values are stable. */
public enum Status {
    OK(yirage_status.YIRAGE_OK),
    INVALID_ARGUMENT(yirage_status.YIRAGE_ERROR_INVALID_ARGUMENT),
    UNSUPPORTED(yirage_status.YIRAGE_ERROR_UNSUPPORTED),
    NOT_FOUND(yirage_status.YIRAGE_ERROR_NOT_FOUND),
    OUT_OF_MEMORY(yirage_status.YIRAGE_ERROR_OUT_OF_MEMORY),
    BACKEND(yirage_status.YIRAGE_ERROR_BACKEND),
    VERSION_MISMATCH(yirage_status.YIRAGE_ERROR_VERSION_MISMATCH),
    CORRUPT_DATA(yirage_status.YIRAGE_ERROR_CORRUPT_DATA),
    CANCELLED(yirage_status.YIRAGE_ERROR_CANCELLED),
    TIMEOUT(yirage_status.YIRAGE_ERROR_TIMEOUT),
    INTERNAL(yirage_status.YIRAGE_ERROR_INTERNAL),
    /** A value this binding does not know (a newer library). */
    UNKNOWN(-1);

    final int code;

    Status(int code) {
        this.code = code;
    }

    /** The status of a C return value. */
    static Status of(int code) {
        for (Status s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return UNKNOWN;
    }

    /**
     * Throws the YirageException subclass of a non-OK status, with the calling thread's last
     * error message (JNI calls run on the calling Java thread, so it is this call's message).
     */
    static void check(int code) {
        if (code != yirage_status.YIRAGE_OK) {
            throw YirageException.of(of(code), YirageNative.yirage_last_error_message());
        }
    }
}
