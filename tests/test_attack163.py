"""Hostile input against today's main (issue 13), each escape found kept as its reproducer, built in the test.

- (1) A measured run whose batch its card cannot hold (schema-valid: batch 2,000 of Llama 3 8B at positions 0-512
  on the 80 GB H100 PCIe, 64 MiB of KV a sequence) made ``calibrate`` say ``run ID (SOURCE): the card memory must
  hold … lower the batch or the context limit, page the KV cache (--kv-page), or let sequences use host memory
  (--host-memory)``, exit 2: neither the file nor the key, and advice naming options ``calibrate`` has none of (a
  run has no paging or host-memory field); ``check``, re-running the stack's fit, said the same after the stack's
  file. Now one line naming the measurement file and ``run.0.batch``, the refusal by name, the bytes and how many
  sequences fit (hand-computed below), and what to correct in the file.
- (2) ``roofline --plot`` of a serving whose tokens/s is flat over the batch (a schema-valid card of the most
  bandwidth the schema allows, 1e18 TB/s: every batch binds on the vector datapath, 60,564.2 tokens/s, two of the
  30 figures an ulp above the rest) drew an empty top panel, and matplotlib's own ``RuntimeWarning`` lines (divide
  by zero, with its file and line) reached stderr, exit 0. Now a line of figures closer than a millionth gets a
  decade of axis about it, as matplotlib gives a line of one figure, and nothing is warned.
- (3) A serving file whose context class allows more positions than its checkpoint's ``context_length``
  (``limit = 40000`` for Gemma 3 270M's 32,768) was refused by ``price``, ``best``, ``max-batch``, ``audit``,
  ``sweep`` and ``simulate`` as ``ContextBeyondModel: context limit 40000 is past the checkpoint's context length
  32768: lower --limit``, exit 1, naming neither the file nor the key and advising an option the file has no part
  in; ``check`` passed the file (0 problems). Now each says one line naming the file and ``contexts.1.limit``, exit
  2; a ``--limit`` given on the command line is still the pricer's refusal, as before. ``new-serving --limit`` past
  the model's context wrote such a file (exit 0): now it writes nothing and says the same line after the file's name.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
FIRST_RUN = 'checkpoint = "llama3-8b-q4_k_m"\nbatch = 1\npositions = [0, 512]'


def _batch_2000(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    runs = root / RUNS
    text = runs.read_text(encoding="utf-8")
    assert text.count(FIRST_RUN) >= 1
    runs.write_text(text.replace(FIRST_RUN, FIRST_RUN.replace("batch = 1", "batch = 2000"), 1), encoding="utf-8")
    return root


# Llama 3 8B's KV cache at 512 positions: 32 layers × 8 KV heads × 128 × (K and V) × 2 bytes × 512 = 64 MiB a
# sequence, beside 4,912,898,048 bytes held once; 2,000 sequences need 4,912,898,048 + 2,000 × 67,108,864 =
# 139,130,626,048 bytes of the card's 85,520,809,984, where ⌊(85,520,809,984 − 4,912,898,048) / 67,108,864⌋ = 1,201
# fit.
SAID = (
    f"{RUNS}: run.0.batch: refused (NotResident): 2,000 sequences at positions 0-512 on card h100_pcie_80gb: the "
    "card memory must hold 139,130,626,048 bytes but holds 85,520,809,984 (at most 1,201 sequences fit beside the "
    "4,912,898,048 bytes held once); a fit rests only on runs the model prices: correct the run's batch, positions "
    "or card, or name another stack for it (`stack`)"
)


def test_calibrate_names_a_run_its_card_cannot_hold_by_file_and_key(tmp_path: Path) -> None:
    root = _batch_2000(tmp_path)
    # Before: "passprice: error: run xd3.h100_pcie_80gb.8b-q4km.tg512 (xiongjiedai-llama3-llamabench): the card
    # memory must hold … page the KV cache (--kv-page), or let sequences use host memory (--host-memory)".
    lines = bad("calibrate", "--stack", "llamacpp-cuda-2405", root=root, says=f"passprice: error: {SAID}")
    assert len(lines) == 1 and lines[0] == f"passprice: error: {SAID}", lines
    assert "--kv-page" not in lines[0] and "--host-memory" not in lines[0]


def test_check_names_the_run_after_the_stack_whose_fit_it_stops(tmp_path: Path) -> None:
    root = _batch_2000(tmp_path)
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    ours = [line for line in result.stderr.splitlines() if "run.0.batch" in line]
    assert ours == [
        "passprice: error: facts/stacks/llamacpp-cuda-2405.toml: overhead.pass, overhead.layer, share.read, "
        "share.append, share.array, share.float, share.vector, share.scale, terms.serial: their fit cannot be "
        f"re-run: {SAID}"
    ], result.stderr


def test_validate_still_shows_the_run_as_a_refused_row(tmp_path: Path) -> None:
    # validate prices each run as a row (a refusal the model makes is shown, not an error): unchanged.
    root = _batch_2000(tmp_path)
    result = invoke("validate", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if line.startswith("xd3.h100_pcie_80gb.8b-q4km.tg512 "))
    assert row.endswith("  refused (NotResident)"), row  # the refusal's name in the row, its message below
    said = [line for line in lines if line.startswith("  xd3.h100_pcie_80gb.8b-q4km.tg512: ")]
    assert len(said) == 1 and said[0].startswith(
        "  xd3.h100_pcie_80gb.8b-q4km.tg512: refused (NotResident): the card memory must hold 139,130,626,048 bytes"
    ), said


def _flat_card(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    text = card.read_text(encoding="utf-8")
    old = "[memory.bandwidth]\nvalue = 3.35\n"
    assert old in text
    card.write_text(text.replace(old, "[memory.bandwidth]\nvalue = 1e18\n", 1), encoding="utf-8")
    return root


def test_roofline_plot_of_a_flat_line_draws_it_and_warns_nothing(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    root = _flat_card(tmp_path)
    out = tmp_path / "flat.png"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = invoke("roofline", "h100_sxm5_80gb", "--checkpoint", "llama2-7b-f16", "--plot", str(out),
                        root=root)
    assert result.exit_code == 0, result.output
    # Before: three RuntimeWarnings of matplotlib/transforms.py ("divide by zero encountered in scalar divide").
    assert [str(w.message) for w in caught] == []
    assert out.read_bytes().startswith(b"\x89PNG")
    assert f"plot -> {out}" in result.stderr


def test_log_span_gives_a_flat_line_a_decade_and_leaves_a_sloped_one() -> None:
    pytest.importorskip("matplotlib")
    from passprice.roofline import log_span, require_matplotlib

    plt = require_matplotlib()
    fig, ax = plt.subplots()
    try:
        ax.set_yscale("log")
        low, high = 60564.201785370475, 60564.20178537048  # one ulp apart: the flat card's figures
        ax.plot([1, 2, 30], [low, low, high])
        log_span(ax, [low, low, high])
        bottom, top = ax.get_ylim()
        middle = math.sqrt(low) * math.sqrt(high)
        assert math.isclose(bottom, middle / math.sqrt(10.0)) and math.isclose(top, middle * math.sqrt(10.0))
        before = ax.get_ylim()
        log_span(ax, [100.0, 200.0])  # spans more than a millionth: left to matplotlib
        assert ax.get_ylim() == before
        log_span(ax, [0.0, -1.0, math.inf])  # no positive finite figure: left alone
        assert ax.get_ylim() == before
    finally:
        plt.close(fig)


GEMMA = "registry/servings/gemma3-270m-h100.toml"


def _long_class(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    serving = root / GEMMA
    text = serving.read_text(encoding="utf-8")
    old = "position = 16384\nlimit = 32768\n"
    assert text.count(old) == 1
    serving.write_text(text.replace(old, "position = 16384\nlimit = 40000\n"), encoding="utf-8")
    return root


PAST = (
    f"passprice: error: {GEMMA}: contexts.1.limit: 40,000 positions is past the context length of checkpoint "
    "gemma3-270m-q4_k_m, 32,768 positions: a model reads no position past its context; give each class a limit of at "
    "most 32,768"
)


@pytest.mark.parametrize(
    "command",
    [("price", "gemma3-270m-h100", "--no-lock"), ("best", "gemma3-270m-h100", "--no-lock"),
     ("max-batch", "gemma3-270m-h100"), ("audit", "gemma3-270m-h100")],
)
def test_a_serving_files_limit_past_the_models_context_is_bad_input(tmp_path: Path, command: tuple[str, ...]) -> None:
    root = _long_class(tmp_path)
    # Before: "passprice: refused: ContextBeyondModel: context limit 40000 is past the checkpoint's context length
    # 32768: lower --limit", exit 1.
    assert bad(*command, root=root, says=PAST) == [PAST]


def test_check_finds_the_serving_files_limit(tmp_path: Path) -> None:
    root = _long_class(tmp_path)
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output  # was 0 problems
    assert PAST in result.stderr.splitlines(), result.stderr


def test_a_limit_the_command_line_gives_is_still_the_pricers_refusal(tmp_path: Path) -> None:
    root = _long_class(tmp_path)
    result = invoke("price", "gemma3-270m-h100", "--no-lock", "--limit", "50000", root=root)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("passprice: refused: ContextBeyondModel: context limit 50000 is past the "
                                    "checkpoint's context length 32768: lower --limit"), result.stderr
    fits = invoke("price", "gemma3-270m-h100", "--no-lock", "--limit", "8000", "--position", "100", root=root)
    assert fits.exit_code == 0, fits.output


def test_new_serving_writes_no_file_past_the_models_context(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    target = root / "registry" / "servings" / "long.toml"
    # Before: "wrote registry/servings/long.toml: … contexts 1 at position 20000 of 40000", exit 0.
    said = ("passprice: error: registry/servings/long.toml (not written): contexts.0.limit: 40,000 positions is past "
            "the context length of checkpoint gemma3-270m-q4_k_m, 32,768 positions: a model reads no position past "
            "its context; give each class a limit of at most 32,768")
    assert bad("new-serving", "long", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb", "--limit",
               "40000", root=root, says=said) == [said]
    assert not target.exists()
    result = invoke("new-serving", "long", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb",
                    "--limit", "32768", root=root)
    assert result.exit_code == 0 and target.is_file(), result.output
