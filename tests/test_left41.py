"""Leftovers of issue 13 found in session 35 (task left41), each with its reproducer built here and the line
passprice now gives.

1. A registry folder that may be searched but not listed (mode 311: ``EACCES`` on ``listdir``): every command that
   needs its listing says ``FOLDER: cannot be listed: the folder may not be read by this user`` (exit 2; was
   ``FOLDER: cannot list: Permission denied``), and one that reads only the files it names goes on (docs/DESIGN.md,
   "A folder that cannot be listed"). ``check`` passed an unlistable ``registry/checkpoints`` ("0 checkpoints … all
   holds", exit 0) and ``sweep SERVING`` stopped on an unlistable ``registry/servings`` it never reads.
2. ``reproduce`` of a lock whose card file is there but cannot be read (mode 000) exited 0 with the line as a note:
   bad input, exit 2 naming the file after the report, as ``check`` says of the same file.
3. A review's "its locator quotes …" of an added run names the figures in the run's own unit (tokens/s) first:
   ``131.44, 134.81, 135.07``, not ``2, 7.4, 7.42, 7.61, 131.44`` (a model's name and ms per token).

Unlistable and unreadable are mocked (the session runs as root, whom the kernel lets list and read everything);
reproduced as an ordinary user on a copy of the registry before the fix (the report says how).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli_helpers import REPO
from passprice.cli import cli

LISTED = ": cannot be listed: the folder may not be read by this user"


def _unlistable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """``folder`` as a user who may search it but not list it (mode 311) finds it: ``os.listdir`` and
    ``os.scandir`` of it raise ``PermissionError`` (EACCES); its files still open by name."""
    where = str(folder)

    def denied(call: Any) -> Any:
        def wrapped(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, (str, os.PathLike)) and os.path.abspath(os.fspath(path)) == where:
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return call(path, *args, **kwargs)
        return wrapped

    monkeypatch.setattr(os, "listdir", denied(os.listdir))
    monkeypatch.setattr(os, "scandir", denied(os.scandir))


#: (folder made unlistable, command, exit status): each command either needs the folder's listing (2, the one line)
#: or reads only files it names (0). Before left41: ``check`` of registry/checkpoints 0, ``sweep SERVING`` of
#: registry/servings 2; every 2 said ``cannot list: Permission denied``. Measured as an ordinary user on a copy of the
#: registry for 22 commands a folder (the report lists them); ``validate --stack`` and ``reproduce LOCK`` of facts/cards
#: and of locks, and ``check`` of registry/servings (0, 0, 0, 2 there), are left out here for the test time they cost.
TABLE = [
    ("facts/cards", ("cards",), 2),
    ("facts/cards", ("check",), 2),
    ("facts/cards", ("kv", "qwen3-30b-a3b-q4_0"), 2),
    ("facts/cards", ("sources",), 2),
    ("facts/cards", ("audit", "--source", "azure-ai-benchmarking-guide"), 2),
    ("facts/cards", ("compare", "r1-qwen7b-h200"), 2),
    ("facts/cards", ("servings",), 0),
    ("facts/cards", ("checkpoints",), 0),
    ("facts/cards", ("price", "r1-qwen7b-h200"), 0),
    ("facts/cards", ("price", "--checkpoint", "llama3-8b-q4_k_m", "--card", "rtx_4090", "--limit", "512"), 0),
    ("facts/cards", ("best", "r1-qwen7b-h200"), 0),
    ("facts/cards", ("max-batch", "r1-qwen7b-h200"), 0),
    ("facts/cards", ("compare", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb,mi300x"), 0),
    ("facts/cards", ("facts", "h200_sxm_141gb"), 0),
    ("facts/cards", ("fact", "show", "h200_sxm_141gb", "streams.rewrite"), 0),
    ("facts/cards", ("roofline", "h200_sxm_141gb"), 0),
    ("registry/servings", ("servings",), 2),
    ("registry/servings", ("sweep",), 2),
    ("registry/servings", ("sweep", "r1-qwen7b-h200", "--batches", "1"), 0),
    ("registry/servings", ("price", "r1-qwen7b-h200"), 0),
    ("registry/servings", ("cards",), 0),
    ("registry/checkpoints", ("checkpoints",), 2),
    ("registry/checkpoints", ("check",), 2),
    ("registry/checkpoints", ("kv", "qwen3-30b-a3b-q4_0"), 0),
    ("registry/checkpoints", ("price", "r1-qwen7b-h200"), 0),
    ("locks", ("price", "r1-qwen7b-h200"), 2),
    ("locks", ("best", "r1-qwen7b-h200"), 2),
    ("locks", ("kv", "qwen3-30b-a3b-q4_0"), 0),
]


@pytest.mark.parametrize(("folder", "args", "status"), TABLE,
                         ids=[f"{f}-{' '.join(a[:1])}-{s}-{i}" for i, (f, a, s) in enumerate(TABLE)])
def test_1_a_folder_that_cannot_be_listed_stops_what_needs_its_listing_alone(
        monkeypatch: pytest.MonkeyPatch, folder: str, args: tuple[str, ...], status: int) -> None:
    """Exit 2 with one line naming the folder where the command needs its listing; else the command goes on."""
    monkeypatch.chdir(REPO)
    _unlistable(monkeypatch, REPO / folder)
    result = CliRunner().invoke(cli, ["--root", str(REPO), *args])
    assert result.exit_code == status, result.output
    if status == 2:
        assert result.stderr == f"passprice: error: {REPO}/{folder}{LISTED}\n", result.stderr
    else:
        assert LISTED not in result.output


def test_1_a_folder_on_the_way_that_may_not_be_searched_is_said_as_such() -> None:
    """``listing_refusal`` of an EACCES whose cause is a folder above that may not be searched names that folder
    (:func:`passprice.files.why`), not the listed one as unreadable; any other error is said in its words."""
    from passprice.files import listing_refusal

    loop = OSError(errno.ELOOP, "Too many levels of symbolic links")
    assert str(listing_refusal(loop, Path("/r/facts/cards"), "facts/cards")) == (
        "facts/cards: cannot be listed: a loop of symbolic links")
    denied = PermissionError(errno.EACCES, "Permission denied")
    assert str(listing_refusal(denied, Path("/"), "here")) == f"here{LISTED}"


def test_2_reproduce_with_an_unreadable_card_is_bad_input_as_check_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: exit 0, ``facts today's files do not read: …`` as a note. Now the report (the price rebuilt from the
    lock's pins, which need no file of today's), then the line ``check`` gives of the same file, exit 2."""
    card = str(REPO / "facts" / "cards" / "h200_sxm_141gb.toml")
    opened = os.open

    def no_open(path: Any, *rest: Any, **kwargs: Any) -> int:
        if isinstance(path, (str, os.PathLike)) and os.path.abspath(os.fspath(path)) == card:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return opened(path, *rest, **kwargs)

    monkeypatch.setattr(os, "open", no_open)
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(cli, ["--no-cache", "--root", str(REPO), "reproduce", "locks/r1-qwen7b-h200.lock.toml"])
    line = "passprice: error: facts/cards/h200_sxm_141gb.toml: cannot read: Permission denied\n"
    assert result.exit_code == 2, result.output
    assert result.stderr == line, result.stderr
    assert "996.0966124437687 tokens/s at batch 1, binds on memory, from its 14 pinned facts" in result.stdout
    assert ("facts          today's files do not read: facts/cards/h200_sxm_141gb.toml: cannot read: Permission "
            "denied (bad input: not judged; the price above is rebuilt from the lock's pins alone)") in result.stdout


