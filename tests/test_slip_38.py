"""Slip round 38 (issue 13): changes that slipped past ``passprice diff`` (the review) and ``check``, each
reproduced in a registry of its own (this checkout's, committed on ``main`` of a git repository, changed on a branch
and reviewed as CI reviews it: ``passprice diff main HEAD``).

- (1) An added estimate whose locator and note name no figure at all (``design point: the designer's judgement``).
- (2) An added derived fact whose own locator quotes a figure neither it nor its derivation reads.
- (3) A figure moved under a source record the same change adds: it records nothing independent of the change.
- (4) A checkpoint entry's element digest (``tokenizer.ggml.tokens``' sha256) dropped, or its header sha256
  rewritten, the content unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import invoke
from passprice.addedfacts import derived_quotes_another, figureless, names_figure
from passprice.derivations import Derivation, Input
from passprice.facts import Fact, Provenance
from test_diff import commit_all
from test_slip_34 import H200, branch, registry, renderings, review
from test_slip_36 import WS1, ws1_copy

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

R1 = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
TOKENS = ('"tokenizer.ggml.tokens" = { type = "array[string]", length = 152064, sha256 = '
          '"726b84beee632b04e43d0467b7e8cdb9c70cf4124d408954583b1e53dff23032" }')

BANDWIDTH = ('''[memory.bandwidth]
value = 6
unit = "TB/s"
provenance = "assumed"
source = "ws1-design"
locator = "design point: the [card] note and this fact's note (6 stacks x about 1.0 TB/s)"
note = "6 stacks x 1,024 bits x ~7.8 Gb/s a pin = ~1.0 TB/s a stack. Between the H200's 4.8 TB/s (six HBM3e stacks) '''
             '''and the B200's 8 TB/s (eight)."''')


def test_1_an_added_estimate_whose_basis_names_no_figure_is_asked(registry: Path) -> None:
    # Before: "14 facts added in 1 new file", nothing to verify, exit 0.
    path = branch(registry, "no-figure")
    ws1_copy(path, (BANDWIDTH, '[memory.bandwidth]\nvalue = 9\nunit = "TB/s"\nprovenance = "estimated"\n'
                                'source = "ws1-design"\nlocator = "design point: the designer\'s judgement"\n'
                                'note = "Chosen so the card looks good."'))
    commit_all(path, "a WS1 copy at 9 TB/s on judgement")
    status, text, out = review(path)
    assert status == 0, text
    assert out["to_verify"] == ["ws2_copy:memory.bandwidth"], text
    assert ("to verify: it is 9 TB/s, estimated, but its basis names no figure (its locator and note quote no "
            "number): what gives 9 TB/s? does ws1-design: design point: the designer's judgement give it?") in text


def test_1_figureless() -> None:
    fact = Fact(9e12, 9.0, "TB/s", Provenance.ESTIMATED, source="s", locator="judgement, page 3", note="a guess")
    assert names_figure("page 3") is False and names_figure("about two stacks") is True
    assert figureless(fact, (), set()) is not None
    # a measured or published figure, or a basis naming a number, asks nothing of this kind
    assert figureless(Fact(9e12, 9.0, "TB/s", Provenance.PUBLISHED, source="s", locator="judgement"), (),
                      set()) is None
    assert figureless(Fact(9e12, 9.0, "TB/s", Provenance.ESTIMATED, source="s", locator="judgement",
                           note="1.5 x the old card"), (), set()) is None


def test_2_an_added_derived_fact_citing_another_figure_is_asked(registry: Path) -> None:
    # Before: "17 facts added in 1 new file", nothing to verify, exit 0: a derived fact's own locator was never read.
    path = branch(registry, "derived-locator")
    text = (path / H200).read_text().replace('name = "NVIDIA H200 SXM 141GB"', 'name = "NVIDIA H200 NVL, a copy"')
    old = "Technical Specifications table, H200 SXM column: 'INT8 Tensor Core 3,958 TOPS' (with sparsity)\"\nnote"
    assert old in text
    text = text.replace(old, "Technical Specifications table, H200 NVL column, page 2: 'INT8 Tensor Core 3,341 TOPS' "
                             "(with sparsity)\"\nnote")
    (path / "facts" / "cards" / "h200_nvl.toml").write_text(text, encoding="utf-8")
    commit_all(path, "an NVL copy citing the NVL column")
    status, text, out = review(path)
    # its other facts cite the H200's places as their own: copied citations (tests/test_fix166.py)
    assert status == 0 and "h200_nvl:array" in out["to_verify"], text
    assert ("to verify: its locator quotes 3,341 TOPS, neither its figure (989.5 TMAC/s) nor a figure its derivation "
            "(sparse / sparsity / ops_per_mac) reads: does nvidia-h200-datasheet: Technical Specifications table, "
            "H200 NVL column, page 2: 'INT8 Tensor Core 3,341 TOPS' (with sparsity) give it?") in text


def test_2_derived_quotes_another() -> None:
    derivation = Derivation("sparse / 2", (Input("sparse", 3958.0, "TOPS", locator="x"),))
    fact = Fact(1979e12, 1979.0, "TOPS", Provenance.DERIVED, source="s", locator="'INT8 3,958 TOPS'",
                derivation=derivation)
    assert derived_quotes_another(fact) is None
    moved = Fact(1979e12, 1979.0, "TOPS", Provenance.DERIVED, source="s", locator="'INT8 3,341 TOPS', 50 MB L2",
                 derivation=derivation)
    assert derived_quotes_another(moved) == (
        "its locator quotes 3,341 TOPS, neither its figure (1979 TOPS) nor a figure its derivation (sparse / 2) "
        "reads: does s: 'INT8 3,341 TOPS', 50 MB L2 give it?")


SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "H200 refresh datasheet"
kind = "datasheet"
publisher = "NVIDIA"
date = "2025"
url = "https://example.com/h200-refresh.pdf"
retrieved = "2025-01-01"
read = "Read in full."
"""


