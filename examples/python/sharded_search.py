"""A search in shards from Python: the RMSNorm + linear benchmark graph's search for an H100 (the
built-in target: no GPU needed, candidates are estimated, nothing is measured) planned as work
units, the units run by a pool of two worker processes, their partial results merged here, and
the answer checked against the one-process search. A Ray or Dask user copies `run_shard` as the
remote task: it takes the graph's bytes, the plan's options and a list of units, and returns the
partial result's bytes.

Run inside `meson devenv -C build -w .` (README.md): /usr/bin/python3 examples/python/sharded_search.py
"""
import concurrent.futures
import multiprocessing
import sys

import yirage as yr

# Every process that plans the same graph with these options gets the same units (and plan id).
OPTIONS = {"min_units": 8, "target": "h100", "threads": 1, "time_budget": 300}


def run_shard(graph_bytes, options, units):
    """The worker's task: rebuild the plan, run some of its units, return their partial result."""
    plan = yr.SearchPlan(yr.from_bytes(graph_bytes), **options)
    return plan.run_units(units)


def main():
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(2, 4096), dtype=yr.float16)
    W = g.new_input(dims=(4096, 6144), dtype=yr.float16)
    g.mark_output(g.matmul(g.rms_norm(X, normalized_shape=(4096,)), W))
    graph_bytes = g.to_bytes()

    plan = yr.SearchPlan(g, **OPTIONS)
    shards = [list(range(s, plan.num_units, 2)) for s in range(2)]
    print(f"plan {plan.id}: {plan.num_units} units in {len(shards)} shards")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for partial in pool.map(run_shard, [graph_bytes] * len(shards), [OPTIONS] * len(shards), shards):
            plan.add_partial(partial)
    if plan.missing_units():  # a worker ran out of budget: run what is missing again
        plan.add_partial(plan.run_units(plan.missing_units()))
    report = plan.merge()
    best_graph, best = report.candidates[0]
    print(f"sharded: {best['description']}, {best['estimated_seconds'] * 1e6:.1f} us estimated")

    whole = g.search(target="h100", threads=2, time_budget=300)
    def answer(r):  # each candidate's graph, estimate and description, best first
        return [(c.to_bytes(), i["estimated_seconds"], i["description"]) for c, i in r.candidates]

    same = answer(report) == answer(whole)
    print(f"one process: {whole.candidates[0][1]['description']}; same answer: {same}")
    return 0 if same else 1


if __name__ == "__main__":  # the pool's spawned workers import this file without running main
    sys.exit(main())
