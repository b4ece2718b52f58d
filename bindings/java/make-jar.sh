#!/usr/bin/env bash
# Compiles Java sources with one javac run and packs the classes into a jar. Sources are .java
# files or .txt files listing .java files (run-swig.sh's list of generated classes). Warnings
# are errors.
# Usage: make-jar.sh JAVAC JAR OUT_JAR CLASSPATH LINT SOURCE...
set -euo pipefail
javac=$1 jar=$2 out=$3 classpath=$4 lint=$5
shift 5
sources=()
for s in "$@"; do
  if [[ $s == *.txt ]]; then
    mapfile -t listed < "$s"
    sources+=("${listed[@]}")
  else
    sources+=("$s")
  fi
done
classes=$(mktemp -d "${out}.classes.XXXXXX")
trap 'rm -rf "$classes"' EXIT
"$javac" -encoding UTF-8 --release 17 -Xlint:"$lint" -Werror -cp "$classpath" -d "$classes" "${sources[@]}"
rm -f "$out"
"$jar" --create --file "$out" -C "$classes" .
