"""Left45 (four leftovers of walkthrough 55, issue 13: a review that points the reviewer at the right thing): a
re-fit moved by a card change is no hand edit, a fitted fact is checked by its fit, a re-cited figure's locator
quoting other digits in another unit is told in the fact's own, and a lock names the corrected run that moved it.
Each pinned on the library function that writes it (no git; the shipped registry read for its runs once)."""

from __future__ import annotations

import types

import attrs

from cli_helpers import REPO
from passprice.addedfacts import in_own_unit
from passprice.derivations import RunDerivation, RunInput
from passprice.facts import Fact
from passprice.registry import find_root
from passprice.review import FactChange, FileChange, LockImpact, PriceSide
from passprice.review.changes import refit_line, run_change
from passprice.review.impacts import _moved_runs
from passprice.review.rendering import _cites, _runs_moved
from passprice.review.runs import _moved_under_runs

_ERRORS = {"in_sample_mean": 0.0555, "card_out_mean": 0.069}
_CITE = "the 111 runs of stack llamacpp-cuda-2405 in registry/measurements/xiongjiedai-llama3-llamabench.toml"


def _fit(value: float, errors: dict[str, float], runs: tuple[tuple[str, float], ...]) -> Fact:
    fact = Fact.from_entry({"value": value, "unit": "us", "provenance": "derived",
                            "source": "passprice-stack-calibration", "locator": _CITE},
                           "facts/stacks/llamacpp-cuda-2405.toml: overhead.pass")
    derivation = RunDerivation(method="nnls-relative-pass-time", figure="tokens_per_s",
                               runs=tuple(RunInput(run, v) for run, v in runs), digits=4, tolerance=0.001,
                               errors=errors)
    return attrs.evolve(fact, derivation=derivation)


_RUNS = (("xd3.rtx_4090.8b-q4km.tg512", 130.58), ("xd3.h100_pcie_80gb.8b-q4km.tg512", 145.55))


def _card(value: float) -> Fact:
    return Fact.from_entry({"value": value, "unit": "GB/s", "provenance": "published",
                            "source": "nvidia-ada-whitepaper", "locator": "Appendix A: 'Memory Bandwidth 1008 GB/sec'"},
                           "facts/cards/rtx_4090.toml: memory.bandwidth")


def test_a_refit_of_the_same_runs_after_a_card_change_is_no_change_at_its_own_value() -> None:
    """The RTX 4090's bandwidth 1008 → 1010 GB/s and llamacpp-cuda-2405 re-fitted: overhead.pass read `0 µs → 0 µs
    (derivation changed)`, as a hand edit of its errors would (slip 48); a run of the fit is on that card."""
    moved = dict(_ERRORS, card_out_mean=0.0694)
    unmoved = FactChange("overhead.pass", "stack.overhead.pass", _fit(0, _ERRORS, _RUNS), _fit(0, moved, _RUNS))
    assert not unmoved.refit_unmoved  # alone, errors moved under the same runs: edited by hand, listed
    card = FileChange("facts/cards/rtx_4090.toml", "card", "rtx_4090", "changed",
                      facts=(FactChange("memory.bandwidth", "memory.bandwidth", _card(1008), _card(1010)),))
    stack = FileChange("facts/stacks/llamacpp-cuda-2405.toml", "stack", "llamacpp-cuda-2405", "changed",
                       facts=(unmoved,))
    head = types.SimpleNamespace(root=find_root(REPO))
    got = _moved_under_runs(head, (card, stack))  # type: ignore[arg-type]
    c = got[1].facts[0]
    assert c.moved_with == ("card rtx_4090 (memory.bandwidth)",)
    assert c.refit_unmoved and c.to_json()["moved_with"] == ["card rtx_4090 (memory.bandwidth)"]
    assert refit_line(got[1], ()) == (
        "1 more fact re-derived to the same value, provenance and citation (not listed as changed): overhead.pass; "
        "derivation: the same 2 measured runs (each run's tokens/s); no run added, removed or changed: re-fitted "
        "after this change moved what its runs are priced with, card rtx_4090 (memory.bandwidth) (not a hand edit: "
        "HEAD's passprice check re-fits it); the fit's |error| of tokens/s: card held out mean 6.9 % → 6.94 %")
    # a card none of the fit's runs is on explains nothing: still a hand edit
    other = attrs.evolve(card, path="facts/cards/a40.toml", name="a40")
    assert _moved_under_runs(head, (other, stack))[1].facts[0].moved_with == ()  # type: ignore[arg-type]
    # a method changed under the same runs is an edit whatever moved
    edited = attrs.evolve(c, new=attrs.evolve(c.new, derivation=attrs.evolve(c.new.derivation, tolerance=0.0005)))
    assert not edited.refit_unmoved


