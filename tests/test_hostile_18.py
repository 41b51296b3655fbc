"""Attack round 18 (issue 13): the known leftovers of round 17 and the breaks of a new round on the newest commands
(compare, sweep --max-tpot, audit --stack, stack locks, the lock's checkout-code check, simulate --routing). Each
test builds the input that broke passprice and asserts what it does with it now (exit status and the error line)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke, refused

# --- (a) a record of another kind given by path or by a name with '..' ------------------------------------------------


def test_a_card_file_named_as_a_stack_is_one_line_naming_what_it_is(tmp_path: Path) -> None:
    """``--stack ../cards/h100_sxm5_80gb`` (a name joined under facts/stacks/) read the card file as a stack: three
    lines of stray keys. One line now names the file, the key a stack has, and what the file is."""
    root = copy_root(tmp_path)
    # Round 26: a name leading out of its kind's folder is no record of that kind; the line says where it leads and
    # what lies there.
    assert bad("price", "gemma3-270m-h100", "--stack", "../cards/h100_sxm5_80gb", root=root) == [
        "passprice: error: ../cards/h100_sxm5_80gb: no such stack file: a stack name is a file of facts/stacks,"
        " and this one leads out of it (to facts/cards/h100_sxm5_80gb.toml, the card h100_sxm5_80gb); to read"
        " a stack file from elsewhere give its path, ending in .toml"
    ]
    # Given by its path, the card file is read as a stack and said to be a card file, in one line.
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    line = f"{card}: stack: missing (required): this is a card file (it has a [card] table), not a stack file"
    assert bad("price", "gemma3-270m-h100", "--stack", str(card), root=root) == [f"passprice: error: {line}"]
    serving = root / "registry" / "servings" / "gemma3-270m-h100.toml"
    line = (f"{serving}: card: missing (required): this is a serving file (it has checkpoint and card names), not a "
            "card file")
    assert bad("price", "gemma3-270m-h100", "--card", str(serving), root=root) == [f"passprice: error: {line}"]
    assert bad("price", "gemma3-270m-h100", "--card", "../../registry/servings/gemma3-270m-h100", root=root) == [
        "passprice: error: ../../registry/servings/gemma3-270m-h100: no such card file: a card name is a file of "
        "facts/cards, and this one leads out of it (to registry/servings/gemma3-270m-h100.toml, the serving "
        "gemma3-270m-h100); to read a "
        "card file from elsewhere give its path, ending in .toml"
    ]


def test_a_file_of_no_kind_keeps_its_schema_lines(tmp_path: Path) -> None:
    """A stack file that is no record of any kind is still told each schema problem (the kind guess only speaks
    when the file is another record)."""
    stray = tmp_path / "x.toml"
    stray.write_text("a = 1\n", encoding="utf-8")
    lines = bad("price", "gemma3-270m-h100", "--stack", str(stray))
    assert lines[0] == f"passprice: error: {stray}: stack: missing (required)"


# --- (b) the lock's checkout-code check and code it cannot read -------------------------------------------------------


def _checkout_copy(tmp_path: Path) -> tuple[Path, Path]:
    root = copy_root(tmp_path)
    source = root / "src" / "passprice"
    shutil.copytree(REPO / "src" / "passprice", source, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    return root, source


@pytest.mark.parametrize("shape", ["fifo", "syntax"])
def test_a_lock_into_a_checkout_whose_code_does_not_read_is_refused(tmp_path: Path, shape: str) -> None:
    """A checkout whose pricing-model module is a FIFO, or does not parse, was "not a checkout" to the lock's check
    (``pins.checkout_model`` said ``None``): ``lock`` wrote into its locks/ with the running code's prices, silently.
    Code that cannot be read or parsed is not the running package's: refused now (exit 2), nothing written, and
    ``check`` warns."""
    root, source = _checkout_copy(tmp_path)
    module = source / "decode.py"
    module.unlink()
    if shape == "fifo":
        os.mkfifo(module)
        why = f"{module}: is a FIFO (named pipe), not a regular file: passprice reads regular files only"
    else:
        module.write_text("def (\n", encoding="utf-8")
        why = "src/passprice/decode.py: line 1: invalid syntax"
    out = root / "locks" / "mine.lock.toml"
    result = invoke("lock", "gemma3-270m-h100", "-o", str(out), root=root)
    assert result.exit_code == 2 and not out.exists(), result.output
    assert result.stderr.startswith(
        f"passprice: error: {source}: this checkout's code cannot be read ({why}), so it is not the code of the "
        "passprice running (pricing model sha256:"
    ), result.stderr
    result = invoke("check", root=root)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"passprice: warning: this checkout's src/passprice cannot be read ({why}): ")


# --- (c) every wrong name given at once is said -----------------------------------------------------------------------


def test_three_wrong_names_are_three_lines() -> None:
    """``price --checkpoint x1 --card x2 --stack x3`` said the checkpoint and the card, not the stack; a wrong
    routing record or drafting method beside them was not said either."""
    lines = bad("price", "--checkpoint", "x1", "--card", "x2", "--stack", "x3",
                says=["checkpoint 'x1': not found", "card 'x2': not found", "stack 'x3': not found"])  # fmt: skip
    assert len(lines) == 3
    lines = bad("best", "--checkpoint", "x1", "--card", "x2", "--routing", "x4", "--stack", "x3",
                says=["checkpoint 'x1'", "card 'x2'", "routing record 'x4'", "stack 'x3'"])  # fmt: skip
    assert len(lines) == 4
    lines = bad("price", "gemma3-270m-h100", "--card", "x2", "--draft", "x5", "--draft-tokens", "2",
                says=["card 'x2'", "drafting method 'x5'"])  # fmt: skip
    assert len(lines) == 2
    # compare --checkpoint x1 --cards x2,b200,x3 said x2 alone
    lines = bad("compare", "--checkpoint", "x1", "--cards", "x2,b200,x3",
                says=["checkpoint 'x1': not found", "--cards: card 'x2': not found", "--cards: card 'x3': not found"])
    assert len(lines) == 3


# --- (d) a comma in a card's name ------------------------------------------------------------------------------------


def test_a_card_named_with_a_comma_is_refused_not_split(tmp_path: Path) -> None:
    """A card file ``a40,b200.toml``: ``compare SERVING --cards a40,b200`` compared a40 and b200, never that card,
    which ``--cards`` cannot name. The name is refused where the card is read, naming the file."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "a40,b200.toml"
    shutil.copy(root / "facts" / "cards" / "b200.toml", card)
    line = (f"{card}: the name a40,b200 holds ',', which `--cards A,B` (compare, sweep) reads as two cards; rename "
            "the file")
    result = invoke("compare", "gemma3-270m-h100", "--json", root=root)
    # a listing names the file as check does, relative to the registry; a lookup as given (under --root ROOT)
    assert result.exit_code == 2 and result.stderr == f"passprice: error: {line.removeprefix(f'{root}/')}\n"
    assert line.startswith(f"{root}/facts/cards/")
    assert "a40,b200" not in {row["card"] for row in json.loads(result.stdout)["cards"]}
    assert bad("price", "gemma3-270m-h100", "--card", "a40,b200", "--no-lock", root=root) == [
        f"passprice: error: {line}"
    ]


