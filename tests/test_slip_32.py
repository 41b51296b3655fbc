"""Slip round 32 (issue 13): facts and claims that slipped past the review (``passprice diff``), ``check`` and
``reproduce``, each reproduced in a registry of its own (this checkout's, committed on ``main`` of a git repository
for a review, changed on a branch and reviewed as CI reviews it: ``passprice diff main HEAD``).

- (1) A fact a change ADDS was never "to verify": a card copied with its ``streams.read`` raised 0.9333 → 0.9633
  under the H200's "Dot 4.48 TB/s" citation (its derivation left out), a copy whose derivation input ``dot`` was
  raised under the H200's input locator, a new fact in an existing card citing another fact's place with another
  figure, and a fact citing a source no record registers: each read "added", nothing to verify, exit 0.
- (2) A look-alike name (a card copied under a Cyrillic ``х``) was spelled in the review but not in ``check``'s or
  ``reproduce``'s lines (``card: h200_sxm_141gb → h200_sxm_141gb``).
- (3) Two card files carrying the H200's ``[card] name``: the renamed-card hint named the first in sort order only.
- (4) A dense checkpoint's measured run naming a routing record, in a stack nobody registered: ``validate`` and
  ``calibrate`` refused it as bad input, ``check`` said "all holds".
- (5) An added measurement file of 5 runs the card cannot hold repeated one 250-character refusal 5 times.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_card, copy_root, invoke
from test_diff import commit_all, git
from test_slip_34 import review  # one in-process review rendered as text and as JSON

H200 = "facts/cards/h200_sxm_141gb.toml"
# the row as a review shows it, each run of spaces as one (the card quotes it verbatim: cite67)
DOT = ("Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6), HBM Bandwidth table (BabelStream): "
       "row '| Dot | 4.48 |' in TB/s")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding this checkout's registry, committed on ``main``; each test branches from it."""
    path = tmp_path_factory.mktemp("slip32") / "registry"
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


#: The H200 card's 17 fact paths, sorted.
H200_FACTS = sorted(["memory.capacity", "memory.bandwidth", "on_chip.capacity", "on_chip.bandwidth", "streams.read",
                     "streams.rewrite", "streams.append", "array", "vector", "scale", "host.capacity", "host.read",
                     "host.write", "host.stream", "tensor.f16", "tensor.bf16", "tensor.f8"])


def h200_copy(path: Path, name: str, read: str, derivation: str | None) -> None:
    """The H200's card copied to ``facts/cards/NAME.toml`` under another ``[card] name``, its ``streams.read`` value
    set to ``read`` and its derivation replaced by ``derivation`` (``None``: left out)."""
    text = (path / H200).read_text()
    text = text.replace('name = "NVIDIA H200 SXM 141GB"', 'name = "NVIDIA H200 SXM 141GB, a copy"')
    block = re.search(r"\[streams\.read\]\n(.*?)\n\n", text, re.S)
    assert block is not None
    lines = [line for line in block.group(1).splitlines() if not line.startswith("derivation.")]
    lines = [f"value = {read}" if line.startswith("value = ") else line for line in lines]
    new = "\n".join(lines) + (f"\n{derivation}" if derivation else "")
    (path / "facts" / "cards" / f"{name}.toml").write_text(text.replace(block.group(1), new))


def test_1_a_copied_card_raising_a_fact_under_its_citation_is_to_verify(registry: Path) -> None:
    # Before: "17 facts added in 1 new file; no lock affected", nothing to verify, exit 0.
    path = branch(registry, "copy-raised")
    h200_copy(path, "h200_copy", "0.9633", None)
    commit_all(path, "a copied card")
    status, text, out = review(path)
    assert status == 0, text
    assert ("17 facts added in 1 new file, 16 to verify in their sources (16 copied citations: each cites what "
            "another card's fact cites)") in text, text.splitlines()[1]  # copied citations (tests/test_fix166.py)
    assert (f"to verify: {H200}: streams.read reads 0.9333 at the place facts/cards/h200_copy.toml: streams.read "
            f"cites as 0.9633: does azure-ai-benchmarking-guide: {DOT} state 0.9633?") in text
    assert "h200_copy:streams.read" in out["to_verify"]  # with the copy's copied citations (tests/test_fix166.py)
    markdown = invoke("diff", "main", "HEAD", "--format", "markdown", root=path).stdout
    assert markdown.startswith("⚠️") and "**to verify**: facts/cards/h200_sxm_141gb.toml: streams.read reads" in markdown


