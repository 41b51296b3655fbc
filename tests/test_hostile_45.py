"""Attack round 45 (issue 13): commands that rewrite a file from what it holds lose no concurrent edit and drop
nothing the file said. Each test builds its reproducer: a lock file or serving file held by another edit (as a
concurrent ``lock --update`` or ``new-serving --force`` holds it), and a serving rewritten in place."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, invoke
from passprice import edit

LOCK = "locks/r1-qwen7b-h200.lock.toml"
SERVING = "registry/servings/gemma3-270m-h100.toml"


def _root(tmp_path: Path) -> Path:
    """A private copy of the checkout's facts, registry, locks, sources and schema."""
    root = tmp_path / "root"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def _held(path: Path) -> object:
    """``path`` opened and ``flock``-ed as a concurrent edit holds it (an open file, kept open by the caller)."""
    handle = path.open("rb")
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    return handle


@pytest.mark.parametrize("args", [
    ("lock", "--update", "-o", LOCK),
    ("lock", "--update", "--force", "--require", "memory.bandwidth=estimated", "-o", LOCK),
    ("lock", "r1-qwen7b-h200", "--force", "-o", LOCK),
])  # fmt: skip
def test_lock_update_waits_for_an_edit_holding_the_lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             args: tuple[str, ...]) -> None:  # fmt: skip
    """Two ``lock --update --force --require`` of one lock at once, one loosening ``memory.bandwidth``, the other
    ``memory.capacity``: both exited 0 and the lock held one of the two floors (6 of 6 runs): each read the old lock
    and the second rename replaced the first's. Now the read-modify-write holds the file's lock as ``fact set``
    does: with another edit holding it past the wait (shortened here), nothing is written and the line says so."""
    root = _root(tmp_path)
    monkeypatch.chdir(root)  # -o names the copy's lock, as given
    lock = root / LOCK
    before = lock.read_bytes()
    monkeypatch.setattr(edit, "LOCK_WAIT_S", 0.05)
    handle = _held(lock)
    try:
        lines = bad(*args, root=root)
    finally:
        handle.close()  # type: ignore[attr-defined]
    assert lines == [f"passprice: error: {LOCK}: another edit has held it for 0.05 s; nothing written, run the edit "
                     "again"]  # fmt: skip
    assert lock.read_bytes() == before


def test_lock_update_after_the_edit_let_go_keeps_its_floor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two floors loosened one after the other (as the lock now orders two at once) both hold."""
    root = _root(tmp_path)
    monkeypatch.chdir(root)
    for path in ("memory.bandwidth", "memory.capacity"):
        result = invoke("lock", "--update", "--force", "--require", f"{path}=estimated", "-o", LOCK, root=root)
        assert result.exit_code == 0, result.output
    text = (root / LOCK).read_text(encoding="utf-8")
    policy = text.split("[policy.paths]\n", 1)[1].split("\n\n", 1)[0]
    assert '"memory.bandwidth" = "estimated"' in policy
    assert '"memory.capacity" = "estimated"' in policy


def test_new_serving_in_place_waits_for_an_edit_holding_the_serving_file(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ``new-serving gemma3-270m-h100 gemma3-270m-h100 --force``, one ``--batch 7``, one ``--kv-bytes 1``, at
    once: both exited 0 and the file held one change (3 of 4 runs). Now the serving is read and replaced under the
    file's lock."""
    root = _root(tmp_path)
    serving = root / SERVING
    before = serving.read_bytes()
    monkeypatch.setattr(edit, "LOCK_WAIT_S", 0.05)
    handle = _held(serving)
    try:
        lines = bad("new-serving", "gemma3-270m-h100", "gemma3-270m-h100", "--batch", "7", "--force", root=root)
    finally:
        handle.close()  # type: ignore[attr-defined]
    assert lines == [f"passprice: error: {root / SERVING}: another edit has held it for 0.05 s; nothing written, "
                     "run the edit again"]  # fmt: skip
    assert serving.read_bytes() == before


def test_new_serving_rewritten_in_place_keeps_its_description(tmp_path: Path) -> None:
    """``new-serving NAME NAME --force`` rewrote the serving with its ``description`` dropped, exit 0: the one
    line saying what the serving is for was lost. A serving rewritten in place keeps it (one derived under another
    name still does not, and ``--description`` still replaces it)."""
    root = _root(tmp_path)
    serving = root / SERVING
    description = next(line for line in serving.read_text(encoding="utf-8").splitlines()
                       if line.startswith("description = "))  # fmt: skip
    result = invoke("new-serving", "gemma3-270m-h100", "gemma3-270m-h100", "--batch", "7", "--force", root=root)
    assert result.exit_code == 0, result.output
    text = serving.read_text(encoding="utf-8")
    assert description in text.splitlines()
    assert "batch = 7" in text.splitlines()
    result = invoke("new-serving", "other", "gemma3-270m-h100", root=root)
    assert result.exit_code == 0, result.output
    assert not any(line.startswith("description") for line in (root / "registry/servings/other.toml").read_text(
        encoding="utf-8").splitlines())  # fmt: skip
    result = invoke("new-serving", "gemma3-270m-h100", "gemma3-270m-h100", "--description", "new", "--force",
                    root=root)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert 'description = "new"' in serving.read_text(encoding="utf-8").splitlines()


