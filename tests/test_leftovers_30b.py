"""Issue 13's leftovers of session 30's first round (task left30b), each reproduced here first.

1. ``price`` printed a look-alike source id unspelled: a card citing ``azure-ai-benchmarking-guidе`` (a Cyrillic
   ``е``) read ``… is not the id of a source record: the name of a file sources/ID.toml`` (exit 2), where ``check``
   and ``reproduce`` appended ``(spelled 'azure-ai-benchmarking-guid\\u0435')``. The schema's line for a ``source``
   key spells it now, so every command prints the one line.
2. A card copied from the H200's file, its capacity re-cited to a datasheet of its own (a source the same change
   adds), its 16 other facts still citing the H200's places, read "1 to verify in its source" (the new source):
   each fact citing the other card's place is asked now (the assumed ``host.capacity`` aside): 16 to verify.
3. ``price SERVING`` (the serving's own locks, read implicitly) and ``lock --update`` read a lock re-digested to name
   another registered stack with plain ``read_lock``: ``price`` refused with StackLacks (exit 1), ``lock --update``
   re-locked it under the other stack's name (exit 0). Both read it as ``check`` does now: refused by name, exit 2.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cli_helpers import copy_root, invoke
from test_hostile_49 import R1, STACKED, _locked, _rewritten
from test_leftovers_30 import OTHER, _renamed
from test_slip_34 import renderings  # one in-process review rendered per format

H200 = Path("facts") / "cards" / "h200_sxm_141gb.toml"

# --- 1. a look-alike source id, spelled by price as by check ------------------------------------------------------

LOOKALIKE = "azure-ai-benchmarking-guid\u0435"  # the last letter a Cyrillic е


def test_1_price_spells_a_lookalike_source_id_as_check_does(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / H200
    text = card.read_text(encoding="utf-8")
    assert text.count('source = "azure-ai-benchmarking-guide"') == 4
    card.write_text(text.replace('source = "azure-ai-benchmarking-guide"', f'source = "{LOOKALIKE}"', 1),
                    encoding="utf-8")
    said = (f"streams.read.source: '{LOOKALIKE}' is not the id of a source record: the name of a file "
            "sources/ID.toml (spelled 'azure-ai-benchmarking-guid\\u0435')")
    priced = invoke("price", "qwen35-27b-h200-chat", root=root)
    assert priced.exit_code == 2, priced.output
    assert priced.stderr.splitlines() == [f"passprice: error: {root / H200}: {said}"]  # was without "(spelled …)"
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert f"passprice: error: {H200}: {said}" in checked.stderr.splitlines()  # spelled once, as before
    assert checked.stderr.count("(spelled ") == checked.stderr.count(LOOKALIKE)


def test_1_an_ascii_source_id_not_registered_is_not_spelled(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / H200
    card.write_text(card.read_text(encoding="utf-8").replace('source = "azure-ai-benchmarking-guide"',
                                                             'source = "Azure"', 1), encoding="utf-8")
    priced = invoke("price", "qwen35-27b-h200-chat", root=root)
    assert priced.exit_code == 2, priced.output
    assert priced.stderr.splitlines() == [
        f"passprice: error: {root / H200}: streams.read.source: 'Azure' is not the id of a source record: the name of "
        "a file sources/ID.toml"]


# --- 2. a copied card whose facts cite another card's places ------------------------------------------------------

#: The H200 card's facts other than memory.capacity (re-cited by the copy) and host.capacity (assumed), sorted.
BORROWED = sorted(["memory.bandwidth", "on_chip.capacity", "on_chip.bandwidth", "streams.read", "streams.rewrite",
                   "streams.append", "array", "vector", "scale", "host.read", "host.write", "host.stream",
                   "tensor.f16", "tensor.bf16", "tensor.f8"])


def _acme(tmp_path: Path) -> tuple[Path, Path]:
    """BASE (a copy of the registry) and HEAD (BASE plus the card ``acme_x100``, the H200's file retitled "Acme
    X100", its ``memory.capacity`` re-cited to ``acme-x100-datasheet``, a source record HEAD adds)."""
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    text = (head / H200).read_text(encoding="utf-8")
    text, titled = re.subn(r'(?m)^name = "NVIDIA H200 SXM 141GB"$', 'name = "Acme X100"', text, count=1)
    old = ("source = \"nvidia-h200-product-page\"\nlocator = \"Specifications table, H200 SXM column (a row: its "
           "label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory 141GB 141GB'\"")  # cite102
    assert titled == 1 and text.count(old) == 1
    (head / "facts" / "cards" / "acme_x100.toml").write_text(
        text.replace(old, "source = \"acme-x100-datasheet\"\nlocator = \"Specifications table: 'Memory 141GB'\""),
        encoding="utf-8")
    record = (head / "sources" / "nvidia-h200-datasheet.toml").read_text(encoding="utf-8")
    (head / "sources" / "acme-x100-datasheet.toml").write_text(
        record.replace('title = "NVIDIA H200 Tensor Core GPU Datasheet"', 'title = "Acme X100 Datasheet"'),
        encoding="utf-8")
    return base, head


def copied_notes(stdout: str) -> list[str]:
    """The ``warning:`` lines of a diff's text, each ``(file warned, file named)`` of slip55's copied-note warning
    (a copy keeps its card's ``[card] note``; files are read by name, so the warning falls on the later name). The
    review lists check's other warnings on HEAD too (a measured fact citing another card's measured place, and beside
    them the standing line of the sources retrieved "unknown": tests/test_fix154.py): those are left out here."""
    said = ("card.note: the same text as the note of {}: one card copied from the other with its note? a card's "
            "note says what its own figures are and were checked against; give each card its own")
    lines = [line.strip() for line in stdout.splitlines() if line.startswith("  warning: ")
             and ": card.note: " in line]
    pairs = []
    for line in lines:
        path, _, rest = line.removeprefix("warning: ").partition(": ")
        named = rest.removeprefix("card.note: the same text as the note of ").partition(":")[0]
        assert rest == said.format(named), line
        pairs.append((path, named))
    return pairs


def test_2_a_copy_citing_another_card_s_places_asks_each_fact(tmp_path: Path) -> None:
    import json

    base, head = _acme(tmp_path)
    status, (text, as_json) = renderings(head, "text", "json", base=str(base), head=str(head))  # one review
    assert status == 0, text
    lines = text.splitlines()
    # was "17 facts added in 1 new file, 1 to verify in its source; …" (the new source's question alone)
    assert lines[1] == ("17 facts added in 1 new file, 16 to verify in their sources (15 copied citations: each cites "
                        "what another card's fact cites); 1 source added; no lock affected; 10 warnings of check on "
                        "HEAD; 10 locks unaffected")  # slip55: the copied note,
    # and (tests/test_fix154.py) the 4 measured facts of each of the 2 cards and the sources retrieved "unknown"
    assert copied_notes(text) == [("facts/cards/h200_sxm_141gb.toml", "acme_x100.toml")]
    asks = [line.strip() for line in lines if "another card's" in line and line.strip().startswith("to verify:")]
    assert len(asks) == 15
    assert asks[0] == (
        "to verify: facts/cards/h200_sxm_141gb.toml: memory.bandwidth cites the same place, another card's: does "
        "nvidia-h200-product-page: Specifications table, H200 SXM column (a row: its label, "
        "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s' "
        "state 4.8 TB/s of what facts/cards/acme_x100.toml describes?")
    said = json.loads(as_json)
    assert sorted(said["to_verify"]) == sorted(["acme_x100:memory.capacity", *(f"acme_x100:{p}" for p in BORROWED)])


def test_2_a_plain_copy_citing_only_the_card_s_places_asks_each_copied_citation(tmp_path: Path) -> None:
    # slip round 32's decision (a copy sharing every place describes what its original describes) reversed by a new
    # user's Acme X1: each fact not assumed cites what the H200's fact cites, to verify (tests/test_fix166.py).
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    text = (head / H200).read_text(encoding="utf-8")
    (head / "facts" / "cards" / "h200_twin.toml").write_text(
        text.replace('name = "NVIDIA H200 SXM 141GB"', 'name = "NVIDIA H200 SXM 141GB (twin)"', 1), encoding="utf-8")
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 0, result.output
    # slip55: the copy keeps the H200's note; its 4 measured facts and the H200's, and the sources retrieved
    # "unknown", are check's warnings too (tests/test_fix154.py)
    assert result.stdout.splitlines()[1] == ("17 facts added in 1 new file, 16 to verify in their sources (16 copied "
                                             "citations: each cites what another card's fact cites); no lock "
                                             "affected; 10 warnings of check on HEAD; 10 locks unaffected")
    assert copied_notes(result.stdout) == [("facts/cards/h200_twin.toml", "h200_sxm_141gb.toml")]
    assert "to verify: a copied citation: it cites what h200_sxm_141gb's memory.capacity cites" in result.stdout


# --- 3. the serving's own locks and lock --update read as check reads them ----------------------------------------

SAID = (f"stack.name: '{OTHER}' is not the stack this lock's pins describe: its [stack] title, runtime and builds "
        "are those of registered stack 'llamacpp-cuda-2405' (a lock names the stack its price was made under); "
        "re-lock it, or restore the lock from the last commit that holds it as written")


def _own(document: dict[str, Any]) -> None:
    """The lock made under llamacpp-cuda-2405 (``lock r1-qwen7b-h200 --stack …``, a lock of no registered serving)
    turned into one of the registered serving r1-qwen7b-h200 (``lock.serving``): ``price r1-qwen7b-h200`` reads it
    as one of the serving's own locks."""
    document["lock"]["serving"] = R1


def test_3_price_serving_refuses_its_own_lock_naming_another_stack(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _rewritten(root / STACKED, _own)
    assert invoke("price", R1, root=root).exit_code == 0  # the serving's own lock, under its own stack: it holds
    _rewritten(root / STACKED, lambda d: (_own(d), _renamed(d)))
    priced = invoke("price", R1, root=root)
    assert priced.exit_code == 2, priced.output  # was exit 0: priced under it, "floors hold"
    assert priced.stderr.splitlines() == [f"passprice: error: {root / STACKED}: {SAID}"]


def test_3_price_serving_refuses_a_lock_made_with_options_naming_another_stack(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _rewritten(root / STACKED, _renamed)
    priced = invoke("price", R1, root=root)
    assert priced.exit_code == 2, priced.output  # was exit 0: "under locks …, r1-stack (…): floors hold"
    assert priced.stderr.splitlines() == [f"passprice: error: {root / STACKED}: {SAID}"]
    assert invoke("price", R1, "--no-lock", root=root).exit_code == 0  # read under no lock, it prices


def test_3_lock_update_refuses_a_lock_naming_another_stack(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    for edit in (_renamed, lambda d: (_own(d), _renamed(d))):
        _rewritten(root / STACKED, edit)
        before = (root / STACKED).read_bytes()
        updated = invoke("lock", R1, "--update", "-o", str(root / STACKED), root=root)
        assert updated.exit_code == 2, updated.output  # was exit 1: "refused: StackLacks: stack 'lmdeploy-…' has no
        assert updated.stderr.splitlines() == [f"passprice: error: {root / STACKED}: {SAID}"]  # share.array fact…"
        assert (root / STACKED).read_bytes() == before
