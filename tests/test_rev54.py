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
ROW = ("| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 "
       "± 0.80 |")
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
    _, out, _ = _diff(root, "--format", "json")
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
    # as check reads a run's quote (the mean printed with its spread, not the row's 99, 8.03, 4.58: test_fix55)
    assert "?; its locator quotes 145.55, not 1,455.5 tokens/s; ❌ MISMATCH: " in line
    assert line.endswith("; priced on HEAD: 1,455.5 tokens/s, limit 404.9 (0.278 × measured), ABOVE its limit: check "
                         "it in its source")


# --- (3) a figure moved to another figure of its same quote ---------------------------------------------------------

CARD = "facts/cards/h200_sxm_141gb.toml"
H200_LOCKS = ("qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200", "r1-qwen7b-h200-best",
              "r1-qwen7b-h200-llamacpp")


def test_3_the_rule_reads_both_figures_in_the_quote() -> None:
    from passprice.review.changes import _moved_within_quote

    row = "Specifications table, H200 SXM column: 'FP32 67 TFLOPS 60 TFLOPS'"
    assert _moved_within_quote(67, "TFLOPS", 60, "TFLOPS", row) == (
        "moved from one figure of its quote to another: 67 TFLOPS → 60 TFLOPS; which column is this card's?")
    assert _moved_within_quote(67, "TFLOPS", 61, "TFLOPS", row) is None  # 61 is no figure of it
    assert _moved_within_quote(67, "TFLOPS", 60, "TFLOPS", "FP32 67 TFLOPS 60 TFLOPS") is None  # quotes nothing
    # a table row's bare numbers read in the unit the locator names after it
    assert _moved_within_quote(4.48, "TB/s", 4.01, "TB/s", "row '| Dot | 4.48 | 4.01 |' in TB/s") is not None


def test_3_an_input_moved_to_the_other_column_of_its_quote_is_named(tmp_path: Path) -> None:
    """The H200's ``fp32`` 67 → 60 TFLOPS under ``'FP32 67 TFLOPS 60 TFLOPS'`` (the NVL column), recomputed and
    re-locked: ``check`` passed (the quote states 60 TFLOPS) and the review named the move (⚠️, to verify, exit 0);
    the locator naming the H200 SXM column, check fails it now, and the review with it."""
    root = _registry(tmp_path)
    _edit(root, CARD, "derivation.inputs.fp32 = { value = 67,", "derivation.inputs.fp32 = { value = 60,")
    with contextlib.chdir(root):
        assert invoke("fact", "recompute", "h200_sxm_141gb", root=root).exit_code == 0
        for name in H200_LOCKS:
            assert invoke("lock", "--update", "-o", f"locks/{name}.lock.toml", root=root).exit_code == 0
        checked = invoke("check", root=root)
    # the locator's words name the H200 SXM column: 60 TFLOPS is the other column's, and check fails it now
    # (tests/test_fix56.py); the review fails with it (HEAD fails check), still naming the move
    assert checked.exit_code == 1, checked.output
    assert "states 67 TFLOPS in its H200 SXM column" in checked.output, checked.output
    code, out, err = _diff(root)
    assert code == 1, out + err
    assert out.startswith("❌ passprice diff")
    assert out.splitlines()[1].startswith("3 facts changed in 1 file, 1 to verify in its source; ")
    assert ("to verify: its input fp32 moved (67 TFLOPS → 60 TFLOPS) but its citation did not: moved from one "
            "figure of its quote to another: 67 TFLOPS → 60 TFLOPS; which column is this card's?: "
            "nvidia-h200-product-page: Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, "
            "the H200 NVL figure): 'FP32 67 TFLOPS 60 TFLOPS'") in out
    code, out, _ = _diff(root, "--format", "json")
    assert (code, json.loads(out)["to_verify"]) == (1, ["h200_sxm_141gb:vector"])


# --- (4) a fact held to the excerpt its change removed --------------------------------------------------------------

H200_SOURCE = "sources/nvidia-h200-product-page.toml"


