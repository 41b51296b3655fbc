"""Findings of the 41st README-only walkthrough (a team registry's maintainer reviewing contributors' fact changes
in pull requests): a fact weakened below a lock's floor read ``⚠️ pins memory.capacity as before the change: re-pin
(passprice lock --update …)`` in the lock's review cell, a command that refuses such a lock, beside the broken
floor the verdict failed; a lock file edited by hand was said not to read, with nothing of what the edit changed (a
recorded price forged 5,166.6 → 5,500 tokens/s, or a floor loosened published → assumed, was seen only in the
file's own diff)."""

from __future__ import annotations

import pytest

from passprice.comment import comment_body
from passprice.registry import Root
from passprice.review import diff, diff_text
from passprice.review.impacts import MAX_HAND_EDITS, edited_recorded, hand_edits
from test_diff import LOCK, LOCK_FILE, Repo, commit_all, edit_fact, git, make_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("walk41") / "registry")


def _row(body: str, name: str) -> str:
    return next(line for line in body.splitlines() if line.startswith(f"| `{name}` |"))


def test_a_broken_floor_is_not_told_to_re_pin(repo: Repo) -> None:
    # memory.capacity weakened at the same figure: the lock's floor (published) breaks, and the lock pins the fact
    # as it was (a drift) — the row said "⚠️ … re-pin (passprice lock --update …)", which refuses that lock.
    git(repo.path, "checkout", "-q", "-B", "capacity-estimated", "main")
    edit_fact(repo.path, "memory.capacity", value=141, unit="GB", provenance="estimated",
              source="nvidia-h200-product-page",
              locator=("Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL "
                       "figure): 'GPU Memory 141GB 141GB'"))
    commit_all(repo.path, "capacity estimated")
    d = diff(Root(repo.path), "main", "HEAD")
    lock = {x.name: x for x in d.locks}[LOCK]
    assert lock.breaks and "memory.capacity" in lock.drifted
    command = (f"`passprice lock --update -o {LOCK_FILE} --force --require memory.capacity=estimated`")
    assert lock.review() == (
        "breaks its floors (memory.capacity below its floor): restore the fact, or re-lock with that floor "
        f"loosened, {command}"
    )
    row = _row(comment_body(d), LOCK)
    assert row.endswith(f"| ❌ breaks its floors (memory.capacity below its floor): restore the fact, or re-lock "
                        f"with that floor loosened, {command} |")
    assert "re-pin" not in row and "⚠️" not in row
    assert d.exit_status == 1


def test_a_lock_edited_by_hand_says_what_the_edit_changed(repo: Repo) -> None:
    git(repo.path, "checkout", "-q", "-B", "forged-price", "main")
    lock_file = repo.path / LOCK_FILE
    text = lock_file.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("tokens_per_s = "))
    recorded = line.split(" = ")[1]
    lock_file.write_text(text.replace(line, "tokens_per_s = 5500.0"), encoding="utf-8")
    commit_all(repo.path, "forge the recorded price")
    d = diff(Root(repo.path), "main", "HEAD")
    lock = {x.name: x for x in d.locks}[LOCK]
    assert lock.head_unread
    assert lock.hand_edits == (f"price.tokens_per_s: {recorded} → 5500.0",)
    assert d.exit_status == 2
    assert f"    edited    price.tokens_per_s: {recorded} → 5500.0" in diff_text(d).splitlines()
    assert (f"then re-lock it with `passprice lock --update -o {LOCK_FILE}`; the edit changed price.tokens_per_s: "
            f"{recorded} → 5500.0") in comment_body(d)
    locks = {x["name"]: x for x in d.to_json()["locks"]}
    assert locks[LOCK]["hand_edits"] == [f"price.tokens_per_s: {recorded} → 5500.0"]
    # issue 13: the recorded column showed BASE's 5,166.6 alone, the forged 5,500 only on the edited line
    assert lock.recorded_edited == 5500.0 and locks[LOCK]["recorded_edited"] == 5500.0
    assert f"    recorded  {float(recorded):,.1f} → 5,500.0 (edited by hand)" in diff_text(d).splitlines()
    assert f"| {float(recorded):,.1f} → 5,500.0 (edited by hand) |" in _row(comment_body(d), LOCK)


