"""Runs FD.io CSIT's MLRsearch (the PyPI package) on one simulated DUT for
a range of seeds; prints one JSON line per search, in the format of
crates/search/examples/search_sim/main.rs.

usage: mlr_sim.py DUT FIRST_SEED SEEDS MAX_LOAD MIN_LOAD
"""

import json
import logging
import sys

from MLRsearch import (
    AbstractMeasurer,
    Config,
    MeasurementResult,
    MultipleLossRatioSearch,
    SearchGoal,
)

import duts

GOALS = [0.0, 0.005]


class Measurer(AbstractMeasurer):
    """Feeds MLRsearch's trials to a simulated DUT and counts their time."""

    def __init__(self, dut):
        self.dut = dut
        self.trials = 0
        self.seconds = 0.0

    def measure(self, intended_duration, intended_load):
        intended, offered, received = self.dut.trial(intended_load, intended_duration)
        self.trials += 1
        self.seconds += intended_duration
        # Frames the generator never sent are unsent, not lost: MLRsearch
        # counts both against the load.
        return MeasurementResult(
            intended_duration=intended_duration,
            intended_load=intended_load,
            offered_count=offered,
            forwarding_count=received,
            intended_count=intended,
        )


def config(max_load, min_load):
    c = Config()
    c.goals = [
        SearchGoal(
            loss_ratio=ratio,
            exceed_ratio=0.5,
            relative_width=0.005,
            initial_trial_duration=1.0,
            final_trial_duration=1.0,
            duration_sum=21.0,
            preceding_targets=2,
            expansion_coefficient=2,
            fail_fast=False,
        )
        for ratio in GOALS
    ]
    # min_load first: the setters check each against the other.
    c.min_load = min_load
    c.max_load = max_load
    c.search_duration_max = 3600.0
    c.warmup_duration = None
    return c


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__.strip())
    name, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    max_load, min_load = float(sys.argv[4]), float(sys.argv[5])
    logging.disable(logging.CRITICAL)
    dut_class = duts.by_name(name)
    for seed in range(first, first + count):
        measurer = Measurer(dut_class(seed))
        search = MultipleLossRatioSearch(config=config(max_load, min_load))
        results = search.search(measurer=measurer, debug=lambda _: None)
        goals = []
        for goal, result in results.items():
            lo, hi = result.relevant_lower_bound, result.relevant_upper_bound
            lower = float(lo) if lo is not None else None
            upper = float(hi) if hi is not None else None
            goals.append(
                {
                    "loss_ratio": goal.loss_ratio,
                    "lower": lower,
                    "upper": upper,
                    "lower_intended": lower,
                    "upper_intended": upper,
                }
            )
        print(
            json.dumps(
                {
                    "tool": "mlrsearch",
                    "dut": name,
                    "seed": seed,
                    "trials": measurer.trials,
                    "trial_seconds": measurer.seconds,
                    "goals": goals,
                }
            )
        )


if __name__ == "__main__":
    main()
