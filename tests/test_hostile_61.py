"""Attack round 61 (issue 13): passprice run as a user who may not read part of the registry. Every earlier round ran
as root, who reads and searches every folder, so a folder the user may not search (mode ``000`` or ``644``) was never
met: each card under ``facts/cards/`` said only ``facts/cards/NAME.toml: Permission denied`` — one line a card (17 for
``cards``, ``check`` and ``kv``), each reading as that file's own mode. Now the line names the folder
(:func:`passprice.files.why`), and a listing of a folder that can be listed but not searched is one line for the
folder (:meth:`passprice.registry.Root.names`).

The tests drop root in a forked child (``os.setuid(65534)``, ``nobody``), run there and send back what they saw; they
skip where the suite does not run as root (a user cannot become another)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke

NOBODY = 65534
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="drops privileges to nobody in a forked child: needs root")


def _package_searchable() -> list[tuple[Path, int]]:
    """Give ``nobody`` search (``o+x``) on each folder above the installed passprice that lacks it, as a user's own
    installation has it; the folders and their modes, to restore. Session 42: the clean-clone CI's virtual environment
    lies in a ``mktemp -d`` folder (mode 700), so a child that had to read the package's schema files (when no earlier
    test in its worker had loaded them: test_left56's first test before this file) stopped at that folder, "source
    'nvidia-h200-datasheet' does not validate: /tmp/tmp.X: cannot read its files", not at the registry's folder this
    file tests (4 failures in one CI run, none alone)."""
    import passprice

    changed = []
    for folder in Path(passprice.__file__).resolve().parents:
        mode = folder.stat().st_mode
        if not mode & 0o001:
            changed.append((folder, mode))
            folder.chmod(mode | 0o001)
    return changed


def as_nobody(work: Callable[[], Any]) -> Any:
    """``work()`` run in a forked child that has become ``nobody`` (uid and gid 65534, no groups) with the cache
    bypassed; its JSON-able answer, or the text of the exception it raised (``"raised: …"``). The folders above the
    installed package are searchable by ``nobody`` meanwhile (:func:`_package_searchable`)."""
    opened = _package_searchable()
    try:
        return _as_nobody(work)
    finally:
        for folder, mode in opened:
            folder.chmod(mode)


def _as_nobody(work: Callable[[], Any]) -> Any:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 0
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.environ["PASSPRICE_NO_CACHE"] = "1"
            try:
                answer = work()
            except Exception as e:  # the test compares the text
                answer = f"raised: {type(e).__name__}: {e}"
            os.write(write, json.dumps(answer).encode())
        except BaseException:  # the parent sees no answer and fails
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data, "the child failed"
    return json.loads(data)


FACT_SET = ("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.9", "--unit", "TB/s", "--provenance",
            "published", "--source", "nvidia-h200-datasheet", "--locator", "a table")
COMMANDS = [("price", "r1-qwen7b-h200"), ("cards",), ("fact", "show", "h200_sxm_141gb", "memory.bandwidth"), FACT_SET]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry copy that ``nobody`` may read (every folder on the way searchable)."""
    base = tmp_path_factory.mktemp("hostile61")
    made = copy_root(base)
    for folder in (base, *(p for p in made.rglob("*") if p.is_dir()), made):
        folder.chmod(0o755)
    for above in base.parents:  # pytest's base folder is 0700: let nobody through to the copy
        if above.stat().st_uid == 0 and above.stat().st_mode & 0o001 == 0 and str(above).startswith("/tmp/"):
            above.chmod(above.stat().st_mode | 0o001)
    # The child imports nothing after it drops root: this interpreter's standard library may lie where nobody may
    # read (a pyenv under /root), so each command runs here once first, loading every module its run needs.
    for args in COMMANDS:
        invoke(*args, root=made)
    return made


def _cli(root: Path, *args: str) -> Callable[[], dict[str, Any]]:
    def work() -> dict[str, Any]:
        result = invoke(*args, root=root)
        return {"exit": result.exit_code, "stderr": result.stderr}
    return work


