"""Slip round 34 (issue 13): changes a reviewer should be asked about that ``passprice diff`` (and ``check``) let
past, each reproduced in a registry of its own (this checkout's, committed on ``main`` of a git repository, changed
on a branch and reviewed as CI reviews it: ``passprice diff main HEAD``).

- (1) A figure written in words or typeset otherwise under a fact: ``four point eight terabytes per second``,
  ``4.8 TB/s`` with a no-break space, ``4.8×10¹² B/s``, ``4.8 Tbyte/s``, ``4.8 TB per second`` beside 5.2 TB/s.
- (2) An added estimated or assumed fact whose locator quotes another figure of its dimension (the 2 shipped
  assumptions whose locators quote their basis, ``6 HBM3E stacks x 16 GB`` for 96 GB and ``50,000 block-scale lanes
  at 2.0 GHz`` for 100 Tcycle/s, stay unasked).
- (3) A new measurement file's runs: a run under a locator quoting another figure was only priced; a run citing an
  unregistered source passed ``check`` ("0 problems") and the review (exit 0).
- (4) A source record's ``retrieved`` date edited under the 9 facts citing it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.addedfacts import from_basis, quotes_another
from passprice.derivations import quantity
from passprice.facts import Fact, Provenance
from passprice.review import Diff
from test_diff import commit_all, git

H200 = "facts/cards/h200_sxm_141gb.toml"
POINTS = "registry/measurements/llamacpp-points.toml"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding this checkout's registry, committed on ``main``; each test branches from it."""
    path = tmp_path_factory.mktemp("slip34") / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    return path


def branch(path: Path, name: str) -> Path:
    """``path`` on a new branch ``name`` made from ``main`` (its work tree clean)."""
    git(path, "checkout", "-q", "-f", "main")
    git(path, "clean", "-qfdx")
    git(path, "checkout", "-q", "-b", name)
    return path


def h200_copy(path: Path, *edits: tuple[str, str]) -> None:
    """The H200's card copied to ``facts/cards/h200_copy.toml``, each ``(old, new)`` of ``edits`` replaced once, its
    derived facts recomputed."""
    text = (path / H200).read_text().replace('name = "NVIDIA H200 SXM 141GB"', 'name = "NVIDIA H200 SXM 141GB, a copy"')
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    (path / "facts" / "cards" / "h200_copy.toml").write_text(text, encoding="utf-8")
    assert invoke("fact", "recompute", "h200_copy", root=path).exit_code == 0


def fact(amount: float, unit: str, locator: str, provenance: Provenance = Provenance.PUBLISHED) -> Fact:
    """A fact of ``amount`` ``unit`` under ``locator`` (source ``s``)."""
    return Fact(float(quantity(amount, unit).value), amount, unit, provenance, source="s", locator=locator)


def renderings(
    path: Path, *formats: str, base: str | None = "main", head: str | None = "HEAD"
) -> tuple[int, list[str]]:
    """``passprice --root PATH diff BASE HEAD --format FORMAT``'s exit status and standard output for each of
    ``formats`` (``None``: BASE or HEAD not given, the command's default), from one review: the library's
    :func:`passprice.review.verdict.diff` run once in process as the command runs it (the cache on, the registry read as
    one snapshot) and rendered per format as the command prints it (:func:`passprice.review.rendering.render`, no links,
    a line end), where one command per format reviewed the change again (session 33: ~0.7 s a review). That these are
    the command's bytes and status is pinned by
    ``test_3_a_new_files_run_citing_an_unregistered_source_fails_check_and_the_review``."""
    status, outs, _ = printed(path, *formats, base=base, head=head)
    return status, outs


def printed(
    path: Path, *formats: str, base: str | None = "main", head: str | None = "HEAD"
) -> tuple[int, list[str], str]:
    """:func:`renderings` and the standard error the command prints beside them, as it prints it: one
    ``passprice: error:`` line per problem when the review exits 2, one ``passprice: refused:`` line when it exits 1,
    nothing at 0."""
    from passprice import cache, snapshot
    from passprice.registry import find_root
    from passprice.review import diff

    cache.configure(enabled=True)
    with snapshot.reading():
        return shown(diff(find_root(str(path)), base, head), *formats)


