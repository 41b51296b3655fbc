"""What session 16's README-only walkthrough tripped on, each kept as a test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

H200 = "h200_sxm_141gb"

#: A model of one's own, as a plain Hugging Face config.json (not the examples' wrapped form): 16 llama blocks of
#: width 2,048, 16 query heads and 4 KV heads of 128, an FFN of 8,192, a tied 32,000-row vocabulary.
MY_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "num_hidden_layers": 16,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "tie_word_embeddings": True,
    "vocab_size": 32000,
}


def test_synth_import_names_the_header_file_it_wrote_and_prices_as_by_hand(tmp_path: Path) -> None:
    # `passprice synth my-config.json -o ../my.header.gguf --import my-model` wrote my.header.gguf, but the entry
    # said `source = "my-model.header.gguf"`, a file that never existed (`import` of the same header names the file
    # it read, my.header.gguf).
    root = copy_root(tmp_path)
    config = tmp_path / "my-config.json"
    config.write_text(json.dumps(MY_CONFIG))
    out = invoke("synth", str(config), "-o", str(tmp_path / "my.header.gguf"), "--import", "my-model", root=root)
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0] == (
        f"{config}: llama, Q4_K_M: 146 tensors, 638,152,704 bytes of weights (96 Q4_K, 33 F32, 17 Q6_K)"
    )
    entry = (root / "registry" / "checkpoints" / "my-model.toml").read_text()
    assert '\nsource = "my.header.gguf"\n' in entry
    assert '  { file = "my.header.gguf", header_bytes = ' in entry
    # Without -o it names the file it would have been written to, as before.
    out = invoke("synth", str(config), "--import", "my-model-b", root=root)
    assert out.exit_code == 0, out.output
    entry = (root / "registry" / "checkpoints" / "my-model-b.toml").read_text()
    assert '\nsource = "my-model-b.header.gguf"\n' in entry
    # The price, by hand: weights 638,152,704 B (the tied table read by the head) + 8 embedding rows of 2,048 Q6_K
    # elements (8 × 1,680 B) = 638,166,144 B at 4.8 TB/s × streams.read 0.9333; each sequence 2,049 positions ×
    # 16 layers × 4 KV heads × 128 × 2 (K, V) × 2 B = 67,141,632 B at 4.8 TB/s × streams.append 0.8646:
    # 142.453 µs + 8 × 16.1784 µs = 271.880 µs; 8 / 271.880 µs = 29,424.7 tokens/s.
    priced = invoke("price", "--checkpoint", "my-model", "--card", H200, "--batch", "8", root=root)
    assert priced.exit_code == 0, priced.output
    assert "  tokens/s      29,424.7  (TPOT 271.9 µs per sequence)" in priced.stdout.splitlines()
    assert ("  bytes/pass    638.2 MB of weights and embedding rows, shared by the batch; 67.14 MB per sequence "
            "(0 B rewritten in place)") in priced.stdout.splitlines()


def test_a_checkout_path_run_from_another_folder_says_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's tour run from a scratch folder: `passprice header tests/data/gemma3-270m-q4_k_m.header.gguf.xz`,
    # `sweep --file examples/grid.toml`, `synth examples/configs/llama-3.1-8b.json` each said only "no such file",
    # though the registry passprice read (the checkout) holds each.
    from click.testing import CliRunner

    from passprice.cli import cli

    monkeypatch.chdir(tmp_path)
    here = Path(os.getcwd()).resolve()
    top = REPO.resolve()
    # A checkpoint's path is read from the working folder, then from the registry's root, as a record's is (the
    # checkout here: its header is read, named by the file read); a missing one names both places.
    gemma = "tests/data/gemma3-270m-q4_k_m.header.gguf.xz"
    read = CliRunner().invoke(cli, ["--root", str(REPO), "header", gemma])
    assert read.exit_code == 0 and read.stdout.startswith(f"{REPO / gemma}\n"), read.output
    for args, rel in (
        (["sweep", "--file", "examples/grid.toml"], "examples/grid.toml"),
        (["synth", "examples/configs/llama-3.1-8b.json", "-o", "x.gguf"], "examples/configs/llama-3.1-8b.json"),
    ):
        result = CliRunner().invoke(cli, ["--root", str(REPO), *args])
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [
            f"passprice: error: {rel}: no such file here ({here}); {top} has one: run there, or give {top / rel}"
        ]
    # A path the checkout does not hold either: both places tried.
    both = (f"passprice: error: tests/data/nope.gguf: no such checkpoint file (looked for from the working folder and "
            f"from the registry's root, {top})")
    result = CliRunner().invoke(cli, ["--root", str(REPO), "header", "tests/data/nope.gguf"])
    assert result.stderr.splitlines() == [both]
    result = CliRunner().invoke(cli, ["--root", str(REPO), "sweep", "--file", "examples/nope.toml"])
    assert result.stderr.splitlines() == ["passprice: error: examples/nope.toml: no such file"]
    # Run in the checkout, nothing is added (it is not there either).
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(cli, ["--root", str(REPO), "header", "tests/data/nope.gguf"])
    assert result.stderr.splitlines() == [both]


def test_the_readme_tour_says_where_to_run_it_and_quotes_the_line() -> None:
    # The tour names tests/data/…, examples/… and locks/… without saying they are the checkout's files; the sentence
    # saying so came after the block.
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    tour = readme[readme.index("## A tour"):readme.index("```sh passprice cards")]
    assert "Run it at the checkout's top folder" in tour
    assert ("`examples/grid.toml: no such file here (/tmp/x); /…/passprice has one: run there, or give "
            "/…/passprice/examples/grid.toml`") in tour


def test_the_readme_says_where_the_routing_and_source_records_go() -> None:
    # "mkdir notes … # with the two records above, as written": written where? The routing record's file name is the
    # name `--routing` gives; the source's is the id the record cites.
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("with the routing record above saved as `facts/routing/my-mixtral.toml` (the name `--routing` gives) "
            "and the source record as `sources/my-notes.toml`") in readme


def test_check_counts_one_of_a_kind_in_the_singular(tmp_path: Path) -> None:
    # `passprice check` in a registry of one's own said "… 37 sources, 1 servings, 0 locks): 0 problems".
    root = copy_root(tmp_path)
    for path in (root / "registry" / "servings").glob("*.toml"):
        if path.name != "r1-qwen7b-h200.toml":
            path.unlink()
    for path in (root / "locks").glob("*.lock.toml"):
        if path.name != "r1-qwen7b-h200.lock.toml":
            path.unlink()
    result = invoke("check", root=root)
    first = result.stdout.splitlines()[0]
    assert first.endswith(", 1 serving, 1 lock): 0 problems"), first
    assert first.startswith("checked ") and " files (" in first
