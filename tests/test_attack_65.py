"""Attack round 65 (session 37): hostile input on what session 36 built — ``review``'s per-fact ``alone`` re-pricing,
``lock --update``'s ``replaces``, ``sweep --checkpoint``/``--routing`` and sweep files, the architectures table's
window and expert keys, the file status records. Each escape found is kept here as its reproducer, in process:

- an invalid file's problems were unbounded: a 222 KB routing record of 30,000 derivation inputs (under its 256 KiB
  cap) printed 30,003 error lines in 4.3 s and 278 MB; a card of 3 × 3,900 inputs 11,705 lines in 2.0 s;
- a header whose ``context_length`` is negative (an int32 -5) was refused ``BadContexts: a class has position -2.5``
  (exit 1) by ``price``, ``best``, ``max-batch`` and ``simulate``, where ``kv`` said the file is bad (exit 2);
- an ``expert_count`` the expert stacks do not hold printed one line a stack (144 for gpt-oss-20b), and a header of
  236 tensors each with a dimension of 0 one line a tensor.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

from passprice import schema
from passprice.cli import cli
from passprice.registry import find_root

ROOT = find_root(Path(__file__).resolve().parent.parent)
CHECKPOINTS = ROOT.path / "registry" / "checkpoints"
H200 = "h200_sxm_141gb"


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(cli, ["--root", str(ROOT.path), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def entry(tmp: Path, source: str, name: str, edit: Any) -> str:
    """A copy of the registry entry ``source`` named ``name``, its text passed through ``edit``, outside the
    registry."""
    text = (CHECKPOINTS / f"{source}.toml").read_text(encoding="utf-8")
    text = re.sub(r'(?m)^name = "[^"]*"', f'name = "{name}"', text, count=1)
    edited = edit(text)
    assert edited != text
    path = tmp / f"{name}.toml"
    path.write_text(edited, encoding="utf-8")
    return str(path)


# --- an invalid document's problems, bounded -------------------------------------------------------------------------


def _routing() -> dict[str, Any]:
    with (ROOT.path / "facts" / "routing" / "qwen3-30b-a3b-measured.toml").open("rb") as f:
        return tomllib.load(f)


def test_a_table_of_more_keys_than_any_file_holds_is_one_line() -> None:
    # 5,000 derivation inputs `iN = {value = 1, unit = "1"}` (about 20,000 values: under MAX_EXPLAINED, so jsonschema
    # was asked, and it walked and named every one: 5,001 lines, 2 s; 30,000 `zN = 1`, 30,003 lines in 4.3 s).
    document = _routing()
    inputs = document["hot_experts"]["derivation"]["inputs"]
    inputs.update({f"i{i}": {"value": 1, "unit": "1"} for i in range(5000)})
    assert schema.problems(document, "routing") == [
        "hot_experts.derivation.inputs: a table of 5,002 keys (no passprice file holds one of more than 4,096, and "
        "this file does not validate): make it smaller"]


def test_more_than_200_problems_list_the_first_20_then_say_more() -> None:
    # 3 facts of 1,000 inputs `qN = 1` each: 3,003 problems under every size cap, each listed (a card of 3 x 3,900
    # printed 11,705 lines in 2.0 s, 123 MB; now 23 lines, 0.5 s). jsonschema is asked for at most 200.
    with (ROOT.path / "facts" / "cards" / f"{H200}.toml").open("rb") as f:
        document = tomllib.load(f)
    plain = [fact for table in document.values() if isinstance(table, dict) for fact in table.values()
             if isinstance(fact, dict) and "value" in fact and "derivation" not in fact]
    assert len(plain) >= 3
    for fact in plain[:3]:
        fact["derivation"] = {"formula": "x", "inputs": {f"q{i}": 1 for i in range(1000)}}
    found = schema.problems(document, "card")
    assert len(found) == schema.MAX_COMPILED_PROBLEMS + 1 == 21
    assert found[-1] == ("(top level): and more problems (over 200; the first 20 by key path of the first 200 found "
                         "are listed): make it smaller")
    assert all(line.endswith(("has too many properties", "1 is not of type 'object'")) for line in found[:-1])


def test_a_routing_record_of_5000_inputs_is_refused_in_one_line(tmp_path: Path) -> None:
    text = (ROOT.path / "facts" / "routing" / "qwen3-30b-a3b-measured.toml").read_text(encoding="utf-8")
    kept = re.findall(r"(?m)^derivation\.inputs\.(\w+) = (\{.*\})$", text)[:2]
    for key, _ in kept:
        text = re.sub(rf"(?m)^derivation\.inputs\.{key} = .*\n", "", text, count=1)
    many = ",".join([*(f"z{i}=1" for i in range(5000)), *(f"{key} = {value}" for key, value in kept)])
    path = tmp_path / "wide.toml"
    path.write_text(text.replace("derivation.formula", f"derivation.inputs = {{ {many} }}\nderivation.formula", 1),
                    encoding="utf-8")
    assert path.stat().st_size < 256 * 1024  # under the routing file's cap
    result = invoke("sweep", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--routing", str(path), "--cards", H200,
                    "--batches", "1")
    assert result.exit_code == 2
    # was 5,003 lines (30,000 inputs: 30,003 in 4.3 s, 278 MB); then the wide table's line (test_a_table_of_…
    # above); now its separators are past a routing record's before it is parsed (tests/test_bound111.py)
    assert result.stderr.splitlines() == [
        f"passprice: error: {path}: 10,041 separators (',', '=', '.', '[' and '{{' outside strings and comments), "
        "past the 4,096 a routing file may hold (the largest shipped holds 41; PASSPRICE_MAX_FILE_BYTES=BYTES raises "
        "it with the byte cap): not parsed"]


# --- a header's counts ---------------------------------------------------------------------------------------------


def test_a_negative_context_length_is_a_bad_file_in_every_pricing_command(tmp_path: Path) -> None:
    path = entry(tmp_path, "deepseek-r1-distill-qwen-7b-q4_k_m", "negctx", lambda t: re.sub(
        r'(?m)^"qwen2\.context_length" = .*$', '"qwen2.context_length" = { type = "int32", value = -5 }', t))
    said = [f"passprice: error: {path}: metadata qwen2.context_length: -5 is not a whole number >= 0"]
    for command in ("price", "best", "max-batch"):  # was "refused: BadContexts: … a class has position -2.5", exit 1
        result = invoke(command, "--checkpoint", path, "--card", H200)
        assert (result.exit_code, result.stderr.splitlines()) == (2, said), command
    result = invoke("simulate", "--checkpoint", path, "--card", H200, "--synthetic", "5")
    assert (result.exit_code, result.stderr.splitlines()) == (2, said)


def test_an_expert_count_no_stack_holds_is_one_line(tmp_path: Path) -> None:
    path = entry(tmp_path, "gpt-oss-20b-mxfp4", "e64", lambda t: t.replace(
        '"gpt-oss.expert_count" = { type = "uint32", value = 32 }',
        '"gpt-oss.expert_count" = { type = "uint64", value = 18446744073709551615 }'))
    result = invoke("price", "--checkpoint", path, "--card", H200)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [  # was 144 lines, one a stack
        f"passprice: error: {path}: tensor 'blk.0.ffn_down_exps.bias': dims [2880, 32] do not stack "
        "gpt-oss.expert_count = 18446744073709551615 experts (the last dimension is the expert), and 143 more "
        "expert stacks alike"]


@pytest.mark.parametrize(("command", "extra"), [("kv", ()), ("price", ("--card", H200))])
def test_a_header_s_problems_are_listed_to_20_then_counted(tmp_path: Path, command: str, extra: tuple[str, ...]
                                                           ) -> None:
    path = entry(tmp_path, "gemma3-270m-q4_k_m", "zero", lambda t: re.sub(r"dims = \[\d+", "dims = [0", t))
    result = invoke(command, *(() if command == "kv" else ("--checkpoint",)), path, *extra)
    assert result.exit_code == 2
    # was 236 lines, one a tensor; arch44 groups tensors bad alike into one line, and attack65's cap of 20 lines
    # (decode.MAX_HEADER_PROBLEMS) stays the bound for problems of different kinds.
    assert result.stderr.splitlines() == [
        f"passprice: error: {path}: tensor 'output_norm.weight': dimension 0 in [0] (a tensor holds an element), and "
        "235 more tensors alike"]


def test_header_problems_past_the_cap_are_counted_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import decode
    from passprice.gguf_records import GGUFHeader

    many = [f"f.gguf: problem {i}" for i in range(236)]
    monkeypatch.setattr(decode, "all_header_problems", lambda header: many)
    header = GGUFHeader(3, "little", {}, {}, (), 0, 32, 0, "", (), source="f.gguf")
    assert decode.header_problems(header) == [*many[:20], "f.gguf: and 216 more problems of this header, not listed"]
    assert decode.header_problems(attrs.evolve(header, source=""))[-1] == (
        "checkpoint: and 216 more problems of this header, not listed")


# --- lock --update -o a folder ---------------------------------------------------------------------------------------


def test_lock_update_into_a_folder_says_it_is_one(tmp_path: Path) -> None:
    folder = tmp_path / "x.lock.toml"
    folder.mkdir()
    result = invoke("lock", "--update", "-o", str(folder))
    assert result.exit_code == 2  # was "no lock to update (write one without --update)"
    assert result.stderr.splitlines() == [f"passprice: error: {folder}: is a folder; give a file to write"]


# --- a window past every position, in simulate's closed form --------------------------------------------------------


def test_simulate_prices_a_window_of_2_to_the_64(tmp_path: Path) -> None:
    # The closed form (passprice.stretch) computed with the window in int64: 2^64 - 1 raised OverflowError (a
    # traceback). A window past every position a serving reaches changes nothing (a run of 2^32 prints the same).
    key = '"gemma3.attention.sliding_window" = '
    path = entry(tmp_path, "gemma3-270m-q4_k_m", "w64", lambda t: re.sub(
        rf"(?m)^{re.escape(key)}.*$", f'{key}{{ type = "uint64", value = {2**64 - 1} }}', t))
    result = invoke("simulate", "--checkpoint", path, "--card", H200, "--synthetic", "2", "--kv-page", "16")
    assert result.exit_code == 0, result.output
    assert "every step's price rests on 8 facts" in result.stdout
