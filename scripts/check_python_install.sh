#!/usr/bin/env bash
# Checks the two ways of getting yirage's Python package without setting any variable
# (docs/python.md, "Installing"), each in a clean environment (env -i: no YIRAGE_*, PYTHONPATH or
# LD_LIBRARY_PATH):
#   devenv  `meson devenv -C BUILD`: the build tree's `yirage` CLI, Python package and plugins;
#   wheel   `pip install .` of a copy of this checkout (tracked and unignored files) into a fresh
#           venv of Debian's /usr/bin/python3, with Debian's meson-python (no build isolation),
#           then `import yirage`: the CPU plugin from inside the package, a graph superoptimized
#           and run on it.
# Prints "ok NAME" or "FAIL NAME" per check, and a line per check in meson's testlog.json form to
# BUILD/python-install-check/testlog.json (scripts/test.sh counts them). Exits 1 if any failed.
# That folder is kept until the next run: the logs, the checkout's copy, the venv.
# Usage: scripts/check_python_install.sh [BUILD]   (default: build)
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -f "${1:-build}/build.ninja" ]; then
  echo "check_python_install: ${1:-build} is not a configured build folder" >&2
  exit 1
fi
build_dir="$(realpath "${1:-build}")"
work="$build_dir/python-install-check"
rm -rf "$work"
mkdir -p "$work/home"
results="$work/testlog.json"
# What the checks may see of this machine's environment: only the system's programs.
clean_env=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work/home" LANG=C.UTF-8)

failed=0
report() {  # NAME STATUS SECONDS LOG
  local result=OK
  if [ "$2" -ne 0 ]; then
    result=FAIL
    failed=1
    echo "FAIL $1 (${3}s); the end of $4:"
    tail -n 30 "$4"
  else
    echo "ok $1 (${3}s)"
  fi
  printf '{"name": "%s", "result": "%s", "duration": %s}\n' "$1" "$result" "$3" >>"$results"
}

# The devenv: the build tree's CLI, package and plugins, found with no variable set by hand.
start=$SECONDS
{
  "${clean_env[@]}" meson devenv -C "$build_dir" yirage devices | tee "$work/devenv-cli.txt" &&
    grep -q "^cpu .*: [1-9][0-9]* device(s)" "$work/devenv-cli.txt" &&
    "${clean_env[@]}" meson devenv -C "$build_dir" /usr/bin/python3 -c '
import yirage
devices = yirage.devices()
print(devices)
assert any(d.backend == "cpu" for d in devices), "no CPU device"
'
} >"$work/devenv.log" 2>&1
report python_install_devenv $? $((SECONDS - start)) "$work/devenv.log"

# The wheel, built from a copy of the checkout as a user would, into a fresh venv.
start=$SECONDS
(
  mkdir -p "$work/src" &&
    # Files deleted but not yet committed are skipped (--ignore-failed-read).
    git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$work/src" &&
    /usr/bin/python3 -m venv --system-site-packages "$work/venv" &&
    cd "$work/src" &&
    # The CPU and OpenCL plugins only (-Dbackends): every plugin is packaged the same way, and the
    # others doubled the check's time (a minute on two cores). Compiled at -O0 (CXXFLAGS, which
    # come after meson-python's release -O3): what is checked is the package, not its speed.
    "${clean_env[@]}" CFLAGS=-O0 CXXFLAGS=-O0 "$work/venv/bin/pip" install --no-build-isolation --no-index \
      --disable-pip-version-check --config-settings=setup-args=-Dbackends=opencl . &&
    echo "pip install: $((SECONDS - start)) s" &&
    cd "$work" &&
    "${clean_env[@]}" "$work/venv/bin/python" -c "import yirage; print(yirage.devices())" &&
    "${clean_env[@]}" "$work/venv/bin/python" - "$work/venv" <<'PY'
import pathlib
import sys
import numpy as np
import yirage as yr

package = pathlib.Path(yr.__file__).parent
assert package.is_relative_to(sys.argv[1]), f"yirage imported from {package}"
cpu = next((b for b in yr.get_available_backends() if b["name"] == "cpu"), None)
assert cpu and cpu["num_devices"] >= 1, f"no CPU device: {yr.get_available_backends()}"
assert pathlib.Path(cpu["path"]).parent == package / "backends", f"CPU plugin from {cpu['path']}"
assert (package / "backends" / "libyirage-backend-opencl.so").is_file(), "no OpenCL plugin in the package"
assert not (package / "backends" / "libyirage-backend-cuda.so").exists(), "-Dbackends did not reach the build"

g = yr.new_kernel_graph()
X = g.new_input(dims=(8, 256), dtype=yr.float32)
W = g.new_input(dims=(256, 128), dtype=yr.float32)
g.mark_output(g.matmul(g.rms_norm(X, normalized_shape=(256,)), W))
rng = np.random.default_rng(1)
x = rng.uniform(-1, 1, (8, 256)).astype(np.float32)
w = rng.uniform(-1, 1, (256, 128)).astype(np.float32)
k = g.superoptimize(backend="cpu", time_budget=30)
(out,) = k(inputs=[x, w])
(ref,) = g.run_reference([x, w])
np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
print(f"superoptimized on the CPU: {k.search.stats['candidates']} candidates, output matches")
PY
) >"$work/wheel.log" 2>&1
report python_install_wheel $? $((SECONDS - start)) "$work/wheel.log"
grep -h "^pip install:" "$work/wheel.log" || true
exit $failed
