#!/usr/bin/env bash
# Runs SWIG on yirage_java.i: writes the JNI C wrapper to $2 and the generated Java classes of
# package org.yirage.jni to a fresh folder $3 (so no stale class survives an interface change),
# then lists them in $4 for make-jar.sh.
# Usage: run-swig.sh SWIG OUT_WRAP_C OUT_JAVA_DIR OUT_LIST INTERFACE INCLUDE_DIR
set -euo pipefail
swig=$1 wrap_c=$2 java_dir=$3 list=$4 interface=$5 include_dir=$6
rm -rf "$java_dir"
mkdir -p "$java_dir/org/yirage/jni"
# SWIGWORDSIZE64: int64_t is long on LP64 Linux (see yirage_java.i).
"$swig" -java -package org.yirage.jni -DSWIGWORDSIZE64 -I"$include_dir" \
  -outdir "$java_dir/org/yirage/jni" -o "$wrap_c" "$interface"
find "$java_dir" -name '*.java' | sort > "$list"
