#!/usr/bin/env bash
# Fails, naming each file and line, where a C or C++ file of the tree differs from what
# clang-format prints for it (.clang-format at the root). To format: the same list with -i.
# usage: scripts/check_format.sh [clang-format]
set -uo pipefail
cd "$(dirname "$0")/.."
format=${1:-clang-format}
patterns=('*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- "${patterns[@]}")
else  # a source tree without git: every such file outside build folders
  mapfile -t files < <(find . \( -path './build*' -o -path './.*' \) -prune -o -type f \
    \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print)
fi
if ((${#files[@]} == 0)); then
  echo "check_format: no C or C++ files found" >&2
  exit 1
fi
if ! "$format" --dry-run --Werror "${files[@]}"; then
  echo "check_format: the files above are not formatted: $format -i <file>" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files as $("$format" --version | head -n 1) prints them"