def test_3_an_added_runs_locator_quotes_its_figures_in_tokens_per_second_first() -> None:
    """Before: ``its locator quotes 2, 7.4, 7.42, 7.61, 131.44`` (sorted, the first five: LLaMA 2's 2 and the ms
    per token); now the three tokens/s figures. A locator quoting none so falls back to every figure."""
    from passprice.measurements import Run
    from passprice.review.runs import _added_run_asks

    locator = ("LLaMA 2/Professional GPUs/H100_PCIe_v2.ipynb: 'llama_print_timings:        eval time =    7783.09 ms "
               "/  1023 runs   (    7.61 ms per token,   131.44 tokens per second)', '(    7.42 ms per token,   "
               "134.81 tokens per second)', '(    7.40 ms per token,   135.07 tokens per second)'")
    run = Run(id="r", stack="s", card="c", checkpoint="k", batch=1, first=256, last=512, tokens_per_s=155.07,
              source_id="src", locator=locator)
    asks = _added_run_asks(run, [run])
    assert asks == [f"its locator quotes 131.44, 134.81, 135.07, not 155.07 tokens/s: does src: {locator} state "
                    "155.07 tokens/s?"]
    plain = Run(id="r", stack="s", card="c", checkpoint="k", batch=1, first=256, last=512, tokens_per_s=155.07,
                source_id="src", locator="Table 3: 7.61 ms, 131.44")
    # quoting nothing, it is read whole, the figures nearest the run's first (cite67)
    assert _added_run_asks(plain, [plain])[0].startswith("its locator quotes 131.44, 7.61, not 155.07 tokens/s")


def test_1_a_writer_refuses_a_folder_it_cannot_list_for_a_name_there_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: ``lock --name Zz42`` and ``new-serving Zz42S`` (as an ordinary user, ``locks/`` and
    ``registry/servings/`` mode 311) wrote beside ``zz42.lock.toml`` and ``zz42s.toml``, exit 0: the check for a name
    that differs only by case (:func:`passprice.files.require_no_lookalike`) passed a folder it could not list. Now
    the folder's one line; a folder not there still passes (the writer makes or reports it)."""
    from passprice.errors import InputError
    from passprice.files import require_no_lookalike

    folder = tmp_path / "locks"
    folder.mkdir()
    (folder / "zz42.lock.toml").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="differs only by case"):
        require_no_lookalike(folder / "Zz42.lock.toml")
    _unlistable(monkeypatch, folder)
    with pytest.raises(InputError) as refused:
        require_no_lookalike(folder / "Zz42.lock.toml")
    assert str(refused.value) == f"{folder}{LISTED}"
    require_no_lookalike(tmp_path / "absent" / "x.toml")
