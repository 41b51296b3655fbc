"""Session 21's leftovers (issue 13): each test builds its reproducer and asserts the words, the value and the exit
status.

1. A registry root is held resolved, so every path made from it was absolute: run from a registry with relative
   arguments, a broken card said ``/home/runner/work/…/facts/cards/h100_sxm5_80gb.toml: not valid TOML``. The
   path is now written as the user would give it: relative to the working folder when the root was found at or above
   it, below ``--root DIR`` as DIR was written, absolute only when the root was named by an absolute path.
2. ``general.alignment`` in a checkpoint entry's metadata was not type-checked against GGUF's definition (a uint32
   power of two): ``type = "string"``, ``float32`` 3.5, ``int32`` -1, ``uint64`` 2^40 and ``uint32`` 48 all priced,
   as did a 64 beside ``header.alignment`` 32. The schema refuses the first five; the entry's reader the last.
3. A lock file with CRLF line ends (git on Windows with ``core.autocrlf``) is accepted everywhere with the result its
   LF copy has (a lock's digest covers its values, not its bytes); one with lone CRs is refused by name everywhere.
4. ``price``/``best`` ``--json`` wrote byte and token counts as floats (``held_bytes`` 4912001024.0): integers now
   when whole; the lock files keep the floats they record.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli_helpers import REPO, invoke
from passprice import stackfits
from passprice.cli import cli

CARD = "facts/cards/h100_sxm5_80gb.toml"
ENTRY = "registry/checkpoints/gemma3-270m-q4_k_m.toml"
LOCK = "locks/gemma3-270m-h100.lock.toml"


def _root(tmp_path: Path) -> Path:
    """A private copy of the checkout's facts, registry, locks, sources and schema."""
    root = tmp_path / "root"
    root.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def _run(*args: str) -> Result:
    """``passprice ARGS…`` in-process, the root found from the working folder; no traceback."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def _break_card(root: Path) -> None:
    with (root / CARD).open("a", encoding="utf-8") as f:
        f.write("x = = 1\n")


# --- 1. paths as the user gave them ---------------------------------------------------------------------------------


def test_a_broken_card_is_named_relative_to_the_working_folder_at_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    _break_card(root)
    monkeypatch.chdir(root)
    for args in (("price", "gemma3-270m-h100"), ("best", "gemma3-270m-h100", "--json"), ("facts", "h100_sxm5_80gb"),
                 ("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb")):
        result = _run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"passprice: error: {CARD}: not valid TOML: Invalid value (at line "), args
        assert str(root) not in result.output, args


def test_a_schema_error_from_a_subfolder_is_named_from_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _root(tmp_path)
    serving = root / "registry/servings/gemma3-270m-h100.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace("batch = 1", 'batch = "oops"'), encoding="utf-8")
    monkeypatch.chdir(root / "facts")
    result = _run("price", "gemma3-270m-h100")
    assert result.exit_code == 2
    assert result.stderr == ("passprice: error: ../registry/servings/gemma3-270m-h100.toml: batch: 'oops' is not of "
                             "type 'integer'\n")


def test_a_lock_that_does_not_read_is_named_relative_to_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    (root / LOCK).write_bytes((root / LOCK).read_bytes().replace(b"\n", b"\r"))
    monkeypatch.chdir(root)
    result = _run("price", "gemma3-270m-h100")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"passprice: error: {LOCK}: not valid TOML: Found invalid character '\\r'")
    assert str(root) not in result.output


def test_a_root_named_relatively_keeps_its_name_and_an_absolute_one_stays_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    _break_card(root)
    monkeypatch.chdir(tmp_path)
    result = _run("--root", "root", "price", "gemma3-270m-h100")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"passprice: error: root/{CARD}: not valid TOML")
    result = _run("--root", str(root), "price", "gemma3-270m-h100")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"passprice: error: {root}/{CARD}: not valid TOML")


# --- 2. general.alignment is a uint32 power of two, the header's alignment ----------------------------------------


def _with_alignment(root: Path, kind: str, value: str) -> None:
    entry = root / ENTRY
    text = entry.read_text(encoding="utf-8")
    line = f'"general.alignment" = {{ type = "{kind}", value = {value} }}\n'
    entry.write_text(text.replace('"general.architecture" = ', line + '"general.architecture" = ', 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("kind", "value", "says"),
    [
        ("uint32", '"32"', "value: '32' is not allowed here (one of 1, 2, 4, 8, 16, 32, 64,"),
        ("uint32", "3.5", "value: 3.5 is not allowed here (one of 1, 2, 4,"),
        ("uint32", "-1", "value: -1 is not allowed here (one of 1, 2, 4,"),
        ("uint32", str(1 << 40), "value: 1099511627776 is not allowed here (one of 1, 2, 4,"),
        ("uint32", "48", "value: 48 is not allowed here (one of 1, 2, 4,"),
        ("string", '"32"', "type: 'string' is not allowed here (must be 'uint32')"),
        ("float32", "3.5", "type: 'float32' is not allowed here (must be 'uint32')"),
        ("int32", "-1", "type: 'int32' is not allowed here (must be 'uint32')"),
        ("uint64", str(1 << 40), "type: 'uint64' is not allowed here (must be 'uint32')"),
    ],
)
def test_a_hand_edited_general_alignment_is_refused_by_the_schema(
    tmp_path: Path, kind: str, value: str, says: str
) -> None:
    root = _root(tmp_path)
    _with_alignment(root, kind, value)
    result = invoke("price", "gemma3-270m-h100", "--no-lock", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f'passprice: error: {root}/{ENTRY}: metadata."general.alignment".{says}')


def test_general_alignment_must_be_the_headers_alignment(tmp_path: Path) -> None:
    root = _root(tmp_path)
    _with_alignment(root, "uint32", "64")
    result = invoke("price", "gemma3-270m-h100", "--no-lock", root=root)
    assert result.exit_code == 2
    assert result.stderr == (f'passprice: error: {root}/{ENTRY}: header.alignment: 32 but metadata."general.alignment" '
                             "is 64: they must be equal\n")
    entry = root / ENTRY
    entry.write_text(entry.read_text(encoding="utf-8").replace(
        '"general.alignment" = { type = "uint32", value = 64 }\n', "").replace("alignment = 32", "alignment = 64", 1),
        encoding="utf-8")
    result = invoke("price", "gemma3-270m-h100", "--no-lock", root=root)
    assert result.exit_code == 2
    assert result.stderr == (f"passprice: error: {root}/{ENTRY}: header.alignment: 64 but metadata has no "
                             "\"general.alignment\" (GGUF's default, 32): they must be equal\n")


def test_a_stated_general_alignment_equal_to_the_headers_prices_as_before(tmp_path: Path) -> None:
    root = _root(tmp_path)
    before = json.loads(invoke("price", "gemma3-270m-h100", "--no-lock", "--json", root=root).stdout)
    _with_alignment(root, "uint32", "32")
    result = invoke("price", "gemma3-270m-h100", "--no-lock", "--json", root=root)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tokens_per_s"] == before["tokens_per_s"]


# --- 3. CRLF lock files ---------------------------------------------------------------------------------------------


def test_a_crlf_lock_reads_as_its_lf_copy_everywhere(tmp_path: Path) -> None:
    root = _root(tmp_path)
    lf = {
        "reproduce": invoke("reproduce", str(root / LOCK), root=root),
        "check": invoke("check", root=root),
        "price": invoke("price", "gemma3-270m-h100", "--json", root=root),
    }
    (root / LOCK).write_bytes((root / LOCK).read_bytes().replace(b"\n", b"\r\n"))
    crlf = {
        "reproduce": invoke("reproduce", str(root / LOCK), root=root),
        "check": invoke("check", root=root),
        "price": invoke("price", "gemma3-270m-h100", "--json", root=root),
    }
    for command, result in crlf.items():
        assert result.exit_code == 0 == lf[command].exit_code, (command, result.output)
        assert result.output == lf[command].output, command
    assert "lock gemma3-270m-h100" in crlf["check"].stdout and "all holds" in crlf["check"].stdout
    assert json.loads(crlf["price"].stdout)["lock"]["locks"] == ["gemma3-270m-h100"]
    # a re-lock writes passprice's own LF text, the same bytes the LF lock re-locks to
    updated = invoke("lock", "--update", "-o", str(root / LOCK), root=root)
    assert updated.exit_code == 0, updated.output
    assert b"\r" not in (root / LOCK).read_bytes()
    other = _root(tmp_path / "lf")
    assert invoke("lock", "--update", "-o", str(other / LOCK), root=other).exit_code == 0
    assert (root / LOCK).read_bytes() == (other / LOCK).read_bytes()


def test_a_lock_with_lone_carriage_returns_is_refused_by_name_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path)
    (root / LOCK).write_bytes((root / LOCK).read_bytes().replace(b"\n", b"\r"))
    monkeypatch.chdir(root)
    said = f"passprice: error: {LOCK}: not valid TOML: Found invalid character '\\r' (at line 1, column 36)"
    for args in (("reproduce", LOCK), ("price", "gemma3-270m-h100"), ("lock", "--update", "-o", LOCK), ("check",)):
        result = _run(*args)
        assert result.exit_code == 2, (args, result.output)
        # a price names why the lock stops it (its [lock] table read alone refuses lone CRs since attack105)
        why = (" (a lock file that does not read may lock gemma3-270m-h100: fix it (passprice check says what is wrong)"
               " or remove it)") if args[0] == "price" else ""
        assert said + why in result.stderr.splitlines(), (args, result.stderr)


# --- 4. byte and token counts as JSON integers ----------------------------------------------------------------------


def test_price_json_writes_whole_byte_counts_as_integers() -> None:
    result = invoke("price", "r1-qwen7b-h200", "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert '"held_bytes": 4912001024,' in result.stdout
    for key in ("weight_bytes", "sequence_bytes", "rewrite_bytes", "held_bytes", "capacity_bytes", "host_held_bytes",
                "host_capacity_bytes", "on_chip_bytes", "on_chip_capacity"):
        assert type(out[key]) is int, key
    assert (out["held_bytes"], out["capacity_bytes"]) == (4912001024, 141000000000)
    assert isinstance(out["tokens_per_s"], float) and isinstance(out["pass_s"], float)
    # the lock records the price object as made: its floats are pinned values
    assert "held_bytes = 4912001024.0\n" in (REPO / "locks/r1-qwen7b-h200.lock.toml").read_text(encoding="utf-8")


def test_best_json_of_a_mixture_keeps_a_fractional_count_a_float() -> None:
    result = invoke("best", "qwen3-30b-a3b-h200", "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    routing = out["routing"]
    assert type(routing["tokens"]) is int and type(routing["experts_held_bytes"]) is int
    assert routing["experts_held_bytes"] == 17553162240
    assert isinstance(routing["bytes"], float) and not routing["bytes"].is_integer()
    assert type(out["held_bytes"]) is int


# --- 5. a review fits each stack once ----------------------------------------------------------------------------


def test_a_review_fits_each_stack_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import calibrate

    # An empty cache of its own: a stack's findings are kept across runs by what the fit reads (round 29), so another
    # test's review of the same files would leave nothing to fit here.
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    # Nor is a stack as shipped fitted (stackfits.shipped_stack, tests/test_reviewfast159.py): left out here.
    monkeypatch.setattr(stackfits, "_SHIPPED", [(("", "", ""), {})])
    base = _root(tmp_path / "base")
    head = _root(tmp_path / "head")
    made = invoke("lock", "--checkpoint", "llama3-8b-q4_k_m", "--card", "rtx_4090", "--limit", "512", "--position",
                  "256", "--stack", "llamacpp-cuda-2405", "-o", str(head / "locks/l3-4090.lock.toml"), root=head)
    assert made.exit_code == 0, made.output
    fitted: list[str] = []
    real = calibrate.verify_stack

    def counted(root: object, stack: calibrate.Stack, runs: object = None) -> list[object]:
        fitted.append(stack.name)
        return real(root, stack, runs)  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "verify_stack", counted)
    result = invoke("diff", str(base), str(head), "--format", "json", root=head)
    assert result.exit_code == 0, result.output
    assert [lock["name"] for lock in json.loads(result.stdout)["locks"]] == ["l3-4090"]
    # HEAD's check findings and the lock's stale-stack marks: one fit of each stack (before: llamacpp-cuda-2405 twice)
    assert sorted(fitted) == ["llamacpp-cuda-2405", "lmdeploy-turbomind-2312"]


# --- 6. the memo's stamp and another process writing into the package -----------------------------------------------


def _world(tmp_path: Path) -> tuple[object, object]:
    import time

    from passprice import memorecord

    recorder = memorecord.Recorder(str(tmp_path), str(tmp_path / "cache"))
    return recorder, memorecord._World(time.time_ns(), recorder, None)


def test_a_file_the_run_did_not_read_rewritten_while_stamped_is_stamped_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import memorecord

    pyc = tmp_path / "__pycache__" / "m.cpython-311.pyc"
    pyc.parent.mkdir()
    pyc.write_bytes(b"new")
    recorder, world = _world(tmp_path)
    calls: list[object] = []
    real = memorecord._digest

    def rewritten_once(path: str, expected: object = None) -> bytes | None:
        calls.append(expected)
        return None if len(calls) == 1 else real(path, expected)  # type: ignore[arg-type]

    monkeypatch.setattr(memorecord, "_digest", rewritten_once)
    st = memorecord._stamp(pyc.stat())
    world.file(str(pyc), st, False)  # type: ignore[attr-defined]
    assert recorder.spoiled is None  # type: ignore[attr-defined]
    assert len(calls) == 2
    assert world.items[-1][4] == real(str(pyc))  # type: ignore[attr-defined]
    # a file the run read that changed while hashed still spoils the run
    card = tmp_path / "card.toml"
    card.write_bytes(b"x = 1\n")
    calls.clear()
    world.file(str(card), memorecord._stamp(card.stat()), True)  # type: ignore[attr-defined]
    assert recorder.spoiled == f"{card} changed while it was read"  # type: ignore[attr-defined]


def test_a_file_gone_between_the_listing_and_its_stat_is_left_out_of_the_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from passprice import memorecord

    top = tmp_path / "pkg"
    (top / "__pycache__").mkdir(parents=True)
    (top / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"x")
    temp = top / "__pycache__" / "m.cpython-311.pyc.140"
    temp.write_bytes(b"x")
    real = os.scandir

    class Renamed:
        """``os.scandir`` whose temporary file is renamed away once listed, as the interpreter writes a .pyc."""

        def __init__(self, path: str) -> None:
            self.entries = list(real(path))
            if temp.exists() and any(e.path == str(temp) for e in self.entries):
                temp.replace(top / "__pycache__" / "m.cpython-311.pyc")

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *_: object) -> None:
            return None

    monkeypatch.setattr(memorecord.os, "scandir", Renamed)
    monkeypatch.setattr(memorecord.memo, "KEEP_NS", (-(10**18), -(10**18)))  # files just written may be kept, as in
    # tests/test_memo.py's runs
    recorder, world = _world(tmp_path)
    world.trees = [str(top)]  # type: ignore[attr-defined]
    world.tree(str(top))  # type: ignore[attr-defined]
    assert recorder.spoiled is None  # type: ignore[attr-defined]
    stamped = [item[0] for item in world.items]  # type: ignore[attr-defined]
    assert str(top / "__pycache__" / "m.cpython-311.pyc") in stamped and str(temp) not in stamped