def test_hand_edits_key_by_key() -> None:
    base = b'[policy.paths]\n"memory.capacity" = "published"\nscale = "estimated"\n[price]\nbatch = 8\n'
    head = b'[policy.paths]\n"memory.capacity" = "assumed"\n[price]\nbatch = 8\nbest = true\n'
    assert hand_edits(base, head) == (
        "policy.paths.memory.capacity: published → assumed",
        "price.best: – → true",
        "policy.paths.scale: estimated → –",
    )
    # a comment or layout edit alone changes no key; a side missing or not TOML names none
    assert hand_edits(base, b"# a comment\n" + base) == ()
    assert hand_edits(base, b"[policy") == ()
    assert hand_edits(None, head) == ()
    many = b"".join(f"k{i} = {i}\n".encode() for i in range(MAX_HAND_EDITS + 3))
    out = hand_edits(b"", many)
    assert len(out) == MAX_HAND_EDITS + 1 and out[0] == "k0: – → 0" and out[-1] == "and 3 more keys"
    assert hand_edits(b'a = "x"\n', b'a = "' + b"y" * 80 + b'"\n') == ("a: x → " + "y" * 59 + "…",)


def test_edited_recorded_reads_heads_figure_or_none() -> None:
    assert edited_recorded(b"[price]\ntokens_per_s = 5500.0\n") == 5500.0
    assert edited_recorded(b"[price]\ntokens_per_s = 5500\n") == 5500.0
    for bad in (None, b"[price", b"[price]\ntokens_per_s = nan\n", b"[price]\ntokens_per_s = true\n",
                b"price = 3\n", b"\xff"):
        assert edited_recorded(bad) is None


CITING = 8  # the page's 8 facts (the datasheet's 12 until cite102)


def test_a_source_whose_document_changed_lists_each_figure_to_find_there(repo: Repo) -> None:
    # The datasheet's address rewritten: the review named the 12 citing facts, the last 6 as "and 6 more", with no
    # figure or place, so the new document could not be checked from the comment alone. (Since cite102 the H200's
    # memory facts cite its product page, tests/test_cite102.py: its address is the one rewritten.)
    git(repo.path, "checkout", "-q", "-B", "datasheet-moved", "main")
    record = repo.path / "sources" / "nvidia-h200-product-page.toml"
    text = record.read_text(encoding="utf-8")
    old = "https://www.nvidia.com/en-us/data-center/h200/"
    record.write_text(text.replace(old, "https://example.com/h200-v2/"), encoding="utf-8")
    commit_all(repo.path, "the page's new address")
    d = diff(Root(repo.path), "main", "HEAD")
    (change,) = d.sources
    assert len(change.citing) == CITING and f"and {CITING - 6} more, which cite it" in change.to_verify
    column = "Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL figure):"
    assert change.places[:3] == (
        f"h200_sxm_141gb:memory.capacity: 141 GB (published) at {column} 'GPU Memory 141GB 141GB'",
        f"h200_sxm_141gb:memory.bandwidth: 4.8 TB/s (published) at {column} 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'",
        # a fact derived from a figure read there, by that figure (its own 33.5 TMAC/s is no figure of the page)
        f"h200_sxm_141gb:vector: figure fp32 67 TFLOPS at {column} 'FP32 67 TFLOPS 60 TFLOPS'",
    )
    assert len(change.places) == len(change.citing)  # one figure each: every citing fact traced
    body = comment_body(d).splitlines()
    at = next(i for i, line in enumerate(body) if line.startswith("- ⚠️ `nvidia-h200-product-page` **to verify**"))
    capacity = f"h200_sxm_141gb:memory.capacity: 141 GB (published) at {column} 'GPU Memory 141GB 141GB'"
    assert body[at + 1] == f"  - {capacity}"
    assert all(line.startswith("  - h200_sxm_141gb:") for line in body[at + 1:at + 1 + CITING])
    assert f"    {capacity}" in diff_text(d)
    assert d.to_json()["sources_changed"][0]["places"] == list(change.places)
    assert d.exit_status == 0

