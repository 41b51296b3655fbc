"""Attack round 64 (session 36): hostile input on what landed that day — ``sweep --checkpoint``/``--routing``, the
file status records (``passprice.filestamps``), the architectures table and ``lock --update``. Each escape found is
kept here as its reproducer, in process:

- a mixture of experts whose header does not read as one (``expert_count`` 10^6 beside stacks of 128, or 0 beside
  stacks and 8 a token) was refused ``Routed`` or ``BadRouting`` (exit 1, advising a routing record that then said
  exit 2) by ``price``/``sweep``/``best`` with a routing, where ``kv`` and ``check`` say the file is bad (exit 2);
- ``expert_count = 0`` beside expert stacks read "missing metadata …expert_count", a key the header holds, and
  one without ``expert_count`` under ``--routing`` read "BadRouting: the checkpoint is dense";
- one checkpoint whose ``general.architecture`` held 10,000 characters padded every row of ``checkpoints`` to
  10,094 characters; ``header`` showed an empty or non-string architecture as "missing: no … key".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from gguf import GGUFValueType as V

from gguf_bytes import Meta, Tensor, encode
from passprice import ggml
from passprice.cli import cli
from passprice.registry import find_root
from passprice.tables import cut

ROOT = find_root(Path(__file__).resolve().parent.parent)
QWEN = ROOT.path / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml"
H200 = "h200_sxm_141gb"
COUNT = '"qwen3moe.expert_count" = { type = "uint32", value = 128 }'
USED = '"qwen3moe.expert_used_count" = { type = "uint32", value = 8 }'


def invoke(*args: str, root: Path = ROOT.path) -> Any:
    return CliRunner().invoke(cli, ["--root", str(root), *args])


def entry(tmp: Path, name: str, old: str, new: str) -> str:
    """A copy of qwen3-30b-a3b-q4_k_m's entry with ``old`` replaced by ``new``, kept outside the registry."""
    text = QWEN.read_text(encoding="utf-8")
    assert old in text
    path = tmp / f"{name}.toml"
    path.write_text(text.replace(old, new).replace('name = "qwen3-30b-a3b-q4_k_m"', f'name = "{name}"'),
                    encoding="utf-8")
    return str(path)


