"""Left59: issue 13's small leftovers, each reproducer built in its test.

- (1) addedfacts kept its own number in five patterns (a power of ten, a range, a bound, a part of a whole, a count
  after ``x``) beside ``textchange.NUMBER``: ``4,800 x 10^9 B/s`` read ``9 B/s``, ``1 x 10^4000 GB/s`` ``4000 GB/s``,
  ``over 16,896 FP32 lanes`` (the H100 card's locator) a bound of 16. They are built on textchange's ``DIGITS`` /
  ``QUOTED`` / ``POWERED`` / ``TIMES_COUNT``; every other shipped text reads as before.
- (2) ``tables.json_text`` wrote ``Infinity`` / ``NaN``: a number that is not finite is ``null``.
- (3) A first-format lock whose name another current-format lock of ``locks/`` holds was told by ``check`` and
  ``reproduce`` to re-lock with ``passprice lock --update -o FILE``, which left58 refuses (exit 2): the hint names
  the re-lock under its file's name, with its serving, or removing it.
- (4) ``files.WRITTEN`` (the files a command wrote, which ``main``'s last-resort error line names) kept every file
  the process wrote: a program calling the library grew it by one path a file. It records only while ``main`` runs
  a command.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import REPO, copy_root, invoke

R1 = "r1-qwen7b-h200"
#: What every command says first of a first-format lock.
FORMAT_1 = ("lock format 1, older than 2: it pins no pricing-model digest and no checkpoint content, and its rests_on "
            "is the first format's fixed list, so it is reproduced on its figures only; ")


def _old_beside_r1(tmp_path: Path) -> tuple[Path, Path]:
    """A registry whose ``locks/`` holds R1's lock and ``old.lock.toml``, a first-format lock named R1; the root and
    the old lock's path."""
    root = copy_root(tmp_path)
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml":
            other.unlink()
    old = root / "locks" / "old.lock.toml"
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    return root, old


def test_3_the_older_format_hint_names_what_works_when_its_name_is_taken(tmp_path: Path) -> None:
    # before: check and reproduce (exit 0) said "re-lock it: `passprice lock --update -o locks/old.lock.toml` keeps
    # its policy, …", and that command exits 2 ("lock.name: 'r1-qwen7b-h200' is also the name of …", left58)
    root, old = _old_beside_r1(tmp_path)
    hint = (FORMAT_1 + "re-lock it under its file's name: `passprice lock r1-qwen7b-h200 --force -o "
            "locks/old.lock.toml` (the default policy; `lock --update` keeps its name, 'r1-qwen7b-h200', which "
            "locks/r1-qwen7b-h200.lock.toml holds, and is refused), or remove it")
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    assert f"  format: {hint}" in checked.stdout.splitlines()
    reproduced = invoke("reproduce", str(old), root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert f"  {hint}" in reproduced.stdout.splitlines()
    done = invoke("lock", R1, "--force", "-o", str(old), root=root)  # what it says works (--update: exit 2)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("locked old (price, locks serving r1-qwen7b-h200): 996.1 tokens/s at batch 1")


def test_3_a_first_format_lock_that_does_not_reproduce_is_told_the_relock_that_works(tmp_path: Path) -> None:
    # before: "… or re-lock it with today's code (`passprice lock --update -o locks/old.lock.toml`) …", exit 2 when run
    # (left58). Today's code moving its price is stood in by a price the pinned inputs no longer give.
    import attrs

    from passprice import reproduce
    from passprice.locks import read_lock_in
    from passprice.registry import Root

    root, old = _old_beside_r1(tmp_path)
    lock = read_lock_in(Root(root), old)
    done = reproduce.reproduce(Root(root), lock)
    assert done.name_clash == ("locks/r1-qwen7b-h200.lock.toml", R1) and done.equals
    assert done.price is not None
    moved = dict(done.price, tokens_per_s=done.price["tokens_per_s"] * 0.9)
    verdict = attrs.evolve(done, price=moved, moved=reproduce.moved(lock.price, moved, lock.compared()))
    assert verdict.verdict("locks/old.lock.toml").endswith(
        "or re-lock it with today's code (`passprice lock r1-qwen7b-h200 --force -o locks/old.lock.toml`, under its "
        "file's name: `lock --update` keeps 'r1-qwen7b-h200', which locks/r1-qwen7b-h200.lock.toml holds) and review "
        "the change")

def test_3_the_hint_without_a_clash_is_unchanged(tmp_path: Path) -> None:
    root, old = _old_beside_r1(tmp_path)
    (root / "locks" / f"{R1}.lock.toml").unlink()
    reproduced = invoke("reproduce", str(old), root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert (f"  {FORMAT_1}re-lock it: `passprice lock --update -o locks/old.lock.toml` keeps its policy, `passprice "
            "lock SERVING --force -o locks/old.lock.toml` gives it the default one") in reproduced.stdout.splitlines()


#: A child that calls the library twice (two files written), says how many paths ``files.WRITTEN`` holds, then runs
#: ``passprice ARGS`` (``main``) and says it again from ``main``'s ``finally``.
_TWICE = """
import sys
from pathlib import Path
from passprice import files
for name in ("a.txt", "b.txt"):
    files.write_atomically(Path(name), "x\\n")
print(len(files.WRITTEN), file=sys.stderr)
from passprice.cli import main
sys.argv[0] = "passprice"
try:
    main()
finally:
    print(len(files.WRITTEN), file=sys.stderr)
"""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_4_the_files_written_are_kept_per_command_not_per_process(tmp_path: Path) -> None:
    # before: "2" (the library's two files kept, and one more path each call), then main's line (it cleared them at
    # its start), then "1" (the card, kept after the command)
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-c", _TWICE, "--root", str(root), "fact", "set", "h200_sxm_141gb", "memory.bandwidth",
             "--value", "4.9", "--unit", "TB/s", "--provenance", "published", "--source", "nvidia-h200-datasheet",
             "--locator", "Table 1, memory bandwidth row"],
            stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "0",
        f"passprice: error: standard output: No space left on device; written before it failed, and kept: {card} "
        "(do not redo the edit)",
        "0"]
    assert (tmp_path / "a.txt").read_text() == "x\n" and "value = 4.9\n" in card.read_text(encoding="utf-8")


