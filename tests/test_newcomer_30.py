"""Newcomer walkthrough 30 (issue 13): a pull-request reviewer of a team's own registry, reading only README.md.

The colleague's pull request raised the H100's ``memory.bandwidth`` from a new source record with a derivation,
added a card for a hypothetical accelerator (copied from the H100's file), moved the Qwen3-30B-A3B routing record's
``hot_share`` 0.9 → 0.85 and re-locked. Then pull requests that try to slip something past the review. What the
review did not say, each reproduced first (before → after):

- (1) A checkpoint entry whose one tensor turned Q6_K → Q4_K, re-locked: the comment's *Checkpoints* line gave two
  content digests and nothing else, and the "edited under the same header sha256, to verify" of its summary had no
  ⚠️ line under it (only the text review said it). Now the line names what changed inside the entry and asks.
- (2) An added card: "17 facts added in 1 new file" — its title and its ``hypothetical = true`` mark were shown
  nowhere, and a card marked hypothetical whose facts are ``published`` and ``measured`` (the H100's, copied) asked
  nothing. Now the card is described (title, vendor, mark, its facts by provenance) and such a card is to verify.
- (3) A best lock whose best batch moved read ``❌ price moved, lock not updated (batch)``: from what to what unsaid.
  Now ``(batch 580 → 618)``.
- (4) The price the routing change moved, checked by hand from README's formulas.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import invoke
from passprice.review.changes import content_changes
from test_diff import commit_all
from test_slip_34 import branch, registry, review

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

GEMMA = "registry/checkpoints/gemma3-270m-q4_k_m.toml"
H100 = "facts/cards/h100_sxm5_80gb.toml"
H200 = "facts/cards/h200_sxm_141gb.toml"
ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"
FFN_DOWN = '{ name = "blk.0.ffn_down.weight", type = "Q6_K"'


def markdown(path: Path) -> tuple[int, str]:
    """``diff main HEAD --format markdown``: its exit status and its text."""
    out = invoke("diff", "main", "HEAD", "--format", "markdown", root=path)
    return out.exit_code, out.stdout


def test_1_an_edited_checkpoint_entry_says_what_changed_inside(registry: Path) -> None:
    # Before: "- `registry/checkpoints/gemma3-270m-q4_k_m.toml` (changed): content 4edde30b1f25… → ece2b13afd8a…"
    # alone, though the summary counted it to verify.
    path = branch(registry, "entry")
    entry = path / GEMMA
    text = entry.read_text(encoding="utf-8")
    assert text.count(FFN_DOWN) == 1
    entry.write_text(text.replace(FFN_DOWN, FFN_DOWN.replace("Q6_K", "Q4_K")), encoding="utf-8")
    lock = str(path / "locks" / "gemma3-270m-h100.lock.toml")  # -o is read from the working folder, not --root
    assert invoke("lock", "--update", "-o", lock, root=path).exit_code == 0
    commit_all(path, "one tensor Q6_K -> Q4_K, re-locked")
    code, md = markdown(path)
    assert code == 0, md
    assert md.splitlines()[0].startswith("⚠️ ")
    assert "1 checkpoint entry edited under the same header sha256, to verify; 1 lock affected, 1 re-locked" in md
    line = next(x for x in md.splitlines() if x.startswith(f"- `{GEMMA}` (changed)"))
    assert line == (
        f"- `{GEMMA}` (changed): content 4edde30b1f25… → ece2b13afd8a…; tensor blk.0.ffn_down.weight: type Q6_K → "
        "Q4_K — ⚠️ **to verify**: its content changed but the header sha256 it records did not: one file's header "
        "has one content; re-import the entry from its file (`passprice import`), or say which file holds this "
        "content")
    # the re-lock's row: 11,734.4 → 11,749.1 tokens/s (+0.1248 %), the changed input named (11,733.7 → 11,748.3
    # before session 39's window rule, window55: these figures hold once locks/gemma3-270m-h100 is re-locked)
    assert ("| `gemma3-270m-h100` | `checkpoint content` | held → still holds | 11,734.4 → 11,749.1 | 11,734.4 | "
            "11,749.1 | +0.1248 % | memory | re-locked |") in md
    code, text_review, out = review(path)
    assert code == 0
    assert "  content   4edde30b1f25… → ece2b13afd8a…\n  inside    tensor blk.0.ffn_down.weight: type Q6_K → Q4_K\n" \
        in text_review
    (changed,) = [f for f in out["files"] if f["path"] == GEMMA]
    assert changed["content_changes"] == ["tensor blk.0.ffn_down.weight: type Q6_K → Q4_K"]
    assert out["entries_edited"] == [GEMMA]


def test_1_content_changes_names_each_kind_of_change_and_counts_the_rest() -> None:
    old = {"metadata": {"general.name": ["STRING", "gemma"], "a.ctx": ["UINT32", 4096], "a.gone": ["UINT32", 1]},
           "tensors": [["x", 12, [640, 256]], ["y", 14, [2048, 640]], ["z", 0, [640]]]}
    new = {"metadata": {"general.name": ["STRING", "gemma"], "a.ctx": ["UINT64", 8192], "a.new": ["STRING", "s"]},
           "tensors": [["x", 12, [640, 512]], ["y", 12, [2048, 640]], ["w", 8, [32, 32]]]}
    assert content_changes(old, new) == (
        "tensor x: dims [640, 256] → [640, 512]",
        "tensor y: type Q6_K → Q4_K",
        "tensor w added (Q8_0 [32, 32])",
        "tensor z removed",
        "metadata a.ctx: 4096 → 8192 (type UINT32 → UINT64)",
        "and 2 more",  # a.gone removed, a.new added
    )
    swapped = {**old, "tensors": [old["tensors"][1], old["tensors"][0], old["tensors"][2]]}
    assert content_changes(old, swapped) == ("tensors reordered",)
    # a name that would rewrite a terminal is shown escaped, a long value cut
    hostile = {"metadata": {"k": ["STRING", "v" * 100]}, "tensors": [["a\x1b[2Jb", 0, [1]]]}
    plain = {"metadata": {"k": ["STRING", "v"]}, "tensors": [["a\x1b[2Jb", 1, [1]]]}
    assert content_changes(plain, hostile) == (
        "tensor 'a\\x1b[2Jb': type F16 → F32",
        'metadata k: "v" → "' + "v" * 58 + "…",
    )


def test_2_an_added_hypothetical_card_is_described_and_its_borrowed_facts_asked(registry: Path) -> None:
    # Before: "17 facts added in 1 new file; no lock affected", ✅, its title and mark nowhere.
    path = branch(registry, "acme")
    text = (path / H100).read_text(encoding="utf-8")
    assert text.count('name = "NVIDIA H100 SXM5 80GB"\n') == 1 and text.count('vendor = "NVIDIA"\n') == 1
    text = text.replace('name = "NVIDIA H100 SXM5 80GB"\n', 'name = "Acme X1"\n').replace(
        'vendor = "NVIDIA"\n', 'vendor = "Acme"\nhypothetical = true\n').replace(
        'note = "GH100 with 132 SMs', 'note = "Acme X1: GH100 with 132 SMs', 1)  # its own note: no copied-note warning
    (path / "facts" / "cards" / "acme_x1.toml").write_text(text, encoding="utf-8")
    commit_all(path, "a hypothetical card copied from the H100")
    code, md = markdown(path)
    assert code == 0, md
    assert md.splitlines()[0].startswith("⚠️ **passprice diff** `main (")
    assert md.splitlines()[0].endswith(
        "`: 17 facts added in 1 new file, 16 to verify in their sources (16 copied citations: each cites what another "
        "card's fact cites); 1 hypothetical card added with published or measured facts, to verify; no "
        "lock affected; 9 warnings of check on HEAD; 10 locks unaffected"), md.splitlines()[0]
    # 9 warnings of check on HEAD, as check prints them: the measured facts of the copy and of the card it copies
    # citing one place, and the retrieved "unknown" line (tests/test_fix154.py)
    asks = ("card acme_x1 is marked hypothetical, yet 6 of its facts are published or measured (memory.capacity, "
            "memory.bandwidth, streams.read, streams.rewrite, streams.append and 1 more): a card that does not exist "
            "has no datasheet or benchmark of its own; is each figure another card's, to be cited as estimated or "
            "assumed?")
    described = ("card Acme X1 (Acme; SXM5, 700 W, HBM3), marked hypothetical: 17 facts: 2 published, 4 measured, "
                 "9 derived, 1 estimated, 1 assumed")
    assert ("- `acme_x1` (added, `facts/cards/acme_x1.toml`): " + described
            + " — ⚠️ **to verify**: " + asks) in md.splitlines()
    code, text_review, out = review(path)
    assert code == 0
    assert f"facts/cards/acme_x1.toml (card acme_x1): added\n  {described}\n  to verify: {asks}\n" in text_review
    assert out["added_records"] == {"facts/cards/acme_x1.toml": described}
    assert out["hypothetical_claims"] == {"facts/cards/acme_x1.toml": asks}


def test_2_a_real_or_all_assumed_added_card_is_described_and_not_asked(registry: Path) -> None:
    path = branch(registry, "plain-cards")
    h100 = (path / H100).read_text(encoding="utf-8").replace(
        'name = "NVIDIA H100 SXM5 80GB"\n', 'name = "NVIDIA H100 SXM5 80GB, a copy"\n').replace(
        'note = "GH100 with 132 SMs', 'note = "A copy: GH100 with 132 SMs', 1)  # each card its own note (slip55 warns)
    (path / "facts" / "cards" / "h100_copy.toml").write_text(h100, encoding="utf-8")
    ws1 = (path / "facts" / "cards" / "ws1_hypothetical.toml").read_text(encoding="utf-8")
    assert ws1.count('name = "WS1 (hypothetical weight-streaming card)"\n') == 1
    ws2 = ws1.replace('name = "WS1 (hypothetical weight-streaming card)"\n', 'name = "WS2"\n').replace(
        'note = "A card design that does not exist', 'note = "WS2: a card design that does not exist', 1)
    (path / "facts" / "cards" / "ws2.toml").write_text(ws2, encoding="utf-8")
    commit_all(path, "two cards")
    code, _, out = review(path)
    assert code == 0
    assert out["hypothetical_claims"] == {}
    assert out["added_records"] == {
        "facts/cards/h100_copy.toml": "card NVIDIA H100 SXM5 80GB, a copy (NVIDIA; SXM5, 700 W, HBM3): 17 facts: "
                                      "2 published, 4 measured, 9 derived, 1 estimated, 1 assumed",
        "facts/cards/ws2.toml": "card WS2 (hypothetical; design point for passprice; not a product), marked "
                                "hypothetical: 14 facts: 14 assumed",
    }
    code, md = markdown(path)
    # ⚠️ for check's warnings alone (the copy's measured facts cite the H100's places: tests/test_fix154.py), no
    # hypothetical card asked
    # the copy's 16 facts not assumed cite the H100's places: copied citations, to verify (tests/test_fix166.py)
    assert md.splitlines()[0].endswith("`: 31 facts added in 2 new files, 16 to verify in their sources (16 copied "
                                       "citations: each cites what another card's fact cites); no lock affected; 9 "
                                       "warnings of check on HEAD; 10 locks unaffected"), md.splitlines()[0]
    assert md.splitlines()[0].startswith("⚠️ ") and "hypothetical card" not in md


def test_3_a_best_lock_whose_batch_moved_says_from_what_to_what(registry: Path) -> None:
    # Before: "❌ price moved, lock not updated (batch)".
    path = branch(registry, "capacity")
    card = path / H200
    text = card.read_text(encoding="utf-8")
    old = "[memory.capacity]\nvalue = 141\n"
    assert text.count(old) == 1
    card.write_text(text.replace(old, "[memory.capacity]\nvalue = 150\n"), encoding="utf-8")
    commit_all(path, "141 -> 150 GB, not re-locked")
    code, md = markdown(path)
    assert code == 1
    assert ("| `r1-qwen7b-h200-best` | `memory.capacity` | held → still holds | 33,339.2 | 33,339.2 | 33,454.6 | "
            "+0.346 % | memory | ❌ price moved, lock not updated (batch 580 → 618) |") in md
    # By hand (README, "Checking a price by hand"): at batch 618, 4,371,804,864 B of weights and embedding rows
    # (price --json's weight_bytes: the batch's embedding rows join the 4,370,560,992 B a batch of 1 reads) at
    # 4.8 TB/s × 0.9333 and 117,497,856 B a sequence at 4.8 TB/s × 0.8646: 975.88 µs + 618 × 28.312 µs = 18.473 ms,
    # and 618 / 18.473 ms = 33,454.6 tokens/s.
    priced = json.loads(invoke("best", "r1-qwen7b-h200", "--json", "--no-lock", root=path).stdout)
    assert (priced["batch"], priced["weight_bytes"], priced["sequence_bytes"]) == (618, 4_371_804_864, 117_497_856)
    weights, sequence = 4_371_804_864 / (4.8e12 * 0.9333), 117_497_856 / (4.8e12 * 0.8646)
    assert f"{weights * 1e6:.2f} µs + 618 × {sequence * 1e6:.3f} µs" == "975.88 µs + 618 × 28.312 µs"
    assert f"{618 / (weights + 618 * sequence):,.1f}" == "33,454.6"
    assert abs(priced["tokens_per_s"] - 618 / (weights + 618 * sequence)) < 1e-6


def test_4_the_routing_change_moves_the_locked_price_as_the_formulas_give(registry: Path) -> None:
    path = branch(registry, "routing")
    record = path / ROUTING
    text = record.read_text(encoding="utf-8")
    assert text.count("[hot_share]\nvalue = 0.9\n") == 1
    record.write_text(text.replace("[hot_share]\nvalue = 0.9\n", "[hot_share]\nvalue = 0.85\n"), encoding="utf-8")
    commit_all(path, "hot_share 0.85")
    code, md = markdown(path)
    assert code == 1
    assert ("| `qwen3-30b-a3b-h200` | `routing.hot_share (qwen3-30b-a3b-measured)` | held → still holds | 10,354.4 | "
            "10,354.4 | 9,847.7 | "
            "-4.894 % | memory | ❌ price moved, lock not updated (weight_bytes, the weights' bytes a pass "
            "reads) |") in md
    # By hand (README, Mixtures of experts): p_e = 8 × 0.85 / 58 = 0.11724 for each of the 58 hot experts and
    # 8 × 0.15 / 70 = 0.017143 for each of the other 70; 64 token-rows read D = 58 (1 − (1 − 0.11724)^64) +
    # 70 (1 − (1 − 0.017143)^64) = 57.980 + 46.854 = 104.83 experts a layer (94.44 at 0.9), so the weights read are
    # 822,597,632 B outside the experts + 104.83 / 128 × 17,553,162,240 B = 15.199 GB; the pass is 15.199 GB /
    # (4.8 TB/s × 0.9333) + 64 × 201,424,896 B / (4.8 TB/s × 0.8646) = 3.3927 ms + 3.1062 ms = 6.4990 ms, and
    # 64 / 6.4990 ms = 9,847.7 tokens/s (10,354.4 before: -4.894 %).
    distinct = 58 * (1 - (1 - 8 * 0.85 / 58) ** 64) + 70 * (1 - (1 - 8 * 0.15 / 70) ** 64)
    assert round(distinct, 2) == 104.83
    weights = 822_597_632 + distinct / 128 * 17_553_162_240
    pass_s = weights / (4.8e12 * 0.9333) + 64 * 201_424_896 / (4.8e12 * 0.8646)
    assert f"{64 / pass_s:,.1f}" == "9,847.7"
    # (5) the document the moved figure rests on, in the review itself (before: its source id alone)
    cited = ("gpu-container handbook: Routing De-risk (the gpu-container project (mcp-tool-shop-org, GitHub Pages), "
             "unknown), web-page, at https://mcp-tool-shop-org.github.io/gpu-container/handbook/derisk/; cited by "
             "routing qwen3-30b-a3b-measured hot_share")
    assert f"#### Sources\n\n- `gpu-container-handbook-routing-derisk` (cited): {cited}\n" in md
    _, text_review, out = review(path)
    assert out["cited_sources"] == {"gpu-container-handbook-routing-derisk": cited}
    assert f"sources the added and changed facts cite\n  gpu-container-handbook-routing-derisk: {cited}" in text_review
    priced = json.loads(invoke("price", "qwen3-30b-a3b-h200", "--json", "--no-lock", root=path).stdout)
    assert priced["routing"]["distinct"] == distinct or abs(priced["routing"]["distinct"] - distinct) < 1e-9
    assert abs(priced["tokens_per_s"] - 64 / pass_s) < 1e-6


def test_5_the_readme_shows_how_to_give_a_derivation_and_mark_a_card_hypothetical(tmp_path: Path) -> None:
    # `fact set --derivation` (the only way to write a derived fact from the command line) was in `--help` alone, and
    # "A card of your own" never named `hypothetical = true`.
    import shlex

    from cli_helpers import REPO, copy_root

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("`passprice fact set` writes one with `--derivation`")
    begin = readme.index("```sh\n", start) + 6
    block = readme[begin:readme.index("\n```", begin)]
    words = shlex.split(block.replace("\\\n", " "))
    assert words[:3] == ["passprice", "fact", "set"] and "--derivation" in words
    root = copy_root(tmp_path)
    done = invoke(*words[1:], root=root)
    assert done.exit_code == 0, done.output
    # walkthrough 39: an edit that keeps the figure says what it changed
    # left51: the note the README's command does not give reads "removed", as the review's change column says it
    assert done.stdout == ("facts/cards/h200_sxm_141gb.toml: streams.read: 0.9333 (measured) -> 0.9333 (measured) "
                           "(citation changed, note removed, derivation changed)\n")
    shown = invoke("fact", "show", "h200_sxm_141gb", "streams.read", root=root)
    assert ("derivation: dot / bandwidth, to 4 significant digits; dot = 4.48 TB/s (HBM Bandwidth table: Dot); "
            "bandwidth = the fact memory.bandwidth, 4.8 TB/s when derived") in shown.stdout, shown.stdout
    flat = " ".join(readme.split())
    assert "says `hypothetical = true` in its `[card]` table, as `ws1_hypothetical.toml` does" in flat


def test_6_the_best_lock_is_checked_by_hand_from_its_own_weight_bytes() -> None:
    # README's hand check used batch 1's 4,370,560,992 B; at the best lock's batch 580 that gives 33,339.7, not the
    # recorded 33,339.2: a batch's embedding rows join weight_bytes, which the README now says, with this sum.
    import tomllib

    from cli_helpers import REPO

    lock = tomllib.loads((REPO / "locks" / "r1-qwen7b-h200-best.lock.toml").read_text(encoding="utf-8"))
    price = lock["price"]
    assert (price["batch"], price["weight_bytes"], price["sequence_bytes"]) == (580, 4_371_728_256, 117_497_856)
    # 4,371,728,256 B / (4.8 TB/s × 0.9333) = 975.87 µs; 117,497,856 B / (4.8 TB/s × 0.8646) = 28.312 µs a sequence;
    # 975.87 µs + 580 × 28.312 µs = 17.397 ms; 580 / 17.397 ms = 33,339.2 tokens/s.
    weights, sequence = 4_371_728_256 / (4.8e12 * 0.9333), 117_497_856 / (4.8e12 * 0.8646)
    assert (round(weights * 1e6, 2), round(sequence * 1e6, 3), round((weights + 580 * sequence) * 1e3, 3)) == (
        975.87, 28.312, 17.397)
    assert 580 / (weights + 580 * sequence) == price["tokens_per_s"] == 33339.20102265113
    assert f"{580 / (4_370_560_992 / (4.8e12 * 0.9333) + 580 * sequence):,.1f}" == "33,339.7"  # batch 1's bytes
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("4,371,728,256 B / (4.8 TB/s × 0.9333) + 580 × 28.31 µs = 975.9 µs + 16.42 ms = 17.40 ms, and 580 / "
            "17.40 ms = 33,339.2 tokens/s") in readme


def test_7_a_page_or_table_number_is_no_figure_the_locator_quotes(registry: Path) -> None:
    from passprice.review.changes import _quoted_figures

    assert _quoted_figures("page 4, table 2: 700 GB/s a stack") == {700.0}
    assert _quoted_figures("Table 3, H100 SXM5 column: 132 SMs") == {132.0}
    assert _quoted_figures("Fig. 3 shows 4.8 TB/s; p. 12: 80 GB") == {4.8, 80.0}
    assert _quoted_figures("row 2: 58 of 128; stable 3") == {2.0, 58.0, 128.0, 3.0}  # other words: quoted as before
    # Before: the added card's bandwidth derivation asked "its input stacks is 5 but its locator quotes 2, 4: does
    # hbm3-stack-brief: page 4, table 2: five active stacks state 5?" — the page and the table, not figures.
    path = branch(registry, "pages")
    (path / "sources" / "hbm3-stack-brief.toml").write_text(
        '#:schema ../schema/source.schema.json\n[source]\ntitle = "HBM3 stack bandwidth brief"\nkind = "whitepaper"\n'
        'publisher = "Example Memory Co."\ndate = "2024-05"\nurl = "https://example.com/hbm3-brief.pdf"\n'
        'retrieved = "2026-12-04"\nread = "Read the PDF."\n', encoding="utf-8")
    text = (path / H100).read_text(encoding="utf-8").replace(
        'name = "NVIDIA H100 SXM5 80GB"\n', 'name = "Acme X1"\n')
    (path / "facts" / "cards" / "acme_x1.toml").write_text(text, encoding="utf-8")
    done = invoke(
        "fact", "set", "acme_x1", "memory.bandwidth", "--value", "3.5", "--unit", "TB/s", "--provenance", "derived",
        "--source", "hbm3-stack-brief", "--locator", "page 4, table 2: 700 GB/s a stack at 5.6 Gb/s",
        "--derivation", '{formula = "stacks * per_stack", inputs = {stacks = {value = 5, unit = "1", locator = '
        '"page 4, table 2: five active stacks"}, per_stack = {value = 0.7, unit = "TB/s", locator = "page 4, table '
        '2: 700 GB/s a stack"}}}', root=path)
    assert done.exit_code == 0, done.output
    assert invoke("fact", "recompute", "acme_x1", root=path).exit_code == 0
    commit_all(path, "a card whose bandwidth is derived from a brief")
    _, md = markdown(path)
    assert "(added) in `facts/cards/acme_x1.toml`" in md
    assert "but its locator quotes 2, 4" not in md
    lines = md.splitlines()
    at = lines.index("- `acme_x1` `memory.bandwidth` (added) in `facts/cards/acme_x1.toml`")
    # its input counts "five" in words: no digit quoted, nothing held against it (README: a count is held against
    # the bare numbers its locator quotes); a "Table 5: 7 stacks" would now be asked, 5 being the table's. Asked
    # only that its source is new (left26b: an added fact citing a source the same change adds is asked as a changed
    # one is; this walkthrough's bandwidth read nothing to verify of it before).
    assert lines[at + 1:at + 4] == ["  - **cite**: hbm3-stack-brief: page 4, table 2: 700 GB/s a stack at 5.6 Gb/s",
                                    "  - ⚠️ **to verify**: its source hbm3-stack-brief is added by this same change: "
                                    "the registry records nothing of it from before, so the change records nothing "
                                    "independent of itself for 3.5 TB/s: read the document itself",
                                    "- `acme_x1` `on_chip.capacity` (added) in `facts/cards/acme_x1.toml`"]
