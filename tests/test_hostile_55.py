"""Attack round 55 (issue 13): session 30's additions attacked on a freshly installed (non-editable) passprice —
``cards --json`` on a registry of 10,000 cards, the locks folder a plain ``price`` reads, ``lock --stack``'s
shipped stack lock, ``locks.Moved`` and a card copied many times. Each test builds its reproducer and asserts the
exit status and the exact output or line; a comment says what it did before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke
from passprice.report import cards_json_chunks
from passprice.tables import json_text, nested_json_text

# --- 1. cards --json: one card's table and text at a time ---------------------------------------------------------


def _cards_root(tmp_path: Path, copies: int) -> Path:
    root = copy_root(tmp_path)
    a40 = (root / "facts" / "cards" / "a40.toml").read_text(encoding="utf-8")
    for i in range(copies):
        (root / "facts" / "cards" / f"copy{i:02d}.toml").write_text(a40, encoding="utf-8")
    return root


def test_1_cards_json_is_the_whole_documents_text_written_card_by_card(tmp_path: Path) -> None:
    # Before: 10,000 cards (157 MB of card files) took 24 s wall, 17.3 s of CPU and 1.77 GB: every card's table, then
    # the 265 MB string of the document, were held at once. Now each card is made and written in turn (10.9 s of
    # CPU, 300 MB, the same 265 MB byte for byte); here, 17 shipped cards, 5 copies and a card that does not read.
    root = _cards_root(tmp_path, copies=5)
    (root / "facts" / "cards" / "zz_broken.toml").write_text("[memory\n", encoding="utf-8")
    result = invoke("cards", "--json", root=root)
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert result.stdout == json_text(document) + "\n"  # what json.dumps(indent=2) writes for the whole
    names = [c["name"] for c in document["cards"]]
    assert len(names) == 22 and names[:5] == ["a100_pcie_80gb", "a100_sxm4_80gb", "a40", "b200", "copy00"]
    assert [c["facts"]["memory.bandwidth"]["base_value"] for c in document["cards"] if c["name"] == "copy04"] == [
        696e9
    ]
    assert len(document["problems"]) == 1 and document["problems"][0].startswith("facts/cards/zz_broken.toml: ")
    assert result.stderr.splitlines() == ["passprice: error: " + document["problems"][0]]


def test_1_cards_json_with_no_card_that_reads_is_one_document(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    shutil.rmtree(root / "facts" / "cards")
    (root / "facts" / "cards").mkdir()
    (root / "facts" / "cards" / "only.toml").write_text("x = [\n", encoding="utf-8")
    result = invoke("cards", "--json", root=root)
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert result.stdout == json_text(document) + "\n"
    assert document["cards"] == [] and len(document["problems"]) == 1


def test_1_the_chunks_hold_one_card_each() -> None:
    # The bound on memory: the document comes as one piece a card, then the closing with the problems.
    from passprice.cards import load_card
    from passprice.registry import embedded_root

    root = embedded_root()
    cards = [load_card(root, name) for name in ("a40", "h200_sxm_141gb", "mi300x")]
    chunks = list(cards_json_chunks(cards, lambda: ["a line"]))
    assert len(chunks) == 4
    assert chunks[0].startswith('{\n  "cards": [\n    {\n      "name": "a40",')
    assert [c.count('"name": ') for c in chunks] == [1, 1, 1, 0]
    assert chunks[3] == '\n  ],\n  "problems": [\n    "a line"\n  ]\n}'
    assert json.loads("".join(chunks))["problems"] == ["a line"]


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": [], "b": {}, "c": [[], [{}]]},
        {"s": 'q"\\\n\t\u202e\ud800é', "n": None, "t": True, "f": False, "i": -3, "x": 2.5, "z": -0.0, "big": 10**30},
        [1e300, 5e-324, "x", [1, [2, [3]]]],
        (1, 2),
        "alone",
    ],
    ids=["empty-dict", "empty-list", "nested-empties", "scalars", "deep-list", "tuple", "string"],
)
def test_1_nested_json_text_is_json_texts_text_indented(value: object) -> None:
    for level in (0, 1, 3):
        assert nested_json_text(value, level) == json_text(value).replace("\n", "\n" + "  " * level)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")], ids=["inf", "-inf", "nan"])
def test_1_nested_json_text_refuses_a_number_json_cannot_carry(value: float) -> None:
    with pytest.raises(ValueError, match="is not finite"):
        nested_json_text({"facts": [1, {"base_value": value}]}, 2)


def test_1_a_key_that_is_not_a_string_falls_back_to_json_dumps() -> None:
    assert nested_json_text({1: {"a": 2}}, 1) == '{\n    "1": {\n      "a": 2\n    }\n  }'


# --- 2. a lock's [stack] name no stack file of any clone can have --------------------------------------------------

FOLDER = "a stack's name is a file's name in facts/stacks, without a folder"
WINDOWS = "so no registry's stack file is named so (check refuses one)"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("a\\b", f"'a\\\\b' is no stack's name: {FOLDER}; re-lock it"),
        ("a:b", f"'a:b' is no stack's name: ':' is a character no file name on Windows holds, {WINDOWS}; re-lock it"),
        ("x|y", f"'x|y' is no stack's name: '|' is a character no file name on Windows holds, {WINDOWS}; re-lock it"),
        ("con", f"'con' is no stack's name: CON names a device on Windows, {WINDOWS}; re-lock it"),
    ],
    ids=["backslash", "colon", "pipe", "device"],
)
def test_2_a_lock_naming_a_stack_no_windows_file_can_be_is_refused(tmp_path: Path, name: str, said: str) -> None:
    # Before: exit 0 for a plain `price r1-qwen7b-h200` ("under locks …, r1-stack (…): floors hold"), `reproduce`
    # exit 0 and `check` "FAILS … today's files do not read: stack 'a\\b': not found" (exit 1), where "a/b" was
    # refused as bad input (attack round 51): a lock re-digested with stack.name and price.stack both NAME.
    from test_hostile_49 import R1, STACKED, _locked, _rewritten

    root = _locked(tmp_path)

    def renamed(document: dict[str, Any]) -> None:
        document["lock"]["serving"] = R1  # one of the serving's own locks: a plain price reads it
        document["stack"]["name"] = document["price"]["stack"] = name

    _rewritten(root / STACKED, renamed)
    line = f"passprice: error: {root / STACKED}: stack.name: {said}"
    for args in (("price", R1), ("reproduce", str(root / STACKED))):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [line]


# --- 3. the lock line of a serving with many locks ------------------------------------------------------------------


def test_3_the_lock_line_names_eight_locks_and_counts_the_rest(tmp_path: Path) -> None:
    # Before: 10,001 locks of gemma3-270m-h100 (copies of its lock) made a plain price's lock line 611,717 characters,
    # every lock named twice; now 1,000-odd characters whatever their number. Here 13: the shipped one and 12 copies.
    root = copy_root(tmp_path)
    lock = (root / "locks" / "gemma3-270m-h100.lock.toml").read_bytes()
    for i in range(12):
        (root / "locks" / f"g{i:02d}.lock.toml").write_bytes(lock)
    result = invoke("price", "gemma3-270m-h100", root=root)
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stdout.splitlines() if x.startswith("  lock ")]
    names = ", ".join(["gemma3-270m-h100"] * 8)
    assert line.endswith(f" and 5 more: floors hold, and the price is the one {names} and 5 more record"), line
    assert line.count(".lock.toml)") == 8 and line.startswith("  lock          under locks gemma3-270m-h100 (")


def test_3_three_locks_are_each_named() -> None:
    from passprice.enforce import _listed

    assert _listed(["a", "b", "c"]) == "a, b and c" and _listed(["a", "b"], ", ") == "a, b" and _listed(["a"]) == "a"
    assert _listed([str(i) for i in range(10_001)]) == "0, 1, 2, 3, 4, 5, 6, 7 and 9,993 more"


# --- 4. price --lock's claims check: the facts a price rests on ----------------------------------------------------


def _rests_on_forged(change: Any) -> Any:
    def forged(lock: Any) -> Any:
        import attrs

        price = dict(lock.price)
        price["rests_on"] = change(dict(price["rests_on"]))
        return attrs.evolve(lock, price=price)

    return forged


@pytest.mark.parametrize(
    "change",
    [
        lambda r: {**r, "x\ny\u202e": "derived"},  # a fact the price does not rest on, named with a newline and U+202E
        lambda r: {k: v for k, v in r.items() if k != "memory.bandwidth"},  # the binding fact left out
        lambda r: {**r, "scale": "published"},  # a fact's provenance raised
    ],
    ids=["key-added", "key-removed", "provenance-raised"],
)
def test_4_a_forged_rests_on_is_not_the_locked_price_under_price_lock(tmp_path: Path, change: Any) -> None:
    # Before: "floors hold, and the price is the one r1-stack records" (exit 0), while reproduce and check failed the
    # lock (exit 1): rests_on was no claim price --lock compared (slip 50 compared provenance and weakest).
    from test_slip_46 import _stack_locked
    from test_slip_50 import LOCK, _forge

    _, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _rests_on_forged(change))
    # attack 55: "but the price is NOT the one r1-stack records … first moved: rests_on", exit 0; slip 53: the record
    # is not what its pins give under the code that wrote it: refused by name, exit 1, the forged key escaped
    priced = invoke("price", "--lock", LOCK, root=head)
    assert priced.exit_code == 1, priced.output
    last = priced.stderr.splitlines()[-1]  # after the stack's warning that it extrapolates across cards
    assert last.startswith("passprice: refused: LockForged: lock r1-stack (locks/r1-stack.lock.toml) is forged: ")
    assert "(first: rests_on: recorded " in last and "\u202e" not in priced.output
    assert invoke("reproduce", LOCK, root=head).exit_code == 1


# --- 5. a copied card, copied again: the copies share their new datasheet ----------------------------------------


@pytest.mark.parametrize("copies", [2, 3])
def test_5_copies_sharing_one_new_datasheet_are_each_asked_per_fact(tmp_path: Path, copies: int) -> None:
    # Before: the H200's file copied as acme_x100 (memory.capacity re-cited to a new acme-x100-datasheet, 16 facts
    # still citing the H200's columns) read "16 to verify"; one more copy beside it made it "2 to verify" (the new
    # source's question alone, each): the new datasheet was then cited by another card file, so neither copy held a
    # source "of its own" and both read as plain copies. 999 copies: "999 to verify" of 16,983 facts added.
    from test_leftovers_30b import _acme, copied_notes

    base, head = _acme(tmp_path)
    text = (head / "facts" / "cards" / "acme_x100.toml").read_text(encoding="utf-8")
    for i in range(1, copies):
        (head / "facts" / "cards" / f"acme_x10{i}.toml").write_text(
            text.replace('name = "Acme X100"', f'name = "Acme X10{i}"', 1), encoding="utf-8")
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == (f"{17 * copies} facts added in {copies} new files, {16 * copies} to verify in their sources "
                        f"({16 * copies} copied citations: each cites what another card's fact cites); 1 "
                        f"source added; no lock affected; {5 * copies + 5} warnings of check on HEAD; 10 locks "
                        "unaffected")  # each copy's note, 4 measured facts of each card, the retrieved "unknown" line
    # slip55: every card but the first by name keeps acme_x100's note (the H200's), each warned once
    warned = [f"facts/cards/acme_x10{i}.toml" for i in range(1, copies)] + ["facts/cards/h200_sxm_141gb.toml"]
    assert copied_notes(result.stdout) == [(path, "acme_x100.toml") for path in warned]
    asks = [line.strip() for line in lines if "another card's" in line and line.strip().startswith("to verify:")]
    assert len(asks) == 16 * copies
    # the card copied is named where it cites the place; the copies' shared datasheet names another copy
    assert asks.count(
        "to verify: facts/cards/h200_sxm_141gb.toml: memory.bandwidth cites the same place, another card's: does "
        "nvidia-h200-product-page: Specifications table, H200 SXM column (a row: its label, "
        "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s' "
        "state 4.8 TB/s of what facts/cards/acme_x100.toml describes?") == 1
    shared = [a for a in asks if a.startswith("to verify: facts/cards/acme_x10") and ": memory.capacity cites" in a]
    assert len(shared) == copies


def test_5_plain_copies_of_a_card_ask_each_copied_citation(tmp_path: Path) -> None:
    # slip round 32's decision kept: copies citing only the places of a card this change leaves are asked nothing.
    from test_leftovers_30b import copied_notes

    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    text = (head / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8")
    for i in range(3):
        (head / "facts" / "cards" / f"h200_twin{i}.toml").write_text(
            text.replace('name = "NVIDIA H200 SXM 141GB"', f'name = "NVIDIA H200 SXM 141GB (twin {i})"', 1),
            encoding="utf-8")
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 0, result.output
    # slip55: each twin keeps the H200's note; 4 measured facts of each of the 4 cards and the retrieved "unknown"
    # line are check's warnings too (tests/test_fix154.py): 3 + 16 + 1
    # each fact not assumed cites what the H200's fact cites: a copied citation, to verify (tests/test_fix166.py;
    # plain copies asked nothing before)
    assert result.stdout.splitlines()[1] == ("51 facts added in 3 new files, 48 to verify in their sources (48 copied "
                                             "citations: each cites what another card's fact cites); no lock "
                                             "affected; 20 warnings of check on HEAD; 10 locks unaffected")
    assert copied_notes(result.stdout) == [(f"facts/cards/h200_twin{i}.toml", "h200_sxm_141gb.toml") for i in range(3)]
    assert "to verify: a copied citation: it cites what h200_sxm_141gb's memory.capacity cites" in result.stdout


# --- 6. a 1 GB sparse file in locks/ --------------------------------------------------------------------------------


def test_6_a_file_past_the_read_cap_is_refused_unread_naming_its_size(tmp_path: Path) -> None:
    # Before: the same line without "(1,073,741,824 bytes)", after reading 64 MiB of its zeros (100 MB peak, now 39).
    root = copy_root(tmp_path)
    sparse = root / "locks" / "sparse.lock.toml"
    with sparse.open("wb") as handle:
        handle.truncate(1 << 30)
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        # attack58: refused by the lock kind's own cap, from the open file's size, before a byte is read
        f"passprice: error: {sparse}: larger than 256 KiB, the most a lock file may hold (1,073,741,824 bytes; "
        "PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap) (a lock file that does not read may lock r1-qwen7b-h200: fix "
        "it (passprice check says what is wrong) or remove it)"
    ]


def test_5_the_count_to_verify_is_grouped_as_the_others_are(tmp_path: Path) -> None:
    # Before: "16,983 facts added in 999 new files, 15984 to verify in their sources" (999 copies sharing a datasheet).
    from test_leftovers_30b import _acme, copied_notes

    base, head = _acme(tmp_path)
    text = (head / "facts" / "cards" / "acme_x100.toml").read_text(encoding="utf-8")
    for i in range(1, 63):
        (head / "facts" / "cards" / f"acme_y{i:02d}.toml").write_text(
            text.replace('name = "Acme X100"', f'name = "Acme Y{i:02d}"', 1), encoding="utf-8")
    result = invoke("diff", str(base), str(head), root=head)
    # 63 × 25 = 1,575 quote look-ups, under the review's 2,236 (they were past its 512, exit 1; 90 copies are past it
    # and fail, naming the facts not looked up: tests/test_bound147.py)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == ("1,071 facts added in 63 new files, 1,008 to verify in their sources "
                                             "(1,008 copied citations: each cites what another card's fact cites); 1 "
                                             "source added; no lock affected; 320 warnings of check on HEAD; 10 locks "
                                             "unaffected")
    # 63 notes, 4 measured facts of each of the 64 cards and the retrieved "unknown" line (tests/test_fix154.py)
    # slip55: 62 copies and the H200 keep acme_x100's note
    # the text shows the first 20 warnings (acme_y01 … acme_y20) and counts the other 43 (acme_y21 … y62, the H200)
    assert copied_notes(result.stdout) == [(f"facts/cards/acme_y{i:02d}.toml", "acme_x100.toml") for i in range(1, 21)]
    assert "\n  and 300 more warnings: passprice check on HEAD lists each\n" in result.stdout