def test_1_a_copied_derivation_input_raised_under_its_locator_is_to_verify(registry: Path) -> None:
    # The copy keeps a derivation that follows (4.624 / 4.8 = 0.9633); check fails one source figure quoted with two
    # values already (exit 1, as before), and the added fact now says which to verify too.
    path = branch(registry, "copy-input-raised")
    locator = ("Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table (BabelStream): "
               "row '| Dot   | 4.48              |' in TB/s")
    shown = " ".join(locator.split())  # as a review shows it
    derivation = ('derivation.formula = "dot / bandwidth"\nderivation.digits = 4\n'
                  f'derivation.inputs.dot = {{ value = 4.624, unit = "TB/s", locator = "{locator}" }}\n'
                  'derivation.inputs.bandwidth = { fact = "memory.bandwidth", value = 4.8, unit = "TB/s" }')
    h200_copy(path, "h200_copy", "0.9633", derivation)
    commit_all(path, "a copied card, its input raised")
    status, text, out = review(path)
    assert status == 1 and "is quoted with 2 values: 4.624 TB/s in facts/cards/h200_copy.toml" in text, text
    # The B200's card borrows the H200's Dot figure under that locator too (its input h200_dot).
    assert ("input h200_dot reads 4.48 TB/s at the place facts/cards/h200_copy.toml: streams.read input dot cites as "
            f"4.624 TB/s (and 2 more): does azure-ai-benchmarking-guide: {shown} state 4.624 TB/s?") in text
    assert "h200_copy:streams.read" in out["to_verify"]  # with the copy's copied citations (tests/test_fix166.py)


def test_1_a_fact_added_to_a_card_under_another_facts_place_is_to_verify(registry: Path) -> None:
    path = branch(registry, "new-fact")
    card = path / "facts" / "cards" / "a100_sxm4_80gb.toml"
    # the place tensor.f16 cites (cite83: the Ampere whitepaper's Table 4 row, where it cited the A100 datasheet's
    # 'FP16 Tensor Core 312 TFLOPS | 624 TFLOPS'; that row's figures carry no unit, '312/6243', so the review no longer
    # says "its locator quotes 312 TFLOPS, 624 TFLOPS" here: test_hostile_38 checks that line)
    with card.open("rb") as f:
        locator = tomllib.load(f)["tensor"]["f16"]["locator"]
    assert locator.startswith("Table 4 (Comparison of NVIDIA Data Center GPUs), A100 column")
    card.write_text(card.read_text() + f'\n[tensor.f8]\nvalue = 160\nunit = "TMAC/s"\nprovenance = "published"\n'
                                       f'source = "nvidia-ampere-whitepaper"\nlocator = "{locator}"\n')
    commit_all(path, "a fact added")
    status, text, out = review(path)
    assert status == 0, text
    # the A100 cards' tensor.f16 read 156 TMAC/s at that place, not 160
    assert ("to verify: facts/cards/a100_pcie_80gb.toml: tensor.f16 reads 156 TMAC/s at the place "
            "facts/cards/a100_sxm4_80gb.toml: tensor.f8 cites as 160 TMAC/s (and 1 more): does "
            "nvidia-ampere-whitepaper: Table 4") in text
    assert out["to_verify"] == ["a100_sxm4_80gb:tensor.f8"]


