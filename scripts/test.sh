#!/usr/bin/env bash
# Sets up, then runs every test in three builds: the normal one (./build), an AddressSanitizer +
# UndefinedBehaviorSanitizer one (./build-asan), and a clang libFuzzer one (./build-fuzz) that
# fuzzes every loader of untrusted bytes for a short while; then, in a ThreadSanitizer build
# (./build-tsan) of only the library, the CPU plugin and the concurrency test, that test
# (capi_threads: eight threads on one context). Warnings are errors. The sanitized builds are
# compiled at -O1 with line tables only (-g1): enough for the sanitizers' stack traces, and a
# third of the compile time of -O2 -g, which made the ASan build alone 14 of CI's 33 minutes on
# two cores (their tests run no slower).
# Then checks the Python package as a user gets it (scripts/check_python_install.sh: `pip install .`
# into a fresh venv with the CPU and OpenCL plugins, `meson devenv`; about a minute, most of it
# building the wheel).
# Ends with one line "N passed, N failed" counting meson tests over all builds and those checks.
set -uo pipefail
cd "$(dirname "$0")/.."

# Runs a build step quietly; where it fails, shows why (its error lines, else its last lines)
# and ends with the count line, so that CI's log says what broke.
quietly() {
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    echo "test.sh: '$*' failed:"
    grep -E "error|FAILED" "$log" | head -n 30 || tail -n 30 "$log"
    rm -f "$log"
    echo "0 passed, 1 failed"
    exit 1
  fi
  rm -f "$log"
}

quietly scripts/setup.sh build
echo "setup: built build"
# UBSan's null and alignment checks (at every member access and reference) were half of the ASan
# tree's compile time; ASan itself reports a null dereference, and the fuzz tree keeps both checks.
asan_flags="-g1 -fno-sanitize=null,alignment"
if [ ! -f build-asan/build.ninja ]; then
  # The conformance and runtime tests share the plain build's kernel cache: the generated kernels
  # are the same.
  # Without the CUDA and HIP plugins, which run nothing without their GPUs (their host parts'
  # tests run in the plain tree; the CUDA generator, which HIP's prints through, is fuzzed under
  # ASan in the fuzz tree): together a fifth of the tree's compile time.
  quietly meson setup build-asan --werror -Db_sanitize=address,undefined -Db_lundef=false \
    -Doptimization=1 -Ddebug=false -Dc_args="$asan_flags" -Dcpp_args="$asan_flags" \
    -Dbackends=opencl,level_zero,vulkan \
    -Dtest_cache_dir="$PWD/build/conformance/conformance-cache"
fi
quietly ninja -C build-asan
echo "setup: built build-asan"
if [ ! -f build-fuzz/build.ninja ]; then
  quietly env CC=clang-14 CXX=clang++-14 meson setup build-fuzz --werror -Dfuzzing=true -Dtests=false \
    -Dfuzz_seconds=12 -Db_sanitize=address,undefined -Db_lundef=false \
    -Doptimization=1 -Ddebug=false -Dc_args=-gline-tables-only -Dcpp_args=-gline-tables-only
fi
quietly ninja -C build-fuzz fuzzers # only what its tests run (fuzz/meson.build)
echo "setup: built build-fuzz"
if [ ! -f build-tsan/build.ninja ]; then
  # capi_threads keeps its kernel cache in the tree (capi_tests/threads-cache), not in the plain
  # tree's: on a first run, four threads at a time compile one kernel under TSan too.
  quietly meson setup build-tsan --werror -Db_sanitize=thread -Db_lundef=false \
    -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1
fi
# Only what capi_threads runs: libyirage (through the test), the CPU plugin and the test.
quietly ninja -C build-tsan capi_tests/threads_test backends/cpu/libyirage-backend-cpu.so
echo "setup: built build-tsan"

# Four frames of allocation stack per heap block, not 30: recording them was a fifth of the
# search tests' time under ASan. A report that needs more reruns the test with the default.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:malloc_context_size=4
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for dir in build build-asan build-fuzz; do
  echo "== meson test in $dir"
  meson test -C "$dir" --no-rebuild --print-errorlogs || status=1
done
echo "== meson test in build-tsan (capi_threads)"
# Any report fails the test (exit status 66); scripts/tsan.supp lists what is not yirage's.
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp" \
  meson test -C build-tsan --no-rebuild --print-errorlogs capi_threads || status=1

echo "== Python install checks"
scripts/check_python_install.sh build || status=1

/usr/bin/python3 - build/meson-logs/testlog.json build-asan/meson-logs/testlog.json \
  build-fuzz/meson-logs/testlog.json build-tsan/meson-logs/testlog.json \
  build/python-install-check/testlog.json <<'PY'
import json, os, sys
passed = failed = skipped = 0
for log in sys.argv[1:]:
    if not os.path.exists(log):  # its runner died before writing a result
        print(f"{log}: missing, counted as one failure")
        failed += 1
        continue
    with open(log) as f:
        for line in f:
            result = json.loads(line)["result"]
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
exit $status