def shown(result: Diff, *formats: str) -> tuple[int, list[str], str]:
    """What ``passprice diff --format FORMAT`` prints of a review already made (``result``, a
    :class:`passprice.review.verdict.Diff`): its exit status, its standard output in each of ``formats`` (no links, a
    line end) and its standard error (:func:`printed`'s lines), where a test holding the review ran the command
    again."""
    from passprice.review import render

    outs = [render(result, fmt, None) + "\n" for fmt in formats]
    if result.exit_status == 2:
        err = "".join(f"passprice: error: {line}\n" for line in result.head_error_lines())
    elif result.exit_status == 1:
        err = f"passprice: refused: {'; '.join(result.refusal_reasons())}\n"
    else:
        err = ""
    return result.exit_status, outs, err


def review(path: Path, base: str = "main") -> tuple[int, str, dict]:
    """``diff BASE HEAD`` as text (its exit status too) and as JSON (parsed), from one review (:func:`renderings`)."""
    status, (text, as_json) = renderings(path, "text", "json", base=base)
    return status, text, json.loads(as_json)


@pytest.mark.parametrize("written", ["four point eight terabytes per second", "4.8\u00a0TB/s", "4.8\u202fTB/s",
                                     "4.8 TB\u2215s", "4.8×10¹² B/s", "4.8 x 10^12 bytes/s", "4.8 Tbyte/s",
                                     "4.8 TB per second", "4.8 TB/S", "four thousand eight hundred GB/s",
                                     "Four-Point-Eight TB/s"])
def test_1_a_figure_in_words_or_typeset_is_read(written: str) -> None:
    asks = quotes_another(fact(5.2, "TB/s", f"'GPU Memory Bandwidth {written}'"))
    assert asks is not None and asks.startswith("its locator quotes ") and ", not 5.2 TB/s: does s: " in asks
    assert quotes_another(fact(4.8, "TB/s", f"'GPU Memory Bandwidth {written}'")) is None


def test_1_the_review_asks_a_copy_under_a_figure_in_words(registry: Path) -> None:
    # Before: "17 facts added in 1 new file; no lock affected", nothing to verify, exit 0.
    path = branch(registry, "words")
    h200_copy(path, ("[memory.bandwidth]\nvalue = 4.8", "[memory.bandwidth]\nvalue = 5.2"),
              ("'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'",
               "'GPU Memory Bandwidth four point eight terabytes per second'"))
    commit_all(path, "a copy at 5.2 TB/s")
    status, text, out = review(path)
    # the quote in words is in no stored excerpt: NOT FOUND, which fails the review (tests/test_walk138.py)
    assert status == 1, text
    assert ("17 facts added in 1 new file, 16 to verify in their sources (15 copied citations: each cites what "
            "another card's fact cites); 1 quote NOT FOUND in its stored "
            "text") in text  # slip52: + 15 borrowed
    assert ("to verify: its locator quotes 4.8 TB/s, not 5.2 TB/s: does nvidia-h200-product-page: Specifications "
            "table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory "
            "Bandwidth four point eight terabytes per second' state 5.2 TB/s?") in text
    assert "h200_copy:memory.bandwidth" in out["to_verify"] and len(out["to_verify"]) == 16  # slip52: + 15 borrowed


def test_1_a_value_moved_under_its_figure_in_another_notation_is_said_firmly(registry: Path) -> None:
    # Before: "does … say 5.2 TB/s?", as if the locator quoted no figure (it quotes 4,800 GB/s, the old one).
    path = branch(registry, "notation-base")
    card = path / H200
    card.write_text(card.read_text().replace("'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'",
                                             "'GPU Memory Bandwidth 4,800 GB/s'"))
    commit_all(path, "the old figure in another notation")
    git(path, "checkout", "-q", "-b", "notation-head")
    card.write_text(card.read_text().replace("[memory.bandwidth]\nvalue = 4.8", "[memory.bandwidth]\nvalue = 5.2"))
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=path).exit_code == 0
    commit_all(path, "5.2 TB/s")
    text = invoke("diff", "notation-base", "HEAD", root=path)
    assert ("to verify: the value moved (4.8 TB/s → 5.2 TB/s) but its citation did not, and the locator quotes "
            "4,800 GB/s (4.8 TB/s): nvidia-h200-product-page: Specifications table, H200 SXM column (a row: its "
            "label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4,800 GB/s'") in text.stdout, \
        text.stdout