@needs_root
@pytest.mark.parametrize("mode", [0o000, 0o644])
def test_a_card_in_a_folder_nobody_may_search_names_the_folder(root: Path, mode: int) -> None:
    cards = root / "facts" / "cards"
    cards.chmod(mode)
    try:
        seen = as_nobody(_cli(root, "price", "r1-qwen7b-h200"))
    finally:
        cards.chmod(0o755)
    # was "…/h200_sxm_141gb.toml: Permission denied", the card's own mode as it read; then the card and the folder
    # (one such line a card, 4-7 of them from servings and validate); now the folder alone, once (left38)
    assert seen == {"exit": 2, "stderr": (
        f"passprice: error: {cards}: cannot read its files: the folder may not be searched by this user\n")}


@needs_root
def test_a_folder_listed_but_not_searched_is_one_line_for_the_folder(root: Path) -> None:
    cards = root / "facts" / "cards"
    cards.chmod(0o644)  # r--: its names list, its files do not open
    try:
        seen = as_nobody(_cli(root, "cards"))
    finally:
        cards.chmod(0o755)
    # was 17 lines, "facts/cards/a100_pcie_80gb.toml: Permission denied" and one for each other card
    assert seen == {"exit": 2, "stderr": (
        f"passprice: error: {cards}: cannot read its files: the folder may not be searched by this user\n")}


@needs_root
def test_an_unreadable_card_and_a_read_only_one_as_a_user(root: Path) -> None:
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    card.chmod(0o000)
    try:
        unreadable = as_nobody(_cli(root, "fact", "show", "h200_sxm_141gb", "memory.bandwidth"))
        card.chmod(0o444)
        root.joinpath("facts", "cards").chmod(0o777)  # nobody may write the folder, not the file
        read_only = as_nobody(_cli(root, *FACT_SET[:5], "4.8", *FACT_SET[6:]))  # the fixture set 4.9
    finally:
        card.chmod(0o644)
        root.joinpath("facts", "cards").chmod(0o755)
    assert unreadable == {"exit": 2, "stderr": f"passprice: error: {card}: cannot read: Permission denied\n"}
    assert read_only == {"exit": 2, "stderr": (
        f"passprice: error: {card}: is read-only; passprice does not replace it (make it writable first)\n")}
    assert card.read_bytes() == before


# --- a lock file that is no lock was parsed four times by `check` ----------------------------------------------------


def test_a_refused_lock_is_parsed_once_a_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13's bar, 1 MB in 2 s: `check` of a 256 KiB lock file holding one array of 131,000 integers spent 2.85 s
    of CPU (1.14 s with the lock as shipped) parsing it four times: `_not_a_lock` parsed again what `schema.load`
    had parsed, and `check` reads every lock twice (its files, then its review), a refusal remembered by nothing. Now
    the refused document travels on the SchemaError and a refused lock is remembered by its path and bytes."""
    import tomllib

    from passprice.errors import InputError
    from passprice.locks import read_lock

    lock = tmp_path / "x.lock.toml"
    lock.write_text("a = [" + "1," * 5000 + "]\n", encoding="utf-8")
    parsed: list[int] = []
    loads = tomllib.loads

    def counted(text: str, **kwargs: Any) -> dict[str, Any]:
        if text.startswith("a = [1,"):
            parsed.append(len(text))
        return loads(text, **kwargs)

    monkeypatch.setattr(tomllib, "loads", counted)
    for _ in range(2):
        with pytest.raises(InputError) as refused:
            read_lock(lock)
        # refused unparsed for its separators since tests/test_bound111.py (was "not a lock file …", parsed once)
        assert list(refused.value.lines) == [
            f"{lock}: 5,002 separators (',', '=', '.', '[' and '{{' outside strings and comments) in 10,007 bytes, "
            "past the 2,065 a file of its size may hold (64 and one each 5 bytes; the densest shipped file holds one "
            "each 10): not parsed"]
    assert len(parsed) == 0  # was 2 a read: 4 for the two reads; then 1
