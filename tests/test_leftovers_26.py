"""Leftovers of issue 13 (session 26), each reproduced first.

1. A registry file's name holding a character no file name on Windows holds (``< > : " \\ | ? *``, a control
   character) passed ``check`` (``facts/cards/h200:b.toml``: exit 0, "all holds") and ``lock -o
   'locks/a:b.lock.toml'`` wrote a lock: the one rule of a name on every system (``registry.windows_problem``, which
   refused Windows device names already) now refuses them too, in ``check`` and the listings (one line, the path
   relative to the registry) and in ``lock -o`` (whatever ``--name``); ``new-serving``, ``import --name`` and ``synth
   --import`` take letters, digits, ``.``, ``_`` and ``-`` only (``fact set`` makes no card). A control character in
   a record file's name stays one line, the record name rule's ("does not print").
2. ``COM0`` and ``LPT0`` were not devices to that rule (``new-serving COM0``, ``import --name lpt0``, ``lock -o
   locks/COM0.lock.toml`` wrote records); they are, as Microsoft lists them, with ``COM¹``…``LPT³``. A source record's
   ``source.path`` is held to it in each part (``facts/cards/COM0.md`` passed).
3. ``check`` passed a checkpoint entry without ``embedding_length`` that ``checkpoints`` refused: both read one rule
   (``decode.header_problems``) and say one line; ``header NAME`` shows the header and says it on stderr.
4. ``sweep --cards all`` (and a sweep of every serving) named a file that does not read by its absolute path under
   ``--root``, where ``check`` and the listings name it relative to the registry.
5. ``synth`` took ``"num_hidden_layers": 2.0`` in a config.json as 2 (a whole float packed as the integer it equals);
   every non-integer where the header needs an integer (``2.0``, ``2e0``, ``2.5``, ``true``, ``"2"``) is refused,
   one line naming the file and key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_card, copy_root, invoke
from passprice.registry import windows_characters, windows_device, windows_problem

GEMMA_HEADER = str(REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz")
WINDOWS = ("no file name on Windows holds, where no file of that name can be checked out: rename the file (and what "
           "names it)")


def _check_lines(root: Path) -> tuple[int, list[str]]:
    result = invoke("check", root=root)
    return result.exit_code, result.stderr.splitlines()


# --- 1. characters Windows refuses in a file name --------------------------------------------------------------------


@pytest.mark.parametrize("char", ["<", ">", ":", '"', "\\", "|", "?", "*"])
def test_check_names_a_card_file_holding_a_character_windows_refuses(tmp_path: Path, char: str) -> None:
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    name = f"h200{char}b"
    copy_card(cards / "h200_sxm_141gb.toml", cards / f"{name}.toml")
    status, lines = _check_lines(root)
    assert status == 2
    line = f"passprice: error: facts/cards/{name}.toml: {char!r} is a character {WINDOWS}"
    assert [x for x in lines if name in x] == [line]
    # The listing says the same line and still lists every card, this one too (it reads).
    listed = invoke("cards", "--json", root=root)
    assert listed.exit_code == 2
    assert listed.stderr.splitlines() == [line]
    assert len(json.loads(listed.stdout)["cards"]) == 18


def test_check_passed_such_a_card_before(tmp_path: Path) -> None:
    """The reproducer's "before": without the character rule, the card ``h200:b`` is a card like any other (its
    title its own); the only line ``check`` says of it now is the character's."""
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    copy_card(cards / "h200_sxm_141gb.toml", cards / "h200_b.toml")
    assert _check_lines(root) == (0, [])
    (cards / "h200_b.toml").rename(cards / "h200:b.toml")
    status, lines = _check_lines(root)
    assert (status, lines) == (2, [f"passprice: error: facts/cards/h200:b.toml: ':' is a character {WINDOWS}"])


def test_a_control_character_in_a_non_record_file_is_named_and_in_a_card_file_is_one_line(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "facts" / "stacks" / "t\x01.json").write_text("{}", encoding="utf-8")
    (root / "registry" / "a|b.txt").write_text("", encoding="utf-8")
    cards = root / "facts" / "cards"
    copy_card(cards / "h200_sxm_141gb.toml", cards / "t\tab.toml")
    status, lines = _check_lines(root)
    assert status == 2
    assert lines == [
        "passprice: error: facts/cards/t\\tab.toml: the name t\\tab holds a character that does not print (a control "
        "character, a bidi control, an invisible, private-use or unassigned character or a byte that is not UTF-8): it "
        "would be shown on every line naming the record; rename the file",
        f"passprice: error: facts/stacks/t\\x01.json: '\\x01' is a character {WINDOWS}",
        f"passprice: error: registry/a|b.txt: '|' is a character {WINDOWS}",
    ]


