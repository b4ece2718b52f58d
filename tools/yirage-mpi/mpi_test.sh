#!/bin/bash
# yirage-mpi end to end (meson test): on 1, 2 and 4 ranks (oversubscribed on CI's 2 cores; gqa on
# 2) it saves exactly the candidates of one `yirage superoptimize` process; a run stopped by
# --max-units, and one killed outright, resume from their checkpoint redoing no finished unit;
# a corrupt or foreign unit in the checkpoint is refused with the file's name.
#   mpi_test.sh YIRAGE YIRAGE_MPI GRAPHS_FOLDER WORK_FOLDER
set -u
yirage=$1
yirage_mpi=$2
graphs=$3
work=$4
rm -rf "$work"
mkdir -p "$work"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# --allow-run-as-root: CI runs as root; --oversubscribe: more ranks than cores.
mpi() {
  local ranks=$1
  shift
  mpirun --allow-run-as-root --oversubscribe -np "$ranks" "$yirage_mpi" superoptimize "$@"
}
search=(--target h100 --threads 1 --quiet)

for graph in rmsnorm_linear gqa; do
  "$yirage" superoptimize "$graphs/$graph.json" "${search[@]}" --candidates "$work/$graph-one" > "$work/$graph-one.out" ||
    fail "$graph: yirage superoptimize"
  for ranks in 1 2 4; do
    [ "$graph" = gqa ] && [ "$ranks" != 2 ] && continue # 1 and 4 ranks: rmsnorm_linear's
    mpi "$ranks" "$graphs/$graph.json" "${search[@]}" --units 32 --candidates "$work/$graph-$ranks" \
      > "$work/$graph-$ranks.out" 2> "$work/$graph-$ranks.err" || fail "$graph on $ranks ranks: $(cat "$work/$graph-$ranks.err")"
    diff -r "$work/$graph-one" "$work/$graph-$ranks" > /dev/null ||
      fail "$graph on $ranks ranks: other candidates than one process"
    diff <(grep '^best:' "$work/$graph-one.out") <(grep '^best:' "$work/$graph-$ranks.out") ||
      fail "$graph on $ranks ranks: another best candidate"
    grep -q "work units: 0 from the checkpoint, [0-9]* run now on $ranks rank(s); 0 not run" "$work/$graph-$ranks.err" ||
      fail "$graph on $ranks ranks: $(cat "$work/$graph-$ranks.err")"
  done
done

# --trace: a plan row per rank, a row per unit (each run once, by a rank of the job), the merge.
graph=$graphs/rmsnorm_linear.json
mpi 2 "$graph" "${search[@]}" --units 16 --trace "$work/trace.tsv" > /dev/null 2> "$work/trace.err" ||
  fail "--trace: $(cat "$work/trace.err")"
units=$(grep -o '^yirage-mpi: [0-9]* work units' "$work/trace.err" | grep -o '[0-9][0-9]*')
awk -F'\t' -v units="${units:-0}" '
  NR == 1 { ok = $0 == "event\tunit\trank\tthread\tstart_s\tend_s\tran_s\tstates"; next }
  $1 == "plan" { plans[$3]++; ok = ok && $6 >= 0 }
  $1 == "unit" { seen[$2]++; ok = ok && ($3 == 0 || $3 == 1) && $6 >= $5 && $7 >= 0 && $7 <= $6 - $5 + 0.01 }
  $1 == "merge" { merges++ }
  END { for (u = 0; u < units; ++u) ok = ok && seen[u] == 1
        exit !(ok && units > 0 && length(seen) == units && plans[0] == 1 && plans[1] == 1 && merges == 1) }' \
  "$work/trace.tsv" || fail "--trace: unexpected rows: $(head -5 "$work/trace.tsv")"

# Stopped by --max-units, then resumed: the finished units are not run again.
mpi 2 "$graph" "${search[@]}" --units 16 --checkpoint "$work/ck" --max-units 3 > /dev/null 2> "$work/stop.err" &&
  fail "--max-units: exit status 0 for an unfinished search"
