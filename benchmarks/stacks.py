"""Speed of a stack's calibration and of validation (issue 14), against a yardstick measured in the same run: pricing
each measured run's limit once with ``price_serving`` (what validate must do at least).

(a) ``calibrate`` of the registered llama.cpp stack on its measured runs (111, of 11 cards and 3 checkpoints): the fit
    and both hold-outs (11 + 3 refits), as ``passprice calibrate --dry-run`` runs it;
(b) ``calibrate`` on 100 synthetic runs (the registered runs' servings at batch 1 and 16, cut to 100) made from known
    facts, which it recovers;
(c) ``validate`` of every measured run (limit and expected price of each);
(d) the yardstick: each run's limit priced once.

Run from a checkout: ``python benchmarks/stacks.py [--repeat N]``. Nothing here is a test: the numbers depend on
the machine; the README reports one run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def median_time(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of ``repeat`` runs (seconds), and the last result."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each measurement (the median is shown).")
    args = parser.parse_args()

    import attrs

    from passprice.calibrate import calibrate
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.measurements import load_runs, run_serving
    from passprice.registry import Root
    from passprice.serving import NotResident, price_serving
    from passprice.servings import complete, to_serving
    from passprice.stacks import load_stack, price_expected
    from passprice.validate import validate

    root = Root(ROOT)
    stack = "llamacpp-cuda-2405"
    runs = load_runs(root, stack)
    every = load_runs(root)

    def yardstick() -> int:
        cards: dict[str, Any] = {}
        for run in every:
            header = load_checkpoint(root, run.checkpoint)
            card = cards.setdefault(run.card, load_card(root, run.card))
            # as validate prices it: a mixture of experts' run on the routing record it names (a run of
            # gpt-oss or Qwen3-MoE priced without one is refused, Routed: session 34 found this benchmark stopped so)
            price_serving(header, card, run_serving(root, run, header))
        return len(every)

    # 100 synthetic runs: the registered runs' servings at batches 1 and 16, priced under the registered stack's facts
    # taken as holding at batch 16 too (its range, batch 1, is set aside: these runs are made, not measured).
    st = attrs.evolve(load_stack(root, stack), ranged=False)
    synthetic = []
    for run in runs:
        for batch in (1, 16):
            r = attrs.evolve(run, id=f"{run.id}.b{batch}", batch=batch)
            header = load_checkpoint(root, r.checkpoint)
            try:
                e = price_expected(header, load_card(root, r.card), to_serving(complete(r.spec(), header)), st)
            except NotResident:
                continue
            synthetic.append(attrs.evolve(r, tokens_per_s=e.expected.tokens_per_s))
    synthetic = synthetic[:100]

    t_yard, n = median_time(yardstick, args.repeat)
    from passprice import calibrate as calibration

    def fresh(runs: Any = None) -> Any:
        # Each repeat solves its fits afresh: calibrate keeps the fits a process solved (calibrate._FITS, round 31),
        # and the repeats after the first measured those kept answers (0.10 s against 2.13 s, session 34).
        calibration._FITS.clear()
        return calibrate(root, stack, runs)

    t_cal, cal = median_time(fresh, args.repeat)
    t_syn, syn = median_time(lambda: fresh(synthetic), args.repeat)
    t_val, val = median_time(lambda: validate(root), args.repeat)
    worst = max(abs(e) for e in syn.errors.values())
    rows = [
        (f"(d) yardstick: {n} limits, price_serving once each", t_yard),
        (f"(a) calibrate {stack} ({len(cal.fit.runs)} runs, both hold-outs)", t_cal),
        (f"(b) calibrate on {len(synthetic)} synthetic runs (max in-sample error {worst:.1e})", t_syn),
        (f"(c) validate {len(val.rows)} runs (limit and expected)", t_val),
    ]
    width = max(len(w) for w, _ in rows)
    print(f"{'what':{width}}  {'median':>9}  {'/ yardstick':>11}")
    for what, t in rows:
        print(f"{what:{width}}  {t:8.2f}s  {t / t_yard:10.1f}x")


if __name__ == "__main__":
    main()