def test_3_a_figure_moved_under_a_source_the_change_adds_records_nothing(registry: Path) -> None:
    # Before: "the citation changed: does h200-refresh-note: … state 5.2 TB/s, published?", as if the record the
    # same commit adds were evidence the registry held.
    path = branch(registry, "fresh-source")
    (path / "sources" / "h200-refresh-note.toml").write_text(SOURCE, encoding="utf-8")
    card = path / H200
    old = ("value = 4.8\nunit = \"TB/s\"\nprovenance = \"published\"\nsource = \"nvidia-h200-product-page\"\n"
           "locator = \"Specifications table, H200 SXM column (a row: its label, "
           "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"")
    assert old in card.read_text()
    card.write_text(card.read_text().replace(old, "value = 5.2\nunit = \"TB/s\"\nprovenance = \"published\"\n"
                                                  "source = \"h200-refresh-note\"\n"
                                                  "locator = \"page 1: 'GPU Memory Bandwidth 5.2TB/s'\""))
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=path).exit_code == 0
    commit_all(path, "5.2 TB/s under a new source")
    status, text, out = review(path)
    assert status == 1, text  # the locks resting on it are not re-locked
    assert "h200_sxm_141gb:memory.bandwidth" in out["to_verify"]
    # its old quote was looked up in the product page's stored excerpt, the note's has none (tests/test_fix166.py)
    assert ("to verify: its quote can no longer be checked: h200-refresh-note has no stored text (its old citation's "
            "quotes were looked up in a stored excerpt): read the quoted words in the document itself; the citation "
            "changed: does h200-refresh-note: page 1: 'GPU Memory Bandwidth 5.2TB/s' state "
            "5.2 TB/s, published?; its source h200-refresh-note is added by this same change: the registry records "
            "nothing of it from before, so the change records nothing independent of itself for 5.2 TB/s: read the "
            "document itself") in text
    # a re-cite to a source the registry held already says nothing of the kind
    path = branch(registry, "old-source")
    card.write_text(card.read_text().replace(old, old.replace("value = 4.8", "value = 5.2")))
    commit_all(path, "5.2 TB/s under the old citation")
    status, text, out = review(path)
    assert "records nothing independent" not in text


