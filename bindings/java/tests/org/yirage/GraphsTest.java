package org.yirage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The binding against the library: the six benchmark graphs, reference runs checked against
 * naive Java code, a µGraph and equivalence, threads, files, tensors and errors.
 */
class GraphsTest {
    static Tensor input(KernelGraph g, long... dims) {
        return g.newInput(dims, DType.FLOAT32);
    }

    /** The six benchmark graphs (benchmarks/README.md) at b = 1. */
    static KernelGraph benchmark(String name) {
        KernelGraph g = new KernelGraph();
        Tensor out;
        switch (name) {
            case "gqa":
            case "qknorm": {
                Tensor q = input(g, 2, 256, 64);
                Tensor k = input(g, 2, 64, 4096);
                Tensor v = input(g, 2, 4096, 64);
                if (name.equals("qknorm")) {
                    q = g.rmsNorm(q, 64);
                }
                Tensor e = g.exp(g.matmul(q, k));
                out = g.matmul(g.div(e, g.reduction(e, 2)), v);
                break;
            }
            case "rmsnorm_linear": {
                Tensor x = input(g, 2, 4096);
                Tensor w = input(g, 4096, 6144);
                out = g.matmul(g.rmsNorm(x, 4096), w);
                break;
            }
            case "lora": {
                Tensor x = input(g, 16, 256);
                Tensor w = input(g, 256, 4096);
                Tensor a = input(g, 256, 16);
                Tensor b = input(g, 16, 4096);
                out = g.add(g.matmul(x, w), g.matmul(g.matmul(x, a), b));
                break;
            }
            case "gated_mlp": {
                Tensor x = input(g, 8, 4096);
                Tensor w1 = input(g, 4096, 4096);
                Tensor w2 = input(g, 4096, 4096);
                out = g.mul(g.silu(g.matmul(x, w1)), g.matmul(x, w2));
                break;
            }
            case "ntrans": {
                Tensor h = input(g, 8, 4096);
                Tensor x = input(g, 8, 4096);
                Tensor alpha = input(g, 8, 4096);
                Tensor d = g.sub(g.rmsNorm(h, 4096), x);
                out = g.rmsNorm(g.add(x, g.mul(alpha, d)), 4096);
                break;
            }
            default:
                throw new IllegalArgumentException(name);
        }
        g.markOutput(out);
        return g;
    }

    @ParameterizedTest
    @ValueSource(strings = {"gqa", "qknorm", "rmsnorm_linear", "lora", "gated_mlp", "ntrans"})
    void buildsTheBenchmarkGraphs(String name) {
        long[] expected = switch (name) {
            case "gqa", "qknorm" -> new long[] {2, 256, 64};
            case "rmsnorm_linear" -> new long[] {2, 6144};
            case "lora" -> new long[] {16, 4096};
            default -> new long[] {8, 4096};
        };
        try (KernelGraph g = benchmark(name)) {
            assertArrayEquals(expected, g.outputs()[0].dims());
            assertEquals(DType.FLOAT32, g.outputs()[0].dtype());
            assertTrue(g.numOperators() > g.inputs().length);
            assertTrue(g.describe().contains("matmul") || name.equals("ntrans"), g.describe());
            assertTrue(g.estimateCost("h100") > 0);
        }
    }

    static float[] values(int n, int seed) {
        float[] v = new float[n];
        for (int i = 0; i < n; ++i) {
            v[i] = (float) ((Integer.toUnsignedLong(i * -1640531535 + seed) >>> 8) % 2001) / 1000f - 1f;
        }
        return v;
    }

    @Test
    void referenceRunMatchesNaiveCode() {
        int m = 4, k = 32, n = 16;
        try (KernelGraph g = new KernelGraph()) {
            Tensor x = input(g, m, k), w1 = input(g, k, n), w2 = input(g, k, n);
            g.markOutput(g.mul(g.silu(g.matmul(x, w1)), g.matmul(x, w2)));
            float[] xv = values(m * k, 1), w1v = values(k * n, 2), w2v = values(k * n, 3);
            float[] got = g.runReference(HostTensor.of(xv, m, k), HostTensor.of(w1v, k, n),
                                         HostTensor.of(w2v, k, n))[0].toFloatArray();
            for (int i = 0; i < m; ++i) {
                for (int j = 0; j < n; ++j) {
                    double a = 0, b = 0;
                    for (int p = 0; p < k; ++p) {
                        a += (double) xv[i * k + p] * w1v[p * n + j];
                        b += (double) xv[i * k + p] * w2v[p * n + j];
                    }
                    double want = a / (1 + Math.exp(-a)) * b;
                    assertEquals(want, got[i * n + j], 1e-5 * (1 + Math.abs(want)));
                }
            }
        }
    }

