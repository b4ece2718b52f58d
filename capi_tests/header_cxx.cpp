// yirage.h must compile as C++ (built with -pedantic -Werror) and declare C linkage: this
// program links against the C symbols through the header alone.
#include "yirage.h"

int main() {
  yirage_graph *graph = nullptr;
  if (yirage_graph_create(&graph) != YIRAGE_OK) return 1;
  yirage_graph_release(graph);
  return yirage_abi_version() == YIRAGE_ABI_VERSION ? 0 : 1;
}