@pytest.mark.parametrize("file", ["a:b.lock.toml", "q?.lock.toml", "x|y.lock.toml", "s*.lock.toml", "lt<.lock.toml"])
def test_lock_o_refuses_a_file_name_windows_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     file: str) -> None:  # fmt: skip
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    before = sorted(p.name for p in (root / "locks").iterdir())
    stem = file.removesuffix(".lock.toml")
    char = repr(next(c for c in stem if c in '<>:"\\|?*'))
    assert bad("lock", "r1-qwen7b-h200", "-o", f"locks/{file}", root=root) == [
        f"passprice: error: locks/{file}: the lock would be named {stem!r} after it, and {char} is a character no "
        "file name on Windows holds, where no file of that name can be checked out: give another file"
    ]
    # with --name the lock's name is a name, and the file still is none
    assert bad("lock", "r1-qwen7b-h200", "-o", f"locks/{file}", "--name", "fine", root=root) == [
        f"passprice: error: locks/{file}: {char} is a character no file name on Windows holds, where no file of that "
        "name can be checked out, and a registry is reviewed on every system: give another file"
    ]
    assert sorted(p.name for p in (root / "locks").iterdir()) == before


def test_lock_o_with_a_name_refuses_a_device_file_name_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    assert bad("lock", "r1-qwen7b-h200", "-o", "locks/nul.lock.toml", "--name", "fine", root=root) == [
        "passprice: error: locks/nul.lock.toml: NUL names a device on Windows, where no file of that name can be "
        "checked out, and a registry is reviewed on every system: give another file"
    ]
    assert not (root / "locks" / "nul.lock.toml").exists()
    # outside the registry the file is the user's own
    out = tmp_path / "mine.lock.toml"
    assert invoke("lock", "r1-qwen7b-h200", "-o", str(out), "--name", "fine", root=root).exit_code == 0
    assert out.is_file()


@pytest.mark.parametrize("args, line", [
    (("new-serving", "a:b", "r1-qwen7b-h200"),
     "serving name 'a:b': use letters, digits, '.', '_' and '-' (first a letter or digit)"),
    (("import", GEMMA_HEADER, "--name", "q?"),
     "checkpoint name 'q?': use letters, digits, '.', '_' and '-' (first a letter or digit)"),
    (("lock", "r1-qwen7b-h200", "--name", "x|y"),
     "Invalid value for --name: 'x|y' is not a lock name: use letters, digits, '.', '_' and '-' (first a letter or "
     "digit) (see 'cli lock --help')"),
    (("fact", "set", "a:b", "memory.bandwidth", "--value", "1", "--unit", "TB/s", "--provenance", "assumed",
      "--source", "nvidia-h200", "--locator", "x"),
     "card 'a:b': not found in facts/cards (registered: a100_pcie_80gb, a100_sxm4_80gb, a40, b200, "
     "h100_pcie_80gb, h100_sxm5_80gb, h200_sxm_141gb, l40s, mi300x, rtx_3080, rtx_3090, rtx_4080, rtx_4090, "
     "rtx_6000_ada, rtx_a6000, sn40l, ws1_hypothetical); a card not registered is a file of your own: copy the "
     "closest registered card's file to facts/cards/NAME.toml and set its facts (README, 'A card of your own')"),
])  # fmt: skip
def test_the_commands_that_make_a_record_refuse_such_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            args: tuple[str, ...], line: str) -> None:  # fmt: skip
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    assert bad(*args, root=root) == [f"passprice: error: {line.replace('ROOT', str(root))}"]
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before


def test_windows_characters_are_each_said_once_in_order() -> None:
    assert windows_characters("a:b:c?d") == ["':'", "'?'"]
    assert windows_characters("plain-name_1.2") == []
    assert windows_problem("a\tb|c") == "'\\t', '|' are characters no file name on Windows holds"
    assert windows_problem("h200_sxm_141gb") is None


# --- 2. COM0, LPT0 and the superscript ports -------------------------------------------------------------------------


