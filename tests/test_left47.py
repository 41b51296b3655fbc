"""Left47 (left46's leftovers, issue 13: what a review's lock row tells of a moved figure): a derived value edited by
hand under the derivation it kept is cited with what its inputs give; a value moved under its kept citation, a
corrected run, a derivation's input and an added run outside a fit's span keep the figure their locator quotes; a
corrected run whose locator still quotes its old figure is told so. Each pinned on the library function that writes
it (no git, no pricing)."""

from __future__ import annotations

import types

import attrs

from cli_helpers import REPO
from passprice.cards import load_card
from passprice.derivations import Derivation
from passprice.registry import Root
from passprice.review import LockImpact, PriceSide
from passprice.review.impacts import _lock_cite
from passprice.review.quotes import _cut_keeping
from passprice.review.rendering import _cites, _input_cite, _runs_moved
from passprice.review.runs import _run_cited

_ROW = ("'| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    "
        "145.55 ± 0.80 |'")
_LOCATOR = f"LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: llama-bench table, row {_ROW}"


def _said(cite: object, routing: str | None = None) -> str:
    return _cites(types.SimpleNamespace(cites=(cite,), fitted=(), routing_record=routing))  # type: ignore[arg-type]


def test_a_derived_value_edited_by_hand_is_cited_with_what_its_inputs_give() -> None:
    """The RTX 3080's array, 238 TOPS / 2 op/MAC = 119 TMAC/s, edited to 120 under its kept derivation: the row named
    the formula and inputs as if they gave 120; it says they give 119 TMAC/s, in the fact's unit (`inputs_give` in
    --json). Re-derived right (the input edited too, 240 / 2 = 120), it reads as before, no such words."""
    array = load_card(Root(REPO), "rtx_3080").facts()["array"]
    assert isinstance(array.derivation, Derivation) and (array.amount, array.unit) == (119, "TMAC/s")
    edited = attrs.evolve(array, amount=120, value=120e12)
    cite = _lock_cite("array", array, edited)
    assert cite is not None and cite[6:] == ("119 TMAC/s", ())
    assert _said(cite).endswith("; ops_per_mac 2 op/MAC: constant] (its inputs give 119 TMAC/s: the value written "
                                "does not follow from them)")
    side = PriceSide()
    lock = LockImpact("x", "locks/x.lock.toml", "rtx_3080", "price", "x", "unchanged", ("array",), side, side, None,
                      None, cites=(cite,))
    assert lock.to_json()["cites"][0]["inputs_give"] == "119 TMAC/s"
    inputs = tuple(attrs.evolve(i, amount=240) if i.name == "dense" else i for i in array.derivation.inputs)
    rederived = attrs.evolve(edited, derivation=attrs.evolve(array.derivation, inputs=inputs))
    cite = _lock_cite("array", array, rederived)
    assert cite is not None and cite[6] is None and "its inputs give" not in _said(cite)