def test_2_an_added_estimate_quoting_another_figure_is_to_verify(registry: Path) -> None:
    # Before: "17 facts added in 1 new file", nothing to verify, exit 0 (only published and measured were read).
    # Since the quote rule holds every provenance, the estimate's quote found in the stored excerpt and stating 4.8
    # TB/s is a MISMATCH too (its note says no basis, nor does its locator work 5.2 out of 4.8): the review fails.
    path = branch(registry, "estimate")
    h200_copy(path, ('[memory.bandwidth]\nvalue = 4.8\nunit = "TB/s"\nprovenance = "published"',
                     '[memory.bandwidth]\nvalue = 5.2\nunit = "TB/s"\nprovenance = "estimated"'),
              ("'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'", "'GPU Memory Bandwidth 4.8TB/s' (the NVL's, page 2)"))
    commit_all(path, "an estimate")
    status, text, out = review(path)
    assert status == 1, text
    assert "1 fact's quotes state another figure than its own" in text.splitlines()[1]
    assert ("to verify: its locator quotes 4.8TB/s, not 5.2 TB/s: does nvidia-h200-product-page: Specifications "
            "table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory "
            "Bandwidth 4.8TB/s' (the NVL's, page 2) give 5.2 TB/s, estimated?") in text
    assert "h200_copy:memory.bandwidth" in out["to_verify"] and len(out["to_verify"]) == 16  # slip52: + 15 borrowed


def test_2_an_estimate_whose_locator_quotes_its_basis_is_not_asked() -> None:
    # The 2 shipped facts whose locators quote their basis (ws1_hypothetical's memory.capacity and scale).
    assert quotes_another(fact(96, "GB", "design point (6 HBM3E stacks x 16 GB)", Provenance.ASSUMED)) is None
    assert quotes_another(fact(100, "Tcycle/s", "design point (50,000 block-scale lanes at 2.0 GHz)",
                               Provenance.ASSUMED)) is None
    assert from_basis(4.56, "TB/s", "'4.8 TB/s' less 5 %")
    assert not from_basis(5.2, "TB/s", "'GPU Memory Bandwidth 4.8TB/s' (page 2)")
    assert quotes_another(fact(5.2, "TB/s", "'4.8TB/s'", Provenance.ASSUMED)) == (
        "its locator quotes 4.8TB/s, not 5.2 TB/s: does s: '4.8TB/s' give 5.2 TB/s, assumed?")


def new_file(path: Path, *edits: tuple[str, str]) -> None:
    """``registry/measurements/new-points.toml``: the first run of llamacpp-points.toml under a new id, with
    ``edits``."""
    text = (path / POINTS).read_text()
    run = text[text.index("[[run]]"):].split("\n\n")[0].replace('.main"', '.main9"', 1)
    for old, new in edits:
        assert old in run, old
        run = run.replace(old, new)
    (path / "registry" / "measurements" / "new-points.toml").write_text(text[:text.index("[[run]]")] + run + "\n")