MEASURED = "registry/measurements/llamacpp-points.toml"


def _errors(command: str, root: Path, *args: str) -> list[str]:
    """The error lines of ``passprice --root ROOT COMMAND``, which must exit 2 (``check`` still lists every good
    file on standard output)."""
    result = invoke(command, *args, root=root)
    assert result.exit_code == 2, result.output
    # validate names the file by its whole path, check below the root: the same file either way
    lines = result.stderr.splitlines()
    return [line.replace(f"{root}/", "") for line in lines if line.startswith("passprice: error: ")]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("command", ["check", "validate"])
def test_a_measured_runs_positions_of_twenty_thousand_items_is_one_short_line(tmp_path: Path, command: str) -> None:
    """``positions = [1, 2, …, 20000]`` (the schema takes ``[first, last]``): two lines, jsonschema's "Expected at
    most 2 items but found 19998 extra: [3, 4, 5, …" of 3,500 characters listing the extras, then the maxItems line
    saying the same. One problem, one line. 20,000 items are refused before parsing since (a measurement file's
    16,384 separators, tests/test_bound111.py): 5,000, under that cap, reach the schema, whose line is still one."""
    root = _root(tmp_path)
    _edit(root / MEASURED, "positions = [256, 512]", "positions = [" + ", ".join(map(str, range(1, 5001))) + "]")
    assert _errors(command, root) == [f"passprice: error: {MEASURED}: run.0.positions: 5,000 items (at most 2)"]


def test_a_run_id_of_a_character_the_pattern_refuses_is_not_said_to_be_a_duplicate(tmp_path: Path) -> None:
    """A run id holding U+202E (a right-to-left override), unique in every file, was refused as "is not unique
    across every measurement file": the schema's description of the id, read as what the pattern wants. The line
    now says what a run id is written with."""
    root = _root(tmp_path)
    _edit(root / MEASURED, 'id = "xd2.h100_pcie_80gb.l2-7b-f16.main"', 'id = "xd2.h100\\u202e.main"')
    assert _errors("check", root) == [
        f"passprice: error: {MEASURED}: run.1.id: 'xd2.h100\\u202e.main' is not a run id (lower-case letters, "
        "digits, '.', '_' and '-', first a letter or digit, at most 100 characters), unique across every measurement "
        "file"
    ]


RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
STACK = "facts/stacks/llamacpp-cuda-2405.toml"


def _tokens_per_s(path: Path, value: Callable[[int], str]) -> None:
    """Every run's ``tokens_per_s`` of the measurement file ``path`` replaced by ``value(i)`` (i from 1)."""
    count = iter(range(1, 10**6))
    text = re.sub(r"tokens_per_s = [0-9.e+-]+", lambda _: f"tokens_per_s = {value(next(count))}",
                  path.read_text(encoding="utf-8"))  # fmt: skip
    path.write_text(text, encoding="utf-8")


def test_a_fit_no_stack_file_holds_is_one_line_naming_the_runs(tmp_path: Path) -> None:
    """Schema-valid runs (every other one at 0.01 tokens/s, the rest at 1e9): ``calibrate`` printed 54 lines, each a
    problem of the stack file it had not written (``overhead.pass.derivation.errors.in_sample_max: 40798.6941 is
    greater than the maximum of 1000`` …). One line now: the runs' file, the first figure that cannot be written
    and how many more, the run the fit misses most; the stack file untouched."""
    root = _root(tmp_path)
    _tokens_per_s(root / RUNS, lambda i: "0.01" if i % 2 else "1e9")
    before = (root / STACK).read_bytes()
    lines = _errors("calibrate", root, "--stack", "llamacpp-cuda-2405")
    assert len(lines) == 1, lines
    head, tail = lines[0].split("; the run it misses most: ")
    assert head == (
        f"passprice: error: {RUNS}: calibrate --stack llamacpp-cuda-2405: the fit of its 111 runs is no stack a file "
        "holds: overhead.layer.derivation.errors.card_out_max: 40798.6941 is greater than the maximum of 1000 (and 53 "
        "more)"
    )
    assert re.fullmatch(r"xd3\.h100_pcie_80gb\.8b-q4km\.tg512 \(tokens/s predicted \+4,079,8\d\d\.\d %\); check the "
                        r"runs' tokens_per_s \(nothing written\)", tail), tail  # fmt: skip
    assert (root / STACK).read_bytes() == before


