"""Slip round 36 (issue 13): changes that slipped past ``passprice diff`` (the review) and ``check``, each
reproduced in a registry of its own (this checkout's, committed on ``main`` of a git repository, changed on a branch
and reviewed as CI reviews it: ``passprice diff main HEAD``).

- (1) A new card copied from WS1 whose assumed ``memory.capacity`` 112 GB quotes a basis that agrees with itself
  (``7 HBM3E stacks x 16 GB``) while the design it cites says 6 stacks: nothing the registry recorded of the source
  names 7 HBM3E stacks, so it is asked.
- (2) ``4.8 tb/s``, ``4.8 T B/s`` and number words run together (``nine hundred nine hundred``, once read as
  90,909,090,900 TB/s) are read as a reviewer reads them or said plainly to be unreadable.
- (3) A published ratio inside a quoted range (0.87 under ``85-90%``) is not asked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gguf import GGUFValueType as V

from cli_helpers import REPO, copy_root, invoke
from gguf_bytes import Array, Meta, decode, encode
from passprice.addedfacts import _place, _plain, basis_terms, quotes_another, unreadable
from passprice.checkpoints import import_header, load_checkpoint
from passprice.facts import Provenance
from passprice.gguf_header import GGUFHeader, LongArray, read_header
from passprice.pins import checkpoint_digest
from passprice.registry import Root
from passprice.review.changes import _quoted_figures
from passprice.scopes import differences, in_scope
from test_diff import commit_all
from test_slip_34 import branch, fact, registry, renderings, review

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

WS1 = "facts/cards/ws1_hypothetical.toml"


def ws1_copy(path: Path, *edits: tuple[str, str]) -> None:
    """WS1's card copied to ``facts/cards/ws2_copy.toml``, each ``(old, new)`` of ``edits`` replaced once."""
    text = (path / WS1).read_text().replace('name = "WS1 (hypothetical weight-streaming card)"',
                                            'name = "WS2 (a copy)"')
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    (path / "facts" / "cards" / "ws2_copy.toml").write_text(text, encoding="utf-8")


def test_1_a_copied_estimate_whose_basis_the_source_does_not_name_is_asked(registry: Path) -> None:
    # Before: "N facts added in 1 new file", nothing to verify, exit 0 (7 x 16 GB is 112 GB: from_basis held).
    path = branch(registry, "seven-stacks")
    ws1_copy(path, ("[memory.capacity]\nvalue = 96", "[memory.capacity]\nvalue = 112"),
             ("(6 HBM3E stacks x 16 GB)", "(7 HBM3E stacks x 16 GB)"),
             ('note = "6 HBM3E stacks x 16 GB.', 'note = "7 HBM3E stacks x 16 GB.'))
    commit_all(path, "a WS1 copy with 7 stacks")
    status, text, out = review(path)
    assert status == 0, text
    assert out["to_verify"] == ["ws2_copy:memory.capacity"], text
    assert ("to verify: its basis names 7 HBM3E, which nothing the registry recorded of ws1-design before this "
            "change names (its record, the document facts/cards/ws1_hypothetical.toml and ") in text
    assert ("does ws1-design: design point: the [card] note and this fact's note (7 HBM3E stacks x 16 GB) give 112 "
            "GB, assumed?") in text
    # the copy unchanged asks nothing: each basis it names is the design's
    path = branch(registry, "ws1-copy")
    ws1_copy(path)
    commit_all(path, "a WS1 copy")
    status, text, out = review(path)
    assert status == 0 and out["to_verify"] == [], text


def test_1_basis_terms() -> None:
    assert set(basis_terms("design point (6 HBM3E stacks x 16 GB), page 2")) == {(6.0, "hbm3e"), (16.0, "gb")}
    assert set(basis_terms("0.96 x the BabelStream Mul share")) == set()