def test_3_a_new_files_run_under_another_figure_is_to_verify(registry: Path) -> None:
    # Before: "no fact changed; 1 other file changed", the run only priced, nothing to verify, exit 0.
    path = branch(registry, "new-file")
    new_file(path, ("tokens_per_s = 135.07", "tokens_per_s = 155.07"))
    commit_all(path, "a new measurement file")
    status, text, out = review(path)
    # its quote, found in the stored excerpt, states no 155.07: check's MISMATCH, which fails the review too
    assert status == 1, text
    assert out["runs_mismatched"] == ["registry/measurements/new-points.toml: xd2.h100_pcie_80gb.l2-7b-q4_0.main9"]
    assert "1 other file changed; 1 measured run to verify in its source" in text
    assert ("155.07 tokens/s, limit 478.5 (3.09 × measured); 1 measured run to verify in its source: "
            "xd2.h100_pcie_80gb.l2-7b-q4_0.main9 added: its locator quotes 131.44, 134.81, 135.07, not 155.07 "
            "tokens/s: does xiongjiedai-gpu-benchmarks: ") in text
    assert "xd2.h100_pcie_80gb.l2-7b-q4_0.main reads 135.07 tokens/s at the place it cites as 155.07 tokens/s" in text
    assert out["runs_to_verify"] == {"registry/measurements/new-points.toml": 1}


def test_3_a_new_files_run_citing_an_unregistered_source_fails_check_and_the_review(registry: Path) -> None:
    # Before: check "0 problems", exit 0; the review "1 other file changed", exit 0 (validate refused the file).
    path = branch(registry, "new-file-source")
    new_file(path, ('source = "xiongjiedai-gpu-benchmarks"', 'source = "nobody-knows"'))
    line = ("registry/measurements/new-points.toml: run.0.source: no source 'nobody-knows' (sources/ has no such "
            "record): a run cites a source record (sources/ID.toml): write sources/nobody-knows.toml, or cite a record "
            "`passprice sources` lists")
    checked = invoke("check", root=path)
    assert checked.exit_code == 2, checked.output
    assert line in checked.stderr
    commit_all(path, "a run citing no record")
    # printed() (renderings(), review()) renders one in-process review per format: the command's bytes and exit
    # status, as text, as --json and as Markdown, and its standard error (one review for the three: review() and
    # printed() were two, to the same JSON; session 39).
    status, (text, as_json, markdown), err = printed(path, "text", "json", "markdown")
    assert status == 2, text
    assert f"HEAD fails passprice check (1 problem):\n  {line}" in text
    command = invoke("diff", "main", "HEAD", root=path)
    assert (command.exit_code, command.stdout) == (status, text)
    assert command.stderr == f"passprice: error: on HEAD: {line}\n"
    assert err == command.stderr  # printed(): the command's standard error too
    for fmt, shown in (("json", as_json), ("markdown", markdown)):
        command = invoke("diff", "main", "HEAD", "--format", fmt, root=path)
        assert (command.exit_code, command.stdout) == (2, shown), fmt


def test_4_a_sources_retrieved_date_edited_is_to_verify(registry: Path) -> None:
    # Before: "no fact changed; 1 other file changed", nothing to verify, exit 0.
    path = branch(registry, "retrieved")
    record = path / "sources" / "nvidia-h200-datasheet.toml"
    assert 'retrieved = "unknown"' in record.read_text()
    record.write_text(record.read_text().replace('retrieved = "unknown"', 'retrieved = "2026-11-30"'))
    commit_all(path, "retrieved anew")
    status, text, out = review(path)
    assert status == 0, text
    assert "1 source whose document changed, to verify (under 5 locked prices)" in text
    assert ("nvidia-h200-datasheet: to verify: the document source nvidia-h200-datasheet names changed (retrieved: "
            "unknown → 2026-11-30): does it state h200_sxm_141gb:array, which cites it?") in text  # its one fact
    # since cite102 (memory.capacity and 12 more cite the H200 product page: tests/test_cite102.py)
    assert [s["id"] for s in out["sources_changed"]] == ["nvidia-h200-datasheet"]


