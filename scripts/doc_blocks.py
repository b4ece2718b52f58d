#!/usr/bin/python3
"""Runs the code blocks of yirage's documentation, so that a block that stops working fails.

usage: doc_blocks.py [--meson PATH] BUILD_DIR [FILE.md ...]

Reads README.md, docs/**/*.md and examples/**/README.md (or the FILEs given, relative to the
source tree) and handles every fenced code block by its language, unless the line right before it
is a marker (docs/building.md, "Code blocks in the documentation", says the same for writers):

  sh, bash, shell   run by bash (-e, pipefail)
  python            run in one interpreter per Markdown file, blocks in order, as a reader
                    pasting them into one session would (the interpreter must then exit quietly)
  c                 compiled with -std=c99 -Wall -Wextra -Werror against the build tree (pkg-config
                    yirage) and run
  java              compiled by javac against the build tree's yirage.jar (where javac is)
  json              parsed

  <!-- doc: skip (REASON) -->   not run; REASON says why (GPU only, pseudo-code, minutes long...)
  <!-- doc: output -->          what a command prints, or a listing: not run
  <!-- doc: file NAME -->       saved as NAME for the blocks after it (json parsed, C compiled
                                and run; other languages not run: a later block uses the file)
  <!-- doc: excerpt PATH -->    lines of PATH (source-relative) as they stand, indentation aside;
                                PATH is built and run by a test of its own
  <!-- doc: needs PROGRAM... --> run as its language says where every PROGRAM is on PATH

Any other block (C++, Rust, plain text) needs a marker, and so does an indented code block (a
fenced one reads better). The blocks of one Markdown file run in order in one folder of their own,
BUILD_DIR/doc-blocks/<file>/, which holds links to the source tree's top-level entries and `build`
(the build tree), in the environment `meson devenv -C BUILD_DIR` gives, as the documentation tells
readers to work (README.md); yirage's own variables from the caller's environment are dropped.
Caches: the kernel cache persists in BUILD_DIR/doc-blocks/cache (kernels are keyed by their
source), the search cache is emptied each run, and cargo builds into the rust test's target folder
(CARGO_TARGET_DIR), so nothing is compiled twice. Ends with a summary line; exit status 1 if any
block failed or a marker is wrong.
"""
import argparse
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
BLOCK_TIMEOUT = 300  # seconds; a block's own work is seconds, a hang should not wait for meson's
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*doc:\s*(.*?)\s*-->\s*$")
LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s")
SHELLS = {"sh", "bash", "shell"}

# Runs the Python blocks of one Markdown file in one namespace: each block arrives as a JSON line
# on stdin, its verdict leaves as a JSON line on the file descriptor given.
PYTHON_SESSION = r"""
import json, os, sys, traceback
verdicts = os.fdopen(int(sys.argv[1]), "w")
namespace = {"__name__": "__main__"}
for request in sys.stdin:
    block = json.loads(request)
    try:
        exec(compile("\n" * (block["line"] - 1) + block["code"], block["file"], "exec"), namespace)
        ok = True
    except SystemExit as e:
        ok = e.code in (None, 0)
    except BaseException:
        traceback.print_exc()
        ok = False
    sys.stdout.flush()
    sys.stderr.flush()
    verdicts.write(json.dumps(ok) + "\n")
    verdicts.flush()
"""


class Block:
    def __init__(self, path, line, language, code, marker):
        self.path, self.line, self.language, self.code, self.marker = path, line, language, code, marker

    def where(self):
        return f"{self.path}:{self.line}"


def parse(path):
    """The fenced blocks of a Markdown file (line: the fence's), and the errors of its markup."""
    lines = (SOURCE / path).read_text().splitlines()
    blocks, errors = [], []
    i, in_list, previous_blank = 0, False, True
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            indent, mark, language = fence.group(1), fence.group(2), fence.group(3).lower()
            close = re.compile(r"^\s*" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}\s*$")
            body, j = [], i + 1
            while j < len(lines) and not close.match(lines[j]):
                body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
                j += 1
            if j == len(lines):
                errors.append(f"{path}:{i + 1}: a code block that is never closed")
            marker = MARKER.match(lines[i - 1]) if i > 0 else None
            blocks.append(Block(path, i + 1, language, "\n".join(body) + "\n",
                                marker.group(1) if marker else None))
            i, previous_blank = j + 1, False
            continue
        marker = MARKER.match(line)
        if marker and not (i + 1 < len(lines) and FENCE.match(lines[i + 1])):
            errors.append(f"{path}:{i + 1}: a doc marker must sit on the line right before a fenced block")
        blank = not line.strip()
        if LIST_ITEM.match(line):
            in_list = True
        elif not blank and not line.startswith(" "):
            in_list = False
        if previous_blank and not blank and line.startswith("    ") and not in_list:
            errors.append(f"{path}:{i + 1}: an indented code block: fence it, then run or mark it")
        previous_blank = blank
        i += 1
    return blocks, errors