@pytest.mark.parametrize("written", ["4.8 T B/s", "4.8 T B/S", "four point eight T B/s"])
def test_2_a_prefix_set_apart_is_read(written: str) -> None:
    assert _plain(f"Bandwidth {written}").endswith("4.8 TB/s")
    assert quotes_another(fact(5.2, "TB/s", f"Bandwidth {written}")) == (
        f"its locator quotes 4.8 TB/s, not 5.2 TB/s: does s: Bandwidth {written} state 5.2 TB/s?")
    assert quotes_another(fact(4.8, "TB/s", f"Bandwidth {written}")) is None


@pytest.mark.parametrize("written", ["4.8 tb/s", "4.8 gb/s", "nine hundred nine hundred TB/s",
                                     "four point eight four point eight TB/s", "twenty twenty TB/s",
                                     "one thousand thousand GB/s"])
def test_2_what_cannot_be_read_is_said_so(written: str) -> None:
    # Before: "nine hundred nine hundred" read as 90900 (and longer runs as 90,909,090,900) TB/s; "4.8 tb/s" read
    # as nothing, 5.2 TB/s under it asked nothing.
    assert unreadable(f"Bandwidth {written}") == [written]
    assert quotes_another(fact(5.2, "TB/s", f"Bandwidth {written}")) == (
        f"its locator writes {written}, which passprice cannot read as one figure with its unit: does s: Bandwidth "
        f"{written} state 5.2 TB/s?")


@pytest.mark.parametrize(("words", "digits"), [("fifteen hundred GB/s", "1500 GB/s"),
                                               ("one thousand two hundred and five GB/s", "1205 GB/s"),
                                               ("twenty-one TB/s", "21 TB/s"), ("four point eight TB/s", "4.8 TB/s")])
def test_2_one_number_in_words_still_reads(words: str, digits: str) -> None:
    assert _plain(words) == digits and unreadable(words) == []


def test_2_words_that_are_no_figure_are_not_asked() -> None:
    assert unreadable("the one and two others") == []
    assert quotes_another(fact(5.2, "TB/s", "the one and two others, page nine")) is None


def test_3_a_published_ratio_inside_a_quoted_range_is_not_asked() -> None:
    assert quotes_another(fact(0.87, "1", "acceptance 85-90%"), _quoted_figures) is None
    assert quotes_another(fact(0.87, "1", "acceptance 85-90%", Provenance.ESTIMATED), _quoted_figures) is None
    assert quotes_another(fact(0.95, "1", "acceptance 85-90%"), _quoted_figures) == (
        "it is 0.95 but its locator quotes 85%, 90%: does s: acceptance 85-90% give 0.95?")


def _with_vocabulary(src: Path, out: Path, tokens: list[str], name: str | None = None) -> GGUFHeader:
    """``src``'s header written to ``out`` with ``tokenizer.ggml.tokens`` set to ``tokens`` (and ``general.name`` to
    ``name``); its header read back."""
    meta, tensors = decode(read_header(src))
    meta = [m for m in meta if m.key != "tokenizer.ggml.tokens" and not (name and m.key == "general.name")]
    meta.append(Meta("tokenizer.ggml.tokens", V.ARRAY, Array(V.STRING, tuple(tokens))))
    if name:
        meta.append(Meta("general.name", V.STRING, name))
    out.write_bytes(encode(meta, tensors))
    return read_header(out)


