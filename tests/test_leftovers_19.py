"""Leftovers of round 19, the text ones: each output reproduced and kept.

- (6) A stack's fixed costs are written ``us`` in its file (ASCII, as options take them); every output printed them
  so (``stack.overhead.layer 96.63 us`` in ``audit --stack``, ``calibrate``, ``check``'s findings, a lock's drift)
  where every other duration passprice prints, and the README, write ``µs``. They print ``µs`` now
  (:func:`passprice.facts.shown_unit`); the file keeps ``us``. And a measured run that moved read ``145.55 tokens/s
  when derived, 1 now``: the figure now carries its unit too, as a derivation input's does (``4.8 TB/s when
  derived, 5.2 TB/s now``).
"""

from __future__ import annotations

from cli_helpers import invoke

STACK = "llamacpp-cuda-2405"


def test_a_stack_s_fixed_costs_print_in_microseconds_as_every_other_duration() -> None:
    audit = invoke("audit", "r1-qwen7b-h200", "--stack", STACK)
    assert audit.exit_code == 0, audit.output
    row = next(line for line in audit.stdout.splitlines() if line.strip().startswith("stack.overhead.layer"))
    assert row.split()[1:3] == ["96.63", "µs"]
    assert " us " not in audit.stdout and not any(line.endswith(" us") for line in audit.stdout.splitlines())
    shown = invoke("calibrate", "--stack", STACK, "--dry-run").stdout
    assert "overhead.layer  96.63 µs               96.63 µs (derived)" in shown.splitlines()


def test_a_moved_run_s_figure_carries_its_unit_on_both_sides() -> None:
    from passprice.fits import RunChange

    assert RunChange("r", 145.55, 1.0).describe("tokens_per_s") == (
        "run r: 145.55 tokens/s when derived, 1 tokens/s now"
    )
    assert RunChange("r", 1.0, 2.0).describe("rows") == (
        "run r: 1 token-rows a pass when derived, 2 token-rows a pass now"
    )

