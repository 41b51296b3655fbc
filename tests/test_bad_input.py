"""Bad input at the command line: every input here once broke a command (a traceback, a hang, a price of ``NaN``
printed with exit 0, a file written where it should not be) or is the kind of input a careless or hostile user
gives. Each must end in one clear line per problem on stderr naming the file and key, option or byte offset, with
exit status 2 (or a named refusal, exit 1, where the pricing model refuses), no traceback, and nothing half-written.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, bad, copy_root, invoke, refused

DATA = Path(__file__).resolve().parent / "data"
R1 = "deepseek-r1-distill-qwen-7b-q4_k_m"
GEMMA = "gemma3-270m-q4_k_m"
H200 = "h200_sxm_141gb"










def lock_exists(path: object) -> str:
    """``lock``'s line for a lock file already there, without --update or --force."""
    return (f"{path}: already exists: `--update` re-locks it with today's facts, checkpoint and code, keeping its "
            "floors; `--force` replaces it, its policy rebuilt from the flags")


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# ---------------------------------------------------------------------------------------------------------------------
# Options that are no quantity. Found: `--kv-bytes nan` priced with exit 0 and printed `NaN` (not JSON);
# `lock --kv-bytes nan` was a traceback (ValueError from json); `--position inf` was a refusal, not a usage error.

COMMANDS = [("price",), ("best",), ("max-batch",), ("audit",), ("lock", "-o", "OUT")]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--kv-bytes", "nan", "Invalid value for '--kv-bytes': 'nan' is not a finite number"),
        ("--kv-bytes", "inf", "Invalid value for '--kv-bytes': 'inf' is not a finite number"),
        ("--state-bytes", "nan", "Invalid value for '--state-bytes': 'nan' is not a finite number"),
        ("--position", "inf", "Invalid value for '--position': 'inf' is not a finite number"),
        ("--position", "nan", "Invalid value for '--position': 'nan' is not a finite number"),
        ("--kv-bytes", "0", "'--kv-bytes': 0 is out of range (a finite number from 0.125 to 8)"),
        ("--kv-bytes", "-2", "Invalid value for '--kv-bytes'"),
        # 16 bytes an element is no KV cache's (a 64-bit float is 8): 16 bits typed as bytes, found by a newcomer.
        ("--kv-bytes", "16", "'--kv-bytes': 16 is out of range (a finite number from 0.125 to 8)"),
        ("--position", "-1", "Invalid value for '--position'"),
        ("--limit", "0", "Invalid value for '--limit'"),
        ("--kv-page", "0", "Invalid value for '--kv-page'"),
        ("--head-rows", "0", "Invalid value for '--head-rows'"),
        ("--activation-words", "3", "Invalid value for '--activation-words'"),
        ("--draft-tokens", "65", "Invalid value for '--draft-tokens'"),
        ("--flush", "every:0", "Invalid value for --flush: 'every:0' is not a state flush"),
        ("--flush", "EVERY-PASS", "Invalid value for --flush: 'EVERY-PASS' is not a state flush"),
        # A superscript two is a digit to str.isdigit, but not to int(): once a Python error message.
        ("--flush", "every:²", "Invalid value for --flush: 'every:²' is not a state flush"),
        ("--scaling", "per-row", "Invalid value for '--scaling'"),
    ],
)
def test_option_that_is_no_quantity(
    command: tuple[str, ...], option: str, value: str, says: str, tmp_path: Path
) -> None:
    args = [tmp_path / "x.lock.toml" if a == "OUT" else a for a in command]
    lines = bad(*map(str, args), "r1-qwen7b-h200", option, value, says=says)
    assert len(lines) == 1 and "--help" in lines[0]  # one line, pointing at the help, never click's usage block
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("price",), "give a SERVING, or both --checkpoint and --card"),
        (("price", "--checkpoint", R1), "give a SERVING, or both --checkpoint and --card"),
        (("price", "r1-qwen7b-h200", "--draft", "qwen35-mtp"), "drafting needs both --draft METHOD and --draft-tokens"),
        (("price", "r1-qwen7b-h200", "--draft-tokens", "2"), "drafting needs both --draft METHOD and --draft-tokens"),
        (("price", "r1-qwen7b-h200", "--head-rows", "9"), "drafting needs both --draft METHOD and --draft-tokens"),
        (("price", "r1-qwen7b-h200", "--draft", "nope", "--draft-tokens", "2"), "drafting method 'nope': not found"),
        (("price", "r1-qwen7b-h200", "--batch", "-1"), "Invalid value for '--batch'"),
        (("price", "r1-qwen7b-h200", "--batch", "many"), "Invalid value for '--batch'"),
        (("best", "r1-qwen7b-h200", "--batch", "4"), "No such option '--batch'"),
        (("price", "r1-qwen7b-h200", "--no-such-option"), "No such option '--no-such-option'"),
        (("no-such-command",), "No such command 'no-such-command'"),
        (("price", "--checkpoint"), "Option '--checkpoint' requires an argument"),
        (("audit", "r1-qwen7b-h200", "gemma3-270m-h100"), "audit takes one TARGET"),
        (("audit", "r1-qwen7b-h200.lock.toml", "--batch", "4"), "audit: --batch cannot apply to lock r1-qwen7b-h200"),
    ],
)
def test_usage_errors_are_one_line(args: tuple[str, ...], says: str) -> None:
    # Found: a usage error printed click's four-line block (Usage:, Try '…', a blank line, Error: …).
    assert len(bad(*args, says=says)) == 1