def test_cited_places_are_bounded() -> None:
    from passprice.facts import Fact, Provenance
    from passprice.lineage import Citing, FactRef
    from passprice.sourcechange import PLACES, cited_places

    fact = Fact(value=1e9, amount=1, unit="GB", provenance=Provenance.PUBLISHED, source="s", locator="p. 1")
    citing = [Citing(FactRef("card", f"c{i}", "memory.capacity"), fact, ("source",)) for i in range(PLACES + 2)]
    out = cited_places(citing, "s")
    assert len(out) == PLACES + 1 and out[-1] == "and 2 more (passprice sources s lists each)"
    assert out[0] == f"{citing[0].ref}: 1 GB (published) at p. 1"


def test_a_serving_moved_to_another_entry_is_to_re_pin(repo: Repo) -> None:
    # The serving moved to a second entry of the same header (a re-import under another name): the lock holds by
    # that header, the review passed with the row "records HEAD's price", and check --frozen failed "serving changed".
    git(repo.path, "checkout", "-q", "-B", "entry-renamed", "main")
    entries = repo.path / "registry" / "checkpoints"
    old = "deepseek-r1-distill-qwen-7b-q4_k_m"
    text = (entries / f"{old}.toml").read_text(encoding="utf-8")
    assert text.count(f'name = "{old}"') == 1
    (entries / "r1-qwen7b-renamed.toml").write_text(text.replace(f'name = "{old}"', 'name = "r1-qwen7b-renamed"'),
                                                    encoding="utf-8")
    serving = repo.path / "registry" / "servings" / f"{LOCK}.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace(f'checkpoint = "{old}"',
                                                                   'checkpoint = "r1-qwen7b-renamed"'),
                       encoding="utf-8")
    commit_all(repo.path, "the serving on the renamed entry")
    d = diff(Root(repo.path), "main", "HEAD")
    lock = {x.name: x for x in d.locks}[LOCK]
    assert lock.drifted == ("serving.checkpoint",)
    assert lock in d.drifting and d.exit_status == 0
    assert lock.review() == (f"pins serving.checkpoint as before the change, the price unmoved by it: re-pin "
                             f"(passprice lock --update -o "
                             f"{LOCK_FILE}; check --frozen fails until then)")
    assert "1 to re-pin (lock --update) for check --frozen" in d.summary()
    assert _row(comment_body(d), LOCK).endswith(f"| ⚠️ {lock.review()} |")


@pytest.mark.parametrize(("word", "term"), [
    ("unaffected", "unaffected"),  # diff: "1 lock unaffected: `s-a100`"
    ("not judged", "not judged"),  # diff: "held → not judged: HEAD's lock file does not read"
    ("does not read", "unaffected"),
    ("informational", "unaffected"),  # diff: "2 servings no lock pins move (not locked, informational)"
    ("alone", "unaffected"),  # diff: "each changed fact alone (the lock's pinned inputs with only it as HEAD has it)"
    ("edited", "unaffected"),  # diff: "    edited    price.tokens_per_s: 5166.56… → 5500.0"
    ("look-alike header", "unaffected"),  # diff: "1 lock held by a look-alike header alone, to verify"
    ("sticky comment", "review"),  # the workflow's "one sticky comment" the README names
])
def test_the_words_a_review_prints_are_defined(word: str, term: str) -> None:
    from passprice import glossary

    assert glossary.lookup(word).name == term
    assert f"`{word}`" in glossary.TERMS[term].long or word in glossary.TERMS[term].aliases


