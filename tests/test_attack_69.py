"""Session 40, attack69: session 39's new code attacked as an attacker would (issue 13), each escape kept here with
its reproducer built in the test.

1. ``attention.sliding_window_pattern`` was read unchecked (:func:`passprice.decode._windowed_layers`): 1,000 flags
   for gemma3's 18 blocks priced the first 18 (exit 0, and ``import`` wrote the entry); a period of 0 windowed no
   layer where llama.cpp's ``set_swa_pattern`` windows every one; ``-3`` windowed none; flags of ``5`` and ``-1``
   read as true. Each is refused naming the file and the key (:func:`passprice.decode.all_header_problems`).
2. ``sweep --positions 1--5`` was told "runs from high to low: write -5-1" (a range no line may hold); ``0--0`` was
   read as the range 0-0.
3. :func:`passprice.errors.json_escaped` writes a lone high surrogate followed by a lone low one as the escapes
   ``json.dumps(..., ensure_ascii=True)`` writes, which JSON reads back as one character: decided and documented,
   pinned here against the standard library.
4. What held (the stamps file forged, a FIFO or ``/dev/zero`` in its place): pinned cheaply.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs
import pytest

from cli_helpers import REPO
from passprice.checkpoints import load_checkpoint
from passprice.decode import all_header_problems
from passprice.errors import InputError, escaped, json_escaped
from passprice.gguf_header import GGUFHeader, LongArray
from passprice.registry import find_root

# --- 1. the window pattern -------------------------------------------------------------------------------------------

KEY = "gemma3.attention.sliding_window_pattern"


@pytest.fixture(scope="module")
def gemma() -> GGUFHeader:
    """Gemma 3 270M's registered header: 18 blocks, windowed 5 of every 6 at 512 positions."""
    return load_checkpoint(find_root(REPO), "gemma3-270m-q4_k_m")


def _with(header: GGUFHeader, value: Any) -> list[str]:
    return all_header_problems(attrs.evolve(header, metadata={**header.metadata, KEY: value}))


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ((True,) * 1000, "1,000 flags, but the header has 18 blocks (one flag a layer: more layers than exist)"),
        ((), "0 flags, but the header has 18 blocks (one flag a layer: the rest would be read as full)"),
        ((True,) * 17, "17 flags, but the header has 18 blocks (one flag a layer: the rest would be read as full)"),
        ((1,) * 17 + (5,), "5 is not a flag (true/false or 0/1, one a layer)"),
        ((0,) * 17 + (-1,), "-1 is not a flag (true/false or 0/1, one a layer)"),
        (0, "0 (a period of 0 windows every layer in llama.cpp and none by the period rule i % p < p - 1: give the "
            "period, or one flag a layer)"),
        (-3, "-3 is not a period (a whole number >= 1) or one flag a layer"),
        (6.0, "6.0 is not a period (a whole number >= 1) or one flag a layer"),
        ("6", "'6' is not a period (a whole number >= 1) or one flag a layer"),
        (True, "true is not a period (a whole number >= 1) or one flag a layer"),
        (LongArray("bool", 70_000), "an array of 70,000 bool values, but the header has 18 blocks (one flag a layer)"),
    ],
)
def test_a_bad_window_pattern_is_refused_naming_the_file_and_key(gemma: GGUFHeader, value: Any, said: str) -> None:
    assert _with(gemma, value) == [f"{gemma.source}: metadata {KEY}: {said}"]


def test_flags_too_many_to_keep_are_said_so(gemma: GGUFHeader) -> None:
    header = attrs.evolve(gemma, metadata={**gemma.metadata, "gemma3.block_count": 2000})
    said = _with(header, LongArray("bool", 2000))
    assert f"{gemma.source}: metadata {KEY}: 2,000 flags, an array longer than passprice keeps (at most 1,024 " \
        "elements), so which layers are windowed cannot be read" in said


def test_a_good_window_pattern_is_priced_as_it_says(gemma: GGUFHeader) -> None:
    """A period of 6 (gemma3's own), of 2^31 - 1 (every layer windowed: llama.cpp's rule too), and 18 flags, as
    bools or as 0/1, pass; the flags are the windowed layers."""
    from passprice.decode import _windowed_layers

    flags = (True, False) * 9
    for value in (6, 2**31 - 1, flags, tuple(int(f) for f in flags)):
        assert _with(gemma, value) == []
    header = attrs.evolve(gemma, metadata={**gemma.metadata, KEY: tuple(int(f) for f in flags)})
    assert _windowed_layers(header, 18) == (512, list(flags))


def test_a_header_file_with_too_many_flags_is_refused_by_price_and_import(tmp_path: Path, gemma: GGUFHeader) -> None:
    """End to end, the file as an attacker writes it: ``price --checkpoint`` exited 0 on it and ``import`` wrote
    an entry; both now exit 2 with the one line."""
    from gguf import GGUFValueType as V

    import gguf_bytes as gb
    from cli_helpers import bad

    meta, tensors = gb.decode(gemma)
    meta.append(gb.Meta(KEY, V.ARRAY, gb.Array(V.BOOL, (True,) * 1000)))
    path = tmp_path / "flags.gguf"
    path.write_bytes(gb.encode(meta, tensors))
    line = (f"passprice: error: {path}: metadata {KEY}: 1,000 flags, but the header has 18 blocks (one flag a layer: "
            "more layers than exist)")
    priced = bad("price", "gemma3-270m-h100", "--checkpoint", str(path))
    assert priced == [line]
    root = tmp_path / "root"
    (root / "registry" / "checkpoints").mkdir(parents=True)
    (root / "facts").mkdir()
    imported = bad("import", str(path), root=root)
    assert imported == [f"{line} (nothing imported: check, checkpoints and every price refuse such an entry)"]
    assert list((root / "registry" / "checkpoints").iterdir()) == []