def test_root_that_is_no_root(tmp_path: Path) -> None:
    bad("cards", root=tmp_path / "nowhere", says=f"{tmp_path / 'nowhere'}: not a passprice root")
    (tmp_path / "file").write_text("x")
    bad("cards", root=tmp_path / "file", says=f"{tmp_path / 'file'}: is a regular file, not a folder")  # left39


# ---------------------------------------------------------------------------------------------------------------------
# Numbers the pricing model refuses by name (exit 1), not crashes.


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("price", "r1-qwen7b-h200", "--activation-words", "0"), "Empty"),
        (("best", "r1-qwen7b-h200", "--activation-words", "0"), "Empty"),
        # The largest values the options take (the schemas' u32; past them is bad input, tests/test_option_bounds.py).
        (("price", "r1-qwen7b-h200", "--batch", str(2**32 - 1)), "NotResident"),
        (("price", "r1-qwen7b-h200", "--kv-page", str(2**32 - 1)), "NotResident"),
        (("price", "r1-qwen7b-h200", "--limit", str(10**9)), "ContextBeyondModel"),
        (("max-batch", "r1-qwen7b-h200", "--limit", "131073"), "ContextBeyondModel"),
        (("price", "r1-qwen7b-h200", "--position", "5000", "--limit", "100"), "BadContexts"),
        (("price", "r1-qwen7b-h200", "--position", str(2**32 - 1)), "BadContexts"),
        (("price", "qwen35-27b-h200-mtp", "--draft-tokens", "9"), "BadDraft"),
        (("best", "qwen35-27b-h200-mtp", "--draft", "deepseek-v3-mtp", "--draft-tokens", "2"), "OutOfScope"),
        (("price", "r1-qwen7b-h200", "--attention", "array"), "WideCacheOnArray"),
        (("price", "--checkpoint", "qwen3next-80b-a3b-like", "--card", "h200_sxm_141gb"), "Routed"),
        (("audit", "--checkpoint", "qwen3next-80b-a3b-like", "--card", "h200_sxm_141gb"), "Routed"),
        # The record's checkpoints list qwen3-30b-a3b-q4_k_m only: out of its scope before its E and k are compared.
        (("price", "gpt-oss-20b-h200", "--routing", "qwen3-30b-a3b-measured"), "OutOfScope"),
        (("price", "deepseek-v3-mi300x"), "NotResident"),
    ],
)
def test_model_refusals_are_named(args: tuple[str, ...], name: str) -> None:
    refused(*args, name=name)


def test_lock_refused_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "x.lock.toml"
    refused("lock", "r1-qwen7b-h200", "-o", str(out), "--activation-words", "0", name="Empty")
    assert not out.exists() and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------------------------------
# Paths that are wrong. Found: a folder given as --checkpoint, header, reproduce or a card path was "not found in the
# registry"; a non-TOML file as --card "not found"; `lock -o FILE/x` under a file said "cannot write: File exists".


def test_paths_that_are_folders(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "folder.toml").mkdir()
    f = str(folder)
    bad("header", f, says=f"{f}: is a folder, not a checkpoint file")
    bad("price", "--checkpoint", f, "--card", H200, says=f"{f}: is a folder, not a checkpoint file")
    bad("price", "--checkpoint", R1, "--card", f, says=f"{f}: is a folder, not a card file")
    bad("price", str(tmp_path / "folder.toml"), says=f"{tmp_path / 'folder.toml'}: is a folder, not a serving file")
    bad("facts", f, says=f"{f}: is a folder, not a card file")
    bad("reproduce", f, says=f"{f}: is a folder, not a lock file")
    bad("price", "r1-qwen7b-h200", "--lock", f, says=f"{f}: is a folder, not a lock file")
    bad("lock", "r1-qwen7b-h200", "-o", f, says=f"{f}: is a folder; give a file to write")
    bad("import", f, "--name", "x", says=f"{f}: is a folder, not a file")