grep -q 'stopped after [0-9]* units (--max-units)' "$work/stop.err" || fail "--max-units: $(cat "$work/stop.err")"
kept=$(ls "$work"/ck/*/unit-*.yrsc | wc -l)
[ "$kept" -ge 3 ] || fail "--max-units: $kept units in the checkpoint"
mpi 2 "$graph" "${search[@]}" --units 16 --checkpoint "$work/ck" --candidates "$work/resumed" > /dev/null \
  2> "$work/resume.err" || fail "resuming: $(cat "$work/resume.err")"
grep -q "work units: $kept from the checkpoint" "$work/resume.err" || fail "resuming: $(cat "$work/resume.err")"
diff -r "$work/rmsnorm_linear-one" "$work/resumed" > /dev/null || fail "resumed: other candidates than one process"

# A corrupt unit, then a unit of another plan, in the checkpoint: refused, naming the file.
unit=$(ls "$work"/ck/*/unit-*.yrsc | head -1)
cp "$unit" "$work/unit.bak"
head -c 100 "$work/unit.bak" > "$unit"
mpi 1 "$graph" "${search[@]}" --units 16 --checkpoint "$work/ck" > /dev/null 2> "$work/corrupt.err" &&
  fail "a corrupt checkpoint was accepted"
grep -q "checkpoint $unit: .*delete it" "$work/corrupt.err" || fail "corrupt checkpoint: $(cat "$work/corrupt.err")"
mpi 1 "$graphs/gqa.json" "${search[@]}" --units 8 --checkpoint "$work/other" --max-units 1 > /dev/null 2>&1
cp "$(ls "$work"/other/*/unit-*.yrsc | head -1)" "$unit"
mpi 1 "$graph" "${search[@]}" --units 16 --checkpoint "$work/ck" > /dev/null 2> "$work/foreign.err" &&
  fail "a foreign checkpoint was accepted"
grep -q "checkpoint $unit: .*another plan" "$work/foreign.err" || fail "foreign checkpoint: $(cat "$work/foreign.err")"

# Killed outright (SIGKILL to the whole job) once a unit is in the checkpoint, then resumed.
setsid bash -c "mpirun --allow-run-as-root --oversubscribe -np 2 '$yirage_mpi' superoptimize '$graphs/gqa.json' \
  --target h100 --threads 1 --quiet --units 64 --checkpoint $work/killed > /dev/null 2>&1" &
job=$!
for _ in $(seq 1 3000); do
  ls "$work"/killed/*/unit-*.yrsc > /dev/null 2>&1 && break
  sleep 0.01
done
# Every process of the job: mpirun may start its ranks in their own process groups.
kill -KILL -- -"$job" 2> /dev/null
pkill -KILL -f -- "--checkpoint $work/killed" 2> /dev/null
wait "$job" 2> /dev/null
while pgrep -f -- "--checkpoint $work/killed" > /dev/null; do sleep 0.05; done
kept=$(ls "$work"/killed/*/unit-*.yrsc 2> /dev/null | wc -l)
mpi 2 "$graphs/gqa.json" "${search[@]}" --units 64 --checkpoint "$work/killed" --candidates "$work/after-kill" \
  > /dev/null 2> "$work/kill.err" || fail "resuming the killed run: $(cat "$work/kill.err")"
total=$(sed -n 's/.*: \([0-9]*\) work units.*/\1/p' "$work/kill.err")
if [ "$kept" -lt 1 ] || [ "$kept" -ge "${total:-0}" ]; then
  fail "the killed run left $kept of ${total:-?} units (it must be killed part way)"
fi
grep -q "work units: $kept from the checkpoint" "$work/kill.err" || fail "after the kill: $(cat "$work/kill.err")"
diff -r "$work/gqa-one" "$work/after-kill" > /dev/null || fail "after the kill: other candidates than one process"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "yirage-mpi: all checks passed"