def test_5_a_runs_setting_moved_under_its_citation_is_to_verify(registry: Path) -> None:
    # Before: "no fact changed; 1 other file changed", nothing to verify, exit 0: the run's 135.07 tokens/s, measured
    # with 256 to 512 cached positions, now priced at 1 to 64.
    path = branch(registry, "setting-moved")
    measurements = path / POINTS
    text = measurements.read_text()
    run = text[text.index("[[run]]"):].split("\n\n")[0]
    measurements.write_text(text.replace(run, run.replace("positions = [256, 512]", "positions = [1, 64]"), 1))
    commit_all(path, "positions moved")
    status, text, out = review(path)
    assert status == 0, text
    assert ("1 measured run to verify in its source: xd2.h100_pcie_80gb.l2-7b-q4_0.main's setting moved (first "
            "position 256 → 1; last position 512 → 64) but its citation did not: does xiongjiedai-gpu-benchmarks: "
            "LLaMA 2/Professional GPUs/H100_PCIe_v2.ipynb: ") in text
    assert "(the third, the largest, kept) measure 135.07 tokens/s at that setting?" in text
    assert out["runs_to_verify"] == {POINTS: 1}


def test_6_a_copied_drafting_methods_acceptance_outside_its_quoted_range_is_to_verify(registry: Path) -> None:
    # Before: "3 facts added in 1 new file", nothing to verify, exit 0 (a ratio has no unit to read it by).
    path = branch(registry, "draft-copy")
    text = (path / "facts" / "drafts" / "qwen35-mtp.toml").read_text()
    text = (text.replace('name = "Qwen3.5 MTP block (up to three drafts, the block reused)"', 'name = "a copy"')
            .replace("value = 0.85\n", "value = 0.95\n", 1)
            .replace('fact = "acceptance.1", value = 0.85', 'fact = "acceptance.1", value = 0.95')
            .replace("value = 0.75", "value = 0.85").replace("value = 0.65", "value = 0.75")
            .replace("second-token acceptance 85-90% for", "second-token acceptance of 85-90% for"))
    (path / "facts" / "drafts" / "qwen35-copy.toml").write_text(text)
    commit_all(path, "a copied drafting method")
    status, text, out = review(path)
    assert status == 0, text
    assert ("to verify: it is 0.95 but its locator quotes 85%, 90%: does deepseek-v3-technical-report: §5.4.3: "
            "second-token acceptance of 85-90% for DeepSeek-V3's one-depth MTP module") in text
    assert out["to_verify"] == ["qwen35-copy:acceptance.1"]


def test_6_an_estimated_share_in_its_quoted_range_or_bound_is_not_asked() -> None:
    # The 2 shipped estimates of a share: ws1_hypothetical's host.stream and sn40l's streams.read.
    from passprice.review.changes import _quoted_figures

    assert quotes_another(fact(0.85, "1", "basis: the 0.80-0.86 DMA shares measured", Provenance.ASSUMED),
                          _quoted_figures) is None
    assert quotes_another(fact(0.8, "1", "'achieving over 75% of peak on 8 and 16 RDUs'", Provenance.ESTIMATED),
                          _quoted_figures) is None
    assert quotes_another(fact(0.7, "1", "'achieving over 75% of peak on 8 and 16 RDUs'", Provenance.ESTIMATED),
                          _quoted_figures) is not None
    assert quotes_another(fact(0.95, "1", "acceptance 85-90%", Provenance.PUBLISHED), _quoted_figures) == (
        "it is 0.95 but its locator quotes 85%, 90%: does s: acceptance 85-90% give 0.95?")


def test_7_a_derivations_constant_moved_under_its_words_is_to_verify(registry: Path) -> None:
    # Before: host.read 64 → 128 GB/s (its constant 'directions' 2 → 1 under "the link's two directions"), the 4
    # locks re-locked: "2 facts changed in 1 file; 4 locks affected, 4 re-locked", nothing to verify, exit 0.
    path = branch(registry, "constant-moved")
    card = path / H200
    old = 'derivation.inputs.directions = { value = 2, unit = "1", constant = "the link\'s two directions'
    assert old in card.read_text()
    card.write_text(card.read_text().replace(old, old.replace("value = 2", "value = 1"), 1))
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=path).exit_code == 0
    for lock in sorted((path / "locks").glob("*.lock.toml")):
        assert invoke("lock", "--update", "-o", str(lock), root=path).exit_code == 0
    commit_all(path, "one direction")
    status, text, out = review(path)
    assert status == 0, text
    assert "2 facts changed in 1 file, 1 to verify in its source" in text
    assert ("to verify: its constant directions moved (2 → 1): is 'the link's two directions, counted together in "
            "the both-ways figure' 1?") in text
    assert out["to_verify"] == ["h200_sxm_141gb:host.read"]