def test_1_an_added_fact_citing_no_registered_source_is_to_verify(registry: Path) -> None:
    path = branch(registry, "unregistered")
    h200_copy(path, "h200_copy", "0.9333", None)
    card = path / "facts" / "cards" / "h200_copy.toml"
    card.write_text(card.read_text().replace('source = "nvidia-h200-product-page"\nlocator = "Specifications table, '
                                             "H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL "
                                             "figure): 'GPU Memory 141GB 141GB'\"",
                                             'source = "a-blog-post"\nlocator = "somewhere: 151 GB"', 1))
    commit_all(path, "a copy citing a source nobody registered")
    status, text, out = review(path)
    assert status == 1, text  # check fails the source with no record too
    assert ("to verify: its source 'a-blog-post' is not registered (no sources/a-blog-post.toml): its citation "
            "traces to nothing") in text
    # left30b: the copy cites a place of its own (the blog), so each other fact citing the H200's places is asked
    # too (was: memory.capacity alone); host.capacity, assumed, is not.
    assert sorted(out["to_verify"]) == [f"h200_copy:{p}" for p in H200_FACTS if p != "host.capacity"]
    assert ("to verify: facts/cards/h200_sxm_141gb.toml: memory.bandwidth cites the same place, another card's: does "
            "nvidia-h200-product-page: Specifications table, H200 SXM column (a row: its label, "
            "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s' "
            "state 4.8 TB/s of what facts/cards/h200_copy.toml describes?") in text


def test_1_copies_that_agree_with_what_they_cite_ask_only_their_copied_citations(registry: Path) -> None:
    # asked nothing before (slip round 32); a new user's plain copy of the H100 reversed it (tests/test_fix166.py)
    path = branch(registry, "plain-copies")
    for card in ("h200_sxm_141gb", "a100_sxm4_80gb", "rtx_4090", "mi300x", "sn40l"):
        copy_card(path / "facts" / "cards" / f"{card}.toml", path / "facts" / "cards" / f"{card}_copy.toml")
    commit_all(path, "five plain copies")
    status, text, out = review(path)
    assert status == 0, text
    asks = [line.strip() for line in text.splitlines() if line.strip().startswith("to verify:")]
    assert out["to_verify"] and len(asks) == len(out["to_verify"]), text
    assert all(ask.startswith("to verify: a copied citation: it cites what ") for ask in asks), asks


def _lookalike(root: Path) -> None:
    """The H200's card copied under ``h200_sхm_141gb`` (a Cyrillic ``х``) and r1-qwen7b-h200 pointed at it."""
    cards = root / "facts" / "cards"
    copy_card(cards / "h200_sxm_141gb.toml", cards / "h200_s\u0445m_141gb.toml")
    serving = root / "registry" / "servings" / "r1-qwen7b-h200.toml"
    serving.write_text(serving.read_text().replace('card = "h200_sxm_141gb"', 'card = "h200_s\u0445m_141gb"'))


def test_2_a_lookalike_card_is_spelled_in_check_and_reproduce(tmp_path: Path) -> None:
    # Before: "card: h200_sxm_141gb → h200_sxm_141gb", a change that prints as none, in both.
    root = copy_root(tmp_path)
    _lookalike(root)
    spelled = "card: h200_sxm_141gb → h200_s\u0445m_141gb (spelled 'h200_s\\u0445m_141gb')"
    check = invoke("check", root=root)
    assert check.exit_code == 1, check.output
    assert spelled in check.stdout
    again = invoke("reproduce", "r1-qwen7b-h200", root=root)
    assert again.exit_code == 0, again.output
    assert spelled in again.stdout


