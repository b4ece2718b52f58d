/*
 * RMSNorm + linear in Java: the user's graph, the fused µGraph Mirage would find, a proof by
 * fingerprint that they are equivalent, both run on the reference executor, then the graph
 * superoptimized on the CPU backend and the kernel it returns run on the same data.
 *
 * Run (java's single-file launcher) inside `meson devenv -C build -w .` (README.md), which puts
 * the build tree's jar on CLASSPATH and its JNI library on LD_LIBRARY_PATH:
 *   java examples/java/RmsNormLinear.java
 */
import java.util.Random;
import org.yirage.Accumulator;
import org.yirage.Context;
import org.yirage.DType;
import org.yirage.Device;
import org.yirage.EquivalenceResult;
import org.yirage.HostTensor;
import org.yirage.Kernel;
import org.yirage.KernelGraph;
import org.yirage.SearchOptions;
import org.yirage.SearchResult;
import org.yirage.Tensor;
import org.yirage.ThreadblockGraph;

public class RmsNormLinear {
    static final int ROWS = 16, HIDDEN = 1024, COLS = 1536;

    static double relativeError(HostTensor got, HostTensor want) {
        float[] g = got.toFloatArray(), w = want.toFloatArray();
        double num = 0, den = 0;
        for (int i = 0; i < g.length; ++i) {
            num += Math.pow(g[i] - w[i], 2);
            den += Math.pow(w[i], 2);
        }
        return Math.sqrt(num / den);
    }

    static HostTensor random(Random rng, long rows, long cols) {
        float[] v = new float[(int) (rows * cols)];
        for (int i = 0; i < v.length; ++i) {
            v[i] = rng.nextFloat() * 2 - 1;
        }
        return HostTensor.fromFloats(v, DType.FLOAT16, rows, cols);
    }

    public static void main(String[] args) {
        try (KernelGraph g = new KernelGraph(); KernelGraph f = new KernelGraph()) {
            // The user's graph.
            Tensor x = g.newInput(new long[] {ROWS, HIDDEN}, DType.FLOAT16);
            Tensor w = g.newInput(new long[] {HIDDEN, COLS}, DType.FLOAT16);
            g.markOutput(g.matmul(g.rmsNorm(x, HIDDEN), w));

            // One fused kernel: blocks over 64 output columns, the loop over 64-wide hidden tiles
            // accumulating X·W and the RMS of X; one division after the loop.
            Tensor fx = f.newInput(new long[] {ROWS, HIDDEN}, DType.FLOAT16);
            Tensor fw = f.newInput(new long[] {HIDDEN, COLS}, DType.FLOAT16);
            try (ThreadblockGraph tb = new ThreadblockGraph(new long[] {COLS / 64, 1, 1}, 128, HIDDEN / 64)) {
                Tensor tx = tb.newInput(fx, new int[] {-1, -1, -1}, 1);
                Tensor tw = tb.newInput(fw, new int[] {1, -1, -1}, 0);
                Tensor acc = tb.accumulate(tb.matmul(tx, tw), Accumulator.SUM);
                Tensor rms = tb.accumulate(tx, Accumulator.RMS);
                tb.newOutput(tb.div(acc, rms), new int[] {1, -1, -1}, -1);
                f.markOutput(f.customized(tb)[0]);
            }
            EquivalenceResult proof = f.equivalent(g, 3);
            System.out.printf("fused vs unfused: equivalent=%b (%d trials, %.3f s)%n", proof.equivalent(),
                              proof.trials(), proof.seconds());

            Random rng = new Random(0);
            HostTensor xs = random(rng, ROWS, HIDDEN), ws = random(rng, HIDDEN, COLS);
            HostTensor want = g.runReference(xs, ws)[0];
            double fusedError = relativeError(f.runReference(xs, ws)[0], want);
            System.out.printf("reference outputs agree: relative error %.2e%n", fusedError);
            if (!proof.equivalent() || fusedError > 1e-3) {
                throw new AssertionError("the fused graph does not match");
            }

            // Superoptimize on the CPU backend and run the fastest correct kernel it found.
            try (Context context = Context.create()) {
                Device cpu = context.device("cpu", 0);
                try (SearchResult found = g.superoptimize(cpu, new SearchOptions().timeBudgetSeconds(20));
                     Kernel k = found.compileBest(cpu)) {
                    System.out.printf("superoptimized: %s, %.1f us on %s%n", found.candidates().get(0).description(),
                                      found.candidates().get(0).measuredSeconds() * 1e6, cpu.info().name());
                    double error = relativeError(k.run(xs, ws)[0], want);
                    System.out.printf("kernel output vs reference: relative error %.2e%n", error);
                    if (error > 5e-3) {
                        throw new AssertionError("the kernel's output is off");
                    }
                }
            }
        }
    }
}
