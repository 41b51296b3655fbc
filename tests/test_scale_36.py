"""Issue 13 (session 34, scale36): registries of thousands of files.

``cards --json`` writes a fact's text once for each fact *object* (cards read from equal bytes share theirs) and a
card copied thousands of times has its cited sources looked up once; a file read inside a snapshot is hashed once
for its memo key and its cache key, and a schema once a process. The output is the same, byte for byte, and a
problem is still named for each file that has it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import cache, report, snapshot
from passprice.cards import load_card
from passprice.digests import blake2b, blake2b_digest
from passprice.errors import InputError
from passprice.registry import embedded_root, find_root
from passprice.tables import json_text

#: Count the locks built by this module's own commands: none kept from another test's (tests/conftest.py).
FRESH_LASTING = True


def _whole(cards: list, problems: list[str]) -> str:
    """The document as one ``json_text`` of the whole: what the chunks must equal, byte for byte."""
    return json_text({"cards": [report.card_json(c) for c in cards], "problems": problems})


def test_a_fact_object_is_written_once_and_the_text_is_the_whole_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    root = embedded_root()
    a40 = load_card(root, "a40")
    copy = attrs.evolve(a40, name="a40-copy")  # the very fact objects of a40
    calls: list[object] = []
    real = report.fact_json

    def counted(fact: object) -> dict:
        calls.append(fact)
        return real(fact)  # type: ignore[arg-type]

    cards = [a40, copy, load_card(root, "mi300x")]
    expected = _whole(cards, ["a line"])
    monkeypatch.setattr(report, "fact_json", counted)
    text = "".join(report.cards_json_chunks(cards, lambda: ["a line"]))
    assert text == expected
    # a40's 12 facts written once for the two cards, mi300x's 17 once
    assert len(calls) == len(a40.facts()) + len(cards[2].facts()) == 12 + 17


def test_an_equal_fact_that_is_another_object_gets_its_own_text() -> None:
    # 1 == 1.0 and their facts are equal, but the amount is written "1" for one and "1.0" for the other
    a40 = load_card(embedded_root(), "a40")
    stream = a40.memory.capacity
    whole = attrs.evolve(stream, amount=48)
    floated = attrs.evolve(stream, amount=48.0)
    assert whole == floated
    first = attrs.evolve(a40, memory=attrs.evolve(a40.memory, capacity=whole))
    second = attrs.evolve(a40, name="a40-float", memory=attrs.evolve(a40.memory, capacity=floated))
    text = "".join(report.cards_json_chunks([first, second], lambda: []))
    assert text == _whole([first, second], [])
    amounts = [c["facts"]["memory.capacity"]["value"] for c in json.loads(text)["cards"]]
    assert amounts == [48, 48.0] and '"value": 48,' in text and '"value": 48.0,' in text


def test_the_kept_texts_are_bounded_and_the_oldest_let_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "FACT_TEXTS_KEPT", 3)
    root = embedded_root()
    cards = [load_card(root, name) for name in ("a40", "mi300x", "a40")]
    assert "".join(report.cards_json_chunks(cards, lambda: [])) == _whole(cards, [])


@pytest.fixture(scope="module")
def copied_cards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The registry with three copies of a40 under other names (the same bytes: the benchmark's shape)."""
    root = copy_root(tmp_path_factory.mktemp("scale36"))
    for i in range(3):
        shutil.copyfile(root / "facts" / "cards" / "a40.toml", root / "facts" / "cards" / f"c{i}-a40.toml")
    return root


def test_cards_json_of_copies_is_the_whole_document(copied_cards: Path) -> None:
    result = invoke("cards", "--json", root=copied_cards)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert result.stdout == json_text(document) + "\n"
    named = {c["name"]: c for c in document["cards"]}
    assert len(named) == len(document["cards"]) == 17 + 3
    assert named["c0-a40"]["facts"] == named["c2-a40"]["facts"] == named["a40"]["facts"]
    assert len(named["c1-a40"]["facts"]) == 12


