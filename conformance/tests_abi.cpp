// ABI tests: the entry point and version negotiation, struct_size rules for input and output
// structs, release of NULL, out-parameters left untouched on error, compile options, the
// optional estimate entry.
#include <cctype>
#include <cstddef>

#include "benchmark_ugraphs.hpp"
#include "guarded.hpp"
#include "ir/block_graph.hpp"
#include "serialize/kernel_program.hpp"
#include "suite.hpp"

namespace yirage::conformance {
namespace {

// What an out-parameter holds before a call that must fail; it must still hold it after.
template <class T>
T *sentinel() {
  return reinterpret_cast<T *>(uintptr_t{0x5e77});
}

void entry_table(Session &s) {
  const yirage_backend_api &api = s.api();
  expect(api.abi_major == YIRAGE_BACKEND_ABI_MAJOR, "the table's abi_major differs from the host's");
  const std::vector<std::string> missing = runtime::missing_entries(api);
  std::string names;
  for (const std::string &m : missing) names += " " + m;
  expect(missing.empty(), "NULL entries in the table:" + names);
  expect(api.name != nullptr && api.name[0] != '\0', "the plugin has no name");
  for (const char *c = api.name; *c; ++c) {
    expect(std::islower(static_cast<unsigned char>(*c)) || std::isdigit(static_cast<unsigned char>(*c)) || *c == '_',
           std::string("the name '") + api.name + "' is not lowercase [a-z0-9_]");
  }
  expect(api.version != nullptr, "the plugin's version is NULL");
}

// The entry point answers every host version without crashing: the same major with any minor
// gets the table; another major gets NULL or a table that honestly states its own major.
void entry_versions(Session &s, uint32_t major, uint32_t minor) {
  const yirage_backend_api *api = s.entry()(major, minor);
  if (major == YIRAGE_BACKEND_ABI_MAJOR) {
    expect(api != nullptr,
           "the entry point refused a host of ABI " + std::to_string(major) + "." + std::to_string(minor));
    expect(api->abi_major == YIRAGE_BACKEND_ABI_MAJOR, "the table claims another major");
  } else if (api != nullptr) {
    expect(api->abi_major != major || major == YIRAGE_BACKEND_ABI_MAJOR,
           "the plugin claims to speak ABI major " + std::to_string(major));
  }
}

void create_with(Session &s, const yirage_backend_host *host, yirage_status want, const std::string &what) {
  const yirage_backend_api &api = s.api();
  yirage_backend_instance *instance = sentinel<yirage_backend_instance>();
  yirage_backend_error error = new_error();
  const yirage_status status = api.create(host, &instance, &error);
  if (want == YIRAGE_OK) {
    expect_ok(status, error, what);
    expect(instance != sentinel<yirage_backend_instance>() && instance != nullptr,
           what + ": create succeeded without an instance");
    api.destroy(instance);
  } else {
    expect_error(status, error, {want}, what);
    expect(instance == sentinel<yirage_backend_instance>(), what + ": out_instance was written");
  }
}

void create_other_major(Session &s) {
  yirage_backend_host host = s.host();
  host.abi_major = YIRAGE_BACKEND_ABI_MAJOR + 1;
  create_with(s, &host, YIRAGE_ERROR_VERSION_MISMATCH, "create for a host of the next major");
  host.abi_major = YIRAGE_BACKEND_ABI_MAJOR - 1;
  create_with(s, &host, YIRAGE_ERROR_VERSION_MISMATCH, "create for a host of the previous major");
}

void create_newer_minor(Session &s) {
  yirage_backend_host host = s.host();
  host.abi_minor = YIRAGE_BACKEND_ABI_MINOR + 7;
  create_with(s, &host, YIRAGE_OK, "create for a host of a newer minor");
}

// A host struct smaller than ABI 1.0's, ending where an inaccessible page begins.
void create_host_smaller(Session &s) {
  const size_t size = offsetof(yirage_backend_host, cache_dir);
  GuardPage page(size);
  yirage_backend_host host = s.host();
  host.struct_size = size;
  create_with(s, page.hold(host), YIRAGE_ERROR_INVALID_ARGUMENT,
              "create with host->struct_size smaller than ABI 1.0's");
}

// A host struct larger than the plugin knows: the tail is ignored.
void create_host_larger(Session &s) {
  WithTail<yirage_backend_host> host(64);
  *host.get() = s.host();
  host.get()->struct_size = host.size();
  create_with(s, host.get(), YIRAGE_OK, "create with a host struct 64 bytes larger");
}

void create_null(Session &s) {
  const yirage_backend_api &api = s.api();
  yirage_backend_error error = new_error();
  yirage_backend_instance *instance = sentinel<yirage_backend_instance>();
  expect_error(api.create(nullptr, &instance, &error), error, {YIRAGE_ERROR_INVALID_ARGUMENT}, "create(NULL host)");
  expect(instance == sentinel<yirage_backend_instance>(), "create(NULL host) wrote out_instance");
  const yirage_backend_host host = s.host();
  error = new_error();
  expect_error(api.create(&host, nullptr, &error), error, {YIRAGE_ERROR_INVALID_ARGUMENT}, "create(host, NULL)");
}

// Two live instances at once, created and destroyed in either order.
void two_instances(Session &s) {
  const yirage_backend_api &api = s.api();
  const yirage_backend_host host = s.host();
  yirage_backend_instance *a = nullptr, *b = nullptr;
  yirage_backend_error error = new_error();
  expect_ok(api.create(&host, &a, &error), error, "create (first)");
  expect_ok(api.create(&host, &b, &error), error, "create (second)");
  int32_t count_a = -1, count_b = -1;
  expect_ok(api.device_count(a, &count_a, &error), error, "device_count (first)");
  expect_ok(api.device_count(b, &count_b, &error), error, "device_count (second)");
  expect(count_a == count_b, "two instances report different device counts");
  api.destroy(a);
  expect_ok(api.device_count(b, &count_b, &error), error, "device_count after the other's destroy");
  api.destroy(b);
}

void release_null(Session &s) {
  const yirage_backend_api &api = s.api();
  api.destroy(nullptr);
  api.buffer_release(nullptr);
  api.executable_release(nullptr);
  api.timer_release(nullptr);
}

// An error channel smaller than ABI 1.0's ends at an inaccessible page: the plugin must not
// write it, but still return the status.
void error_channel_smaller(Session &s) {
  const yirage_backend_api &api = s.api();
  const size_t size = offsetof(yirage_backend_error, message) + 8;
  GuardPage page(size);
  yirage_backend_error small = new_error();
  small.struct_size = size;
  yirage_backend_error *error = page.hold(small);
  yirage_backend_device_info info{};
  info.struct_size = sizeof info;
  info.target.struct_size = sizeof info.target;
  const yirage_status status = api.device_info(s.instance(), -1, &info, error);
  expect(status != YIRAGE_OK, "device_info(-1) succeeded");
}

// Failing entries leave their out-parameters as they were and fill the channel. Needs an
// instance only, so it runs on plugins without devices too.
void out_untouched(Session &s) {
  const yirage_backend_api &api = s.api();
  yirage_backend_instance *instance = s.instance();
  const int32_t count = s.plugin().device_count();
  yirage_backend_error error = new_error();

  for (int32_t device : {int32_t{-1}, count}) {
    const std::string d = "device " + std::to_string(device);
    WithTail<yirage_backend_device_info> info(0);
    info.get()->struct_size = sizeof(yirage_backend_device_info);
    info.get()->target.struct_size = sizeof(yirage_target_properties);
    std::memset(info.get()->name, 0x5e, sizeof info.get()->name);
    error = new_error();
    expect_error(api.device_info(instance, device, info.get(), &error), error,
                 {YIRAGE_ERROR_NOT_FOUND, YIRAGE_ERROR_INVALID_ARGUMENT}, "device_info of " + d);
    expect(info.get()->name[0] == 0x5e && info.get()->name[127] == 0x5e, "device_info of " + d + " wrote out_info");

    yirage_backend_buffer *buffer = sentinel<yirage_backend_buffer>();
    error = new_error();
    expect_error(api.buffer_alloc(instance, device, 64, &buffer, &error), error,
                 {YIRAGE_ERROR_NOT_FOUND, YIRAGE_ERROR_INVALID_ARGUMENT}, "buffer_alloc on " + d);
    expect(buffer == sentinel<yirage_backend_buffer>(), "buffer_alloc on " + d + " wrote out_buffer");

    yirage_backend_timer *timer = sentinel<yirage_backend_timer>();
    error = new_error();
    expect_error(api.timer_create(instance, device, &timer, &error), error,
                 {YIRAGE_ERROR_NOT_FOUND, YIRAGE_ERROR_INVALID_ARGUMENT}, "timer_create on " + d);
    expect(timer == sentinel<yirage_backend_timer>(), "timer_create on " + d + " wrote out_timer");

    const std::vector<uint8_t> program = exp_program(8);
    yirage_backend_executable *executable = sentinel<yirage_backend_executable>();
    error = new_error();
    expect_error(api.compile(instance, device, program.data(), program.size(), nullptr, &executable, &error), error,
                 {YIRAGE_ERROR_NOT_FOUND, YIRAGE_ERROR_INVALID_ARGUMENT}, "compile on " + d);
    expect(executable == sentinel<yirage_backend_executable>(), "compile on " + d + " wrote out_executable");
  }
  int32_t n = -7;
  error = new_error();
  expect_ok(api.device_count(instance, &n, &error), error, "device_count");
  expect(n == count, "device_count changed between calls");
}

void device_info_with(Session &s, size_t struct_size, size_t tail, yirage_status want) {
  const yirage_backend_api &api = s.api();
  const int32_t device = s.device();
  WithTail<yirage_backend_device_info> info(tail);
  info.get()->struct_size = struct_size;
  info.get()->target.struct_size = sizeof(yirage_target_properties);
  yirage_backend_error error = new_error();
  const yirage_status status = api.device_info(s.instance(), device, info.get(), &error);
  const std::string what = "device_info with struct_size " + std::to_string(struct_size) +
                           " (ABI 1.0: " + std::to_string(sizeof(yirage_backend_device_info)) + ")";
  if (want != YIRAGE_OK) {
    expect_error(status, error, {want}, what);
    return;
  }
  expect_ok(status, error, what);
  expect(info.get()->struct_size == struct_size, what + ": the plugin rewrote struct_size");
  expect(info.get()->target.struct_size == sizeof(yirage_target_properties),
         what + ": the plugin rewrote target.struct_size");
  // A plugin of a newer minor may fill fields this host does not know; one of ours may not.
  if (api.abi_minor == YIRAGE_BACKEND_ABI_MINOR) {
    expect(info.untouched(), what + ": bytes past the struct were written");
  }
  expect(info.get()->name[0] != '\0', what + ": no name");
}

void device_info_smaller(Session &s) {
  device_info_with(s, offsetof(yirage_backend_device_info, dtypes), 0, YIRAGE_ERROR_INVALID_ARGUMENT);
}
void device_info_larger(Session &s) {
  device_info_with(s, sizeof(yirage_backend_device_info) + 64, 64, YIRAGE_OK);
}

// Compile options: NULL is the defaults, a larger struct's tail is ignored, values out of range
// are refused.
void compile_options(Session &s) {
  const yirage_backend_api &api = s.api();
  const int32_t device = s.device();
  s.need_dtype(DType::kFloat32);
  const std::vector<uint8_t> program = exp_program(8);
  auto compile = [&](const yirage_backend_compile_options *options, yirage_status want, const std::string &what) {
    yirage_backend_executable *executable = sentinel<yirage_backend_executable>();
    yirage_backend_error error = new_error();
    const yirage_status status =
        api.compile(s.instance(), device, program.data(), program.size(), options, &executable, &error);
    if (want == YIRAGE_OK) {
      expect_ok(status, error, what);
      api.executable_release(executable);
    } else {
      expect_error(status, error, {want}, what);
      expect(executable == sentinel<yirage_backend_executable>(), what + ": out_executable written");
    }
  };
  compile(nullptr, YIRAGE_OK, "compile with NULL options");
  WithTail<yirage_backend_compile_options> larger(32);
  larger.get()->struct_size = larger.size();
  larger.get()->optimization_level = 1;
  compile(larger.get(), YIRAGE_OK, "compile with an options struct 32 bytes larger");
  for (int32_t level : {0, 3}) {
    yirage_backend_compile_options options{sizeof(yirage_backend_compile_options), level};
    compile(&options, YIRAGE_OK, "compile at optimization_level " + std::to_string(level));
  }
  for (int32_t level : {-1, 4, 99}) {
    yirage_backend_compile_options options{sizeof(yirage_backend_compile_options), level};
    compile(&options, YIRAGE_ERROR_INVALID_ARGUMENT, "compile at optimization_level " + std::to_string(level));
  }
  yirage_backend_compile_options small{offsetof(yirage_backend_compile_options, optimization_level), 3};
  compile(&small, YIRAGE_ERROR_INVALID_ARGUMENT, "compile with options smaller than ABI 1.0's");
}

// The optional estimate entry (ABI 1.1); NotSupported where the plugin has none.
decltype(yirage_backend_api::estimate) estimate_entry(Session &s) {
  const auto estimate = s.plugin().estimate_entry();
  if (estimate == nullptr) not_supported("the plugin has no estimate entry (optional, ABI 1.1)");
  return estimate;
}

yirage_backend_kernel_estimate no_opinion() {
  yirage_backend_kernel_estimate e{};
  e.struct_size = sizeof e;
  e.loop_waits = -1;
  e.shared_memory_seconds = -1;
  e.dependent_launch_seconds = -1;
  e.max_resident_blocks = -1;
  e.whole_product = -1;
  return e;
}

// The seconds of ABI 1.6 (shared_memory_seconds, dependent_launch_seconds): none, or 0 to 1 s.
void expect_seconds(const yirage_backend_kernel_estimate &e, const std::string &what) {
  for (const auto &[field, value] : {std::pair<const char *, double>{"shared_memory_seconds", e.shared_memory_seconds},
                                     {"dependent_launch_seconds", e.dependent_launch_seconds}}) {
    expect(value == -1 || (value >= 0 && value <= 1),
           "estimate of " + what + ": " + field + " " + std::to_string(value) + " (want -1, or 0 to 1)");
  }
  expect(e.max_resident_blocks == -1 || e.max_resident_blocks >= 1, "estimate of " + what + ": max_resident_blocks " +
                                                                        std::to_string(e.max_resident_blocks) +
                                                                        " (want -1, or 1 or more)");
  expect(e.whole_product >= -1 && e.whole_product <= 1,
         "estimate of " + what + ": whole_product " + std::to_string(e.whole_product) + " (want -1, 0 or 1)");
}

// Its answers: for a pre-defined operator (no for-loop) none or 1 wait; for gated_mlp's µGraph
// (a quarter of each size, 16 iterations) none or 1 to 16 (since ABI 1.5, to 16 + the most waits
// for tiles read once); shared-memory time and dependent launch none or 0 to 1 s; the struct_size
// left as it was, and to a host whose struct ends before shared_memory_seconds (ABI 1.1 to 1.5)
// or before whole_product (ABI 1.6) nothing written past its end.
void estimate_answers(Session &s) {
  const auto estimate = estimate_entry(s);
  const int32_t device = s.device();
  s.need_dtype(DType::kFloat32);
  const std::vector<uint8_t> exp = exp_program(8);
  yirage_backend_kernel_estimate e = no_opinion();
  yirage_backend_error error = new_error();
  expect_ok(estimate(s.instance(), device, exp.data(), exp.size(), &e, &error), error, "estimate of exp");
  expect(e.struct_size == sizeof e, "estimate rewrote struct_size");
  expect(e.loop_waits == -1 || e.loop_waits == 1,
         "estimate of exp (no for-loop): loop_waits " + std::to_string(e.loop_waits) + ", want -1 or 1");
  expect_seconds(e, "exp");
  s.need_dtype(DType::kFloat16);
  const KernelGraph fused = bench::build_fused("gated_mlp", 1, DType::kFloat16, 4);
  const size_t op = fused.operators().size() - 1;
  const int64_t range = fused.operators()[op].block_graph->config().forloop_range;
  const std::vector<uint8_t> program = serialize::kernel_program_to_bytes(serialize::make_kernel_program(fused, op));
  e = no_opinion();
  error = new_error();
  const yirage_status status = estimate(s.instance(), device, program.data(), program.size(), &e, &error);
  if (status == YIRAGE_ERROR_UNSUPPORTED) {
    yirage_backend_error supported = new_error();
    expect(
        s.api().supports(s.instance(), device, program.data(), program.size(), &supported) == YIRAGE_ERROR_UNSUPPORTED,
        "estimate refused gated_mlp's µGraph that supports() accepts");
    return;
  }
  expect_ok(status, error, "estimate of gated_mlp's µGraph");
  // Since ABI 1.5 the waits of tiles read once before the loop may come on top of its range.
  const int64_t most = range + (s.api().abi_minor >= 5 ? YIRAGE_BACKEND_MAX_READ_ONCE_WAITS : 0);
  expect(e.loop_waits == -1 || (e.loop_waits >= 1 && e.loop_waits <= most),
         "estimate of a loop of " + std::to_string(range) + " iterations: loop_waits " + std::to_string(e.loop_waits) +
             " (want -1, or 1 to " + std::to_string(most) + ")");
  expect_seconds(e, "gated_mlp's µGraph");
  e = no_opinion();
  e.struct_size = offsetof(yirage_backend_kernel_estimate, shared_memory_seconds);
  e.shared_memory_seconds = 77;
  e.dependent_launch_seconds = 77;
  e.max_resident_blocks = 77;
  error = new_error();
  expect_ok(estimate(s.instance(), device, program.data(), program.size(), &e, &error), error,
            "estimate into a struct of ABI 1.5's size");
  expect(e.shared_memory_seconds == 77 && e.dependent_launch_seconds == 77 && e.max_resident_blocks == 77,
         "estimate wrote past a struct of ABI 1.5's size");
  e = no_opinion();
  e.struct_size = offsetof(yirage_backend_kernel_estimate, whole_product);
  e.whole_product = 77;
  error = new_error();
  expect_ok(estimate(s.instance(), device, program.data(), program.size(), &e, &error), error,
            "estimate into a struct of ABI 1.6's size");
  expect(e.whole_product == 77, "estimate wrote past a struct of ABI 1.6's size");
}

// To a host before ABI 1.5 an estimate never passes the loop's range, where a newer host may
// hear the waits of tiles read once on top of it: rms_norm(X, w)·W over the whole of k in each
// block (a loop of 1), W's [1024, 32] tile read at once, asked of an instance made for a host
// of minor 4.
void estimate_older_host(Session &s) {
  const auto estimate = estimate_entry(s);
  s.need_dtype(DType::kFloat16);
  KernelGraph g;
  const TensorId x = g.new_input({8, 1024}, DType::kFloat16), w = g.new_input({1024}, DType::kFloat16);
  const TensorId wm = g.new_input({1024, 1536}, DType::kFloat16);
  BlockGraphConfig config;
  config.grid = {1536 / 32, 1, 1};
  config.block_threads = 128;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input({8, 1024}, DType::kFloat16, {-1, -1, -1}, -1);
  const TensorId wt = bg->new_input({1024}, DType::kFloat16, {-1, -1, -1}, -1);
  const TensorId wmt = bg->new_input({1024, 1536}, DType::kFloat16, {1, -1, -1}, -1);
  bg->new_output(bg->matmul(bg->rms_norm(xt, {1024}, 1e-6, wt), wmt), {1, -1, -1}, -1);
  g.mark_output(g.customized({x, w, wm}, bg)[0]);
  const std::vector<uint8_t> program =
      serialize::kernel_program_to_bytes(serialize::make_kernel_program(g, g.operators().size() - 1));
  yirage_backend_host host = s.host();
  host.abi_minor = 4;
  const yirage_backend_api &api = s.api();
  yirage_backend_instance *instance = nullptr;
  yirage_backend_error error = new_error();
  expect_ok(api.create(&host, &instance, &error), error, "create for a host of ABI 1.4");
  yirage_backend_kernel_estimate e = no_opinion();
  error = new_error();
  const yirage_status status = estimate(instance, s.device(), program.data(), program.size(), &e, &error);
  api.destroy(instance);
  if (status == YIRAGE_ERROR_UNSUPPORTED)
    not_supported("estimate refused the loop of 1: " + std::string(error.message));
  expect_ok(status, error, "estimate for a host of ABI 1.4");
  expect(e.loop_waits == -1 || e.loop_waits == 1, "estimate of a loop of 1 for a host of ABI 1.4: loop_waits " +
                                                      std::to_string(e.loop_waits) + ", want -1 or 1");
}

// Its refusals, each leaving *out_estimate as it was: NULL out_estimate, one smaller than ABI
// 1.1's, junk and truncated programs, a device that does not exist.
void estimate_errors(Session &s) {
  const auto estimate = estimate_entry(s);
  const int32_t device = s.device();
  const std::vector<uint8_t> program = exp_program(8), junk(64, 0xA5);
  auto refused = [&](int32_t d, const std::vector<uint8_t> &bytes, size_t size, size_t struct_size,
                     std::initializer_list<yirage_status> allowed, const std::string &what) {
    yirage_backend_kernel_estimate e = no_opinion();
    e.struct_size = struct_size;
    e.loop_waits = 77;
    e.shared_memory_seconds = 77;
    e.dependent_launch_seconds = 77;
    e.max_resident_blocks = 77;
    e.whole_product = 77;
    yirage_backend_error error = new_error();
    expect_error(estimate(s.instance(), d, bytes.data(), size, &e, &error), error, allowed, "estimate " + what);
    expect(e.loop_waits == 77 && e.shared_memory_seconds == 77 && e.dependent_launch_seconds == 77 &&
               e.max_resident_blocks == 77 && e.whole_product == 77 && e.struct_size == struct_size,
           "a failed estimate (" + what + ") wrote out_estimate");
  };
  yirage_backend_error error = new_error();
  expect_error(estimate(s.instance(), device, program.data(), program.size(), nullptr, &error), error,
               {YIRAGE_ERROR_INVALID_ARGUMENT}, "estimate with a NULL out_estimate");
  refused(device, program, program.size(), offsetof(yirage_backend_kernel_estimate, loop_waits),
          {YIRAGE_ERROR_INVALID_ARGUMENT}, "with out_estimate smaller than ABI 1.1's");
  refused(device, junk, junk.size(), sizeof(yirage_backend_kernel_estimate), {YIRAGE_ERROR_CORRUPT_DATA},
          "of 64 junk bytes");
  refused(device, program, program.size() / 2, sizeof(yirage_backend_kernel_estimate),
          {YIRAGE_ERROR_CORRUPT_DATA, YIRAGE_ERROR_INVALID_ARGUMENT}, "of half a program");
  refused(s.plugin().device_count(), program, program.size(), sizeof(yirage_backend_kernel_estimate),
          {YIRAGE_ERROR_INVALID_ARGUMENT, YIRAGE_ERROR_NOT_FOUND}, "on a device that does not exist");
}

}  // namespace

void add_abi_tests(std::vector<TestCase> &tests) {
  tests.push_back({"abi.entry.table", entry_table});
  const struct {
    const char *name;
    uint32_t major, minor;
  } versions[] = {
      {"abi.entry.same_version", YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR},
      {"abi.entry.older_minor", YIRAGE_BACKEND_ABI_MAJOR, 0},
      {"abi.entry.newer_minor", YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR + 5},
      {"abi.entry.next_major", YIRAGE_BACKEND_ABI_MAJOR + 1, 0},
      {"abi.entry.previous_major", YIRAGE_BACKEND_ABI_MAJOR - 1, 9},
  };
  for (const auto &v : versions) {
    const uint32_t major = v.major, minor = v.minor;
    tests.push_back({v.name, [major, minor](Session &s) { entry_versions(s, major, minor); }});
  }
  tests.push_back({"abi.create.other_major", create_other_major});
  tests.push_back({"abi.create.newer_minor", create_newer_minor});
  tests.push_back({"abi.create.host_struct_smaller", create_host_smaller});
  tests.push_back({"abi.create.host_struct_larger", create_host_larger});
  tests.push_back({"abi.create.null_arguments", create_null});
  tests.push_back({"abi.create.two_instances", two_instances});
  tests.push_back({"abi.release_null", release_null});
  tests.push_back({"abi.error_channel.smaller", error_channel_smaller});
  tests.push_back({"abi.out_params_untouched_on_error", out_untouched});
  tests.push_back({"abi.device_info.struct_smaller", device_info_smaller});
  tests.push_back({"abi.device_info.struct_larger", device_info_larger});
  tests.push_back({"abi.compile_options", compile_options});
  tests.push_back({"abi.estimate.answers", estimate_answers});
  tests.push_back({"abi.estimate.errors", estimate_errors});
  tests.push_back({"abi.estimate.older_host", estimate_older_host});
}

}  // namespace yirage::conformance
