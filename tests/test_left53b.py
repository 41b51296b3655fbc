"""Issue 13's leftovers: bad input is one line naming its file and key, exit 2, no traceback; a guess is refused.

1. A serving file's class of ``limit = 1`` without a position priced mean position 0.5 (exit 0) where ``--limit 1``
   is refused (``leaves no whole mean position``): it is bad input naming the file and ``contexts.N.limit`` in every
   command that reads the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

GEMMA = REPO / "registry" / "servings" / "gemma3-270m-h100.toml"
LONE = ("contexts.{i}.limit: 1 leaves no whole mean position to price: a sequence allowed 1 position holds row 0 "
        "alone, and the default mean position limit / 2 is 0.5; give limit = 2 or more, or position = 0")


# --- (1) a serving file's limit = 1 ----------------------------------------------------------------------------------


def _one_limit(tmp_path: Path, *, second: bool = False, position: str | None = None) -> Path:
    """The gemma serving with its first class (``second``: its second) at ``limit = 1`` and no position (or
    ``position``)."""
    text = GEMMA.read_text(encoding="utf-8")
    head, first, other = text.split("[[contexts]]")
    changed = "\nshare = {share}\n" + (f"position = {position}\n" if position is not None else "") + "limit = 1\n\n"
    if second:
        other = changed.format(share=0.25)
    else:
        first = changed.format(share=0.75)
    path = tmp_path / "one.toml"
    path.write_text("[[contexts]]".join([head, first, other]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "words",
    [
        ["price"], ["price", "--json"], ["best"], ["max-batch"], ["compare"], ["sweep"],
        ["roofline", "h100_sxm5_80gb"], ["simulate", "--synthetic", "3", "--seed", "1"], ["new-serving", "zz"],
        ["price", "--position", "0"],
    ],
)
def test_file_limit_one_refused_by_file_and_key(tmp_path: Path, words: list[str]) -> None:
    path = _one_limit(tmp_path)
    lines = bad(*words, str(path), root=copy_root(tmp_path) if words[0] == "new-serving" else REPO)
    assert lines == [f"passprice: error: {path}: {LONE.format(i=0)}"]


def test_file_limit_one_second_class(tmp_path: Path) -> None:
    path = _one_limit(tmp_path, second=True)
    assert bad("price", str(path)) == [f"passprice: error: {path}: {LONE.format(i=1)}"]


def test_file_limit_one_with_position_zero_prices_row_zero(tmp_path: Path) -> None:
    """``position = 0`` of ``limit = 1`` is a whole position (the line's advice): priced, exit 0."""
    path = _one_limit(tmp_path, position="0")
    result = invoke("price", str(path))
    assert result.exit_code == 0, result.output
    assert "0.75 × contexts at mean position 0 of a 1 limit;" in result.stdout


def test_cli_limit_one_line_unchanged() -> None:
    """The option's own line, from the same wording."""
    lines = bad("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb", "--limit", "1")
    assert lines == [
        "passprice: error: Invalid value for --limit: 1 leaves no whole mean position to price: a sequence allowed 1 "
        "position holds row 0 alone, and the default mean position limit / 2 is 0.5; give --limit 2 or more, or "
        "--position 0 (see 'cli price --help')"
    ]


# --- (2) a lock past the size cap, its path once ---------------------------------------------------------------------


def test_lock_past_the_cap_on_head_is_named_once(tmp_path: Path) -> None:
    """``diff`` of two folders, HEAD's lock past 256 KiB: ``locks/X does not read on HEAD: larger than …``, the path
    once (it was ``locks/X does not read on HEAD: locks/X: larger than …``); the listing keeps the reader's line."""
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    lock = head / "locks" / "gemma3-270m-h100.lock.toml"
    lock.write_bytes(lock.read_bytes() + b"#" * 300_000 + b"\n")
    size = lock.stat().st_size
    rel = "locks/gemma3-270m-h100.lock.toml"
    said = (f"larger than 256 KiB, the most a lock file may hold ({size:,} bytes; PASSPRICE_MAX_FILE_BYTES=BYTES "
            "raises the cap)")
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"passprice: error: {rel} does not read on HEAD: {said}"]
    assert result.stderr.count(rel) == 1
    assert f"  does not read on HEAD:\n    {rel}: {said}\n" in result.stdout


# --- (3) the advice after a refusal gives numbers as typed -----------------------------------------------------------


def test_best_lock_advice_gives_numbers_as_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--position 4000`` was repeated ``--position 4000.0`` (``--kv-bytes 1``: ``1.0``); a fraction keeps its
    digits. The advice, pasted, locks."""
    import shlex

    monkeypatch.chdir(tmp_path)
    result = invoke("lock", "gpt-oss-20b-h200", "--stack", "llamacpp-cuda-2405", "-o", "y.lock.toml",
                    "--position", "4000", "--kv-bytes", "1", "--memory-use", "0.9")
    assert result.exit_code == 1 and not (tmp_path / "y.lock.toml").exists(), result.output
    advice = ("passprice lock gpt-oss-20b-h200 --best --stack llamacpp-cuda-2405 --position 4000 --kv-bytes 1 "
              "--memory-use 0.9 -o y.lock.toml")
    assert result.stderr.splitlines()[0].endswith(f"; or lock its best price inside the stack's range: `{advice}`")
    followed = invoke(*shlex.split(advice)[1:])
    assert followed.exit_code == 0, followed.output
    assert (tmp_path / "y.lock.toml").exists()


@pytest.mark.parametrize(
    ("value", "word"),
    [(4000.0, "4000"), (0.0, "0"), (0.9, "0.9"), (1e-05, "1e-05"), (2.5e20, "250000000000000000000"), (3, "3"),
     ("x y.lock.toml", "'x y.lock.toml'"), ("-o.toml", "./-o.toml")],
)
def test_typed_word(value: object, word: str) -> None:
    from passprice.cli import _typed_word

    assert _typed_word(value) == word
