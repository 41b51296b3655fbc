"""Slip round 33 (issue 13): changes a reviewer should be asked about that ``passprice diff`` let past with nothing to
verify, each reproduced in a registry of its own (this checkout's, committed on ``main`` of a git repository, changed
on a branch and reviewed as CI reviews it: ``passprice diff main HEAD``).

- (1) An added fact whose figure differs from its locator's only by its unit: a copied card's ``memory.bandwidth``
  4.8 TiB/s (5.28 TB/s, its shares recomputed) under the H200's ``'GPU Memory Bandwidth 4.8TB/s'``: "a figure equal
  by amount is its own", at the place and in the locator; so was a memory's 141 GiB under ``'GPU Memory 141GB'``.
- (2) A new fact 624 TMAC/s under a locator quoting ``624 TFLOPS`` (2 FLOP a MAC: the datasheet states 312 TMAC/s).
- (3) A locator quoting the figure in another notation: ``4.8e12 B/s``, ``4.8 TB/sec``, ``4.8 TBps``, ``4.8 terabytes
  per second`` over a fact of 5.2 TB/s.
- (4) A copied card's derivation input ``dot`` raised 4.48 → 4.624 TB/s under a reworded input locator (a place no
  other fact cites), the fact's own locator still quoting ``Dot 4.48 TB/s``.
- (5) A run added to an existing measurement file, 155.07 tokens/s under a locator quoting another run's 135.07: "1
  other file changed".
- (6) An assumed fact re-cited to a locator quoting another figure of its dimension (only published and measured
  figures cited anew were asked).
- (7) A fact moved from one card into another under its citation (the H100's ``tensor.f8`` into the A100's card).
- (8) A copied routing record's count input ``hot`` 58 → 48 under a reworded locator still quoting ``58 of 128``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.addedfacts import inputs_quote_another, quotes_another
from passprice.cards import load_cards
from passprice.derivations import quantity
from passprice.facts import Fact, Provenance
from passprice.registry import find_root
from passprice.review.changes import _quoted_figures
from test_diff import commit_all, git
from test_slip_34 import review  # one in-process review rendered as text and as JSON

H200 = "facts/cards/h200_sxm_141gb.toml"
# the H200's memory.bandwidth locator (its datasheet's 'GPU Memory Bandwidth 4.8TB/s' until cite102, its product page's
# row since)
BANDWIDTH = ("Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL figure): "
             "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding this checkout's registry, committed on ``main``; each test branches from it."""
    path = tmp_path_factory.mktemp("slip33") / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    return path


def branch(path: Path, name: str, start: str = "main") -> Path:
    """``path`` on a new branch ``name`` made from ``start`` (its work tree clean)."""
    git(path, "checkout", "-q", "-f", start)
    git(path, "clean", "-qfdx")
    git(path, "checkout", "-q", "-b", name)
    return path


def h200_copy(path: Path, *edits: tuple[str, str]) -> None:
    """The H200's card copied to ``facts/cards/h200_copy.toml`` under another ``[card] name``, each ``(old, new)`` of
    ``edits`` replaced once, its derived facts recomputed."""
    text = (path / H200).read_text().replace('name = "NVIDIA H200 SXM 141GB"', 'name = "NVIDIA H200 SXM 141GB, a copy"')
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    (path / "facts" / "cards" / "h200_copy.toml").write_text(text)
    assert invoke("fact", "recompute", "h200_copy", root=path).exit_code == 0


def published(amount: float, unit: str, locator: str) -> Fact:
    """A published fact of ``amount`` ``unit`` under ``locator`` (source ``s``)."""
    return Fact(float(quantity(amount, unit).value), amount, unit, Provenance.PUBLISHED, source="s", locator=locator)


