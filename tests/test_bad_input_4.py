"""Escapes of round 5 (issue 13): bad input that ended in a line naming neither file nor key, on stdout with exit 1,
or not at all. Each test builds its reproducer and asserts the exit status and the error line."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import bad, copy_root, invoke

MEASURED = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


def _first_tokens_per_s(root: Path, value: str) -> Path:
    """The first run of the llama-bench measurement file measured at ``value`` tokens/s."""
    path = root / MEASURED
    lines = path.read_text().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if line.startswith("tokens_per_s = "))
    lines[i] = f"tokens_per_s = {value}\n"
    path.write_text("".join(lines))
    return path


# ---------------------------------------------------------------------------------------------------------------------
# 1. A run measured at 5e-324 tokens/s (schema-valid: > 0) made validate print "the result's runs.16.limit_ratio is
# inf" (no file, no run, no good run shown) and calibrate fit on it with exit 0. Now: the file and run.0's key, the
# good runs still shown; calibrate refuses by the same line.


def test_validate_names_the_run_too_small_to_divide_by_and_shows_the_rest(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = _first_tokens_per_s(root, "5e-324")
    result = invoke("validate", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"passprice: error: {path}: run.0.tokens_per_s: 5e-324 tokens/s is too small to divide by (a pass of 1 "
        "sequences would take no finite time)\n"
    )
    assert "xd3.h100_pcie_80gb.8b-q4km.tg512 " not in result.stdout
    assert "xd3.h100_pcie_80gb.8b-q4km.tg1024 " in result.stdout  # the next run of the same file is shown
    bad("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root,
        says=f"{path}: run.0.tokens_per_s: 5e-324 tokens/s is too small to divide by")


def test_a_ratio_that_overflows_is_named_by_validate_and_calibrate(tmp_path: Path) -> None:
    # 1e-306 divides (a pass of 1e306 s), but the card's limit over it (about 150 / 1e-306) does not.
    root = copy_root(tmp_path)
    path = _first_tokens_per_s(root, "1e-306")
    line = f"{path}: run.0.tokens_per_s: 1e-306 tokens/s is too small to divide by (a price over it overflows)"
    result = invoke("validate", "--json", root=root)
    assert result.exit_code == 2
    assert result.stderr == f"passprice: error: {line}\n"
    assert "Infinity" not in result.stdout and "xd3.h100_pcie_80gb.8b-q4km.tg1024" in result.stdout
    bad("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root, says=line)
