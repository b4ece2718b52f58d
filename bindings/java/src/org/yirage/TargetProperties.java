package org.yirage;

import org.yirage.jni.yirage_target_kind;
import org.yirage.jni.yirage_target_properties;

/** What yirage knows about a device: the properties the search and the cost model use. */
public record TargetProperties(String name, boolean gpu, long computeUnits, long maxThreadsPerBlock,
                               long sharedMemoryPerBlock, long memoryBytes, double memoryBandwidth,
                               double peakFlopsFloat16, double peakFlopsFloat32,
                               double launchOverheadSeconds) {
    static TargetProperties of(yirage_target_properties t) {
        return new TargetProperties(t.getName(), t.getKind() == yirage_target_kind.YIRAGE_TARGET_GPU,
                                    t.getCompute_units(), t.getMax_threads_per_block(),
                                    t.getShared_memory_per_block(), t.getMemory_bytes(),
                                    t.getMemory_bandwidth(), t.getPeak_flops_float16(),
                                    t.getPeak_flops_float32(), t.getLaunch_overhead_seconds());
    }
}
