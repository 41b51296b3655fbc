"""What the new-user walkthrough 39 left (session 32, left33): the batch searches' memory headroom (``--memory-use``),
``kv --cards``, ``checkpoints``' origin column, one header imported under two names, the LockFloor advice's two ways
out, ``audit`` of a ``synth --import`` entry made without ``-o``, ``reproduce`` of a lock whose checkpoint entry was
renamed, and the glossary's missing words.

Every figure is computed here by hand from the registered facts and headers (``passprice kv`` shows the bytes): the
R1 distill (Qwen2 7B, Q4_K_M) holds 4,370,558,976 B of weights + 306,561,024 B of embedding table = 4,677,120,000 B
once, and 28 layers × 4 KV heads × (128 + 128) × 2 B = 57,344 B a position, 234,881,024 B a sequence at its 4,096
limit (contiguous); on the H200's 141 GB every batch up to what fits is memory-bound, so the best batch is the
largest that fits: ⌊(141e9 − 4,677,120,000) / 234,881,024⌋ = ⌊580.4⌋ = 580 (99.9 %), and at 0.9 of the card
⌊(126.9e9 − 4,677,120,000) / 234,881,024⌋ = ⌊520.4⌋ = 520 (126.8 GB, 89.9 %).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import REPO, bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
HELD_ONCE = 4_370_558_976 + 306_561_024
PER_SEQUENCE = 28 * 4 * (128 + 128) * 2 * 4096


# --- 1. memory headroom -------------------------------------------------------------------------------------------


def test_hand_computed_batches() -> None:
    assert HELD_ONCE == 4_677_120_000 and PER_SEQUENCE == 234_881_024
    assert (141e9 - HELD_ONCE) // PER_SEQUENCE == 580
    assert (0.9 * 141e9 - HELD_ONCE) // PER_SEQUENCE == 520


def test_best_keeps_the_headroom_asked() -> None:
    whole = json.loads(invoke("best", R1, "--no-lock", "--json").stdout)
    assert whole["batch"] == 580 and whole["memory_use"] is None
    result = invoke("best", R1, "--no-lock", "--memory-use", "0.9", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["batch"] == 520 and out["memory_use"] == 0.9
    assert out["held_bytes"] == HELD_ONCE + 520 * PER_SEQUENCE  # 126,815,252,480 B
    assert out["held_bytes"] <= 0.9 * 141e9 < HELD_ONCE + 521 * PER_SEQUENCE
    assert out["capacity_bytes"] == 141e9  # the held share reads against the whole card
    text = invoke("best", R1, "--no-lock", "--memory-use", "0.9").stdout
    assert "memory use 90 % of card memory at most for the best and largest batch" in text
    assert "  held          126.8 GB of 141 GB card memory (89.9 %)\n" in text
    assert "headroom      " not in text  # 10 % left: no word about headroom


def test_max_batch_and_compare_keep_it() -> None:
    out = json.loads(invoke("max-batch", R1, "--no-lock", "--memory-use", "0.9", "--json").stdout)
    assert out["max_batch"] == 520 and out["memory_use"] == 0.9
    result = invoke("max-batch", R1, "--no-lock", "--memory-use", "0.9")
    assert result.stdout.startswith("deepseek-r1-distill-qwen-7b-q4_k_m on h200_sxm_141gb: at most 520 sequences a "
                                    "pass filling at most 90 % of card memory (memory use)\n")
    assert "warning" not in result.stderr
    rows = json.loads(invoke("compare", R1, "--cards", "h200_sxm_141gb", "--memory-use", "0.9", "--json").stdout)
    assert [(r["card"], r["batch"]) for r in rows["cards"]] == [("h200_sxm_141gb", 520)]


def test_memory_use_out_of_range_is_bad_input() -> None:
    for value in ("0", "1.5", "-0.1"):
        bad("best", R1, "--no-lock", "--memory-use", value, says="--memory-use")


def test_library_scales_the_capacity() -> None:
    from passprice.batching import use_of
    from passprice.cards import load_card
    from passprice.cost import Pricing
    from passprice.registry import find_root

    card = load_card(find_root(REPO), "h200_sxm_141gb")
    assert use_of(card, None, None) is None
    assert use_of(card, None, 0.9).capacity == 141e9 * 0.9  # type: ignore[union-attr]
    assert use_of(card, Pricing.limit(card), 0.5).capacity == 70.5e9  # type: ignore[union-attr]


def test_a_best_lock_pins_it(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    result = invoke("lock", R1, "--best", "--memory-use", "0.9", "-o", str(root / "locks" / "r1-90.lock.toml"),
                    root=root)
    assert result.exit_code == 0, result.output
    text = (root / "locks" / "r1-90.lock.toml").read_text(encoding="utf-8")
    assert "\nmemory_use = 0.9\n" in text and "\nbatch = 520\n" in text
    assert "reproduces exactly: " in invoke("reproduce", "r1-90", root=root).stdout
    # priced under it without the headroom: the serving differs, the price is not the locked one
    under = invoke("best", R1, "--lock", "r1-90", root=root).stdout
    assert "serving differs from the locked one: memory_use: 0.9 → (none)" in under


# --- 2. kv --cards ----------------------------------------------------------------------------------------------------


def test_kv_lists_the_cards_given() -> None:
    out = json.loads(invoke("kv", "gemma3-270m-q4_k_m", "--contexts", "4k", "--cards", "h100_sxm5_80gb,mi300x",
                            "--json").stdout)
    fits = out["contexts"][0]["fits"]
    # 246,587,904 B held once, 20,447,232 B a sequence at 4K (3 global layers × 4,096 + 15 windowed × 512 positions,
    # 1,024 B a position each): ⌊(80e9 − 246,587,904) / 20,447,232⌋ = 3,900; ⌊(192e9 − …) / …⌋ = 9,377
    assert [(f["card"], f["max_batch"]) for f in fits] == [("h100_sxm5_80gb", 3900), ("mi300x", 9377)]
    every = json.loads(invoke("kv", "gemma3-270m-q4_k_m", "--contexts", "4k", "--json").stdout)
    assert len(every["contexts"][0]["fits"]) == 17


def test_kv_wrong_cards_said_at_once() -> None:
    lines = bad("kv", "gemma3-270m-q4_k_m", "--cards", "h100_sxm5_80gb,nope,zz", says="--cards: card 'nope'")
    assert len(lines) == 2 and "'zz'" in lines[1]


# --- 3. checkpoints' origin column ------------------------------------------------------------------------------------


def test_checkpoints_say_synthetic_or_file() -> None:
    text = invoke("checkpoints").stdout
    head = text.splitlines()[0].split()
    assert head == ["checkpoint", "architecture", "tensors", "bytes", "context", "origin", "sha256"]
    rows = {line.split()[0]: line.split()[-2] for line in text.splitlines()[2:] if line and not line.startswith(" ")}
    assert rows["gemma3-270m-q4_k_m"] == "file" and rows["llama3-8b-q4_k_m"] == "synthetic"
    assert "  origin: synthetic = a header built by passprice synth" in text
    out = json.loads(invoke("checkpoints", "--json").stdout)["checkpoints"]
    by = {c["name"]: c for c in out}
    assert by["llama3-8b-q4_k_m"]["synthetic"] is True
    assert by["llama3-8b-q4_k_m"]["origin"].startswith("Synthetic, header only: built by passprice synth")
    assert by["gemma3-270m-q4_k_m"]["synthetic"] is False


# --- 4. one header under two names ------------------------------------------------------------------------------------


def test_second_name_warned_and_checked(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    header = REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    result = invoke("import", str(header), "--name", "gemma-again", root=root)
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "passprice: warning: gemma-again holds the same header content as registry/checkpoints/gemma3-270m-q4_k_m.toml:"
        " one checkpoint under 2 names (passprice check lists it; remove one unless both names are wanted)\n"
    )
    check = invoke("check", "--json", root=root)
    assert check.exit_code == 0, check.output  # a warning, not a problem
    said = [w for w in json.loads(check.stdout)["warnings"] if "one header content" in w]
    assert said == [
        "registry/checkpoints/gemma-again.toml, registry/checkpoints/gemma3-270m-q4_k_m.toml: one header content "
        "(sha256:4edde30b1f25…) under 2 names: the same checkpoint registered twice; remove one unless both names are "
        "wanted (a lock finds the content it pinned under either)"
    ]
    # a different header (another checkpoint) is no duplicate: the shipped registry has none
    assert not [w for w in json.loads(invoke("check", "--json").stdout)["warnings"] if "one header content" in w]


# --- 5. the LockFloor advice's two ways out -------------------------------------------------------------------------


def test_lockfloor_says_two_ways_out() -> None:
    from passprice.enforce import WAYS_OUT
    from passprice.glossary import lookup

    assert WAYS_OUT == ("two ways out: strengthen the fact's provenance (passprice fact set with a stronger "
                        "--provenance and its --source), or loosen the lock's floor for it on purpose through review")
    long = lookup("LockFloor").long
    assert "two ways out" in long and "weaker fact, strengthen it" not in long
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "to rest on the weaker fact, strengthen it" not in readme


# --- 6. audit of a synth --import entry without -o --------------------------------------------------------------------


def test_audit_says_no_header_file_was_written(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    config = REPO / "examples" / "configs" / "llama-2-7b.json"
    assert invoke("synth", str(config), "--import", "my7b", root=root).exit_code == 0
    text = invoke("audit", "--checkpoint", "my7b", "--card", "h100_sxm5_80gb", root=root).stdout
    assert ("    header file: none exists: built by passprice synth from "
            "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json and imported without -o, no header "
            "file written (the entry's source, my7b.header.gguf, names no file;") in text
    assert "the name it was imported from" not in text
    # with -o the file exists, and is named as before
    out = tmp_path / "mine.header.gguf"
    assert invoke("synth", str(config), "-o", str(out), "--import", "mine", root=root).exit_code == 0
    text = invoke("audit", "--checkpoint", "mine", "--card", "h100_sxm5_80gb", root=root).stdout
    assert "    header file: mine.header.gguf, the name it was imported from" in text


# --- 7. reproduce with the checkpoint under a new name ----------------------------------------------------------------


def test_reproduce_compares_facts_of_a_renamed_checkpoint(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    entries = root / "registry" / "checkpoints"
    old = entries / "gemma3-270m-q4_k_m.toml"
    text = old.read_text(encoding="utf-8").replace('name = "gemma3-270m-q4_k_m"', 'name = "gemma3-new"', 1)
    (entries / "gemma3-new.toml").write_text(text, encoding="utf-8")
    old.unlink()
    out = invoke("reproduce", "gemma3-270m-h100", root=root).stdout
    assert ("    facts          unchanged (today's card, the serving resolved on entry gemma3-new, which holds the "
            "pinned content: checkpoint gemma3-270m-q4_k_m does not read today, name gemma3-new instead)\n") in out
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    card.write_text(card.read_text(encoding="utf-8").replace("value = 3.35\n", "value = 3.3\n", 1), encoding="utf-8")
    out = invoke("reproduce", "gemma3-270m-h100", root=root).stdout
    assert ("    facts          1 drifted: memory.bandwidth: 3.35 TB/s (published) → 3.3 TB/s (published) (today's "
            "card, the serving resolved on entry gemma3-new") in out
    data = json.loads(invoke("reproduce", "gemma3-270m-h100", "--json", root=root).stdout)
    assert [d["path"] for d in data["facts_drifted"]] == ["memory.bandwidth"]


# --- 8. the glossary's missing words ----------------------------------------------------------------------------------


def test_explain_knows_the_words() -> None:
    for word, name in (("also pinned", "also pinned"), ("today", "today"), ("not judged", "not judged"),
                       ("floors hold", "floors hold"), ("still holds", "floors hold")):
        result = invoke("explain", word)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"{name}: "), result.stdout
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("also pinned", "today", "not judged", "floors hold"):
        assert f"- **{name}**: " in readme


def test_a_serving_file_states_it(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    made = invoke("new-serving", "r1-90", R1, "--memory-use", "0.9", root=root)
    assert made.exit_code == 0, made.output
    path = root / "registry" / "servings" / "r1-90.toml"
    assert "\nmemory_use = 0.9\n" in path.read_text(encoding="utf-8")
    assert json.loads(invoke("max-batch", "r1-90", "--json", root=root).stdout)["max_batch"] == 520
    path.write_text(path.read_text(encoding="utf-8").replace("memory_use = 0.9", "memory_use = 1.5"), encoding="utf-8")
    bad("max-batch", "r1-90", root=root,
        says="registry/servings/r1-90.toml: memory_use: 1.5 is greater than the maximum of 1")