    @Test
    void float16AndWrappedBuffers() {
        try (KernelGraph g = new KernelGraph()) {
            Tensor x = g.newInput(new long[] {2, 3}, DType.FLOAT16);
            g.markOutput(g.mulScalar(x, 2.0));
            float[] xv = {0.5f, -1f, 3f, 65504f / 4, 1e-7f, -0f};
            // The caller's direct buffer, from position 4, without a copy.
            ByteBuffer raw = ByteBuffer.allocateDirect(4 + 12).order(ByteOrder.nativeOrder());
            raw.position(4);
            for (float f : xv) {
                raw.putShort(Float16Bits.floatToFloat16(f));
            }
            raw.position(4);
            HostTensor in = HostTensor.wrap(raw, DType.FLOAT16, 2, 3);
            HostTensor out = HostTensor.zeros(DType.FLOAT16, 2, 3);
            g.runReference(new HostTensor[] {in}, new HostTensor[] {out});
            float[] got = out.toFloatArray();
            for (int i = 0; i < xv.length; ++i) {
                float want = Float16Bits.float16ToFloat(Float16Bits.floatToFloat16(
                        Float16Bits.float16ToFloat(Float16Bits.floatToFloat16(xv[i])) * 2));
                assertEquals(want, got[i], 0f, "element " + i);
            }
            assertEquals(2 * 16376f, got[3]);
            assertThrows(IllegalArgumentException.class, () -> HostTensor.wrap(raw, DType.FLOAT16, 2, 4));
            assertThrows(IllegalArgumentException.class,
                         () -> HostTensor.wrap(ByteBuffer.allocate(12), DType.FLOAT16, 2, 3));
        }
    }

