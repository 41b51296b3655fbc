"""Attack round 63 (issue 13): the newest surfaces — routing records, measurement files, stacks, ``import``,
``simulate`` traces, the review's markdown, ``--json`` on hostile names, concurrent edits and the cache folder. Each
test builds its reproducer and asserts the exit status and the words said."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke

ENTRY = REPO / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"


def _checkpoints_only(tmp_path: Path, name: str) -> Path:
    """A registry holding one good checkpoint entry and a copy of it under the file name ``name`` (+ ``.toml``)."""
    root = tmp_path / "root"
    folder = root / "registry" / "checkpoints"
    folder.mkdir(parents=True)
    (root / "facts").mkdir()
    shutil.copy(ENTRY, folder / ENTRY.name)
    shutil.copy(ENTRY, os.path.join(os.fsencode(folder), os.fsencode(name) + b".toml"))
    return root


# --- 1. a checkpoint file name whose bytes are not UTF-8 --------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="a file name of any bytes is a POSIX file system's")
def test_checkpoints_lists_past_an_entry_whose_file_name_is_not_utf8(tmp_path: Path) -> None:
    """Before: ``passprice checkpoints`` with ``registry/checkpoints/a\\xffb.toml`` (a copy of a good entry) printed a
    ``UnicodeEncodeError`` traceback and exited 1: the cache key of the listing's row encoded the name as UTF-8
    (``checkpoints.entry_row``), which a lone surrogate (the byte 0xff, as ``os.fsdecode`` keeps it) does not. Now
    the key holds the name's own bytes: the entry is refused by name (exit 2, the byte escaped) and the good one is
    still listed."""
    root = _checkpoints_only(tmp_path, os.fsdecode(b"a\xffb"))
    result = invoke("checkpoints", root=root)
    assert result.exit_code == 2
    assert result.stderr == (
        "passprice: error: registry/checkpoints/a\\udcffb.toml: entry.name: 'gemma3-270m-q4_k_m' does not "
        "match the file name 'a\\udcffb'\n"
    )
    assert result.stdout.splitlines()[2].startswith("gemma3-270m-q4_k_m ")
    result = invoke("checkpoints", "--json", root=root)
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert [row["name"] for row in document["checkpoints"]] == ["gemma3-270m-q4_k_m"]


# --- 2. a bidi control in a checkpoint file name, in --json's problems -----------------------------------------------


def test_a_misnamed_entry_is_named_escaped_in_json_problems(tmp_path: Path) -> None:
    """Before: an entry copied to ``registry/checkpoints/a\\u202eb.toml`` was named with the raw U+202E in ``check
    --json``'s and ``checkpoints --json``'s ``problems`` (``"…/a‮b.toml: entry.name: … does not match the file name
    'a\\u202eb'"``): the path was put in the line as it is, where every other problem's path is escaped
    (:func:`passprice.files.shown`), so a program printing the problem reordered the line. Now the path is escaped."""
    root = _checkpoints_only(tmp_path, "a\u202eb")
    result = invoke("checkpoints", "--json", root=root)
    assert result.exit_code == 2
    problems = json.loads(result.stdout)["problems"]
    assert len(problems) == 1
    assert "a\\u202eb.toml: entry.name: 'gemma3-270m-q4_k_m' does not match the file name 'a\\u202eb'" in problems[0]
    assert "\u202e" not in result.stdout + result.stderr


# --- 3. a bidi control in a source's or a stack's file name ----------------------------------------------------------


def _with_copy(tmp_path: Path, folder: str, original: str, name: str) -> Path:
    """A registry root holding ``folder/original`` of the checkout and a copy of it as ``folder/name.toml``."""
    root = tmp_path / "root"
    for part in ("facts", "registry", folder):
        (root / part).mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / folder / original, root / folder / original)
    shutil.copy(REPO / folder / original, root / folder / f"{name}.toml")
    return root


def test_a_source_file_named_with_a_bidi_control_is_named_escaped(tmp_path: Path) -> None:
    """Before: ``sources/a\\u202eb.toml`` (a copy of a good record) was refused in ``sources --json``'s and ``check
    --json``'s problems as ``"sources/a‮b.toml: 'a\\u202eb' is not a source id …"``, the path's U+202E raw (the id
    itself escaped). Now the path is escaped too, as every other problem's."""
    from passprice.registry import Root
    from passprice.sources import read_sources

    root = _with_copy(tmp_path, "sources", "nvidia-h200-datasheet.toml", "a\u202eb")
    found, problems = read_sources(Root(root))
    assert list(found) == ["nvidia-h200-datasheet"]
    assert problems == [
        f"{root}/sources/a\\u202eb.toml: 'a\\u202eb' is not a source id (lower-case letters, digits, '.' and '-', "
        "first a letter or digit): rename the file"
    ]


def test_validate_lists_no_stack_whose_file_name_check_refuses(tmp_path: Path) -> None:
    """Before: ``facts/stacks/a\\u202eb.toml`` (a copy of a registered stack), which ``check`` refuses by its name,
    was listed raw among ``validate --json``'s ``"registered"`` stacks (the list its hint names). Now only the stacks
    whose names are names are listed."""
    from passprice.registry import Root
    from passprice.validate import validate

    root = _with_copy(tmp_path, "facts/stacks", "llamacpp-cuda-2405.toml", "a\u202eb")
    assert validate(Root(root), runs=()).registered == ("llamacpp-cuda-2405",)


# --- 4. a stack fact's derivation of an unknown method --------------------------------------------------------------


def test_a_fit_of_an_unknown_method_names_the_keys_it_may_not_give(tmp_path: Path) -> None:
    """Before: a stack fact whose fit names ``method = "x"`` was refused (exit 2) with, beside the method's own
    line, ``overhead.pass.derivation: {'method': 'x', 'figure': 'tokens_per_s', 'digits': 4, … should not be valid
    under {'anyOf': [{'required': ['digits']}, …]}``: jsonschema's text, the table and the schema printed. Now the
    line names the keys the table may not give."""
    from passprice.errors import InputError
    from passprice.schema import load

    stack = REPO / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    path = tmp_path / "s.toml"
    path.write_text(stack.read_text(encoding="utf-8").replace('method = "nnls-relative-pass-time"', 'method = "x"', 1),
                    encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load(path, "stack", REPO / "schema", kept=False)
    said = str(raised.value)
    assert f"{path}: overhead.pass.derivation: 'digits', 'tolerance', 'errors' may not be given here" in said
    assert "overhead.pass.derivation.method: 'x' is not allowed here (one of 'nnls-relative-pass-time', 'min'" in said
    assert "should not be valid" not in said


# --- 5. a cache folder thousands of folders deep ---------------------------------------------------------------------


def test_a_cache_folder_path_past_the_bound_keeps_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: ``PASSPRICE_CACHE_DIR`` 3,000 folders deep (6 KB) made every ``passprice cards`` take 8.7 s, the
    second run too (1.6 s with no cache): each cache file's lookup resolved every folder of its path, and the code
    cache could not be written past ``PATH_MAX``. Now a cache folder whose path is longer than
    ``MAX_FOLDER_BYTES`` (1,024) keeps no cache (:func:`passprice.cachefolder.folder` raises, as for no home
    folder), and nothing is made there; one of 1,024 bytes is kept."""
    from passprice import cachefolder

    deep = str(tmp_path) + "/d" * 3000
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", deep)
    with pytest.raises(RuntimeError, match="longer than 1,024 bytes"):
        cachefolder.folder()
    result = invoke("cards", root=REPO)
    assert result.exit_code == 0 and "h200_sxm_141gb" in result.stdout
    assert not (tmp_path / "d").exists()
    bound = str(tmp_path) + "/c" + "c" * (cachefolder.MAX_FOLDER_BYTES - len(str(tmp_path)) - 2)
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", bound)
    assert len(bound) == cachefolder.MAX_FOLDER_BYTES and cachefolder.folder() == bound
