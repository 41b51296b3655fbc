"""Bad input to the newer commands (kv, roofline, speculate, simulate, sweep, servings, checkpoints, diff, fact) and
to the shared-prefix options. Every input here once broke a command: a traceback, ``NaN`` or ``Infinity`` printed
(or written) with exit 0, a run of minutes or an out-of-memory crash on one option, a grid option silently ignored,
or only the first of several bad files named. Each must now end in one clear line per problem on stderr naming the
file, line, key or option, with exit status 2, no traceback, nothing written, and in well under a second or two.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice import schema as schema_module
from passprice import simulate as simulate_module
from passprice import trace as trace_module
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.serving import ContextMix, Serving, pass_shape
from passprice.servings import load_spec, resolve
from passprice.speculate import play_acceptance as play

H200 = "h200_sxm_141gb"
R1 = "r1-qwen7b-h200"
CHAT = "qwen35-27b-h200-chat"








def slow_card(root: Path) -> None:
    """``facts/cards/slow.toml`` in ``root``: the H200 with a memory bandwidth of one denormal byte a second, so
    every pass takes ``inf`` seconds."""
    text = (REPO / "facts" / "cards" / f"{H200}.toml").read_text()
    old = 'value = 4.8\nunit = "TB/s"'
    assert old in text
    (root / "facts" / "cards" / "slow.toml").write_text(text.replace(old, 'value = 5e-324\nunit = "B/s"', 1))


def write_trace(path: Path, lines: Sequence[str | dict[str, object]]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


REQUEST = {"arrival_s": 0, "prompt_tokens": 10, "output_tokens": 5}


# ---------------------------------------------------------------------------------------------------------------------
# Element sizes. Found: `kv qwen35-27b-like --state-bytes 1e308`, `best` and `max-batch` of a hybrid with it, were
# tracebacks (ValueError: cannot convert float NaN to integer, from inf − inf in the pass's bytes); a serving file
# with `kv_bytes = 1e300` priced a refusal of 10^308 bytes. Element sizes now stop at 8 bytes, and a pass whose
# bytes are not finite is refused as bad input.


@pytest.mark.parametrize(
    "args",
    [
        ("kv", "qwen35-27b-like", "--state-bytes", "1e308"),
        ("best", "qwen35-27b-h200-mtp", "--state-bytes", "1e308"),
        ("max-batch", "qwen35-27b-h200-mtp", "--state-bytes", "1e308"),
        ("roofline", H200, "qwen35-27b-h200-mtp", "--state-bytes", "1e308"),
        ("price", R1, "--kv-bytes", "65"),
    ],
)
def test_element_sizes_are_bounded(args: tuple[str, ...]) -> None:
    option = next(a for a in args if a.startswith("--"))
    bad(*args, says=f"Invalid value for '{option}'")


def test_kv_element_size_that_is_no_number() -> None:
    # Found: `kv --kv-bytes nan` said "element sizes must be positive bytes, not kv nan", naming no option.
    bad("kv", "gemma3-270m-q4_k_m", "--kv-bytes", "nan", says="Invalid value for '--kv-bytes': 'nan' is not a finite")


def test_serving_file_with_a_huge_element_size(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "huge.toml"
    serving.write_text(f'checkpoint = "deepseek-r1-distill-qwen-7b-q4_k_m"\ncard = "{H200}"\nkv_bytes = 1e300\n')
    bad("price", "huge", root=root, says=f"{serving}: kv_bytes: 1e300 is greater than the maximum of 8")


def test_a_pass_whose_bytes_overflow_is_bad_input() -> None:
    root = find_root(REPO)
    resolved = resolve(root, load_spec(root, "qwen35-27b-h200-mtp"))
    serving = Serving(contexts=ContextMix.uniform(512.0, 1024), state_bytes=1e308)
    with pytest.raises(InputError, match="the pass's read_bytes is nan"):
        pass_shape(resolved.header, serving)


def test_kv_contexts_are_bounded() -> None:
    # Found: 20,000 contexts ran for two minutes.
    many = ",".join(str(n) for n in range(1, 66))
    bad("kv", "gemma3-270m-q4_k_m", "--contexts", many, says="--contexts: 65 sizes; a report shows at most 64")


# ---------------------------------------------------------------------------------------------------------------------
# Results that are no number. Found: a card whose memory streams one denormal byte a second printed `inf s` passes,
# `0 tokens/s` and `nan s` latencies with exit 0 from `speculate`, `simulate`, `roofline CARD` (text), and `simulate
# --json` wrote `Infinity` and `NaN` (not JSON) with exit 0; `sweep` wrote `inf` cells to its CSV. Now the card's
# schema bounds its figures (1e-9 … 1e18 in their unit), so every command refuses such a card by file and key.

SLOW = "memory.bandwidth.value: 5e-324 is less than the minimum of 1e-09"


@pytest.mark.parametrize(
    "args",
    [
        ("roofline", "slow"),
        ("speculate", CHAT, "--card", "slow", "--passes", "10"),
        ("simulate", R1, "--card", "slow", "--synthetic", "3"),
        ("simulate", R1, "--card", "slow", "--synthetic", "3", "--json"),
        ("sweep", R1, "--cards", "slow", "--batches", "1,2"),
        ("sweep", R1, "--cards", "slow", "--batches", "1", "--positions", "5,6", "--json"),
    ],
)
def test_results_that_are_no_number(args: tuple[str, ...], tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    slow_card(root)
    bad(*args, root=root, says=f"{root / 'facts' / 'cards' / 'slow.toml'}: {SLOW}")


def test_roofline_plot_is_not_drawn_for_a_result_that_is_no_number(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    root = copy_root(tmp_path)
    slow_card(root)
    plot = tmp_path / "slow.png"
    bad("roofline", "slow", R1, "--plot", str(plot), root=root, says=SLOW)
    assert not plot.exists()


# ---------------------------------------------------------------------------------------------------------------------
# speculate. Found: `--seed -1` was a traceback (NumPy: expected non-negative integer); `--passes 10**11` tried to
# allocate 745 GiB (a traceback), and 10**9 ran for half a minute a draft length.


def test_speculate_seed_and_passes() -> None:
    bad("speculate", CHAT, "--seed", "-1", says="Invalid value for '--seed'")
    start = time.process_time()  # CPU seconds of this process: its own work, not the machine's load
    bad(
        "speculate",
        CHAT,
        "--tokens",
        "1",
        "--passes",
        str(10**11),
        says="Invalid value for '--passes': 100,000,000,000 is out of range (a whole number from 1 to 10,000,000)",
    )
    assert time.process_time() - start < 5


def test_speculate_draws_are_bounded(tmp_path: Path) -> None:
    # Found: a method with 64 acceptance figures, `--tokens 1..64 --passes 10000000` drew 2 × 10^10 uniforms (minutes).
    root = copy_root(tmp_path)
    entries = [
        f'[acceptance.{i}]\nvalue = 0.9\nunit = "1"\nprovenance = "assumed"\nsource = "qwen35-mtp-review"\n'
        'locator = "a placeholder"\n'
        for i in range(1, 65)
    ]
    many = '[method]\nname = "sixty-four drafts"\nkind = "mtp"\n\n' + "\n".join(entries)
    (root / "facts" / "drafts" / "many.toml").write_text(many)
    args = ("speculate", CHAT, "--draft", "many", "--tokens", "1..64", "--passes", "10000000")
    bad(*args, root=root, says="--passes: 10,000,000 passes of 64 draft lengths draw 20,800,000,000 uniforms")


def test_speculate_loop_counts_without_an_array_of_passes() -> None:
    # The running count gives the mean an array of every pass gave (an exact sum of small integers).
    result = play([0.85, 0.6], 200_000, seed=3)
    assert result.mean * result.passes == round(result.mean * result.passes)
    assert abs(result.mean - result.expected) < 6 * result.stderr
    with pytest.raises(InputError, match="--seed: -2 is negative"):
        play([0.5], 10, seed=-2)
    with pytest.raises(InputError, match="--passes: 10,000,001 passes is more than 10,000,000"):
        play([0.5], 10_000_001)


# ---------------------------------------------------------------------------------------------------------------------
# simulate: traces. Found: a number of 5,000 digits and 100,000 nested brackets were tracebacks (ValueError and
# RecursionError from json, not JSONDecodeError); a key given twice kept the last silently; `null` was "not a JSON
# object but NoneType"; an arrival of 1e300 s made every latency 0 (the clock's rounding); a UTF-8 byte-order mark
# refused the whole file; a bad byte named no line; a trace was read whole into memory, however long.


def test_trace_lines_that_broke_the_reader(tmp_path: Path) -> None:
    trace = write_trace(
        tmp_path / "t.jsonl",
        [
            REQUEST,
            '{"arrival_s": 0, "prompt_tokens": 1' + "0" * 5000 + ', "output_tokens": 5}',
            "[" * 100_000 + "]" * 100_000,
            '{"arrival_s": 0, "arrival_s": 1, "prompt_tokens": 10, "output_tokens": 5}',
            "null",
            {**REQUEST, "arrival_s": 1e300},
            {**REQUEST, "arrival_s": True},
        ],
    )
    name = str(trace)
    bad(
        "simulate",
        R1,
        "--trace",
        name,
        says=[
            f"{name}:2: prompt_tokens: a 5,001-digit number is past the serving's context limit 4,096",
            f"{name}:3: not JSON: nested too deeply",
            f'{name}:4: not JSON: key "arrival_s" given twice',
            f"{name}:5: not a JSON object but null",
            f"{name}:6: arrival_s: 1e+300 is past 1e+09 s",
            f"{name}:7: arrival_s: true is not a finite number of seconds",
        ],
    )


def test_trace_encoding(tmp_path: Path) -> None:
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(REQUEST).encode() + b"\r\n")  # refused as a TOML file's (session 24)
    bad("simulate", R1, "--trace", str(bom), "--policy", "static", says=f"{bom}: starts with a byte-order mark")
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(json.dumps(REQUEST).encode() + b"\r\n")
    assert invoke("simulate", R1, "--trace", str(crlf), "--policy", "static").exit_code == 0
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(json.dumps(REQUEST).encode() + b"\n" + b'{"arrival_s": \xff}\n')
    bad("simulate", R1, "--trace", str(garbage), says=f"{garbage}:2: not UTF-8 text (byte 15 of the line)")
    long = tmp_path / "long.jsonl"
    long.write_bytes(b"x" * (trace_module.MAX_LINE + 1))
    bad("simulate", R1, "--trace", str(long), says=f"{long}:1: longer than 1,048,576 bytes")


def test_trace_past_the_request_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "MAX_REQUESTS", 3)
    trace = write_trace(tmp_path / "t.jsonl", [REQUEST] * 4)
    bad("simulate", R1, "--trace", str(trace), says=f"{trace}:4: more than 3 requests")


# simulate: options. Found: `--synthetic 10**9` generated requests until memory ran out; `--rate 1e-308` wrote
# `NaN` and `Infinity` with exit 0; `--limit 1` blamed --prefix, which was not given; `--seed -1` gave seed 1's trace.


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (("--synthetic", str(10**9)), "--synthetic': 1,000,000,000 is out of range (a whole number from 1 to 100,000)"),
        (("--synthetic", "5", "--rate", "1e-308"), "--rate: at 1e-308 requests/s request 1 arrives inf s in"),
        (("--synthetic", "5", "--rate", "1e-300"), "past the 1e+09 s (about 31 years) a trace may span"),
        (("--synthetic", "5", "--limit", "1"), "--limit: 1 position leaves no room"),
        (("--synthetic", "5", "--seed", "-1"), "Invalid value for '--seed'"),
    ],
)
def test_simulate_options(options: tuple[str, ...], says: str) -> None:
    bad("simulate", R1, *options, says=says)


def test_simulate_step_cap() -> None:
    # Found: a trace of 1,000,000 requests ran for minutes (30,000 took 24 s); one of ten sparse 120,000-token answers
    # ran 1.2 million steps. The steps are bounded: refused up front when a lower bound already passes the cap, else
    # when the run does.
    start = time.process_time()  # CPU seconds of this process: its own work, not the machine's load
    least = "simulate: the trace needs at least 1,455,336 steps"
    bad("simulate", R1, "--synthetic", "1000", "--chunk", "1", says=least)
    bad("simulate", R1, "--synthetic", "50", "--max-steps", "100", says="more than the 100 --max-steps allows")
    assert time.process_time() - start < 5


def test_simulate_step_cap_while_running(tmp_path: Path) -> None:
    requests = [{"arrival_s": 100.0 * i, "prompt_tokens": 8, "output_tokens": 3000} for i in range(3)]
    trace = write_trace(tmp_path / "sparse.jsonl", requests)
    bad(
        "simulate",
        R1,
        "--trace",
        str(trace),
        "--policy",
        "static",
        "--max-steps",
        "4000",
        says="simulate: the static run passed the 4,000 steps --max-steps allows, 101.0 s into the trace with 1 of 3",
    )


def test_least_steps_is_a_lower_bound() -> None:
    root = find_root(REPO)
    resolved = resolve(root, load_spec(root, R1))
    pricer = simulate_module.StepPricer.of(resolved.header, resolved.card, resolved.serving)
    trace = trace_module.synthetic(trace_module.Synthetic(20, 5, 500.0), pricer.limit)
    for chunk in (16, 300, 2048):
        for cap in (1, 256):
            settings = simulate_module.Settings(chunk, cap)
            least = simulate_module.least_steps(pricer, trace, settings)
            for policy in simulate_module.Policy:
                assert least <= simulate_module.simulate(pricer, trace, policy, settings).steps


# ---------------------------------------------------------------------------------------------------------------------
# sweep. Found: `--batches 99999999999999999999` and `--positions nan --json` were tracebacks (OverflowError; JSON's
# ValueError); `--positions -1`, `nan` and `--draft-tokens -1` printed refused rows with exit 0; `--cards ,` swept
# each serving's own card; `--batches 0-10000000` ran 100 s and built 1.1 GB; `--file` with SERVINGS or --batches
# ignored them silently; `from > to` in a file was reported as "'100-1' is not a number".


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (("--batches", "99999999999999999999"), "--batches: '99999999999999999999': 99999999999999999999 is out of"),
        (("--batches", "4294967296"), "out of range (a whole number from 1 to 4,294,967,295)"),
        (("--batches", "1", "--positions", "nan", "--json"), "--positions: 'nan': nan is out of range"),
        (("--batches", "1", "--positions", "-1"), "--positions: '-1': -1.0 is out of range"),
        (("--batches", "1", "--positions", ""), "--positions: '' is not a number"),
        (("--batches", "1", "--cards", ","), "--cards: no cards"),
        (("--batches", "0-10000000"), "--batches: '0-10000000' gives 10,000,001 values, more than the 4,000,000"),
        (("--batches", "1-999999", "--cards", "all"), "the 4,000,000 rows a sweep prices whatever --max-rows says"),
        (("--batches", "1", "--draft-tokens", "2"), "r1-qwen7b-h200 draws no drafts"),
    ],
)
def test_sweep_options(options: tuple[str, ...], says: str) -> None:
    bad("sweep", R1, *options, says=says)


def test_sweep_names_are_checked_before_the_progress_bar() -> None:
    # Found: in a grid of 20,000 rows or more, an unknown card was reported after the progress bar's "pricing" line.
    args = ("--cards", "nope", "--draft-tokens", "1-8", "--positions", "0-200", "--json")
    assert bad("sweep", "qwen35-27b-h200-mtp", *args, says="card 'nope': not found") == [
        bad("sweep", "qwen35-27b-h200-mtp", "--cards", "nope", "--batches", "1", says="card 'nope'")[0]
    ]


def test_sweep_draft_tokens_are_bounded() -> None:
    bad("sweep", "qwen35-27b-h200-mtp", "--batches", "1", "--draft-tokens", "-1", says="-1 is out of range")
    bad("sweep", "qwen35-27b-h200-mtp", "--batches", "1", "--draft-tokens", "65", says="from 0 to 64")


def test_sweep_file_is_the_whole_grid(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(f'servings = ["{R1}"]\nbatches = [1, 2]\n')
    bad("sweep", "--file", str(grid), R1, says="--file describes the whole grid: give SERVINGS in the file")
    bad("sweep", "--file", str(grid), "--batches", "5", "--cards", "all", says="give --cards, --batches in the file")
    backwards = tmp_path / "backwards.toml"
    backwards.write_text(f'servings = ["{R1}"]\nbatches = {{from = 100, to = 1}}\n')
    bad("sweep", "--file", str(backwards), says=f"{backwards}: batches: from 100 is past to 1")
    huge = tmp_path / "huge.toml"
    huge.write_text(f'servings = ["{R1}"]\nbatches = {{from = 1, to = 4294967295}}\n')
    bad("sweep", "--file", str(huge), says=f"{huge}: batches: '1-4294967295' gives 4,294,967,295 values")


def test_sweep_with_a_shared_prefix_reads_a_bounded_number_of_shapes(tmp_path: Path) -> None:
    # Found: a serving with a shared prefix reads its pass once a position (1 to 7 ms each), so 1,000,000 positions
    # would have run for an hour.
    serving = tmp_path / "prefix.toml"
    serving.write_text(
        f'checkpoint = "deepseek-r1-distill-qwen-7b-q4_k_m"\ncard = "{H200}"\nkv_page = 16\nshared_prefix = 16\n'
    )
    bad(
        "sweep", str(serving), "--batches", "1", "--positions", "16-9999",
        says=f"sweep: more than 4,000 pass shapes to read ({serving} shares a prefix, so each of its 9,984 positions",
    )  # fmt: skip


# TOML files. Found: `sweep --file /dev/zero` read until memory ran out; arrays nested 100,000 deep and an integer of
# 5,000 digits were tracebacks (RecursionError, ValueError from tomllib) in any TOML file passprice reads.


def test_toml_files_that_broke_the_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    bad("sweep", "--file", str(deep), says=f"{deep}: not valid TOML: arrays or tables nested too deeply")
    digits = tmp_path / "digits.toml"
    digits.write_text(f'servings = ["{R1}"]\nbatches = [1{"0" * 5000}]\n')
    bad("sweep", "--file", str(digits), says=f"{digits}: not valid TOML: Exceeds the limit (4300 digits)")
    card = tmp_path / "card.toml"
    card.write_text("x = " + "{y = " * 5000 + "1" + "}" * 5000 + "\n")
    bad("price", R1, "--card", str(card), says=f"{card}: not valid TOML: arrays or tables nested too deeply")
    # a cap above the sweep schema's own 2,402 bytes (since attack58 every file is refused from its size as it is
    # opened, passprice's own schema too, so a 64-byte cap refused the schema before the file)
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "4096")
    big = tmp_path / "big.toml"
    big.write_text(f'servings = ["{R1}"]\nbatches = [{", ".join(["1"] * 2100)}]\n')
    bad("sweep", "--file", str(big), says=f"{big}: larger than 4 KiB, the most a sweep file may hold (6,3")


# ---------------------------------------------------------------------------------------------------------------------
# Outputs. Found: `sweep -o FILE` with FILE existing, or under a file, priced the whole grid before saying so; a
# name given in bytes that are not UTF-8 (a serving path, a lock's file name) made `sweep -o` and `lock -o`
# tracebacks (UnicodeEncodeError), as did such bytes in `fact set --note`.


def test_outputs_are_checked_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    under = tmp_path / "file" / "a" / "out.csv"
    bad("sweep", R1, "--batches", "1", "-o", str(under), says=f"{under}: cannot write: {tmp_path / 'file'} is not a")
    bad("simulate", R1, "--synthetic", "2", "-o", str(under), says="is not a folder")
    exists = tmp_path / "exists.csv"
    exists.write_text("mine\n")
    bad("sweep", R1, "--batches", "1", "-o", str(exists), says="already exists; pass --force")
    assert exists.read_text() == "mine\n" and (tmp_path / "file").read_text() == "x"


def test_names_in_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    serving = tmp_path / "s\udcff.toml"
    shutil.copy(REPO / "registry" / "servings" / f"{R1}.toml", serving)
    out = tmp_path / "out.csv"
    # round 5: the serving's name (its file name) is refused where the file is read, before any output is opened
    bad("sweep", str(serving), "--batches", "1", "-o", str(out),
        says=f"{tmp_path}/s\\udcff.toml: the name s\\udcff holds a character that does not print")
    lock = tmp_path / "x\udcff.lock.toml"
    bad("lock", R1, "-o", str(lock), says="lock name: 'x\\udcff' is not UTF-8 text")
    assert sorted(p.name for p in tmp_path.iterdir()) == [serving.name]
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{H200}.toml"
    before = card.read_bytes()
    fact = ("--value", "5", "--unit", "TB/s", "--provenance", "measured", "--source", "nvidia-h200-datasheet",
            "--locator", "a citation long enough")
    bad("fact", "set", H200, "memory.bandwidth", *fact, "--note", "a\udcedb", root=root, says="--note: 'a\\udcedb'")
    assert card.read_bytes() == before


# ---------------------------------------------------------------------------------------------------------------------
# Listings. Found: `servings` and `checkpoints` stopped at the first bad file and named only it.


def test_listings_name_every_bad_file(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    servings = root / "registry" / "servings"
    (servings / "garbage.toml").write_bytes(b"\xff\xfe\x00")
    (servings / "nocard.toml").write_text('checkpoint = "x"\n')
    # Found (issue 13): a listing with one bad file listed none of the good ones. Now the good ones are listed on
    # stdout and every bad file is named on stderr, exit 2.
    result = invoke("servings", root=root)
    assert result.exit_code == 2 and f"{R1} " in result.stdout
    lines = result.stderr.splitlines()
    assert all(line.startswith("passprice: error: ") for line in lines) and len(lines) == 2, lines
    assert any("garbage.toml: byte 0: not UTF-8 text" in line for line in lines), lines
    assert any("nocard.toml: card: missing (required)" in line for line in lines), lines
    checkpoints = root / "registry" / "checkpoints"
    (checkpoints / "empty.toml").write_text("")
    (checkpoints / "garbage.toml").write_bytes(b"\x00\xff")
    result = invoke("checkpoints", "--json", root=root)
    assert result.exit_code == 2
    assert "gemma3-270m-q4_k_m" in [c["name"] for c in json.loads(result.stdout)["checkpoints"]]
    lines = result.stderr.splitlines()
    assert any("empty.toml: entry: missing (required)" in line for line in lines), lines
    assert any("garbage.toml: byte 1: not UTF-8 text" in line for line in lines), lines


# ---------------------------------------------------------------------------------------------------------------------
# Determinism. Found: the same roofline wrote different SVG bytes every run (matplotlib's random element ids).


def test_roofline_svg_is_deterministic(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    pictures = []
    for n in (1, 2):
        target = tmp_path / f"r{n}.svg"
        assert invoke("roofline", H200, R1, "--limit", "1024", "--plot", str(target)).exit_code == 0
        pictures.append(target.read_bytes())
    assert pictures[0] == pictures[1]


def test_a_serving_of_20000_context_classes_is_one_short_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: past the 256 KiB cap; kept reachable
    """Before: a serving of 20,000 ``[[contexts]]`` (851 KB) was locked in 4 s, and once the schema bounded it the
    error line printed every one of the 20,000 classes. Now: 64 at most (as ``kv --contexts``), said in one line."""
    serving = tmp_path / "many.toml"
    head = (REPO / "registry" / "servings" / "r1-qwen7b-h200.toml").read_text(encoding="utf-8")
    head = head[: head.index("[[contexts]]")]
    classes = "".join(f"[[contexts]]\nshare = 0.00005\nlimit = {1000 + i}\n" for i in range(20_000))
    serving.write_text(head + classes, encoding="utf-8")
    result = invoke("lock", str(serving), "-o", str(tmp_path / "many.lock.toml"))
    assert result.exit_code == 2
    assert result.stderr == f"passprice: error: {serving}: contexts: 20,000 items (at most 64)\n"
    assert not (tmp_path / "many.lock.toml").exists()


def test_a_measurement_file_of_5000_runs_is_refused_before_each_run_is_validated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: past the 256 KiB cap; kept reachable
    """Before: a measurement file of 5,000 runs (817 KB) took 13.7 s in ``validate`` and 31.7 s in ``calibrate``,
    and ``check`` parsed and validated it three times. The schema allows 1,000 runs; a top-level array past its
    ``maxItems`` is refused before the schema walks its items, and a file refused once is not re-read in the same
    process."""
    root = copy_root(tmp_path)
    source = root / "registry" / "measurements" / "xiongjiedai-llama3-llamabench.toml"
    text = source.read_text(encoding="utf-8")
    first = text.index("\n[[run]]\n") + 1
    second = text.index("\n[[run]]\n", first) + 1
    run = text[first:second]
    runs = "".join(run.replace('id = "', f'id = "n{i}-', 1) for i in range(1_001))
    bad_file = root / "registry" / "measurements" / "zz.toml"
    bad_file.write_text(text[:first] + runs, encoding="utf-8")
    calls = []
    real = schema_module.validate

    def counted(*args: object, **kwargs: object) -> None:
        calls.append(args[2])
        real(*args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(schema_module, "validate", counted)
        result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr == "passprice: error: registry/measurements/zz.toml: run: 1,001 items (at most 1,000)\n"
    assert calls.count(str(bad_file)) == 1  # parsed and refused once, though check reads it for three reviews


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ('servings = ["gemma3-270m-h100", "r1-qwen7b-h200", "gemma3-270m-h100"]\nbatches = [1]\n',
         "servings: 'gemma3-270m-h100' is listed more than once"),
        ('servings = ["gemma3-270m-h100"]\ncards = ["b200", "h200_sxm_141gb", "b200"]\nbatches = [1]\n',
         "cards: 'b200' is listed more than once"),
        ('servings = ["gemma3-270m-h100"]\nbatches = [1, 2, 1]\n', "batches: 1 is listed more than once"),
        ('servings = ["gemma3-270m-h100"]\nbatches = [1]\npositions = [512.0, 512.0]\n',
         "positions: 512.0 is listed more than once"),
    ],
    ids=["servings", "cards", "batches", "positions"],
)
def test_a_sweep_file_listing_a_name_twice_is_bad_input(body: str, line: str, tmp_path: Path) -> None:
    """Before: one serving listed 3,999 times (76 KB) priced for 29 s, one card 40,000 times for 22 s: each
    repeat is the same row again. The schema says each list holds distinct items (``uniqueItems``)."""
    grid = tmp_path / "grid.toml"
    grid.write_text(body, encoding="utf-8")
    result = invoke("sweep", "--file", str(grid))
    assert result.exit_code == 2
    assert result.stderr == f"passprice: error: {grid}: {line}\n"
