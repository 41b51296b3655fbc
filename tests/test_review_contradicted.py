"""A new user's review of two pull requests on an inherited registry (README only, ``pip install .``, an ``init
--examples`` registry in git): what the review let through, each reproduced here.

1. A provenance raised under the citation it had, while that citation calls the figure an assumption or an estimate
   (the uniform routing record made ``assumed`` → ``measured`` under its source ``uniform-routing-assumption``; the
   H200's ``scale`` ``estimated`` → ``measured`` under "assumed for the H200"), passed re-locked, exit 0, only asked.
   It fails the review now (``❌ contradicted``, exit 1).
2. A value moved under a locator stating the old figure and not the new one (routing ``hot_share`` 0.9 → 0.95 under
   "capture 90% of its routing mass") passed re-locked, exit 0, only asked, though its locked price moved +7.9 %.
   It fails the review now.
3. The text and markdown reviews never said that a locked price's weakest provenance moved (only ``--json`` did): a
   ``weakest`` line and cell say it when it moves.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
from passprice.facts import Fact
from passprice.review import FactChange, PriceSide
from passprice.unlocked import ServingMove

UNIFORM = "facts/routing/uniform.toml"
QWEN3 = "facts/routing/qwen3-30b-a3b-measured.toml"
H200 = "facts/cards/h200_sxm_141gb.toml"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry, its first commit (on main) the checkout's registry."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _fact(value: float, provenance: str, locator: str, source: str = "s", unit: str = "1") -> Fact:
    return Fact.from_entry({"value": value, "unit": unit, "provenance": provenance, "source": source,
                            "locator": locator}, "facts/routing/r.toml: hot_share")


# --- 1. a provenance raised under words calling the figure an assumption -------------------------------------------


def test_1_a_raise_under_a_source_named_an_assumption_is_contradicted() -> None:
    was = _fact(1.0, "assumed", "the one set takes every routed token-slot, evenly", "uniform-routing-assumption")
    now = _fact(1.0, "measured", "the one set takes every routed token-slot, evenly", "uniform-routing-assumption")
    change = FactChange("uniform", "hot_share", was, now)
    assert change.contradicted == (
        "the provenance was raised (assumed → measured) under the citation it had, and its source's id "
        "uniform-routing-assumption says 'assumption': cite the measured source that states 1, or keep assumed")


def test_1_a_raise_under_a_locator_saying_assumed_is_contradicted() -> None:
    locator = "Table 3, H100 SXM5 column: 16,896 FP32 cores (the H100's configuration, assumed for the H200)"
    change = FactChange("h200", "scale", _fact(33.5, "estimated", locator, "nvidia-hopper-whitepaper", "Tcycle/s"),
                        _fact(33.5, "measured", locator, "nvidia-hopper-whitepaper", "Tcycle/s"))
    assert change.contradicted == (
        "the provenance was raised (estimated → measured) under the citation it had, and its locator says 'assumed': "
        "cite the measured source that states 33.5 Tcycle/s, or keep estimated")


def test_1_a_raise_with_a_new_citation_or_under_plain_words_is_only_asked() -> None:
    """Re-cited, the new place may state the figure so (asked, as before); under words that call it nothing, the
    figure may have been labelled too low (asked, as before): neither is contradicted."""
    was = _fact(1.0, "assumed", "the one set", "uniform-routing-assumption")
    recited = FactChange("uniform", "hot_share", was, _fact(1.0, "measured", "Table 2: 100%", "our-routing-trace"))
    assert recited.contradicted is None
    plain = FactChange("r", "hot_share", _fact(1.0, "estimated", "the one set", "trace"),
                       _fact(1.0, "measured", "the one set", "trace"))
    assert plain.contradicted is None
    assert plain.to_verify is not None and plain.to_verify.startswith("the provenance is stronger (estimated → ")


def test_1_the_review_fails_the_routing_record_made_measured(repo: Path) -> None:
    path = repo / UNIFORM
    path.write_text(path.read_text(encoding="utf-8").replace('provenance = "assumed"', 'provenance = "measured"'),
                    encoding="utf-8")
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 1, review.output
    lines = review.stdout.splitlines()
    assert lines[0].startswith("❌ passprice diff: main")
    assert "2 facts contradicted by the citations they kept" in lines[1]
    assert ("               ❌ contradicted: the provenance was raised (assumed → measured) under the citation it "
            "had, and its source's id uniform-routing-assumption says 'assumption': cite the measured source that "
            "states 1, or keep assumed") in lines
    assert review.stderr == (
        "passprice: refused: 2 facts contradicted by the citations they kept (uniform:hot_experts, uniform:hot_share): "
        "a new figure or a stronger provenance needs a citation that states it so; cite it (source and locator), or "
        "keep what the citation states\n")
    # 3. the weakest provenance of the two locked MoE prices rose, said in the lock rows
    assert ("    weakest   assumed (routing.hot_experts, routing.hot_share) → estimated (scale) (stronger)"
            in lines)
    markdown = invoke("diff", "main", "--format", "markdown", root=repo)
    assert markdown.exit_code == 1
    assert ("held → still holds; weakest assumed (routing.hot_experts, routing.hot_share) → estimated (scale) "
            "(stronger)") in markdown.stdout
    assert "  - ❌ **contradicted**: the provenance was raised (assumed → measured)" in markdown.stdout


# --- 2. a value moved under a locator stating the old figure -------------------------------------------------------


def test_2_a_share_moved_under_its_percentage_is_contradicted() -> None:
    locator = "the definition of hot_frac_for_coverage: the fraction of a layer's experts that capture 90% of its"
    change = FactChange("qwen3", "hot_share", _fact(0.9, "measured", locator), _fact(0.95, "measured", locator))
    assert change.contradicted == (
        "the value moved (0.9 → 0.95) under the citation it had, whose locator quotes 90% (0.9), not 0.95: cite the "
        "place stating 0.95, or keep 0.9")
    # the ask is worded as before
    assert change.to_verify == (f"the value moved (0.9 → 0.95) but its citation did not, and the locator quotes 90% "
                                f"(0.9): s: {locator}")
    # a locator stating both (a range) is a figure moved within its citation: asked, not contradicted
    ranged = FactChange("q", "hot_share", _fact(0.9, "measured", "85-90%"), _fact(0.85, "measured", "85-90%"))
    assert ranged.contradicted is None


def test_2_a_bandwidth_moved_under_its_quoted_figure_is_contradicted() -> None:
    locator = "Specifications: 'GPU Memory Bandwidth 4.8TB/s'"
    change = FactChange("c", "memory.bandwidth", _fact(4.8, "published", locator, unit="TB/s"),
                        _fact(5.2, "published", locator, unit="TB/s"))
    assert change.contradicted == (
        "the value moved (4.8 TB/s → 5.2 TB/s) under the citation it had, whose locator quotes 4.8, not 5.2 TB/s: "
        "cite the place stating 5.2 TB/s, or keep 4.8 TB/s")


def test_2_the_review_fails_the_routing_share_moved_and_re_locked(repo: Path) -> None:
    path = repo / QWEN3
    text = path.read_text(encoding="utf-8")
    assert "[hot_share]\nvalue = 0.9\n" in text
    path.write_text(text.replace("[hot_share]\nvalue = 0.9\n", "[hot_share]\nvalue = 0.95\n"), encoding="utf-8")
    relock = invoke("lock", "--update", "-o", str(repo / "locks/qwen3-30b-a3b-h200.lock.toml"), root=repo)
    assert relock.exit_code == 0, relock.output
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 1, review.output
    assert "1 fact contradicted by the citation it kept" in review.stdout.splitlines()[1]
    assert review.stderr.startswith(
        "passprice: refused: 1 fact contradicted by the citation it kept (qwen3-30b-a3b-measured:hot_share): ")


def test_2_json_names_the_contradicted_fact(repo: Path) -> None:
    path = repo / QWEN3
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[hot_share]\nvalue = 0.9\n", "[hot_share]\nvalue = 0.95\n"), encoding="utf-8")
    import json

    review = invoke("diff", "main", "--format", "json", root=repo)
    assert review.exit_code == 1, review.output
    data = json.loads(review.stdout)
    assert data["contradicted"] == ["qwen3-30b-a3b-measured:hot_share"]
    facts = [c for f in data["files"] for c in f.get("facts", []) if c.get("contradicted")]
    assert [c["contradicted"] for c in facts] == [
        "the value moved (0.9 → 0.95) under the citation it had, whose locator quotes 90% (0.9), not 0.95: cite the "
        "place stating 0.95, or keep 0.9"]


# --- 4. a count of bytes moved reads as bytes -----------------------------------------------------------------------


def _priced(tokens: float, weight_bytes: float) -> PriceSide:
    return PriceSide(price={"tokens_per_s": tokens, "pass_s": 1 / tokens, "binds": "memory", "memory_s": 1 / tokens,
                            "weight_bytes": weight_bytes, "batch": 64})


def test_4_weight_bytes_moved_reads_in_gb() -> None:
    """A new user's routing change: `moved     weight_bytes 13774102215.410221 → 14557820484.09435 (+5.69 %)` beside
    lines saying 18.09 GB; 14557820484.09435 / 13774102215.410221 - 1 = 5.6897 % by hand."""
    move = ServingMove("qwen3-30b-a3b-h100", "h100_sxm5_80gb", _priced(10.0, 13774102215.410221),
                       _priced(9.5, 14557820484.09435))
    assert move.moved == "weight_bytes"
    assert move.moved_figure() == "weight_bytes 13.774 GB → 14.558 GB (+5.69 %)"
    # a move below five digits keeps the figures as --json holds them
    tiny = ServingMove("s", "c", _priced(10.0, 13774102215.0), _priced(9.99, 13774102216.0))
    assert tiny.moved_figure() == "weight_bytes 13774102215.0 → 13774102216.0 (+7.26e-09 %)"
