"""Slip round 31 (issue 13): the result memo replays a command's output only while everything the run looked at is
as it was, names it looked up by their status alone (``os.stat``, ``os.path.exists``) outside the working folder
too. Runs are started as ``tests/test_memo.py`` starts them (the console script's entry; a replay told by
``passprice.cli`` made unimportable)."""
from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest
from tests.cli_helpers import REPO, copy_root
from tests.test_memo import HALTED, run


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    """A private registry, a cache folder, and the environment every run gets (``tests/test_memo.py``'s)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = str(tmp_path / "cache")
    return {"root": copy_root(tmp_path), "cache": tmp_path / "cache", "env": env, "tmp": tmp_path}


def mo_file(path: Path, pairs: dict[str, str]) -> None:
    """Write a GNU gettext catalogue (``.mo``, little-endian, no hash table) translating each key of ``pairs``."""
    keys = sorted(pairs)
    ids = b"".join(k.encode() + b"\0" for k in keys)
    strs = b"".join(pairs[k].encode() + b"\0" for k in keys)
    n = len(keys)
    start = 7 * 4 + 16 * n
    table_o, table_t, o = [], [], 0
    for k in keys:
        table_o += [len(k.encode()), start + o]
        o += len(k.encode()) + 1
    o = 0
    for k in keys:
        table_t += [len(pairs[k].encode()), start + len(ids) + o]
        o += len(pairs[k].encode()) + 1
    head = struct.pack("<7I", 0x950412DE, 0, n, 7 * 4, 7 * 4 + 8 * n, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(head + struct.pack(f"<{2 * n}I", *table_o) + struct.pack(f"<{2 * n}I", *table_t) + ids + strs)


def test_a_translation_installed_where_gettext_looked_misses(world: dict[str, Any]) -> None:
    # click's messages go through gettext, which looks for LANG/LC_MESSAGES/messages.mo under
    # sys.base_prefix/share/locale by os.path.exists alone (no open while none is there). The child points that
    # folder at one of the test's (the interpreter's own is shared). Before: the translation installed, a fresh
    # `cards --help` printed "Affiche ce message." and the memo replayed the English text, status 0.
    locale = world["tmp"] / "locale"
    patch = f"import gettext; gettext._default_localedir = {str(locale)!r}"
    env = {**world["env"], "LANGUAGE": "fr"}
    world["env"] = env
    args = ("cards", "--help")
    first = run(world, *args, patch=patch)
    assert first.returncode == 0
    again = run(world, *args, patch=patch, replay=True)
    assert HALTED not in again.stderr.decode(), again.stderr.decode()
    mo_file(locale / "fr" / "LC_MESSAGES" / "messages.mo", {"Show this message and exit.": "Affiche ce message."})
    new = run(world, *args, patch=patch, env={**env, "PASSPRICE_NO_MEMO": "1"})
    assert b"Affiche ce message." in new.stdout
    again = run(world, *args, patch=patch, replay=True)
    assert HALTED in again.stderr.decode(), again.stdout.decode()


def test_a_dangling_link_where_nothing_was_misses(world: dict[str, Any]) -> None:
    # git counts each include.path naming something (a link to nothing too: os.path.lexists) against its limit of
    # 1,000; passprice's check does so too (gitconfig.MAX_INCLUDES) and names the config file past it. The memo
    # stamped the name that was absent as "nothing there" and a link to nothing read so too: after the link was made,
    # a fresh check named the config file while the memo replayed "all holds".
    # The registry checked is an empty one (facts/ and registry/ folders, nothing in them): the git config is read, and
    # stamped, whatever the registry holds; a check of the whole registry was ~3 s of CPU more for the four runs, the
    # first with a cold cache (session 39).
    from passprice.gitconfig import MAX_INCLUDES

    root = world["root"] = world["tmp"] / "empty"
    for folder in ("facts", "registry", ".git"):
        (root / folder).mkdir(parents=True)
    included = world["tmp"] / "included"
    included.mkdir()
    lines = []
    for n in range(MAX_INCLUDES):
        (included / f"{n}.conf").write_text("")
        lines.append(f"[include]\n\tpath = {included / f'{n}.conf'}\n")
    (world["tmp"] / "other").mkdir()  # a folder the run lists nothing of: only the one name looked up in it
    ghost = world["tmp"] / "other" / "ghost.conf"
    lines.append(f"[include]\n\tpath = {ghost}\n")
    config = world["tmp"] / "gitconfig"
    config.write_text("".join(lines))
    world["env"] = {**world["env"], "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1"}
    first = run(world, "check")
    assert first.returncode == 0, first.stderr.decode()
    again = run(world, "check", replay=True)
    assert HALTED not in again.stderr.decode(), again.stderr.decode()
    ghost.symlink_to(world["tmp"] / "nowhere.conf")
    new = run(world, "check", env={**world["env"], "PASSPRICE_NO_MEMO": "1"})
    assert b"more than 1,000 files included" in new.stdout + new.stderr, (new.stdout + new.stderr).decode()[-2000:]
    again = run(world, "check", replay=True)
    assert HALTED in again.stderr.decode(), again.stdout.decode()[-2000:]


def test_a_file_an_argument_names_under_an_entry_name_in_the_cache_misses_when_replaced(world: dict[str, Any]) -> None:
    # The cache's own folders and the entries in them are left out of the stamp (keyed by content already); a GGUF
    # file given to `header` under an entry's name in `documents` was left out too: replaced by another model's
    # header, the memo replayed the first architecture (qwen35) where a fresh run prints the new one (qwen3next).
    data = REPO / "tests" / "data"
    folder = world["cache"] / "documents"
    folder.mkdir(parents=True)
    gguf = folder / f"{'a' * 64}.json"
    gguf.write_bytes((data / "qwen35-27b-like.header.gguf").read_bytes())
    first = run(world, "header", str(gguf))
    assert first.returncode == 0, first.stderr.decode()
    assert b"qwen35 " in first.stdout
    again = run(world, "header", str(gguf), replay=True)
    assert HALTED not in again.stderr.decode(), again.stderr.decode()
    other = folder / "other.tmp.gguf"
    other.write_bytes((data / "qwen3next-80b-a3b-like.header.gguf").read_bytes())
    other.replace(gguf)
    new = run(world, "header", str(gguf), env={**world["env"], "PASSPRICE_NO_MEMO": "1"})
    assert b"qwen3next " in new.stdout, new.stdout.decode()
    again = run(world, "header", str(gguf), replay=True)
    assert HALTED in again.stderr.decode(), again.stdout.decode()