def markdown_files(args):
    if args:
        return [Path(a) for a in args]
    files = [Path("README.md")]
    files += sorted(p.relative_to(SOURCE) for p in (SOURCE / "docs").rglob("*.md"))
    files += sorted(p.relative_to(SOURCE) for p in (SOURCE / "examples").rglob("README.md"))
    return files


def devenv(meson, build):
    """The environment of `meson devenv -C build`, over the caller's without yirage's own
    variables (the blocks may rely only on what the documentation says)."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("YIRAGE_", "MESON_")) and
            k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "CLASSPATH", "PKG_CONFIG_PATH", "CARGO_TARGET_DIR")}
    out = subprocess.run(["bash", "-c", 'eval "$("$0" devenv -C "$1" --dump)" && env -0', meson, str(build)],
                         env=base, check=True, capture_output=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def work_folder(root, path, build):
    """A fresh folder for one Markdown file's blocks: links to the source tree's top-level entries
    and `build`, so that the blocks' source-relative paths hold and what they write stays here."""
    folder = root / str(path).replace("/", "__")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for entry in SOURCE.iterdir():
        if not entry.name.startswith((".", "build")):
            (folder / entry.name).symlink_to(entry)
    (folder / "build").symlink_to(build)
    return folder


def excerpt_of(block, target):
    """Whether the block's lines stand in `target` one after another, indentation aside."""
    want = [line.rstrip() for line in textwrap.dedent(block.code).splitlines()]
    while want and not want[-1]:
        want.pop()
    have = [line.rstrip() for line in (SOURCE / target).read_text().splitlines()]
    for start in range(len(have) - len(want) + 1) if want else ():
        first = have[start]
        indent = first[:len(first) - len(want[0])]
        if not first.endswith(want[0]) or indent.strip():
            continue
        if all(h == (indent + w if w else "") for w, h in zip(want, have[start:])):
            return True
    return False


