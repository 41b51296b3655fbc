"""Leftovers of round 19, the text ones: each output reproduced and kept.

- (6) A stack's fixed costs are written ``us`` in its file (ASCII, as options take them); every output printed them
  so (``stack.overhead.layer 96.63 us`` in ``audit --stack``, ``calibrate``, ``check``'s findings, a lock's drift)
  where every other duration passprice prints, and the README, write ``µs``. They print ``µs`` now
  (:func:`passprice.facts.shown_unit`); the file keeps ``us``. And a measured run that moved read ``145.55 tokens/s
  when derived, 1 now``: the figure now carries its unit too, as a derivation input's does (``4.8 TB/s when
  derived, 5.2 TB/s now``).
- (7) A name not in the registry read gave no hint when it is a record of the other registry: ``--root DIR price
  r1-qwen7b-h200`` in a registry ``passprice init`` made (it copies cards and sources, not servings) said only "not
  found … (registered: none)", and ``price my-serving`` run outside any registry (so the facts passprice ships are
  read) did not say that the user's own registry was not looked in. Both say so now.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_helpers import REPO, invoke

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
        "run r: 145.55 tokens/s when derived, 1 tokens/s now (-99.31 %)"
    )
    assert RunChange("r", 1.0, 2.0).describe("rows") == (
        "run r: 1 token-rows a pass when derived, 2 token-rows a pass now (+100 %)"
    )


# --- (7) a name of the other registry -------------------------------------------------------------------------------


def test_a_name_of_the_shipped_registry_not_in_dir_says_where_it_is(tmp_path: Path) -> None:
    from passprice.registry import embedded_root

    shipped = embedded_root().path  # the checkout's own files in an editable install, the package's _data in a wheel
    root = tmp_path / "mine"
    assert invoke("init", str(root)).exit_code == 0
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "passprice: error: serving 'r1-qwen7b-h200': not found in registry/servings; r1-qwen7b-h200 is a "
        f"serving of the facts passprice ships, not of this registry ({root}): copy "
        f"{shipped}/registry/servings/r1-qwen7b-h200.toml into {root}/registry/servings to use it here (registered: "
        "none)\n"
    )
    # A name neither registry holds: no such line.
    assert "facts passprice ships" not in invoke("price", "nowhere", root=root).stderr


def test_a_name_not_shipped_read_outside_any_registry_says_its_registry_was_not_looked_in(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(REPO / "src")
    done = subprocess.run([sys.executable, "-m", "passprice", "price", "my-serving"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert ("; no registry was found at or above the working folder, so passprice looked in the facts it ships only: "
            "for a serving of your own registry, run inside it or name it: passprice --root DIR COMMAND (registered: "
            ) in done.stderr
    # Inside a registry (the checkout), no such line.
    assert "no registry was found" not in invoke("price", "my-serving").stderr
