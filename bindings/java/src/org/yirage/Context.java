package org.yirage;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_backend_info;

/**
 * The loaded backend plugins and their devices. Devices belong to the context: they are
 * unusable once it is closed. Kernels keep what they need alive, so they outlive it.
 */
public final class Context implements AutoCloseable {
    private long handle;

    private Context(long handle) {
        this.handle = handle;
    }

    /** Plugins from $YIRAGE_BACKEND_PATH and the install's plugin folder. */
    public static Context create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options of a context. */
    public static final class Builder {
        private final List<String> plugins = new ArrayList<>();
        private boolean searchDefaultPaths = true;
        private String cacheDir;

        private Builder() {}

        /** A plugin file to load first; any failure to load it fails build(). */
        public Builder plugin(Path path) {
            plugins.add(path.toString());
            return this;
        }

        /** Whether to also scan $YIRAGE_BACKEND_PATH and the install folder (default true). */
        public Builder searchDefaultPaths(boolean search) {
            searchDefaultPaths = search;
            return this;
        }

        /** The compiled-kernel cache root for plugins (default: theirs). */
        public Builder cacheDir(Path path) {
            cacheDir = path.toString();
            return this;
        }

        public Context build() {
            long[] out = new long[1];
            int status = YirageNative.yirage_java_context_create(plugins.toArray(new String[0]),
                                                                 searchDefaultPaths ? 1 : 0, cacheDir, out);
            return new Context(Native.checked(status, out));
        }
    }

    long handle() {
        if (handle == 0) {
            throw new IllegalStateException("Context is closed");
        }
        return handle;
    }

    public boolean isClosed() {
        return handle == 0;
    }

    @Override
    public void close() {
        if (handle != 0) {
            YirageNative.yirage_context_release(handle);
            handle = 0;
        }
    }

    /** The loaded backends. */
    public List<BackendInfo> backends() {
        long[] n = new long[1];
        Status.check(YirageNative.yirage_context_num_backends(handle(), n));
        List<BackendInfo> list = new ArrayList<>();
        for (long i = 0; i < n[0]; ++i) {
            yirage_backend_info info = new yirage_backend_info();
            try {
                Status.check(YirageNative.yirage_context_backend_info(handle(), i, info));
                list.add(new BackendInfo(info.getName(), info.getVersion(), info.getPath(),
                                         info.getNum_devices(), info.getUnavailable_reason()));
            } finally {
                info.delete();
            }
        }
        return list;
    }

    /** Plugins skipped while scanning folders, one line each ("" if none). */
    public String loadErrors() {
        String[] text = new String[1];
        Status.check(YirageNative.yirage_context_load_errors(handle(), text));
        return text[0] == null ? "" : text[0];
    }

    /** Device {@code index} of a backend; NotFound lists what exists or why there is none. */
    public Device device(String backend, int index) {
        long[] out = new long[1];
        return new Device(this, Native.checked(YirageNative.yirage_context_get_device(handle(), backend, index, out),
                                               out));
    }
}
