#!/bin/bash
# The conformance runner's own behaviour: listing and filters, a crashing and a hanging plugin
# (the runner survives both), expectations (expected failures, stale lines, malformed files),
# JSON and JUnit output, exit codes.
# The lax plugin (the loader tests' zero-device fake) breaks ABI rules on purpose: the suite must
# fail it.
# usage: runner_test.sh RUNNER CRASH_PLUGIN HANG_PLUGIN SKELETON_PLUGIN LAX_PLUGIN WORKDIR
set -u
runner=$1 crash=$2 hang=$3 skeleton=$4 lax=$5 work=$6
rm -rf "$work" && mkdir -p "$work"
failures=0
check() {  # check DESCRIPTION CONDITION…
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
run() {  # run EXPECTED_STATUS ARGS…: runs the runner into $work/out
  local want=$1
  shift
  "$runner" "$@" >"$work/out" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAILED: exit status $got, expected $want: $*"
    cat "$work/out"
    failures=$((failures + 1))
  fi
}
has() { grep -q -E -- "$1" "$work/out"; }

run 0 --list
check "the list holds every group" has abi.entry.table
check "kernel tests per op and dtype" has kernels.matmul.bfloat16
check "the fused µGraphs" has kernels.fused.gated_mlp.float16
check "more than 100 tests" [ "$(wc -l <"$work/out")" -gt 100 ]
run 0 --list --filter 'abi.*' --filter '-abi.entry.*'
check "filters include and exclude" [ "$(grep -c . "$work/out")" -gt 5 ]
check "excluded tests are gone" bash -c "! grep -q abi.entry '$work/out'"

run 1 --plugin "$crash" --filter abi.release_null
check "a crash is reported as Crash" has "Crash *abi.release_null"
# (under AddressSanitizer the child reports the SEGV itself and exits or aborts)
check "with the signal or exit status" has "killed by signal|exited with status"
run 1 --plugin "$hang" --filter devices.count_and_reason --timeout 2
check "a hang is reported as Timeout" has "Timeout *devices.count_and_reason"

printf 'abi.release_null  Crash  destroy(NULL) crashes\n# a comment\n\n' >"$work/crash.txt"
run 0 --plugin "$crash" --filter abi.release_null --expectations "$work/crash.txt" \
  --json "$work/r.json" --junit "$work/r.xml"
check "an expected crash is as expected" has "1 expected failures, 0 unexpected"
check "JSON is valid and has the verdict" /usr/bin/python3 -c "
import json, sys
r = json.load(open('$work/r.json'))
t = r['tests'][0]
sys.exit(not (t['outcome'] == 'Crash' and t['verdict'] == 'as_expected' and t['expected'] == 'Crash'))"
check "JUnit is valid and skips the expected crash" /usr/bin/python3 -c "
import sys, xml.etree.ElementTree as E
s = E.parse('$work/r.xml').getroot().find('testsuite')
sys.exit(not (s.get('tests') == '1' and s.get('skipped') == '1' and s.get('errors') == '0'))"

printf 'abi.release_null  Fail\nno.such.test Fail\n' >"$work/stale.txt"
run 1 --plugin "$skeleton" --expectations "$work/stale.txt" --filter 'abi.*'
check "an expected failure that passes is reported" has "remove that line"
run 1 --plugin "$skeleton" --expectations "$work/stale.txt"
check "a line matching no test is noted" has "stale.txt:2 \\(no.such.test\\) matches no test"

run 0 --plugin "$skeleton" --filter 'kernels.exp.*' --filter 'buffers.alloc.1'
check "zero devices make device tests NotSupported" has "NotSupported *buffers.alloc.1"
check "with the plugin's reason" has "drives no hardware"

run 1 --plugin "$lax" --filter 'abi.create.*'
check "a plugin accepting another major's host fails" has "Fail *abi.create.other_major"
check "a plugin accepting a NULL host fails" has "Fail *abi.create.null_arguments"
check "a plugin ignoring a short host struct fails" has "Fail *abi.create.host_struct_smaller"

printf 'abi.release_null  Maybe\n' >"$work/bad.txt"
run 2 --plugin "$skeleton" --expectations "$work/bad.txt"
check "a malformed expectations file names its line" has "bad.txt:1: unknown outcome 'Maybe'"
run 2 --plugin no-such-backend
check "an unknown plugin name lists where it looked" has "libyirage-backend-no-such-backend.so"
run 2 --plugin "$skeleton" --filter 'nothing.*'
run 2 --plugin "$skeleton" --jobs 0

echo "$failures failure(s)"
[ "$failures" = 0 ]