def test_paths_to_nothing_or_the_wrong_kind(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    missing = str(tmp_path / "missing.toml")
    bad("price", "--checkpoint", R1, "--card", missing, says=f"{missing}: no such card file")
    bad("price", missing, says=f"{missing}: no such serving file")
    notes = str(tmp_path / "notes.txt")
    bad("price", "--checkpoint", R1, "--card", notes, says=f"{notes}: not a card file")
    bad("price", "--checkpoint", notes, "--card", H200, says=f"{notes}: byte 0: bad magic")
    bad("reproduce", missing, says=f"lock {missing!r}: no such file")
    bad("price", "--checkpoint", "", "--card", H200, says="Invalid value for --checkpoint: an empty name")
    bad("price", "r1-qwen7b-h200", "--card", "", says="card '': not found in")
    bad("facts", "", says="card '': not found in")


def test_lock_output_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "x.lock.toml"
    bad(
        "lock", "r1-qwen7b-h200", "-o", str(target), says=f"{target}: cannot write: {tmp_path / 'file'} is not a folder"
    )
    assert (tmp_path / "file").read_text() == "x"


def test_lock_existing_file_untouched(tmp_path: Path) -> None:
    out = tmp_path / "x.lock.toml"
    out.write_text("mine\n")
    bad("lock", "r1-qwen7b-h200", "-o", str(out), says=lock_exists(out))
    assert out.read_text() == "mine\n" and files_under(tmp_path) == ["x.lock.toml"]


@pytest.mark.parametrize("name", ["../escaped", "", ".hidden", "a/b", "x y"])
def test_lock_name_cannot_leave_locks(name: str, tmp_path: Path) -> None:
    # Found: `lock SERVING --name ../../x` wrote x.lock.toml two folders above locks/.
    root = copy_root(tmp_path)
    before = files_under(tmp_path)
    bad(
        "lock",
        "r1-qwen7b-h200",
        "--name",
        name,
        root=root,
        says=f"Invalid value for --name: {name!r} is not a lock name",
    )
    bad("lock", "r1-qwen7b-h200", "--name", name, "-o", str(tmp_path / "y.lock.toml"), root=root)
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("name", ["", "../evil", "-dash"])
def test_import_name_must_be_a_file_stem(name: str, tmp_path: Path) -> None:
    # Found: `import FILE --name ''` silently imported under the file's own name.
    root = copy_root(tmp_path)
    before = files_under(root)
    bad("import", str(DATA / f"{GEMMA}.header.gguf.xz"), "--name", name, root=root, says=f"checkpoint name {name!r}")
    assert files_under(root) == before


def test_import_into_a_registry_that_is_a_file(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "facts").mkdir(parents=True)
    (root / "registry").mkdir()
    (root / "registry" / "checkpoints").write_text("not a folder\n")
    target = root / "registry" / "checkpoints" / "g.toml"
    bad(
        "import",
        str(DATA / f"{GEMMA}.header.gguf.xz"),
        "--name",
        "g",
        root=root,
        says=f"{target}: cannot write: {root / 'registry' / 'checkpoints'} is not a folder",
    )
    assert (root / "registry" / "checkpoints").read_text() == "not a folder\n"


def test_import_of_a_bad_file_writes_nothing(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    before = files_under(root)
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(bytes(range(256)) * 4)
    bad("import", str(garbage), "--name", "g", root=root, says=f"{garbage}: byte 0: bad magic")
    bad("import", str(tmp_path / "none.gguf"), "--name", "g", root=root, says=f"{tmp_path / 'none.gguf'}: no such file")
    assert files_under(root) == before


# ---------------------------------------------------------------------------------------------------------------------
# GGUF files that are garbage, truncated or hostile: one line with the byte offset, fast.

U32, I32, STRING, ARRAY = 4, 5, 8, 9
F32, F16, Q8_0 = 0, 1, 8


def _s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def gguf(meta: Sequence[tuple[str, int, Any]], tensors: Sequence[tuple[str, Sequence[int], int]]) -> bytes:
    """The bytes of a little-endian GGUF v3 header: ``meta`` as (key, value type, value) with value types uint32,
    int32 and string, ``tensors`` as (name, dims, GGML type id); no tensor data."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
    for key, kind, value in meta:
        out += _s(key) + struct.pack("<I", kind)
        out += _s(value) if kind == STRING else struct.pack("<I" if kind == U32 else "<i", value)
    for offset, (name, dims, kind) in enumerate(tensors):
        out += _s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, 32 * offset)
    return out


def llama(
    extra: Sequence[tuple[str, int, Any]] = (),
    tensors: Sequence[tuple[str, Sequence[int], int]] | None = None,
    blocks: int = 1,
    arch: str = "llama",
) -> bytes:
    """A tiny one-block dense checkpoint (width 64, 4 query heads, 2 KV heads), with ``extra`` metadata."""
    meta = [
        ("general.architecture", STRING, arch),
        (f"{arch}.block_count", U32, blocks),
        (f"{arch}.context_length", U32, 4096),
        (f"{arch}.embedding_length", U32, 64),
        (f"{arch}.attention.head_count", U32, 4),
        (f"{arch}.attention.head_count_kv", U32, 2),
        *extra,
    ]
    if tensors is None:
        tensors = [
            ("token_embd.weight", [64, 100], Q8_0),
            ("blk.0.attn_q.weight", [64, 64], F16),
            ("blk.0.attn_k.weight", [64, 32], F16),
            ("blk.0.attn_v.weight", [64, 32], F16),
            ("blk.0.attn_output.weight", [64, 64], F16),
            ("output_norm.weight", [64], F32),
        ]
    return gguf(meta, tensors)


def test_a_well_formed_tiny_header_prices(tmp_path: Path) -> None:
    # The hostile cases below are this header with one thing broken; unbroken, it prices like any checkpoint.
    path = tmp_path / "tiny.gguf"
    path.write_bytes(llama())
    prices = {}
    for command in ("price", "best", "max-batch"):
        result = invoke(command, "--checkpoint", str(path), "--card", H200, "--json")
        assert result.exit_code == 0, result.output
        prices[command] = json.loads(result.stdout)
    assert prices["price"]["batch"] == 1 and prices["price"]["binds"] == "memory"
    # A tiny model's best batch is the largest that fits: memory-bound tokens/s rises with every sequence.
    assert prices["best"]["batch"] == prices["max-batch"]["max_batch"] > 1


GARBAGE = {
    "empty": (b"", "header ends at byte 0 while reading the magic"),
    "magic only": (b"GGUF", "header ends at byte 4 while reading the version"),
    "bad magic": (b"GGML" + bytes(20), "byte 0: bad magic b'GGML'"),
    "version 9": (b"GGUF" + struct.pack("<IQQ", 9, 0, 0), "byte 4: unknown GGUF version 9"),
    "tensor count 2^63": (b"GGUF" + struct.pack("<IQQ", 3, 2**63, 0), "byte 8: tensor count 9223372036854775808"),
    "metadata count 2^63": (b"GGUF" + struct.pack("<IQQ", 3, 0, 2**63), "byte 16: metadata count 9223372036854775808"),
    "cut in a key": (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 40) + b"general.arch", "byte 24"),
    "cut in the tensor table": (llama()[:-30], "byte 561: tensor 5 name: string length 18 runs past the end"),
    "random bytes": (bytes((i * 97 + 13) % 256 for i in range(4096)), "byte 0: bad magic"),
}


@pytest.mark.parametrize("case", list(GARBAGE))
def test_garbage_and_truncated_gguf(case: str, tmp_path: Path) -> None:
    raw, says = GARBAGE[case]
    path = tmp_path / "bad.gguf"
    path.write_bytes(raw)
    began = time.process_time()  # CPU seconds of this process: its own work, not the machine's load
    for args in (
        ("header", str(path)),
        ("price", "--checkpoint", str(path), "--card", H200),
        ("import", str(path), "--name", "x"),
    ):
        lines = bad(*args, root=copy_root(tmp_path / args[0]) if args[0] == "import" else REPO, says=f"{path}: {says}")
        assert len(lines) == 1
    assert time.process_time() - began < 5


def test_truncated_compressed_headers(tmp_path: Path) -> None:
    raw = (DATA / f"{GEMMA}.header.gguf.xz").read_bytes()
    cut = tmp_path / "cut.gguf.xz"
    cut.write_bytes(raw[: len(raw) // 3])
    bad("header", str(cut), says=f"{cut}: ")
    fake = tmp_path / "fake.gguf.gz"
    fake.write_text("not gzip\n")
    bad("header", str(fake), says=f"{fake}: ")


# Headers that parse but describe no checkpoint. Found: block_count 2^32 − 1 and a tensor blk.4000000000.* ran out of
# memory (MemoryError); blk.<20 digits>.* an OverflowError; an empty token_embd a ZeroDivisionError (in tokens/s and,
# with --head-rows, in the head's share); no architecture or no embedding_length made `best` run for minutes; a
# negative key_length priced negative bytes; a string block_count was silently read as 0.
HOSTILE = {
    "block_count 2^32-1": (
        llama(blocks=2**32 - 1),
        ["metadata llama.block_count: the header names 4,294,967,295 blocks"],
    ),
    "blk.4000000000": (
        llama(tensors=[("token_embd.weight", [64, 100], Q8_0), ("blk.4000000000.attn_k.weight", [64, 32], F16)]),
        [
            "metadata llama.block_count: the header names 4,000,000,001 blocks",
            "metadata llama.block_count: 1, but the tensors name 4,000,000,001 blocks",
        ],
    ),
    "blk.<20 digits>": (
        llama(tensors=[("token_embd.weight", [64, 100], Q8_0), ("blk.99999999999999999999.attn_k.weight", [64], F16)]),
        ["tensor 'blk.99999999999999999999.attn_k.weight': block index of 20 digits"],
    ),
    "empty tensor": (
        llama(tensors=[("token_embd.weight", [0, 0], Q8_0)], blocks=0),
        ["tensor 'token_embd.weight': dimension 0 in [0, 0]"],
    ),
    "empty vocabulary": (
        llama(tensors=[("token_embd.weight", [64, 0], Q8_0), ("blk.0.attn_k.weight", [64, 32], F16)]),
        ["tensor 'token_embd.weight': dimension 0 in [64, 0]"],
    ),
    "no architecture": (
        gguf([], [("token_embd.weight", [64, 100], Q8_0)]),
        ["metadata general.architecture: missing", "metadata embedding_length: missing"],
    ),
    "architecture a number": (
        gguf([("general.architecture", U32, 5)], [("token_embd.weight", [64, 100], Q8_0)]),
        ["metadata general.architecture: 5 is not a string", "metadata embedding_length: missing"],
    ),
    "no embedding_length": (
        gguf(
            [("general.architecture", STRING, "llama"), ("llama.block_count", U32, 1)],
            [("token_embd.weight", [64, 100], Q8_0), ("blk.0.ffn_up.weight", [64, 256], Q8_0)],
        ),
        ["metadata llama.embedding_length: missing"],
    ),
    "negative key_length": (
        llama([("llama.attention.key_length", I32, -100)]),
        ["metadata llama.attention.key_length: -100 is not a whole number >= 0"],
    ),
    "string counts": (
        gguf(
            [
                ("general.architecture", STRING, "llama"),
                ("llama.block_count", STRING, "x"),
                ("llama.context_length", STRING, "big"),
                ("llama.embedding_length", U32, 64),
            ],
            [("token_embd.weight", [64, 100], Q8_0)],
        ),
        ["metadata llama.block_count: 'x' is not a whole number", "metadata llama.context_length: 'big' is not"],
    ),
    "negative sliding window": (
        llama([("gemma3.attention.sliding_window", I32, -5)], arch="gemma3"),
        ["metadata gemma3.attention.sliding_window: -5 is not a whole number >= 0"],
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_headers(case: str, tmp_path: Path) -> None:
    raw, says = HOSTILE[case]
    path = tmp_path / "hostile.gguf"
    path.write_bytes(raw)
    began = time.process_time()  # CPU seconds of this process: its own work, not the machine's load
    for command in ("price", "best", "max-batch", "audit"):
        lines = bad(command, "--checkpoint", str(path), "--card", H200, says=[f"{path}: {s}" for s in says])
        assert len(lines) == len(says), lines
    # Drafting through the hostile header: with a method that declares no scope (the registered qwen35-mtp applies to
    # qwen35-27b-like only, and refuses any other checkpoint as OutOfScope before the header is decoded).
    root = copy_root(tmp_path)
    method = root / "facts" / "drafts" / "qwen35-mtp.toml"
    method.write_text(method.read_text().replace('checkpoints = ["qwen35-27b-like"]\n', ""))
    lines = bad(
        "price",
        "--checkpoint",
        str(path),
        "--card",
        H200,
        "--draft",
        "qwen35-mtp",
        "--draft-tokens",
        "1",
        "--head-rows",
        "5",
        root=root,
    )
    assert len(lines) == len(says)
    assert invoke("header", str(path)).exit_code == 0  # the header itself reads: it is shown as it is
    assert time.process_time() - began < 5


def test_hostile_registry_entry(tmp_path: Path) -> None:
    # Found: a checkpoint entry with block_count 4,000,000,000 ran out of memory when priced.
    root = copy_root(tmp_path)
    text = (root / "registry" / "checkpoints" / f"{GEMMA}.toml").read_text()
    block_count = '"gemma3.block_count" = { type = "uint32", value = 18 }'
    assert block_count in text
    entry = root / "registry" / "checkpoints" / "huge.toml"
    entry.write_text(
        text.replace(block_count, block_count.replace("18", "4000000000")).replace(
            f'name = "{GEMMA}"', 'name = "huge"', 1
        )
    )
    says = f"{entry}: metadata gemma3.block_count: the header names 4,000,000,000 blocks"
    bad("price", "--checkpoint", "huge", "--card", H200, root=root, says=says)
    bad("best", "--checkpoint", "huge", "--card", H200, root=root, says=says)
    entry.write_text(
        text.replace(block_count, block_count.replace("18", "-18")).replace(f'name = "{GEMMA}"', 'name = "huge"', 1)
    )
    bad("header", "huge", root=root, says=f'{entry}: metadata."gemma3.block_count".value: -18 is not a uint32')


# ---------------------------------------------------------------------------------------------------------------------
# Files that do not parse or validate: the file, the line or key path, every problem.


def test_toml_syntax_and_encoding_errors(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "broken.toml"
    card.write_text("[memory.capacity\nvalue = 1\n")
    bad(
        "facts",
        "broken",
        root=root,
        says=f"{card}: not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 17)",
    )
    bad(
        "fact",
        "set",
        "broken",
        "memory.capacity",
        "--value",
        "5",
        "--unit",
        "GB",
        "--provenance",
        "estimated",
        "--source",
        "nvidia-h200-datasheet",
        "--locator",
        "a citation long enough to pass",
        root=root,
        says=f"{card}: not valid TOML",
    )
    assert card.read_text() == "[memory.capacity\nvalue = 1\n"
    serving = root / "registry" / "servings" / "broken.toml"
    serving.write_bytes(b"checkpoint = \xff\xfe\n")
    bad("price", "broken", root=root, says=f"{serving}: byte 13: not UTF-8 text")
    lock = tmp_path / "broken.lock.toml"
    lock.write_text("[lock\n")
    bad("reproduce", str(lock), root=root, says=f"{lock}: not valid TOML")
    bad("price", "r1-qwen7b-h200", "--lock", str(lock), root=root, says=f"{lock}: not valid TOML")


def test_unknown_keys_and_out_of_range_values(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    servings = root / "registry" / "servings"
    base = (servings / "r1-qwen7b-h200.toml").read_text()
    (servings / "odd.toml").write_text(
        base.replace("batch = 1\n", "batch = -4\nbogus = 3\n").replace("kv_bytes = 2\n", "kv_bytes = nan\n")
    )
    bad(
        "price",
        "odd",
        root=root,
        says=[
            f"{servings / 'odd.toml'}: (top level): unknown key 'bogus'",
            f"{servings / 'odd.toml'}: batch: -4 is less than the minimum of 1",
            f"{servings / 'odd.toml'}: kv_bytes: must be a finite number, not nan",
        ],
    )
    drafts = root / "facts" / "drafts"
    method = (drafts / "qwen35-mtp.toml").read_text()
    (drafts / "gappy.toml").write_text(method.replace("[acceptance.2]", "[acceptance.5]"))
    bad(
        "price",
        "r1-qwen7b-h200",
        "--draft",
        "gappy",
        "--draft-tokens",
        "1",
        root=root,
        says=f"{drafts / 'gappy.toml'}: acceptance: figures must be numbered 1..3 without gaps",
    )


def card_with(root: Path, name: str, old: str, new: str) -> Path:
    """``facts/cards/NAME.toml`` in ``root``: the H200 card with the first ``old`` replaced by ``new``."""
    text = (REPO / "facts" / "cards" / f"{H200}.toml").read_text()
    assert old in text
    path = root / "facts" / "cards" / f"{name}.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_card_figures_too_large_for_a_double(tmp_path: Path) -> None:
    # Found: 1e300 PB/s (or a 400-digit integer) converted to base units raised OverflowError (a traceback).
    root = copy_root(tmp_path)
    huge = card_with(root, "huge", 'value = 4.8\nunit = "TB/s"', 'value = 1e300\nunit = "PB/s"')
    # The schema bounds every figure (1e-9 … 1e18 in its unit), so no figure reaches a double's limits.
    says = f"{huge}: memory.bandwidth.value: 1e300 is greater than the maximum of 1e+18"
    for args in (("facts", "huge"), ("price", "r1-qwen7b-h200", "--card", "huge"), ("fact", "show", "huge")):
        assert bad(*args, root=root, says=says) == [f"passprice: error: {says}"]
    digits = card_with(root, "digits", "value = 141\n", f"value = {'9' * 400}\n")
    says = f"{digits}: memory.capacity.value: an integer of 400 digits is out of range (at most 1e+18)"
    bad("facts", "digits", root=root, says=says)
    card = root / "facts" / "cards" / f"{H200}.toml"
    before = card.read_bytes()
    bad(
        "fact",
        "set",
        H200,
        "memory.bandwidth",
        "--value",
        "1e300",
        "--unit",
        "PB/s",
        "--provenance",
        "estimated",
        "--source",
        "nvidia-h200-datasheet",
        "--locator",
        "a citation long enough to pass",
        root=root,
        says=f"{card}: memory.bandwidth.value: 1e+300 is greater than the maximum of 1e+18",
    )
    assert card.read_bytes() == before


def test_card_figures_so_small_the_pass_never_ends(tmp_path: Path) -> None:
    # Found: memory.bandwidth 5e-324 B/s priced with exit 0 and printed `Infinity` (not JSON); `lock` was a
    # traceback (ValueError from json) and `audit` a ZeroDivisionError. Now the card's schema refuses it.
    root = copy_root(tmp_path)
    slow = card_with(root, "slow", 'value = 4.8\nunit = "TB/s"', 'value = 5e-324\nunit = "B/s"')
    says = f"{slow}: memory.bandwidth.value: 5e-324 is less than the minimum of 1e-09"
    out = tmp_path / "slow.lock.toml"
    for args in (("price",), ("price", "--json"), ("best",), ("audit",), ("audit", "--json"), ("lock", "-o", str(out))):
        bad(*args, "r1-qwen7b-h200", "--card", "slow", root=root, says=says)
    assert not out.exists()


def test_tampered_lock(tmp_path: Path) -> None:
    lock = tmp_path / "tampered.lock.toml"
    text = (REPO / "locks" / "r1-qwen7b-h200.lock.toml").read_text()
    assert "value = 4.8\n" in text
    lock.write_text(text.replace("value = 4.8\n", "value = 4.9\n", 1))
    says = f'{lock}: facts."memory.bandwidth": digest mismatch'
    for args in (("reproduce", str(lock)), ("audit", str(lock)), ("price", "--lock", str(lock))):
        assert len(bad(*args, says=says)) == 1


def test_fact_commands(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{H200}.toml"
    before = card.read_bytes()
    bad("fact", "show", H200, "memory.speed", root=root, says=f"{card}: memory.speed: not a card fact path")
    bad("fact", "show", "qwen35-mtp", "acceptance.9", "--draft", root=root, says="acceptance.9: no such fact")
    cite = "a citation long enough to pass"
    for value, says in (
        ("abc", "--value: 'abc' is not a number"),
        ("nan", "must be a finite number, not nan"),
        ("0", "memory.bandwidth.value: 0 is less than the minimum of 1e-09"),
    ):
        bad(
            "fact",
            "set",
            H200,
            "memory.bandwidth",
            "--value",
            value,
            "--unit",
            "TB/s",
            "--provenance",
            "estimated",
            "--source",
            "nvidia-h200-datasheet",
            "--locator",
            cite,
            root=root,
            says=says,
        )
    bad(
        "fact",
        "set",
        H200,
        "memory.bandwidth",
        "--value",
        "5",
        "--unit",
        "GB",
        "--provenance",
        "rumoured",
        "--source",
        "nvidia-h200-datasheet",
        "--locator",
        cite,
        root=root,
        says=[f"{card}: memory.bandwidth.provenance", f"{card}: memory.bandwidth.unit"],
    )
    assert card.read_bytes() == before


def test_diff_of_nothing(tmp_path: Path) -> None:
    bad("diff", str(tmp_path / "nowhere"), str(REPO), says="neither a folder nor a revision")


# --- session 4: odd names the earlier rounds passed over ----------------------------------------------------------


def test_a_folder_named_like_an_entry_is_reported_not_skipped(tmp_path: Path) -> None:
    """A folder called ``x.toml`` among the cards or servings was skipped by the listings (``cards`` exited 0
    without it) and reported as "not found" by a lookup: it is named as what it is."""
    root = copy_root(tmp_path)
    (root / "facts/cards/bogus.toml").mkdir()
    (root / "registry/servings/odd.toml").mkdir()
    card, serving = root / "facts/cards/bogus.toml", root / "registry/servings/odd.toml"
    bad("facts", "bogus", root=root, says=f"{card}: is a folder, not a card file")
    bad("price", "odd", root=root, says=f"{serving}: is a folder, not a serving file")
    result = invoke("cards", root=root)
    assert result.exit_code == 2 and "h200_sxm_141gb" in result.stdout  # the good cards are still listed
    assert "passprice: error: facts/cards/bogus.toml: is a folder, not a card file" in result.stderr  # as check
    result = invoke("servings", root=root)
    assert result.exit_code == 2 and "r1-qwen7b-h200" in result.stdout
    assert "passprice: error: registry/servings/odd.toml: is a folder, not a serving file" in result.stderr


@pytest.mark.parametrize("option", ["-o", "--plot"])
def test_an_output_name_ending_in_a_slash_is_refused(option: str, tmp_path: Path) -> None:
    """``-o x.csv/`` names a folder: click's path dropped the slash and the sweep wrote ``x.csv``."""
    out = tmp_path / "x.csv"
    bad("sweep", "r1-qwen7b-h200", "--batches", "1", option, f"{out}/",
        says=f"'{out}/' ends in '/': it names a folder, not a file")
    assert not out.exists()


def test_import_of_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    """The entry records the file's name: a name in bytes that are not UTF-8 is refused as FILE's, before the header
    is read (it blamed the entry it could not write)."""
    root = copy_root(tmp_path)
    odd = tmp_path / os.fsdecode(b"bad\xffname.gguf")
    odd.write_bytes((REPO / "tests/data/qwen35-27b-like.header.gguf").read_bytes())
    bad("import", str(odd), "--name", "ok1", "--origin", "hf:x/y", root=root,
        says="FILE's name (the entry records it; rename the file): 'bad\\udcffname.gguf' is not UTF-8 text")
    assert not (root / "registry/checkpoints/ok1.toml").exists()


def test_bad_magic_shows_no_bytes_of_an_unknown_file(tmp_path: Path) -> None:
    """A serving may name any file as its checkpoint; the error line (a CI log) shows the start of a file only when
    it is a format the line can name."""
    secret = tmp_path / "key.pem"
    secret.write_bytes(b"SECRETKEY" * 8)
    root = copy_root(tmp_path)
    text = (root / "registry/servings/r1-qwen7b-h200.toml").read_text(encoding="utf-8")
    (root / "registry/servings/evil.toml").write_text(
        text.replace('checkpoint = "deepseek-r1-distill-qwen-7b-q4_k_m"', f'checkpoint = "{secret}"'), encoding="utf-8"
    )
    # A serving of the registry may not name a file outside it (issue 13, round 5): refused unread.
    lines = bad("price", "evil", root=root, says=f"checkpoint: {secret} lies outside the registry")
    assert "SECR" not in "".join(lines)
    # The command line may: the file is read, and its start not shown.
    lines = bad("price", "--checkpoint", str(secret), "--card", "h200_sxm_141gb", root=root,
                says=f"{secret}: byte 0: bad magic: a GGUF file starts with b'GGUF'")
    assert "SECR" not in "".join(lines)
    old = tmp_path / "old.gguf"
    old.write_bytes(b"GGJT" + bytes(60))
    bad("header", str(old), says=f"{old}: byte 0: bad magic b'GGJT' (the GGJT format GGUF replaced)")


def test_diff_refuses_a_name_that_is_both_folder_and_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``diff main`` with a folder ``main`` here: git calls that ambiguous; passprice took the folder silently."""
    import subprocess

    root = copy_root(tmp_path)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "facts"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    (root / "main").mkdir()
    monkeypatch.chdir(root)
    bad("diff", "main", root=root, says="main: names both a folder here and the revision ")
    assert invoke("diff", "./main", root=root).exit_code == 2  # the folder, which is no root
    assert "not a passprice root" in invoke("diff", "./main", root=root).stderr
    assert invoke("diff", "heads/main", root=root).exit_code == 0  # the revision: nothing changed


def test_a_root_schema_is_never_validated_against(tmp_path: Path) -> None:
    """A registry made by an older passprice (or a pull request editing ``schema/``) whose serving schema has no
    bound on context classes, a card schema whose pattern backtracks for ever, a ``$ref`` cycle, a schema that is
    no schema: passprice validates against its own schemas only, so 100 classes are refused as before, the rest is
    never read, and ``check`` warns about each file of the copy that differs."""
    root = copy_root(tmp_path)
    shutil.copytree(REPO / "schema", root / "schema")
    serving_schema = root / "schema/serving.schema.json"
    document = json.loads(serving_schema.read_text(encoding="utf-8"))
    del document["properties"]["contexts"]["maxItems"]
    serving_schema.write_text(json.dumps(document), encoding="utf-8")
    card_schema = root / "schema/card.schema.json"
    card = json.loads(card_schema.read_text(encoding="utf-8"))
    card["properties"]["card"]["properties"]["name"]["pattern"] = "^(a|a)*$"
    card["$defs"] = {"loop": {"$ref": "#/$defs/loop"}}
    card["properties"]["card"]["$ref"] = "#/$defs/loop"
    card_schema.write_text(json.dumps(card), encoding="utf-8")
    (root / "schema/lock.schema.json").write_text("[]", encoding="utf-8")
    text = (root / "registry/servings/r1-qwen7b-h200.toml").read_text(encoding="utf-8")
    head = text.split("[[contexts]]")[0]
    many = head + "".join(f"[[contexts]]\nshare = 0.01\nposition = {i + 1}\nlimit = 4096\n\n" for i in range(100))
    (root / "registry/servings/many.toml").write_text(many, encoding="utf-8")
    bad("price", "many", root=root, says="many.toml: contexts: 100 items (at most 64)")
    (root / "registry/servings/many.toml").unlink()
    h200 = root / "facts/cards/h200_sxm_141gb.toml"
    h200.write_text(h200.read_text(encoding="utf-8").replace('name = "', 'name = "' + "a" * 40 + "!", 1),
                    encoding="utf-8")
    assert invoke("price", "r1-qwen7b-h200", "--json", root=root).exit_code == 0  # the lock still holds: a title
    result = invoke("check", root=root)
    warned = [line for line in result.stdout.splitlines() if "warning: schema/" in line]
    assert [line.split(":")[1].strip() for line in warned] == [
        "schema/card.schema.json", "schema/lock.schema.json", "schema/serving.schema.json"
    ]
    assert "differs from this passprice's copy, which it validates against" in warned[0]


