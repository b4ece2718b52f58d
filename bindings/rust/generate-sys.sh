#!/bin/sh
# Regenerates yirage-sys/src/bindings.rs from include/yirage.h with Debian's bindgen. The output
# is checked in (crates.io is unreachable, so bindgen cannot run from build.rs); the test
# rust_sys_up_to_date fails when it is stale. Usage: generate-sys.sh [OUTPUT]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="${1:-$here/yirage-sys/src/bindings.rs}"
bindgen "$here/../../include/yirage.h" \
  --allowlist-function 'yirage_.*' --allowlist-type 'yirage_.*|DL.*' --allowlist-var 'YIRAGE_.*' \
  --no-layout-tests --no-doc-comments --use-core --ctypes-prefix core::ffi \
  --default-enum-style consts --size_t-is-usize \
  -o "$out" -- -I"$here/../../include"