def test_4_a_copy_with_another_tokenizer_of_the_same_size_is_out_of_scope(tmp_path: Path) -> None:
    # Before: a copy re-tokenized with a vocabulary of the same size matched the routing record's scope (its
    # tokenizer.ggml.tokens compared as "string, 2,000 elements" alone), and was priced on Qwen3's routing.
    root = copy_root(tmp_path)
    synth = tmp_path / "synth.gguf"
    config = str(REPO / "examples" / "configs" / "qwen3-30b-a3b.json")
    assert invoke("synth", config, "--mix", "Q4_K_M", "-o", str(synth)).exit_code == 0
    ours = [f"tok{i}" for i in range(2000)]
    theirs = [f"tok{i}" for i in range(1999)] + ["other"]
    listed = _with_vocabulary(synth, tmp_path / "listed.gguf", ours)
    (root / "registry" / "checkpoints" / "qwen3-vocab.toml").write_text(import_header(listed, "qwen3-vocab", "test"))
    entry = load_checkpoint(Root(root), "qwen3-vocab")
    [kept] = [v for k, v in entry.metadata.items() if k == "tokenizer.ggml.tokens"]
    assert isinstance(kept, LongArray) and kept.length == 2000 and kept.sha256 is not None
    renamed = _with_vocabulary(synth, tmp_path / "renamed.gguf", ours, name="my own copy")
    retokenized = _with_vocabulary(synth, tmp_path / "retokenized.gguf", theirs)
    assert renamed.sha256 != listed.sha256 and retokenized.sha256 != listed.sha256
    assert in_scope(Root(root), ["qwen3-vocab"], str(tmp_path / "renamed.gguf"), renamed)
    assert not in_scope(Root(root), ["qwen3-vocab"], str(tmp_path / "retokenized.gguf"), retokenized)
    assert differences(Root(root), ["qwen3-vocab"], retokenized) == (
        " (its header is not qwen3-vocab's: 1 metadata key differs, first tokenizer.ggml.tokens (its elements))")
    # the lock's checkpoint content (what a lock pins) does not take the digest: no lock moves
    assert checkpoint_digest(listed) == checkpoint_digest(retokenized)
    # a price through the routing record scoped to the entry: the renamed copy priced, the re-tokenized refused
    routing = root / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    routing.write_text(routing.read_text().replace('checkpoints = ["qwen3-30b-a3b-q4_k_m"]',
                                                   'checkpoints = ["qwen3-vocab"]'))
    price = ("price", "--card", "h200_sxm_141gb", "--routing", "qwen3-30b-a3b-measured", "--checkpoint")
    assert invoke(*price, str(tmp_path / "renamed.gguf"), root=root).exit_code == 0
    refused = invoke(*price, str(tmp_path / "retokenized.gguf"), root=root)
    assert refused.exit_code == 1 and "OutOfScope" in refused.stderr, refused.output
    assert "first tokenizer.ggml.tokens (its elements)" in refused.stderr



def test_new_1_a_look_alike_letter_or_a_percent_in_words_is_read() -> None:
    # Attempt 1: a copy at 5.2 TB/s under 'GPU Memory Bandwidth 4.8ТB/s' (a Cyrillic Т) read no figure and cited
    # another place than the H200's: "17 facts added", nothing to verify, exit 0.
    cyrillic = "'GPU Memory Bandwidth 4.8\u0422B/s'"
    assert quotes_another(fact(5.2, "TB/s", cyrillic)) == (
        f"its locator quotes 4.8TB/s, not 5.2 TB/s: does s: {cyrillic} state 5.2 TB/s?")
    assert _place("s", cyrillic) == _place("s", "'GPU Memory Bandwidth 4.8TB/s'")
    # Attempt 16: a copied routing record's hot_share 0.8 under 'capture ninety percent of its routing mass'.
    assert quotes_another(fact(0.8, "1", "capture ninety percent of its routing mass"), _quoted_figures) == (
        "it is 0.8 but its locator quotes 90%: does s: capture ninety percent of its routing mass give 0.8?")
    assert quotes_another(fact(0.9, "1", "capture 90 per cent of its routing mass"), _quoted_figures) is None


