package org.yirage;

/**
 * A device: its backend, index and name, its target properties, and where its tensors live
 * (DLPack device type: 1 is host memory).
 */
public record DeviceInfo(String backend, int index, String name, TargetProperties target,
                         int dlpackDeviceType, int dlpackDeviceId) {
    /** True when its tensors are host memory, so {@link Kernel#run} can take HostTensors. */
    public boolean hostMemory() {
        return dlpackDeviceType == 1;
    }
}