@pytest.mark.parametrize("name, device", [
    ("COM0", "COM0"), ("lpt0", "LPT0"), ("com0.v2", "COM0"), ("COM\u00b9", "COM\u00b9"), ("com\u00b2", "COM\u00b2"),
    ("COM\u00b3", "COM\u00b3"), ("LPT\u00b9", "LPT\u00b9"), ("lpt\u00b2.x", "LPT\u00b2"), ("LPT\u00b3", "LPT\u00b3"),
    ("COM9", "COM9"), ("lpt1", "LPT1"),
])  # fmt: skip
def test_every_port_microsoft_reserves_is_a_device(name: str, device: str) -> None:
    assert windows_device(name) == device
    assert windows_problem(name) == f"{device} names a device on Windows"


@pytest.mark.parametrize("name", ["COM10", "LPT", "com", "compute", "lpt0x"])
def test_a_name_that_only_starts_like_a_port_is_a_name(name: str) -> None:
    assert windows_device(name) is None


@pytest.mark.parametrize("args, line", [
    (("new-serving", "COM0", "r1-qwen7b-h200"),
     "serving name 'COM0': COM0 names a device on Windows, where no file of that name (with any suffix) can be "
     "checked out: give another name"),
    (("import", GEMMA_HEADER, "--name", "lpt0"),
     "checkpoint name 'lpt0': LPT0 names a device on Windows, where no file of that name (with any suffix) can be "
     "checked out: give another name"),
    (("lock", "r1-qwen7b-h200", "-o", "locks/COM0.lock.toml"),
     "locks/COM0.lock.toml: the lock would be named 'COM0' after it, and COM0 names a device on Windows, where no "
     "file of that name can be checked out: give another file"),
    (("lock", "r1-qwen7b-h200", "--name", "Lpt0"),
     "Invalid value for --name: 'Lpt0' is not a lock name: LPT0 names a device on Windows, where no file of that "
     "name can be checked out (see 'cli lock --help')"),
])  # fmt: skip
def test_com0_and_lpt0_are_refused_where_a_record_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          args: tuple[str, ...], line: str) -> None:  # fmt: skip
    """Before: ``new-serving COM0`` wrote registry/servings/COM0.toml, ``import --name lpt0`` an entry and ``lock -o
    locks/COM0.lock.toml`` a lock, each exit 0."""
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    assert bad(*args, root=root) == [f"passprice: error: {line}"]
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before


