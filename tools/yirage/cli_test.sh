#!/bin/bash
# End-to-end test of the yirage CLI: every command, exit codes and messages.
# usage: cli_test.sh YIRAGE TESTDATA WORKDIR
set -u
yirage=$1 data=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
small=$data/rmsnorm_linear_small.json
failures=0

# expect CODE PATTERN -- command...: runs it, checks the exit code and that PATTERN occurs in
# its combined output.
expect() {
  local code=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc -ne $code ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* (exit $rc, expected $code; wanted /$pattern/)"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

expect 0 'usage: yirage' -- "$yirage" --help
# Every command answers --help (and -h, and `yirage help COMMAND`) with its own usage on stdout.
for command in devices superoptimize run bench show; do
  for ask in "$command --help" "$command -h" "help $command"; do
    out=$("$yirage" $ask 2>/dev/null)
    rc=$?
    if [[ $rc -eq 0 ]] && grep -q "^usage: yirage $command" <<<"$out"; then
      echo "ok: yirage $ask"
    else
      echo "FAIL: yirage $ask (exit $rc; wanted 'usage: yirage $command' on stdout)"
      failures=$((failures + 1))
    fi
  done
done
expect 0 '--reference GRAPH' -- "$yirage" run --help
expect 0 "--plan" -- "$yirage" run --help
expect 2 'unknown command frobnicate' -- "$yirage" frobnicate --help
expect 2 'no command' -- "$yirage"
expect 2 'unknown command frobnicate' -- "$yirage" frobnicate x
expect 2 'run needs a graph file' -- "$yirage" run
expect 2 'unknown option --frob' -- "$yirage" show "$small" --frob
expect 2 'bad value for --budget' -- "$yirage" bench "$small" --budget -3
expect 2 'repeats must be a whole number from 1 to 16777216, not 4294967297' -- "$yirage" run "$small" --repeats 4294967297
expect 2 'device must be a whole number from 0 to 2147483647, not 0.5' -- "$yirage" run "$small" --device 0.5
expect 1 'is a directory, not a graph file' -- "$yirage" run "$work"
expect 0 "launch(es)? a run on cpu device 0:" -- "$yirage" run "$small" --plan --repeats 2
expect 2 "unknown option --plan" -- "$yirage" show "$small" --plan
expect 0 'cpu .*: 1 device' -- "$yirage" devices
expect 0 'rms_norm\(t0\)' -- "$yirage" show "$small"
# show --format dot|svg: the picture of a fused graph, its µGraph as a cluster; svg through
# Graphviz's `dot` on PATH, a precise error without it.
fused=$data/../../../examples/graphs/rmsnorm_linear_fused.json
expect 0 'subgraph cluster_k2 \{' -- "$yirage" show "$fused" --format dot
expect 2 '--format must be text, dot or svg, not png' -- "$yirage" show "$small" --format png
expect 0 '' -- "$yirage" show "$fused" --format dot -o "$work/fused.dot"
expect 0 'imap=\{x->1\} fmap=0' -- cat "$work/fused.dot"
expect 0 '' -- "$yirage" show "$small" -o "$work/small.txt"
expect 0 'rms_norm\(t0\)' -- cat "$work/small.txt"
mkdir -p "$work/no-dot" "$work/bad-dot"
expect 1 '^yirage: --format svg needs Graphviz'"'"'s `dot` program \(Debian: apt-get install graphviz\)$' -- \
  env PATH="$work/no-dot" "$yirage" show "$fused" --format svg
printf '#!/bin/sh\nexit 3\n' > "$work/bad-dot/dot" && chmod +x "$work/bad-dot/dot"
expect 1 'bad-dot/dot -Tsvg failed \(exit status 3\)' -- env PATH="$work/bad-dot" "$yirage" show "$fused" --format svg
if command -v dot >/dev/null; then
  expect 0 '<svg' -- "$yirage" show "$fused" --format svg
  expect 0 '' -- "$yirage" show "$fused" --format svg -o "$work/fused.svg"
  expect 0 '<title>cluster_k2_loop</title>' -- cat "$work/fused.svg"
  # Graphviz takes the DOT of every example graph, fused or not.
  for graph in "$data"/../../../examples/graphs/*.json; do
    expect 0 '</svg>' -- "$yirage" show "$graph" --format svg
  done
else
  echo "skipped: show --format svg (no Graphviz dot on PATH; Debian: apt-get install graphviz)"
fi
expect 1 'yirage: .*missing.json' -- "$yirage" run "$work/missing.json"
expect 1 "no backend named 'nosuch'" -- "$yirage" run "$small" --backend nosuch
expect 1 'cannot load plugin' -- "$yirage" devices --plugin "$work/nothing.so"
# Plugins the loader does not trust: a device count out of range is refused in-process; with
# --isolated (or YIRAGE_PLUGIN_PROBE=isolated) a plugin that crashes or hangs while loading is
# skipped with the reason, and the CPU backend still lists its device.
expect 1 'test-plugin-huge_count.so: the plugin reports 2000000000 devices' -- \
  "$yirage" devices --plugin "$YIRAGE_TEST_PLUGIN_HUGE_COUNT"
mkdir -p "$work/bad-plugins"
cp "$YIRAGE_TEST_PLUGIN_CREATE_SEGV" "$work/bad-plugins/libyirage-backend-segv.so"
cp "$YIRAGE_TEST_PLUGIN_CREATE_HANG" "$work/bad-plugins/libyirage-backend-hang.so"
isolated=(env YIRAGE_BACKEND_PATH="$work/bad-plugins:$YIRAGE_BACKEND_PATH" YIRAGE_PLUGIN_PROBE_TIMEOUT=0.5)
expect 0 '^cpu .*: 1 device' -- "${isolated[@]}" "$yirage" devices --isolated
expect 0 'backend-segv.so: the plugin.s probe process was killed by signal 11 \(SIGSEGV\)' -- \
  "${isolated[@]}" "$yirage" devices --isolated
expect 0 'backend-hang.so: the plugin did not finish loading within 0.5 s' -- \
  "${isolated[@]}" YIRAGE_PLUGIN_PROBE=isolated "$yirage" devices
expect 2 '--isolated is an option of devices, not run' -- "$yirage" run "$small" --isolated
expect 1 "YIRAGE_PLUGIN_PROBE must be isolated or in-process, not 'forked'" -- \
  env YIRAGE_PLUGIN_PROBE=forked "$yirage" devices
expect 0 'correct \(relative error' -- "$yirage" run "$small" --repeats 3
expect 0 'over 3 runs on cpu device 0, L2 flushed before each' -- "$yirage" run "$small" --repeats 3 --cold
expect 1 "no C\+\+ compiler: 'no-such-c\+\+' could not be run" -- \
  env YIRAGE_CPU_CXX=no-such-c++ "$yirage" run "$small"
expect 0 'saved to' -- "$yirage" superoptimize "$small" -o "$work/best.yrg" --budget 60 --top-k 2 --repeats 3 --quiet
# The best graph is a fused candidate (after pre-defined kernels or not), or the input itself
# when nothing beat it.
expect 0 'customized\(t[0-9], t1\)|matmul\(t2, t1\)' -- "$yirage" show "$work/best.yrg"
# The input graph is always candidate 0: as it is, or with its kernels run as one program where
# that measured faster (the CPU's parallel region; a matter of timing on a busy machine).
expect 0 'the input graph, (unchanged|with kernels run as one program)' -- "$yirage" superoptimize "$small" --budget 60 --top-k 1 --repeats 2 --quiet
# Each measurement comes with the spread of its timed runs (a busy machine widens it), the best's
# too.
expect 0 '^  0 +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s to [0-9.]+ [mu]?s over 2 runs +[0-9.]+e[-+][0-9]+ +ok' -- \
  "$yirage" superoptimize "$small" --budget 60 --top-k 1 --repeats 2 --quiet
expect 0 '^best: .*, measured [0-9.]+ [mu]?s \([0-9.]+ [mu]?s to [0-9.]+ [mu]?s over 2 runs\)$' -- \
  "$yirage" superoptimize "$small" --budget 60 --top-k 1 --repeats 2 --quiet
# --top-k profiles that many candidates, more than the search keeps by default (4).
expect 0 '^  5 +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s' -- "$yirage" superoptimize "$small" --budget 60 --top-k 6 --repeats 2 --quiet
# --max-inputs: RoPE after the query projection has five inputs; with four a fused operator may
# read, the projection stays a pre-defined kernel, with five the cheapest estimate fuses both.
rope_q=$data/../../../examples/graphs/rope_q_projection.json
expect 0 '^  1 .* ok +1 pre-defined kernel\(s\), then customized grid' -- \
  "$yirage" superoptimize "$rope_q" --budget 60 --top-k 1 --repeats 2 --quiet -o "$work/rope.yrg"
expect 0 '^  1 .* ok +customized grid' -- \
  "$yirage" superoptimize "$rope_q" --max-inputs 5 --budget 60 --top-k 1 --repeats 2 --quiet -o "$work/rope.yrg"
expect 2 '^yirage: --max-inputs must be a whole number from 1 to 16, not 17' -- \
  "$yirage" superoptimize "$rope_q" --max-inputs 17
expect 2 '^yirage: --max-inputs is an option of superoptimize and bench, not run' -- \
  "$yirage" run "$rope_q" --max-inputs 5
# --candidates saves every measured candidate and a table of their figures.
expect 0 "^measured candidates saved in $work/candidates\$" -- \
  "$yirage" superoptimize "$small" --budget 60 --top-k 3 --repeats 2 --quiet --candidates "$work/candidates"
expect 0 $'^0\t[0-9.e-]+\t[0-9.e-]+\t[0-9.e-]+\t[0-9.e-]+\t' -- cat "$work/candidates/candidates.tsv"
expect 0 'customized|matmul' -- "$yirage" show "$work/candidates/0.yrg"
expect 2 '^yirage: --candidates is an option of superoptimize, not run' -- \
  "$yirage" run "$small" --candidates "$work/candidates"
# A graph that is already fused is refused with the library's reason, once.
expect 1 '^yirage: searching: superoptimize: the graph already has a customized operator' -- \
  "$yirage" superoptimize "$data/../../../examples/graphs/lora_fused.json" --quiet
# The search cache answers the same request from another process: the host's measured figures,
# part of the request, are kept per machine (YIRAGE_CACHE_DIR/host).
expect 0 'search: [0-9.]+ s, ' -- "$yirage" superoptimize "$small" --cache "$work/search-cache" --budget 60 --top-k 1 --repeats 2 --quiet
expect 0 'search: [0-9.]+ s \(from the cache\), ' -- "$yirage" superoptimize "$small" --cache "$work/search-cache" --budget 60 --top-k 1 --repeats 2 --quiet
# That answer was profiled: it is given at once, nothing measured; --remeasure measures again.
expect 0 'a cached profiled answer: nothing measured now' -- "$yirage" superoptimize "$small" --cache "$work/search-cache" --budget 60 --top-k 1 --repeats 2 --quiet
expect 0 '^  0 +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s' -- "$yirage" superoptimize "$small" --cache "$work/search-cache" --budget 60 --top-k 1 --repeats 2 --quiet --remeasure

# expect_lines CODE N PATTERN -- command...: runs it, checks the exit code and that PATTERN occurs
# on exactly N lines of its combined output.
expect_lines() {
  local code=$1 n=$2 pattern=$3
  shift 4
  local out rc found
  out=$("$@" 2>&1)
  rc=$?
  found=$(grep -cE -- "$pattern" <<<"$out")
  if [[ $rc -ne $code || $found -ne $n ]]; then
    echo "FAIL: $* (exit $rc, expected $code; /$pattern/ on $found lines, expected $n)"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

# Caches never cost the answer (docs/backends.md and docs/search.md, "Cache"). -o into a folder
# that does not exist fails before the search, not after it.
expect_lines 1 1 "^yirage: cannot write $work/missing/best.yrg: No such file or directory\$" -- \
  "$yirage" superoptimize "$small" -o "$work/missing/best.yrg" --budget 60 --top-k 1 --repeats 2 --quiet
expect_lines 1 0 '^search:' -- "$yirage" superoptimize "$small" -o "$work/missing/best.yrg" --budget 60 --quiet
# A search cache that cannot be written: the answer is saved all the same, with one warning.
printf 'a file, not a folder' > "$work/not-a-folder"
expect_lines 0 1 '^yirage \[warning\] search cache: the answer is returned but not stored: ' -- \
  env YIRAGE_LOG=warning "$yirage" superoptimize "$small" --cache "$work/not-a-folder/search" -o "$work/uncached.yrg" \
  --budget 60 --top-k 1 --repeats 2 --quiet
expect 0 'rms_norm|customized' -- "$yirage" show "$work/uncached.yrg"
# A kernel cache that cannot be created: kernels are built privately, with one warning for all.
expect_lines 0 1 'cpu: the kernel cache .* cannot be written' -- \
  env YIRAGE_LOG=warning YIRAGE_CACHE_DIR="$work/not-a-folder/cache" "$yirage" run "$small" --repeats 1
# A populated kernel cache that only its owner may write (root runs this as user nobody, whom
# permissions stop): its kernels are served and nothing is written; a miss is built privately.
cp -r "$work/cache" "$work/ro-cache" && chmod -R a+rX,a-w "$work/ro-cache"
as_other=()
[[ $(id -u) -eq 0 ]] && as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [[ $(id -u) -ne 0 ]] || command -v setpriv >/dev/null; then
  before=$(ls -lR "$work/ro-cache")
  expect_lines 0 0 'warning' -- \
    env YIRAGE_LOG=warning YIRAGE_CACHE_DIR="$work/ro-cache" "${as_other[@]}" "$yirage" run "$small" --repeats 1
  expect_lines 0 1 'cpu: the kernel cache .* cannot be written' -- \
    env YIRAGE_LOG=warning YIRAGE_CACHE_DIR="$work/ro-cache" "${as_other[@]}" \
    "$yirage" run "$data/../../../examples/graphs/gqa.json" --repeats 1
  [[ $(ls -lR "$work/ro-cache") == "$before" ]] || { echo "FAIL: the read-only cache changed"; failures=$((failures + 1)); }
else
  echo "skipped: a read-only kernel cache (running as root without setpriv to become another user)"
fi
chmod -R u+w "$work/ro-cache"
# Kernel cache entries that link to /dev/zero, then checksum files of 3 GiB (sparse), are rebuilt
# and replaced, not read: the first once grew `yirage run` to 24 GB. Bounded (where no sanitizer
# reserves address space) so that a regression fails instead of meeting the OOM killer.
bounded() {
  (ldd "$yirage" | grep -q libasan || ulimit -v 8388608; timeout 120 env YIRAGE_CPU_THREADS=2 "$@")
}
bad=(env YIRAGE_LOG=warning YIRAGE_CACHE_DIR="$work/bad-cache" "$yirage" run "$small" --repeats 1)
expect 0 'correct' -- "${bad[@]}"
objects=("$work"/bad-cache/cpu/*.so)
for object in "${objects[@]}"; do ln -sf /dev/zero "$object"; done
expect_lines 0 ${#objects[@]} 'cpu: rebuilding .*\.so: a symbolic link' -- bounded "${bad[@]}"
for object in "${objects[@]}"; do truncate -s 3G "$object.sum"; done
expect_lines 0 ${#objects[@]} 'cpu: rebuilding .*\.so: its checksum file: 3 GiB' -- bounded "${bad[@]}"
expect_lines 0 0 'warning' -- "${bad[@]}"

expect 0 'correct' -- "$yirage" run "$work/best.yrg" --reference "$small" --repeats 3
expect 0 'speedup [0-9.]+x' -- "$yirage" bench "$small" --budget 60 --top-k 2 --repeats 3 --quiet
# A graph whose own float16 tensors overflow however narrow its inputs (exp(4096 x)) is wrong on
# every backend against the float64 reference; the message says which tensor and why. Mirage's
# attention (no max subtraction; examples/graphs/gqa.json) overflows on U(-1, 1) only: it is
# checked on narrower inputs and is correct.
expect 1 'the graph itself overflows float16 on inputs in \[-0.015625, 0.015625\]: t2 = exp\(t1\) reaches' -- \
  "$yirage" run "$data/overflow.json" --repeats 1
expect 0 'correct' -- "$yirage" run "$data/../../../examples/graphs/gqa.json" --repeats 1
# A search too short to verify anything answers with the input graph; here that overflows too,
# and the table says so.
# (A dropped graph's row says "not timed", never a sentinel time.)
for pattern in 'dropped: .*overflows float16' 'no correct candidate was found \(the budget ran out' \
  '^  0 +[0-9.]+ [mu]?s +not timed +inf +DROP +the input graph'; do
  expect 1 "$pattern" -- \
    "$yirage" superoptimize "$data/overflow.json" --budget 0.001 --top-k 1 --repeats 1 --quiet
done
# A graph checked against a reference that computes something else is reported as wrong.
sed 's/"RmsNorm"/"Exp"/; /"sizes": \[\n *256\n *\]/d' "$small" > "$work/other.json"
python3 - "$small" "$work/other.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
g["operators"][2] = {"kind": "Exp", "inputs": [0]}
json.dump(g, open(sys.argv[2], "w"))
PY
expect 1 'wrong result: output 0: relative error' -- "$yirage" run "$small" --reference "$work/other.json" --repeats 1

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
