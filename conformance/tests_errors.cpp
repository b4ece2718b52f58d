// Error tests: invalid kernel programs (junk, truncated, mutated) give errors with a message, and
// launches with the wrong buffers are refused before anything runs.
#include <random>

#include "runtime/compiled_graph.hpp"
#include "suite.hpp"

namespace yirage::conformance {
namespace {

using runtime::Buffer;

yirage_backend_executable *const kUntouched = reinterpret_cast<yirage_backend_executable *>(uintptr_t{0x5e77});

void compile_junk(Session &s) {
  const int32_t device = s.device();
  std::mt19937_64 rng(3);
  std::vector<uint8_t> junk(512);
  for (uint8_t &b : junk) b = static_cast<uint8_t>(rng());
  const std::vector<std::vector<uint8_t>> programs = {junk, std::vector<uint8_t>(8, 0), std::vector<uint8_t>(1, 0xFF)};
  for (const std::vector<uint8_t> &program : programs) {
    yirage_backend_executable *executable = kUntouched;
    yirage_backend_error error = new_error();
    const yirage_status status =
        s.api().compile(s.instance(), device, program.data(), program.size(), nullptr, &executable, &error);
    expect_error(status, error, {YIRAGE_ERROR_CORRUPT_DATA},
                 "compile of " + std::to_string(program.size()) + " junk bytes");
    expect(executable == kUntouched, "a failed compile wrote out_executable");
  }
  yirage_backend_executable *executable = kUntouched;
  yirage_backend_error error = new_error();
  expect_error(s.api().compile(s.instance(), device, nullptr, 16, nullptr, &executable, &error), error,
               {YIRAGE_ERROR_INVALID_ARGUMENT, YIRAGE_ERROR_CORRUPT_DATA}, "compile of NULL");
}

// Every truncation of a valid program is refused by supports and by compile.
void truncated(Session &s) {
  const int32_t device = s.device();
  const std::vector<uint8_t> program = exp_program(8);
  for (size_t n = 0; n < program.size(); n += 1 + n / 16) {
    yirage_backend_error error = new_error();
    expect_error(s.api().supports(s.instance(), device, program.data(), n, &error), error,
                 {YIRAGE_ERROR_CORRUPT_DATA, YIRAGE_ERROR_INVALID_ARGUMENT},
                 "supports of the first " + std::to_string(n) + " bytes");
  }
  yirage_backend_executable *executable = kUntouched;
  yirage_backend_error error = new_error();
  expect_error(s.api().compile(s.instance(), device, program.data(), program.size() / 2, nullptr, &executable, &error),
               error, {YIRAGE_ERROR_CORRUPT_DATA}, "compile of half a program");
  expect(executable == kUntouched, "a failed compile wrote out_executable");
}

// Byte flips of a valid program: supports either accepts the result or refuses it with a
// message; it never crashes (a crash ends the test as Crash).
void mutated(Session &s) {
  const int32_t device = s.device();
  const std::vector<uint8_t> program = exp_program(8);
  std::mt19937_64 rng(17);
  for (int i = 0; i < 500; ++i) {
    std::vector<uint8_t> bytes = program;
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
      bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    yirage_backend_error error = new_error();
    const yirage_status status = s.api().supports(s.instance(), device, bytes.data(), bytes.size(), &error);
    if (status != YIRAGE_OK) {
      expect_error(status, error,
                   {YIRAGE_ERROR_CORRUPT_DATA, YIRAGE_ERROR_UNSUPPORTED, YIRAGE_ERROR_VERSION_MISMATCH,
                    YIRAGE_ERROR_INVALID_ARGUMENT},
                   "supports of mutation " + std::to_string(i));
    }
  }
}

struct Launchable {
  yirage_backend_executable *executable = nullptr;
  const yirage_backend_api *api = nullptr;
  ~Launchable() {
    if (api) api->executable_release(executable);
  }
};

Buffer alloc(Session &s, size_t bytes, uint8_t fill) {
  yirage_backend_buffer *raw = nullptr;
  yirage_backend_error error = new_error();
  expect_ok(s.api().buffer_alloc(s.instance(), s.device(), bytes, &raw, &error), error, "buffer_alloc");
  Buffer b(raw, runtime::BufferRelease{&s.api()});
  const std::vector<uint8_t> data(bytes, fill);
  expect_ok(s.api().buffer_write(raw, 0, data.data(), bytes, &error), error, "buffer_write");
  return b;
}

// Wrong buffer counts, NULL buffers and a buffer one byte short are refused, and the output
// buffer still holds what it held (nothing ran).
void bad_launches(Session &s) {
  s.need_dtype(DType::kFloat32);
  const int32_t device = s.device();
  const std::vector<uint8_t> program = exp_program(8);
  Launchable l;
  l.api = &s.api();
  yirage_backend_error error = new_error();
  expect_ok(s.api().compile(s.instance(), device, program.data(), program.size(), nullptr, &l.executable, &error),
            error, "compile");
  Buffer in = alloc(s, 32, 0), out = alloc(s, 32, 0xEE), short_out = alloc(s, 31, 0xEE);
  yirage_backend_buffer *ins[] = {in.get(), in.get()};
  yirage_backend_buffer *outs[] = {out.get(), out.get()};
  yirage_backend_buffer *shorts[] = {short_out.get()};
  yirage_backend_buffer *nulls[] = {nullptr};
  const struct {
    const char *what;
    yirage_backend_buffer *const *inputs;
    size_t num_inputs;
    yirage_backend_buffer *const *outputs;
    size_t num_outputs;
  } cases[] = {
      {"no inputs", ins, 0, outs, 1},
      {"two inputs", ins, 2, outs, 1},
      {"no outputs", ins, 1, outs, 0},
      {"two outputs", ins, 1, outs, 2},
      {"a NULL input", nulls, 1, outs, 1},
      {"a NULL output", ins, 1, nulls, 1},
      {"a NULL input array", nullptr, 1, outs, 1},
      {"an output one byte short", ins, 1, shorts, 1},
  };
  for (const auto &c : cases) {
    error = new_error();
    expect_error(s.api().launch(l.executable, nullptr, c.inputs, c.num_inputs, c.outputs, c.num_outputs, &error), error,
                 {YIRAGE_ERROR_INVALID_ARGUMENT}, std::string("launch with ") + c.what);
  }
  expect_ok(s.api().synchronize(s.instance(), device, nullptr, &error), error, "synchronize");
  std::vector<uint8_t> bytes(31);
  for (yirage_backend_buffer *b : {out.get(), short_out.get()}) {
    expect_ok(s.api().buffer_read(b, 0, bytes.data(), bytes.size(), &error), error, "buffer_read");
    for (uint8_t x : bytes) expect(x == 0xEE, "a refused launch wrote an output");
  }
  error = new_error();
  expect_error(s.api().launch(nullptr, nullptr, ins, 1, outs, 1, &error), error, {YIRAGE_ERROR_INVALID_ARGUMENT},
               "launch of a NULL executable");
}

void unrecorded_timers(Session &s) {
  const int32_t device = s.device();
  yirage_backend_timer *start = nullptr, *stop = nullptr;
  yirage_backend_error error = new_error();
  expect_ok(s.api().timer_create(s.instance(), device, &start, &error), error, "timer_create");
  expect_ok(s.api().timer_create(s.instance(), device, &stop, &error), error, "timer_create");
  double seconds = -123;
  error = new_error();
  const yirage_status status = s.api().timer_elapsed(start, stop, &seconds, &error);
  s.api().timer_release(start);
  s.api().timer_release(stop);
  expect_error(status, error, {YIRAGE_ERROR_INVALID_ARGUMENT}, "timer_elapsed of unrecorded timers");
  expect(seconds == -123, "a failed timer_elapsed wrote out_seconds");
}

}  // namespace

void add_error_tests(std::vector<TestCase> &tests) {
  tests.push_back({"errors.compile.junk", compile_junk});
  tests.push_back({"errors.compile.truncated", truncated});
  tests.push_back({"errors.supports.mutated", mutated});
  tests.push_back({"errors.launch.bad_buffers", bad_launches});
  tests.push_back({"errors.timers.unrecorded", unrecorded_timers});
}

}  // namespace yirage::conformance