def _unstore(root: Path) -> None:
    """The product page's record without its ``excerpt`` and ``excerpt_sha256`` lines."""
    path = root / H200_SOURCE
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("excerpt")]
    assert len(lines) - len(kept) == 2
    path.write_text("".join(kept), encoding="utf-8")


def test_4_a_value_moved_with_its_excerpt_removed_fails_against_the_removed_excerpt(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    _unstore(root)
    _edit(root, CARD, 'value = 4.8\nunit = "TB/s"', 'value = 5.2\nunit = "TB/s"')
    with contextlib.chdir(root):
        assert invoke("fact", "recompute", "h200_sxm_141gb", root=root).exit_code == 0
        for name in H200_LOCKS:
            assert invoke("lock", "--update", "-o", f"locks/{name}.lock.toml", root=root).exit_code == 0
        assert invoke("check", root=root).exit_code == 0  # nothing stored to read the quote in
    code, out, err = _diff(root)
    assert code == 1, out + err
    assert out.startswith("❌ passprice diff")
    assert ("; 1 fact's quotes NOT FOUND or another figure against the excerpt this change removed; "
            in out.splitlines()[1])
    assert ("❌ its quotes, read against the excerpt this change removed (BASE's stored text), fail: "
            "nvidia-h200-product-page: MISMATCH (1 of 1 quoted span found in the stored text; its quote of "
            "nvidia-h200-product-page 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s' states 4.8TB/s, not its value 5.2 TB/s)"
            ) in out
    assert err.strip() == (
        "passprice: refused: 1 fact's quotes NOT FOUND or another figure against the excerpt this change removed "
        "(h200_sxm_141gb:memory.bandwidth): that excerpt was the registry's record of the words read; restore it, or "
        "correct the quote or the value to the document's words")
    code, out, _ = _diff(root, "--format", "json")
    said = json.loads(out)
    assert (code, said["quotes_against_removed"]) == (1, ["h200_sxm_141gb:memory.bandwidth"])


def test_4_an_excerpt_removed_under_unmoved_facts_is_not_failed_by_this_rule(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    _unstore(root)
    _, out, _ = _diff(root, "--format", "json")
    assert json.loads(out)["quotes_against_removed"] == []


# --- (5) a lock's card matched by its file --------------------------------------------------------------------------


def test_5_a_lock_on_another_folders_card_of_that_name_is_not_the_registry_cards(tmp_path: Path) -> None:
    """A lock made with ``--card ROOT/other/h200_sxm_141gb.toml`` records the name ``h200_sxm_141gb``: the review
    matched it to the registry's card of that name, so a change of the registry's card read as one of that lock's."""
    root = copy_root(tmp_path)
    other = root / "other"
    other.mkdir()
    (other / "h200_sxm_141gb.toml").write_bytes((root / CARD).read_bytes())
    with contextlib.chdir(root):
        locked = invoke("lock", "qwen3-30b-a3b-h200", "--card", str(other / "h200_sxm_141gb.toml"), "--name",
                        "other-h200", "-o", str(root / "locks/other-h200.lock.toml"), root=root)
    assert locked.exit_code == 0, locked.output
    assert '[card]\nname = "h200_sxm_141gb"' in (root / "locks/other-h200.lock.toml").read_text(encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    _edit(root, CARD, "derivation.inputs.fp32 = { value = 67,", "derivation.inputs.fp32 = { value = 60,")
    with contextlib.chdir(root):
        assert invoke("fact", "recompute", "h200_sxm_141gb", root=root).exit_code == 0
    _, out, _ = _diff(root, "--format", "json")
    said = json.loads(out)
    affected = {lock["name"]: lock for lock in said["locks"]}
    # it rests on other/h200_sxm_141gb.toml, which did not change: not affected (it read vector, scale; then it was
    # listed with no fact changed, by its card spelt two ways, tests/test_fix55.py)
    assert "other-h200" not in affected
    assert "qwen3-30b-a3b-h200" in affected  # the registry's card's lock, matched by its name as before
    assert set(affected["qwen3-30b-a3b-h200"]["changed"]) == {"vector", "scale"}
