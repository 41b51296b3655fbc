"""Issue 13: what a new user with only the README found on main. Each test names the command, the line it printed
before and the line it prints now, with its exit status.

1. a sweep some of whose rows are refused says each refusal on stderr (exit 0);
2. an audit of a serving whose stack's fit is stale marks its rows, says the fit stale once, lists only the facts
   the price rests on, and its markdown gives the short line;
3. ``sweep --limit N --stack S``'s extrapolation warning names ``--limit``;
4. ``--limit 1`` with no position is refused, naming ``--limit`` (it priced position 0.5);
5. an unknown option another command takes drops click's guess of an unrelated option, and a sweep's refusal
   advice names no option ``sweep`` lacks;
6. ``OverTPOT`` under a stack names the ``--max-tpot`` cap;
7. a card named by a path is the serving's own card only as the same file, not by file stem;
8. a lock over the size cap on HEAD is counted once in the review's headline."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

R1 = "r1-qwen7b-h200"
STACK = "llamacpp-cuda-2405"
LOCKS = (f"under locks {R1} (locks/{R1}.lock.toml), {R1}-best (locks/{R1}-best.lock.toml), {R1}-llamacpp "
         f"(locks/{R1}-llamacpp.lock.toml)")


def _options(*command: str) -> set[str]:
    """The options ``passprice COMMAND --help`` lists."""
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    return set(re.findall(r"--[a-z][a-z-]*[a-z]", result.stdout))


def _named_options(text: str) -> set[str]:
    """The options a message names (``--kv-page``), not words with dashes inside them."""
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", text))


# --- 1. a partly refused sweep says each refusal on stderr ------------------------------------------------------------


def test_1_a_partly_refused_sweep_says_each_refusal_and_exits_0() -> None:
    result = invoke("sweep", R1, "--positions", "100,8000", "--batches", "1,2,4000")
    assert result.exit_code == 0, result.output  # a sweep's refusals are rows, not a failure
    rows = result.stdout.splitlines()[1:]
    assert [r.rsplit(",", 1)[1] for r in rows] == ["", "", "NotResident", "BadContexts", "BadContexts",
                                                  "BadContexts"]
    refused = [line for line in result.stderr.splitlines() if line.startswith("passprice: refused: ")]
    # Before: nothing but the lock line. 580 sequences fit: (141e9 − 4,677,120,000) / 234,881,024 = 580.4.
    assert refused == [
        "passprice: refused: NotResident (1 of 6 rows, 2 priced) — r1-qwen7b-h200 on h200_sxm_141gb at position 100, "
        "batch 4,000: the card memory must hold 944,201,216,000 bytes but holds 141,000,000,000: at most 580 "
        "sequences fit beside the 4,677,120,000 bytes held once, 234,881,024 bytes a sequence (passprice max-batch): "
        "lower the batch or the context limit, page the KV cache (kv_page in the serving's file), or let sequences "
        "use host memory (host_memory in the serving's file)",
        "passprice: refused: BadContexts (3 of 6 rows, 2 priced) — r1-qwen7b-h200 on h200_sxm_141gb at position "
        "8000, batch 1: bad context mix: position 8000 is not below its limit 4096: a pass at a position writes that "
        "position's row, and a sequence allowed 4096 positions holds rows 0 to 4095: raise --limit or lower "
        "--positions",
    ], result.stderr
    # every option the advice names is one of sweep's (5.)
    assert _named_options("\n".join(refused)) <= _options("sweep"), refused


def test_1_an_all_refused_sweep_keeps_its_one_line_and_exit_1() -> None:
    result = invoke("sweep", R1, "--positions", "8000", "--batches", "1,2")
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == (
        "passprice: refused: no row of the sweep has a price: every line is refused at its smallest batch, and at "
        "every larger one: BadContexts (1 line) — r1-qwen7b-h200 on h200_sxm_141gb at position 8000, batch 1: bad "
        "context mix: position 8000 is not below its limit 4096: a pass at a position writes that position's row, "
        "and a sequence allowed 4096 positions holds rows 0 to 4095: raise --limit or lower --positions; the rows "
        "and their refusals were written")
    assert sum(line.startswith("passprice: refused: ") for line in result.stderr.splitlines()) == 1


def test_1_a_sweep_with_no_refusal_says_none() -> None:
    result = invoke("sweep", R1, "--batches", "1,2")
    assert result.exit_code == 0, result.output
    assert "refused" not in result.stderr


def test_1_the_all_refused_summary_names_no_option_sweep_lacks() -> None:
    result = invoke("sweep", "deepseek-v3-h200", "--cards", "h100_sxm5_80gb", "--batches", "1")
    assert result.exit_code == 1, result.output
    [line] = [x for x in result.stderr.splitlines() if x.startswith("passprice: refused: ")]
    # Before: "… (--host-memory holds sequences in host memory, never weights …)": sweep has no --host-memory.
    assert "(host_memory in the serving's file holds sequences in host memory, never weights" in line, line
    assert _named_options(line) <= _options("sweep"), line


# --- 2. an audit of a stale stack fit ---------------------------------------------------------------------------------


def _stale_stack(tmp_path: Path) -> Path:
    """A registry whose llama.cpp stack file is edited as tests/test_fix179.py edits it (its fit then stale)."""
    root = copy_root(tmp_path)
    path = root / f"facts/stacks/{STACK}.toml"
    text = path.read_text(encoding="utf-8")
    assert 'float_matrices = "vector"' in text and "[memory.reserved]\nvalue = 512\n" in text
    path.write_text(text.replace('float_matrices = "vector"', 'float_matrices = "tensor"')
                    .replace("[memory.reserved]\nvalue = 512\n", "[memory.reserved]\nvalue = 256\n"), encoding="utf-8")
    return root


#: The fitted facts the price rests on whose re-fit moved, and each one's move (as test_left182 ranks them).
MOVES = {
    "stack.overhead.layer": "overhead.layer 96.63 µs → 103.7 µs",
    "stack.terms.serial": "terms.serial 0.5 → 0.7",
    "stack.share.read": "share.read 0.9883 → 0.9908",
    "stack.share.append": "share.append 0.7532 → 1",
    "stack.share.vector": "share.vector 0.04165 → 0.03824",
    "stack.share.scale": "share.scale 0.002051 → 0.00824",
}


@pytest.mark.parametrize("target", [(R1, "--stack", STACK), (f"{R1}-llamacpp",)])
def test_2_an_audit_of_a_stale_fit(tmp_path: Path, target: tuple[str, ...]) -> None:
    root = _stale_stack(tmp_path)
    audit = invoke("audit", *target, root=root)
    assert audit.exit_code == 0, audit.output
    lines = audit.stdout.splitlines()
    # (a) the table's rows of the stale facts marked STALE (before: only * and !), and the mark explained
    marked = [m.group(1) for x in lines if (m := re.match(r"^(?:\*|!|\*!)? ?STALE +(stack\.\S+) ", x))]
    assert marked == list(MOVES), lines[:30]
    assert "  * a fact of the binding term   ! carries the weakest provenance   STALE does not follow from today's " \
           "inputs (below)" in lines
    # (b) each stale derivation line: no "re-fits it within 0.1 %" and the move alone; the fit said stale once
    derivations = {x.split(":", 1)[0].strip(): x for x in lines if x.startswith("  stack.") and "nnls-" in x}
    for path, move in MOVES.items():
        line = derivations[path]
        assert "re-fits it within" not in line, line
        assert line.endswith(f"to 4 significant digits — STALE: re-fitted today: {move}, past the 0.1 % its "
                             "derivation allows"), line
    for path in ("stack.overhead.pass", "stack.share.array"):  # re-fit the same: their claim stands
        assert derivations[path].endswith("; passprice check re-fits it within 0.1 %"), derivations[path]
    assert sum("STALE:" in x for x in lines if not x.startswith("  stack.")) == 1  # the one STALE: line
    # (c) the warning lists the facts the price rests on: not share.float (9 mismatch, 8 read by the price)
    [warning] = [w for w in audit.stderr.splitlines() if "does not follow" in w]
    assert ("(9 fitted facts mismatch, 8 the price rests on: overhead.pass, overhead.layer, share.read, share.append, "
            "share.array, share.vector, share.scale, terms.serial; ") in warning, warning
    assert "share.float" not in warning
    # (d) the markdown's stale line is the short one, and its table marks the same rows
    markdown = invoke("audit", *target, "--format", "markdown", root=root)
    assert markdown.exit_code == 0, markdown.output
    [stale] = [x for x in markdown.stdout.splitlines() if x.startswith("⚠️ **stale**")]
    assert stale == ("⚠️ **stale**: 6 derived facts the price rests on do not follow from today's inputs (largest "
                     "moves: share.scale 0.002051 → 0.00824, terms.serial 0.5 → 0.7, share.append 0.7532 → 1); fix: "
                     f"`passprice calibrate --stack {STACK}`; each fact's details above, marked STALE"), stale
    rows = [x for x in markdown.stdout.splitlines() if x.startswith("| `stack.") and "**STALE**" in x]
    assert [x.split("`")[1] for x in rows] == list(MOVES)
    assert not [x for x in markdown.stdout.splitlines() if "**STALE**" in x and "re-fits it within" in x]


def test_2_an_audit_of_a_fit_that_holds_marks_nothing() -> None:
    audit = invoke("audit", R1, "--stack", STACK)
    assert audit.exit_code == 0, audit.output
    assert "STALE" not in audit.stdout and "does not follow" not in audit.stderr
    assert "  * a fact of the binding term   ! carries the weakest provenance" in audit.stdout.splitlines()


# --- 3. sweep --limit N --stack S names --limit -----------------------------------------------------------------------


def test_3_the_extrapolation_warning_names_the_limit() -> None:
    result = invoke("sweep", R1, "--limit", "16", "--stack", STACK, "--batches", "1")
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stderr.splitlines() if "lies outside" in x]
    # Before: "(each serving's own batch and contexts; …)", though --limit 16 set them.
    assert line.endswith("the fit is extrapolated there (each serving's own batch, at the contexts --limit 16 sets; "
                         "a row lies outside where its expected_tokens_per_s / tokens_per_s does)"), line


# --- 4. --limit 1 ---------------------------------------------------------------------------------------------------

LIMIT_1 = ("passprice: error: Invalid value for --limit: 1 leaves no whole mean position to price: a sequence allowed "
           "1 position holds row 0 alone, and the default mean position limit / 2 is 0.5; give --limit 2 or more, or "
           "{instead} (see 'cli {command} --help')\n")


@pytest.mark.parametrize(("command", "instead"), [("price", "--position 0"), ("best", "--position 0"),
                                                  ("sweep", "--positions 0")])
def test_4_limit_1_without_a_position_is_refused(command: str, instead: str) -> None:
    result = invoke(command, R1, "--limit", "1")
    assert (result.exit_code, result.stdout) == (2, ""), result.output  # priced position 0.5, exit 0
    assert result.stderr == LIMIT_1.format(instead=instead, command=command)


def test_4_limit_1_at_position_0_prices_row_0() -> None:
    price = invoke("price", R1, "--limit", "1", "--position", "0", "--no-lock")
    assert price.exit_code == 0, price.output
    assert "contexts at mean position 0 of a 1 limit" in price.stdout
    sweep = invoke("sweep", R1, "--limit", "1", "--positions", "0", "--batches", "1", "--no-lock")
    assert sweep.exit_code == 0, sweep.output
    assert sweep.stdout.splitlines()[1].split(",")[5:8] == ["0", "1", "1"]  # position, limit, batch
    assert invoke("price", R1, "--limit", "2", "--no-lock").exit_code == 0  # mean position 1, below 2


# --- 5. advice names only the command's own options ------------------------------------------------------------------


def test_5_an_option_of_another_command_is_not_guessed_as_an_unrelated_one() -> None:
    result = invoke("compare", R1, "--batches", "1,99999")
    assert result.exit_code == 2
    # Before: "No such option '--batches'. Did you mean '--kv-bytes'? (--batches is an option of sweep, …)"
    assert result.stderr == ("passprice: error: No such option '--batches'. (--batches is an option of sweep, not of "
                             "compare) (see 'cli compare --help')\n")
    # the same word kept: --card for --cards
    assert "Did you mean '--card'?" in invoke("price", R1, "--cards", "all").stderr
    # a word no other command takes keeps click's guesses
    assert "Did you mean" in invoke("best", R1, "--kv-byte", "2").stderr


@pytest.mark.parametrize("args", [
    ("best", R1, "--max-tpot", "0.0001", "--no-lock"),
    ("best", R1, "--stack", STACK, "--max-tpot", "0.0001", "--no-lock"),
    ("price", R1, "--batch", "4000", "--no-lock"),
    ("compare", R1, "--limit", "1000000"),
    ("sweep", "deepseek-v3-h200", "--cards", "h100_sxm5_80gb", "--batches", "1"),
    ("sweep", R1, "--positions", "100,8000", "--batches", "1,2,4000"),
])
def test_5_each_refusals_advice_names_only_its_commands_options(args: tuple[str, ...]) -> None:
    result = invoke(*args)
    said = [x for x in result.stderr.splitlines() if x.startswith(("passprice: refused:", "passprice: error:"))]
    assert said, result.output
    own = _options(args[0])
    for line in said:
        assert _named_options(line) <= own, (args[0], _named_options(line) - own, line)


# --- 6. OverTPOT under a stack names --max-tpot ---------------------------------------------------------------------


def test_6_over_the_cap_under_a_stack_names_the_options_cap() -> None:
    result = invoke("best", R1, "--stack", STACK, "--max-tpot", "0.0001", "--no-lock")
    assert result.exit_code == 1, result.output
    # Before: "… over the serving's TPOT cap of 100 µs (max_tpot): …" — the serving has no cap; the option gave it.
    assert result.stderr == (
        "passprice: refused: OverTPOT: batch 1 already takes 1.004 ms per output token, over the TPOT cap of 100 µs "
        "(--max-tpot): no batch meets it; raise the cap (--max-tpot SECONDS), or price a smaller model, a shorter "
        "context or a faster card\n")
    price = invoke("price", R1, "--stack", STACK, "--max-tpot", "0.0001", "--no-lock")
    assert price.exit_code == 0, price.output
    assert ("  TPOT cap      over it: 1.004 ms against the --max-tpot cap of 100 µs (it bounds the best batch's "
            "search, `passprice best`; a price at a batch given is not held to it)") in price.stdout.splitlines()


# --- 7. a card named by a path ---------------------------------------------------------------------------------------


def _card_copy(tmp_path: Path) -> Path:
    """Another folder's h200_sxm_141gb.toml: the H200's facts, its memory bandwidth 3.3 TB/s (4.8 registered)."""
    other = tmp_path / "other"
    other.mkdir()
    card = other / "h200_sxm_141gb.toml"
    text = (REPO / "facts/cards/h200_sxm_141gb.toml").read_text(encoding="utf-8")
    assert "[memory.bandwidth]\nvalue = 4.8\n" in text
    card.write_text(text.replace("[memory.bandwidth]\nvalue = 4.8\n", "[memory.bandwidth]\nvalue = 3.3\n"),
                    encoding="utf-8")
    return card


def test_7_another_folders_card_of_the_same_stem_is_another_card(tmp_path: Path) -> None:
    card = _card_copy(tmp_path)
    result = invoke("sweep", R1, "--cards", str(card), "--batches", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split(",")[9].startswith("684.8")  # 996.1 × ~(3.3 / 4.8), its own price
    [line] = [x for x in result.stderr.splitlines() if x.startswith(f"passprice: {R1}: ")]
    # Before: "floors hold; the serving is the locked one, its prices not compared with the locked ones (…)"
    assert line == (f"passprice: {R1}: {LOCKS}: floors hold; no row is the locked serving's, so its prices are not "
                    f"compared with the locked ones (`passprice reproduce {R1}` compares them); its rows on {card} are "
                    "under no lock (the locks lock h200_sxm_141gb)"), line


def test_7_the_registrys_own_card_file_is_the_serving_card() -> None:
    own = f"{REPO}/facts/cards/h200_sxm_141gb.toml"
    result = invoke("sweep", R1, "--cards", own, "--batches", "1")
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stderr.splitlines() if x.startswith(f"passprice: {R1}: ")]
    assert line == (f"passprice: {R1}: {LOCKS}: floors hold; the serving is the locked one, its prices not compared "
                    f"with the locked ones (`passprice reproduce {R1}` compares them)"), line


def test_7_same_card_compares_files(tmp_path: Path) -> None:
    from passprice.cards import same_card
    from passprice.registry import Root

    root = Root(REPO)
    card = _card_copy(tmp_path)
    assert same_card(root, "h200_sxm_141gb", str(REPO / "facts/cards/h200_sxm_141gb.toml"))
    assert same_card(root, "h200_sxm_141gb", "h200_sxm_141gb")
    assert not same_card(root, "h200_sxm_141gb", str(card))
    assert not same_card(root, str(card), "h100_sxm5_80gb")
    assert not same_card(root, "nope", str(card))  # names no card: only its own text


# --- 8. a lock past the size cap on HEAD, named once ----------------------------------------------------------------

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True, check=True, text=True).stdout


def test_8_a_lock_past_the_cap_is_named_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.registry import schema_dir

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = copy_root(tmp_path)
    shutil.copytree(schema_dir(), root / "schema")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    lock = root / f"locks/{R1}.lock.toml"
    size = lock.stat().st_size + 300_001
    lock.write_bytes(lock.read_bytes() + b"#" * 300_000 + b"\n")
    _git(root, "commit", "-q", "--no-verify", "-am", "a lock past 256 KiB")
    review = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert review.exit_code == 2, review.output
    # Before: "…; 9 locks unaffected; 1 file does not read" — the lock counted again as a file.
    assert review.stdout.splitlines()[1] == ("no fact changed; 1 lock affected, 1 does not read on HEAD; HEAD fails "
                                             "passprice check (1 problem); 9 locks unaffected")
    # the error line as every file's that does not read on HEAD (its path, then its problem as its reader says it)
    assert review.stderr == (f"passprice: error: locks/{R1}.lock.toml does not read on HEAD: "
                             f"larger than 256 KiB, the most a lock file may hold ({size:,} bytes; "
                             "PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)\n")
