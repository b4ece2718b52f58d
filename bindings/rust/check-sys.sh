#!/bin/sh
# Fails when yirage-sys/src/bindings.rs no longer matches what bindgen makes of yirage.h
# (regenerate with bindings/rust/generate-sys.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$here/generate-sys.sh" "$out"
diff -u "$here/yirage-sys/src/bindings.rs" "$out" >/dev/null || {
  echo "yirage-sys/src/bindings.rs is stale: run bindings/rust/generate-sys.sh"; exit 1; }
echo "yirage-sys bindings are up to date"
