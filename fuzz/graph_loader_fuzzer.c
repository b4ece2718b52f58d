/* libFuzzer target: graph files (either format) through the public loader. Whatever the bytes,
 * yirage_graph_deserialize must return a status (never crash, hang or leak), and a graph it
 * accepts must serialize again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "yirage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  yirage_graph *graph = NULL;
  yirage_blob *blob = NULL;
  const yirage_status status = yirage_graph_deserialize(data, size, &graph);
  if (status == YIRAGE_OK) {
    if (yirage_graph_serialize(graph, YIRAGE_GRAPH_FORMAT_BINARY, &blob) != YIRAGE_OK) abort();
    yirage_blob_release(blob);
    yirage_graph_release(graph);
  } else if (status != YIRAGE_ERROR_CORRUPT_DATA && status != YIRAGE_ERROR_VERSION_MISMATCH) {
    abort(); /* any other status for bad bytes is a bug */
  }
  return 0;
}
