"""Issue 2's acceptance, at the command line: both real checkpoints priced on every registered card (a price or a
named refusal, never a traceback), the documented JSON keys in their order, the issue's right values read off the
CLI's own JSON, the README's first command, header / import / price by name or path, a schema-invalid card reported
whole, and the exit codes (0 success, 1 refusal, 2 bad input or usage).

Expected numbers are the issue's, written out by hand from the real headers (``tests/data``) and the GGML block table;
nothing is computed by calling the code under test to get an expectation.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from passprice.cli import cli

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
R1 = "deepseek-r1-distill-qwen-7b-q4_k_m"
GEMMA = "gemma3-270m-q4_k_m"
#: The models' own context lengths (qwen2.context_length, gemma3.context_length): the "long context" priced below.
CONTEXT = {R1: 131_072, GEMMA: 32_768}

#: DESIGN.md (Command line): the keys of `price --json`, in this order (the price a lock records, then the locks it
#: was priced under).
PRICE_KEYS = [
    "card",
    "batch",
    "host_sequences",
    "rows_per_sequence",
    "emitted_per_sequence",
    "weight_bytes",
    "sequence_bytes",
    "rewrite_bytes",
    "array_macs",
    "vector_macs",
    "scale_cycles",
    "memory_s",
    "host_s",
    "array_s",
    "vector_s",
    "scale_s",
    "pass_s",
    "binds",
    "held_bytes",
    "capacity_bytes",
    "host_held_bytes",
    "host_capacity_bytes",
    "on_chip_bytes",
    "on_chip_capacity",
    "provenance",
    "tokens_per_s",
    "tpot_s",  # price and best --json (test_fix181.py)
    "rests_on",
    "weakest",
    "stale",
    "lock",
]


def invoke(*args: str, root: Path = REPO) -> Result:
    """Run ``passprice --root ROOT ARGS…`` in-process; a Python exception other than an exit is a test failure."""
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback for {args}: {result.exception!r}\n{result.output}"
    )
    return result


def run_json(*args: str, root: Path = REPO, code: int = 0) -> Any:
    """``invoke`` with ``--json``; the exit status must be ``code`` and stdout one JSON document."""
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def registered_cards() -> list[str]:
    return [c["name"] for c in run_json("cards")["cards"]]


# ---------------------------------------------------------------------------------------------------------------------
# Every card × both real checkpoints, at the default serving and at the model's whole context.


@pytest.mark.parametrize("checkpoint", [R1, GEMMA])
@pytest.mark.parametrize("long_context", [False, True], ids=["default", "long"])
def test_price_every_card_or_a_named_refusal(checkpoint: str, long_context: bool) -> None:
    cards = registered_cards()
    assert {"h100_sxm5_80gb", "h200_sxm_141gb", "a100_sxm4_80gb", "mi300x", "ws1_hypothetical"} <= set(cards)
    extra = ["--limit", str(CONTEXT[checkpoint])] if long_context else []
    for card in cards:
        result = invoke("price", "--checkpoint", checkpoint, "--card", card, *extra, "--json")
        out = json.loads(result.stdout)
        if result.exit_code == 0:
            assert list(out) == PRICE_KEYS and out["card"] == card
            assert out["tokens_per_s"] > 0 and out["pass_s"] == max(
                out[t] for t in ("memory_s", "host_s", "array_s", "vector_s", "scale_s")
            )
            assert out["binds"] in {"memory", "host", "array", "vector", "scale"}
        else:
            assert result.exit_code == 1, result.output
            assert isinstance(out["refusal"], str) and out["refusal"] and out["message"]
            assert result.stderr.startswith("passprice: refused: ")


def test_price_json_keys_in_design_order() -> None:
    out = run_json("price", "--checkpoint", R1, "--card", "h200_sxm_141gb")
    assert list(out) == PRICE_KEYS
    assert isinstance(out["rests_on"], dict) and all(isinstance(v, str) for v in out["rests_on"].values())
    ladder = ["published", "measured", "derived", "estimated", "assumed"]
    weakest = max(out["rests_on"].values(), key=ladder.index)
    assert out["provenance"] == weakest
    assert out["weakest"] == [p for p, v in out["rests_on"].items() if v == weakest]


# ---------------------------------------------------------------------------------------------------------------------
# The right values, read off `header --json` and `price --json`.


def tensor(header: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in header["tensors"] if t["name"] == name)


def test_r1_header_figures() -> None:
    h = run_json("header", R1)
    assert h["tensor_bytes"] == 4_677_120_000
    embd = tensor(h, "token_embd.weight")
    assert (embd["type"], embd["bytes"]) == ("Q4_K", 306_561_024)
    assert embd["bytes"] // embd["dims"][1] == 2_016  # one row: 3584 / 256 blocks × 144 bytes
    out = tensor(h, "output.weight")
    assert (out["type"], out["bytes"]) == ("Q6_K", 447_068_160)


@pytest.mark.parametrize("position", [0, 1, 2048, 4095])  # 4,095: the last of its 4,096 limit (tests/test_walk138.py)
def test_r1_batch_one_bytes(position: int) -> None:
    out = run_json("price", "--checkpoint", R1, "--card", "h200_sxm_141gb", "--position", str(position))
    # Every tensor but the embedding table streams once, plus one 2,016-byte embedding row (no drafts).
    assert out["weight_bytes"] == 4_677_120_000 - 306_561_024 + 2_016 == 4_370_560_992
    # KV per position: 28 layers × 4 KV heads × (128 + 128) × 2 bytes; a contiguous cache reads P positions and
    # writes one.
    assert 28 * 4 * (128 + 128) * 2 == 57_344
    assert out["sequence_bytes"] == 57_344 * position + 57_344
    assert out["rewrite_bytes"] == 0


def test_gemma_header_figures() -> None:
    h = run_json("header", GEMMA)
    assert h["tensor_bytes"] == 246_587_904
    assert not any(t["name"] == "output.weight" for t in h["tensors"])
    embd = tensor(h, "token_embd.weight")
    assert (embd["type"], embd["bytes"]) == ("Q8_0", 178_257_920)
    assert embd["bytes"] // embd["dims"][1] == 680  # one row: 640 / 32 blocks × 34 bytes


def test_gemma_batch_one_bytes() -> None:
    out = run_json("price", "--checkpoint", GEMMA, "--card", "h100_sxm5_80gb", "--position", "2048")
    # Tied embeddings: the head streams the whole Q8_0 table every pass, and the lookup reads one 680-byte row.
    assert out["weight_bytes"] == 246_587_904 - 178_257_920 + 178_257_920 + 680
    # 18 layers at 1,024 bytes a position (1 KV head × (256 + 256) × 2); the globals (5, 11, 17) read 2,048
    # positions, the 15 windowed layers 511 (their 512-position window less the row's own, which each layer writes:
    # llama.cpp's and Transformers' masks attend the window, the row included; session 39).
    assert 3 * 1_024 * 2_048 + 15 * 1_024 * 511 == 14_140_416
    assert out["sequence_bytes"] == 14_140_416 + 18 * 1_024


# ---------------------------------------------------------------------------------------------------------------------
# The README's first command.


def test_readme_first_command_best_batch() -> None:
    out = run_json("best", "r1-qwen7b-h200")
    # a best batch also says the memory headroom its search kept to (left33; null: the whole card)
    assert list(out) == [*PRICE_KEYS[:-2], "memory_use", "spread", *PRICE_KEYS[-2:]] and out["memory_use"] is None
    assert out["spread"] is None  # a contiguous cache holds its limit (tests/test_sim143.py: a paged one's)
    assert (out["card"], out["batch"], out["binds"]) == ("h200_sxm_141gb", 580, "memory")
    # Memory-bound, the pass streams the weights once for the whole batch, so tokens/s rises with every sequence
    # added: the best batch is the largest that fits. Each sequence holds its 4,096-position cache
    # (57,344 × 4,096 = 234,881,024 bytes) beside the 4,677,120,000 bytes of tensors held once, and
    # ⌊(141e9 − 4,677,120,000) / 234,881,024⌋ = 580.
    assert (141_000_000_000 - 4_677_120_000) // 234_881_024 == 580
    assert out["held_bytes"] == 4_677_120_000 + 580 * 234_881_024
    assert run_json("max-batch", "r1-qwen7b-h200")["max_batch"] == 580
    below = run_json("price", "r1-qwen7b-h200", "--batch", "579")
    assert below["binds"] == "memory" and below["tokens_per_s"] < out["tokens_per_s"]
    beyond = run_json("price", "r1-qwen7b-h200", "--batch", "581", code=1)
    assert beyond["refusal"] == "NotResident" and beyond["needed"] == 4_677_120_000 + 581 * 234_881_024

    text = invoke("best", "r1-qwen7b-h200")
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0] == f"best batch: {R1} on h200_sxm_141gb (NVIDIA H200 SXM 141GB)"
    assert any(line.startswith("  batch 580 ") for line in lines)
    assert any(line.startswith("memory") and "← binds" in line for line in lines)
    assert any(line.strip().startswith("tokens/s") and f"{out['tokens_per_s']:,.1f}" in line for line in lines)
    weakest = f"provenance    {out['provenance']} — weakest: {', '.join(out['weakest'])}"
    assert any(line.strip() == weakest for line in lines)
    rests = next(line for line in lines if line.strip().startswith("rests on"))
    for path, provenance in out["rests_on"].items():
        assert f"{path}" in rests and provenance in rests


# ---------------------------------------------------------------------------------------------------------------------
# header FILE, header NAME, import, and a checkpoint named by entry or by path.


@pytest.mark.parametrize("name", [R1, GEMMA])
def test_header_file_equals_header_entry(name: str) -> None:
    from_file = run_json("header", str(DATA / f"{name}.header.gguf.xz"))
    from_entry = run_json("header", name)
    for key in ("sha256", "tensor_count", "tensor_bytes", "header_bytes", "data_offset", "tensors", "metadata"):
        assert from_file[key] == from_entry[key], key
    text = invoke("header", str(DATA / f"{name}.header.gguf.xz"))
    assert text.exit_code == 0 and from_file["sha256"] in text.stdout


def minimal_root(tmp_path: Path, cards: tuple[str, ...] = ("h200_sxm_141gb",)) -> Path:
    """A passprice root holding only ``cards`` (copied from the checkout, with the sources they cite) and an empty
    registry."""
    root = tmp_path / "root"
    (root / "facts" / "cards").mkdir(parents=True)
    (root / "registry").mkdir()
    shutil.copytree(REPO / "sources", root / "sources")
    shutil.copy(REPO / "facts" / "cards" / "README.md", root / "facts" / "cards")  # the document card reviews cite
    for card in cards:
        shutil.copy(REPO / "facts" / "cards" / f"{card}.toml", root / "facts" / "cards")
    return root


def test_import_then_price_by_name_equals_price_by_path(tmp_path: Path) -> None:
    root = minimal_root(tmp_path)
    path = DATA / f"{GEMMA}.header.gguf.xz"
    done = run_json("import", str(path), "--name", "g270", root=root)
    assert done["entry"] == "g270" and Path(done["path"]) == root / "registry" / "checkpoints" / "g270.toml"
    assert sorted(p.name for p in (root / "registry" / "checkpoints").iterdir()) == ["g270.toml"]
    by_name = run_json("price", "--checkpoint", "g270", "--card", "h200_sxm_141gb", "--batch", "8", root=root)
    by_path = run_json("price", "--checkpoint", str(path), "--card", "h200_sxm_141gb", "--batch", "8", root=root)
    assert by_name == by_path
    assert run_json("header", "g270", root=root)["sha256"] == done["sha256"]
    again = invoke("import", str(path), "--name", "g270", root=root)  # no --force: refused, nothing touched
    assert again.exit_code == 2 and "already exists" in again.stderr


# ---------------------------------------------------------------------------------------------------------------------
# A schema-invalid card: every problem at once, with file and key path, exit 2.


def bad_card_text() -> str:
    """The H200 card with four faults: a ``nan`` capacity, a ``GB`` where ``B/s`` belongs, an unknown provenance,
    and a missing ``locator``."""
    text = (REPO / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8")
    lines = text.splitlines()
    section = ""
    out = []
    for line in lines:
        if line.startswith("["):
            section = line.strip("[]")
        if section == "memory.capacity" and line.startswith("value ="):
            line = "value = nan"
        elif section == "memory.bandwidth" and line.startswith("unit ="):
            line = 'unit = "GB"'
        elif section == "streams.read" and line.startswith("provenance ="):
            line = 'provenance = "rumoured"'
        elif section == "streams.append" and line.startswith("locator ="):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


BAD_CARD_ERRORS = [
    "memory.bandwidth.unit: 'GB' is not allowed here",
    "memory.capacity.value: must be a finite number, not nan",
    "streams.append.locator: missing (required)",
    "streams.read.provenance: 'rumoured' is not allowed here",
]


def assert_bad_card_reported(result: Result, path: Path, listing: bool = False) -> None:
    # A listing still shows every good file on stdout; anything else prints nothing there.
    assert result.exit_code == 2 and (result.stdout != "" if listing else result.stdout == "")
    lines = result.stderr.splitlines()
    assert len(lines) == 4, result.stderr
    for line, want in zip(lines, BAD_CARD_ERRORS, strict=True):
        assert line.startswith(f"passprice: error: {path}: {want}"), line
    assert "Traceback" not in result.output


def test_bad_card_as_a_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(bad_card_text(), encoding="utf-8")
    assert_bad_card_reported(invoke("price", "--checkpoint", R1, "--card", str(bad)), bad)
    assert_bad_card_reported(invoke("facts", str(bad)), bad)


def test_bad_card_in_a_root(tmp_path: Path) -> None:
    root = minimal_root(tmp_path)
    bad = root / "facts" / "cards" / "bad.toml"
    bad.write_text(bad_card_text(), encoding="utf-8")
    assert_bad_card_reported(invoke("facts", "bad", root=root), bad)
    assert_bad_card_reported(
        invoke("price", "--checkpoint", str(DATA / f"{GEMMA}.header.gguf.xz"), "--card", "bad", root=root), bad
    )
    listed = invoke("cards", root=root)  # the good card is still listed; the bad one is bad input (stderr, exit 2)
    assert_bad_card_reported(listed, bad.relative_to(root), listing=True)  # a listing names it as check does
    assert listed.stdout.splitlines()[2].startswith("h200_sxm_141gb ")
    check = invoke("check", root=root)  # check reports everything else, and the file as bad input (exit 2)
    assert check.exit_code == 2
    # The bad card's 4 lines, and the 4 source records whose source.path names a document this minimal root lacks
    # (a bad file too: issue 13, round 5); the card reviews' document, facts/cards/README.md, is here.
    assert check.stdout.splitlines()[0].endswith(" 8 problems (8 on stderr)")
    for want in BAD_CARD_ERRORS:
        assert f"passprice: error: facts/cards/bad.toml: {want}" in check.stderr


# ---------------------------------------------------------------------------------------------------------------------
# Exit codes.


def test_exit_0_1_2() -> None:
    assert invoke("price", "r1-qwen7b-h200").exit_code == 0
    refused = invoke("price", "r1-qwen7b-h200", "--activation-words", "0", "--json")
    assert refused.exit_code == 1 and json.loads(refused.stdout)["refusal"] == "Empty"
    assert invoke("price", "--checkpoint", "qwen3next-80b-a3b-like", "--card", "mi300x").exit_code == 1  # Routed


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("price", "--checkpoint", R1, "--card", "no_such_card"), "card 'no_such_card': not found in"),
        (("price", "no-such-serving"), "serving 'no-such-serving': not found in"),
        (("price", "--card", "h200_sxm_141gb"), "give a SERVING, or both --checkpoint and --card"),
        (("price", "r1-qwen7b-h200", "--flush", "sometimes"), "'sometimes' is not a state flush"),
        (("price", "r1-qwen7b-h200", "--flush", "every:0"), "'every:0' is not a state flush"),
        (("best", "r1-qwen7b-h200", "--batch", "3"), "No such option '--batch'"),
        (("price", "--checkpoint", "/nonexistent/model.gguf", "--card", "h200_sxm_141gb"), "no such file"),
        (("header", "/nonexistent/model.gguf"), "no such file"),
    ],
)
def test_exit_2_bad_input_or_usage(args: tuple[str, ...], says: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("passprice: error: ") and says in lines[0], result.stderr


def test_exit_2_for_files_that_are_not_checkpoints(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "empty.gguf").write_bytes(b"")
    (tmp_path / "text.gguf").write_text("not a model\n")
    cases = {
        str(folder): f"{folder}: is a folder, not a checkpoint file",
        str(tmp_path / "empty.gguf"): f"{tmp_path / 'empty.gguf'}: header ends at byte 0",
        str(tmp_path / "text.gguf"): f"{tmp_path / 'text.gguf'}: byte 0: bad magic",
        str(REPO / "README.md"): f"{REPO / 'README.md'}: byte 0: bad magic",
    }
    for ref, says in cases.items():
        for args in (("header", ref), ("price", "--checkpoint", ref, "--card", "h200_sxm_141gb")):
            result = invoke(*args)
            assert result.exit_code == 2 and result.stderr.startswith(f"passprice: error: {says}"), result.stderr
            assert len(result.stderr.splitlines()) == 1, result.stderr


# ---------------------------------------------------------------------------------------------------------------------
# cards, facts, max-batch.


def test_cards() -> None:
    cards = run_json("cards")["cards"]
    names = [c["name"] for c in cards]
    assert names == sorted(names) and "h200_sxm_141gb" in names
    h200 = next(c for c in cards if c["name"] == "h200_sxm_141gb")
    assert h200["title"] == "NVIDIA H200 SXM 141GB" and h200["host_link"] is True
    assert h200["facts"]["memory.bandwidth"]["unit"] == "TB/s"
    # The card's own facts (every price rests on them) are at worst estimated on the H200; the host link's pinned
    # host memory is a placeholder (assumed), which only prices with host memory rest on.
    assert h200["weakest"] == "estimated" and h200["weakest_with_host_link"] == "assumed"
    assert "estimated" in next(line for line in invoke("cards").output.splitlines() if line.startswith("h200"))
    ws1 = next(c for c in cards if c["name"] == "ws1_hypothetical")
    assert ws1["hypothetical"] is True and ws1["weakest"] == "assumed"
    text = invoke("cards")
    assert text.exit_code == 0
    assert all(name in text.stdout for name in names)


def test_facts_text_and_json() -> None:
    out = run_json("facts", "h200_sxm_141gb")
    assert out["name"] == "h200_sxm_141gb" and out["title"] == "NVIDIA H200 SXM 141GB"
    bandwidth = out["facts"]["memory.bandwidth"]
    assert (bandwidth["unit"], bandwidth["provenance"]) == ("TB/s", "published") and bandwidth["cite"]
    assert list(out["facts"])[:10] == [
        "memory.capacity",
        "memory.bandwidth",
        "on_chip.capacity",
        "on_chip.bandwidth",
        "streams.read",
        "streams.rewrite",
        "streams.append",
        "array",
        "vector",
        "scale",
    ]
    text = invoke("facts", "h200_sxm_141gb")
    assert text.exit_code == 0
    for path, fact in out["facts"].items():
        assert path in text.stdout and fact["provenance"] in text.stdout


def test_max_batch() -> None:
    out = run_json("max-batch", "--checkpoint", GEMMA, "--card", "h100_sxm5_80gb")
    assert out["card"] == "h100_sxm5_80gb" and out["checkpoint"] == GEMMA and out["max_batch"] >= 1
    n = out["max_batch"]
    assert run_json("price", "--checkpoint", GEMMA, "--card", "h100_sxm5_80gb", "--batch", str(n))["batch"] == n
    over = run_json("price", "--checkpoint", GEMMA, "--card", "h100_sxm5_80gb", "--batch", str(n + 1), code=1)
    assert over["refusal"] in {"NotResident", "OnChipOverflow"}
    text = invoke("max-batch", "--checkpoint", GEMMA, "--card", "h100_sxm5_80gb")
    assert text.exit_code == 0 and f"at most {n:,} sequences" in text.stdout