    @Test
    void float16BitsRoundToNearestEven() {
        assertEquals(0x3c00, Float16Bits.floatToFloat16(1f));
        assertEquals(0x3c00, Float16Bits.floatToFloat16(1f + 0x1p-11f)); // tie: even mantissa
        assertEquals(0x3c02, Float16Bits.floatToFloat16(1f + 3 * 0x1p-11f)); // tie: up to even
        assertEquals(0x7c00, Float16Bits.floatToFloat16(65520f));
        assertEquals(0x7bff, Float16Bits.floatToFloat16(65519f));
        assertEquals(0x0001, Float16Bits.floatToFloat16(0x1p-24f));
        assertEquals(0x0000, Float16Bits.floatToFloat16(0x1p-25f)); // tie to even zero
        assertEquals(0x0002, Float16Bits.floatToFloat16(3 * 0x1p-25f)); // tie to even 2
        assertTrue(Float.isNaN(Float16Bits.float16ToFloat(Float16Bits.floatToFloat16(Float.NaN))));
        for (int bits = 0; bits < 0x10000; ++bits) {
            if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0) {
                continue; // NaN payloads
            }
            short h = (short) bits;
            assertEquals(h, Float16Bits.floatToFloat16(Float16Bits.float16ToFloat(h)), "bits " + bits);
        }
        assertEquals((short) 0x3f80, Float16Bits.floatToBFloat16(1f));
        assertEquals(1f, Float16Bits.bfloat16ToFloat((short) 0x3f80));
        assertEquals((short) 0x3f80, Float16Bits.floatToBFloat16(Float.intBitsToFloat(0x3f808000))); // tie
        assertEquals((short) 0x3f82, Float16Bits.floatToBFloat16(Float.intBitsToFloat(0x3f818000)));
    }

    @Test
    void outputWrittenAsAnotherDType() {
        try (KernelGraph g = new KernelGraph();
             ThreadblockGraph tb = new ThreadblockGraph(new long[] {1, 1, 1}, 128, 4)) {
            Tensor x = g.newInput(new long[] {4, 64}, DType.FLOAT16);
            Tensor acc = tb.accumulate(tb.newInput(x, new int[] {-1, -1, -1}, 1), Accumulator.SUM);
            tb.newOutput(acc, new int[] {-1, -1, -1}, -1, DType.FLOAT32);
            assertEquals(DType.FLOAT32, g.customized(tb)[0].dtype());
        }
    }

    /** RMSNorm fused into the matmul as one customized operator, and the plain graph. */
    static KernelGraph[] fusedRmsnormLinear() {
        KernelGraph fused = new KernelGraph();
        Tensor x = input(fused, 4, 256);
        Tensor w = input(fused, 256, 128);
        try (ThreadblockGraph tb = new ThreadblockGraph(new long[] {2, 1, 1}, 128, 4)) {
            Tensor tx = tb.newInput(x, new int[] {-1, -1, -1}, 1);
            Tensor tw = tb.newInput(w, new int[] {1, -1, -1}, 0);
            Tensor acc = tb.accumulate(tb.matmul(tx, tw), Accumulator.SUM);
            Tensor rms = tb.accumulate(tx, Accumulator.RMS);
            tb.newOutput(tb.div(acc, rms), new int[] {1, -1, -1}, -1);
            assertTrue(tb.sharedMemoryBytes() > 0);
            fused.markOutput(fused.customized(tb)[0]);
        }
        KernelGraph plain = new KernelGraph();
        Tensor px = input(plain, 4, 256);
        Tensor pw = input(plain, 256, 128);
        plain.markOutput(plain.matmul(plain.rmsNorm(px, 256), pw));
        return new KernelGraph[] {fused, plain};
    }

    @Test
    void ugraphIsEquivalentAndRunsTheSameOnTwoThreads() throws Exception {
        KernelGraph[] graphs = fusedRmsnormLinear();
        try (KernelGraph fused = graphs[0]; KernelGraph plain = graphs[1]) {
            EquivalenceResult r = fused.equivalent(plain, 3);
            assertTrue(r.equivalent(), r.reason());
            assertEquals(3, r.trials());
            HostTensor[] in = {HostTensor.of(values(4 * 256, 4), 4, 256), HostTensor.of(values(256 * 128, 5), 256, 128)};
            CompletableFuture<HostTensor[]> a = CompletableFuture.supplyAsync(() -> fused.runReference(in));
            CompletableFuture<HostTensor[]> b = CompletableFuture.supplyAsync(() -> plain.runReference(in));
            float[] x = a.get()[0].toFloatArray(), y = b.get()[0].toFloatArray();
            for (int i = 0; i < x.length; ++i) {
                assertEquals(y[i], x[i], 1e-5 * (1 + Math.abs(y[i])));
            }
            // A different graph is not equivalent, with the reason.
            try (KernelGraph other = new KernelGraph()) {
                Tensor ox = input(other, 4, 256);
                Tensor ow = input(other, 256, 128);
                other.markOutput(other.matmul(ox, ow));
                EquivalenceResult no = other.equivalent(plain, 2);
                assertFalse(no.equivalent());
                assertFalse(no.reason().isEmpty());
            }
        }
    }

    @Test
    void filesAndBytes() throws Exception {
        KernelGraph[] graphs = fusedRmsnormLinear();
        graphs[1].close();
        try (KernelGraph fused = graphs[0]) {
            byte[] bytes = fused.toBytes(GraphFormat.BINARY);
            try (KernelGraph back = KernelGraph.fromBytes(bytes)) {
                assertArrayEquals(bytes, back.toBytes(GraphFormat.BINARY));
            }
            byte[] json = fused.toBytes(GraphFormat.JSON);
            assertEquals('{', json[0]);
            Path path = Files.createTempFile("yirage_java", ".json");
            try {
                fused.save(path);
                try (KernelGraph loaded = KernelGraph.load(path)) {
                    assertArrayEquals(bytes, loaded.toBytes(GraphFormat.BINARY));
                }
            } finally {
                Files.delete(path);
            }
            Path examples = Path.of(System.getenv().getOrDefault("YIRAGE_EXAMPLES", "examples"));
            try (KernelGraph ntrans = KernelGraph.load(examples.resolve("graphs/ntrans.json"))) {
                assertEquals(3, ntrans.inputs().length);
            }
            // The picture of a fused graph draws its µGraph as a cluster with its maps.
            try (KernelGraph drawn = KernelGraph.load(examples.resolve("graphs/rmsnorm_linear_fused.json"))) {
                String dot = drawn.toDot();
                assertTrue(dot.startsWith("digraph") && dot.contains("subgraph cluster_") && dot.contains("imap"), dot);
            }
            byte[] half = java.util.Arrays.copyOf(bytes, bytes.length / 2);
            YirageException.CorruptData corrupt =
                    assertThrows(YirageException.CorruptData.class, () -> KernelGraph.fromBytes(half));
            assertEquals(Status.CORRUPT_DATA, corrupt.status());
            assertThrows(YirageException.NotFound.class, () -> KernelGraph.load(examples.resolve("missing.yrg")));
        }
    }

    @Test
    void splitChunkConcatSoftmax() {
        try (KernelGraph g = new KernelGraph()) {
            Tensor x = input(g, 4, 6);
            Tensor[] parts = g.split(x, 1, 2, 4);
            assertArrayEquals(new long[] {4, 4}, parts[1].dims());
            Tensor[] chunks = g.chunk(x, 3, 1);
            assertEquals(3, chunks.length);
            Tensor back = g.concat(parts[0], parts[1], 1);
            g.markOutput(g.softmax(g.add(back, g.clamp(x, -0.5, 0.5)), 1));
            float[] xv = values(24, 7);
            float[] got = g.runReference(HostTensor.of(xv, 4, 6))[0].toFloatArray();
            for (int i = 0; i < 4; ++i) {
                double sum = 0;
                for (int j = 0; j < 6; ++j) {
                    sum += got[i * 6 + j];
                }
                assertEquals(1.0, sum, 1e-5);
            }
            assertThrows(YirageException.InvalidArgument.class, () -> g.split(x, 1, 2, 3));
            assertThrows(IllegalArgumentException.class, () -> g.chunk(x, 0, 1));
        }
    }

    @Test
    void viewsReshapePermuteTranspose() {
        try (KernelGraph g = new KernelGraph()) {
            Tensor x = input(g, 4, 6);
            Tensor heads = g.permute(g.reshape(x, 4, 2, -1), 1, 0, 2);  // [T, H·D] as [H, T, D]
            assertArrayEquals(new long[] {2, 4, 3}, heads.dims());
            g.markOutput(heads);
            g.markOutput(g.transpose(x, 0, -1));
            float[] xv = values(24, 3);
            HostTensor[] got = g.runReference(HostTensor.of(xv, 4, 6));
            float[] h = got[0].toFloatArray(), t = got[1].toFloatArray();
            for (int i = 0; i < 4; ++i) {
                for (int j = 0; j < 6; ++j) {
                    assertEquals(xv[i * 6 + j], h[(j / 3) * 12 + i * 3 + j % 3]);
                    assertEquals(xv[i * 6 + j], t[j * 4 + i]);
                }
            }
            YirageException.InvalidArgument e =
                    assertThrows(YirageException.InvalidArgument.class, () -> g.permute(x, 1, 1));
            assertTrue(e.nativeMessage().contains("dim 1 appears twice: not a permutation"), e.nativeMessage());
            assertThrows(YirageException.InvalidArgument.class, () -> g.reshape(x, 5, 5));
        }
    }

    @Test
    void errors() {
        KernelGraph g = new KernelGraph();
        Tensor a = g.newInput(new long[] {16, 4096}, DType.FLOAT16);
        Tensor b = g.newInput(new long[] {406, 4096}, DType.FLOAT16);
        YirageException.InvalidArgument e =
                assertThrows(YirageException.InvalidArgument.class, () -> g.matmul(a, b));
        assertEquals(Status.INVALID_ARGUMENT, e.status());
        assertEquals("matmul: A is [16,4096], B is [406,4096]: inner dimensions 4096 and 406 differ",
                     e.nativeMessage());
        assertTrue(assertThrows(YirageException.class, () -> g.newInput(new long[] {1, 1, 1, 1, 1, 1, 1}, DType.FLOAT32))
                .getMessage().contains("rank 7 is outside 1..6"));
        try (KernelGraph other = new KernelGraph()) {
            assertTrue(assertThrows(YirageException.class, () -> other.exp(a)).getMessage()
                    .contains("belongs to another graph"));
            Tensor ea = g.exp(a);
            g.markOutput(ea);
            // Wrong element count: refused by the library, nothing written.
            HostTensor shortInput = HostTensor.ofBits(new short[3], DType.FLOAT16, 3);
            HostTensor unused = HostTensor.zeros(DType.FLOAT16, 16, 4096);
            assertThrows(YirageException.InvalidArgument.class,
                         () -> g.runReference(shortInput, unused));
            assertThrows(IllegalArgumentException.class, () -> HostTensor.of(new float[3], 2, 2));
            assertThrows(IllegalArgumentException.class,
                         () -> g.runReference(new HostTensor[] {unused, unused},
                                              new HostTensor[] {HostTensor.wrap(
                                                      ByteBuffer.allocateDirect(2 * 16 * 4096).asReadOnlyBuffer(),
                                                      DType.FLOAT16, 16, 4096)}));
            g.close();
            g.close(); // twice is fine
            assertTrue(g.isClosed());
            assertThrows(IllegalStateException.class, () -> g.exp(a));
            // A tensor of a closed graph is refused by the library, not dereferenced.
            assertTrue(assertThrows(YirageException.class, () -> other.exp(a)).getMessage()
                    .contains("not a live yirage_tensor"));
            assertThrows(YirageException.class, a::dims);
        }
        assertFalse(Yirage.version().isEmpty());
        assertArrayEquals(new int[] {1, 11}, Yirage.abiVersion());
        assertThrows(YirageException.NotFound.class, () -> Yirage.target("tpu"));
        assertEquals("h100", Yirage.target("h100").name());
        assertThrows(NullPointerException.class, () -> new KernelGraph().matmul(null, null));
    }
}