def test_a_refitted_facts_cite_sends_to_its_fit_and_the_lock_names_the_run_that_moved_it() -> None:
    """A corrected run (145.55 → 154.55) re-fitted the stack under a lock: its row read "value changed, citation
    unchanged: passprice-stack-calibration, …" of each fitted fact (a figure no source states) and named no run."""
    old, new = _fit(96.63, _ERRORS, _RUNS), _fit(95.65, _ERRORS, ((_RUNS[0]), (_RUNS[1][0], 154.55)))
    stack = FileChange("facts/stacks/llamacpp-cuda-2405.toml", "stack", "llamacpp-cuda-2405", "changed",
                       facts=(FactChange("overhead.layer", "stack.overhead.layer", old, new),))
    head = types.SimpleNamespace(root=types.SimpleNamespace(path=REPO / "tests", schema=None, sources=None))
    runs = _moved_runs(head, stack)  # type: ignore[arg-type]
    assert runs == (("xd3.h100_pcie_80gb.8b-q4km.tg512", 145.55, 154.55, "", ""),)  # no measurements: no citation
    cites = (("stack.overhead.layer", "passprice-stack-calibration", _CITE, False, None, True, None, (0.0,)),
             ("stack.share.read", "passprice-stack-calibration", _CITE, False, None, True, None, (0.0,)))
    side = PriceSide()
    lock = LockImpact("r1-qwen7b-h200-llamacpp", "locks/r1-qwen7b-h200-llamacpp.lock.toml", "h200_sxm_141gb",
                      "price", "r1-qwen7b-h200", "unchanged", ("stack.overhead.layer", "stack.share.read"), side, side,
                      None, None, cites=cites, fitted=("stack.overhead.layer", "stack.share.read"),
                      runs_moved=(("xd3.h100_pcie_80gb.8b-q4km.tg512", 145.55, 154.55, "xiongjiedai-gpu-benchmarks",
                                   "H100_PCIe_v3.ipynb: tg512 | 154.55 ± 0.80"),))
    assert _cites(lock) == (
        "stack.overhead.layer, stack.share.read: re-fitted under the citation they kept (passprice-stack-calibration, "
        "the 111 runs of stack llamacpp-cuda-2405 in registry/measurements/xiongjiedai-llama3-llamabench.toml), which "
        "states no figure of a fit: check the fit, its runs and errors, under the stack's file")
    assert "value changed, citation unchanged" in _cites(attrs.evolve(lock, fitted=()))  # a cited figure: as before
    # 9 / 145.55 = +6.183 %
    assert _runs_moved(lock) == (
        "its stack re-fitted from 1 run changed (the figures to check in their sources): "
        "xd3.h100_pcie_80gb.8b-q4km.tg512 145.55 → 154.55 tokens/s (+6.183 %): xiongjiedai-gpu-benchmarks, "
        "H100_PCIe_v3.ipynb: tg512 | 154.55 ± 0.80")
    said = lock.to_json()
    assert said["runs_moved"][0]["after"] == 154.55 and [c["fitted"] for c in said["cites"]] == [True, True]
    assert run_change(old.derivation, new.derivation) is not None


def _bandwidth(locator: str) -> Fact:
    return Fact.from_entry({"value": 3.35, "unit": "TB/s", "provenance": "published", "source": "nvidia-h100-datasheet",
                            "locator": locator}, "facts/cards/h100_sxm5_80gb.toml: memory.bandwidth")


