#!/bin/bash
# The OpenCL column of the GPU benchmark (docs/backends/opencl.md): each row superoptimized for an
# OpenCL device and for the CUDA plugin in the same run, each result then timed by
# `yirage run --cold` (device timers: CUDA events, OpenCL profiling markers; the median of the
# repeats), and the two side by side. PyTorch's figures for the same rows come from run.sh on the
# same machine.
#
# usage: benchmarks/gpu/opencl.sh BUNDLE OUT [OPENCL_DEVICE]
#   BUNDLE as bundle.sh makes it (with libyirage-backend-opencl.so); OUT receives the graphs,
#   the logs and opencl.md. OPENCL_DEVICE: the OpenCL plugin's device index (default: its first
#   device that is not PoCL's CPU device; `yirage devices` lists them).
# environment: YIRAGE_BENCH_BUDGET (search seconds per graph and backend, default 20),
#   YIRAGE_BENCH_ROWS (default: the six graphs at b = 1 and four at b = 8), YIRAGE_BENCH_REPEATS
#   (timed runs, default 30).
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
graphs=$here/../../examples/graphs
mkdir -p "$out"
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export YIRAGE_CACHE_DIR=${YIRAGE_CACHE_DIR:-$out/cache}
# `yirage devices` lists the OpenCL plugin's devices as "  [N] NAME (PLATFORM, OpenCL)".
device=${3:-$("$bundle/bin/yirage" devices --plugin "$bundle/libyirage-backend-opencl.so" 2>/dev/null |
  sed -n '/^opencl /,/^[a-z]/p' | grep -v "Portable Computing Language" |
  sed -nE 's/^  \[([0-9]+)\] .*, OpenCL\)$/\1/p' | head -n 1)}
device=${device:-0}
budget=${YIRAGE_BENCH_BUDGET:-20}
repeats=${YIRAGE_BENCH_REPEATS:-30}
rows=${YIRAGE_BENCH_ROWS:-gqa qknorm rmsnorm_linear lora gated_mlp ntrans gqa_b8 qknorm_b8 rmsnorm_linear_b8 ntrans_b8}

# The median `yirage run` printed, in µs ("-" when it did not run or was wrong).
median_us() {
  sed -nE 's/^correct .*median +([0-9.]+) (us|ms).*/\1 \2/p' "$1" |
    awk '{ printf "%.1f", ($2 == "ms" ? $1 * 1000 : $1) } END { if (NR == 0) printf "-" }'
}

table=$out/opencl.md
{
  echo "# OpenCL beside CUDA, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "command: benchmarks/gpu/opencl.sh BUNDLE OUT $device (search budget ${budget} s per backend, \`yirage run --cold --repeats $repeats\`, medians in µs)"
  echo
  echo "| row | OpenCL | CUDA plugin | OpenCL / CUDA |"
  echo "|---|---|---|---|"
} >"$table"
for name in $rows; do
  declare -A us=()
  for backend in opencl cuda; do
    index=0
    [ "$backend" = opencl ] && index=$device
    plugin=$bundle/libyirage-backend-$backend.so
    "$bundle/bin/yirage" superoptimize "$graphs/$name.json" --plugin "$plugin" --backend "$backend" --device "$index" \
      --budget "$budget" --top-k 4 --quiet -o "$out/$name.$backend.yrg" >"$out/$name.$backend.search.txt" 2>&1 ||
      echo "superoptimize $name on $backend failed: $(tail -n 3 "$out/$name.$backend.search.txt")"
    "$bundle/bin/yirage" run "$out/$name.$backend.yrg" --plugin "$plugin" --backend "$backend" --device "$index" \
      --cold --repeats "$repeats" >"$out/$name.$backend.run.txt" 2>&1 || true
    us[$backend]=$(median_us "$out/$name.$backend.run.txt")
  done
  ratio=$(awk -v a="${us[opencl]}" -v b="${us[cuda]}" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }')
  echo "| $name | ${us[opencl]} | ${us[cuda]} | $ratio |" | tee -a "$table"
  unset us
done