def test_a_re_lock_moving_the_price_under_a_tenth_shows_both_figures_apart() -> None:
    # the H200's bandwidth 4.8 → 4.9 TB/s with its stream shares recomputed moved a lock +0.001242 %: its re-lock
    # read "recorded 5,166.6 → 5,166.6" beside BASE's 5,166.56 and HEAD's 5,166.63
    from types import SimpleNamespace

    from passprice.review.rendering import _recorded

    def lock(before: float | None, after: float | None) -> SimpleNamespace:
        return SimpleNamespace(recorded_before=None if before is None else {"tokens_per_s": before},
                               recorded=None if after is None else {"tokens_per_s": after}, recorded_edited=None)

    assert _recorded(lock(5166.56237077287, 5166.626537)) == "5,166.56 → 5,166.63"  # type: ignore[arg-type]
    assert _recorded(lock(996.1, 996.1000001)) == "996.1000000 → 996.1000001"  # type: ignore[arg-type]
    assert _recorded(lock(996.1, 996.1)) == "996.1"  # type: ignore[arg-type]
    assert _recorded(lock(996.1, 1079.1)) == "996.1 → 1,079.1"  # type: ignore[arg-type]
    assert _recorded(lock(None, 1079.1)) == "1,079.1"  # type: ignore[arg-type]


def test_a_comment_only_edit_is_named_in_the_comment(repo: Repo) -> None:
    git(repo.path, "checkout", "-q", "-B", "comment-only", "main")
    card = repo.path / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("\n[card]\n", "\n# reviewed 2026-12 by the registry team\n[card]\n", 1),
                    encoding="utf-8")
    commit_all(repo.path, "a comment")
    d = diff(Root(repo.path), "main", "HEAD")
    assert d.exit_status == 0 and not d.fact_changes
    body = comment_body(d).splitlines()
    assert body[1].startswith("✅ **passprice diff**")
    assert body[-1] == ("Other files changed: `facts/cards/h200_sxm_141gb.toml` (changed: comments or layout only, "
                        "no fact)")


def test_a_checkpoint_changed_under_a_lock_is_no_broken_floor(repo: Repo) -> None:
    # the row read "held → ❌ still holds" beside "its checkpoint's content changed …" with no ❌
    git(repo.path, "checkout", "-q", "-B", "entry-edited", "main")
    entry = repo.path / "registry" / "checkpoints" / "deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    text = entry.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.lstrip().startswith('{ name = "blk.0.ffn_down.weight"'))
    assert 'type = "Q6_K"' in line
    entry.write_text(text.replace(line, line.replace('type = "Q6_K"', 'type = "Q4_K"')), encoding="utf-8")
    commit_all(repo.path, "an entry edited")
    d = diff(Root(repo.path), "main", "HEAD")
    lock = {x.name: x for x in d.locks}[LOCK]
    assert lock.why_broken == "checkpoint"
    row = _row(comment_body(d), LOCK)
    assert "❌ still holds" not in row and f"| {_held_cell(lock)} → {lock.floors()} |" in row
    assert row.endswith("| ❌ its checkpoint's content changed from the pinned one: re-lock it through review |")


def _held_cell(lock: object) -> str:
    from passprice.review.rendering import _held

    return _held(lock)  # type: ignore[arg-type]


ROW = "(a row: its label, the H100 SXM figure, the H100 NVL figure): "


