"""The result memo's stamp of the working folder (issue 16, performance round 18): a run is stamped with what it
looked up there — each name it asked the status of (``os.stat``, ``os.lstat``, ``os.access``, ``os.readlink``,
which raise no audit event), each argument, ``facts`` and ``registry`` — not with the folder's whole listing, so a
file another process writes in a busy working folder (``/tmp``) no longer spoils every replay; a file created under
a name the run looked up is a miss, never a stale replay; and a folder the run imports from (``sys.path``'s ``""``:
``python -c``) is still stamped whole.

Runs are started as ``tests/test_memo.py`` starts them (the console script's entry; a replay told by
``passprice.cli`` made unimportable), with ``-P`` so that the working folder is not on ``sys.path``, as for the
installed ``passprice`` command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.cli_helpers import copy_root
from tests.test_memo import CHILD, HALTED, R1

CARD = "h200_sxm_141gb"  # the card r1-qwen7b-h200 names: looked up in the working folder by the lock's guard


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    root = copy_root(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = str(tmp_path / "cache")
    env["PASSPRICE_MEMO_DEBUG"] = "1"
    return {"root": root, "work": work, "env": env}


def run(w: dict[str, Any], *args: str, replay: bool = False, safe: bool = True,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    lines = "\nsys.modules['passprice.cli'] = None" if replay else ""
    flags = ["-P"] if safe else []
    return subprocess.run(
        [sys.executable, *flags, "-c", CHILD.format(patch=lines), "--root", str(w["root"]), *args],
        cwd=w["work"], env=env or w["env"], capture_output=True, timeout=300,
    )


def replayed(w: dict[str, Any], *args: str, safe: bool = True) -> bool:
    done = run(w, *args, replay=True, safe=safe)
    said = done.stderr.decode()
    assert HALTED in said or "memo: replayed" in said, said
    return HALTED not in said


def test_a_file_the_run_never_looked_up_is_no_miss(world: dict[str, Any]) -> None:
    first = run(world, "price", R1, "--json")
    assert first.returncode == 0, first.stderr.decode()
    assert b"memo: kept" in first.stderr
    (world["work"] / "other.log").write_text("another program's file\n")
    (world["work"] / "scratch").mkdir()
    assert replayed(world, "price", R1, "--json")
    again = run(world, "price", R1, "--json", replay=True)
    assert again.stdout == first.stdout


def test_a_file_created_under_a_name_the_run_looked_up_misses(world: dict[str, Any]) -> None:
    # The serving's card name is looked up in the working folder (locks.portable: a file of that name there is a
    # path, not the registry's card) by os.stat alone: no argument names it.
    first = run(world, "price", R1, "--json")
    assert b"memo: kept" in first.stderr, first.stderr.decode()
    assert replayed(world, "price", R1, "--json")
    (world["work"] / CARD).write_text("")
    assert not replayed(world, "price", R1, "--json")
    # Removed again, the world is as the entry was stamped: a replay.
    (world["work"] / CARD).unlink()
    assert replayed(world, "price", R1, "--json")
    # A folder of the name is a change too.
    (world["work"] / CARD).mkdir()
    assert not replayed(world, "price", R1, "--json")


def test_a_file_named_by_an_argument_misses(world: dict[str, Any]) -> None:
    run(world, "price", R1, "--json")
    assert replayed(world, "price", R1, "--json")
    (world["work"] / R1).write_text("")
    assert not replayed(world, "price", R1, "--json")


def test_a_working_folder_on_sys_path_is_stamped_whole(world: dict[str, Any]) -> None:
    # Without -P, python -c puts "" (the working folder) first on sys.path: a module created there could shadow one
    # the command imports, so any new name in it is a miss.
    first = run(world, "price", R1, "--json", safe=False)
    assert b"memo: kept" in first.stderr, first.stderr.decode()
    assert replayed(world, "price", R1, "--json", safe=False)
    (world["work"] / "other.log").write_text("x\n")
    assert not replayed(world, "price", R1, "--json", safe=False)


def test_lookups_are_watched_only_during_the_run() -> None:
    from passprice import memorecord

    real = (os.stat, os.lstat, os.access, os.readlink)
    supported = set(os.supports_dir_fd), set(os.supports_follow_symlinks)
    here = os.getcwd()
    recorder = memorecord.Recorder(here, "/nonexistent-cache")
    recorder._watch_lookups()
    try:
        assert os.stat is not real[0]
        assert os.stat in os.supports_dir_fd  # shutil.rmtree still takes its safe way
        os.path.exists("some-name-here")
        os.path.lexists(os.path.join(here, "an-absolute-name"))
        os.path.exists("/")  # outside the working folder: noted too (the world stamp keeps it when outside its trees)
    finally:
        recorder._unwatch_lookups()
    assert (os.stat, os.lstat, os.access, os.readlink) == real
    assert (set(os.supports_dir_fd), set(os.supports_follow_symlinks)) == supported
    assert recorder.looked == {os.path.join(here, "some-name-here"): "-", os.path.join(here, "an-absolute-name"): "-",
                               "/": "d"}