def test_4_a_checkpoint_digest_dropped_or_rewritten_is_asked(registry: Path) -> None:
    # Before: "content unchanged (…: the entry was rewritten, what the pricer reads was not)", nothing to verify,
    # exit 0, while a re-tokenized copy then counted as the entry's model.
    path = branch(registry, "digest-dropped")
    entry = path / R1
    assert TOKENS in entry.read_text()
    entry.write_text(entry.read_text().replace(TOKENS, TOKENS.split(", sha256")[0] + " }"))
    commit_all(path, "drop the vocabulary's digest")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    assert "1 checkpoint entry with a header digest dropped or rewritten, to verify" in text
    assert out["digests_dropped"] == {R1: ["metadata.tokenizer.ggml.tokens.sha256 726b84beee63… → (none)"]}
    assert "to verify: metadata.tokenizer.ggml.tokens.sha256 726b84beee63… → (none): a digest that identifies" in text
    assert markdown.startswith("⚠️") and "⚠️ **to verify**: metadata.tokenizer.ggml.tokens.sha256" in markdown
    # the header sha256 rewritten, the content unchanged
    path = branch(registry, "digest-rewritten")
    old = 'sha256 = "d9383567865a226b4fbcaa0f954ce9ca608490e1a9ec51c3db2f5d092698e904"\nshards'
    assert old in entry.read_text()
    entry.write_text(entry.read_text().replace(old, f'sha256 = "{"ab" * 32}"\nshards'))
    commit_all(path, "another header's sha256")
    status, text, out = review(path)
    assert status == 0 and out["digests_dropped"] == {R1: ["header.sha256 d9383567865a… → abababababab…"]}, text


def test_6_a_new_record_named_like_another_is_asked_quoting_both_files(registry: Path) -> None:
    # Before: the copy read "facts/cards/h200_sхm_141gb.toml (card h200_sхm_141gb (spelled …)): added", nothing to
    # verify, exit 0: nothing said which registered card its name reads as.
    path = branch(registry, "look-alike")
    text = (path / H200).read_text().replace('name = "NVIDIA H200 SXM 141GB"', 'name = "NVIDIA H200 SXM 141GB, a copy"')
    (path / "facts" / "cards" / "h200_s\u0445m_141gb.toml").write_text(text, encoding="utf-8")
    commit_all(path, "a look-alike copy")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    assert "1 new record named like another, to verify" in text
    said = ("facts/cards/h200_s\u0445m_141gb.toml (spelled 'facts/cards/h200_s\\u0445m_141gb.toml') is a new card "
            "whose name reads as that of facts/cards/h200_sxm_141gb.toml (registered before this change): a reviewer "
            "sees one name for two records; is it a new record, or a copy standing in for the other? rename it so "
            "the names read apart")
    assert f"  to verify: {said}" in text
    assert out["lookalike_records"] == {"facts/cards/h200_s\u0445m_141gb.toml": said}
    assert markdown.startswith("⚠️") and "#### Records named like another" in markdown


def test_5_a_lock_held_by_a_look_alike_header_alone_is_asked(registry: Path) -> None:
    # Before: r1-qwen7b-h200 pointed at a new entry holding the locked entry's header under another name (what a
    # fine-tune of the same architecture and shapes imports as) read "records HEAD's price" for both locks, exit 0.
    path = branch(registry, "fine-tune")
    entry = (path / R1).read_text()
    assert 'name = "deepseek-r1-distill-qwen-7b-q4_k_m"' in entry
    (path / "registry" / "checkpoints" / "r1-qwen7b-finetune.toml").write_text(
        entry.replace('name = "deepseek-r1-distill-qwen-7b-q4_k_m"', 'name = "r1-qwen7b-finetune"'), encoding="utf-8")
    serving = path / "registry" / "servings" / "r1-qwen7b-h200.toml"
    serving.write_text(serving.read_text().replace('checkpoint = "deepseek-r1-distill-qwen-7b-q4_k_m"',
                                                   'checkpoint = "r1-qwen7b-finetune"'))
    commit_all(path, "serve a fine-tune with the same header")
    status, text, out = review(path)
    assert status == 0, text
    # the shipped stack lock prices the same serving: 3 locks (r1-qwen7b-h200, its -best and its -llamacpp)
    assert "3 locks held by a look-alike header alone, to verify" in text
    said = ("its serving now prices checkpoint r1-qwen7b-finetune, not deepseek-r1-distill-qwen-7b-q4_k_m, which the "
            "lock pinned: the lock holds only because their headers read alike (content 169f62b972aa…), as a "
            "fine-tune's header reads like its base model's: does r1-qwen7b-finetune hold "
            "deepseek-r1-distill-qwen-7b-q4_k_m's weights? if not, its routing, acceptance and measured figures are "
            "not the lock's; re-lock it (passprice lock --update -o locks/r1-qwen7b-h200.lock.toml) once shown")
    assert f"    to verify {said}" in text
    assert sorted(out["held_by_header"]) == ["r1-qwen7b-h200", "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp"]
    assert out["held_by_header"]["r1-qwen7b-h200"] == said
    # the serving on its own entry asks nothing of the kind
    path = branch(registry, "same-entry")
    serving.write_text(serving.read_text().replace("batch = 1", "batch = 1\n"))
    commit_all(path, "a blank line")
    status, text, out = review(path)
    assert out["held_by_header"] == {}, text


