"""Attack round 40 (issue 13): hostile input against the code merged in session 20; one test a finding, each
building its reproducer.

- (4) ``import`` of a header with tensor type ids the gguf package does not know (255, 4294967295 on one tensor
  and on every tensor) wrote the entry with exit 0 and no word; ``header NAME`` then said ``236, 0 bytes`` and
  ``type#255 236 0`` (bytes unknown shown as 0), and every price (price, kv, best, max-batch, lock, compare,
  simulate, sweep, roofline, audit) was refused (exit 1, ``Step``) with "unknown to the gguf package" and no way
  out; ``checkpoints`` listed 236 such tensors as "0 B". Now ``import`` warns on stderr (still exit 0: the entry
  reads back equal), ``header`` shows the bytes as unknown, ``checkpoints`` says they are not counted, and the
  refusal says what to fix.
- (2) ``tables.markdown_prose`` (the review's check lines) found its quoted passprice commands with a regular
  expression that scanned to the end again from every ```passprice`` that did not close: 112,000 characters of
  ```passprice a`b`` took 13.1 s of CPU (1 MB: hours). Now one pass (0.01 s; 1 MB 0.12 s), the same spans as the
  expression on 300,000 random strings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("type_id", [255, 4294967295])
def test_import_of_an_unknown_tensor_type_warns_and_its_price_says_what_to_fix(tmp_path: Path, type_id: int) -> None:
    from gguf_bytes import Tensor, decode, encode
    from passprice.gguf_header import read_header

    meta, tensors = decode(read_header(REPO / "tests/data/gemma3-270m-q4_k_m.header.gguf.xz"))
    tensors = [Tensor(t.name, t.dims, type_id if t.name == "blk.0.ffn_down.weight" else t.type_id, t.offset)
               for t in tensors]
    path = tmp_path / "odd.gguf"
    path.write_bytes(encode(meta, tensors))
    root = copy_root(tmp_path)
    result = invoke("import", str(path), "--name", "odd", root=root)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"passprice: warning: 1 of 236 tensors have GGML type ids the gguf package does not know ({type_id}; first "
        f"'blk.0.ffn_down.weight', id {type_id}): their bytes are unknown, so every price of odd is refused "
        "(UnknownType) until it is requantized to a known type or a gguf that knows the id is installed"]
    shown = invoke("header", "odd", root=root)
    assert shown.exit_code == 0, shown.output
    assert "  tensors       236, 245,512,704 bytes (1 of an unknown type not counted)" in shown.stdout
    assert any(line.split() == [f"type#{type_id}", "1", "unknown"] for line in shown.stdout.splitlines())
    listed = invoke("checkpoints", root=root)
    assert listed.exit_code == 0, listed.output
    assert ("  odd: 1 tensor of a GGML type the gguf package does not know, their bytes not counted: every price of "
            "it is refused (UnknownType)") in listed.stdout.splitlines()
    rows = json.loads(invoke("checkpoints", "--json", root=root).stdout)["checkpoints"]
    assert [r.get("unknown_type_tensors") for r in rows if r["name"] == "odd"] == [1]
    assert all("unknown_type_tensors" not in r for r in rows if r["name"] != "odd")
    priced = invoke("price", "--checkpoint", "odd", "--card", "h200_sxm_141gb", "--json", root=root)
    assert priced.exit_code == 1, priced.output
    assert json.loads(priced.stdout)["refusal"] == "Step"
    assert priced.stderr == (
        "passprice: refused: Step: decode step refused (UnknownType): tensor 'blk.0.ffn_down.weight' has GGML type id "
        f"{type_id}, unknown to the gguf package: requantize it to a type the gguf package knows (Q4_K, Q8_0, F16 "
        "…), or install a gguf that knows this id and import it again\n")


def test_markdown_prose_of_many_unclosed_commands_is_one_pass() -> None:
    from passprice.tables import markdown_prose, markdown_text

    text = "`passprice a`b" * 80_000  # 1.12 MB: no span closes (each backtick is followed by a letter)
    assert markdown_prose(text) == markdown_text(text)
    # Spans as before: one starting at the backtick that ended a non-command, one holding a backtick, one after "``".
    assert markdown_prose("see `passprice`passprice x`, then `passprice a`b` and ``passprice y`.") == (
        "see \\`passprice`passprice x`, then ``passprice a`b`` and \\``passprice y`.")
