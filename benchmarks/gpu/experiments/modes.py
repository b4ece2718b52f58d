"""Splits do_bench samples into their two levels and compares candidates round by round.

After do_bench's 256 MB L2 flush, when the CPU runs ahead of the GPU, CUDA events around a short
call measure it alternately at two levels about 0.8 µs apart (event_resolution_probe.py; every
other call is slow, whatever the kernel). The median of such samples lands anywhere between the
levels, decided by their tails; the lower level of each round is stable to a few tens of ns.
This prints, for each candidate of a SAMPLES file (ntrans_triton_probe.py; or each row and column
of a file bench.py's YIRAGE_BENCH_SAMPLES wrote, "ntrans_b8 yirage"), the median and the mean of
all samples, the share of the upper level, and each round's lower level with its
difference from REFERENCE's in the same round.

  python3 modes.py SAMPLES.json [REFERENCE]
"""
import json
import statistics
import sys


def two_levels(samples):
    """1-D two-means over samples below twice their median (CPU-held outliers left out):
    (lower level's median, upper's, upper's share)."""
    middle = statistics.median(samples)
    ordered = sorted(s for s in samples if s < 2 * middle)
    cut = (ordered[len(ordered) // 10] + ordered[-1 - len(ordered) // 10]) / 2
    for _ in range(50):
        low = [s for s in ordered if s <= cut]
        high = [s for s in ordered if s > cut]
        if not low or not high:
            break
        cut = (statistics.fmean(low) + statistics.fmean(high)) / 2
    low = [s for s in ordered if s <= cut] or [cut]
    high = [s for s in ordered if s > cut] or [cut]
    return statistics.median(low), statistics.median(high), len(high) / len(ordered)


def main():
    with open(sys.argv[1]) as f:
        by_round = json.load(f)
    if "rows" in by_round:  # bench.py's: each row's do_bench samples by column
        by_round = {f"{row} {column}": rounds for row, measured in by_round["rows"].items()
                    for column, rounds in measured.get("do_bench", {}).items()}
    reference = sys.argv[2] if len(sys.argv) > 2 else None
    base = [two_levels(r)[0] for r in by_round[reference]] if reference else None
    print("| candidate | median | mean | lower / upper level / upper share | rounds' lower levels |"
          + (f" less {reference}'s, mean |" if reference else ""))
    print("|---|---|---|---|---|" + ("---|" if reference else ""))
    for name, rounds in by_round.items():
        every = [t for r in rounds for t in r]
        low, high, share = two_levels(every)
        lows = [two_levels(r)[0] for r in rounds]
        line = (f"| {name} | {statistics.median(every):.2f} | {statistics.fmean(every):.2f} | "
                f"{low:.2f} / {high:.2f} / {share:.2f} | {' '.join(f'{v:.2f}' for v in lows)} |")
        if base:
            diffs = [v - b for v, b in zip(lows, base)]
            line += f" {' '.join(f'{d:+.2f}' for d in diffs)}, {statistics.fmean(diffs):+.2f} |"
        print(line)


if __name__ == "__main__":
    main()
