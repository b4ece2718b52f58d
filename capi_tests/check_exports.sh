#!/bin/sh
# libyirage.so must export yirage_* functions and nothing else, and carry the ABI soname.
set -eu
lib="$1"
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | grep -v '^yirage_' | grep -v '^YIRAGE_1$' || true)
if [ -n "$others" ]; then
  echo "unexpected exported symbols:"; echo "$others"; exit 1
fi
count=$(nm -D --defined-only "$lib" | grep -c ' yirage_')
[ "$count" -ge 40 ] || { echo "only $count yirage_ symbols exported"; exit 1; }
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[ "$soname" = "libyirage.so.1" ] || { echo "soname is '$soname', expected libyirage.so.1"; exit 1; }
echo "$count yirage_ symbols exported, soname $soname"