def test_new_b6_a_changed_estimate_re_cited_to_a_basis_naming_no_figure_is_asked(registry: Path) -> None:
    # Attempt B6: WS1's memory.bandwidth 6 → 9 TB/s, re-cited to "design point: the designer's judgement", its note
    # removed and its lock re-locked, read "1 fact changed", the fact itself nothing to verify, exit 0.
    path = branch(registry, "b6")
    card = path / WS1
    old = BANDWIDTH.split("note = ")[0]
    assert BANDWIDTH in card.read_text()
    card.write_text(card.read_text().replace(BANDWIDTH, old.replace("value = 6", "value = 9").replace(
        "design point: the [card] note and this fact's note (6 stacks x about 1.0 TB/s)",
        "design point: the designer's judgement").rstrip("\n")))
    assert invoke("fact", "recompute", "ws1_hypothetical", root=path).exit_code == 0
    lock = str(path / "locks" / "qwen35-27b-ws1-trailing.lock.toml")
    assert invoke("lock", "--update", "-o", lock, root=path).exit_code == 0
    commit_all(path, "WS1 at 9 TB/s on judgement, re-locked")
    status, text, out = review(path)
    assert status == 0, text
    assert "ws1_hypothetical:memory.bandwidth" in out["to_verify"], text
    assert ("to verify: the citation changed and its basis names no figure (its locator and note quote no number): "
            "what gives 9 TB/s? does ws1-design: design point: the designer's judgement give it, assumed?") in text


def test_new_b9_a_derivation_removed_is_asked(registry: Path) -> None:
    # Attempt B9: the H200's streams.read kept at 0.9333, measured, its derivation `dot / bandwidth` removed (a
    # later bandwidth change no longer leaves it stale) read "4 to re-pin", nothing to verify, exit 0.
    path = branch(registry, "b9")
    card = path / H200
    derivation = ('derivation.formula = "dot / bandwidth"\nderivation.digits = 4\nderivation.inputs.dot = { value = '
                  '4.48, unit = "TB/s", locator = "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table '
                  '(BabelStream): row \'| Dot   | 4.48              |\' in TB/s" }\nderivation.inputs.bandwidth = '
                  '{ fact = "memory.bandwidth", value = 4.8, '
                  'unit = "TB/s" }\n')
    assert derivation in card.read_text()
    card.write_text(card.read_text().replace(derivation, "", 1))
    commit_all(path, "streams.read without its derivation")
    status, text, out = review(path)
    assert status == 0, text
    assert out["to_verify"] == ["h200_sxm_141gb:streams.read"], text
    assert ("to verify: its derivation (dot / bandwidth) was removed: check no longer recomputes 0.9333 from its "
            "inputs; does azure-ai-benchmarking-guide: Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA "
            "12.6), HBM Bandwidth table (BabelStream): row '| Dot   | 4.48              |' in TB/s state it, "
            "measured?") in text


def test_new_b13_a_value_moved_under_a_locator_respaced_is_said_firmly(registry: Path) -> None:
    # Attempt B13: 4.8 → 5.2 TB/s with the locator given a second space read "the citation changed: does … state 5.2
    # TB/s?", as softly as a new place, though the place still quotes 4.8TB/s.
    path = branch(registry, "b13")
    card = path / H200
    old = "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\""  # the H200 product page's row since cite102
    assert old in card.read_text()
    card.write_text(card.read_text().replace("[memory.bandwidth]\nvalue = 4.8", "[memory.bandwidth]\nvalue = 5.2")
                    .replace(old, "'GPU Memory Bandwidth  4.8TB/s 4.8TB/s'\""))
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=path).exit_code == 0
    commit_all(path, "5.2 TB/s, the locator respaced")
    _, text, out = review(path)
    assert "h200_sxm_141gb:memory.bandwidth" in out["to_verify"]
    assert ("to verify: the value moved (4.8 TB/s → 5.2 TB/s) and the citation changed, but the locator still quotes "
            "4.8TB/s: does nvidia-h200-product-page: Specifications table, H200 SXM column (a row: its label, the "
            "H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth  4.8TB/s 4.8TB/s' state 5.2 TB/s, "
            "published?") in text


