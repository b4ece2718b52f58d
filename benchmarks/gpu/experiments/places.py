"""Splits bench.py's do_bench samples by each column's place in its round's order.

bench.py turns the order of its three columns from round to round, because what runs just before
a do_bench moves its figure (RESULTS.md, thirtieth session). This prints, for each row and
column of one or more files that bench.py's YIRAGE_BENCH_SAMPLES wrote, the median of all
samples the column took in the first, second and third place, pooled over the files, and how
many rounds each figure pools.

  python3 places.py SAMPLES.json...
"""
import json
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().split("\n\n")[-1])
    by_place = {}  # (row, column) -> [[samples in place 0], [place 1], [place 2]]
    for path in sys.argv[1:]:
        with open(path) as f:
            run = json.load(f)
        for row, measured in run["rows"].items():
            if "failed" in measured:
                continue
            for order in measured["orders"]:
                for column in order:
                    by_place.setdefault((row, column), [[] for _ in order])
            for r, order in enumerate(measured["orders"]):
                for place, column in enumerate(order):
                    by_place[(row, column)][place].append(measured["do_bench"][column][r])
    print("| row | column | 1st place (µs, rounds) | 2nd | 3rd |")
    print("|---|---|---|---|---|")
    for (row, column), places in by_place.items():
        cells = [f"{statistics.median(t for r in rounds for t in r):.2f} ({len(rounds)})" if rounds else "—"
                 for rounds in places]
        print(f"| {row} | {column} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