def test_a_copied_card_is_asked_against_the_same_fact_of_the_card_it_copies(repo: Repo) -> None:
    # the H100 SXM5's file copied as an NVL card, its capacity and bandwidth re-cited to the datasheet's NVL column:
    # its scale was asked against "h100_sxm5_80gb.toml: on_chip.bandwidth", its host.write against host.read
    git(repo.path, "checkout", "-q", "-B", "nvl-copy", "main")
    cards = repo.path / "facts" / "cards"
    text = (cards / "h100_sxm5_80gb.toml").read_text(encoding="utf-8")
    for old, new in (('name = "NVIDIA H100 SXM5 80GB"', 'name = "NVIDIA H100 NVL 94GB"'),
                     # the product page's rows (cite90; the datasheet's SXM column's cells until then)
                     ("value = 80\n", "value = 94\n"), (f"H100 SXM column {ROW}'GPU Memory 80GB 94GB'",
                                                        f"H100 NVL column {ROW}'GPU Memory 80GB 94GB'"),
                     ("value = 3.35\n", "value = 3.9\n"),
                     (f"H100 SXM column {ROW}'GPU Memory Bandwidth 3.35TB/s 3.9TB/s'",
                      f"H100 NVL column {ROW}'GPU Memory Bandwidth 3.35TB/s 3.9TB/s'")):
        assert old in text
        text = text.replace(old, new, 1)
    (cards / "h100_nvl.toml").write_text(text, encoding="utf-8")
    commit_all(repo.path, "an NVL card copied")
    d = diff(Root(repo.path), "main", "HEAD")
    asked = {c.path: c.to_verify for f, c in d.fact_changes if f.name == "h100_nvl"}
    for path in ("scale", "host.write", "host.read", "vector"):
        assert (asked[path] or "").startswith(f"facts/cards/h100_sxm5_80gb.toml: {path} cites the same place, "
                                              "another card's: "), asked[path]


def test_a_value_moved_under_a_note_stating_the_old_figure_asks_of_the_note(repo: Repo) -> None:
    # a stack's memory.reserved 512 → 1024 MiB under its note's "512 MiB in all" asked of the locator alone
    from test_diff import read_fact

    # (the shipped note stated '141 GB' until left60 took out the MLPerf file no record registers: a base with a note
    # stating the figure is made here)
    git(repo.path, "checkout", "-q", "-B", "note-base", "main")
    was = read_fact(repo.path, "memory.capacity")
    assert was.note is not None and "'141 GB'" not in was.note
    edit_fact(repo.path, "memory.capacity", value=141, unit="GB", provenance="published", source=was.source,
              locator=was.locator, note=was.note + " The datasheet prints '141 GB'.")
    commit_all(repo.path, "a note stating the figure")
    git(repo.path, "checkout", "-q", "-B", "capacity-raised", "note-base")
    was = read_fact(repo.path, "memory.capacity")
    assert was.note is not None and "'141 GB'" in was.note
    edit_fact(repo.path, "memory.capacity", value=143, unit="GB", provenance="published", source=was.source,
              locator=was.locator, note=was.note)
    commit_all(repo.path, "capacity raised, its note kept")
    d = diff(Root(repo.path), "note-base", "HEAD")
    (asked,) = [c.to_verify for f, c in d.fact_changes if c.path == "memory.capacity"]
    # fix53w: the quote, found in the stored excerpt, states 141GB: a MISMATCH, said after the note's question
    assert asked is not None and asked.endswith(
        "; its note still states 141 GB: is the note this figure's?; its quotes, found in the stored excerpt of the "
        "document it cites, state another figure than its own, as audit and check read them (1 of 1 quoted span "
        "found in the stored text; its quote of nvidia-h200-product-page 'GPU Memory 141GB 141GB' states 141GB, not "
        "its value 143 GB)")
    assert [(f.name, c.path) for f, c in d.quotes_mismatched] == [("h200_sxm_141gb", "memory.capacity")]
    # the note rewritten with the new figure is not asked
    edit_fact(repo.path, "memory.capacity", value=143, unit="GB", provenance="published", source=was.source,
              locator=was.locator, note=was.note.replace("'141 GB'", "'143 GB'"))
    commit_all(repo.path, "its note too")
    d = diff(Root(repo.path), "note-base", "HEAD")
    (asked,) = [c.to_verify for f, c in d.fact_changes if c.path == "memory.capacity"]
    assert asked is not None and "its note" not in asked
