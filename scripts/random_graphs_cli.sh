#!/bin/bash
# Random graphs on any backend through the CLI (docs/reliability.md, "Graphs no one wrote by
# hand"): for each graph file in DIR (bindings/python/tests/random_graphs.py write DIR), superoptimize
# it on BACKEND, then run the answer against the graph; a line per graph ("ok", "SEARCH-FAIL" or
# "RUN-FAIL" with the reason), JOBS at a time, then the counts. Exit status 1 if any is not ok.
# usage: scripts/random_graphs_cli.sh BACKEND DIR [JOBS]
#   with YIRAGE (default: yirage on PATH) and BUDGET (seconds a search, default 3) in the environment
set -uo pipefail
backend=$1 dir=$2 jobs=${3:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export YIRAGE=${YIRAGE:-yirage} BUDGET=${BUDGET:-3} backend work
one() {
  local g=$1 n
  n=$(basename "$g" .yrg)
  if ! "$YIRAGE" superoptimize "$g" --backend "$backend" --budget "$BUDGET" --quiet -o "$work/$n.yrg" >"$work/$n.log" 2>&1; then
    echo "SEARCH-FAIL $n: $(tail -n 2 "$work/$n.log" | tr '\n' ' ')"
  elif "$YIRAGE" run "$work/$n.yrg" --reference "$g" --backend "$backend" --repeats 1 >>"$work/$n.log" 2>&1; then
    echo "ok $n: $(grep -o 'best: .*' "$work/$n.log" | cut -c1-100)"
  else
    echo "RUN-FAIL $n: $(tail -n 1 "$work/$n.log")"
  fi
}
export -f one
find "$dir" -name '*.yrg' | sort | xargs -P "$jobs" -I{} bash -c 'one {}' | tee "$work/summary"
ok=$(grep -c '^ok' "$work/summary") all=$(wc -l <"$work/summary")
echo "$ok ok, $((all - ok)) not"
[ "$ok" -eq "$all" ]
