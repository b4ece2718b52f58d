package org.yirage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.yirage.jni.YirageNative;
import org.yirage.jni.yirage_search_candidate_info;
import org.yirage.jni.yirage_search_profile_record;
import org.yirage.jni.yirage_search_stats;

/**
 * The outcome of {@link KernelGraph#superoptimize}: verified candidates, best first (fastest
 * measured when the search profiled on a device), with statistics and profiling records.
 */
public final class SearchResult implements AutoCloseable {
    private long handle;
    private final boolean timedOut;
    private final List<Candidate> candidates;
    private final List<ProfileRecord> profiled;
    private final SearchStats stats;

    SearchResult(long handle, boolean timedOut) {
        this.handle = handle;
        this.timedOut = timedOut;
        try {
            this.stats = readStats(handle);
            this.candidates = Collections.unmodifiableList(readCandidates(handle));
            this.profiled = Collections.unmodifiableList(readProfiled(handle));
        } catch (RuntimeException e) {
            YirageNative.yirage_search_result_release(handle);
            throw e;
        }
    }

    private static SearchStats readStats(long handle) {
        yirage_search_stats s = new yirage_search_stats();
        try {
            Status.check(YirageNative.yirage_search_result_stats(handle, s));
            return new SearchStats(s.getStates(), s.getCandidates(), s.getFingerprint_checks(), s.getZ3_queries(),
                                   s.getZ3_seconds(), s.getFirst_fused_seconds(), s.getSeconds(),
                                   s.getFrom_cache() != 0, s.getUnbuildable());
        } finally {
            s.delete();
        }
    }

    private static List<Candidate> readCandidates(long handle) {
        long[] n = new long[1];
        Status.check(YirageNative.yirage_search_result_num_candidates(handle, n));
        List<Candidate> list = new ArrayList<>();
        for (long i = 0; i < n[0]; ++i) {
            yirage_search_candidate_info info = new yirage_search_candidate_info();
            try {
                Status.check(YirageNative.yirage_search_result_candidate(handle, i, null, info));
                list.add(new Candidate(info.getDescription(), info.getEstimated_seconds(),
                                       (int) info.getVerified_trials(), info.getMeasured_seconds()));
            } finally {
                info.delete();
            }
        }
        return list;
    }

    private static List<ProfileRecord> readProfiled(long handle) {
        long[] n = new long[1];
        Status.check(YirageNative.yirage_search_result_num_profiled(handle, n));
        List<ProfileRecord> list = new ArrayList<>();
        for (long i = 0; i < n[0]; ++i) {
            yirage_search_profile_record r = new yirage_search_profile_record();
            try {
                Status.check(YirageNative.yirage_search_result_profiled(handle, i, r));
                list.add(new ProfileRecord(r.getDescription(), r.getEstimated_seconds(), r.getMeasured_seconds(),
                                           r.getRelative_error(), r.getKept() != 0, r.getError()));
            } finally {
                r.delete();
            }
        }
        return list;
    }

    /** True when the budget ran out: the candidates are what was verified before it did. */
    public boolean timedOut() {
        return timedOut;
    }

    public List<Candidate> candidates() {
        return candidates;
    }

    public List<ProfileRecord> profiled() {
        return profiled;
    }

    public SearchStats stats() {
        return stats;
    }

    /** Candidate {@code index}'s graph, a new graph the caller closes. */
    public KernelGraph graph(int index) {
        if (handle == 0) {
            throw new IllegalStateException("SearchResult is closed");
        }
        long[] out = new long[1];
        return KernelGraph.adopt(Native.checked(YirageNative.yirage_search_result_candidate(handle, index, out, null),
                                                out));
    }

    /** The best candidate compiled for a device; NotFound when the search verified nothing. */
    public Kernel compileBest(Device device) {
        if (candidates.isEmpty()) {
            // What was measured, and why each was dropped (the input graph is always measured).
            StringBuilder why = new StringBuilder();
            for (ProfileRecord r : profiled) {
                why.append(why.length() == 0 ? " (" : "; ").append(r.description()).append(": ").append(r.error());
            }
            if (why.length() > 0) {
                why.append(')');
            }
            throw YirageException.of(Status.NOT_FOUND, "superoptimize: no correct candidate was found"
                                                           + (timedOut ? " within the budget" : "") + why);
        }
        try (KernelGraph best = graph(0)) {
            return best.compile(device);
        }
    }

    @Override
    public void close() {
        if (handle != 0) {
            YirageNative.yirage_search_result_release(handle);
            handle = 0;
        }
    }
}