def test_a_fit_past_an_overheads_bound_is_one_line_naming_the_runs(tmp_path: Path) -> None:
    """Every run at 0.01 tokens/s fits an overhead of 99,980,000 µs a pass, past the 1,000,000 µs a stack file
    holds: said as a problem of the stack file; now of the runs (every run fits, so none is named as missed)."""
    root = _root(tmp_path)
    _tokens_per_s(root / RUNS, lambda i: "0.01")
    assert _errors("calibrate", root, "--stack", "llamacpp-cuda-2405") == [
        f"passprice: error: {RUNS}: calibrate --stack llamacpp-cuda-2405: the fit of its 111 runs is no stack a file "
        "holds: overhead.pass.value: 99980000.0 is greater than the maximum of 1000000.0; check the runs' "
        "tokens_per_s (nothing written)"
    ]


@pytest.mark.parametrize(("made", "path", "said"), [
    ("folder", "facts/cards", "facts/cards is a folder, not a regular file of this registry"),
    ("fifo", "facts/cards/fifo", "facts/cards/fifo is a FIFO (named pipe), not a regular file of this registry"),
])  # fmt: skip
def test_the_sources_listing_reports_a_source_naming_no_document(tmp_path: Path, made: str, path: str,
                                                                 said: str) -> None:  # fmt: skip
    """A source whose ``source.path`` names a folder or a FIFO: ``check``, ``cards`` and ``price`` refuse it (exit
    2), but ``sources``, the listing of the sources themselves, showed it among the good ones and exited 0. Now it
    says so on stderr (exit 2) and still lists every good source."""
    root = _root(tmp_path)
    if made == "fifo":
        os.mkfifo(root / path)
    _edit(root / "sources/passprice-card-review.toml", 'path = "facts/cards/README.md"', f'path = "{path}"')
    result = invoke("sources", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.replace(f"{root}/", "").splitlines() == [
        f"passprice: error: sources/passprice-card-review.toml: source.path: {said}"
    ]
    listed = [line.split()[0] for line in result.stdout.splitlines() if line[:1].isalpha()]
    assert "passprice-card-review" not in listed
    assert "amd-cdna3-whitepaper" in listed and "passprice-stack-calibration" in listed


GEMMA_HEADER = str(REPO / "tests/data/gemma3-270m-q4_k_m.header.gguf.xz")


@pytest.mark.parametrize(("args", "line"), [
    (("import", GEMMA_HEADER, "--name", "CON"),
     "checkpoint name 'CON': CON names a device on Windows, where no file of that name (with any suffix) can be "
     "checked out: give another name"),
    (("import", GEMMA_HEADER, "--name", "nul.v2"),
     "checkpoint name 'nul.v2': NUL names a device on Windows, where no file of that name (with any suffix) can be "
     "checked out: give another name"),
    (("new-serving", "Aux", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb"),
     "serving name 'Aux': AUX names a device on Windows, where no file of that name (with any suffix) can be checked "
     "out: give another name"),
    (("lock", "r1-qwen7b-h200", "--name", "com1"),
     "Invalid value for --name: 'com1' is not a lock name: COM1 names a device on Windows, where no file of that name "
     "can be checked out (see 'cli lock --help')"),  # in-process: click names the group cli
    (("lock", "r1-qwen7b-h200", "-o", "locks/lpt9.lock.toml"),
     "locks/lpt9.lock.toml: the lock would be named 'lpt9' after it, and LPT9 names a device on Windows, where no "
     "file of that name can be checked out: give another file"),
])  # fmt: skip
def test_a_record_named_for_a_windows_device_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        args: tuple[str, ...], line: str) -> None:  # fmt: skip
    """``import H --name CON``, ``new-serving Aux …``, ``lock --name com1`` and ``lock -o locks/lpt9.lock.toml`` wrote
    records (exit 0) that no clone on Windows can check out (Git for Windows refuses ``CON.toml``, a device name with
    any suffix), where a name differing from another only by case, one file there, is refused already. Nothing is
    written now; a name that only starts like one (``console``) is still a name."""
    root = _root(tmp_path)
    monkeypatch.chdir(root)
    before = sorted(p.name for folder in ("registry/checkpoints", "registry/servings", "locks")
                    for p in (root / folder).iterdir())  # fmt: skip
    assert bad(*args, root=root) == [f"passprice: error: {line}"]
    after = sorted(p.name for folder in ("registry/checkpoints", "registry/servings", "locks")
                   for p in (root / folder).iterdir())  # fmt: skip
    assert after == before


def test_a_name_that_only_starts_like_a_windows_device_is_a_name(tmp_path: Path) -> None:
    root = _root(tmp_path)
    result = invoke("import", GEMMA_HEADER, "--name", "console", root=root)
    assert result.exit_code == 0, result.output
    assert (root / "registry/checkpoints/console.toml").is_file()
