package org.yirage;

/**
 * A yirage call failed. Carries the C library's status and message; each status has its own
 * subclass, e.g. {@code catch (YirageException.NotFound e)}. Unchecked, like the JDK's
 * IllegalArgumentException: almost every call can fail for bad input, and callers catch what
 * they can handle.
 */
public class YirageException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final Status status;

    YirageException(Status status, String message) {
        super(status.name() + ": " + message);
        this.status = status;
        this.nativeMessage = message;
    }

    private final String nativeMessage;

    /** The status of the failed call. */
    public Status status() {
        return status;
    }

    /** The C library's message, without the status prefix. */
    public String nativeMessage() {
        return nativeMessage;
    }

    static YirageException of(Status status, String message) {
        switch (status) {
            case INVALID_ARGUMENT: return new InvalidArgument(message);
            case UNSUPPORTED: return new Unsupported(message);
            case NOT_FOUND: return new NotFound(message);
            case OUT_OF_MEMORY: return new OutOfMemory(message);
            case BACKEND: return new Backend(message);
            case VERSION_MISMATCH: return new VersionMismatch(message);
            case CORRUPT_DATA: return new CorruptData(message);
            case CANCELLED: return new Cancelled(message);
            case TIMEOUT: return new Timeout(message);
            case INTERNAL: return new Internal(message);
            default: return new YirageException(status, message);
        }
    }

    /** A bad handle, shape, dtype, option or null. */
    public static final class InvalidArgument extends YirageException {
        private static final long serialVersionUID = 1L;
        InvalidArgument(String message) { super(Status.INVALID_ARGUMENT, message); }
    }

    /** Valid, but not implemented for this case or target. */
    public static final class Unsupported extends YirageException {
        private static final long serialVersionUID = 1L;
        Unsupported(String message) { super(Status.UNSUPPORTED, message); }
    }

    /** A named thing (file, backend, device) does not exist. */
    public static final class NotFound extends YirageException {
        private static final long serialVersionUID = 1L;
        NotFound(String message) { super(Status.NOT_FOUND, message); }
    }

    /** A host or device allocation failed. */
    public static final class OutOfMemory extends YirageException {
        private static final long serialVersionUID = 1L;
        OutOfMemory(String message) { super(Status.OUT_OF_MEMORY, message); }
    }

    /** A backend or driver call failed. */
    public static final class Backend extends YirageException {
        private static final long serialVersionUID = 1L;
        Backend(String message) { super(Status.BACKEND, message); }
    }

    /** An incompatible library, plugin or file version. */
    public static final class VersionMismatch extends YirageException {
        private static final long serialVersionUID = 1L;
        VersionMismatch(String message) { super(Status.VERSION_MISMATCH, message); }
    }

    /** A file or buffer failed verification. */
    public static final class CorruptData extends YirageException {
        private static final long serialVersionUID = 1L;
        CorruptData(String message) { super(Status.CORRUPT_DATA, message); }
    }

    /** The caller cancelled. */
    public static final class Cancelled extends YirageException {
        private static final long serialVersionUID = 1L;
        Cancelled(String message) { super(Status.CANCELLED, message); }
    }

    /** A time budget ran out. */
    public static final class Timeout extends YirageException {
        private static final long serialVersionUID = 1L;
        Timeout(String message) { super(Status.TIMEOUT, message); }
    }

    /** A bug in yirage; please report it with the message. */
    public static final class Internal extends YirageException {
        private static final long serialVersionUID = 1L;
        Internal(String message) { super(Status.INTERNAL, message); }
    }
}