def test_2_a_lookalike_card_that_does_not_read_is_spelled_on_checks_stderr(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    (cards / "h200_s\u0445m_141gb.toml").write_text((cards / "h200_sxm_141gb.toml").read_text() + "bogus = 1\n")
    check = invoke("check", root=root)
    assert check.exit_code == 2, check.output
    assert ("passprice: error: facts/cards/h200_s\u0445m_141gb.toml: tensor.f8: unknown key 'bogus'; the keys here "
            "are derivation, locator, note, provenance, source, unit, value (spelled 'h200_s\\u0445m_141gb')"
            ) in check.stderr


def test_3_two_copies_of_a_shipped_card_are_both_named(tmp_path: Path) -> None:
    # Before: "…/h200.toml is 'NVIDIA H200 SXM 141GB' too …: rename it back …, or name the card h200 here", the
    # other copy (zh200.toml) unnamed.
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    shutil.copy(cards / "h200_sxm_141gb.toml", cards / "h200.toml")
    (cards / "h200_sxm_141gb.toml").rename(cards / "zh200.toml")
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 2, result.output
    assert ("facts/cards/h200.toml and facts/cards/zh200.toml are both 'NVIDIA H200 SXM 141GB', the card passprice "
            "ships as h200_sxm_141gb (renamed copies?): rename the one meant back to h200_sxm_141gb.toml and remove "
            "the others, or name the card h200 or zh200 here") in result.stderr


def _runs(root: Path, name: str, edit: dict[str, str], n: int) -> None:
    """``registry/measurements/NAME.toml``: the first run of the LMDeploy file ``n`` times, each field of ``edit``
    replaced (``old → new`` as whole lines), ids and tokens/s made distinct."""
    text = (root / "registry" / "measurements" / "lmdeploy-turbomind-a100.toml").read_text()
    head, first = text.split("\n[[run]]\n")[:2]
    for old, new in edit.items():
        first = first.replace(old, new)
    runs = [first.replace('id = "lmd1', f'id = "{name}{i}').replace("tokens_per_s = 100.02",
                                                                    f"tokens_per_s = {100 + i}") for i in range(n)]
    (root / "registry" / "measurements" / f"{name}.toml").write_text(head + "".join(f"\n[[run]]\n{r}" for r in runs))


def test_4_a_dense_run_naming_a_routing_record_fails_check_in_an_unregistered_stack(tmp_path: Path) -> None:
    # Before: check "all holds", exit 0, where validate and calibrate refuse the run as bad input.
    root = copy_root(tmp_path)
    _runs(root, "dense", {'stack = "lmdeploy-turbomind-2312"': 'stack = "nobody-registered"',
                          'checkpoint = "llama2-7b-f16"': 'checkpoint = "llama2-7b-f16"\nrouting = "uniform"'}, 1)
    said = ("registry/measurements/dense.toml: run.0.routing: checkpoint llama2-7b-f16 is dense (no expert_count): a "
            "routing record says how a mixture of experts' tokens route; remove `routing` from the run (or correct "
            "its checkpoint)")
    validate = invoke("validate", root=root)
    assert validate.exit_code == 2 and said in validate.stderr, validate.output
    check = invoke("check", root=root)
    assert check.exit_code == 2, check.output
    assert f"passprice: error: {said}" in check.stderr.splitlines()


def test_5_runs_refused_alike_are_one_entry_in_the_review(registry: Path) -> None:
    # Before: the NotResident refusal (≈ 250 characters) once for each of the 5 runs.
    path = branch(registry, "refused-alike")
    _runs(path, "nofit", {'stack = "lmdeploy-turbomind-2312"': 'stack = "other-stack"',
                          'card = "a100_sxm4_80gb"': 'card = "rtx_3080"'}, 5)
    commit_all(path, "five runs the card cannot hold")
    status, text, _ = review(path)
    assert status == 0, text
    line = next(x for x in text.splitlines() if "registry/measurements/nofit.toml" in x)
    ids = ", ".join(f"nofit{i}.a100_sxm4_80gb.l2-7b.b1.p1-o128 {100 + i} tokens/s" for i in range(5))
    assert f": 5 runs ({ids}), no limit: refused (NotResident): the card memory must hold" in line, line
    assert line.count("NotResident") == 1


LMDEPLOY = "registry/measurements/lmdeploy-turbomind-a100.toml"


def test_6_a_measured_runs_locator_rewritten_to_another_figure_is_to_verify(registry: Path) -> None:
    # New attempt (slip round 32): the run's locator made to quote 90.02 tokens/s, the run still 100.02 (the stack
    # lmdeploy-turbomind-2312 is fitted from it). Before: "1 other file changed", ✅, and check "all holds". The
    # context shows the row's runs of spaces as one (cite67: it read "…    | [100.02 → 90.02]                | 76.55
    # | …", mostly padding); the run's locator keeps the row verbatim.
    path = branch(registry, "run-recited")
    runs = path / LMDEPLOY
    runs.write_text(runs.read_text().replace("| 128           | 100.02 ", "| 128           | 90.02 ", 1))
    commit_all(path, "a run's locator rewritten")
    status, text, out = review(path)
    assert status == 0, text
    assert "1 other file changed; 1 measured run to verify in its source;" in text
    assert (f"{LMDEPLOY} (changed): 1 measured run to verify in its source: lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128 "
            "cited anew (locator …| 1 | 128 | [100.02 → 90.02] | 76.55 | 0.011 | …): does "
            "lmdeploy-a100-fp16-benchmark: docs/en/benchmark/a100_fp16.md") in text
    assert out["runs_to_verify"] == {LMDEPLOY: 1}
    markdown = invoke("diff", "main", "HEAD", "--format", "markdown", root=path).stdout
    assert markdown.startswith("⚠️"), markdown[:200]


def test_7_measured_runs_reattributed_to_another_source_are_to_verify(registry: Path) -> None:
    # New attempt: the file's [source] switched to another registered record (llama.cpp's threads) for its 17 runs.
    path = branch(registry, "runs-reattributed")
    runs = path / LMDEPLOY
    runs.write_text(runs.read_text().replace('source = "lmdeploy-a100-fp16-benchmark"', 'source = "ggml-org-llama-cpp"',
                                             1))
    commit_all(path, "runs re-attributed")
    status, text, out = review(path)
    assert status == 0, text
    assert "17 measured runs to verify in their sources" in text
    assert ("lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128 cited anew (source lmdeploy-a100-fp16-benchmark → "
            "ggml-org-llama-cpp): does ggml-org-llama-cpp: docs/en/benchmark/a100_fp16.md") in text
    assert "; and 12 more" in text
    assert out["runs_to_verify"] == {LMDEPLOY: 17}


def test_8_an_added_runs_lookalike_card_is_spelled_in_the_review(registry: Path) -> None:
    # New attempt: a run of an unregistered stack naming a copy of the H200's card under h200_sхm_141gb (Cyrillic х):
    # the card's own row was spelled, the measurement file's line named "card h200_sхm_141gb" as it prints.
    path = branch(registry, "run-lookalike")
    _lookalike(path)
    git(path, "checkout", "-q", "--", "registry/servings")
    _runs(path, "x", {'stack = "lmdeploy-turbomind-2312"': 'stack = "new-stack"',
                      'card = "a100_sxm4_80gb"': 'card = "h200_s\u0445m_141gb"'}, 1)
    commit_all(path, "a run on a look-alike card")
    status, text, _ = review(path)
    assert status == 0, text
    assert "card h200_s\u0445m_141gb (spelled 'h200_s\\u0445m_141gb'); checkpoint llama2-7b-f16" in text


def test_9_an_added_fact_whose_locator_quotes_another_figure_is_to_verify(registry: Path) -> None:
    # New attempt: the H200's card copied as an "H200 NVL" with memory.bandwidth 5.2 TB/s under a fresh locator
    # quoting 'GPU Memory Bandwidth 4.8TB/s' (no other fact cites that place), its shares recomputed: "17 facts
    # added", nothing to verify, exit 0.
    path = branch(registry, "quotes-another")
    text = (path / H200).read_text().replace('name = "NVIDIA H200 SXM 141GB"', 'name = "NVIDIA H200 NVL"')
    row = "H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s "
    text = text.replace(row + "4.8TB/s'", "H200 NVL column: 'GPU Memory Bandwidth 4.8TB/s'").replace(
        "[memory.bandwidth]\nvalue = 4.8", "[memory.bandwidth]\nvalue = 5.2")  # the page's row since cite102
    (path / "facts" / "cards" / "h200_nvl.toml").write_text(text)
    assert invoke("fact", "recompute", "h200_nvl", root=path).exit_code == 0
    commit_all(path, "an H200 NVL card")
    status, text, out = review(path)
    # its quote, found in the stored excerpt, states 4.8 TB/s: now a failure, as check's (tests/test_fix53w.py)
    assert status == 1, text
    assert "1 fact's quotes state another figure than its own" in text.splitlines()[1]
    assert ("to verify: its locator quotes 4.8TB/s, not 5.2 TB/s: does nvidia-h200-product-page: Specifications "
            "table, H200 NVL column: 'GPU Memory Bandwidth 4.8TB/s' state 5.2 TB/s?") in text
    # slip52: a copy re-citing a fact to a place of its own with another figure describes another card, so each fact
    # still citing the H200 SXM's places is asked too (all 17 but the assumed host.capacity).
    assert "h200_nvl:memory.bandwidth" in out["to_verify"] and len(out["to_verify"]) == 16