# --- (2) every --json is JSON (RFC 8259) ---------------------------------------------------------------------------


def _strict(text: str) -> object:
    """``text`` read by a strict JSON parser: ``Infinity``, ``-Infinity`` and ``NaN`` (which ``json.loads`` takes by
    default) refused."""
    import json

    def refuse(token: str) -> object:
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_2_json_text_writes_a_number_that_is_not_finite_as_null() -> None:
    from passprice.tables import json_text

    # before: '{"relative_change": Infinity, "x": [NaN, -Infinity, 1.5]}' (indent=None), which _strict refuses
    data = {"relative_change": float("inf"), "x": (float("nan"), -float("inf"), 1.5), "s": "é\u202e"}
    assert json_text(data, indent=None) == '{"relative_change": null, "x": [null, null, 1.5], "s": "é\\u202e"}'
    assert _strict(json_text(data)) == {"relative_change": None, "x": [None, None, 1.5], "s": "é\u202e"}
    assert data["relative_change"] == float("inf")  # the caller's data is left as it was


def test_2_a_key_that_is_a_float_not_finite_is_the_text_json_writes_for_it() -> None:
    """attack87: ``json_text`` raised ``ValueError`` (a traceback) for a dict whose key is a float that is not
    finite: ``finite_or_null`` left keys as they were, and ``allow_nan=False`` refuses them as keys too. Such a key
    is now the string ``json.dumps`` wrote for it (a key is a string in JSON), its value made JSON as any other."""
    from passprice.tables import json_text

    data = {float("inf"): 1, -float("inf"): [float("nan")], float("nan"): 2.5, 1.5: 3}
    text = json_text(data, indent=None)
    assert text == '{"Infinity": 1, "-Infinity": [null], "NaN": 2.5, "1.5": 3}'
    assert _strict(text) == {"Infinity": 1, "-Infinity": [None], "NaN": 2.5, "1.5": 3}


#: Positions at the edges of what ``--position`` takes (0, a subnormal, 2**32 - 1) and past them (inf, nan).
_POSITIONS = st.sampled_from(["0", "5e-324", "0.5", "1e-320", "4294967295", "1e308", "inf", "nan"])
#: Batches and limits: the edges (1, 2**32 - 1), a batch past what fits (581 on the H200), and past the bounds.
_COUNTS = st.sampled_from(["1", "580", "581", "65536", "4294967295", "0", "99999999999999999999"])
#: Registered servings mostly (a result to print), and names that are none (an error document).
_SERVINGS = st.sampled_from(["r1-qwen7b-h200", "gemma3-270m-h100", "qwen3-30b-a3b-h200", "r1-qwen7b-mi300x-int8kv",
                             "qwen35-27b-h200-mtp", "qwen3next-80b-a3b-h200", "a\u202eb\x7f"])


