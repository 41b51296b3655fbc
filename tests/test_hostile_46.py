"""Attack round 46 (issue 13): split checkpoints of mixed shards, record names Windows cannot check out or that read
as another's, and card titles that are blank or read as another card's. Each test builds its reproducer and asserts
the exit status and the exact error line (before the round: exit 0, nothing said)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gguf import GGUFValueType as V

from cli_helpers import REPO, bad, invoke
from gguf_bytes import Meta, Tensor, encode

# --- 1. split checkpoints: a shard of another checkpoint, split keys of another type ---------------------------------


def _shard(path: Path, no: int, count: int, *, arch: str = "llama", declared: int | None = None,
           no_type: V = V.UINT16, count_type: V = V.UINT16) -> None:  # fmt: skip
    """Shard ``no`` (from 0) of ``count`` at ``path``: ``general.architecture`` ``arch``, the split keys (of the given
    types; ``split.tensors.count`` ``declared``, else 2 a shard) and two one-element F32 tensors of its own."""
    meta = [Meta("general.architecture", V.STRING, arch), Meta("split.no", no_type, no),
            Meta("split.count", count_type, count),
            Meta("split.tensors.count", V.INT32, 2 * count if declared is None else declared)]  # fmt: skip
    path.write_bytes(encode(meta, [Tensor(f"t{no}.{i}", (1,), 0, 32 * i) for i in range(2)]))


@pytest.mark.parametrize(("arch", "declared", "line"), [
    ("qwen2", None, "byte 56: general.architecture is 'qwen2' (string) but the first shard's is 'llama' (string): "
                    "the shards are of different checkpoints"),
    ("llama", 99, "byte 147: split.tensors.count is 99 but the shards hold 4"),
])  # fmt: skip
def test_a_shard_of_another_checkpoint_is_refused(tmp_path: Path, arch: str, declared: int | None, line: str) -> None:
    """Shard 2 of 2 stating ``general.architecture`` ``qwen2`` (or ``split.tensors.count`` 99) beside a first shard of
    ``llama`` (4): ``header`` joined them and printed "llama, 2 files", exit 0. gguf-split writes every key in the
    first shard and only the split keys in the others: a key both state must agree."""
    _shard(tmp_path / "m-00001-of-00002.gguf", 0, 2)
    _shard(tmp_path / "m-00002-of-00002.gguf", 1, 2, arch=arch, declared=declared)
    assert bad("header", str(tmp_path / "m-00001-of-00002.gguf")) == [
        f"passprice: error: {tmp_path / 'm-00002-of-00002.gguf'}: {line}"]


@pytest.mark.parametrize(("key", "kind", "at"), [
    ("split.no", V.FLOAT32, 89),   # read as shard 0 (0.0 == 0), the two shards joined
    ("split.count", V.INT32, 114),  # split.count -2: read as a whole checkpoint of one file
    ("split.count", V.STRING, 114),  # split.count "2": the same
])  # fmt: skip
def test_a_split_key_of_another_type_is_refused(tmp_path: Path, key: str, kind: V, at: int) -> None:
    """llama.cpp reads ``split.no`` and ``split.count`` as uint16 (its loader throws "wrong type" on any other). A
    float32 ``split.no`` was read as shard 0; an int32 ``split.count`` of -2 or a string one ("2") made the file
    named ``m-00001-of-00002.gguf`` read as an unsplit checkpoint; each exit 0."""
    first = tmp_path / "m-00001-of-00002.gguf"
    value: object = {"split.no": 0.0, "split.count": -2}.get(key) if kind != V.STRING else "2"
    types = {"no_type": kind} if key == "split.no" else {"count_type": kind}
    meta = [Meta("general.architecture", V.STRING, "llama"),
            Meta("split.no", types.get("no_type", V.UINT16), value if key == "split.no" else 0),
            Meta("split.count", types.get("count_type", V.UINT16), value if key == "split.count" else 2)]  # fmt: skip
    first.write_bytes(encode(meta, [Tensor("a", (1,), 0, 0)]))
    _shard(tmp_path / "m-00002-of-00002.gguf", 1, 2)
    name = {V.FLOAT32: "a float32", V.INT32: "an int32", V.STRING: "a string"}[kind]
    assert bad("header", str(first)) == [
        f"passprice: error: {first}: byte {at}: {key} is {name}, not a uint16 (GGUF's type for it, as llama.cpp's "
        "gguf-split writes it)"]


def test_a_shard_there_twice_is_refused(tmp_path: Path) -> None:
    """Shard 2 as ``m-00002-of-00002.gguf`` and as ``m-00002-of-00002.gguf.xz`` holding other tensors: the plain one was
    read, the other never judged (exit 0). Which one a checkpoint is made of is for its owner to say."""
    import lzma

    _shard(tmp_path / "m-00001-of-00002.gguf", 0, 2)
    _shard(tmp_path / "m-00002-of-00002.gguf", 1, 2)
    _shard(tmp_path / "other.gguf", 1, 2, arch="llama")
    (tmp_path / "m-00002-of-00002.gguf.xz").write_bytes(lzma.compress((tmp_path / "other.gguf").read_bytes()))
    first = tmp_path / "m-00001-of-00002.gguf"
    assert bad("header", str(first)) == [
        f"passprice: error: {first}: byte 114: split.count is 2 and shard 2 is there twice (m-00002-of-00002.gguf and "
        "m-00002-of-00002.gguf.xz): keep one of them"]


def test_shards_of_one_checkpoint_still_join(tmp_path: Path) -> None:
    """The rule leaves a real split alone: shards stating only the split keys, the first also the rest."""
    _shard(tmp_path / "m-00001-of-00002.gguf", 0, 2)
    _shard(tmp_path / "m-00002-of-00002.gguf", 1, 2)
    result = invoke("header", str(tmp_path / "m-00002-of-00002.gguf"))
    assert result.exit_code == 0, result.output
    assert "GGUF v3, little-endian, 2 files" in result.stdout


# --- 2. record names Windows cannot check out, or that print as another -------------------------------------------


def _root(tmp_path: Path) -> Path:
    """A private copy of the checkout's facts, registry, locks, sources and schema."""
    root = tmp_path / "root"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    return root


