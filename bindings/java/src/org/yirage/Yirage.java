package org.yirage;

import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_target_properties;

/** Library-wide queries. */
public final class Yirage {
    private Yirage() {}

    /** The library's release version, e.g. "0.1.0". */
    public static String version() {
        return YirageNative.yirage_version();
    }

    /** The loaded library's ABI version as {major, minor}. */
    public static int[] abiVersion() {
        long v = YirageNative.yirage_abi_version();
        return new int[] {(int) (v >>> 16), (int) (v & 0xffff)};
    }

    /** A built-in target's properties: "cpu" (this host), "h100", "h200", "a100", "mi300x". */
    public static TargetProperties target(String name) {
        yirage_target_properties t = new yirage_target_properties();
        try {
            Status.check(YirageNative.yirage_target_builtin(name, t));
            return TargetProperties.of(t);
        } finally {
            t.delete();
        }
    }
}
