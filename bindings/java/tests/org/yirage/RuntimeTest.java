package org.yirage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Contexts, devices, compiled kernels and the superoptimizer on the CPU backend. */
class RuntimeTest {
    /** RMSNorm then a matmul, small enough to search in seconds. */
    static KernelGraph smallGraph() {
        KernelGraph g = new KernelGraph();
        Tensor x = g.newInput(new long[] {4, 256}, DType.FLOAT32);
        Tensor w = g.newInput(new long[] {256, 128}, DType.FLOAT32);
        g.markOutput(g.matmul(g.rmsNorm(x, 256), w));
        return g;
    }

    static HostTensor[] inputs() {
        return new HostTensor[] {HostTensor.of(GraphsTest.values(4 * 256, 11), 4, 256),
                                 HostTensor.of(GraphsTest.values(256 * 128, 12), 256, 128)};
    }

    static double relativeError(HostTensor got, HostTensor want) {
        float[] g = got.toFloatArray(), w = want.toFloatArray();
        double num = 0, den = 0;
        for (int i = 0; i < g.length; ++i) {
            num += (g[i] - w[i]) * (double) (g[i] - w[i]);
            den += w[i] * (double) w[i];
        }
        return Math.sqrt(num / den);
    }

    @Test
    void backendsAndDevices() {
        try (Context context = Context.create()) {
            List<BackendInfo> backends = context.backends();
            BackendInfo cpu = backends.stream().filter(b -> b.name().equals("cpu")).findFirst().orElseThrow();
            assertTrue(cpu.numDevices() >= 1);
            assertEquals("", cpu.unavailableReason());
            DeviceInfo info = context.device("cpu", 0).info();
            assertEquals("cpu", info.backend());
            assertTrue(info.hostMemory());
            assertTrue(info.target().computeUnits() >= 1);
            YirageException.NotFound missing =
                    assertThrows(YirageException.NotFound.class, () -> context.device("cpu", 99));
            assertFalse(missing.nativeMessage().isEmpty());
            assertThrows(YirageException.NotFound.class, () -> context.device("no-such-backend", 0));
            assertTrue(context.loadErrors() != null);
            Device device = context.device("cpu", 0);
            context.close();
            assertThrows(IllegalStateException.class, device::info);
        }
        assertThrows(YirageException.NotFound.class,
                     () -> Context.builder().plugin(Path.of("/nonexistent/libyirage-backend-x.so")).build());
    }

    @Test
    void compileAndRunMatchTheReference() {
        try (Context context = Context.create(); KernelGraph g = smallGraph()) {
            Device device = context.device("cpu", 0);
            HostTensor want = g.runReference(inputs())[0];
            try (Kernel k = g.compile(device)) {
                HostTensor got = k.run(inputs())[0];
                assertTrue(relativeError(got, want) < 1e-5, "relative error " + relativeError(got, want));
                Measurement m = k.measure(1, 1, 3);
                assertTrue(m.correct(), m.error());
                assertTrue(m.medianSeconds() > 0);
                Measurement flushed = k.measure(1, 1, 3, 1 << 20);
                assertTrue(flushed.correct(), flushed.error());
                assertTrue(flushed.medianSeconds() > 0);
                assertThrows(YirageException.InvalidArgument.class, () -> k.measure(1, 1, 3, 1L << 41));
                // Wrong inputs are refused with the library's message.
                YirageException e = assertThrows(YirageException.InvalidArgument.class,
                        () -> k.run(HostTensor.of(new float[4], 2, 2), inputs()[1]));
                assertFalse(e.nativeMessage().isEmpty());
                k.close();
                assertThrows(IllegalStateException.class, () -> k.run(inputs()));
            }
        }
    }

    @Test
    void superoptimizeAndRun() {
        try (Context context = Context.create(); KernelGraph g = smallGraph()) {
            Device device = context.device("cpu", 0);
            SearchOptions options = new SearchOptions().timeBudgetSeconds(20).profileTopK(2);
            try (SearchResult found = g.superoptimize(device, options)) {
                assertTrue(found.stats().states() > 0 && found.stats().seconds() > 0);
                assertEquals(0, found.stats().unbuildable(), "the CPU backend builds every candidate");
                assertFalse(found.candidates().isEmpty());
                assertTrue(found.candidates().get(0).measuredSeconds() > 0);
                assertFalse(found.profiled().isEmpty());
                try (KernelGraph best = found.graph(0)) {
                    assertTrue(best.equivalent(g, 2).equivalent());
                }
                try (Kernel k = found.compileBest(device)) {
                    HostTensor want = g.runReference(inputs())[0];
                    HostTensor got = k.run(inputs())[0];
                    assertTrue(relativeError(got, want) < 1e-4);
                }
            }
            assertThrows(YirageException.InvalidArgument.class,
                         () -> g.superoptimize(device, new SearchOptions().timeBudgetSeconds(-1)));
        }
    }

    @Test
    void compileBestSaysWhyNothingWasCorrect() {
        // exp(4096·x) overflows float16 even for x near 1/64, the narrowest inputs the check
        // tries: the graph cannot match the float64 reference on any backend, and a search too
        // short to verify a candidate has nothing else to offer.
        try (Context context = Context.create(); KernelGraph g = new KernelGraph()) {
            Device device = context.device("cpu", 0);
            Tensor x = g.newInput(new long[] {4, 64}, DType.FLOAT16);
            g.markOutput(g.exp(g.mulScalar(x, 4096.0)));
            try (SearchResult found = g.superoptimize(device, new SearchOptions().timeBudgetSeconds(0.001))) {
                assertTrue(found.candidates().isEmpty());
                YirageException.NotFound e =
                        assertThrows(YirageException.NotFound.class, () -> found.compileBest(device));
                assertTrue(e.getMessage().contains("the input graph, unchanged: ")
                           && e.getMessage().contains("overflows float16"), e.getMessage());
            }
        }
    }
}
