"""A changed note or derivation is shown by what changed in it (``textchange.text_change``), and a change repeated
by several facts of one file is said once: a stack's re-fit that moved one measured run printed each of its facts'
derivation twice, whole (7 facts x 2 x ~330 characters), and the pull-request comment showed none of it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from cli_helpers import REPO, invoke
from passprice.textchange import _cut_end, _cut_start, text_change

DERIVATION = (
    "nnls-relative-pass-time: least squares on the relative error of the pass time (NNLS: overheads >= 0, shares "
    "<= 1; terms.serial on a 0.05 grid), of the tokens/s of 17 measured runs (lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128 "
    "= 100.02 … lmd1.a100_sxm4_80gb.l2-13b.b64.p1-o128 = 3049.16), to 4 significant digits; passprice check re-fits "
    "it within 0.1 %"
)


def test_one_figure_changed_is_shown_in_its_words() -> None:
    assert text_change(DERIVATION, DERIVATION.replace("100.02", "90.02")) == (
        "…17 measured runs (lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128 = [100.02 → 90.02] … "
        "lmd1.a100_sxm4_80gb.l2-13b.b64.p1-o128 = 3049.16), to …"
    )


def test_two_spans_and_their_context() -> None:
    new = DERIVATION.replace("17 measured", "18 measured").replace("to 4 significant", "to 5 significant")
    assert text_change(DERIVATION, new) == (
        "…grid), of the tokens/s of [17 → 18] measured runs (lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128 = … "
        "lmd1.a100_sxm4_80gb.l2-13b.b64.p1-o128 = 3049.16), to [4 → 5] significant digits; passprice check re-fits …"
    )


def test_added_removed_short_equal_and_rewritten() -> None:
    assert text_change(DERIVATION, DERIVATION + " (re-fitted)") == "…re-fits it within 0.1 % [+ (re-fitted)]"
    assert text_change(DERIVATION + " (re-fitted)", DERIVATION) == "…re-fits it within 0.1 % [- (re-fitted)]"
    assert text_change("a = 1", "a = 2") == "a = 1 → a = 2"  # short texts whole
    assert text_change(DERIVATION, DERIVATION) == "unchanged"
    other = "x " * 80
    assert text_change(DERIVATION, other) == f"{DERIVATION} → {other}"  # little in common: both whole


def test_more_than_four_spans_are_counted() -> None:
    old = " ".join(f"w{i}" for i in range(60))
    new = old
    for i in (5, 15, 25, 35, 45, 55):
        new = new.replace(f"w{i} ", f"W{i} ")
    assert text_change(old, new).endswith("[w35 → W35] w36 w37 w38 w39 w40 … and 2 more changes")


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)


def test_a_stack_refit_is_reviewed_by_its_one_moved_run(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    runs = root / "registry/measurements/lmdeploy-turbomind-a100.toml"
    runs.write_text(runs.read_text().replace("tokens_per_s = 100.02", "tokens_per_s = 90.02", 1))
    assert invoke("calibrate", "--stack", "lmdeploy-turbomind-2312", root=root).exit_code == 0
    text = invoke("diff", "main", root=root).stdout
    # walkthrough 21: a re-fit's derivation is said by its runs (diff.run_change), not as a text change of the runs
    # listed in id order (a run added read as one run replaced by another)
    moved = ("the same 17 measured runs (each run's tokens/s); changed lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128 = 100.02 → "
             "90.02")
    assert text.count(moved) == 1, text
    assert "; the fit's |error| of tokens/s: in sample mean " in text
    # slip 53: the one fact the re-fit wrote again unmoved is named in one line, not listed as changed
    assert text.count("derivation: the same change as overhead.pass's") == 5
    assert ("  1 more fact re-derived to the same value, provenance and citation (not listed as changed): "
            "terms.serial; derivation: as overhead.pass's") in text.splitlines()
    assert "note: the same change as share.read's" in text  # share.vector's note was added as share.read's
    markdown = invoke("diff", "main", "--format", "markdown", root=root).stdout
    assert markdown.count("changed lmd1.a100\\_sxm4\\_80gb.l2-7b.b1.p1-o128 = 100.02 → 90.02") + markdown.count(
        "changed lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128 = 100.02 → 90.02") == 1, markdown
    assert markdown.count("**derivation**: the same change as `overhead.pass`'s") == 5
    assert markdown.count("passprice-stack-calibration: the 17 runs") == 1  # the cite, said once for the file
    assert markdown.count("**cite**: as `overhead.pass`'s") == 5


def test_long_texts_are_compared_by_their_common_ends_alone() -> None:
    """Two 10,000-token texts of two repeated words kept difflib busy for 19 s: past MATCHED tokens together, the
    texts are compared by their common start and end (one span, linear), or shown whole when those share little."""
    a, b = " ".join(["x y"] * 5000), " ".join(["y x"] * 5000)
    assert text_change(a, b) == f"{a} → {b}"
    long = " ".join(str(i % 7) for i in range(20000))
    assert text_change(long, long[:30000] + " 9 " + long[30000:]) == "…1 2 3 4 5 [+ 9] 6 0 1 2 3 …"
    assert text_change(long[:30000] + " 9 " + long[30000:], long) == "…1 2 3 4 5 [- 9] 6 0 1 2 3 …"


def test_the_words_before_a_change_keep_the_inputs_name() -> None:
    """Issue 13: the space before a change was counted as one of the words kept, so a derivation's review read
    ``…= the fact memory.bandwidth, [4.8 → 4.89] TB/s``, the input's name ``bandwidth =`` cut off; and a cut at
    :data:`CONTEXT_CHARS` fell inside a figure (``100.02`` read ``100.0 …``). Both sides keep 5 words, cut at spaces."""
    old = ("tokens/s = 0.8 × the fact streams.read; bandwidth = the fact memory.bandwidth, 4.8 TB/s when derived "
           "from the stack's measured runs")  # fmt: skip
    assert text_change(old, old.replace("4.8 TB", "4.89 TB")) == (
        "…bandwidth = the fact memory.bandwidth, [4.8 → 4.89] TB/s when derived from the …"
    )
    assert _cut_end("a = 100.02, " + "x" * 60) == "a = 100.02,…"
    assert _cut_start("x" * 60 + " b = 100.02") == "…b = 100.02"