def test_a_figure_re_cited_to_other_digits_in_another_unit_is_told_in_its_own() -> None:
    """The H100 SXM's bandwidth kept at 3.35 TB/s, re-cited to a locator quoting 3352 GB/s: it was asked only
    "does … state 3.35 TB/s?" (3352 GB/s is 3.352 TB/s, by hand: 3352 / 1000)."""
    locator = "Technical Specifications table, H100 SXM column: 'GPU Memory Bandwidth 3352 GB/s'"
    change = FactChange("memory.bandwidth", "memory.bandwidth", _bandwidth("'GPU Memory Bandwidth 3.35TB/s'"),
                        _bandwidth(locator))
    assert change.to_verify == ("the citation changed and its locator quotes 3352 GB/s (3.352 TB/s), not 3.35 TB/s: "
                                f"does nvidia-h100-datasheet: {locator} state 3.35 TB/s, published?")
    assert in_own_unit(3.35, "TB/s", "3350 GB/s") == []  # its own figure in another unit
    assert in_own_unit(3.35, "TB/s", "Memory 3.352TB/s") == ["3.352TB/s"]  # in its own unit already
    assert in_own_unit(494.5, "TMAC/s", "FP8 1,979 TFLOPS") == ["1,979 TFLOPS (989.5 TMAC/s)"]  # two FLOP a MAC
    assert in_own_unit(80, "GiB", "96 GB") == ["96 GB (89.407 GiB)"]  # 96e9 / 2^30


def test_left46_a_runs_line_keeps_the_quote_holding_the_runs_figure_whole() -> None:
    """Left46: the corrected run's locator (185 characters) was cut at a word at 100, `…row '| llama 8B Q4_K - Medium…`,
    before the `154.55 ± 0.80` the reviewer checks; the quote is kept whole now, and the notebook naming where to
    search it (71 characters) too, so this locator is not shortened at all."""
    from passprice.textchange import cut_keeping_figure

    row = ("'| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    "
           "154.55 ± 0.80 |'")
    locator = f"LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: llama-bench table, row {row}"
    side = PriceSide()
    lock = LockImpact("r1-qwen7b-h200-llamacpp", "locks/r1-qwen7b-h200-llamacpp.lock.toml", "h200_sxm_141gb",
                      "price", "r1-qwen7b-h200", "unchanged", ("stack.overhead.layer",), side, side, None, None,
                      runs_moved=(("xd3.h100_pcie_80gb.8b-q4km.tg512", 145.55, 154.55, "xiongjiedai-gpu-benchmarks",
                                   locator),))
    assert _runs_moved(lock).endswith(f"(+6.183 %): xiongjiedai-gpu-benchmarks, {locator}")
    # a long text before the quote is cut at a word, the quote kept, the text after it said by "…"
    long = "x " * 60 + "row '154.55 ± 0.8' then more"
    assert cut_keeping_figure(long, 100, 154.55) == "x " * 49 + "x… '154.55 ± 0.8'…"
    # a figure quoted nowhere (or not this figure): cut at a word as before
    assert cut_keeping_figure(locator, 100, 145.55) == ("LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: llama-bench "
                                                         "table, row '| llama 8B Q4_K - Medium…")
    assert cut_keeping_figure("row '1,979 TFLOPS' " + "y" * 90, 20, 1979) == "row '1,979 TFLOPS'…"


def test_left46_a_derived_value_moved_under_its_kept_derivation_cites_its_inputs() -> None:
    """Left46: the H200's streams.read 0.9333 → 0.9162 under the derivation and citation it kept read "value changed,
    citation unchanged: azure-ai-benchmarking-guide, …" (a share no source states); it reads as a recomputed one does
    (left43): its formula and its inputs' values and citations, one entry, no "value changed"."""
    from passprice.cards import load_card
    from passprice.derivations import Derivation
    from passprice.registry import Root
    from passprice.review.impacts import _lock_cite

    old = load_card(Root(REPO), "h200_sxm_141gb").facts()["streams.read"]
    assert isinstance(old.derivation, Derivation)
    cite = _lock_cite("streams.read", old, attrs.evolve(old, value=0.9162, amount=0.9162))
    # left47: 4.48 / 4.8 = 0.93333 gives 0.9333 to its 4 digits, not the 0.9162 written by hand
    assert cite is not None and cite[3:] == (False, old.derivation, True, "0.9333", ())
    said = _cites(types.SimpleNamespace(cites=(cite,), fitted=(), routing_record=None))  # type: ignore[arg-type]
    assert said == ("streams.read = dot / bandwidth [dot 4.48 TB/s: azure-ai-benchmarking-guide, "
                    "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table… '| Dot   | 4.48              |'…; "
                    "bandwidth 4.8 TB/s: fact memory.bandwidth] (its inputs give 0.9333: the value written does not "
                    "follow from them)")
    assert _lock_cite("streams.read", old, attrs.evolve(old, note="re-worded")) is None  # nothing moved: no entry
