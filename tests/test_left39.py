"""Leftovers of issue 13 found in session 34 (task left39), each with its reproducer built here and the line
passprice now gives.

1. ``--root DIR`` and ``init DIR`` with ``DIR`` a regular file, a FIFO, a link to nothing, a name over 255 bytes, or
   a folder this user may not list: click's "Invalid value for '--root': Directory '…' is a file." / "… is not
   readable." where passprice's reader says "DIR: cannot read: …" / "DIR: is a regular file, not a folder".
2. ``reproduce`` (and ``check``) of a lock whose checkpoint entry is there but cannot be read (a folder in its place,
   a FIFO, a file this user may not open): "the pinned checkpoint … is gone", exit 1; now the file's one line, exit 2.
3. A registry folder that cannot be listed, outside any registry (the built-in one): :meth:`Root.names` named it by
   its absolute path inside the installed package where every other line says "the built-in registry's …".
4. A ``Routed``/``BadRouting`` refusal (and new-serving's warning) offering routing records said "registered here for
   128 experts" of records it chose by k too: now "128 experts, 8 a token" (tests/test_left38.py item 5,
   test_newcomer_27, test_walk44 … pin the lines).
5. tests/test_locks.py's moved-price test failed alone and passed in the suite's order: the stacks' fits kept across
   processes (:mod:`passprice.stackfits`) were not keyed by the pricing model's version, which the test sets in
   process beside a patched constant (as every kept pass shape is keyed): alone it was served the fits of the
   patched pricing; in order, the right ones another test had kept.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

LONG = "a" * 300
SHOWN_LONG = f"{'a' * 24}…{'a' * 24} (300 characters)"


@pytest.mark.parametrize(
    ("make", "root_says", "init_says"),
    [
        ("file", "{p}: is a regular file, not a folder: --root names a folder holding facts/ and registry/",
         "{p}: is a regular file; give a folder for the new registry"),
        ("fifo", "{p}: is a FIFO (named pipe), not a folder: --root names a folder holding facts/ and registry/",
         "{p}: is a FIFO (named pipe); give a folder for the new registry"),
        ("dangling", "{p}: is a symbolic link to {t}/nowhere, which does not exist",
         "{p}: cannot write: {p} is a symbolic link to {t}/nowhere, which does not exist; init creates no folder "
         "through a link"),
        ("long", "{t}/" + SHOWN_LONG + ": cannot read: the name is longer than the file system allows",
         "{t}/" + SHOWN_LONG + ": cannot write: the name is longer than the file system allows"),
        ("through_file", "{p}: not a passprice root (it needs facts/ and registry/ folders)",
         "{p}: cannot write: {t}/file is a regular file, not a folder"),
    ],
    ids=["file", "fifo", "dangling", "long", "through_file"],
)
def test_1_a_root_or_init_folder_that_is_no_folder_is_refused_in_passprices_words(
        tmp_path: Path, make: str, root_says: str, init_says: str) -> None:
    """Before: ``--root FILE`` and ``init FILE`` said "Invalid value for '--root': Directory '…' is a file.", click's
    words; a name over 255 bytes named ``DIR/facts`` (``--root``) or said no "cannot" (``init``). Now one line, the
    reader's wording, exit 2, nothing written."""
    path = {"file": tmp_path / "file", "fifo": tmp_path / "fifo", "dangling": tmp_path / "link",
            "long": tmp_path / LONG, "through_file": tmp_path / "file" / "x"}[make]
    (tmp_path / "file").write_text("x", encoding="utf-8")
    if make == "fifo":
        os.mkfifo(path)
    if make == "dangling":
        path.symlink_to(tmp_path / "nowhere")
    before = sorted(os.listdir(tmp_path))
    for args, says in [(("cards",), root_says), (("init", str(path)), init_says)]:
        given = path if args[0] == "cards" else REPO
        lines = bad(*args, root=given, says=says.format(p=path, t=tmp_path))
        assert len(lines) == 1 and "Invalid value" not in lines[0], lines
    assert sorted(os.listdir(tmp_path)) == before