# --- (e) nextn_predict_layers against the tensors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ('"qwen35.nextn_predict_layers" = { type = "uint32", value = 1 }',
         '"qwen35.nextn_predict_layers" = { type = "uint32", value = 2 }',
         "metadata qwen35.nextn_predict_layers: 2 draft (MTP) blocks, the last of 65, but block 63 holds no nextn.* "
         "tensor (nextn.eh_proj …): a main-model block would be left out of every price that does not draft"),
        ('"qwen35.nextn_predict_layers" = { type = "uint32", value = 1 }\n', "",
         "tensor 'blk.64.nextn.enorm.weight': a draft (MTP) tensor in block 64, but qwen35.nextn_predict_layers is 0 "
         "or missing: it would be priced as part of the main model in every pass"),
        ('name = "blk.64.nextn.eh_proj.weight"', 'name = "blk.3.nextn.eh_proj.weight"',
         "tensor 'blk.3.nextn.eh_proj.weight': a draft (MTP) tensor in block 3, but qwen35.nextn_predict_layers is 1 "
         "(the last 1 of 65 blocks): it would be priced as part of the main model in every pass"),
    ],
    ids=["block-without-nextn", "no-key", "nextn-in-a-main-block"],
)  # fmt: skip
def test_nextn_predict_layers_is_held_to_the_nextn_tensors(tmp_path: Path, old: str, new: str, line: str) -> None:
    """The draft (MTP) blocks are the last ``nextn_predict_layers`` of ``block_count``; nothing held that to the
    tensors: 2 made a main block a draft (left out of every undrafted price: 0.24 GB fewer weights), and a header
    without the key priced its MTP block's tensors as a main block's. Refused naming the key or the tensor."""
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "qwen35-27b-like.toml"
    text = entry.read_text(encoding="utf-8")
    assert text.count(old) == 1
    entry.write_text(text.replace(old, new), encoding="utf-8")
    assert bad("kv", "qwen35-27b-like", root=root) == [f"passprice: error: {entry}: {line}"]
    assert bad("price", "qwen35-27b-h200-chat", "--no-lock", root=root) == [f"passprice: error: {entry}: {line}"]


