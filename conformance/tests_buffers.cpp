// Buffer tests: allocation of many sizes, write/read round trips at odd offsets and sizes,
// ranges outside the buffer, out-of-memory as an error, wrapping caller memory.
#include <algorithm>
#include <random>

#include "runtime/compiled_graph.hpp"
#include "suite.hpp"

namespace yirage::conformance {
namespace {

using runtime::Buffer;

Buffer alloc(Session &s, size_t bytes) {
  yirage_backend_buffer *raw = nullptr;
  yirage_backend_error error = new_error();
  expect_ok(s.api().buffer_alloc(s.instance(), s.device(), bytes, &raw, &error), error,
            "buffer_alloc(" + std::to_string(bytes) + ")");
  expect(raw != nullptr, "buffer_alloc succeeded without a buffer");
  return Buffer(raw, runtime::BufferRelease{&s.api()});
}

void write(Session &s, yirage_backend_buffer *b, size_t offset, const std::vector<uint8_t> &bytes) {
  yirage_backend_error error = new_error();
  expect_ok(s.api().buffer_write(b, offset, bytes.data(), bytes.size(), &error), error,
            "buffer_write at " + std::to_string(offset) + " of " + std::to_string(bytes.size()));
}

std::vector<uint8_t> read(Session &s, yirage_backend_buffer *b, size_t offset, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  yirage_backend_error error = new_error();
  expect_ok(s.api().buffer_read(b, offset, out.data(), bytes, &error), error,
            "buffer_read at " + std::to_string(offset) + " of " + std::to_string(bytes));
  return out;
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> bytes(n);
  for (uint8_t &b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

void expect_same(const std::vector<uint8_t> &got, const std::vector<uint8_t> &want, const std::string &what) {
  const auto at = std::mismatch(got.begin(), got.end(), want.begin());
  expect(at.first == got.end(), what + ": byte " + std::to_string(at.first - got.begin()) + " differs");
}

// Allocates `bytes`, fills it, reads it back and releases it.
void alloc_size(Session &s, size_t bytes) {
  Buffer b = alloc(s, bytes);
  const std::vector<uint8_t> data = random_bytes(bytes, bytes);
  write(s, b.get(), 0, data);
  expect_same(read(s, b.get(), 0, bytes), data, "round trip of " + std::to_string(bytes) + " bytes");
}

// A large allocation: an eighth of the device's memory, at most 1 GiB, touched at both ends.
void alloc_large(Session &s) {
  const int64_t memory = s.device_info().target.memory_bytes;
  const size_t bytes = static_cast<size_t>(std::min<int64_t>(memory / 8, int64_t{1} << 30));
  Buffer b = alloc(s, bytes);
  const std::vector<uint8_t> head = random_bytes(4096, 1), tail = random_bytes(4096, 2);
  write(s, b.get(), 0, head);
  write(s, b.get(), bytes - tail.size(), tail);
  expect_same(read(s, b.get(), 0, head.size()), head, "the large buffer's head");
  expect_same(read(s, b.get(), bytes - tail.size(), tail.size()), tail, "the large buffer's tail");
}

// Writes at odd offsets and sizes, checked against a host copy of the whole buffer.
void odd_round_trips(Session &s) {
  const size_t size = 10007;
  Buffer b = alloc(s, size);
  std::vector<uint8_t> shadow = random_bytes(size, 7);
  write(s, b.get(), 0, shadow);
  const std::pair<size_t, size_t> ranges[] = {{0, 1},        {3, 17}, {1, 4093}, {4095, 4097}, {9999, 8},
                                              {size - 1, 1}, {5, 0},  {size, 0}, {127, 129},   {2, size - 2}};
  uint64_t seed = 100;
  for (const auto &[offset, bytes] : ranges) {
    const std::vector<uint8_t> data = random_bytes(bytes, ++seed);
    write(s, b.get(), offset, data);
    std::copy(data.begin(), data.end(), shadow.begin() + static_cast<ptrdiff_t>(offset));
    expect_same(read(s, b.get(), offset, bytes), data,
                "read back [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ")");
    expect_same(read(s, b.get(), 0, size), shadow,
                "the whole buffer after writing [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ")");
  }
}

// Ranges outside the buffer are refused and change nothing.
void out_of_range(Session &s) {
  const size_t size = 256;
  Buffer b = alloc(s, size);
  const std::vector<uint8_t> data = random_bytes(size, 3);
  write(s, b.get(), 0, data);
  std::vector<uint8_t> scratch(1024, 0x11);
  const std::pair<size_t, size_t> ranges[] = {{0, size + 1}, {size, 1},     {size + 1, 0},
                                              {1, SIZE_MAX}, {SIZE_MAX, 2}, {200, 100}};
  for (const auto &[offset, bytes] : ranges) {
    const std::string what = "[" + std::to_string(offset) + ", +" + std::to_string(bytes) + ")";
    yirage_backend_error error = new_error();
    expect_error(s.api().buffer_write(b.get(), offset, scratch.data(), bytes, &error), error,
                 {YIRAGE_ERROR_INVALID_ARGUMENT}, "buffer_write of " + what);
    error = new_error();
    expect_error(s.api().buffer_read(b.get(), offset, scratch.data(), bytes, &error), error,
                 {YIRAGE_ERROR_INVALID_ARGUMENT}, "buffer_read of " + what);
    expect(std::all_of(scratch.begin(), scratch.end(), [](uint8_t x) { return x == 0x11; }),
           "a refused buffer_read of " + what + " wrote the destination");
  }
  expect_same(read(s, b.get(), 0, size), data, "the buffer after refused writes");
}

// Far more than the device has is OUT_OF_MEMORY with out_buffer untouched, and the plugin still
// works afterwards.
void out_of_memory(Session &s) {
  const int64_t memory = s.device_info().target.memory_bytes;
  for (size_t bytes : {SIZE_MAX / 2, static_cast<size_t>(memory) * 64}) {
    yirage_backend_buffer *raw = reinterpret_cast<yirage_backend_buffer *>(uintptr_t{0x5e77});
    yirage_backend_error error = new_error();
    const yirage_status status = s.api().buffer_alloc(s.instance(), s.device(), bytes, &raw, &error);
    expect_error(status, error, {YIRAGE_ERROR_OUT_OF_MEMORY}, "buffer_alloc of " + std::to_string(bytes) + " bytes");
    expect(raw == reinterpret_cast<yirage_backend_buffer *>(uintptr_t{0x5e77}),
           "a failed buffer_alloc wrote out_buffer");
  }
  alloc_size(s, 1 << 20);
}

void many_buffers(Session &s) {
  std::vector<Buffer> live;
  for (int i = 0; i < 1000; ++i) {
    live.push_back(alloc(s, static_cast<size_t>(i % 97) * 8));
    if (i % 3 == 0) live.erase(live.begin() + (i % static_cast<int>(live.size())));
  }
}

// Memory the caller owns, wrapped without a copy: only testable where the device's memory is
// host memory (the suite has no other way to get native device memory).
void wrap(Session &s) {
  const int32_t type = s.device_info().raw.dlpack_device_type;
  if (type != kDLCPU && type != kDLCUDAHost && type != kDLROCMHost) {
    not_supported("wrapping is tested only on devices whose memory is host memory");
  }
  std::vector<uint8_t> memory = random_bytes(1000, 9);
  yirage_backend_buffer *raw = nullptr;
  yirage_backend_error error = new_error();
  expect_ok(s.api().buffer_wrap(s.instance(), s.device(), memory.data(), memory.size(), &raw, &error), error,
            "buffer_wrap");
  Buffer b(raw, runtime::BufferRelease{&s.api()});
  expect_same(read(s, b.get(), 0, memory.size()), memory, "reading wrapped memory");
  const std::vector<uint8_t> data = random_bytes(10, 10);
  write(s, b.get(), 990, data);
  expect(std::equal(data.begin(), data.end(), memory.begin() + 990),
         "a write to a wrapped buffer did not reach the caller's memory");
  b.reset();
  expect(std::equal(data.begin(), data.end(), memory.begin() + 990),
         "releasing a wrapped buffer changed the caller's memory");
}

// The optional buffer_native entry (ABI 1.2): the DLPack data value of a buffer, which, wrapped
// again, reads the same bytes; NULL arguments refused with the out-parameter untouched.
void native(Session &s) {
  const auto entry = s.plugin().buffer_native_entry();
  if (entry == nullptr) not_supported("the plugin has no buffer_native entry (optional, ABI 1.2)");
  Buffer b = alloc(s, 256);
  const std::vector<uint8_t> data = random_bytes(256, 12);
  write(s, b.get(), 0, data);
  void *where = nullptr;
  yirage_backend_error error = new_error();
  expect_ok(entry(b.get(), &where, &error), error, "buffer_native");
  expect(where != nullptr, "buffer_native gave NULL for a 256-byte buffer");
  yirage_backend_buffer *raw = nullptr;
  error = new_error();
  expect_ok(s.api().buffer_wrap(s.instance(), s.device(), where, data.size(), &raw, &error), error,
            "buffer_wrap of buffer_native's pointer");
  Buffer again(raw, runtime::BufferRelease{&s.api()});
  expect_same(read(s, again.get(), 0, data.size()), data, "reading a buffer through its native pointer");
  void *untouched = &error;
  error = new_error();
  expect(entry(nullptr, &untouched, &error) == YIRAGE_ERROR_INVALID_ARGUMENT, "buffer_native of NULL accepted");
  expect(untouched == &error, "buffer_native wrote its out-parameter on failure");
  error = new_error();
  expect(entry(b.get(), nullptr, &error) == YIRAGE_ERROR_INVALID_ARGUMENT, "buffer_native to NULL accepted");
}

}  // namespace

void add_buffer_tests(std::vector<TestCase> &tests) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{4097}, size_t{1} << 20}) {
    tests.push_back({"buffers.alloc." + std::to_string(bytes), [bytes](Session &s) { alloc_size(s, bytes); }});
  }
  tests.push_back({"buffers.alloc.large", alloc_large});
  tests.push_back({"buffers.round_trip_odd_ranges", odd_round_trips});
  tests.push_back({"buffers.out_of_range", out_of_range});
  tests.push_back({"buffers.out_of_memory", out_of_memory});
  tests.push_back({"buffers.many", many_buffers});
  tests.push_back({"buffers.wrap", wrap});
  tests.push_back({"buffers.native", native});
}

}  // namespace yirage::conformance