def test_1_a_root_this_user_may_search_but_not_list_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "Invalid value for '--root': Directory '…' is not readable." (click's ``os.access(R_OK)``), exit 2,
    for a root passprice reads in full: no command lists the root itself (a user's check as nobody of a copy at mode
    311 ran cards, servings, checkpoints and check, exit 0). Unreadable is mocked (``os.access`` says no): root may
    read every folder. ``init`` into such an empty folder writes its registry."""
    access = os.access
    unlisted = {str(REPO), str(tmp_path / "new")}

    def no_read(path: Any, mode: int, *rest: Any, **kwargs: Any) -> bool:
        if os.fspath(path) in unlisted and mode & os.R_OK:
            return False
        return access(path, mode, *rest, **kwargs)

    monkeypatch.setattr(os, "access", no_read)
    assert not os.access(REPO, os.R_OK)
    result = invoke("cards")
    assert result.exit_code == 0 and "h200_sxm_141gb" in result.stdout, result.output
    (tmp_path / "new").mkdir()
    result = invoke("init", str(tmp_path / "new"), "--requirement", "passprice==0")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new" / "facts" / "cards").is_dir()


def test_1_a_root_in_a_folder_that_may_not_be_searched_names_that_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mode 644 on the way (mocked as tests/test_left38.py does: root searches every folder): the folder named, in
    the line every reader gives, for ``--root`` and ``init`` alike (unchanged; pinned beside the rest)."""
    from test_left38 import _unsearchable

    closed = tmp_path / "closed"
    (closed / "reg").mkdir(parents=True)
    _unsearchable(monkeypatch, closed)
    says = f"{closed}: cannot read its files: the folder may not be searched by this user"
    assert bad("cards", root=closed / "reg", says=says) == [f"passprice: error: {says}"]
    assert bad("init", str(closed / "reg"), says=says) == [f"passprice: error: {says}"]


def test_1_the_root_option_still_says_directory_in_help() -> None:
    """click names a ``click.Path`` that takes files and folders ``PATH``; ``--root`` takes a folder."""
    from click.testing import CliRunner

    from passprice.cli import cli

    assert "  --root DIRECTORY " in CliRunner().invoke(cli, ["--help"]).stdout


R1_ENTRY = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"


@pytest.fixture(scope="module")
def registry_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One private copy of the checkout's registry for the module (each test restores what it breaks)."""
    return copy_root(tmp_path_factory.mktemp("left39"))


@pytest.mark.parametrize(
    ("damage", "says"),
    [("folder", f"{R1_ENTRY}: is a folder, not a checkpoint file"),
     ("fifo", f"{R1_ENTRY}: is a FIFO (named pipe), not a regular file: passprice reads regular files only"),
     ("eacces", f"{R1_ENTRY}: cannot read: Permission denied")],
    ids=["folder", "fifo", "eacces"],
)
def test_2_a_checkpoint_entry_there_but_unreadable_is_bad_input_not_gone(
        registry_copy: Path, monkeypatch: pytest.MonkeyPatch, damage: str, says: str) -> None:
    """Before: "does NOT reproduce: the pinned checkpoint deepseek-r1-distill-qwen-7b-q4_k_m is gone", exit 1, for
    all three; now the entry's one line, exit 2 (``check`` gives the same line once, exit 2: too slow to run here, 2 s
    a run; a checkpoint really absent stays gone, exit 1: tests/test_newcomer_21.py). EACCES is mocked (``os.open``
    raises it for the entry): root opens every file."""
    import errno
    import shutil

    entry = registry_copy / R1_ENTRY
    kept = entry.read_bytes()
    entry.unlink()
    if damage == "folder":
        entry.mkdir()
    elif damage == "fifo":
        os.mkfifo(entry)
    else:
        entry.write_bytes(kept)
        opened = os.open

        def no_open(path: Any, *rest: Any, **kwargs: Any) -> int:
            if isinstance(path, (str, os.PathLike)) and os.fspath(path) == str(entry):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return opened(path, *rest, **kwargs)

        monkeypatch.setattr(os, "open", no_open)
    try:
        lock = str(registry_copy / "locks" / "r1-qwen7b-h200.lock.toml")
        assert bad("reproduce", lock, root=registry_copy, says=says) == [f"passprice: error: {says}"]
    finally:
        monkeypatch.undo()
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
        entry.write_bytes(kept)



@pytest.mark.parametrize(
    ("args", "says"),
    [(("servings",), "the built-in registry's registry/servings: cannot be listed: the folder may not be read by "
                     "this user"),  # left41: was "cannot list: Permission denied"
     (("price", "nosuch"), "the built-in registry's registry/servings: cannot be listed: the folder may not be read "
                           "by this user"),
     (("reproduce", "nosuch"), "lock 'nosuch': no such file, and not in the built-in registry's locks; ")],
    ids=["servings", "price", "reproduce"],
)
def test_3_a_folder_of_the_built_in_registry_is_named_as_every_other_line_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], says: str) -> None:
    """Before: ``/…/passprice/registry/servings: cannot list: Permission denied`` (the package's absolute path, which
    the command line leaves as it is for the built-in registry) and ``not in /…/locks``, where "not found in" says
    ``the built-in registry's registry/servings``. Unlistable is mocked (``os.listdir`` raises EACCES): root lists
    every folder. Run outside any registry, so the built-in one is read."""
    import errno

    from click.testing import CliRunner

    from passprice.cli import cli

    listed = os.listdir
    target = os.path.join("registry", "servings")

    def no_list(path: Any = ".") -> list[str]:
        if os.fspath(path).endswith(target):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return listed(path)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "listdir", no_list)
    result = CliRunner().invoke(cli, ["--no-cache", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"passprice: error: {says}"), result.stderr
    assert str(REPO) not in result.stderr and "site-packages" not in result.stderr


def test_4_the_router_is_said_with_its_experts_a_token_when_the_header_gives_it() -> None:
    """:func:`passprice.routing.router_said`: E and k in the glossary's words (``routing``: each token routes to k of
    its E experts); E alone when no header, or a header without a positive ``expert_used_count``."""
    from passprice.routing import router_said

    class Header:
        def __init__(self, used: int | None) -> None:
            self.used = used

        def meta_int(self, key: str) -> int | None:
            assert key == "expert_used_count"
            return self.used

    assert router_said(128, Header(8)) == "128 experts, 8 a token"  # type: ignore[arg-type]
    assert router_said(32, Header(4)) == "32 experts, 4 a token"  # type: ignore[arg-type]
    assert router_said(128, Header(0)) == "128 experts"  # type: ignore[arg-type]
    assert router_said(128, Header(None)) == "128 experts"  # type: ignore[arg-type]
    assert router_said(128) == "128 experts"


def test_5_the_stacks_fits_are_kept_by_the_pricing_models_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the same key under ``PRICING_MODEL_VERSION = "test"`` and ``"test, undone"``, so ``check`` served a fit
    made with the other pricing ("re-fitted from its 111 runs … it is 0.04283, not 0.04165", exit 1)."""
    import passprice
    from passprice.measurements import load_runs
    from passprice.registry import Root
    from passprice.stackfits import fit_inputs
    from passprice.stacks import load_stack

    root = Root(REPO)
    stack = load_stack(root, "llamacpp-cuda-2405")
    runs = load_runs(root)
    first = fit_inputs(root, stack, runs)
    assert first is not None and fit_inputs(root, stack, runs) == first
    monkeypatch.setattr(passprice, "PRICING_MODEL_VERSION", "test")
    assert fit_inputs(root, stack, runs) not in (None, first)