@pytest.mark.parametrize(("file", "line"), [
    ("CON .lock.toml", "the lock would be named after it, and the name 'CON ' starts or ends with a space, which no "
                       "listing shows; give --name"),
    ("COM\u00b9.lock.toml", "the lock would be named 'COM\u00b9' after it, and COM\u00b9 names a device on Windows, "
                            "where no file of that name can be checked out: give another file"),
])  # fmt: skip
def test_lock_o_refuses_a_name_windows_cannot_check_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str,
                                                        line: str) -> None:  # fmt: skip
    """``lock -o locks/FILE`` names the lock after the file: ``CON `` (Windows reads ``CON .lock.toml`` as the
    device), ``COM¹`` (a superscript digit is a port's digit there), ``a|b`` and ``a:b`` were written, exit 0, and
    ``check`` said all holds; ``--name`` refused each already."""
    root = _root(tmp_path)
    monkeypatch.chdir(root)
    lines = bad("lock", "gemma3-270m-h100", "-o", f"locks/{file}", root=root)
    assert lines == [f"passprice: error: locks/{file}: {line}"]
    assert not (root / "locks" / file).exists()


def test_check_and_cards_name_record_files_windows_cannot_check_out(tmp_path: Path) -> None:
    """Card files ``x .toml`` (listed as ``x``), ``con .toml`` and ``lpt³.toml``: ``check`` said "0 problems" and
    ``cards`` listed each, exit 0. Now each is a problem line (``con .toml`` two: a space at its end, and a device),
    the other cards still shown."""
    root = _root(tmp_path)
    cards = root / "facts" / "cards"
    text = (cards / "rtx_4090.toml").read_text(encoding="utf-8")
    for i, name in enumerate(["x ", "con ", "lpt\u00b3"]):
        (cards / f"{name}.toml").write_text(text.replace('name = "NVIDIA GeForce RTX 4090"', f'name = "Card {i}"'))
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    device = "names a device on Windows, where no file of that name (with any suffix) can be checked out: rename the " \
             "file (and what names it)"
    assert result.stderr.splitlines() == [
        "passprice: error: facts/cards/con .toml: the name 'con ' starts or ends with a space, which no listing "
        "shows; rename the file",
        "passprice: error: facts/cards/x .toml: the name 'x ' starts or ends with a space, which no listing shows; "
        "rename the file",
        f"passprice: error: facts/cards/con .toml: CON {device}",
        f"passprice: error: facts/cards/lpt\u00b3.toml: LPT\u00b3 {device} (spelled 'lpt\\xb3') (spelled 'LPT\\xb3')",
    ]
    listed = invoke("cards", root=root)
    assert listed.exit_code == 2 and "h200_sxm_141gb" in listed.stdout


# --- 3. card titles: blank, or read as another card's ------------------------------------------------------------


@pytest.mark.parametrize("title", ["   ", "\u00a0", "\u3000", "\u3164"])
def test_a_blank_card_title_is_refused(tmp_path: Path, title: str) -> None:
    """``card.name`` of spaces, a no-break space, an ideographic space or a Hangul filler passed the schema's "not
    empty", ``check``, ``cards`` and ``price`` (exit 0): a card shown as nothing in every table."""
    root = _root(tmp_path)
    card = root / "facts" / "cards" / "rtx_4090.toml"
    card.write_text(card.read_text(encoding="utf-8").replace('name = "NVIDIA GeForce RTX 4090"', f'name = "{title}"'))
    lines = bad("facts", "rtx_4090", root=root)
    if title == "\u3164":  # a Hangul filler is an invisible character to the one-line rule since attack80
        assert lines == [f"passprice: error: {card}: card.name: {title!r} holds a control character, a line "
                         "separator, a bidi control or an invisible character (a newline, a tab, U+2028, U+202E, "
                         "U+200B …): write it on one line"]
        return
    assert lines == [f"passprice: error: {card}: card.name: {title!r} is blank: give the card's title (it names the "
                     "card in every table)"]


@pytest.mark.parametrize(("title", "spelled"), [
    ("NVIDIA \u041d200 SXM 141GB", "\\u041d200"),  # a Cyrillic Н
    ("\uff2e\uff36\uff29\uff24\uff29\uff21 H200 SXM 141GB", "\\uff2e\\uff36\\uff29\\uff24\\uff29\\uff21"),  # full-width
])  # fmt: skip
def test_a_card_title_that_reads_as_another_cards_is_flagged(tmp_path: Path, title: str, spelled: str) -> None:
    """The RTX 4090's card retitled ``NVIDIA Н200 SXM 141GB`` (a Cyrillic ``Н``) or with a full-width ``ＮＶＩＤＩＡ``:
    ``check`` flagged the H200's title in another case or spacing, not these (exit 0), though a table shows them
    alike."""
    root = _root(tmp_path)
    card = root / "facts" / "cards" / "rtx_4090.toml"
    card.write_text(card.read_text(encoding="utf-8").replace('name = "NVIDIA GeForce RTX 4090"', f'name = "{title}"'))
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert (f"passprice: error: facts/cards/rtx_4090.toml: card.name: {title!r} is the title of h200_sxm_141gb.toml "
            f"too: a review's tables show a card by its title; give each card its own (spelled '{spelled}')"
            ) in result.stderr.splitlines()