RUN = ('''tokens_per_s = 145.55
locator = "LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: llama-bench table, row '| llama 8B Q4_K - Medium         |'''
       '''   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 ± 0.80 |'"''')


def test_new_c15_a_run_re_cited_to_a_source_the_change_adds_records_nothing(registry: Path) -> None:
    # Attempt C15: a run of the stack's fit moved 145.55 → 165.55 tokens/s under a source record the same commit
    # adds, the stack re-fitted, read "cited anew: does my-bench: … state 165.55 tokens/s?", as if the record were
    # evidence the registry held.
    path = branch(registry, "c15")
    (path / "sources" / "my-bench.toml").write_text(SOURCE.replace('kind = "datasheet"', 'kind = "benchmark-results"'),
                                                    encoding="utf-8")
    runs = path / "registry" / "measurements" / "xiongjiedai-llama3-llamabench.toml"
    assert RUN in runs.read_text()
    runs.write_text(runs.read_text().replace(RUN, 'tokens_per_s = 165.55\nlocator = "my run: \'tg512 | 165.55 ± '
                                                  '0.80\'"\nsource = "my-bench"'))
    assert invoke("calibrate", "--stack", "llamacpp-cuda-2405", root=path).exit_code == 0
    commit_all(path, "a run of my own")
    status, text, _ = review(path)
    # the re-fit moves the shipped stack lock's expected price (237.4 → 240.6 tokens/s), not re-locked: exit 1
    assert status == 1, text
    assert ("  r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml, card h200_sxm_141gb, price): price "
            "moved, lock not updated (expected.memory_s)") in text.splitlines()
    assert "    expected  237.4 → 240.6  (+1.309 %) under stack llamacpp-cuda-2405, recorded 237.4" in text.splitlines()
    assert ("does my-bench: my run: 'tg512 | 165.55 ± 0.80' state 165.55 tokens/s?; its source my-bench is added by "
            "this same change: the registry records nothing of it from before, so the change records nothing "
            "independent of itself for 165.55 tokens/s: read the document itself") in text


def test_new_d6_a_routing_record_copied_for_another_checkpoint_is_asked(registry: Path) -> None:
    # Attempt D6: Qwen3-30B-A3B's measured routing record copied for deepseek-v3-q4_k_m, its Qwen3 figures and
    # citations kept, read "2 facts added in 1 new file", nothing to verify, exit 0 (a scope widened on a record
    # changed was asked, one copied to another checkpoint was not).
    path = branch(registry, "d6")
    record = (path / "facts" / "routing" / "qwen3-30b-a3b-measured.toml").read_text()
    assert 'checkpoints = ["qwen3-30b-a3b-q4_k_m"]' in record
    (path / "facts" / "routing" / "deepseek-v3-measured.toml").write_text(
        record.replace('checkpoints = ["qwen3-30b-a3b-q4_k_m"]', 'checkpoints = ["deepseek-v3-q4_k_m"]'),
        encoding="utf-8")
    commit_all(path, "Qwen3's routing for DeepSeek-V3")
    status, text, out = review(path)
    assert status == 0, text
    assert "2 routing facts added in 1 new file; 1 record applied to more checkpoints, to verify" in text
    said = ("it applies to deepseek-v3-q4_k_m, and hot_experts, hot_share cite the places "
            "facts/routing/qwen3-30b-a3b-measured.toml cites for qwen3-30b-a3b-q4_k_m: were they established for that "
            "model? does gpu-container-handbook-routing-derisk state them of it?")
    assert f"  to verify: {said}" in text
    assert out["scopes_widened"] == {"facts/routing/deepseek-v3-measured.toml": said}


def test_new_e1_a_card_no_longer_hypothetical_is_asked(registry: Path) -> None:
    # Attempt E1: WS1's `hypothetical = true` removed read "[card] changed: hypothetical", no lock affected, nothing
    # to verify, though its locked price then reads as a real card's.
    path = branch(registry, "e1")
    card = path / WS1
    assert "hypothetical = true\n" in card.read_text()
    card.write_text(card.read_text().replace("hypothetical = true\n", ""))
    commit_all(path, "WS1 is real now")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    said = ("card ws1_hypothetical is no longer marked hypothetical: its prices now read as a real card's, 14 of its "
            "facts estimated or assumed; is it a product, and does each figure now cite that product's documents?")
    assert "1 card no longer hypothetical, to verify" in text and f"  to verify: {said}" in text
    assert out["made_real"] == {WS1: said}
    assert f"⚠️ **to verify**: {said}" in markdown