def test_check_names_a_com0_card_file(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    copy_card(cards / "h200_sxm_141gb.toml", cards / "COM0.toml")
    status, lines = _check_lines(root)
    assert status == 2
    assert lines == [
        "passprice: error: facts/cards/COM0.toml: COM0 names a device on Windows, where no file of that name (with any "
        "suffix) can be checked out: rename the file (and what names it)"
    ]


def test_a_source_path_naming_a_device_is_a_problem_of_the_source(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    record = root / "sources" / "passprice-card-review.toml"
    text = record.read_text(encoding="utf-8")
    assert 'path = "facts/cards/README.md"' in text
    (root / "docs").mkdir()
    (root / "docs" / "COM0.md").write_bytes((root / "facts" / "cards" / "README.md").read_bytes())
    record.write_text(text.replace('path = "facts/cards/README.md"', 'path = "docs/COM0.md"'), encoding="utf-8")
    status, lines = _check_lines(root)
    assert status == 2
    line = ("sources/passprice-card-review.toml: source.path: docs/COM0.md: COM0 names a device on Windows, where no "
            "file of that name can be checked out: rename the document (and source.path)")
    assert f"passprice: error: {line}" in lines
    # every card citing it is refused by price as check refuses it (one rule for a citation nobody can trace)
    price = invoke("price", "r1-qwen7b-h200", root=root)
    assert price.exit_code == 2
    assert (f"passprice: error: facts/cards/h200_sxm_141gb.toml: host.capacity.source: source 'passprice-card-review' "
            f"names no document of this registry: {line}") in [
        x.replace(f"{root}/", "") for x in price.stderr.splitlines()
    ]


# --- 3. a checkpoint entry without embedding_length ------------------------------------------------------------------


def test_check_and_checkpoints_refuse_an_entry_without_embedding_length_in_one_line(tmp_path: Path) -> None:
    """``llama31-8b-q4_0`` is named by no serving: before, ``check`` said "all holds" (exit 0) while ``checkpoints``
    refused it (exit 2); ``header NAME`` showed it without a word."""
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "llama31-8b-q4_0.toml"
    text = entry.read_text(encoding="utf-8")
    key = '"llama.embedding_length" = { type = "uint32", value = 4096 }\n'
    assert text.count(key) == 1
    entry.write_text(text.replace(key, ""), encoding="utf-8")
    line = ("registry/checkpoints/llama31-8b-q4_0.toml: metadata llama.embedding_length: missing (the width of a "
            "token-row)")
    status, lines = _check_lines(root)
    assert (status, lines) == (2, [f"passprice: error: {line}"])
    listed = invoke("checkpoints", "--json", root=root)
    assert listed.exit_code == 2
    assert listed.stderr.splitlines() == [f"passprice: error: {line}"]
    names = [row["name"] for row in json.loads(listed.stdout)["checkpoints"]]
    assert "llama31-8b-q4_0" not in names and len(names) == 20  # 21 entries, moe46 and moe48 each added one
    shown = invoke("header", "llama31-8b-q4_0", root=root)
    assert shown.exit_code == 0
    assert shown.stdout.startswith(f"{entry}\n")
    assert shown.stderr.splitlines() == [
        f"passprice: warning: {line} (check, checkpoints and every price refuse it)"
    ]


def test_header_of_a_sound_entry_says_nothing_on_stderr() -> None:
    shown = invoke("header", "llama31-8b-q4_0")
    assert shown.exit_code == 0 and shown.stderr == ""


# --- 4. a sweep names a file that does not read as check does --------------------------------------------------------


def test_sweep_of_every_card_names_an_unreadable_card_relative_to_the_registry(tmp_path: Path) -> None:
    """The test runs outside the root (``--root`` absolute), where paths are not rewritten as given: before, the line
    was ``/…/root/facts/cards/zz_broken.toml: …``."""
    root = copy_root(tmp_path)
    assert not Path.cwd().is_relative_to(root)
    (root / "facts" / "cards" / "zz_broken.toml").write_text("x =\n", encoding="utf-8")
    line = "facts/cards/zz_broken.toml: not valid TOML: Invalid value (at line 1, column 4)"
    assert bad("sweep", "r1-qwen7b-h200", "--cards", "all", "--batches", "1", root=root) == [
        f"passprice: error: {line}"
    ]
    listed = invoke("cards", root=root)  # as the listing names it (and lists the good ones)
    assert listed.exit_code == 2
    assert listed.stderr.splitlines() == [f"passprice: error: {line}"]


def test_sweep_of_every_serving_names_an_unreadable_serving_relative_to_the_registry(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "registry" / "servings" / "zz_broken.toml").write_text("x =\n", encoding="utf-8")
    assert bad("sweep", "--batches", "1", root=root) == [
        "passprice: error: registry/servings/zz_broken.toml: not valid TOML: Invalid value (at line 1, column 4)"
    ]


# --- 5. a non-integer in a model's config.json -----------------------------------------------------------------------


WHOLE = "is not of type 'integer' (a whole number, written without a decimal point or exponent"


@pytest.mark.parametrize("value, said", [
    ("2.0", f"2.0 {WHOLE}: 2)"),
    ("2e0", f"2e0 {WHOLE}: 2)"),
    ("2.5", f"2.5 {WHOLE})"),
    ("true", "true is not of type 'integer'"),
    ('"2"', "'2' is not of type 'integer'"),
])  # fmt: skip
def test_synth_refuses_a_non_integer_layer_count(tmp_path: Path, value: str, said: str) -> None:
    """Before: ``2.0`` (and ``2e0``) built a header of 2 blocks, exit 0; the others were refused already."""
    text = (REPO / "examples" / "configs" / "llama-2-7b.json").read_text(encoding="utf-8")
    assert text.count('"num_hidden_layers": 32') == 1
    config = tmp_path / "config.json"
    config.write_text(text.replace('"num_hidden_layers": 32', f'"num_hidden_layers": {value}'), encoding="utf-8")
    out = tmp_path / "h.gguf"
    assert bad("synth", str(config), "-o", str(out)) == [
        f"passprice: error: {config}: config.num_hidden_layers: {said}"
    ]
    assert not out.exists()


def test_synth_builds_the_layers_an_integer_gives(tmp_path: Path) -> None:
    text = (REPO / "examples" / "configs" / "llama-2-7b.json").read_text(encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text(text.replace('"num_hidden_layers": 32', '"num_hidden_layers": 2'), encoding="utf-8")
    out = tmp_path / "h.gguf"
    assert invoke("synth", str(config), "-o", str(out)).exit_code == 0
    from passprice.gguf_header import read_header

    assert read_header(out, cache=False).meta_int("block_count") == 2
