"""The review (``passprice diff``) holds what ``check`` holds: measured runs to their quotes, moved figures, dropped
excerpts, locks matched by their card's file.

1. A changed measured run (145.55 -> 150.55 tokens/s under its unchanged llama-bench row, its stack re-fitted and its
   lock re-locked) failed ``check`` and read "1 measured run to verify" (exit 0): a changed or added run whose quote,
   found in HEAD's stored excerpt, states another figure is now a MISMATCH (❌), counted, in text, markdown and JSON.
2. A changed run (its setting and its tokens/s moved 10x) read only its move; it is now priced on HEAD (``limit …
   ABOVE its limit``) and its locator read (``its locator quotes 145.55, not …``) as an added run's.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

from cli_helpers import copy_root, invoke

RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
RUN = "xd3.h100_pcie_80gb.8b-q4km.tg512"
ROW = "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 ± 0.80 |"
LOCK = "locks/r1-qwen7b-h200-llamacpp.lock.toml"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _registry(tmp_path: Path) -> Path:
    """A copy of the shipped registry, committed on ``main``: the review's BASE."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _diff(root: Path, *args: str) -> tuple[int, str, str]:
    with contextlib.chdir(root):
        done = invoke("diff", *args, root=root)
    return done.exit_code, done.stdout, done.stderr


# --- (1) a changed run held to its quote ------------------------------------------------------------------------------


def test_1_a_changed_run_under_its_unchanged_row_fails_the_review(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    _edit(root, RUNS, "tokens_per_s = 145.55\n", "tokens_per_s = 150.55\n")
    with contextlib.chdir(root):
        assert invoke("calibrate", "--stack", "llamacpp-cuda-2405", root=root).exit_code == 0
        assert invoke("lock", "--update", "-o", LOCK, root=root).exit_code == 0
        assert invoke("check", root=root).exit_code == 1  # check's MISMATCH, which the review now says too
    code, out, err = _diff(root)
    assert code == 1, out + err
    summary = out.splitlines()[1]
    assert "; 1 measured run's quote states another figure than its tokens/s; " in summary
    mismatch = (f"❌ MISMATCH: its quote of xiongjiedai-gpu-benchmarks '{ROW}' states 145.55 ± 0.80, not its 150.55 "
                "tokens/s: the value and the words it cites disagree")
    assert mismatch in out
    assert err.strip() == (
        f"passprice: refused: 1 measured run's quote states another figure than its tokens/s ({RUNS}: {RUN}): the "
        "value and the words it cites disagree; quote the words of the document stating the value, or set the value "
        "they state")
    code, out, _ = _diff(root, "--format", "json")
    said = json.loads(out)
    assert (code, said["exit_status"], said["runs_mismatched"]) == (1, 1, [f"{RUNS}: {RUN}"])
    code, out, _ = _diff(root, "--format", "markdown")
    assert code == 1
    assert out.startswith("❌ **passprice diff**")
    assert mismatch in out


def test_1_a_run_moved_onto_its_quote_passes(tmp_path: Path) -> None:
    # a figure its row states as the run writes it (145.55 rounds to 145.5): no MISMATCH, asked only
    root = _registry(tmp_path)
    _edit(root, RUNS, "tokens_per_s = 145.55\n", "tokens_per_s = 145.5\n")
    code, out, _ = _diff(root, "--format", "json")
    said = json.loads(out)
    assert said["runs_mismatched"] == []
    assert not any("MISMATCH" in line for line in said["added_records"].values())


# --- (2) a changed run priced and its locator read as an added run's -----------------------------------------------


def test_2_an_edited_run_is_priced_and_its_quote_read(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    _edit(root, RUNS, "positions = [0, 512]\ntokens_per_s = 145.55\n", "positions = [0, 1024]\ntokens_per_s = 1455.5\n")
    code, out, _ = _diff(root)
    assert code == 1
    line = next(x for x in out.splitlines() if x.startswith(f"  {RUNS} (changed): "))
    assert f"{RUN}'s setting moved (last position 512 → 1024; tokens/s 145.55 → 1,455.5 (+900 %)) but its " in line
    # as an added run's locator is read: its figures nearest the run's first
    assert "?; its locator quotes 145.55, 99, 8.03, 4.58, 0.8, not 1,455.5 tokens/s; ❌ MISMATCH: " in line
    assert line.endswith("; priced on HEAD: 1,455.5 tokens/s, limit 404.9 (0.278 × measured), ABOVE its limit: check "
                         "it in its source")
