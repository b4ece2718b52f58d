#!/bin/bash
# The scaling of yirage-mpi (benchmarks/search/distributed.md): one search, gqa at --max-block-ops
# OPS (default 12) for the h100 target, run as RUNS says, each saving its candidates in
# $CANDIDATES/<run>/ (default $OUT; thousands of files), a line in $OUT/summary.txt and, for the
# yirage-mpi runs, where and when each unit ran in $OUT/<run>.trace.tsv (--trace). Runs:
#   t<N>      yirage superoptimize, one process with N threads
#   np<N>     yirage-mpi on N ranks, one thread each
#   np<N>x<T> yirage-mpi on N ranks, T threads each
#   <run>_preload  that run with LD_PRELOAD=$PRELOAD (e.g. another allocator: libjemalloc.so.2)
# BIN: the folder with yirage and yirage-mpi (default: this build's). For another machine, carry
# them with libyirage.so.1, libz3.so.4 and libflatbuffers.so.2 and set LD_LIBRARY_PATH.
#   RUNS="t1 np16 np8 np4 np2 t16" OUT=/tmp/scale bash benchmarks/search/distributed.sh
set -u
BIN=${BIN:-build/tools}
yirage=$BIN/yirage/yirage
yirage_mpi=$BIN/yirage-mpi/yirage-mpi
[ -x "$yirage" ] || yirage=$BIN/yirage
[ -x "$yirage_mpi" ] || yirage_mpi=$BIN/yirage-mpi
OUT=${OUT:-/tmp/yirage-scale}
CANDIDATES=${CANDIDATES:-$OUT}
mkdir -p "$OUT" "$CANDIDATES"
exec > >(tee -a "$OUT/summary.txt") 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
graph=examples/graphs/gqa.json
args=(--target h100 --quiet --budget 5000 --max-block-ops "${OPS:-12}")
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
mpirun --version | head -1
for run in ${RUNS:-t1 np2 np4 np8 np16 t16}; do
  spec=${run%_preload}
  preload=() mpi_env=(-x LD_LIBRARY_PATH)
  [ "$spec" != "$run" ] && preload=(env LD_PRELOAD="$PRELOAD") mpi_env+=(-x LD_PRELOAD)
  case $spec in
    t*) cmd=("${preload[@]}" "$yirage" superoptimize "$graph" "${args[@]}" --threads "${spec#t}") ;;
    np*x*)
      shape=${spec#np}
      cmd=("${preload[@]}" mpirun --oversubscribe --bind-to none -np "${shape%x*}" "${mpi_env[@]}" "$yirage_mpi"
        superoptimize "$graph" "${args[@]}" --threads "${shape#*x}")
      ;;
    np*)
      cmd=("${preload[@]}" mpirun --oversubscribe --bind-to none -np "${spec#np}" "${mpi_env[@]}" "$yirage_mpi"
        superoptimize "$graph" "${args[@]}" --threads 1)
      ;;
  esac
  start=$(date +%s.%N)
  [[ $run == np* ]] && cmd+=(--trace "$OUT/$run.trace.tsv")
  "${cmd[@]}" --candidates "$CANDIDATES/$run" > "$OUT/$run.out" 2> "$OUT/$run.err"
  rc=$?
  end=$(date +%s.%N)
  echo "$run rc=$rc wall $(awk "BEGIN{print $end - $start}") s :: $(grep '^search:' "$OUT/$run.out") ::" \
    "$(grep 'work units' "$OUT/$run.err")"
done
# Equal digests: the same candidates, in the same order, as the same files.
for run in ${RUNS:-t1 np2 np4 np8 np16 t16}; do
  echo "candidates $run $(cat "$CANDIDATES/$run/candidates.tsv" "$CANDIDATES/$run"/*.yrg | md5sum)"
done
