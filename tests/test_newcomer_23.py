"""Walkthrough 23 (README only, a new user): a hardware-evaluation engineer adding a card the registry lacks (an
Intel Gaudi 3, citing its white paper), locking a price on it, pricing a dense model and a mixture of experts,
calibrating a serving stack of their own against measured runs, reviewing a colleague's change of a fact and
reproducing and auditing the lock. Each test builds the reproducer of one finding and asserts the exit status and
the words (or the value).

Finding 1: nothing said how a card is added. ``fact set gaudi3 memory.bandwidth …`` said only "card 'gaudi3': not
found (registered: …)", and the README described card facts but never that a new card is a file written by hand,
nor what it must hold. The error now says so (the file to write, a card to copy, the fact paths a card needs), and
the README has a paragraph, *A card of your own*.

Finding 2: a fact citing a source id one character off a registered one (``intel-gaudi-3-whitepaper`` for
``intel-gaudi3-whitepaper``) was told the 38 registered ids unmarked, where a card or routing name not found says
"did you mean"; it now says "did you mean" too.

Finding 3: ``calibrate --stack vllm-gaudi-2410``, with three measured runs naming that stack, said only "stack
'vllm-gaudi-2410': not found (registered: …)": calibrate fits a stack that exists, and neither the error nor the
README said what the file must hold first. The error now names the runs and the keys a stack file needs, and the
README says how a stack of one's own starts.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import REPO, bad, copy_root, invoke

#: The card the walkthrough added: figures of Intel's Gaudi 3 white paper's summary (typed for a test).
CARD = """#:schema ../../schema/card.schema.json
[card]
name = "Intel Gaudi 3"
vendor = "Intel"

[memory.capacity]
value = 128
unit = "GB"
provenance = "published"
source = "{source}"
locator = "Gaudi 3 at a glance: 128 GB HBM2e"

[memory.bandwidth]
value = 3.7
unit = "TB/s"
provenance = "published"
source = "intel-gaudi3-whitepaper"
locator = "Gaudi 3 at a glance: HBM bandwidth 3.7 TB/s"

[on_chip.capacity]
value = 96
unit = "MB"
provenance = "published"
source = "intel-gaudi3-whitepaper"
locator = "Gaudi 3 at a glance: 96 MB on-die SRAM"

[on_chip.bandwidth]
value = 12.8
unit = "TB/s"
provenance = "published"
source = "intel-gaudi3-whitepaper"
locator = "Gaudi 3 at a glance: SRAM bandwidth 12.8 TB/s"

[streams.read]
value = 0.85
unit = "1"
provenance = "estimated"
source = "intel-gaudi3-whitepaper"
locator = "an engineering estimate: 0.85 of the peak"

[streams.rewrite]
value = 0.8
unit = "1"
provenance = "estimated"
source = "intel-gaudi3-whitepaper"
locator = "an engineering estimate: 0.8 of the peak"

[streams.append]
value = 0.82
unit = "1"
provenance = "estimated"
source = "intel-gaudi3-whitepaper"
locator = "an engineering estimate: 0.82 of the peak"

[array]
value = 917.5
unit = "TMAC/s"
provenance = "estimated"
source = "intel-gaudi3-whitepaper"
locator = "Gaudi 3 at a glance: MME FP8 1,835 TFLOPS, halved to multiply-adds"

[vector]
value = 14.35
unit = "TMAC/s"
provenance = "estimated"
source = "intel-gaudi3-whitepaper"
locator = "Gaudi 3 at a glance: TPC vector BF16 28.7 TFLOPS, halved to multiply-adds"

[scale]
value = 14.35
unit = "Tcycle/s"
provenance = "estimated"
source = "intel-gaudi3-whitepaper"
locator = "as vector: one block-scale lane cycle a TPC FMA (an estimate)"

[tensor.bf16]
value = 917.5
unit = "TMAC/s"
provenance = "estimated"
source = "intel-gaudi3-whitepaper"
locator = "Gaudi 3 at a glance: MME BF16 1,835 TFLOPS, halved to multiply-adds"
"""

SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "Intel Gaudi 3 AI Accelerator White Paper"
kind = "whitepaper"
publisher = "Intel"
date = "2024-04"
url = "https://www.intel.com/content/www/us/en/content-details/817486/intel-gaudi-3-ai-accelerator-white-paper.html"
retrieved = "2026-12-03"
read = "figures typed from the white paper's summary table for a test"
"""

RUNS = """#:schema ../../schema/measurement.schema.json
[source]
name = "Gaudi 3 vLLM runs of Llama 3.1 8B (made-up figures for a test)"
source = "intel-gaudi3-whitepaper"
""" + "".join(f"""
[[run]]
id = "w23.gaudi3.l31-8b-bf16.b{b}"
stack = "vllm-gaudi-2410"
card = "gaudi3"
checkpoint = "llama31-8b-bf16"
batch = {b}
positions = [128, 256]
tokens_per_s = {t}
locator = "a walkthrough's made-up figure, batch {b}"
""" for b, t in ((1, 120.0), (16, 1700.0), (64, 5600.0)))


def _root(tmp_path: Path, card_source: str = "intel-gaudi3-whitepaper", card: bool = True) -> Path:
    root = copy_root(tmp_path)
    (root / "sources" / "intel-gaudi3-whitepaper.toml").write_text(SOURCE)
    if card:
        (root / "facts" / "cards" / "gaudi3.toml").write_text(CARD.format(source=card_source))
    return root