# --- (f) --routing uniform with the registered routing record broken -------------------------------------------------


def test_an_option_routing_is_judged_though_the_registered_record_is_broken(tmp_path: Path) -> None:
    """``price qwen3-30b-a3b-h200 --routing uniform`` exited 2 on the serving's own measured routing record being
    broken (not TOML): the lock's advice priced the serving as registered to word itself. The lock's refusal of the
    assumed routing stands (exit 1), worded without that serving."""
    root = copy_root(tmp_path)
    record = root / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    record.write_text(record.read_text(encoding="utf-8") + "garbage = [\n", encoding="utf-8")
    out = refused("price", "qwen3-30b-a3b-h200", "--routing", "uniform", root=root, name="LockFloor")
    assert "routing.hot_share is assumed, below the floor measured" in out["message"]
    result = invoke("price", "qwen3-30b-a3b-h200", "--routing", "uniform", "--no-lock", "--json", root=root)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rests_on"]["routing.hot_share"] == "assumed"


# --- (g) roofline CARD --lock L ---------------------------------------------------------------------------------------


def test_roofline_with_a_lock_alone_prices_the_locks_serving() -> None:
    """``roofline CARD --lock L`` without a serving printed the card's ridges, exit 0, the lock ignored. It prices
    L's own serving on CARD under L now, as ``price --lock L`` does; on another card the lock refuses."""
    result = invoke("roofline", "h100_sxm5_80gb", "--lock", "gemma3-270m-h100")
    assert result.exit_code == 0, result.output
    assert "\ngemma3-270m-h100: gemma3-270m-q4_k_m on NVIDIA H100 SXM5 80GB\n" in result.stdout  # its ridges, then it
    assert "  lock: under lock gemma3-270m-h100 (locks/gemma3-270m-h100.lock.toml): floors hold" in result.stdout
    refused("roofline", "b200", "--lock", "gemma3-270m-h100", name="LockMismatch")


# --- (h) the cache folder's entries, damaged or planted ---------------------------------------------------------------


def test_planted_and_damaged_cache_entries_are_misses(tmp_path: Path) -> None:
    """Every entry of a warm cache replaced by a pickle that would run a command when loaded (its checksum right),
    then every entry cut in half: the price is the same each run, nothing on stderr, and nothing the pickle names
    is called (only passprice's attrs classes and enumerations are looked up)."""
    cache_dir = tmp_path / "cache"
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(cache_dir)}
    command = [sys.executable, "-c", "from passprice.cli import main; main()", "price", "gemma3-270m-h100", "--json"]

    def run() -> bytes:
        done = subprocess.run(command, capture_output=True, env=env, cwd=REPO, timeout=120)
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        return done.stdout

    want = run()
    run()
    entries = [p for p in cache_dir.rglob("*") if p.is_file()]
    assert any(p.suffix == ".pickle" for p in entries)
    marker = tmp_path / "ran"
    planted = (
        b"\x80\x05\x95" + b"\x00" * 8  # a frame header is optional: a plain protocol-5 pickle follows
    )
    body = (b"\x80\x05cposix\nsystem\n(V" + f"touch {marker}".encode() + b"\ntR.")
    from passprice.digests import blake2b

    for path in entries:
        path.write_bytes(blake2b(body).hexdigest().encode("ascii") + b"\n" + body if path.suffix == ".pickle"
                         else planted)  # fmt: skip
    assert run() == want and not marker.exists()
    for path in [p for p in cache_dir.rglob("*") if p.is_file()]:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    assert run() == want and not marker.exists()


# --- round 18's new breaks --------------------------------------------------------------------------------------------