def test_8_a_copied_cards_constant_moved_under_its_words_is_to_verify(registry: Path) -> None:
    # Before: a copy of the H200 with its array's 'sparsity' 2 → 1 (989.5 → 1979 TMAC/s) under "2:4 structured
    # sparsity doubles the dense rate": "17 facts added in 1 new file", nothing to verify, exit 0.
    path = branch(registry, "constant-copied")
    old = 'derivation.inputs.sparsity = { value = 2, unit = "1", constant = "2:4 structured sparsity doubles the dense'
    h200_copy(path, (old, old.replace("value = 2", "value = 1")))
    commit_all(path, "a copy, its array doubled")
    status, text, out = review(path)
    assert status == 0, text
    assert ("17 facts added in 1 new file, 16 to verify in their sources (16 copied citations: each cites what "
            "another card's fact cites)") in text, text.splitlines()[1]  # copied citations (tests/test_fix166.py)
    assert ("to verify: its constant sparsity is 1 where facts/cards/h100_pcie_80gb.toml: array input sparsity reads 2 "
            "under the same words: is '2:4 structured sparsity doubles the dense rate' 1?") in text
    assert "h200_copy:array" in out["to_verify"]  # with the copy's copied citations


def test_6_a_share_is_held_against_ratios_only() -> None:
    from passprice.review.changes import _quoted_figures

    # A share under a locator quoting only rates and a version number is not held against them (slip 32's copy).
    assert quotes_another(fact(0.9633, "1", "results (CUDA 12.6), HBM Bandwidth table: Dot 4.48 TB/s",
                               Provenance.MEASURED), _quoted_figures) is None
    # An estimate from numbers it quotes, one in words: 15 % each for the two busiest is 0.3.
    assert quotes_another(fact(0.3, "1", "Figure 7: about 15 % each for the two busiest", Provenance.ESTIMATED),
                          _quoted_figures) is None


def test_9_a_formula_rewritten_is_to_verify(registry: Path) -> None:
    # Before: the H200's streams.read formula 'dot / bandwidth' → 'dot * 1.05 / bandwidth' (0.9333 → 0.98), the 4
    # locks re-locked: nothing to verify, exit 0; a copy with that formula: "17 facts added", nothing to verify.
    path = branch(registry, "formula-edited")
    card = path / H200
    card.write_text(card.read_text().replace('derivation.formula = "dot / bandwidth"',
                                             'derivation.formula = "dot * 1.05 / bandwidth"', 1))
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=path).exit_code == 0
    for lock in sorted((path / "locks").glob("*.lock.toml")):
        assert invoke("lock", "--update", "-o", str(lock), root=path).exit_code == 0
    commit_all(path, "a factor in the formula")
    status, text, out = review(path)
    assert status == 0, text
    assert ("to verify: its formula changed (dot / bandwidth → dot * 1.05 / bandwidth): does what it cites give the "
            "figure so?") in text
    assert out["to_verify"] == ["h200_sxm_141gb:streams.read"]
    path = branch(registry, "formula-copied")
    h200_copy(path, ('derivation.formula = "dot / bandwidth"', 'derivation.formula = "dot * 1.05 / bandwidth"'))
    commit_all(path, "a copy with a factor in its formula")
    status, text, out = review(path)
    assert status == 0, text
    assert ("to verify: its formula dot * 1.05 / bandwidth writes 1.05, a number no input names: where does it come "
            "from?; its formula dot * 1.05 / bandwidth is not dot / bandwidth, which facts/cards/h200_sxm_141gb.toml: "
            "streams.read derives from the same citation: does azure-ai-benchmarking-guide: ") in text
    assert "h200_copy:streams.read" in out["to_verify"]  # with the copy's copied citations (tests/test_fix166.py)
