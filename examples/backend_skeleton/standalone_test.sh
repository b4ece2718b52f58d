#!/bin/bash
# The plugin kit as a vendor uses it: install yirage (into a staging root), build the skeleton
# from its own meson.build against the installed pkg-config files and headers only (yirage's, and
# the code-generation kit's), run its generator's test, and run the installed conformance suite
# on the plugin.
# usage: standalone_test.sh BUILD_DIR SKELETON_SOURCE_DIR WORKDIR
set -eu
build=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
root=$work/root
DESTDIR=$root meson install -C "$build" --no-rebuild --quiet >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; exit 1; }
pc=$(find "$root" -name yirage.pc | head -n 1)
[ -n "$pc" ] || { echo "no yirage.pc was installed"; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$pc")
for f in include/yirage.h include/yirage_backend.h include/yirage-codegen/codegen/ugraph_walker.hpp bin/yirage-conformance \
  share/yirage/schemas/yirage_kernel_program.fbs share/yirage/conformance/cpu.txt; do
  [ -e "$root$prefix/$f" ] || { echo "not installed: $prefix/$f"; exit 1; }
done
# Only the staged install is visible: the source tree's include/ is not on any path.
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root
meson setup "$work/skeleton" "$source" >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
meson compile -C "$work/skeleton" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
grep -q "yirage-codegen found: YES" "$work/setup.log" || { echo "the kit was not found"; cat "$work/setup.log"; exit 1; }
meson test -C "$work/skeleton" skeleton_source --print-errorlogs >"$work/kit-test.log" 2>&1 ||
  { cat "$work/kit-test.log"; exit 1; }
"$root$prefix/bin/yirage-conformance" --plugin "$work/skeleton/libyirage-backend-skeleton.so" \
  --expectations "$source/expectations.txt" --quiet
