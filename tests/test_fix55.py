"""The review's and check's leftovers on quotes, runs and lock matching (issue 13).

1. A lock made with an absolute ``--card ROOT/other/X.toml`` was listed as affected, no fact changed, by
   ``serving card: /tmp/…/other/X.toml → other/X.toml`` on every review of the work tree: one file spelt two ways.
2. The review read a measured run's locator (every number it states) otherwise than ``check``
   (:func:`passprice.sources.run_quote_states`): one reading now, :func:`passprice.sources.run_quote_figures`.
3. Runs past the review's look-up bound were asked (exit 0) where facts past it fail (exit 1), and the bound was one a
   measurement file: one bound for the review now, and a run past it fails, naming the bound.
4. A quoted column or row name followed by ``column``/``row`` (``'GeForce RTX 4080 16 GB' column``) is a place, not
   a figure: it read as a MISMATCH (16 GB is not 64 MiB) against a stored excerpt.
5. ``check`` warns of a quote stating two or more figures in its fact's own unit (which is this card's?).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import attrs

from cli_helpers import copy_root, invoke

CARD = "facts/cards/h200_sxm_141gb.toml"


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


# --- (1) one card file spelt two ways --------------------------------------------------------------------------------


def test_1_a_lock_on_an_absolute_card_path_is_not_affected_by_a_change_elsewhere(tmp_path: Path) -> None:
    """The lock records ``card = "other/h200_sxm_141gb.toml"``; BASE (a revision, whose root holds only the
    registry's folders) read it from the working folder and wrote it back absolute, HEAD (the work tree) relative."""
    root = copy_root(tmp_path)
    other = root / "other"
    other.mkdir()
    (other / "h200_sxm_141gb.toml").write_bytes((root / CARD).read_bytes())
    with contextlib.chdir(root):
        locked = invoke("lock", "qwen3-30b-a3b-h200", "--card", str(other / "h200_sxm_141gb.toml"), "--name",
                        "other-h200", "-o", str(root / "locks/other-h200.lock.toml"), root=root)
    assert locked.exit_code == 0, locked.output
    assert 'card = "other/h200_sxm_141gb.toml"' in (root / "locks/other-h200.lock.toml").read_text(encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    # a change elsewhere: the registry's own H200 card (not the file the lock rests on)
    _edit(root, CARD, "derivation.inputs.fp32 = { value = 67,", "derivation.inputs.fp32 = { value = 60,")
    with contextlib.chdir(root):
        assert invoke("fact", "recompute", "h200_sxm_141gb", root=root).exit_code == 0
    code, out, _ = _diff(root)
    assert code == 1  # the registry's H200 locks' prices moved unreviewed
    # before: "  other-h200 (locks/other-h200.lock.toml, card h200_sxm_141gb, price): pins serving.card as before the
    # change, …" then "    serving   card: /tmp/…/other/h200_sxm_141gb.toml → other/h200_sxm_141gb.toml"
    assert "other-h200 (locks/other-h200.lock.toml" not in out
    assert not any(line.lstrip().startswith("serving   card:") for line in out.splitlines())
    unaffected = next(line for line in out.splitlines() if line.startswith("6 locks unaffected: "))
    assert "other-h200" in unaffected.split(": ", 1)[1].split(", ")
    code, out, _ = _diff(root, "--format", "json")
    said = json.loads(out)
    assert "other-h200" not in {lock["name"] for lock in said["locks"]}


def test_1_a_card_moved_to_another_file_is_still_a_change(tmp_path: Path) -> None:
    """Two spellings of two files stay a change: the rule compares files, not names."""
    from passprice.registry import Root
    from passprice.review.impacts import _one_spelling
    from passprice.review.sides import Side, SideInfo
    from passprice.servings import load_spec

    root = copy_root(tmp_path)
    (root / "other").mkdir()
    (root / "elsewhere").mkdir()
    for folder in ("other", "elsewhere"):
        (root / folder / "h200_sxm_141gb.toml").write_bytes((root / CARD).read_bytes())
    side = Side(SideInfo("t"), Root(root), {})
    spec = load_spec(Root(root), "qwen3-30b-a3b-h200")
    old = attrs.evolve(spec, card=str(root / "other/h200_sxm_141gb.toml"))
    same = attrs.evolve(spec, card="other/h200_sxm_141gb.toml")
    moved = attrs.evolve(spec, card="elsewhere/h200_sxm_141gb.toml")
    assert _one_spelling(side, side, old, same)[0].card == "other/h200_sxm_141gb.toml"
    assert _one_spelling(side, side, old, moved)[0].card == str(root / "other/h200_sxm_141gb.toml")


# --- (2) one reading of a run's quote ---------------------------------------------------------------------------------

RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
RUN = "xd3.h100_pcie_80gb.8b-q4km.tg512"
ROW = ("| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 "
       "± 0.80 |")


def test_2_check_and_the_review_read_a_runs_quote_alike() -> None:
    """A run of 99 tokens/s under its llama-bench row (``ngl`` 99): check's rule read the mean printed with its
    spread and failed it; the review read every number, found 99 (``ngl``) and asked nothing of an added run."""
    from passprice.measurements import Run
    from passprice.review.runs import _added_run_asks, _quoted_span_figures
    from passprice.sources import run_quote_figures, run_quote_states

    assert run_quote_states(99, [ROW]) == ["145.55 ± 0.80"]  # check: not held
    assert run_quote_figures([ROW]) == ([("145.55", 145.55)], "means")
    locator = f"llama-bench table, row '{ROW}'"
    run = Run(id="r", stack="s", card="c", checkpoint="k", batch=1, first=0, last=512, tokens_per_s=99,
              source_id="src", locator=locator)
    # before: [] (99 read as a figure of the row)
    assert _added_run_asks(run, [run]) == [f"its locator quotes 145.55, not 99 tokens/s: does src: {locator} state 99 "
                                           "tokens/s?"]
    assert _quoted_span_figures(locator, 99) == [145.55]
    # and the reverse: 145.5 is held by 145.55 as the run writes it, by both (the review asked it before)
    held = attrs.evolve(run, tokens_per_s=145.5)
    assert run_quote_states(145.5, [ROW]) is None
    assert _added_run_asks(held, [held]) == []


def test_2_a_run_moved_off_its_row_reads_the_rows_figure_as_check_does(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    _edit(root, RUNS, "tokens_per_s = 145.55\n", "tokens_per_s = 99\n")
    with contextlib.chdir(root):
        checked = invoke("check", root=root)
    assert checked.exit_code == 1
    assert (f"  {RUNS}: run.0 ({RUN}): its quote of xiongjiedai-gpu-benchmarks '{ROW}' states 145.55 ± 0.80, not its "
            "99 tokens/s: the value and the words it cites disagree; quote the words of the document stating the "
            "value, or set the value they state") in checked.stdout.splitlines()
    code, out, _ = _diff(root)
    assert code == 1
    line = next(x for x in out.splitlines() if x.startswith(f"  {RUNS} (changed): "))
    # before: "…(145.55 → 99 tokens/s, -31.98 %) but its citation did not: does xiongjiedai-gpu-benchmarks: … say 99
    # tokens/s?" (the row's ngl 99 read as its figure)
    assert line.startswith(f"  {RUNS} (changed): 1 measured run to verify in its source: {RUN}'s tokens/s moved "
                           "(145.55 → 99 tokens/s, -31.98 %) but its citation did not, and the locator quotes 145.55: "
                           "xiongjiedai-gpu-benchmarks: ")


# --- (3) one bound for the review's quote look-ups, runs past it failing ------------------------------------------

POINTS = "registry/measurements/llamacpp-points.toml"
POINTS_RUN = "xd2.h100_pcie_80gb.l2-7b-q4_0.main"


def _recite(root: Path) -> None:
    """Both runs cited anew (a word added outside their quotes), their figures unmoved: each run's quote is looked
    up (3 spans, then 1), no fit goes stale, and nothing else fails the review."""
    _edit(root, POINTS, "of three runs: 'llama_print_timings:        eval time =    7783.09",
          "of the three runs: 'llama_print_timings:        eval time =    7783.09")
    _edit(root, RUNS, "llama-bench table, row '| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       "
                      "|  99 |         tg512 |",
          "llama-bench's table, row '| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       "
          "|  99 |         tg512 |")


def test_3_runs_share_the_reviews_one_bound_and_fail_past_it(tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    import passprice.sources as sources

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    root = _registry(tmp_path)
    _recite(root)
    code, out, err = _diff(root)
    assert code == 0, out + err  # within the bound: asked, looked up, nothing fails
    assert "❌" not in out
    real = sources.Lookups
    # a bound of 3 spans for the review: the first file's run spends it; the second file's run is past it (with a
    # bound a file, as before, each file's run was looked up and the review passed: exit 0)
    monkeypatch.setattr(sources, "Lookups", lambda spans=3, chars=sources.SEARCHED_MOST: real(spans, chars))
    code, out, err = _diff(root)
    assert code == 1, out + err
    assert "1 measured run's quotes not checked (past the review's bound)" in out.splitlines()[1]
    line = next(x for x in out.splitlines() if x.startswith(f"  {RUNS} (changed): "))
    assert line.endswith("; ❌ its quote was not looked up, past the review's bound (2,236 spans, 128 MiB of stored "
                         "text, one bound for the whole review): review the change in smaller pieces, or read it in "
                         "its source; priced on HEAD: 145.55 tokens/s, limit 408 (2.8 × measured)")
    points = next(x for x in out.splitlines() if x.startswith(f"  {POINTS} (changed): "))
    assert "past the review's bound" not in points
    assert err.strip() == (
        f"passprice: refused: quotes not checked: 1 quoted span of 1 measured run ({RUNS}: {RUN}) not looked up in "
        "their stored excerpts, the review's look-ups past their bound (2,236 spans, 128 MiB of stored text; none is "
        "looked up then, whichever file sorts first): a quote not checked may be NOT FOUND; split the change, or run "
        "`passprice audit --source ID` on each source they cite")
    code, out, _ = _diff(root, "--format", "json")
    said = json.loads(out)
    assert (code, said["exit_status"], said["quotes_unchecked"]) == (1, 1, [f"{RUNS}: {RUN}"])


# --- (4) a quoted column's or row's name is a place --------------------------------------------------------------


def test_4_a_quoted_column_name_is_a_place_not_a_figure(monkeypatch: object) -> None:
    """The RTX 4080's ``l2`` (64 MiB) is read under ``Appendix A, 'GeForce RTX 4080 16 GB' column: …``: against a
    stored excerpt of the Ada whitepaper (none is shipped: a synthetic one) its quote read as 16 GB, a MISMATCH."""
    import pytest

    import passprice.sources as sources
    from cli_helpers import REPO
    from passprice.cards import load_card
    from passprice.registry import Root

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    root = Root(REPO)
    facts = load_card(root, "rtx_4080").facts()
    whitepaper = sources.stored_text_of(sources.load_source(root, "nvidia-ada-whitepaper"), (
        b"== nvidia-ada-whitepaper ==\n1\tGraphics Card GeForce RTX 4090 GeForce RTX 4080 16 GB\n"
        b"2\tMemory Bandwidth 716.8 GB/sec\n"), "synthetic")
    guide = sources.stored_text_of(sources.load_source(root, "nvidia-ada-tuning-guide"), (
        b"== nvidia-ada-tuning-guide ==\n1\tThe shared memory capacity per SM is 100 KB.\n"
        b"2\tThe register file size is 64K 32-bit registers per SM.\n"), "synthetic")
    texts = {"nvidia-ada-whitepaper": whitepaper, "nvidia-ada-tuning-guide": guide}
    assert sources.quote_check("on_chip.capacity", facts["on_chip.capacity"], texts).line() == (
        "on_chip.capacity: checked (3 of 3 quoted spans found in the stored text)")
    assert sources.quote_check("memory.bandwidth", facts["memory.bandwidth"], texts).line() == (
        "memory.bandwidth: checked (2 of 2 quoted spans found in the stored text)")
    assert sources._in_named_unit("Appendix A, 'GeForce RTX 4080 16 GB' column: 'Memory Bandwidth 716.8 GB/sec'") == [
        "", "Memory Bandwidth 716.8 GB/sec"]
    # a row quoted after the word row is still read in the unit named after it (attack54)
    assert sources._in_named_unit("row '| Dot   | 4.48   |' in TB/s") == ["| Dot   | 4.48 TB/s   |"]
    # before: the column's name read as a figure
    monkeypatch.setattr(sources, "_PLACE_AFTER_QUOTE", r"(?!)")
    assert sources.quote_check("on_chip.capacity", facts["on_chip.capacity"], texts).line() == (
        "on_chip.capacity: MISMATCH (3 of 3 quoted spans found in the stored text; its l2 figure's quote of "
        "nvidia-ada-whitepaper 'GeForce RTX 4080 16 GB' states 16 GB (15258.8 MiB), not its 64 MiB)")


def test_4_the_shipped_registry_still_reads_no_problem() -> None:
    done = invoke("check")
    assert done.exit_code == 0, done.output
    assert ": 0 problems" in done.stdout.splitlines()[0]
