"""Left56 (session 42): small leftovers of attack73 and left54, each reproducer built in its test.

1. An editing command whose standard output is full (``> /dev/full``) wrote its edit, then said only ``standard
   output: No space left on device`` (exit 2): its user would redo an edit that stands. The line now names the files
   written (:func:`passprice.cli.app._written_before`).
2. ``explain`` skipped an empty key in a dotted path (``.calibration[0]..card_facts.unread``, ``streams.rewrite.``)
   but refused ``streams..rewrite`` as no term: one rule now, as a card's fact path has it, refused by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

_CHILD = "import sys; from passprice.cli import main; sys.argv[0] = 'passprice'; main()"

H200 = "h200_sxm_141gb"
FACT = ("--unit", "TB/s", "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator",
        "Table 1, memory bandwidth row")


def _to_full(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``passprice --root ROOT ARGS > /dev/full`` in a child process (the error is met at the interpreter's exit)."""
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-c", _CHILD, "--root", str(root), *args], stdout=full,
                              capture_output=False, stderr=subprocess.PIPE, text=True, cwd=root, timeout=120)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_1_an_edit_written_before_a_full_standard_output_is_named(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{H200}.toml"
    done = _to_full(root, "fact", "set", H200, "memory.bandwidth", "--value", "4.9", *FACT)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"passprice: error: standard output: No space left on device; written before it failed, and kept: {card} "
        "(do not redo the edit)"]
    assert "value = 4.9\n" in card.read_text(encoding="utf-8")  # it was written: the line is true
    serving = root / "registry" / "servings" / "s56.toml"
    done = _to_full(root, "new-serving", "s56", "r1-qwen7b-h200")
    assert done.returncode == 2 and serving.is_file()
    assert done.stderr.splitlines() == [
        f"passprice: error: standard output: No space left on device; written before it failed, and kept: {serving} "
        "(do not redo the edit)"]
    # A command that writes nothing says what it did before: no file named.
    done = _to_full(root, "cards")
    assert (done.returncode, done.stderr) == (2, "passprice: error: standard output: No space left on device\n")


def test_1_written_before_names_each_file_once() -> None:
    from passprice.cli.app import _written_before
    from passprice.files import WRITTEN

    kept = list(WRITTEN)
    try:
        WRITTEN[:] = []
        assert _written_before() == ""
        WRITTEN[:] = [Path("locks/a.lock.toml"), Path("facts/cards/x.toml"), Path("locks/a.lock.toml")]
        assert _written_before() == ("; written before it failed, and kept: locks/a.lock.toml, facts/cards/x.toml "
                                     "(do not redo the edit)")
    finally:
        WRITTEN[:] = kept


@pytest.mark.parametrize(("path", "offered"), [
    (".calibration[0]..card_facts.unread", "; did you mean .calibration[0].card_facts.unread?"),
    (".calibration[0].card_facts.unread.", "; did you mean .calibration[0].card_facts.unread?"),
    ("streams.rewrite.", "; did you mean streams.rewrite?"),
    ("streams..rewrite", "; did you mean streams.rewrite?"),
    ("x..y", ""),
    (".", ""),
])
def test_2_explain_refuses_an_empty_key_by_name(path: str, offered: str) -> None:
    bad("explain", path, says=f"passprice: error: explain: '{path}': an empty key in the path (two dots together, "
        f"or one at its end){offered} (passprice explain lists the terms)")


@pytest.mark.parametrize(("path", "term"), [
    (".calibration[0].card_facts.unread", "stack"),  # jq's leading dot and an index are no empty key
    (".streams.rewrite", "streams.rewrite"),
    (".[0].unread", "stack"),
    ("s.e.", "emitted/pass"),  # a term whose own name ends in a dot
])
def test_2_explain_keeps_a_path_without_an_empty_key(path: str, term: str) -> None:
    result = invoke("explain", path)
    assert result.exit_code == 0 and result.output.startswith(f"{term}: "), result.output


def _git(repo: Path, *args: str) -> str:
    import os

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


# Item 3 (read_named's total cap) is attack74's, tested in test_attack74.py (both built one; attack74's kept).


def test_4_diff_reads_the_characters_a_name_runs_on_from_textchange(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: diff._NO_START was r"[A-Za-z_\d.,=]", textchange.NUMBER's look-behind class copied by hand plus "=". Now
    # both are built from textchange.RUNS_INTO: the same characters, one place to change them.
    from passprice import textchange
    from passprice.review import changes

    assert textchange.RUNS_INTO == r"A-Za-z_\d.,"
    assert textchange.NUMBER.startswith(r"(?<![A-Za-z_\d.,])(?<!\d[eE][+-])")
    assert changes._no_start() == r"[A-Za-z_\d.,=]"  # the class the hand-written copy held
    spans = {text: [text[a:b] for a, b in changes._setting_spans(text)]
             for text in ("run n_ctx=512 here", "x=n_ctx 512", "a,n_ctx 512", "9n_ctx 512", "b=-c 512")}
    assert spans == {"run n_ctx=512 here": ["n_ctx=512"], "x=n_ctx 512": [], "a,n_ctx 512": [], "9n_ctx 512": [],
                     "b=-c 512": []}
    monkeypatch.setattr(textchange, "RUNS_INTO", "a-z")  # a change made there is diff's too
    assert changes._no_start() == "[a-z=]"
    assert [t[a:b] for t in ["9n_ctx 512"] for a, b in changes._setting_spans(t)] == ["n_ctx 512"]
