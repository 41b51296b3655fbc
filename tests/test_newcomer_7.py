"""What session 7's README-only walkthrough tripped on, each kept as a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import REPO, bad, invoke


def test_a_lock_named_by_its_path_in_the_registry_is_found_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README names locks as locks/NAME.lock.toml; run from another folder that path named nothing, and the error
    # listed the very lock it said was missing.
    monkeypatch.chdir(tmp_path)
    result = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=REPO)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml): price lock of serving")
    # Only a path below locks/ is read that way: another relative path is still a file of the working folder.
    bad("reproduce", "registry/servings/r1-qwen7b-h200.toml", root=REPO,
        says="lock 'registry/servings/r1-qwen7b-h200.toml': no such file")


def test_a_drafting_method_mistyped_on_the_command_line_is_not_blamed_on_the_serving_file() -> None:
    lines = bad("speculate", "r1-qwen7b-h200", "--draft", "eagle")
    assert lines == [
        "passprice: error: drafting method 'eagle': not found in "
        "facts/drafts (registered: deepseek-v3-mtp, qwen35-mtp)"  # relative to the registry since session 29
    ]


def test_a_model_type_synth_does_not_build_says_what_to_do(tmp_path: Path) -> None:
    config = tmp_path / "phi3.json"
    config.write_text('{"model_type": "phi3", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4, '
                      '"vocab_size": 256}', encoding="utf-8")
    lines = bad("synth", str(config), "-o", str(tmp_path / "x.gguf"))
    assert lines == [
        f"passprice: error: {config}: model_type: 'phi3' is not allowed here (one of 'llama', 'mixtral', 'mistral', "
        "'qwen2', 'qwen3', 'qwen3_moe', 'qwen3_next', 'gpt_oss', 'deepseek_v2', 'deepseek_v3') — synth builds no "
        "other; for another architecture import a real GGUF header of the model (`passprice import FILE.gguf`: the "
        "header alone is enough, e.g. the first megabytes of the file)"
    ]
    assert not (tmp_path / "x.gguf").exists()


def test_a_stack_price_on_a_card_its_runs_never_measured_says_it_extrapolates() -> None:
    result = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--no-lock")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "passprice: warning: stack llamacpp-cuda-2405 was fitted on runs on 11 cards (a100_pcie_80gb, a100_sxm4_80gb, "
        "a40, h100_pcie_80gb, l40s, rtx_3080, rtx_3090, rtx_4080, rtx_4090, rtx_6000_ada, rtx_a6000), not "
        "h200_sxm_141gb: its expected price here extrapolates across cards (with a card held out of the fit, its "
        "error was 6.9 % on average, 20.4 % at most)\n"
        # Walkthrough 19: and its ratio to the limit lies outside the span its runs measured (test_newcomer_19).
        "passprice: warning: stack llamacpp-cuda-2405's expected price here is 0.2384 × the limit (the limit 4.2 × "
        "expected), outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs measured: the "
        "fit is extrapolated here\n"
    )
    # A card the runs measured, at a ratio inside the span: no warning.
    measured = invoke("price", "--checkpoint", "llama3-8b-q4_k_m", "--card", "rtx_4090", "--limit", "512",
                      "--position", "256", "--stack", "llamacpp-cuda-2405")
    assert measured.exit_code == 0 and measured.stderr == "", measured.output


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("other", "its header carries no drafting blocks (nextn_predict_layers 0)"),
        ("draft-model", "it drafts with a separate draft model, whose weights and passes are not in this checkpoint's "
                        "header"),
    ],
)
def test_drafting_without_its_drafter_in_the_header_is_refused(tmp_path: Path, kind: str, says: str) -> None:
    # A method of the newcomer's own (kind other) for a checkpoint with no MTP block was priced at a 2.0x speedup:
    # each drafted token cost only the head's rows, its drafter priced as free.
    from cli_helpers import copy_root, refused

    root = copy_root(tmp_path)
    text = (root / "facts" / "drafts" / "qwen35-mtp.toml").read_text(encoding="utf-8")
    text = text.replace('kind = "mtp"\ncheckpoints = ["qwen35-27b-like"]\n', f'kind = "{kind}"\n')
    (root / "facts" / "drafts" / "eagle.toml").write_text(text, encoding="utf-8")
    out = refused("price", "r1-qwen7b-h200", "--draft", "eagle", "--draft-tokens", "1", "--no-lock", root=root,
                  name="NoDrafter")
    assert out["method"] == "eagle" and out["why"] == says
    assert out["message"].endswith(
        "so its drafted tokens would be priced as if drafting cost nothing but the head's rows; price without drafts, "
        "or a checkpoint that carries its drafter (MTP blocks: nextn_predict_layers)"
    )
    # The hybrid carries its MTP block: its own method prices, as registered.
    assert invoke("price", "qwen35-27b-h200-mtp", "--no-lock", root=root).exit_code == 0


@pytest.mark.parametrize("both", [False, True])
def test_a_failing_check_keeps_its_status_when_the_reader_leaves_the_pipe(tmp_path: Path, both: bool) -> None:
    # `passprice diff --format markdown 2>&1 | head -1` exited 0 on a review that breaks a lock (1 when read in
    # full): a reader gone from the pipe ended the command "quietly, status 0", so CI with pipefail passed it.
    import os
    import subprocess
    import sys

    from cli_helpers import copy_root

    root = copy_root(tmp_path)
    weakened = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "3.0", "--unit", "TB/s",
                      "--provenance", "estimated", "--source", "nvidia-h200-datasheet", "--locator",
                      "engineering estimate for this test", root=root)
    assert weakened.exit_code == 0, weakened.output
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from passprice.entry import main; sys.exit(main())", "--root",
             str(root), "check"],
            stdout=write, stderr=write if both else subprocess.PIPE,
            env={**os.environ, "PASSPRICE_NO_MEMO": "1"}, timeout=120, check=False,
        )
    finally:
        os.close(write)
    assert done.returncode == 1, done
    if not both:
        assert b"Traceback" not in done.stderr


def test_check_frozen_says_how_to_bring_drifted_locks_up_to_date(tmp_path: Path) -> None:
    from cli_helpers import copy_root

    root = copy_root(tmp_path)
    routing = root / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = routing.read_text(encoding="utf-8")
    assert "\nvalue = 0.9\n" in text
    routing.write_text(text.replace("\nvalue = 0.9\n", "\nvalue = 0.8\n"), encoding="utf-8")
    assert invoke("check", root=root).exit_code == 0  # drift alone fails only --frozen
    result = invoke("check", "--frozen", root=root)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == (
        "check FAILED (--frozen: the inputs of qwen3-30b-a3b-h200 drifted since they were locked; review the change, "
        "then re-lock each: `passprice lock --update -o locks/qwen3-30b-a3b-h200.lock.toml`)"
    )


def test_best_under_a_stack_says_each_figure_is_at_its_own_best_batch() -> None:
    # "expected 237.4 tokens/s at batch 1 (the limit's: 580) … 0.007122 × the limit's 33,339.2" read as a comparison
    # at one batch; it sets the stack's best (batch 1: its facts hold there only) against the limit's best.
    result = invoke("best", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--no-lock")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("  expected "))
    assert line == (
        "  expected      237.4 tokens/s at batch 1, its best where its facts hold (TPOT 4.211 ms per sequence): "
        "0.007122 × the limit's 33,339.2, best against best (the limit at its own best batch, 580)"
    )
