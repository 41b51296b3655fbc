"""Attack round 10 (issue 13) on the main of round 9's fixes: each test builds the input that broke it and asserts
what passprice now does with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

# --- a registered serving named by a path is under its locks ------------------------------------------------------


def _bandwidth_assumed(root: Path) -> None:
    """The H200's memory.bandwidth made an assumption, below the published floor of lock r1-qwen7b-h200."""
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    old = 'value = 4.8\nunit = "TB/s"\nprovenance = "published"\n'
    assert old in text
    card.write_text(text.replace(old, 'value = 4.8\nunit = "TB/s"\nprovenance = "assumed"\n', 1), encoding="utf-8")


@pytest.mark.parametrize("ref", ["./r1-qwen7b-h200", "../servings/r1-qwen7b-h200", "link"])
def test_a_registered_serving_named_by_a_path_is_priced_under_its_lock(tmp_path: Path, ref: str) -> None:
    """``price ./r1-qwen7b-h200`` (or ``../servings/r1-qwen7b-h200``) reads the registered serving's file, but the
    lock guard took a name holding ``/`` for a serving kept elsewhere: with the H200's bandwidth made an assumption
    below the lock's published floor, ``price r1-qwen7b-h200`` was refused LockFloor and ``price ./r1-qwen7b-h200``
    priced it, exit 0, 'not a registered serving: no lock applies'. So was a link kept elsewhere to the registered
    file (it was taken for a serving named after the link)."""
    root = copy_root(tmp_path)
    _bandwidth_assumed(root)
    if ref == "link":
        ref = str(tmp_path / "elsewhere.toml")
        Path(ref).symlink_to(root / "registry" / "servings" / "r1-qwen7b-h200.toml")
    result = invoke("price", ref, "--json", root=root)
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["refusal"] == "LockFloor" and out["locks"][0].startswith("r1-qwen7b-h200"), out
    assert result.stderr == (
        "passprice: refused: LockFloor: lock r1-qwen7b-h200 refuses this price: memory.bandwidth is assumed, below "
        "the floor published (the price's weakest provenance is assumed, carried by memory.bandwidth)\n"
    )


# --- fact show --history: texts of old versions and of commits ----------------------------------------------------


def test_history_shows_no_bidi_control_or_line_break_of_an_old_version_or_commit(tmp_path: Path) -> None:
    """``fact show --history`` reads each old version as it was committed (never held to today's schema) and printed
    its locator raw: a locator ``ev\\u202eil\\nline2 \\x1b[31m`` split the version's block in two, reordered the line
    and sent ESC to the terminal; an author or subject holding U+202E was printed raw too (only C0 controls were
    replaced). The locator is now shown escaped, the author and subject with U+FFFD."""
    import subprocess

    def git(*args: str, name: str = "t") -> None:
        subprocess.run(["git", "-c", f"user.name={name}", "-c", "user.email=t@example.com", *args], cwd=root,
                       check=True, capture_output=True)  # fmt: skip

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "the registry")
    locator = "locator = \"Technical Specifications table, H200 SXM column: 'GPU Memory Bandwidth 4.8TB/s'\""
    assert locator in text
    card.write_text(text.replace(locator, 'locator = "ev\\u202eil\\nline2 \\u001b[31m red"', 1), encoding="utf-8")
    git("commit", "-qam", "sub\u202eject", name="ev\u202eil")
    card.write_text(text, encoding="utf-8")
    git("commit", "-qam", "fixed")
    result = invoke("fact", "show", "h200_sxm_141gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    assert "\u202e" not in result.stdout and "\x1b" not in result.stdout
    assert "  ev\ufffdil  sub\ufffdject\n" in result.stdout
    assert "  source: nvidia-h200-datasheet — ev\\u202eil\\nline2 \\x1b[31m red\n" in result.stdout
    assert len(result.stdout.split("\n\n")) == 4  # the heading and three versions, one block each


# --- calibrate: a measurement file of many runs -------------------------------------------------------------------


def test_a_fits_objective_is_every_runs_prediction_to_the_bit() -> None:
    """calibrate evaluated each fit's objective run by run in Python (:func:`passprice.calibrate._predict`, 536,000
    calls for a 240 KB measurement file of 1,000 runs: 8.6 s of 17 s); it is now one array expression
    (``_predicted``), which must give every run's prediction as the same double, or a fit would choose other
    values: checked on 400 runs whose components span nine decades, at every serial share of the grid."""
    import random

    import numpy as np

    from passprice import calibrate as c

    rng = random.Random(10)
    comp = np.array([[rng.random() * 10.0 ** rng.randint(-9, 0) for _ in c.SHARES] for _ in range(400)])
    layers = np.array([float(rng.randint(1, 128)) for _ in range(400)])
    for serial in c.SERIAL_GRID:
        values = {p: rng.uniform(0.05, 1.0) for p in c.SHARES if rng.random() < 0.7}
        values |= {"overhead.pass": rng.random() * 1e-4, "overhead.layer": rng.random() * 1e-6}
        one_by_one = [
            c._predict(c.RunModel(None, layers[i], 1.0, 1.0, comp[i]), values, serial)  # type: ignore[arg-type]
            for i in range(len(comp))
        ]
        assert c._predicted(comp, layers, values, serial).tolist() == one_by_one
