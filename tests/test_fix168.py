"""Hostile input against today's main (issue 13): an attacker's left-overs, each kept as its reproducer, built in the
test.

- (1) ``validate``'s row of a measured run its card cannot hold (batch 2,000 of Llama 3 8B at positions 0-512 on the
  80 GB H100 PCIe) ended with the pricer's advice, ``page the KV cache (--kv-page), or let sequences use host memory
  (--host-memory)``, options ``validate`` (and a run) has none of. Now it says what fits (1,201 sequences) and what to
  correct in the run (its batch, positions or card).
- (2) ``calibrate`` of a run at positions [512, 512] (schema-valid: first is not past last) said ``…: run.0: refused
  (BadContexts): … raise --limit or lower --position``: a run is priced as one class at its mean position, 512, of a
  limit of its last, 512, and has neither option. Now ``run.0.positions`` and what to correct in the file, as the
  file is read (tests/test_attack177.py), from every command that reads it. A stack's ``BeyondStack`` (``price at
  batch 1 (--batch 1 …), price the limit (without --stack)``) is said of a run the same way.
- (3) ``price SERVING --position 100`` of a serving file whose class allows 40,000 positions, past Gemma 3 270M's
  32,768, was refused ``ContextBeyondModel: … lower --limit`` (exit 1): the limit is still the file's (``--position``
  alone keeps the file's longest). Now exit 2 naming the file and ``contexts.1.limit``, as ``price SERVING`` says.
- (4) ``new-serving NEW OLD`` of that file said ``registry/servings/NEW.toml (not written): contexts.1.limit: …``:
  the bad figure is OLD's. Now the line names OLD's file; NEW is not written.
- (5) A ``simulate --trace`` line ``{}`` gave three lines, one a missing key: now one naming them all.
- (6) A trace ``prompt_tokens`` of 10**400 gave one line of about 540 characters (every digit, with separators): now
  ``a 401-digit number of positions``; a number written longer than 40 characters is named by its length.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
FIRST_RUN = 'checkpoint = "llama3-8b-q4_k_m"\nbatch = 1\npositions = [0, 512]'
ROW = "xd3.h100_pcie_80gb.8b-q4km.tg512 "


def _first_run(tmp_path: Path, old: str, new: str) -> Path:
    root = copy_root(tmp_path)
    runs = root / RUNS
    text = runs.read_text(encoding="utf-8")
    assert text.count(FIRST_RUN) >= 1 and old in FIRST_RUN
    runs.write_text(text.replace(FIRST_RUN, FIRST_RUN.replace(old, new), 1), encoding="utf-8")
    return root


def _row(root: Path) -> str:
    """The run's row and its refusal's whole message, said once below the table (the row's error cell holds the
    refusal's name alone, tests/test_fix56.py)."""
    result = invoke("validate", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if line.startswith(ROW))
    assert row.endswith("  refused (NotResident)"), row
    said = [line for line in lines if line.startswith(f"  {ROW.strip()}: ")]
    assert len(said) == 1, lines
    return said[0]


def test_validate_says_what_fits_of_a_batch_the_card_cannot_hold(tmp_path: Path) -> None:
    root = _first_run(tmp_path, "batch = 1", "batch = 2000")
    # 4,912,898,048 bytes held once, 67,108,864 a sequence (32 layers × 8 KV heads × 128 × 2 × 2 bytes × 512):
    # 2,000 need 4,912,898,048 + 2,000 × 67,108,864 = 139,130,626,048 of 85,520,809,984; ⌊(85,520,809,984 −
    # 4,912,898,048) / 67,108,864⌋ = 1,201 fit (tests/test_attack163.py).
    row = _row(root)
    # Before: "… (passprice max-batch): lower the batch or the context limit, page the KV cache (--kv-page), or let
    # sequences use host memory (--host-memory)".
    assert row == (
        f"  {ROW.strip()}: refused (NotResident): the card memory must hold 139,130,626,048 bytes but holds "
        "85,520,809,984 (at most 1,201 sequences fit beside the 4,912,898,048 bytes held once): correct the run's "
        "batch, positions or card"
    ), row
    assert "--" not in row.split("refused (", 1)[1]


def test_calibrate_names_the_runs_positions_not_price_options(tmp_path: Path) -> None:
    root = _first_run(tmp_path, "[0, 512]", "[512, 512]")
    # Before: "…: run.0: refused (BadContexts): bad context mix: position 512 is not below its limit 512: … raise
    # --limit or lower --position"; then "run.0.positions: refused (BadContexts): …" with validate's row refused,
    # exit 0. Such a run is refused as the file is read (tests/test_attack177.py): a bad file, exit 2, the same line
    # from every command.
    said = (f"passprice: error: {RUNS}: run.0.positions: first 512 is not below last 512: a run is priced at the mean "
            "of its positions with a limit of the last, so the first must be below the last: correct the run's "
            "positions")
    assert bad("calibrate", "--stack", "llamacpp-cuda-2405", root=root, says=said) == [said]
    result = invoke("validate", root=root)  # the good files' runs still shown (the bad file's left out), exit 2
    assert result.exit_code == 2 and result.stderr.splitlines() == [said], result.output
    assert ROW not in result.stdout


def test_a_stacks_range_refusal_of_a_run_names_no_price_option() -> None:
    from passprice.measurements import Run, refused_run, run_refusal
    from passprice.serving import OnChipOverflow
    from passprice.stacks import BeyondStack

    run = Run(id="r", stack="s", card="c", checkpoint="m", batch=64, first=0, last=512, tokens_per_s=10.0,
              source="src", index=3)
    beyond = BeyondStack("s", "range.rows", 1, 32, 64, "batch 64", "runs at that batch", batches=(1, 32))
    assert "--batch 32" in str(beyond) and "without --stack" in str(beyond)
    assert run_refusal(run, beyond) == (
        "stack", "s was calibrated on batch 1 … 32; this price needs batch 64; calibrate the stack on runs at that "
        "batch, or name another stack for it")
    assert refused_run(run, OnChipOverflow(2048.0, 1024.0)) == (
        "registry/measurements/src.toml: run.3.batch: refused (OnChipOverflow): the batch's token-rows take 2,048 "
        "bytes on chip but the card holds 1,024: correct the run's batch or card")


GEMMA = "registry/servings/gemma3-270m-h100.toml"
PAST = (
    f"passprice: error: {GEMMA}: contexts.1.limit: 40,000 positions is past the context length of checkpoint "
    "gemma3-270m-q4_k_m, 32,768 positions: a model reads no position past its context; give each class a limit of at "
    "most 32,768"
)


def _long_class(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    serving = root / GEMMA
    text = serving.read_text(encoding="utf-8")
    old = "position = 16384\nlimit = 32768\n"
    assert text.count(old) == 1
    serving.write_text(text.replace(old, "position = 16384\nlimit = 40000\n"), encoding="utf-8")
    return root


@pytest.mark.parametrize("command", [("price", "gemma3-270m-h100", "--no-lock", "--position", "100"),
                                     ("max-batch", "gemma3-270m-h100", "--position", "100")])
def test_a_position_alone_keeps_the_files_limit_and_its_refusal(tmp_path: Path, command: tuple[str, ...]) -> None:
    root = _long_class(tmp_path)
    # Before: "passprice: refused: ContextBeyondModel: context limit 40000 is past the checkpoint's context length
    # 32768: lower --limit", exit 1.
    assert bad(*command, root=root, says=PAST) == [PAST]
    other = invoke("price", "gemma3-270m-h100", "--no-lock", "--position", "100", "--limit", "50000", root=root)
    assert other.exit_code == 1 and "ContextBeyondModel" in other.stderr, other.output  # the command line's limit


def test_new_serving_names_the_file_it_copies_the_bad_limit_from(tmp_path: Path) -> None:
    root = _long_class(tmp_path)
    target = root / "registry" / "servings" / "copy.toml"
    # Before: "passprice: error: registry/servings/copy.toml (not written): contexts.1.limit: …".
    assert bad("new-serving", "copy", "gemma3-270m-h100", root=root, says=PAST) == [PAST]
    assert not target.exists()
    result = invoke("new-serving", "copy", "gemma3-270m-h100", "--limit", "8000", root=root)
    assert result.exit_code == 0 and target.is_file(), result.output


def _trace(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


def test_an_empty_request_is_one_line_naming_every_missing_key(tmp_path: Path) -> None:
    trace = _trace(tmp_path, "{}", '{"prompt_tokens": 5}')
    # Before: three lines for line 1 ("arrival_s: missing", "prompt_tokens: missing", "output_tokens: missing").
    assert bad("simulate", "gemma3-270m-h100", "--trace", trace) == [
        f"passprice: error: {trace}:1: arrival_s, prompt_tokens and output_tokens: missing",
        f"passprice: error: {trace}:2: arrival_s and output_tokens: missing",
    ]


def test_a_huge_number_is_named_by_its_length(tmp_path: Path) -> None:
    huge = "1" + "0" * 400
    trace = _trace(
        tmp_path,
        f'{{"arrival_s": 0, "prompt_tokens": {huge}, "output_tokens": 1}}',
        f'{{"arrival_s": 0, "prompt_tokens": -{huge}, "output_tokens": 1}}',
        f'{{"arrival_s": {huge}.5, "prompt_tokens": 1, "output_tokens": 1}}',
        '{"arrival_s": 0, "prompt_tokens": 1' + "0" * 39 + ', "output_tokens": 1}',
    )
    lines = bad("simulate", "gemma3-270m-h100", "--trace", trace)
    # Before: line 1 printed all 401 digits with separators, 536 characters of number.
    assert lines == [
        f"passprice: error: {trace}:1: the request needs a 401-digit number of positions, longer than the model's "
        "context 32,768",
        f"passprice: error: {trace}:2: prompt_tokens: minus a 401-digit number is negative; it must be at least 1",
        f"passprice: error: {trace}:3: arrival_s: a 403-character number is not a finite number of seconds",
        # 10**39 + 1: 40 digits, shown whole (52 characters with separators)
        f"passprice: error: {trace}:4: the request needs 1,{'000,' * 12}001 positions, longer than the model's "
        "context 32,768",
    ]
