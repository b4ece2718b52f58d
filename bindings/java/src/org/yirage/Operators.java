package org.yirage;

import org.yirage.jni.YirageNative;

/**
 * The compute operators kernel graphs and thread-block graphs share, each with its C function
 * at both levels (yirage_graph_X and yirage_block_graph_X), so {@link GraphBuilder} implements
 * each operator once.
 */
final class Operators {
    private Operators() {}

    interface UnaryFn { int call(long graph, long x, long[] out); }
    interface BinaryFn { int call(long graph, long a, long b, long[] out); }
    interface DimFn { int call(long graph, long x, int dim, long[] out); }

    enum Unary {
        EXP(YirageNative::yirage_graph_exp, YirageNative::yirage_block_graph_exp),
        SILU(YirageNative::yirage_graph_silu, YirageNative::yirage_block_graph_silu),
        GELU(YirageNative::yirage_graph_gelu, YirageNative::yirage_block_graph_gelu),
        RELU(YirageNative::yirage_graph_relu, YirageNative::yirage_block_graph_relu),
        SQRT(YirageNative::yirage_graph_sqrt, YirageNative::yirage_block_graph_sqrt),
        SQUARE(YirageNative::yirage_graph_square, YirageNative::yirage_block_graph_square),
        SIGMOID(YirageNative::yirage_graph_sigmoid, YirageNative::yirage_block_graph_sigmoid),
        LOG(YirageNative::yirage_graph_log, YirageNative::yirage_block_graph_log),
        NEG(YirageNative::yirage_graph_neg, YirageNative::yirage_block_graph_neg);

        final UnaryFn kernel, block;

        Unary(UnaryFn kernel, UnaryFn block) {
            this.kernel = kernel;
            this.block = block;
        }
    }

    enum Binary {
        MATMUL(YirageNative::yirage_graph_matmul, YirageNative::yirage_block_graph_matmul),
        ADD(YirageNative::yirage_graph_add, YirageNative::yirage_block_graph_add),
        SUB(YirageNative::yirage_graph_sub, YirageNative::yirage_block_graph_sub),
        MUL(YirageNative::yirage_graph_mul, YirageNative::yirage_block_graph_mul),
        DIV(YirageNative::yirage_graph_div, YirageNative::yirage_block_graph_div),
        POW(YirageNative::yirage_graph_pow, YirageNative::yirage_block_graph_pow),
        MAX(YirageNative::yirage_graph_max, YirageNative::yirage_block_graph_max);

        final BinaryFn kernel, block;

        Binary(BinaryFn kernel, BinaryFn block) {
            this.kernel = kernel;
            this.block = block;
        }
    }

    enum OverDim {
        REDUCTION(YirageNative::yirage_graph_reduction, YirageNative::yirage_block_graph_reduction),
        REDUCTION_MAX(YirageNative::yirage_graph_reduction_max,
                      YirageNative::yirage_block_graph_reduction_max);

        final DimFn kernel, block;

        OverDim(DimFn kernel, DimFn block) {
            this.kernel = kernel;
            this.block = block;
        }
    }
}
