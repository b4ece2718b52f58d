// Which tensor dims of a graph must be split together (docs/search.md, "Grids and loops").
// A grid axis or the for-loop of a candidate µGraph splits one class of dims: every input
// iterator's imap/fmap is then its dim of that class (or -1 when it has none), and every saved
// output's omap likewise, so partitionings that cannot line up are never generated.
//
// Classes are the connected components of "these dims index the same values": matmul joins
// A's rows with C's rows, B's columns with C's columns and A's columns with B's rows (the
// reduced dim); elementwise operators join equal dims position by position (not broadcast ones);
// reductions, rms_norm and layout operators join the dims they keep.
#pragma once

#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::search {

class DimClasses {
 public:
  explicit DimClasses(const KernelGraph &graph);

  // The class of dim `dim` of tensor `tensor` (dense ids from 0).
  int of(TensorId tensor, size_t dim) const;
  int count() const { return count_; }
  // The element count of the dims of a class (they are all equal).
  int64_t extent(int cls) const { return extents_.at(static_cast<size_t>(cls)); }
  // The dim of `tensor` in class `cls`: -1 if none, -2 if more than one.
  int dim_in(TensorId tensor, int cls) const;

 private:
  std::vector<size_t> offsets_;  // first slot of each tensor
  std::vector<int> class_of_;    // per slot
  std::vector<int64_t> extents_;
  int count_ = 0;
};

}  // namespace yirage::search
