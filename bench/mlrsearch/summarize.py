"""Reads the JSON lines of search_sim (pktlab) and mlr_sim.py (MLRsearch)
and prints, per simulated DUT: the median trial-seconds of each tool, the
ratio pktlab / MLRsearch, and how often each tool's bounds hold the true
NDR and PDR.

A goal's bounds are correct when the lower bound is at most the true value
and the upper bound above it (or absent: "at least the lower bound").
The true values are the DUT's own (duts.py), not the tester's: a tool that
reports the generator's limit as the DUT's upper bound is wrong.

usage: summarize.py RESULTS.jsonl...
"""

import collections
import json
import statistics
import sys

import duts

TOOLS = ("pktlab", "mlrsearch")


def correct(goal, truth):
    lower, upper = goal["lower"], goal["upper"]
    if lower is None or lower > truth:
        return False
    if upper is None:
        return True
    return truth < upper and lower < upper


def width_ok(goal):
    """The width is the search's: between the loads it asked for."""
    lower, upper = goal["lower_intended"], goal["upper_intended"]
    if lower is None or upper is None:
        return True
    return (upper - lower) / upper <= 0.005 + 1e-9


def main():
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                runs[r["dut"]][r["tool"]].append(r)
    head = (
        f"{'simulated DUT':<18} {'seeds':>5} {'pktlab s':>9} {'MLRsearch s':>11}"
        f" {'ratio':>6} {'pktlab ok':>10} {'MLRsearch ok':>12}  true NDR, PDR"
    )
    print(head)
    print("-" * len(head))
    worst = 0.0
    notes = []
    for dut_class in duts.DUTS:
        by_tool = runs.get(dut_class.name)
        if not by_tool:
            continue
        dut = dut_class(0)
        truths = [dut.truth(0.0), dut.truth(0.005)]
        medians, oks = {}, {}
        for tool in TOOLS:
            rs = sorted(by_tool[tool], key=lambda r: r["seed"])
            medians[tool] = statistics.median(r["trial_seconds"] for r in rs)
            per_goal = [
                [correct(g, t) and width_ok(g) for g, t in zip(r["goals"], truths)]
                for r in rs
            ]
            good = sum(all(p) for p in per_goal)
            oks[tool] = (good, len(rs))
            if len(rs) > 1:
                ndr, pdr = (sum(p[i] for p in per_goal) for i in (0, 1))
                notes.append(
                    f"{dut_class.name}, {tool}: NDR correct in {ndr}/{len(rs)},"
                    f" PDR in {pdr}/{len(rs)}"
                )
        seeds = len(by_tool["pktlab"])
        if seeds != len(by_tool["mlrsearch"]):
            sys.exit(f"{dut_class.name}: the tools ran different seeds")
        ratio = medians["pktlab"] / medians["mlrsearch"]
        worst = max(worst, ratio)

        def share(tool):
            good, n = oks[tool]
            return f"{good}/{n}" if n > 1 else ("yes" if good else "NO")

        print(
            f"{dut_class.name:<18} {seeds:>5} {medians['pktlab']:>9g}"
            f" {medians['mlrsearch']:>11g} {ratio:>6.2f} {share('pktlab'):>10}"
            f" {share('mlrsearch'):>12}  {truths[0]:,.1f}, {truths[1]:,.1f}"
        )
    print()
    for note in notes:
        print(note)
    print(f"largest ratio: {worst:.2f}")


if __name__ == "__main__":
    main()