def test_1_an_added_fact_in_another_unit_than_its_locator_is_to_verify(registry: Path) -> None:
    # Before: "17 facts added in 1 new file; no lock affected", nothing to verify, exit 0.
    path = branch(registry, "tib")
    h200_copy(path, ('value = 4.8\nunit = "TB/s"', 'value = 4.8\nunit = "TiB/s"'))
    commit_all(path, "a copy at 4.8 TiB/s")
    status, text, out = review(path)
    # fix53w: the quote, found in the stored excerpt, states 4.8TB/s (4.36557 TiB/s), not 4.8 TiB/s: a MISMATCH,
    # which fails the review
    assert status == 1, text
    assert ("17 facts added in 1 new file, 16 to verify in their sources (16 copied citations: each cites what "
            "another card's fact cites); 1 fact's quotes state another figure than its own; no lock affected"
            ) in text, text.splitlines()[1]  # copied citations (tests/test_fix166.py)
    assert ("; its quote of nvidia-h200-product-page 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s' states 4.8TB/s (4.36557 "
            "TiB/s), not its value 4.8 TiB/s)\n") in text
    # (the row quoted since cite102 prints the H200 NVL's 4.8TB/s too: both figures are named)
    assert ("to verify: its locator quotes 4.8TB/s, 4.8TB/s, not 4.8 TiB/s: does nvidia-h200-product-page: "
            f"{BANDWIDTH} state "
            f"4.8 TiB/s?; {H200}: memory.bandwidth reads 4.8 TB/s at the place facts/cards/h200_copy.toml: "
            "memory.bandwidth cites as 4.8 TiB/s") in text
    assert "h200_copy:memory.bandwidth" in out["to_verify"]  # with the copy's copied citations
    # A size written in a decimal prefix for a binary one stays its own (as designed: '50 MB L2' is 50 MiB).
    assert quotes_another(published(50, "MiB", "Table 3: 50 MB L2")) is None
    # A memory's 141 GiB under 'GPU Memory 141GB' is not (every card records the datasheet's decimal GB).
    assert quotes_another(published(141, "GiB", "'GPU Memory 141GB'")) == (
        "its locator quotes 141GB, not 141 GiB: does s: 'GPU Memory 141GB' state 141 GiB?")


def test_2_an_added_fact_in_macs_under_a_figure_in_flops_is_to_verify(registry: Path) -> None:
    path = branch(registry, "macs")
    card = path / "facts" / "cards" / "a100_sxm4_80gb.toml"
    card.write_text(card.read_text() + '\n[tensor.f8]\nvalue = 624\nunit = "TMAC/s"\nprovenance = "published"\n'
                    'source = "nvidia-a100-80gb-datasheet-zh"\nlocator = "a new row: FP8 Tensor Core 624 TFLOPS"\n')
    commit_all(path, "a fact in MACs")
    status, text, out = review(path)
    assert status == 0, text
    assert ("to verify: its locator quotes 624 TFLOPS, not 624 TMAC/s: does nvidia-a100-80gb-datasheet-zh: a new row: "
            "FP8 Tensor Core 624 TFLOPS state 624 TMAC/s?") in text
    assert out["to_verify"] == ["a100_sxm4_80gb:tensor.f8"]
    # 312 TMAC/s is what 624 TFLOPS states (2 FLOP a MAC): nothing to ask.
    assert quotes_another(published(312, "TMAC/s", "FP8 624 TFLOPS")) is None


@pytest.mark.parametrize("written", ["4.8e12 B/s", "4.8 x 10^12 B/s", "4.8 TB/sec", "4.8 TBps", "4.8 TB/second",
                                     "4.8 terabytes per second", "4,800 GB/s"])
def test_3_a_locator_quoting_another_figure_in_another_notation_is_read(written: str) -> None:
    asks = quotes_another(published(5.2, "TB/s", f"'GPU Memory Bandwidth {written}'"))
    assert asks is not None and asks.startswith("its locator quotes ") and "not 5.2 TB/s" in asks
    assert quotes_another(published(4.8, "TB/s", f"'GPU Memory Bandwidth {written}'")) is None


def test_3_the_review_reads_a_figure_written_with_a_power_of_ten(registry: Path) -> None:
    path = branch(registry, "notation")
    h200_copy(path, ("[memory.bandwidth]\nvalue = 4.8", "[memory.bandwidth]\nvalue = 5.2"),
              ("'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'", "'GPU Memory Bandwidth 4.8e12 B/s'"))
    commit_all(path, "a copy at 5.2 TB/s")
    status, text, out = review(path)
    # the quote written is not in the stored excerpt: NOT FOUND fails the review (tests/test_walk138.py)
    assert status == 1, text
    assert "1 quote NOT FOUND in its stored text" in text
    assert "to verify: its locator quotes 4800000000000 B/s, not 5.2 TB/s" in text
    assert "h200_copy:memory.bandwidth" in out["to_verify"] and len(out["to_verify"]) == 16  # slip52: + 15 borrowed


