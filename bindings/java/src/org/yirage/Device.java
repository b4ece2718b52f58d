package org.yirage;

import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_device_info;
import org.yirage.jni.yirage_target_properties;

/** A device of a backend; valid while its context is open. */
public final class Device {
    private final Context context;
    private final long handle;

    Device(Context context, long handle) {
        this.context = context;
        this.handle = handle;
    }

    long handle() {
        if (context.isClosed()) {
            throw new IllegalStateException("the device's Context is closed");
        }
        return handle;
    }

    public DeviceInfo info() {
        yirage_device_info info = new yirage_device_info();
        try {
            Status.check(YirageNative.yirage_device_get_info(handle(), info));
            yirage_target_properties target = info.getTarget();
            return new DeviceInfo(info.getBackend(), info.getIndex(), info.getName(), TargetProperties.of(target),
                                  info.getDlpack_device_type(), info.getDlpack_device_id());
        } finally {
            info.delete();
        }
    }

    @Override
    public String toString() {
        DeviceInfo i = info();
        return "Device(" + i.backend() + ":" + i.index() + ", " + i.name() + ")";
    }
}