# --- 2. sweep ranges -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1--5", "0--0", "2--3*2"])
def test_a_range_to_a_signed_end_is_not_a_range(text: str) -> None:
    from passprice.sweep import parse_numbers

    with pytest.raises(InputError) as e:
        parse_numbers(text, int, "--batches")
    assert str(e.value) == f"--batches: {text!r} is not a number, a range A-B, or a doubling range A-B*2"


# --- 3. a lone surrogate pair in JSON --------------------------------------------------------------------------------


def test_a_lone_high_then_low_surrogate_is_written_as_the_standard_library_writes_it() -> None:
    """Decided (session 38's leftover): JSON has one spelling of the two lone surrogates and of the character they
    pair to, so ``json_escaped`` writes what ``json.dumps(ensure_ascii=True)`` writes; the text form keeps them
    apart."""
    pair = "\ud83d" + "\ude00"
    written = json_escaped(json.dumps({"k": pair}, ensure_ascii=False))
    assert written == json.dumps({"k": pair}, ensure_ascii=True) == '{"k": "\\ud83d\\ude00"}'
    assert json.loads(written) == {"k": "\U0001f600"}
    assert json_escaped(json.dumps("\U0001f600", ensure_ascii=False)) == '"\U0001f600"'  # it prints: as it is
    assert escaped(pair) == "\\ud83d\\ude00" and escaped("\U0001f600") == "\U0001f600"


# --- 4. what held: the stamps file replaced by a special file ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_special_file_in_place_of_the_stamps_file_gives_no_record_and_no_wait(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import filestamps

    filestamps.flush()
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "cache" / "stamps" / f"{filestamps._key()}.stamps"
    path.parent.mkdir(mode=0o700, parents=True)
    {"fifo": os.mkfifo, "dev-zero": lambda p: os.symlink("/dev/zero", p), "folder": os.mkdir}[kind](path)
    try:
        assert filestamps._loaded() == {}
    finally:
        filestamps.flush()


# --- 5. a sweep axis holding a value twice ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("gemma3-270m-h100", "--batches", "1", "--positions", "1,1,1"), "--positions: 1.0"),
        (("gemma3-270m-h100", "--batches", "1", "--positions", "1-4,2-3"), "--positions: 2.0"),
        (("gemma3-270m-h100", "--batches", "8,1-64*2"), "--batches: 8"),
        (("gemma3-270m-h100", "gemma3-270m-h100", "--batches", "1"), "SERVINGS: 'gemma3-270m-h100'"),
    ],
)
def test_a_sweep_value_given_twice_is_refused_as_a_sweep_file_is(args: tuple[str, ...], said: str) -> None:
    """``sweep --positions 1,1,1`` wrote each row three times, exit 0 (``1-4,2-3`` twice each of 2 and 3; the same
    for batches, cards and servings), where a sweep file holding a value twice is refused by its schema."""
    from cli_helpers import bad

    assert bad("sweep", *args) == [
        f"passprice: error: {said} is given more than once: a sweep prices each point once (a sweep file is refused "
        "the same)"]
    # a card given twice: said as every command that takes --cards says it (test_fix181.py, one parser)
    assert bad("sweep", "gemma3-270m-h100", "--batches", "1", "--cards", "h100_sxm5_80gb,h100_sxm5_80gb") == [
        "passprice: error: --cards: 'h100_sxm5_80gb' is given more than once: each card is priced once"]


# --- 6. a figure in another unit, quoted twice -----------------------------------------------------------------------


def test_a_figure_quoted_twice_in_another_unit_is_said_once() -> None:
    """left45's ``in_own_unit`` meant to say each figure once but compared it with what it had said ("3352 GB/s"
    against "3352 GB/s (3.352 TB/s)"): a locator quoting the SXM and NVL columns' 3352 GB/s read "the locator quotes
    3352 GB/s (3.352 TB/s), 3352 GB/s (3.352 TB/s)". A NaN or infinite amount (no card holds one: the schema bounds
    a value to 1e30) raised ValueError from Fraction, where the docstring says it raises nothing."""
    from passprice.addedfacts import in_own_unit, other_figures

    text = "'Memory Bandwidth 3352 GB/s (SXM) | 3352 GB/s (NVL)'"
    assert in_own_unit(3.35, "TB/s", text) == ["3352 GB/s (3.352 TB/s)"]
    assert in_own_unit(3.35, "TB/s", text * 20) == ["3352 GB/s (3.352 TB/s)"]
    for amount in (float("nan"), float("inf")):
        assert in_own_unit(amount, "TB/s", text) == [] and other_figures(amount, "TB/s", text) is None


# --- 7. explain a --json key by its path ------------------------------------------------------------------------------


def test_a_json_key_is_explained_by_its_path_as_jq_writes_it() -> None:
    """``explain card_facts.unread`` (audit --json's key, session 39) said "not a term", where ``explain unread``
    explains it; a path's last key is looked up, never a digit that is not ASCII (test_hostile_52)."""
    from passprice import glossary

    for path, term in ((".calibration[0].card_facts.unread", "stack"), ("card_facts.unread", "stack"),
                       ("sources_changed[].added", "source"), ("x.tokens_per_s", "tokens/s")):
        assert glossary.lookup(path).name == term, path
    for path in ("a.b.c", "draft.acceptance.\u0661", "[0]"):
        with pytest.raises(InputError, match=r" is not a term passprice defines"):
            glossary.lookup(path)
    # an empty key (a trailing dot, two together) is refused by name, as a fact path's is (left56, session 42)
    for path in ("..", "x.tokens_per_s."):
        with pytest.raises(InputError, match=r": an empty key in the path \(two dots together, or one at its end\)"):
            glossary.lookup(path)