def test_4_a_copied_derivation_input_raised_under_a_reworded_locator_is_to_verify(registry: Path) -> None:
    path = branch(registry, "input-reworded")
    text = (path / H200).read_text()
    found = re.search(r"derivation\.inputs\.dot = \{[^\n]*\}", text)
    assert found is not None
    raised = found.group(0).replace("4.48", "4.624", 1).replace("BabelStream)", "BabelStream, copied)")
    h200_copy(path, (found.group(0), raised))
    commit_all(path, "a copy, its input raised")
    status, text, out = review(path)
    # the row quotes 4.48 in TB/s (the unit its locator names after it): a MISMATCH of 4.624 TB/s, the review fails
    assert status == 1, text
    assert "1 fact's quotes state another figure than its own" in text
    assert ("to verify: its input dot is 4.624 TB/s but the place quotes 4.48 TB/s: does azure-ai-benchmarking-guide: "
            "Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6), HBM Bandwidth table (BabelStream): "
            "row '| Dot | 4.48 |' in TB/s state 4.624 TB/s?")  # the row's runs of spaces shown as one in text
    assert "h200_copy:streams.read" in out["to_verify"] and len(out["to_verify"]) == 16  # slip52: + 15 borrowed


def test_4_no_shipped_fact_would_be_asked_if_added() -> None:
    # Each shipped card fact, as if a change added it: the locator and input checks ask nothing of any.
    asked = [(card.name, path) for card in load_cards(find_root(REPO)) for path, fact in card.facts().items()
             if quotes_another(fact) is not None or inputs_quote_another(fact, _quoted_figures)]
    assert asked == []


def test_5_a_run_added_to_an_existing_measurement_file_is_to_verify(registry: Path) -> None:
    # Before: "no fact changed; 1 other file changed", nothing to verify, exit 0.
    path = branch(registry, "run-added")
    measurements = path / "registry" / "measurements" / "llamacpp-points.toml"
    text = measurements.read_text()
    run = text[text.index("[[run]]"):].split("\n\n")[0]
    assert "tokens_per_s = 135.07" in run
    added = run.replace('.main"', '.main2"', 1).replace("tokens_per_s = 135.07", "tokens_per_s = 155.07")
    measurements.write_text(text.rstrip("\n") + "\n\n" + added + "\n")
    commit_all(path, "a run added")
    status, text, out = review(path)
    # its quote, found in the stored excerpt, states no 155.07: check's MISMATCH, which fails the review too
    assert status == 1, text
    assert out["runs_mismatched"] == ["registry/measurements/llamacpp-points.toml: xd2.h100_pcie_80gb.l2-7b-q4_0.main2"]
    assert "1 measured run to verify in its source" in text
    assert ("xd2.h100_pcie_80gb.l2-7b-q4_0.main2 added: its locator quotes 131.44, 134.81, 135.07, not 155.07 "
            "tokens/s: does xiongjiedai-gpu-benchmarks: ") in text
    assert ("; xd2.h100_pcie_80gb.l2-7b-q4_0.main reads 135.07 tokens/s at the place it cites as 155.07 tokens/s")\
        in text
    assert out["runs_to_verify"] == {"registry/measurements/llamacpp-points.toml": 1}


def test_6_an_assumed_fact_recited_to_quote_another_figure_is_to_verify(registry: Path) -> None:
    path = branch(registry, "assumed-recited")
    card = path / "facts" / "cards" / "ws1_hypothetical.toml"
    old = "design point: the [card] note and this fact's note (6 stacks x about 1.0 TB/s)"
    assert old in card.read_text()
    card.write_text(card.read_text().replace(old, "design point: 'HBM4 stacks 5 TB/s in all'"))
    commit_all(path, "re-cited")
    status, text, out = review(path)
    assert ("to verify: the citation changed and its locator quotes 5 TB/s, not 6 TB/s: does ws1-design: design "
            "point: 'HBM4 stacks 5 TB/s in all' give 6 TB/s, assumed?") in text, text
    assert out["to_verify"] == ["ws1_hypothetical:memory.bandwidth"]
    assert status == 0, text