def test_a_million_experts_beside_stacks_of_128_is_a_bad_file_whatever_the_routing(tmp_path: Path) -> None:
    path = entry(tmp_path, "e1m", COUNT, COUNT.replace("128", "1000000"))
    said = (f"passprice: error: {path}: tensor 'blk.0.ffn_down_exps.weight': dims [768, 2048, 128] do not stack "
            "qwen3moe.expert_count = 1000000 experts (the last dimension is the expert); nor do 143 more expert "
            "tensors ('blk.0.ffn_gate_exps.weight' … 'blk.47.ffn_up_exps.weight')")  # attack65: was 144 lines
    for args in (["price", "--checkpoint", path, "--card", H200],  # was Routed (exit 1), advising uniform
                 ["price", "--checkpoint", path, "--card", H200, "--routing", "qwen3-30b-a3b-measured"],  # BadRouting
                 ["sweep", "--checkpoint", path, "--routing", "qwen3-30b-a3b-measured", "--cards", H200,
                  "--batches", "1"]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.splitlines()[0] == said, args


def test_zero_experts_beside_stacks_is_refused_naming_the_key_it_holds(tmp_path: Path) -> None:
    path = entry(tmp_path, "e0", COUNT, COUNT.replace("128", "0"))
    # with 8 a token, "more than expert_count"; without, the new line (was "missing metadata …expert_count")
    lone = entry(tmp_path, "e0lone", f"{COUNT}\n{USED}\n", COUNT.replace("128", "0") + "\n")
    zero = "qwen3moe.expert_count: 0 experts, but the header holds expert stacks ('blk.0.ffn_down_exps.weight' …): " \
        "a mixture of experts has at least one"
    for where, said in ((path, [zero, "qwen3moe.expert_used_count: 8 experts a token, more than expert_count"]),
                        (lone, [zero])):
        for extra in ([], ["--routing", "uniform"]):  # was BadRouting: "the checkpoint is dense (no expert_count)"
            result = invoke("price", "--checkpoint", where, "--card", H200, *extra)
            assert result.exit_code == 2, result.output
            assert result.stderr.splitlines() == [f"passprice: error: {where}: metadata {s}" for s in said]


def test_stacks_without_expert_count_under_a_routing_are_refused_by_the_missing_key_not_as_dense(
    tmp_path: Path
) -> None:
    path = entry(tmp_path, "nocount", f"{COUNT}\n", "")
    for extra in ([], ["--routing", "uniform"]):
        result = invoke("price", "--checkpoint", path, "--card", H200, *extra)
        assert result.exit_code == 1
        assert result.stderr.startswith("passprice: refused: Step: decode step refused (MissingMetadata): missing "
                                        "metadata qwen3moe.expert_count (a mixture of experts needs")
    # a dense checkpoint under a routing is still BadRouting, saying why
    result = invoke("price", "--checkpoint", "llama2-7b-f16", "--card", H200, "--routing", "uniform")
    assert result.exit_code == 1
    assert "BadRouting: routing uniform does not fit this checkpoint: the checkpoint is dense (no expert_count)" in (
        result.stderr)


def _header(arch: Any, kind: V = V.STRING) -> bytes:
    """A small dense header (1 block) under ``general.architecture`` ``arch``, its keys under that prefix."""
    f16, f32 = ggml.by_name("F16").id, ggml.by_name("F32").id
    prefix = arch if isinstance(arch, str) else "x"
    shape = {"block_count": 1, "context_length": 4096, "embedding_length": 64, "feed_forward_length": 128,
             "attention.head_count": 4, "attention.head_count_kv": 2}
    meta = [Meta("general.architecture", kind, arch), *(Meta(f"{prefix}.{k}", V.UINT32, v) for k, v in shape.items())]
    tensors = [Tensor("token_embd.weight", (64, 100), f16), Tensor("output.weight", (64, 100), f16)]
    for name, dims, ty in (("attn_norm", (64,), f32), ("attn_q", (64, 64), f16), ("attn_k", (64, 32), f16),
                           ("attn_v", (64, 32), f16), ("attn_output", (64, 64), f16), ("ffn_norm", (64,), f32),
                           ("ffn_gate", (64, 128), f16), ("ffn_up", (64, 128), f16), ("ffn_down", (128, 64), f16)):
        tensors.append(Tensor(f"blk.0.{name}.weight", dims, ty))
    return encode(meta, tensors)


def test_a_10kb_architecture_is_cut_in_the_checkpoints_table(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for folder in ("registry/checkpoints", "registry/servings", "locks", "facts/cards"):
        (root / folder).mkdir(parents=True)
    for name, arch in (("long", "a" * 10_000), ("ctl", "ll\x1b[31mama\x07")):
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(_header(arch))
        assert invoke("import", str(path), "--name", name, root=root).exit_code == 0
    result = invoke("checkpoints", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if line.startswith("long "))
    assert len(row) < 140  # was 10,094 characters, and every row as wide
    assert f"{'a' * 19}…{'a' * 19} (10,000 characters)" in row
    assert "\x1b" not in result.stdout and "'ll\\x1b[31mama\\x07'" in result.stdout
    assert cut("abc") == "abc" and cut("x" * 41) == f"{'x' * 19}…{'x' * 19} (41 characters)"


@pytest.mark.parametrize(("arch", "kind", "shown"), [
    ("", V.STRING, "'' (empty)"),
    (7, V.UINT32, "(not a string: 7)"),
])  # fmt: skip
def test_header_shows_an_empty_or_non_string_architecture_as_what_it_is(
    tmp_path: Path, arch: Any, kind: V, shown: str
) -> None:
    path = tmp_path / "h.gguf"
    path.write_bytes(_header(arch, kind))
    result = invoke("header", str(path))
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if line.startswith("  architecture"))
    assert re.match(rf"  architecture  {re.escape(shown)}   GGUF v3", line), line  # was "(missing: no … key)"


# --- lock --update on a re-digested lock whose old price is at the schema's edges ----------------------------------


def test_the_price_replaced_is_finite_and_readable_at_the_schemas_edges() -> None:
    from passprice.locks import replaced, replaced_lines

    new = {"tokens_per_s": 11733.7}
    # 5e-324 (the schema's minimum is 0): relative_change was inf, and `lock --update --json` exited 2 after the lock
    # was written; the text read "0.0 -> 11,733.7 tokens/s (+inf %)".
    assert replaced({"tokens_per_s": 5e-324}, new)["relative_change"] is None
    assert replaced_lines({"tokens_per_s": 5e-324}, new) == ["4.94066e-324 -> 11,733.7 tokens/s (a ratio past a float)"]
    # 1.7e308 (the schema's maximum): 309 digits were printed
    assert replaced_lines({"tokens_per_s": 1.7e308}, new) == ["1.7e+308 -> 11,733.7 tokens/s (-100 %)"]
    assert replaced({"tokens_per_s": 1.7e308}, new)["relative_change"] == -1.0
    assert replaced_lines({"tokens_per_s": 0.0}, new) == ["0.0 -> 11,733.7 tokens/s (from 0)"]
    assert replaced_lines({"tokens_per_s": 11733.0}, new) == ["11,733.0 -> 11,733.7 tokens/s (+0.005966 %)"]
    assert replaced_lines({"tokens_per_s": 0.04}, {"tokens_per_s": 0.04}) == ["0.04 tokens/s, unchanged"]


# --- the file status records (passprice.filestamps) under a clock set back -----------------------------------------


def test_records_written_at_a_later_clock_are_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock set back (NTP stepping it, a VM restored) lets the kernel stamp a change with a time it stamped before:
    on a whole-second file system a same-size edit in the repeated second repeats a recorded status, and its stale
    digest was vouched. Records written at a clock later than the reader's are dropped: the file is hashed."""
    import time

    from passprice import filestamps
    from test_racy_42 import card_copy
    from test_racy_42 import run as read_once

    filestamps.flush()
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    card = card_copy(tmp_path)
    size = card.stat().st_size
    try:
        monkeypatch.setattr(filestamps, "_clock", lambda: time.time_ns() + 3600 * 10**9)  # an hour ahead
        assert read_once(monkeypatch, card)[1] == [size]  # hashed, recorded at the clock an hour ahead
        assert read_once(monkeypatch, card)[1] == []  # that clock still: named by its record
        monkeypatch.setattr(filestamps, "_clock", lambda: time.time_ns() + 10 * 10**9)  # set back 59 min 50 s
        assert read_once(monkeypatch, card)[1] == [size]  # was [] (the record trusted)
        assert read_once(monkeypatch, card)[1] == []  # recorded afresh at this clock
    finally:
        filestamps.flush()


def test_a_10kb_architecture_is_cut_in_the_refusal_line_and_whole_in_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "long.gguf"
    path.write_bytes(_header("a" * 10_000))
    result = invoke("price", "--checkpoint", str(path), "--card", H200)
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert len(line) - len(str(path)) < 700  # was 10,626 (the temporary path aside, its length the machine's)
    assert (f"{path}: general.architecture '{'a' * 24}'…'{'a' * 24}' (10,000 characters) is no architecture "
            "passprice prices") in line
    result = invoke("price", "--checkpoint", str(path), "--card", H200, "--json")
    assert result.exit_code == 1 and '"architecture": "' + "a" * 10_000 + '"' in result.stdout


# --- sweep --checkpoint PATH: a path's characters in the CSV --------------------------------------------------------


@pytest.mark.parametrize("name", ["a\nb.gguf", "a\rb.gguf"])
def test_a_checkpoint_path_with_a_line_break_stays_in_its_csv_cell(tmp_path: Path, name: str) -> None:
    import csv
    import io

    from passprice.sweep import COLUMNS, write_rows

    path = tmp_path / name
    path.write_bytes(_header("llama"))
    result = invoke("sweep", "--checkpoint", str(path), "--cards", f"{H200},mi300x", "--batches", "1,2")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout, newline="")))
    assert len(rows) == 4 and {r["checkpoint"] for r in rows} == {str(path)}  # the row was split at the break
    assert f'"{path}"' in result.stdout
    out = io.StringIO()  # the reference writer quotes it the same way (\r was left bare)
    assert write_rows(iter([{"card": H200, "checkpoint": str(path)}]), "csv", out) == 1
    assert out.getvalue().splitlines(keepends=False)[0] == ",".join(COLUMNS)
    assert [r["checkpoint"] for r in csv.DictReader(io.StringIO(out.getvalue(), newline=""))] == [str(path)]
