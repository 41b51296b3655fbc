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
        f"{REPO / 'facts' / 'drafts'} (registered: deepseek-v3-mtp, qwen35-mtp)"
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