@st.composite
def _odd_command(draw: st.DrawFn) -> list[str]:
    """One --json command line with odd options: a serving (or a name that is none) and extreme numbers."""
    serving = draw(_SERVINGS)
    which = draw(st.sampled_from(["price", "best", "max-batch", "kv", "roofline", "speculate", "facts"]))
    if which == "price":
        return ["price", serving, "--batch", draw(_COUNTS), "--position", draw(_POSITIONS), "--json"]
    if which == "best":
        tpot = draw(st.sampled_from(["1e-6", "0.0001", "3600", "1e-7", "nan"]))
        return ["best", serving, "--max-tpot", tpot, "--kv-bytes", draw(st.sampled_from(["0.125", "8"])), "--json"]
    if which == "max-batch":
        return ["max-batch", serving, "--limit", draw(_COUNTS), "--json"]
    if which == "roofline":
        return ["roofline", draw(st.sampled_from(["h200_sxm_141gb", "ws1_hypothetical", "a40"])), serving,
                "--position", draw(_POSITIONS), "--json"]
    if which == "speculate":
        return ["speculate", "qwen35-27b-h200-mtp", "--position", draw(_POSITIONS), "--json"]
    if which == "facts":
        return ["facts", draw(st.sampled_from(["h200_sxm_141gb", "mi300x", "ws1_hypothetical", serving])), "--json"]
    checkpoint = draw(st.sampled_from(["gemma3-270m-q4_k_m", "qwen3next-80b-a3b-like", "gpt-oss-20b-mxfp4", serving]))
    return ["kv", checkpoint, "--json"]


@settings(max_examples=30, deadline=None, derandomize=True)
@given(_odd_command())
def test_2_every_json_a_command_prints_for_odd_inputs_is_strict_json(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code in (0, 1, 2), result.output
    if result.stdout.strip():  # a --json command's output, or its error document
        _strict(result.stdout)


# --- (1) one number pattern for addedfacts' phrases ----------------------------------------------------------------


def test_1_addedfacts_patterns_are_textchanges() -> None:
    from passprice import addedfacts, textchange

    assert textchange.NUMBER.startswith(textchange._FREE) and textchange.DIGITS in textchange.NUMBER
    assert addedfacts._EXPONENT.pattern == textchange.POWERED and addedfacts._TIMES.pattern == textchange.TIMES_COUNT
    for pattern in (addedfacts._RANGE, addedfacts._BOUND, addedfacts._PERCENT, addedfacts._PART_OF):
        assert textchange.QUOTED in pattern.pattern
    source = Path(addedfacts.__file__).read_text(encoding="utf-8")
    assert r"(\d+(?:\.\d+)?)" not in source and "_PART_NUMBER" not in source  # no number of its own


def test_1_a_power_of_ten_reads_as_the_number_does() -> None:
    from passprice.addedfacts import stated_with_unit, unreadable

    def amounts(text: str) -> list[tuple[str, float, str]]:
        return [(shown, amount, unit) for shown, amount, _, _, unit in stated_with_unit(text)]

    # before: [('9 B/s', 9.0, 'B/s')]: the power's digits after '^' (no thousands comma in _EXPONENT's digits)
    assert amounts("4,800 x 10^9 B/s") == [("4800000000000 B/s", 4.8e12, "B/s")]
    # before: [('12 B/s', 12.0, 'B/s')]: _EXPONENT read no figure after a letter of another script, NUMBER does
    assert amounts("带宽4.8 x 10^12 B/s") == [("4800000000000 B/s", 4.8e12, "B/s")]
    # before: [('4000 GB/s', 4000.0, 'GB/s')] and no unreadable figure: a power of 4 digits was left to NUMBER
    assert amounts("1 x 10^4000 GB/s") == [] and unreadable("1 x 10^4000 GB/s") == ["1e+4000 GB/s"]
    assert amounts("4.8 x 10^12 B/s, 1,000e3 GB") == [("4800000000000 B/s", 4.8e12, "B/s"), ("1,000e3 GB", 1e6, "GB")]
    # a power of 5,000 digits: written as it is, no int() of it (Python refuses to convert past 4,300 digits)
    assert unreadable("1 x 10^" + "9" * 5000 + " GB/s") == ["1e+" + "9" * 5000 + " GB/s"]


def test_1_ranges_bounds_percentages_and_parts_read_thousands_commas() -> None:
    from passprice.addedfacts import _counts_quoted, _in_range, _within, parts_of, percents_of

    h100 = ("'Shared Memory': 32 banks, 32 bits a bank a clock cycle (compute capability 5.x and later); clock from "
            "the FP32 rate over 16,896 FP32 lanes")  # facts/cards/h100_sxm5_80gb.toml's on_chip.bandwidth locator
    assert not _within(16.0, h100) and _within(16_896.0, h100)  # before: True, False (a bound of 16, its '16,')
    assert _in_range(1500.0, "1,000-2,000 MB")  # before: False (no range)
    assert percents_of("带宽85-90% of") == {0.85: "85-90%", 0.9: "90%"}  # before: {0.9: '90%'}
    # unchanged: a list's comma ends a number, a part's whole is read without it, a date is no part
    assert parts_of("58/128, and 12 of the 32, more") == {58 / 128: "58/128", 12 / 32: "12 of the 32"}
    assert parts_of("1,024 of 2,048 rows, 2024/05/14") == {0.5: "1,024 of 2,048"}
    assert percents_of("85-90, then 7 %") == {0.07: "7 %"}
    assert _counts_quoted("a x16 link, x2,x3, max4", lambda text: set()) == {16.0, 2.0, 3.0}