def test_a_value_moved_under_its_kept_citation_keeps_the_figure_its_locator_quotes() -> None:
    """The H200's bandwidth 4.8 → 5.2 TB/s under a locator whose quote of 4.8TB/s begins past its 100th character:
    cut at a word it read `…H200 SXM column, second row of the…`, no figure; the quote is kept whole, as it is when
    the fact is re-cited there (the figure the new place must state). A percentage
    quoted without quote marks past the cut (hot_share 0.9 as `90%`) is kept with the word after it."""
    bandwidth = load_card(Root(REPO), "h200_sxm_141gb").facts()["memory.bandwidth"]
    where = "Technical Specifications table (page 2 of the 2024 revision), H200 SXM column, second row of the memory"
    long = attrs.evolve(bandwidth, locator=f"{where} group: 'GPU Memory Bandwidth 4.8TB/s'")
    cite = _lock_cite("memory.bandwidth", long, attrs.evolve(long, amount=5.2, value=5.2e12))
    assert cite is not None and cite[7] == (5.2, 4.8)
    assert _said(cite) == ("memory.bandwidth: value changed, citation unchanged: nvidia-h200-product-page, "
                           "Technical Specifications table (page 2 of the 2024 revision), H200 SXM column, second row "
                           "of the… 'GPU Memory Bandwidth 4.8TB/s'")
    cite = _lock_cite("memory.bandwidth", bandwidth, long)  # re-cited, its figure kept: the new place must state it
    assert cite is not None and cite[3] and cite[7] == (4.8,)
    assert _said(cite).endswith("second row of the… 'GPU Memory Bandwidth 4.8TB/s'")
    text = "the definition of hot_frac_for_coverage, " * 3 + "which names the experts that capture 90% of the mass"
    assert _cut_keeping(text, 100, (0.85, 0.9)) == (
        "the definition of hot_frac_for_coverage, the definition of hot_frac_for_coverage, the definition of… "
        "which names the experts that capture 90% of…")  # 40 characters before the figure, from a space
    assert _cut_keeping(text, 100, (0.5,)) == ("the definition of hot_frac_for_coverage, the definition of "
                                               "hot_frac_for_coverage, the definition of…")  # no figure: as before


def test_a_corrected_run_whose_locator_quotes_its_old_figure_is_told_so() -> None:
    """A run corrected 145.55 → 154.55 tokens/s, its locator (the real one) still quoting 145.55: the runs line cut
    the row and said nothing; it keeps the row quoting 145.55 whole and says the locator quotes 145.55, not
    154.55. A locator quoting the new figure reads as left46 left it."""
    side = PriceSide()
    lock = LockImpact("r1-qwen7b-h200-llamacpp", "locks/r1-qwen7b-h200-llamacpp.lock.toml", "h200_sxm_141gb",
                      "price", "r1-qwen7b-h200", "unchanged", ("stack.overhead.layer",), side, side, None, None,
                      runs_moved=(("xd3.h100_pcie_80gb.8b-q4km.tg512", 145.55, 154.55, "xiongjiedai-gpu-benchmarks",
                                   _LOCATOR),))
    assert _runs_moved(lock).endswith(
        f"(+6.183 %): xiongjiedai-gpu-benchmarks, {_LOCATOR} (its locator still quotes 145.55, not 154.55: does "
        "the place it names say 154.55?)")
    fixed = _LOCATOR.replace("145.55", "154.55")
    lock = attrs.evolve(lock, runs_moved=(("xd3.h100_pcie_80gb.8b-q4km.tg512", 145.55, 154.55,
                                           "xiongjiedai-gpu-benchmarks", fixed),))
    assert _runs_moved(lock).endswith(f"(+6.183 %): xiongjiedai-gpu-benchmarks, {fixed}")


def test_an_input_and_a_run_outside_a_fit_keep_their_quoted_figure() -> None:
    """Left47 item 4: a derivation input's locator was cut at 60 characters (`HBM Bandwidth table…`, the Dot row
    and its 4.48 lost), a run's outside its fit's span at the 160th character (`…|    154.` mid-figure)."""
    read = load_card(Root(REPO), "h200_sxm_141gb").facts()["streams.read"]
    assert isinstance(read.derivation, Derivation)
    dot = next(i for i in read.derivation.inputs if i.name == "dot")
    assert _input_cite(dot, read.source) == ("dot 4.48 TB/s: azure-ai-benchmarking-guide, "
                                             "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table… "
                                             "'| Dot   | 4.48              |'…")
    run = types.SimpleNamespace(tokens_per_s=145.55, source_id="xiongjiedai-gpu-benchmarks",
                                locator="A long notebook path, " * 4 + _LOCATOR)
    assert _run_cited(run) == ("; 145.55 tokens/s, cited to xiongjiedai-gpu-benchmarks: "  # type: ignore[arg-type]
                               + "A long notebook path, " * 4 + "LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: "
                               "llama-bench table, row " + _ROW)