def test_3_a_rate_with_its_prefix_in_words_is_read() -> None:
    # The H100's own tensor.f8 locator writes 'FP8 Tensor Core 3,958 teraFLOPS': a figure input of 4958 TFLOPS under
    # it was read against nothing.
    asks = quotes_another(published(4958, "TFLOPS", "'FP8 Tensor Core 3,958 teraFLOPS' (with sparsity)"))
    assert asks is not None and asks.startswith("its locator quotes 3,958 TFLOPS, not 4958 TFLOPS")
    assert quotes_another(published(3958, "TFLOPS", "'FP8 Tensor Core 3,958 teraFLOPS' (with sparsity)")) is None


@pytest.mark.parametrize("reworded", [False, True])
def test_7_a_fact_moved_into_another_card_is_to_verify(registry: Path, reworded: bool) -> None:
    # Before: the H100's tensor.f8 (989.5 TMAC/s under its datasheet's FP8 row) moved into the A100's card, which
    # has no FP8 path: "2 facts changed in 2 files", nothing to verify, exit 0; so too with its locator reworded.
    path = branch(registry, f"moved-{reworded}")
    h100 = path / "facts" / "cards" / "h100_sxm5_80gb.toml"
    a100 = path / "facts" / "cards" / "a100_sxm4_80gb.toml"
    text = h100.read_text()
    block = text[text.index("[tensor.f8]"):].split("\n\n")[0].rstrip("\n")
    h100.write_text(text.replace(block, "").rstrip("\n") + "\n")
    moved = block.replace("'* With sparsity'\"\nnote", "'* With sparsity', copied\"\nnote") if reworded else block
    assert moved != block or not reworded
    a100.write_text(a100.read_text().rstrip("\n") + "\n\n" + moved + "\n")
    commit_all(path, "tensor.f8 moved")
    status, text, out = review(path)
    assert status == 0, text
    how = "with the same source and figure" if reworded else "under the same citation"
    copied = ", copied" if reworded else ""
    assert (f"to verify: moved from facts/cards/h100_sxm5_80gb.toml: tensor.f8 (removed by this change) {how}: does "
            "nvidia-h100-product-page: Product Specifications table, H100 SXM column (a row: its label, the H100 SXM "
            "figure, the H100 NVL figure): 'FP8 Tensor Core* 3,958 teraFLOPS 3,341 teraFLOPS', with sparsity: "
            f"'* With sparsity'{copied} state 989.5 TMAC/s of what facts/cards/a100_sxm4_80gb.toml describes?") in text
    assert out["to_verify"] == ["a100_sxm4_80gb:tensor.f8"]


def test_8_a_copied_count_input_under_a_reworded_locator_is_to_verify(registry: Path) -> None:
    # Before: "2 facts added in 1 new file", nothing to verify, exit 0 (a count has no unit to read it by).
    path = branch(registry, "routing-count")
    text = (path / "facts" / "routing" / "qwen3-30b-a3b-measured.toml").read_text()
    text = text.replace('name = "Qwen3-30B-A3B, measured skew (single-domain Python, ~8k tokens)"', 'name = "a copy"')
    text = text.replace("value = 0.453125", "value = 0.375").replace(
        'derivation.inputs.hot = { value = 58, unit = "1", locator = "row',
        'derivation.inputs.hot = { value = 48, unit = "1", locator = "the row')
    (path / "facts" / "routing" / "qwen3-copy.toml").write_text(text)
    commit_all(path, "a copied routing record")
    status, text, out = review(path)
    assert status == 0, text
    assert ("to verify: its input hot is 48 but its locator quotes 58, 90, 128: does gpu-container-handbook-routing-"
            "derisk: the row 'narrow (single-domain Python)': experts for 90% coverage, 58 of 128 state 48?") in text
    assert out["to_verify"] == ["qwen3-copy:hot_experts"]
