package org.yirage;

import java.nio.file.Path;
import org.yirage.jni.yirage_search_options;

/** Options of {@link KernelGraph#superoptimize}; unset fields keep the C defaults (docs/search.md). */
public final class SearchOptions {
    private double timeBudgetSeconds = 60;
    private long threads = 0;
    private long seed = 1;
    private long maxCandidates = 4;
    private long profileTopK = 4;
    private long profileRepeats = 10;
    private Path cacheDir;

    /** Seconds for the whole search (> 0): enumeration stops at 80%, verification at 100%. */
    public SearchOptions timeBudgetSeconds(double seconds) {
        timeBudgetSeconds = seconds;
        return this;
    }

    /** Search threads; 0: all cores. */
    public SearchOptions threads(int n) {
        threads = n;
        return this;
    }

    /** Fingerprint inputs derive from it. */
    public SearchOptions seed(long value) {
        seed = value;
        return this;
    }

    /** Verified candidates returned (>= 1). */
    public SearchOptions maxCandidates(int n) {
        maxCandidates = n;
        return this;
    }

    /** Verified candidates profiled on the device (the input graph is always measured too). */
    public SearchOptions profileTopK(int n) {
        profileTopK = n;
        return this;
    }

    /** Timed runs per profiled candidate. */
    public SearchOptions profileRepeats(int n) {
        profileRepeats = n;
        return this;
    }

    /** A folder for cached results (created if missing); null: no cache. */
    public SearchOptions cacheDir(Path path) {
        cacheDir = path;
        return this;
    }

    String cacheDirString() {
        return cacheDir == null ? null : cacheDir.toString();
    }

    /** The C struct; the caller deletes it. */
    yirage_search_options toNative() {
        yirage_search_options o = new yirage_search_options();
        o.setTime_budget_seconds(timeBudgetSeconds);
        o.setThreads(threads);
        o.setSeed(seed);
        o.setMax_candidates(maxCandidates);
        o.setProfile_top_k(profileTopK);
        o.setProfile_repeats(profileRepeats);
        return o;
    }
}