def test_a_copy_citing_a_missing_source_is_refused_by_its_own_name(tmp_path: Path) -> None:
    folder = copy_root(tmp_path)
    root = find_root(folder)
    cards = folder / "facts" / "cards"
    for i in range(2):
        shutil.copyfile(cards / "a40.toml", cards / f"c{i}-a40.toml")
    with snapshot.reading():
        assert load_card(root, "c0-a40").name == "c0-a40"
        assert load_card(root, "c1-a40").name == "c1-a40"  # the copy's sources taken as traced: the same bytes
    (folder / "sources" / "nvidia-a40-datasheet.toml").unlink()
    with snapshot.reading():
        for name in ("c0-a40", "c1-a40"):
            with pytest.raises(InputError) as e:
                load_card(root, name)
            lines = str(e.value).splitlines()
            assert lines and all(f"{name}.toml: " in line for line in lines), lines
            assert "no source 'nvidia-a40-datasheet'" in lines[0]


def test_a_digest_kept_for_the_same_bytes_object_only() -> None:
    data = b"x" * 2000
    same_bytes = bytes(bytearray(data))  # equal, another object
    assert blake2b_digest(data) == blake2b(data).digest()
    assert blake2b_digest(data) == blake2b_digest(same_bytes) == blake2b(same_bytes).digest()
    assert blake2b_digest(b"y" * 2000) == blake2b(b"y" * 2000).digest()
    assert blake2b_digest(b"") == blake2b(b"").digest()


def test_a_cache_key_moves_with_the_schema_bytes() -> None:
    schema = (REPO / "schema" / "card.schema.json").read_bytes()
    one = cache.key("card", schema, b"data")
    assert cache.key("card", bytes(bytearray(schema)), b"data") == one
    assert cache.key("card", schema + b" ", b"data") != one
    assert cache.key("card", schema, b"datb") != one


R1_LOCK = REPO / "locks" / "r1-qwen7b-h200.lock.toml"


def test_copies_of_a_lock_are_built_once_each_with_its_own_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import locks

    built: list[Path] = []
    real = locks._lock_of_file

    def counted(path: Path, folder: Path, data: bytes) -> locks.Lock:
        built.append(path)
        return real(path, folder, data)

    monkeypatch.setattr(locks, "_lock_of_file", counted)
    paths = [tmp_path / f"l{i}-r1.lock.toml" for i in range(3)]
    for p in paths:
        shutil.copyfile(R1_LOCK, p)
    text = R1_LOCK.read_text(encoding="utf-8")
    forged = tmp_path / "forged-r1.lock.toml"  # one figure of a pinned fact changed, its digest kept
    forged.write_text(text.replace("value = 989.5", "value = 989.6", 1), encoding="utf-8")
    with snapshot.reading():
        read = [locks.read_lock(p, REPO / "schema") for p in paths]
        with pytest.raises(InputError, match=r"forged-r1\.lock\.toml: .*facts\.array"):
            locks.read_lock(forged, REPO / "schema")
    assert [lock.source for lock in read] == [str(p) for p in paths]
    assert read[1] == attrs.evolve(read[0], source=str(paths[1]))
    assert read[2].facts is read[0].facts  # built once, shared
    assert built == [paths[0], forged]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[lock]\n",
        "[lock]\nname = \"a\"\n",
        "x = 1\n[lock]\n[lock]\nname = \"a\"\n",  # the first [lock] line holds no key: the second's table
        "\n[lock]\nname = \"a\"\nserving = \"s\"\n[card]\n",
        "a = \"[lock]\\nname = 1\"\n [lock]\nname = \"a\"\n",  # not at a line's start: no table
        "[lock]\nname = \"a\"\n\n[lock]\nb = 2\n",
        "[locks]\nname = \"a\"\n",
    ],
)
def test_the_lock_table_found_is_the_patterns_search(text: str) -> None:
    from passprice.locks import _lock_table, lock_table_in

    found, searched = lock_table_in(text), _lock_table().search(text)
    assert (found and (found.span(), found.group(0))) == (searched and (searched.span(), searched.group(0)))


def test_the_lock_table_of_every_shipped_lock_is_the_patterns_search() -> None:
    from passprice.locks import _lock_table, lock_table_in

    for path in sorted((REPO / "locks").glob("*.lock.toml")):
        text = path.read_text(encoding="utf-8")
        found, searched = lock_table_in(text), _lock_table().search(text)
        assert found is not None and searched is not None and found.span() == searched.span(), path
