"""The cost model against the device: for candidates a search measured and saved
(`yirage superoptimize --candidates DIR`: DIR/N.yrg and DIR/candidates.tsv), the model's estimate
now (computed here by `yirage-cuda-cost-features`, as the search computes it through the CUDA
plugin on an H100, or on the built-in target NAME (h200: as on an H200) or one in a JSON file, or
with --target cpu through the CPU plugin on this host) against each
candidate's measured median; per graph Spearman's rank correlation and the estimate's rank of
the measured best.

usage: cost_model.py FEATURES_TOOL [--target NAME|FILE.json|cpu[:THREADS]] [--merge] [--require RHO SHARE]
                     DIR|ARCHIVE [DIR|ARCHIVE...]
       (each DIR one search's saved candidates; an ARCHIVE, a .tar.gz of such folders, stands for
       all of them; --merge: the searches of one graph repeated, DIRs of the same name, taken
       together: a candidate's median of their medians, with the estimate the searches then saved
       beside the model's now; --require: exit 1 unless the mean ρ is at least RHO and the
       measured best is among the estimate's top 8 for at least SHARE of the graphs)
       FEATURES_TOOL: build/backends/cuda/yirage-cuda-cost-features
                      (ninja -C build backends/cuda/yirage-cuda-cost-features)
"""

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import ranks, spearman  # noqa: E402


def measured(folder):
    """[(path of the candidate's graph, measured seconds, description)] of one search."""
    rows = []
    with open(os.path.join(folder, "candidates.tsv")) as table:
        next(table)
        for line in table:
            rank, _, median, _, _, description = line.rstrip("\n").split("\t", 5)
            rows.append((os.path.join(folder, rank + ".yrg"), float(median), description))
    return rows


def saved_estimates(folder):
    """[the estimate the search saved] of one search's candidates, in measured()'s order."""
    with open(os.path.join(folder, "candidates.tsv")) as table:
        next(table)
        return [float(line.split("\t")[1]) for line in table]


def merged(tool, target, folders):
    """Per graph (folders of one name), Spearman's ρ of the saved and the current estimates
    against the candidates' median measurement over the searches; a candidate is its graph
    file's bytes (descriptions repeat)."""
    groups = {}
    for folder in folders:
        groups.setdefault(os.path.basename(os.path.normpath(folder)), []).append(folder)
    print("| graph | searches | candidates | ρ, estimate then | ρ, estimate now |")
    print("|---|---|---|---|---|")
    then_all, now_all = [], []
    for name, group in sorted(groups.items()):
        by = {}
        for folder in group:
            rows = measured(folder)
            now = estimates(tool, [r[0] for r in rows], target)
            for (path, median, _), then in zip(rows, saved_estimates(folder)):
                with open(path, "rb") as graph:
                    key = hashlib.sha256(graph.read()).hexdigest()
                by.setdefault(key, []).append((then, now[path], median))
        if len(by) < 3:
            continue
        cols = [[statistics.median(v[i] for v in runs) for runs in by.values()] for i in range(3)]
        then, now = spearman(cols[0], cols[2]), spearman(cols[1], cols[2])
        if then is not None and now is not None:
            then_all.append(then)
            now_all.append(now)
        show = lambda r: "-" if r is None else f"{r:+.2f}"  # noqa: E731
        print(f"| {name} | {len(group)} | {len(by)} | {show(then)} | {show(now)} |")
    if now_all:
        print(f"\nmean ρ over {len(now_all)} graphs: estimate then **{statistics.mean(then_all):.2f}**, "
              f"now **{statistics.mean(now_all):.2f}**")
    return 0


def estimates(tool, paths, target):
    out = subprocess.run([tool, *target, *paths], check=True, capture_output=True, text=True).stdout
    return {r["graph"]: r["seconds"] for r in map(json.loads, out.splitlines())}


def searches(paths, scratch):
    """The search folders named by `paths`: folders as they are, each .tar.gz archive unpacked
    into `scratch` and replaced by its folders that hold a candidates.tsv, in name order."""
    folders = []
    for n, path in enumerate(paths):
        if not path.endswith(".tar.gz"):
            folders.append(path)
            continue
        into = os.path.join(scratch, str(n))
        with tarfile.open(path) as archive:
            for member in archive.getmembers():  # plain files and folders inside `into` only
                if not (member.isfile() or member.isdir()) or os.path.isabs(member.name) or ".." in member.name:
                    sys.exit(f"cost_model.py: {path}: refusing {member.name!r}")
            archive.extractall(into)
        folders += sorted(root for root, _, files in os.walk(into) if "candidates.tsv" in files)
    return folders


def main(argv):
    args = argv[1:]
    options = {}
    while len(args) > 1 and args[1] in ("--target", "--merge", "--require"):
        width = {"--target": 2, "--merge": 1, "--require": 3}[args[1]]
        options[args[1]] = args[2:1 + width]
        del args[1:1 + width]
    if len(args) < 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    tool, target = args[0], ["--target", *options["--target"]] if "--target" in options else []
    with tempfile.TemporaryDirectory() as scratch:
        folders = searches(args[1:], scratch)
        if "--merge" in options:
            return merged(tool, target, folders)
        return table(tool, target, folders, [float(x) for x in options.get("--require", [])])


def table(tool, target, folders, required):
    """The per-graph table; 1 where `required` (mean ρ, share of graphs) is not met."""
    print("| graph | measured | Spearman ρ | estimate's rank of the measured best | estimate's pick / best (measured) |")
    print("|---|---|---|---|---|")
    correlations, in_top8 = [], []
    for folder in folders:
        rows = measured(folder)
        if not rows:
            continue
        estimate = estimates(tool, [r[0] for r in rows], target)
        e = [estimate[r[0]] for r in rows]
        m = [r[1] for r in rows]
        rho = spearman(e, m)
        best = min(range(len(m)), key=m.__getitem__)
        pick = min(range(len(e)), key=e.__getitem__)
        rank_of_best = int(ranks(e)[best])
        if rho is not None:
            correlations.append(rho)
        in_top8.append(rank_of_best <= 8)
        print(f"| {os.path.basename(os.path.normpath(folder))} | {len(rows)} | {'-' if rho is None else f'{rho:.2f}'} | "
              f"{rank_of_best} | {m[pick] / m[best]:.2f}x |")
    if correlations:
        print(f"\nmean ρ over {len(correlations)} graphs: **{statistics.mean(correlations):.2f}** (median "
              f"{statistics.median(correlations):.2f}); measured best among the estimate's top 8: "
              f"**{sum(in_top8)} of {len(in_top8)}** graphs")
    if required:
        rho = statistics.mean(correlations) if correlations else float("nan")
        share = sum(in_top8) / max(len(in_top8), 1)
        if not (rho >= required[0] and share >= required[1]):
            print(f"cost_model.py: required mean ρ >= {required[0]} and a share of {required[1]} of graphs with "
                  f"the measured best in the top 8; got {rho:.2f} and {share:.2f}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