def test_new_4_a_routing_records_scope_widened_is_to_verify(registry: Path) -> None:
    # Attempt 4: "no fact changed; no lock affected; 8 locks unaffected", nothing to verify, exit 0.
    path = branch(registry, "scope-widened")
    routing = path / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    routing.write_text(routing.read_text().replace('checkpoints = ["qwen3-30b-a3b-q4_k_m"]',
                                                   'checkpoints = ["qwen3-30b-a3b-q4_k_m", "deepseek-v3-q4_k_m"]'))
    commit_all(path, "the routing record for DeepSeek-V3 too")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    assert "no fact changed; 1 record applied to more checkpoints, to verify; no lock affected" in text
    assert ("  to verify: its checkpoints gain deepseek-v3-q4_k_m (was qwen3-30b-a3b-q4_k_m): were hot_experts, "
            "hot_share established for that model? does gpu-container-handbook-routing-derisk state them of it?"
            ) in text
    assert list(out["scopes_widened"]) == ["facts/routing/qwen3-30b-a3b-measured.toml"]
    assert markdown.startswith("⚠️") and "⚠️ **to verify**: its checkpoints gain deepseek-v3-q4_k_m (was" in markdown
    # Attempt 24: a drafting method's list removed (it applies to any checkpoint then)
    path = branch(registry, "scope-removed")
    draft = path / "facts" / "drafts" / "deepseek-v3-mtp.toml"
    draft.write_text(draft.read_text().replace('checkpoints = ["deepseek-v3-q4_k_m"]\n', ""))
    commit_all(path, "the method for any checkpoint")
    status, text, out = review(path)
    assert status == 0 and "its checkpoints list is gone: it now applies to any checkpoint" in text, text


def test_new_6_an_entry_edited_under_its_header_sha256_is_to_verify(registry: Path) -> None:
    # Attempt 6: one tensor of an entry no serving names Q8_0 -> Q4_0: "1 checkpoint entry changed", exit 0.
    path = branch(registry, "entry-edited")
    entry = path / "registry" / "checkpoints" / "codellama-7b-q8_0.toml"
    entry.write_text(entry.read_text().replace('type = "Q8_0"', 'type = "Q4_0"', 1))
    commit_all(path, "an entry edited")
    status, text, out = review(path)
    assert status == 0, text
    assert "1 checkpoint entry changed; 1 checkpoint entry edited under the same header sha256, to verify" in text
    assert ("  to verify: its content changed but the header sha256 it records did not: one file's header has one "
            "content; re-import the entry from its file") in text
    assert out["entries_edited"] == ["registry/checkpoints/codellama-7b-q8_0.toml"]


def test_new_27_a_copy_citing_a_design_record_it_adds_about_itself_is_asked(registry: Path) -> None:
    # Attempt 27: a WS1 copy at 112 GB under '7 HBM3E stacks x 16 GB' citing a new record ws2-design whose document is
    # the copy itself read "14 facts added in 1 new file; 1 source added", nothing to verify, exit 0.
    path = branch(registry, "self-cited")
    ws1_copy(path, ("[memory.capacity]\nvalue = 96", "[memory.capacity]\nvalue = 112"),
             ("(6 HBM3E stacks x 16 GB)", "(7 HBM3E stacks x 16 GB)"))
    copy = path / "facts" / "cards" / "ws2_copy.toml"
    copy.write_text(copy.read_text().replace('source = "ws1-design"', 'source = "ws2-design"'))
    record = (path / "sources" / "ws1-design.toml").read_text()
    (path / "sources" / "ws2-design.toml").write_text(
        record.replace("WS1, a hypothetical", "WS2, a hypothetical").replace("ws1_hypothetical.toml", "ws2_copy.toml"))
    commit_all(path, "a WS2 design citing itself")
    text = invoke("diff", "main", "HEAD", root=path)
    assert text.exit_code == 0, text.stdout
    # 11 since slip round 38: host.write 100 GB/s under '(full duplex with host.read)' names no figure, and the record
    # it cites is new, so no fact records that figure there before; 14 since left26b: each of the 14 cites ws2-design,
    # which the change adds, and an added fact is asked that as a changed one is ("records nothing independent")
    assert "14 facts added in 1 new file, 14 to verify in their sources; 1 source added" in text.stdout
    assert ("to verify: its basis names 7 HBM3E, 16 GB, which nothing the registry recorded of ws2-design before this "
            "change names (a record this change adds, naming facts/cards/ws2_copy.toml, which this change adds too)"
            ) in text.stdout
