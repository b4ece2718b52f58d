// Statements of the loop-level form (docs/codegen.md). A kernel program lowers to a tree of
// these (lower_operator.hpp, lower_ugraph.hpp); each target prints it (c_printer.hpp), and a
// target with a faster way to do a structured statement (a matmul, a row reduction, a tile copy)
// prints that instead. Every structured statement has a plain expansion into loops
// (expand_*), so that a new target needs to know only how to spell loops, memory and barriers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "codegen/expr.hpp"

namespace yirage::codegen {

struct Stmt;
using Block = std::vector<Stmt>;

// How a loop's iterations are shared among the threads that reach it.
enum class Sharing {
  kGrid,      // kernel level: by every thread of the grid (a CPU's parallel loop)
  kThreads,   // inside a block: by the block's threads, iteration e by thread e % threads (the
              // rule barrier placement relies on, ugraph_walker.hpp)
  kRowLanes,  // inside RowReduce::finish: by the threads that reduced the row
  kSerial,    // by no one: each thread that reaches the loop runs all of it
};

// A loop over the row-major index space `dims`, `vars` naming each dim's index (an integer).
struct Loop {
  Dims dims;
  std::vector<std::string> vars;
  Sharing sharing = Sharing::kSerial;
  int unroll = 1;  // a hint: iterations a thread may run unrolled (1: the target's choice)
  Block body;
};

struct If {
  Expr condition;
  Block then_body;
  Block else_body;
};

// `name` = value, an integer or a float; `mutable_` ones may be assigned later.
struct Let {
  std::string name;
  Expr value;
  bool is_float = true;
  bool mutable_ = false;
};

struct Assign {
  std::string name;
  Expr value;
};

// buffer[index] = value, rounded to the buffer's element type.
struct Store {
  BufferRef buffer;
  Expr index;
  Expr value;
};

// Every thread of the block waits here until all have arrived, and their writes to shared
// memory before it are visible to all after it. Where a block is one thread (a CPU) it is nothing.
struct Barrier {};

// A tensor of `dims` in `buffer` from element `base` on, with element strides `strides` (empty:
// compact row-major): a whole tensor, a tile, or a tile's view into a kernel-level tensor.
struct TensorRef {
  BufferRef buffer;
  Dims dims;
  Dims strides;
  Expr base = int_const(0);
  Dims element_strides() const;
  // The buffer index of the element at `vars` (one per dim).
  Expr index(const std::vector<Expr> &vars) const;
};

// o = a · b over the last two dims, batch dims of size 1 broadcasting, accumulated in float32.
struct Matmul {
  TensorRef a, b, o;
  Sharing sharing = Sharing::kGrid;  // kGrid at kernel level, kThreads inside a block
  // Ragged tiles (ir/ragged_tiles.hpp): the elements of k, of the rows and of the columns inside
  // the tensors, expressions of the block and loop indices (they may exceed the tiles). The sums
  // stop at k_inside, which is what setting the absent ones to zero would give; rows and columns
  // past m_inside and n_inside are absent in the output and may be left as they are, so that an
  // operand read in place never reads past its tensor.
  std::optional<Expr> k_inside, m_inside, n_inside;
};

// For each of `rows` rows: total = Σ (or max) over c < cols of `value` (an expression of the
// integer variables r and c), then `finish` with r and total (a float) defined, whose loops over
// the row are shared as Sharing::kRowLanes. Inside a block.
struct RowReduce {
  int64_t rows = 0, cols = 0;
  bool is_max = false;
  Expr value;
  Block finish;
};

// Copies a tile between a block's shared buffer and its place in a kernel-level tensor (`tensor`:
// a view of the kernel parameter with the tile's dims, its base an expression of the block and
// loop indices). `vector` elements in a row are consecutive in both and start at multiples of
// `vector` in both wherever the parameter's start is 16-byte aligned (1: no such grouping): a
// target may move them as one access.
//
// A ragged tile (ir/ragged_tiles.hpp) has `inside`: for each dim along which it may overrun the
// tensor, how many of its elements from the tile's start lie inside (an expression of the block
// and loop indices; it may exceed the tile). A load sets the elements past that to zero; a store
// skips them.
struct TileBound {
  size_t dim;
  Expr inside;
};
struct TileCopy {
  bool load = true;  // into the tile; else from it
  TensorRef tensor;
  TensorRef tile;
  int64_t vector = 1;
  std::vector<TileBound> inside;
};

struct Stmt {
  std::variant<Block, Loop, If, Let, Assign, Store, Barrier, Matmul, RowReduce, TileCopy> node;
};

// Loop variable names prefix0, prefix1, … (n of them).
std::vector<std::string> numbered(const std::string &prefix, size_t n);

// Builders.
Stmt block(Block body);
Stmt loop(const Dims &dims, std::vector<std::string> vars, Sharing sharing, Block body, int unroll = 1);
Stmt if_then(Expr condition, Block then_body, Block else_body = {});
Stmt let(const std::string &name, Expr value, bool is_float = true);
Stmt let_mutable(const std::string &name, Expr value);
Stmt assign(const std::string &name, Expr value);
Stmt store(const BufferRef &buffer, Expr index, Expr value);
Stmt barrier();

// The plain expansions: loops over elements, for targets that print nothing faster.
Block expand(const Matmul &m);
Block expand(const RowReduce &r);  // rows shared by the block's threads, each reduced serially
Block expand(const TileCopy &c);   // element by element, shared by the block's threads

// `block` with every use of the integer variable `name` replaced by `value`.
Block substitute(const Block &block, const std::string &name, const Expr &value);
Expr substitute(const Expr &e, const std::string &name, const Expr &value);

// Strides of `dims` when broadcast to `out` (same rank): 0 along dims of size 1.
Dims broadcast_strides(const Dims &dims, const Dims &out);
// A matmul operand's element strides (a view keeps its parent's), 0 along the batch dims (all but
// the last two) where it has size 1 and the output `out` does not. For any tensor with `dims` and
// element_strides(): TensorRef, or a target's own view of one.
template <class T>
Dims matmul_operand_strides(const T &x, const Dims &out) {
  Dims strides = x.element_strides();
  for (size_t d = 0; d + 2 < out.size(); ++d) {
    if (x.dims[d] == 1 && out[d] != 1) strides[d] = 0;
  }
  return strides;
}

}  // namespace yirage::codegen
