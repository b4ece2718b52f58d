#!/bin/bash
# The scaling of yirage-mpi (benchmarks/search/distributed.md): one search, gqa at --max-block-ops
# OPS (default 12) for the h100 target, run as RUNS says, each saving its candidates in
# $OUT/<run>/ and a line in $OUT/summary.txt. Runs:
#   t<N>      yirage superoptimize, one process with N threads
#   np<N>     yirage-mpi on N ranks, one thread each
#   np<N>x<T> yirage-mpi on N ranks, T threads each
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
mkdir -p "$OUT"
exec > >(tee -a "$OUT/summary.txt") 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
graph=examples/graphs/gqa.json
args=(--target h100 --quiet --budget 5000 --max-block-ops "${OPS:-12}")
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
mpirun --version | head -1
for run in ${RUNS:-t1 np2 np4 np8 np16 t16}; do
  case $run in
    t*) cmd=("$yirage" superoptimize "$graph" "${args[@]}" --threads "${run#t}") ;;
    np*x*)
      spec=${run#np}
      cmd=(mpirun --oversubscribe --bind-to none -np "${spec%x*}" -x LD_LIBRARY_PATH "$yirage_mpi" superoptimize
        "$graph" "${args[@]}" --threads "${spec#*x}")
      ;;
    np*)
      cmd=(mpirun --oversubscribe --bind-to none -np "${run#np}" -x LD_LIBRARY_PATH "$yirage_mpi" superoptimize
        "$graph" "${args[@]}" --threads 1)
      ;;
  esac
  start=$(date +%s.%N)
  "${cmd[@]}" --candidates "$OUT/$run" > "$OUT/$run.out" 2> "$OUT/$run.err"
  rc=$?
  end=$(date +%s.%N)
  echo "$run rc=$rc wall $(awk "BEGIN{print $end - $start}") s :: $(grep '^search:' "$OUT/$run.out") ::" \
    "$(grep 'work units' "$OUT/$run.err")"
done
# Equal digests: the same candidates, in the same order, as the same files.
for run in ${RUNS:-t1 np2 np4 np8 np16 t16}; do
  echo "candidates $run $(cat "$OUT/$run/candidates.tsv" "$OUT/$run"/*.yrg | md5sum)"
done