class Runner:
    def __init__(self, build, env, root):
        self.build, self.env, self.root = build, env, root
        self.failures, self.counts = [], {"run": 0, "marked": 0}
        self.session = None  # the Python interpreter of the file being run, once it has started

    def fail(self, block, why, output=""):
        self.failures.append(block.where())
        print(f"FAIL {block.where()} ({block.language or 'no language'}): {why}")
        if output.strip():
            print("    " + output.rstrip().replace("\n", "\n    "))

    def command(self, block, argv, cwd, what):
        """Runs argv in its own process group, all of which is killed if it outlasts the limit."""
        process = subprocess.Popen(argv, cwd=cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, start_new_session=True)
        try:
            output, _ = process.communicate(timeout=BLOCK_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            self.fail(block, f"{what} did not finish within {BLOCK_TIMEOUT} s", output)
            return False
        if process.returncode != 0:
            self.fail(block, f"{what} exited with status {process.returncode}", output)
            return False
        return True

    def file(self, path, blocks):
        folder = work_folder(self.root, path, self.build)
        scripts = folder / ".doc-blocks"
        scripts.mkdir()
        self.session = None
        start = time.monotonic()
        try:
            for n, block in enumerate(blocks):
                began = time.monotonic()
                verdict = self.block(block, folder, scripts / f"block{n}")
                if verdict:
                    print(f"ok   {block.where()} {block.language or '-'}: {verdict} "
                          f"({time.monotonic() - began:.1f} s)")
        finally:
            if self.session is not None:
                self.end_session([b for b in blocks if b.language == "python"][-1])
        print(f"     {path}: {time.monotonic() - start:.1f} s")

    def block(self, block, folder, stem):
        """Handles one block; returns what was done, None after a failure."""
        marker, language = block.marker, block.language
        if marker is not None:
            kind, _, rest = marker.partition(" ")
            rest = rest.strip()
            if kind == "skip":
                reason = re.fullmatch(r"\((.+)\)", rest)
                if not reason:
                    return self.fail(block, "`skip` needs its reason in parentheses: <!-- doc: skip (why) -->")
                self.counts["marked"] += 1
                return f"not run: {reason.group(1)}"
            if kind == "output":
                self.counts["marked"] += 1
                return "output, not run"
            if kind == "excerpt":
                if not rest or not (SOURCE / rest).is_file():
                    return self.fail(block, f"excerpt of {rest or '(no file named)'}: no such file")
                if not excerpt_of(block, rest):
                    return self.fail(block, f"not an excerpt of {rest} (its lines, in order, indentation aside)")
                self.counts["run"] += 1
                return f"an excerpt of {rest}"
            if kind == "file":
                if not re.fullmatch(r"[\w.-]+", rest):
                    return self.fail(block, f"file needs a plain file name, not {rest!r}")
                (folder / rest).write_text(block.code)
                if language == "json":
                    return self.json(block, f"saved as {rest}")
                if language == "c":
                    return self.c(block, folder, folder / rest, f"saved as {rest}, compiled and ran")
                self.counts["marked"] += 1
                return f"saved as {rest}, not run"
            if kind == "needs":
                if not rest:
                    return self.fail(block, "needs names no program")
                missing = [p for p in rest.split() if shutil.which(p, path=self.env.get("PATH")) is None]
                if missing:
                    self.counts["marked"] += 1
                    return f"not run: {' '.join(missing)} not on PATH"
            else:
                return self.fail(block, f"unknown doc marker {marker!r} (skip (why), output, file NAME, "
                                        f"excerpt PATH, needs PROGRAM)")
        if language in SHELLS:
            script = stem.with_suffix(".sh")
            script.write_text("set -eo pipefail\n" + block.code)
            if self.command(block, ["bash", str(script)], folder, "the block"):
                self.counts["run"] += 1
                return "ran"
            return None
        if language == "python":
            if self.session is None:
                self.start_session(folder, stem)
            return self.python(block)
        if language == "c":
            source = stem.with_suffix(".c")
            source.write_text(block.code)
            return self.c(block, folder, source, "compiled and ran")
        if language == "java":
            return self.java(block, stem)
        if language == "json":
            return self.json(block, "parsed")
        return self.fail(block, "a block in this language is not run: mark it (<!-- doc: skip (why) -->, "
                                "output, excerpt PATH...; docs/building.md)")

    def json(self, block, what):
        try:
            json.loads(block.code)
        except ValueError as e:
            return self.fail(block, f"not JSON: {e}")
        self.counts["run"] += 1
        return what

    def c(self, block, folder, source, what):
        program = source.with_suffix("")
        pkg = subprocess.run(["pkg-config", "--cflags", "--libs", "yirage"], env=self.env, capture_output=True,
                             text=True)
        if pkg.returncode != 0:
            return self.fail(block, "pkg-config yirage failed", pkg.stderr)
        compile_c = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", str(source), *pkg.stdout.split(), "-o",
                     str(program)]
        if self.command(block, compile_c, folder, "cc -std=c99 -Wall -Wextra -Werror") and \
                self.command(block, [str(program)], folder, "the program"):
            self.counts["run"] += 1
            return what
        return None

    def java(self, block, stem):
        if shutil.which("javac", path=self.env.get("PATH")) is None:
            self.counts["marked"] += 1
            return "not compiled: no javac on PATH"
        name = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", block.code)
        if not name:
            return self.fail(block, "a Java block must be a compilation unit with a public class "
                                    "(or an excerpt of a file a test compiles)")
        stem.mkdir()
        (stem / f"{name.group(1)}.java").write_text(block.code)
        if self.command(block, ["javac", "-Xlint:all", "-Werror", "-d", str(stem), str(stem / f"{name.group(1)}.java")],
                        stem, "javac"):
            self.counts["run"] += 1
            return "compiled"
        return None

    def start_session(self, folder, stem):
        read, write = os.pipe()
        log = open(stem.with_suffix(".python.log"), "w+")
        process = subprocess.Popen([sys.executable, "-c", PYTHON_SESSION, str(write)], cwd=folder, env=self.env,
                                   stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, text=True,
                                   pass_fds=(write,), start_new_session=True)
        os.close(write)
        self.session = {"process": process, "verdicts": os.fdopen(read), "log": log}

    def python(self, block):
        process, log = self.session["process"], self.session["log"]
        offset = os.path.getsize(log.name)
        try:
            process.stdin.write(json.dumps({"file": str(SOURCE / block.path), "line": block.line + 1,
                                            "code": block.code}) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            pass  # the session died with an earlier block; readline() says so
        verdicts = self.session["verdicts"]
        if not select.select([verdicts], [], [], BLOCK_TIMEOUT)[0]:
            os.killpg(process.pid, signal.SIGKILL)
            verdict = ""
        else:
            verdict = verdicts.readline()
        with open(log.name) as f:
            f.seek(offset)
            output = f.read()
        if verdict.strip() != "true":
            return self.fail(block, "the Python block raised" if verdict else "the Python session died", output)
        self.counts["run"] += 1
        return "ran"

    def end_session(self, last):
        """The interpreter must end as a reader's script does: exit status 0, nothing printed."""
        process, log = self.session["process"], self.session["log"]
        offset = os.path.getsize(log.name)
        try:
            process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            status = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            status = "none: it hung"
        with open(log.name) as f:
            f.seek(offset)
            noise = f.read()
        if status != 0 or noise.strip():
            self.fail(last, f"the Python session ended with exit status {status}, printing at exit:", noise)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--meson", default="meson")
    parser.add_argument("build")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    build = Path(args.build).resolve()
    root = build / "doc-blocks"
    shutil.rmtree(root / "cache" / "yirage" / "search", ignore_errors=True)
    env = devenv(args.meson, build)
    env["XDG_CACHE_HOME"] = str(root / "cache")
    env["CARGO_TARGET_DIR"] = str(build / "bindings" / "rust" / "target")
    runner = Runner(build, env, root)
    start = time.monotonic()
    markup_errors = []
    for path in markdown_files(args.files):
        blocks, errors = parse(path)
        markup_errors += errors
        if blocks:
            runner.file(path, blocks)
    for error in markup_errors:
        print(f"FAIL {error}")
    failed = len(runner.failures) + len(markup_errors)
    print(f"{runner.counts['run']} blocks run or checked, {runner.counts['marked']} not run (marked so, or "
          f"a program missing), {failed} failures ({time.monotonic() - start:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