def test_fact_set_of_a_card_not_registered_says_how_a_card_is_added(tmp_path: Path) -> None:
    root = _root(tmp_path, card=False)
    cards = root / "facts" / "cards"
    [line] = bad("fact", "set", "gaudi3", "memory.bandwidth", "--value", "3.7", "--unit", "TB/s", "--provenance",
                 "published", "--source", "intel-gaudi3-whitepaper", "--locator", "HBM bandwidth 3.7 TB/s",
                 root=root, says="card 'gaudi3': not found in ")
    assert (f"; the fact commands edit the facts of a card that exists: a new card is a file of its own, "
            f"{cards / 'gaudi3.toml'}, written by hand (copy a registered card's file, e.g. {cards / 'mi300x.toml'}, "
            "and edit it): a [card] table (its name, the title it is sold under)") in line
    assert line.endswith("(schema/card.schema.json); then run passprice check")
    assert not (cards / "gaudi3.toml").exists()
    # the paths it names are the ones the card schema requires, every one
    schema = json.loads((REPO / "schema" / "card.schema.json").read_text())
    required = [f"{top}.{leaf}" for top in ("memory", "on_chip", "streams")
                for leaf in schema["properties"][top]["required"]] + ["array", "vector", "scale"]
    assert sorted(set(schema["required"]) - {"card", "memory", "on_chip", "streams"}) == ["array", "scale", "vector"]
    named = line.split("for each of ")[1].split(" (schema/")[0].replace(" and ", ", ").split(", ")
    assert sorted(named) == sorted(required)
    # `fact show` reads through the same lookup, and a path (not a name) gets no such hint
    assert "a new card is a file of its own" in bad("fact", "show", "gaudi3", root=root)[0]
    assert "a new card is a file of its own" not in bad("fact", "show", "nope/gaudi3.toml", root=root)[0]


def test_the_card_written_as_the_hint_says_prices_as_by_hand(tmp_path: Path) -> None:
    root = _root(tmp_path)
    assert invoke("check", root=root).exit_code == 0
    out = invoke("price", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "gaudi3", "--batch", "32",
                 "--json", root=root)
    assert out.exit_code == 0, out.output
    price = json.loads(out.stdout)
    # the README's figures of this checkpoint at position 2048 of 4,096: 4,370,560,992 B of weights and one embedding
    # row at batch 1, and 31 more rows here (3,584 Q4_K elements: 14 blocks of 144 B, 2,016 B a row); 117,497,856 B a
    # sequence; read at 3.7 TB/s x 0.85 and appended at 3.7 TB/s x 0.82
    weights = 4_370_560_992 + 31 * 2_016
    assert (price["weight_bytes"], price["sequence_bytes"]) == (weights, 117_497_856)
    memory_s = weights / (3.7e12 * 0.85) + 32 * 117_497_856 / (3.7e12 * 0.82)
    assert abs(price["memory_s"] / memory_s - 1) < 1e-12 and price["binds"] == "memory"
    assert abs(price["tokens_per_s"] / (32 / memory_s) - 1) < 1e-12
    assert round(price["tokens_per_s"], 1) == 12_172.1


def test_a_source_id_one_character_off_is_told_the_registered_one(tmp_path: Path) -> None:
    root = _root(tmp_path, card_source="intel-gaudi-3-whitepaper")
    [line] = bad("price", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "gaudi3", root=root,
                 says="gaudi3.toml: memory.capacity.source: no source 'intel-gaudi-3-whitepaper'; did you mean "
                      "intel-gaudi3-whitepaper or ")
    assert "intel-gaudi-3-whitepaper.toml does not exist: write it (a [source] table" in line
    # an id near nothing registered is told the list only, as before
    root2 = _root(tmp_path / "2", card_source="my-notes")
    [line] = bad("price", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "gaudi3", root=root2)
    assert "no source 'my-notes' (" in line and "did you mean" not in line


def test_calibrate_of_a_stack_not_registered_says_what_its_file_needs(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "registry" / "measurements" / "w23-gaudi3-vllm.toml").write_text(RUNS)
    stacks = root / "facts" / "stacks"
    for dry in ((), ("--dry-run",)):
        [line] = bad("calibrate", "--stack", "vllm-gaudi-2410", *dry, root=root,
                     says="stack 'vllm-gaudi-2410': not found in ")
        assert ("; 3 measured runs of registry/measurements/w23-gaudi3-vllm.toml name it: calibrate fits the facts "
                f"of a stack that exists, so write {stacks / 'vllm-gaudi-2410.toml'} first, a [stack] table with its "
                "name, integer_matrices (array or vector") in line
        assert line.endswith("then run passprice calibrate --stack vllm-gaudi-2410 again: it writes the fitted facts")
    assert not (stacks / "vllm-gaudi-2410.toml").exists()
    # a stack no run names is not told to be written
    [line] = bad("calibrate", "--stack", "vllm-gaudi-2411", "--dry-run", root=root)
    assert line.endswith("(registered: llamacpp-cuda-2405, lmdeploy-turbomind-2312)") and "measured run" not in line
    # the file the hint describes, and nothing more, is enough for calibrate to fit it
    (stacks / "vllm-gaudi-2410.toml").write_text(
        '#:schema ../../schema/stack.schema.json\n[stack]\nname = "vLLM on Gaudi 3"\n'
        'integer_matrices = "array"\nfloat_matrices = "tensor"\n'
    )
    out = invoke("calibrate", "--stack", "vllm-gaudi-2410", "--json", root=root)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["written"] == str(stacks / "vllm-gaudi-2410.toml")
    assert invoke("check", root=root).exit_code == 0
