"""Escapes of attack round 5 (issue 13), each with its reproducer built in the test, asserting the exit status and
the error line: files left unshown beside a bad one, a lock pinning what the registry cannot trace, names under an
ASCII locale, and the rest listed in the test's own comment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import bad, copy_card, copy_root, invoke
from passprice.errors import InputError

MEASURED = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
INSIDE = "a registry file names registry entries or files inside the registry"
_CHILD = "import sys; from passprice.cli import main; sys.argv[0] = 'passprice'; main()"


# ---------------------------------------------------------------------------------------------------------------------
# (a) One schema-invalid measurement file made `validate` show no run at all (exit 2, one line): the other files'
# runs are shown, the bad file named on stderr, exit 2. So is a run naming a card that is not there, and a stack file
# that does not read (its runs left out, the file named once).


def test_validate_shows_the_other_files_runs_beside_a_schema_invalid_one(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / MEASURED
    text = path.read_text()
    path.write_text(text.replace("tokens_per_s = ", 'tokens_per_s = "abc" # ', 1))
    result = invoke("validate", root=root)
    assert result.exit_code == 2, result.output
    # named relative to the registry, as check and the listings name it (leftovers 28c: it was ROOT/registry/…)
    # (fix54w: the number's unit said, where JSON Schema's words read "'abc' is not of type 'number'")
    assert result.stderr == f"passprice: error: {MEASURED}: run.0.tokens_per_s: 'abc' is not a number (tokens per " \
                            "second)\n"
    assert "pr15131.rtx_4090.l31-8b-q4_0.ub16 " in result.stdout  # llamacpp-points.toml's runs are shown
    assert "xd3.h100_pcie_80gb" not in result.stdout  # no run of the bad file
    # calibrate still refuses to fit while a file of runs does not read (a fit over some of them is no fit).
    bad("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root, says=f"{MEASURED}: run.0.tokens_per_s")


def test_validate_names_a_run_whose_card_is_gone_and_shows_the_rest(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / MEASURED
    text = path.read_text()
    assert 'card = "h100_pcie_80gb"' in text
    path.write_text(text.replace('card = "h100_pcie_80gb"', 'card = "no_such_card"', 1))
    result = invoke("validate", root=root)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    # attack73 (session 42): the run is named by its file and key, as check names it
    assert line.startswith("passprice: error: registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0.card: ")
    assert "card 'no_such_card': not found" in line
    assert "xd3.h100_pcie_80gb.8b-q4km.tg1024 " in result.stdout


def test_validate_names_a_stack_file_that_does_not_read_once(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    stack.write_text(stack.read_text() + "\nshare.read = 5\n")
    result = invoke("validate", root=root)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"passprice: error: {stack.relative_to(root)}: ")  # as check names it
    assert "pr15131.rtx_4090.l31-8b-q4_0.ub16 " in result.stdout  # runs of no registered stack: still shown


# ---------------------------------------------------------------------------------------------------------------------
# (b) `lock --card /outside.toml -o locks/x.lock.toml` wrote a lock that `check` then failed ("serving.card: …
# lies outside the registry"): a lock of the registry pinned a card nobody can trace back from it. Refused by name,
# nothing written; a lock written outside the registry (the user's own) may name any card.


def test_a_lock_of_the_registry_may_not_pin_a_card_outside_it(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    outside = tmp_path / "outside.toml"
    shutil.copy(root / "facts" / "cards" / "h200_sxm_141gb.toml", outside)
    out = root / "locks" / "out.lock.toml"
    line = (
        f"locks/out.lock.toml: card: {outside} lies outside the registry ({root}): {INSIDE}; a lock written there "
        "could not be "
        "traced back to the registry: copy the file into the registry (passprice import, facts/…), or write the lock "
        "outside the registry (-o FILE)"
    )
    assert bad("lock", "r1-qwen7b-h200", "--card", str(outside), "-o", str(out), root=root) == [
        f"passprice: error: {line}"
    ]
    assert not out.exists()
    bad("lock", "r1-qwen7b-h200", "--card", str(outside), "--name", "out", root=root, says="lies outside the registry")
    assert not out.exists()
    mine = tmp_path / "mine.lock.toml"
    assert invoke("lock", "r1-qwen7b-h200", "--card", str(outside), "-o", str(mine), root=root).exit_code == 0
    assert 'card = "outside"' in mine.read_text()
    inside = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    assert invoke("lock", "r1-qwen7b-h200", "--card", str(inside), "-o", str(out), root=root).exit_code == 0


# ---------------------------------------------------------------------------------------------------------------------
# (c) Under LC_ALL=POSIX PYTHONUTF8=0 Python's file system encoding is ASCII: a registered card é.toml was listed as
# "??", named '\udcc3\udca9' in error lines, `lock --card é` was a UnicodeEncodeError traceback, and a serving file
# naming card = "é" was refused as "not a file name (it holds a NUL character)". passprice runs itself again in
# Python's UTF-8 mode. A card file whose name is not UTF-8 at all cannot be pinned: refused by name, not a traceback.


def _ascii_locale() -> dict[str, str]:
    env = {**os.environ, "PYTHONUTF8": "0", "LC_ALL": "POSIX", "PYTHONIOENCODING": ""}
    env.pop("LANG", None)
    return env


def test_utf8_file_names_under_an_ascii_locale(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    shutil.copy(root / "facts" / "cards" / "h200_sxm_141gb.toml", root / "facts" / "cards" / "é.toml")
    serving = root / "registry" / "servings" / "r1-qwen7b-h200.toml"
    serving.write_text(serving.read_text().replace('card = "h200_sxm_141gb"', 'card = "é"'), encoding="utf-8")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", _CHILD, "--root", str(root), *args], env=_ascii_locale(),
                              cwd=tmp_path, capture_output=True, timeout=120, encoding="utf-8")

    done = run("cards")
    assert done.returncode == 0, done.stderr
    assert "\né   " in done.stdout and "??" not in done.stdout
    done = run("facts", "nope-é")
    assert done.returncode == 2
    assert done.stderr.startswith("passprice: error: card 'nope-é' (spelled 'nope-\\xe9'): not found in ")
    assert "udc" not in done.stderr
    # the registered names, then how to add a card of one's own (walk107)
    assert done.stderr.rstrip().endswith("ws1_hypothetical, é); a card not registered is a file of your own: copy the "
                                         "closest registered card's file to facts/cards/nope-é.toml and set its facts "
                                         "(README, 'A card of your own')")
    done = run("lock", "r1-qwen7b-h200", "--card", "é", "-o", str(root / "locks" / "é.lock.toml"))
    assert done.returncode == 0, done.stderr
    assert "[card]\nname = \"é\"" in (root / "locks" / "é.lock.toml").read_text("utf-8")
    done = run("price", "r1-qwen7b-h200", "--no-lock")
    assert done.returncode == 0, done.stderr
    assert " on é (NVIDIA H200 SXM 141GB)" in done.stdout


def test_a_card_file_name_that_is_not_utf8_is_not_pinned(tmp_path: Path) -> None:
    # Was a UnicodeEncodeError traceback in lock; the card's name is now refused where it is read (see the test of
    # names that do not print below), and a lock document holding such a text is one line too.
    root = copy_root(tmp_path)
    card = os.fsdecode(b"\xff")
    path = root / "facts" / "cards" / f"{card}.toml"
    shutil.copy(root / "facts" / "cards" / "h200_sxm_141gb.toml", path)
    out = tmp_path / "ff.lock.toml"
    bad("lock", "r1-qwen7b-h200", "--card", card, "-o", str(out), root=root,
        says="/facts/cards/\\udcff.toml: the name \\udcff holds a character that does not print")
    assert not out.exists()
    import attrs

    from passprice.locks import lock_text, read_lock

    lock = read_lock(root / "locks" / "r1-qwen7b-h200.lock.toml")
    with pytest.raises(InputError) as e:
        lock_text(attrs.evolve(lock, card_pin=attrs.evolve(lock.card_pin, name=card)))
    assert str(e.value) == (
        "lock r1-qwen7b-h200: card.name: \\udcff is not UTF-8 text (a name taken from a file name whose bytes are "
        "not UTF-8): a lock records names as UTF-8; rename the file"
    )


# A registry file whose name does not print (a newline, ESC, U+202E) was shown raw: `cards` split a row in two,
# `facts`, `price --card`, `roofline`, `lock` and `fact show` printed the bidi control, reordering their lines. Its
# name is refused where the record is read (the listing still shows the good ones), and every table cell is escaped.


def test_a_registry_name_that_does_not_print_is_named_not_shown(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    for name in ("ev\u202eil", "nl\nx", "esc\x1b[31m"):
        shutil.copy(cards / "h200_sxm_141gb.toml", cards / f"{name}.toml")
    result = invoke("cards", root=root)
    assert result.exit_code == 2
    assert "h200_sxm_141gb  " in result.stdout and "\u202e" not in result.stdout and "\x1b" not in result.stdout
    what = ("holds a character that does not print (a control character, a bidi control, an invisible, private-use "
            "or unassigned character or a byte that is not UTF-8): it would be shown on every line naming the record; "
            "rename the file")
    assert result.stderr.splitlines() == [  # named as check names them, relative to the registry
        f"passprice: error: facts/cards/esc\\x1b[31m.toml: the name esc\\x1b[31m {what}",
        f"passprice: error: facts/cards/ev\\u202eil.toml: the name ev\\u202eil {what}",
        f"passprice: error: facts/cards/nl\\nx.toml: the name nl\\nx {what}",
    ]
    for args in (("facts", "ev\u202eil"), ("price", "r1-qwen7b-h200", "--card", "ev\u202eil", "--no-lock"),
                 ("fact", "show", "ev\u202eil", "memory.bandwidth")):
        bad(*args, root=root, says=f"{cards}/ev\\u202eil.toml: the name ev\\u202eil {what}")
    servings = root / "registry" / "servings"
    shutil.copy(servings / "r1-qwen7b-h200.toml", servings / "sv\u202e.toml")
    bad("price", "sv\u202e", root=root, says=f"{servings}/sv\\u202e.toml: the name sv\\u202e {what}")


# ---------------------------------------------------------------------------------------------------------------------
# A registry folder replaced by something else: `locks` as a regular file, a FIFO or a link to nothing was read as an
# empty folder, so `price` priced with every lock silently off and `check` said "all holds" (exit 0); `sources` as a
# file listed no source (exit 0). Each is one line naming the folder and what is there, exit 2.


def test_a_registry_folder_that_is_not_a_folder_is_named(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    locks = root / "locks"
    shutil.rmtree(locks)
    for make, what in ((lambda: os.mkfifo(locks), "is a FIFO (named pipe), not a folder"),
                       (lambda: locks.write_text("x\n"), "is a regular file, not a folder"),
                       (lambda: locks.symlink_to("nowhere"), "a symbolic link to nothing, where the registry keeps")):
        make()
        for args in (("price", "r1-qwen7b-h200"), ("check",), ("reproduce", "r1-qwen7b-h200")):
            # check names files relative to the root, as its other lines do (and checks the rest, test_leftovers.py)
            line = f"passprice: error: {'locks' if args == ('check',) else locks}: {what}"
            result = invoke(*args, root=root)
            assert result.exit_code == 2, (args, result.output)
            assert result.stderr.startswith(line), (args, result.stderr)
        locks.unlink()
    sources = root / "sources"
    shutil.rmtree(sources)
    sources.write_text("x\n")
    bad("sources", root=root, says=f"{sources}: is a regular file, not a folder")


# ---------------------------------------------------------------------------------------------------------------------
# Ctrl-C in the first 0.25-0.9 s (a loaded machine) printed the interpreter's KeyboardInterrupt traceback of whatever
# module the script was importing (status: killed by SIGINT), and one while click built a command's options said
# "Aborted!" with exit 1. Both exit 130 with "passprice: interrupted" now. The child below interrupts itself while
# passprice.cli is being imported, so the test needs no timing.

_INTERRUPTED_IMPORT = """
import os, signal, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "passprice.cli":
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt())
sys.argv[1:] = ["cards"]
from passprice.entry import main
main()
"""


def test_ctrl_c_while_the_command_line_is_imported_exits_130() -> None:
    env = {**os.environ, "PASSPRICE_NO_MEMO": "1"}  # no replay of a kept `cards`: the command line is imported
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=60,
                          env=env)
    assert (done.returncode, done.stderr, done.stdout) == (130, "passprice: interrupted\n", "")


def test_ctrl_c_while_click_parses_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import click

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(click.Group, "make_context", interrupted)
    result = invoke("cards")
    assert (result.exit_code, result.stderr) == (130, "passprice: interrupted\n")


# ---------------------------------------------------------------------------------------------------------------------
# A sweep file of 129 KB — positions = ["a", 0, 1, …, 19999] — ran past 60 s of CPU: jsonschema's uniqueItems sorts
# the items, and when they do not sort (a string among numbers) compares every pair (2 × 10^8 comparisons). The sweep
# schema now checks uniqueness only of items of the one type (if/then), and bounds each list (maxItems: servings,
# cards and positions 4,000, each at least a pass shape of the 4,000 a sweep reads; draft lengths 65; an explicit
# list of batches 16,384, a range for more), so a 690 KB list of 100,000 batches is refused before its items are
# walked (it took 2 to 3 s of CPU to validate).


def _sweep_file(root: Path, lines: list[str]) -> Path:
    path = root / "grid.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_sweep_list_that_does_not_sort_is_named_not_compared_pair_by_pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: past the 256 KiB cap; kept reachable
    root = copy_root(tmp_path)
    numbers = ", ".join(str(i) for i in range(3999))
    path = _sweep_file(root, ['servings = ["r1-qwen7b-h200"]', f'positions = ["a", {numbers}]', "batches = [1, 1]"])
    assert bad("sweep", "--file", str(path), "--no-lock", root=root) == [
        f"passprice: error: {path}: batches: 1 is listed more than once",
        f"passprice: error: {path}: positions.0: 'a' is not of type 'number'",
    ]
    many = ", ".join(str(i) for i in range(20000))
    path = _sweep_file(root, ['servings = ["r1-qwen7b-h200"]', f'positions = ["a", {many}]', "batches = [1]"])
    assert bad("sweep", "--file", str(path), "--no-lock", root=root) == [
        f"passprice: error: {path}: positions: 20,001 items (at most 4,000)"
    ]
    batches = ", ".join(str(i) for i in range(1, 100_001))
    path = _sweep_file(root, ['servings = ["r1-qwen7b-h200"]', f"batches = [{batches}]"])
    assert path.stat().st_size < 1_000_000
    assert bad("sweep", "--file", str(path), "--no-lock", root=root) == [
        f"passprice: error: {path}: batches: 100,000 items (at most 16,384)"
    ]


# ---------------------------------------------------------------------------------------------------------------------
# A checkpoint entry's metadata value may be an array of any length: one of 120,000 float32s (1.1 MB) took 5 s of CPU
# to validate (each item through the float32 $ref) and was accepted, though the header reader keeps at most 1,024
# elements of an array (a longer one is written as its type and length). The schema bounds a value's array at 1,024
# and walks a float array's items only within it; the elements counted through nested arrays are checked against the
# same limit when the entry is read.

ENTRY = "registry/checkpoints/gemma3-270m-q4_k_m.toml"
SCORES = ('"tokenizer.ggml.scores" = { type = "array[float32]", length = 262144, '
          'sha256 = "a8a8e2bd749472151edb6086e66cf59e70a1ce7974d765f25d9818c4f3cecbd3" }')  # its elements' digest


def _entry_value(root: Path, value: str) -> Path:
    path = root / ENTRY
    text = path.read_text()
    assert SCORES in text
    path.write_text(text.replace(SCORES, f'"tokenizer.ggml.scores" = {value}'))
    return path


def test_a_checkpoint_entrys_array_is_bounded_as_the_reader_keeps_it(tmp_path: Path) -> None:
    import json

    from passprice.gguf_header import KEEP_ARRAY_LIMIT

    schema = json.loads((Path(__file__).resolve().parent.parent / "schema" / "checkpoint.schema.json").read_text())
    assert schema["$defs"]["value"]["oneOf"][0]["properties"]["value"]["maxItems"] == KEEP_ARRAY_LIMIT
    root = copy_root(tmp_path)
    # One past the bound (the 120,000 float32s of the report were refused the same way, by the array's length and
    # without a walk of its items: schema.WALKED_ITEMS, at eight times this test's CPU).
    floats = ", ".join(f"{i}.5" for i in range(KEEP_ARRAY_LIMIT + 1))
    path = _entry_value(root, f'{{ type = "array[float32]", value = [{floats}] }}')
    assert bad("header", "gemma3-270m-q4_k_m", root=root) == [
        f'passprice: error: {path}: metadata."tokenizer.ggml.scores".value: 1,025 items (at most 1,024)'
    ]
    root = copy_root(tmp_path / "nested")
    inner = ", ".join(["[1, 2]"] * 600)  # 600 arrays (within 1,024) of 1,200 elements in all
    path = _entry_value(root, f'{{ type = "array[array[uint32]]", value = [{inner}] }}')
    assert bad("header", "gemma3-270m-q4_k_m", root=root) == [
        f'passprice: error: {path}: metadata."tokenizer.ggml.scores".value: 1,200 elements counted through its '
        "arrays: the header reader keeps at most 1,024 of an array (a longer one is written as its type and length)"
    ]


def test_a_routing_records_checkpoints_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 990 KB: 100,000 names took 3.2 s of CPU (each item walked, then the OutOfScope line listing every one of them).
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: past the 256 KiB cap; kept reachable
    root = copy_root(tmp_path)
    path = root / "facts" / "routing" / "uniform.toml"
    names = ", ".join(f'"c{i}"' for i in range(100_000))
    path.write_text(path.read_text().replace("[routing]\n", f"[routing]\ncheckpoints = [{names}]\n", 1))
    assert path.stat().st_size < 1_000_000
    bad("price", "qwen3-30b-a3b-h200", "--routing", "uniform", "--no-lock", root=root,
        says=f"{path}: routing.checkpoints: 100,000 items (at most 1,024)")


def test_an_error_line_naming_80000_stray_keys_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # jsonschema names every unexpected key of a table in one message: 80,000 stray keys under memory.capacity
    # (1.2 MB) printed one error line of 789 KB. A line past 4,000 characters keeps its head and its tail. (A file of
    # more than 32,768 values is explained in jsonschema-rs's words, which name the keys in file order.)
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: past the 256 KiB cap; kept reachable
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    # 4,000 keys: a table of more than 4,096 is refused by its size before the schema names its keys (round 23).
    stray = "".join(f"k{i}_{'x' * 24} = {i}\n" for i in range(4_000))
    card.write_text(card.read_text().replace("[memory.capacity]\n", f"[memory.capacity]\n{stray}", 1))
    [line] = bad("facts", "h200_sxm_141gb", root=root)
    pad = "x" * 24
    # The keys are named sorted, the first five, the rest counted, as stray keys of a table are (attack round 51:
    # the line was cut by `passprice: error:` alone, and check's lines and the listings' --json problems were not).
    keys = ", ".join(f"'k{i}_{pad}'" for i in ("0", "1000", "1001", "1002", "1003"))
    assert line == (f"passprice: error: {card}: memory.capacity: unknown keys {keys} and 3995 more; the keys here are "
                    "derivation, locator, note, provenance, source, unit, value")


def test_diff_shows_a_name_that_does_not_print_escaped(tmp_path: Path) -> None:
    # diff of two folders, HEAD adding a card file ev\u202eil.toml: the text and the markdown review printed the bidi
    # control raw (reordering the line in a terminal and in the pull-request comment); HEAD's file is named as bad.
    base = copy_root(tmp_path / "base")
    head = copy_root(tmp_path / "head")
    cards = head / "facts" / "cards"
    shutil.copy(cards / "h200_sxm_141gb.toml", cards / "ev\u202eil.toml")
    text = invoke("diff", str(base), str(head), root=base)
    assert text.exit_code == 2
    assert "facts/cards/ev\\u202eil.toml (card ev\\u202eil): added" in text.stdout and "\u202e" not in text.stdout
    assert "facts/cards/ev\\u202eil.toml: the name ev\\u202eil holds a character that does not print" in text.stderr
    markdown = invoke("diff", str(base), str(head), "--format", "markdown", root=base)
    assert "ev\ufffdil" in markdown.stdout and "\u202e" not in markdown.stdout


def test_check_names_files_whose_names_differ_only_by_case_or_normalization(tmp_path: Path) -> None:
    # A card é.toml written as U+00E9 and another as e + U+0301 listed as two cards both shown "é" (a review cannot
    # tell which one a serving names), and H200_SXM_141GB.toml beside h200_sxm_141gb.toml: both pairs are one file on
    # macOS and Windows. check (and so a review) names each set, exit 2, and still shows the rest.
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    for name in ("\u00e9", "e\u0301", "H200_SXM_141GB"):
        copy_card(cards / "h200_sxm_141gb.toml", cards / f"{name}.toml")
    servings = root / "registry" / "servings"
    shutil.copy(servings / "r1-qwen7b-h200.toml", servings / "R1-qwen7b-h200.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    what = ("names that differ only by case or Unicode normalization (they show alike, and are one file on macOS and "
            "Windows): rename all but one")
    assert result.stderr.splitlines() == [
        # the two copies' titles, "… (copy é)" as U+00E9 and as e + U+0301, are one title as read (attack round 46)
        "passprice: error: facts/cards/\u00e9.toml: card.name: 'NVIDIA H200 SXM 141GB (copy \u00e9)' is the title of "
        "e\u0301.toml too: a review's tables show a card by its title; give each card its own (spelled '\\xe9') "
        "(spelled 'e\\u0301')",
        f"passprice: error: facts/cards: 'H200_SXM_141GB.toml', 'h200_sxm_141gb.toml': {what}",
        f"passprice: error: facts/cards: 'e\\u0301.toml', '\\xe9.toml': {what}",
        f"passprice: error: registry/servings: 'R1-qwen7b-h200.toml', 'r1-qwen7b-h200.toml': {what}",
    ]
    assert "lock r1-qwen7b-h200 " in result.stdout