def test_a_position_in_exponent_notation_is_a_number_not_a_range() -> None:
    """``sweep --positions 1e-5`` was refused as "'1e-5' is not a number, a range A-B …": the exponent's '-' was
    read as a range 1e … 5. It is the number 0.00001 (as ``price --position 1e-5`` reads it); ranges still read."""
    from passprice.sweep import parse_numbers

    assert parse_numbers("1e-5,2-4", float, "--positions") == (1e-5, 2.0, 3.0, 4.0)
    result = invoke("sweep", "gemma3-270m-h100", "--positions", "1e-5", "--batches", "1", "--no-lock")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split(",")[5] == "1e-05"
    bad("sweep", "gemma3-270m-h100", "--batches", "1e-5",
        says="--batches: '1e-5' is not a number, a range A-B, or a doubling range A-B*2")  # fmt: skip


@pytest.mark.parametrize(("value", "problem"), [("8_0", "holds an underscore"), (" 8", "holds a space"),
                                                 ("+8", "holds a '+' sign")])  # fmt: skip
def test_fact_set_reads_a_value_as_written(tmp_path: Path, value: str, problem: str) -> None:
    """``fact set … --value 8_0`` wrote 80 (Python's ``float`` reads an underscore between digits) and ``' 8'``
    wrote 8: a typo became a figure, exit 0. The value is digits alone, as every number of the command line."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "b200.toml"
    before = card.read_bytes()
    assert bad("fact", "set", "b200", "memory.bandwidth", "--value", value, "--unit", "TB/s", "--provenance",
               "published", "--source", "glennklockwood-b200", "--locator", "table row x", root=root) == [
        f"passprice: error: --value: {value!r} {problem}: write the number in digits alone"
    ]  # fmt: skip
    assert card.read_bytes() == before


def test_fact_set_refuses_a_card_file_too_large_to_edit_in_time(tmp_path: Path) -> None:
    """A card file of 1 MB (a long comment) took ``fact set`` 5.6 s, one of 5 MB past 20 s (tomlkit, which keeps the
    layout, parses about 8 µs a byte, twice an edit). Past :data:`passprice.edit.MAX_EDITED_BYTES` (128 KiB, six
    times the largest card) it is refused before it is parsed, the file untouched."""
    from passprice.edit import MAX_EDITED_BYTES

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "b200.toml"
    card.write_text(card.read_text(encoding="utf-8") + "#" + "c" * MAX_EDITED_BYTES + "\n", encoding="utf-8")
    before = card.read_bytes()
    assert bad("fact", "set", "b200", "memory.bandwidth", "--value", "7.9", "--unit", "TB/s", "--provenance",
               "published", "--source", "glennklockwood-b200", "--locator", "table row x", root=root) == [
        f"passprice: error: {card}: {len(before):,} bytes, past the 131,072 passprice edits in place (keeping a "
        "file's layout costs about 8 µs a byte): edit it by hand, or make it smaller"
    ]  # fmt: skip
    assert card.read_bytes() == before


def test_calibrate_refuses_a_read_only_stack_before_fitting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``calibrate --stack S`` with S's file read-only fitted its 111 runs (about 7 s) and only then refused to
    write. The file is judged first now: the fit never runs."""
    from passprice import calibrate

    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    stack.chmod(0o444)

    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("fitted before the file was judged")

    monkeypatch.setattr(calibrate, "calibrate", no_fit)
    assert bad("calibrate", "--stack", "llamacpp-cuda-2405", root=root) == [
        f"passprice: error: {stack}: is read-only; passprice does not replace it (make it writable first)"
    ]


def test_compare_says_a_wrong_serving_and_every_wrong_card_at_once() -> None:
    """`compare x1 --cards x2,b200` named the missing serving alone (round 18, left open by the attacker): the wrong
    card is said with it, the good one not."""
    lines = bad("compare", "x1", "--cards", "x2,b200", says=["serving 'x1': not found in ", "--cards: card 'x2': "])
    assert len(lines) == 2, lines


def test_sweep_says_a_wrong_serving_card_and_stack_at_once() -> None:
    """`sweep x1 --cards x2 --stack x3` named the stack alone (round 18, 1 of 3)."""
    lines = bad("sweep", "x1", "--cards", "x2", "--stack", "x3", "--batches", "1-2",
                says=["serving 'x1': not found in ", "card 'x2': not found in ", "stack 'x3': not found in "])
    assert len(lines) == 3, lines
