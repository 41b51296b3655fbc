"""A checkpoint's architecture (session 36, arch41): passprice prices only the architectures of one table
(``passprice.architectures.KNOWN``), refuses any other by name (``UnknownArchitecture``, exit 1, naming the header's
file, the name and the known list) in every pricing command, and refuses a known windowed one whose header lacks its
window (``MissingMetadata``, naming file and key). Before: a header naming ``foo`` whose tensors are llama's was priced
as llama (exit 0, no word), and a gemma3 header without ``gemma3.attention.sliding_window`` was priced with every
layer full (exit 0)."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from gguf import GGMLQuantizationType as T
from gguf import GGUFValueType as V

from cli_helpers import REPO, invoke, refused
from hybrids import write_header_only
from passprice import architectures
from passprice.architectures import KNOWN, markdown
from passprice.checkpoints import architecture_note
from passprice.decode import (
    WINDOW_PERIODS,
    Deployment,
    HeldClass,
    LayerKind,
    MissingMetadata,
    StageKind,
    UnknownArchitecture,
    decode_step,
    defaulted_window,
)
from passprice.sweep import COLUMNS
from synth import header

# A small dense GQA model: 4 query heads and 2 KV heads of width 16 (embedding 64), every tensor F16.
E, HEADS, KV_HEADS, FF, VOCAB = 64, 4, 2, 128, 128
HEAD_W = E // HEADS
#: KV-cache bytes one position adds in one attention layer at 2-byte elements: 2 KV heads × (16 + 16) × 2.
PER_POSITION = KV_HEADS * (HEAD_W + HEAD_W) * 2
assert PER_POSITION == 128


def _meta(blocks: int) -> dict[str, int]:
    return {"block_count": blocks, "context_length": 4096, "embedding_length": E, "feed_forward_length": FF,
            "attention.head_count": HEADS, "attention.head_count_kv": KV_HEADS}


def _tensors(blocks: int, qk_norm: bool = False) -> list[tuple[str, tuple[int, ...], str]]:
    out: list[tuple[str, tuple[int, ...], str]] = [("token_embd.weight", (E, VOCAB), "F16")]
    for i in range(blocks):
        out += [(f"blk.{i}.attn_norm.weight", (E,), "F32"), (f"blk.{i}.attn_q.weight", (E, E), "F16"),
                (f"blk.{i}.attn_k.weight", (E, KV_HEADS * HEAD_W), "F16"),
                (f"blk.{i}.attn_v.weight", (E, KV_HEADS * HEAD_W), "F16"),
                (f"blk.{i}.attn_output.weight", (E, E), "F16"), (f"blk.{i}.ffn_norm.weight", (E,), "F32"),
                (f"blk.{i}.ffn_gate.weight", (E, FF), "F16"), (f"blk.{i}.ffn_up.weight", (E, FF), "F16"),
                (f"blk.{i}.ffn_down.weight", (FF, E), "F16")]
        if qk_norm:  # qwen3: an RMS norm over each head's query and key
            out += [(f"blk.{i}.attn_q_norm.weight", (HEAD_W,), "F32"),
                    (f"blk.{i}.attn_k_norm.weight", (HEAD_W,), "F32")]
    return [*out, ("output_norm.weight", (E,), "F32"), ("output.weight", (E, VOCAB), "F16")]


def _file(path: Path, arch: str, blocks: int = 2, window: int | None = None) -> Path:
    """A header-only GGUF file of the small model under ``general.architecture`` ``arch``."""
    meta = [(f"{arch}.{k}", v, V.UINT32) for k, v in _meta(blocks).items()]
    if window is not None:
        meta.append((f"{arch}.attention.sliding_window", window, V.UINT32))
    ty = {"F16": T.F16, "F32": T.F32}
    return write_header_only(path, arch, meta, [(n, d, ty[t]) for n, d, t in _tensors(blocks)])


def _kv(arch: str, blocks: int, ctx: int, **meta: int) -> tuple[float, list[LayerKind]]:
    step = decode_step(header({**_meta(blocks), **meta}, _tensors(blocks, arch == "qwen3"), arch),
                       Deployment(ctx=ctx))
    return step.held_bytes(HeldClass.KV_CACHE), [layer.kind for layer in step.layers]


# --- the table ---------------------------------------------------------------------------------------------------


def test_the_table_gives_the_window_periods_that_were_priced() -> None:
    assert dict(WINDOW_PERIODS) == {"gemma3": 6, "gemma2": 2, "cohere2": 4, "gpt-oss": 2}
    # gemma2's window is optional in llama.cpp (default 4,096): every other windowed architecture needs its key.
    assert {a.name for a in KNOWN.values() if "attention.sliding_window" in a.needs} == set(WINDOW_PERIODS) - {
        "gemma2"}
    assert {a.name: a.window_default for a in KNOWN.values() if a.window_default is not None} == {"gemma2": 4096}
    assert list(KNOWN) == ["llama", "qwen2", "qwen3", "qwen3moe", "qwen3next", "qwen35", "deepseek2", "gemma2",
                           "gemma3", "cohere2", "gpt-oss"]
    assert architectures.ALIASES == {}  # none cited yet: none guessed


def test_every_known_name_is_llama_cpps_and_every_registered_or_synthesized_checkpoint_is_known() -> None:
    from gguf.constants import MODEL_ARCH_NAMES

    from passprice.synthetic import ARCHITECTURES

    assert set(KNOWN) <= set(MODEL_ARCH_NAMES.values())
    assert set(ARCHITECTURES.values()) <= set(KNOWN)
    pattern = re.compile(r'^"general\.architecture" = \{ type = "string", value = "([^"]+)" \}$', re.M)
    found = {path.stem: pattern.findall(path.read_text(encoding="utf-8"))
             for path in (REPO / "registry" / "checkpoints").glob("*.toml")}
    assert len(found) == 21 and all(len(names) == 1 for names in found.values())
    assert {names[0] for names in found.values()} == {
        "llama", "qwen2", "qwen3moe", "qwen3next", "qwen35", "deepseek2", "gemma3", "gpt-oss"}


def test_the_readme_and_design_list_the_table() -> None:
    block = (f"<!-- architectures: begin (python docs/make.py writes it from passprice.architectures) -->\n"
             f"{markdown()}\n<!-- architectures: end -->")
    for path in (REPO / "README.md", REPO / "docs" / "DESIGN.md"):
        assert block in path.read_text(encoding="utf-8"), f"{path}: run python docs/make.py"
    assert "| `cohere2` | Command R7B, Command A | three windowed layers then one global | period 4 | " \
           "`cohere2.attention.sliding_window` | tests/test_architectures.py |" in markdown()


# --- the rules of the two known architectures this file pins ------------------------------------------------------


def test_cohere2_windows_three_layers_of_four() -> None:
    # 4 blocks, window 64, context 1,000: blocks 0-2 hold 64 positions, block 3 all 1,000.
    kv, kinds = _kv("cohere2", 4, 1000, **{"attention.sliding_window": 64})
    assert kinds == [LayerKind.WINDOWED] * 3 + [LayerKind.ATTENTION]
    assert kv == 3 * PER_POSITION * 64 + PER_POSITION * 1000 == 152_576
    # llama has no window (llama.cpp's llama attends to every position) whatever the key says.
    assert _kv("llama", 4, 1000, **{"attention.sliding_window": 64}) == (4 * PER_POSITION * 1000,
                                                                         [LayerKind.ATTENTION] * 4)


def test_qwen3_is_dense_gqa_with_its_query_and_key_norms_as_norms() -> None:
    kv, kinds = _kv("qwen3", 2, 1000)
    assert (kv, kinds) == (2 * PER_POSITION * 1000, [LayerKind.ATTENTION] * 2) and kv == 256_000
    step = decode_step(header(_meta(2), _tensors(2, qk_norm=True), "qwen3"), Deployment(ctx=1000))
    norms = [s for s in step.stages if s.kind is StageKind.NORM and s.layer == 0]
    assert sorted(n for s in norms for n in s.tensors) == [
        "blk.0.attn_k_norm.weight", "blk.0.attn_norm.weight", "blk.0.attn_q_norm.weight", "blk.0.ffn_norm.weight"]
    assert sum(s.weight_bytes for s in norms) == (E + HEAD_W + HEAD_W + E) * 4 == 640


# --- refusals -----------------------------------------------------------------------------------------------------


def test_an_unknown_architecture_is_refused_by_name_and_a_windowed_one_without_its_window_names_file_and_key() -> None:
    foo = header(_meta(2), _tensors(2), "foo")
    with pytest.raises(UnknownArchitecture) as e:
        decode_step(foo, Deployment())
    assert e.value.fields() == {"file": "synthetic", "architecture": "foo", "known": list(KNOWN)}
    assert str(e.value).startswith(
        "synthetic: general.architecture 'foo' is no architecture passprice prices (it prices llama, qwen2, qwen3, "
        "qwen3moe, qwen3next, qwen35, deepseek2, gemma2, gemma3, cohere2, gpt-oss): ")
    assert architecture_note(foo, "my-foo") == f"every price of my-foo is refused (UnknownArchitecture): {e.value}"
    # The same tensors under llama are priced.
    assert decode_step(header(_meta(2), _tensors(2), "llama"), Deployment(ctx=10)).held_bytes(
        HeldClass.KV_CACHE) == 2 * PER_POSITION * 10
    for arch, period in WINDOW_PERIODS.items():
        if arch == "gemma2":  # priced at llama.cpp's default window: test_gemma2_without_its_window_...
            continue
        with pytest.raises(MissingMetadata) as m:
            decode_step(header(_meta(2), _tensors(2), arch), Deployment())
        assert m.value.fields() == {"keys": [f"{arch}.attention.sliding_window"], "why": m.value.why,
                                    "file": "synthetic"}
        assert str(m.value).startswith(f"synthetic: missing metadata {arch}.attention.sliding_window ({arch} slides "
                                       f"a window over {period - 1} of every {period} layers")
    assert architecture_note(header(_meta(2), _tensors(2), "gemma3"), "g").startswith(  # type: ignore[union-attr]
        "every price of g is refused (MissingMetadata): synthetic: missing metadata gemma3.attention.sliding_window")
    # With its window, gemma3 of 2 blocks windows both (five of every six, starting windowed).
    assert _kv("gemma3", 2, 1000, **{"attention.sliding_window": 64})[0] == 2 * PER_POSITION * 64


@pytest.mark.parametrize("args", [
    ("price", "--card", "h200_sxm_141gb"),
    ("best", "--card", "h200_sxm_141gb"),
    ("max-batch", "--card", "h200_sxm_141gb"),
    ("kv",),
    ("roofline", "h200_sxm_141gb"),
])  # fmt: skip
def test_every_pricing_command_refuses_a_header_naming_foo(tmp_path: Path, args: tuple[str, ...]) -> None:
    path = _file(tmp_path / "foo.gguf", "foo")
    where = ("--checkpoint", str(path)) if args[0] != "kv" else (str(path),)
    out = refused(*args, *where, name="Step")
    assert out["step"] == {"refusal": "UnknownArchitecture", "file": str(path), "architecture": "foo",
                           "known": list(KNOWN)}


def test_gemma3_without_its_window_is_refused_naming_the_file_and_key(tmp_path: Path) -> None:
    path = _file(tmp_path / "g.gguf", "gemma3")
    out = refused("price", "--checkpoint", str(path), "--card", "h200_sxm_141gb", name="Step")
    assert out["step"]["refusal"] == "MissingMetadata"
    assert (out["step"]["keys"], out["step"]["file"]) == (["gemma3.attention.sliding_window"], str(path))
    assert invoke("price", "--checkpoint", str(_file(tmp_path / "w.gguf", "gemma3", window=64)), "--card",
                  "h200_sxm_141gb").exit_code == 0


def test_gemma2_without_its_window_is_priced_at_llama_cpps_default_of_4096_and_says_so(tmp_path: Path) -> None:
    # arch41 refused it (MissingMetadata); llama.cpp (src/llama-model.cpp at a5410f046c, LLM_ARCH_GEMMA2) sets
    # n_swa = 4096 and reads the key optional, so it runs such a file with a window of 4,096.
    # 2 blocks, period 2: block 0 windowed (4,096 of the 10,000 positions), block 1 global (all 10,000).
    kv, kinds = _kv("gemma2", 2, 10_000)
    assert kinds == [LayerKind.WINDOWED, LayerKind.ATTENTION]
    assert kv == PER_POSITION * 4096 + PER_POSITION * 10_000 == 1_804_288
    assert _kv("gemma2", 2, 10_000, **{"attention.sliding_window": 4096}) == (kv, kinds)
    assert _kv("gemma2", 2, 10_000, **{"attention.sliding_window": 64})[0] == PER_POSITION * (64 + 10_000)
    bare = header(_meta(2), _tensors(2), "gemma2")
    d = defaulted_window(bare)
    assert d is not None and (d.key, d.window) == ("gemma2.attention.sliding_window", 4096)
    assert "src/llama-model.cpp at a5410f046c" in d.source and "hparams.n_swa = 4096" in d.source
    assert architecture_note(bare, "g") is None  # import no longer warns every price is refused
    # Named in the header, or an architecture whose key llama.cpp requires: nothing defaulted.
    assert defaulted_window(header({**_meta(2), "attention.sliding_window": 64}, _tensors(2), "gemma2")) is None
    for arch in ("gemma3", "cohere2", "gpt-oss", "llama"):
        assert defaulted_window(header(_meta(2), _tensors(2), arch)) is None
    # The price says so: a `defaulted` line (key, value, citation) and --json's `defaulted`; none with the key.
    path = _file(tmp_path / "g2.gguf", "gemma2")
    args = ("--checkpoint", str(path), "--card", "h200_sxm_141gb")
    priced = {}
    for command in ("price", "best", "max-batch"):
        priced[command] = out = json.loads(invoke(command, *args, "--json").stdout)
        assert out["defaulted"] == [{"key": "gemma2.attention.sliding_window", "value": 4096, "source": d.source}]
    assert json.loads(invoke("kv", str(path), "--json").stdout)["defaulted"] == priced["price"]["defaulted"]
    text = invoke("price", *args).stdout
    assert ("\n  defaulted     gemma2.attention.sliding_window 4,096 positions: not in the header, so llama.cpp's "
            "default is priced (llama.cpp src/llama-model.cpp at a5410f046c (") in text
    given = ("--checkpoint", str(_file(tmp_path / "w.gguf", "gemma2", window=4096)), "--card", "h200_sxm_141gb")
    with_key = json.loads(invoke("price", *given, "--json").stdout)
    assert "defaulted" not in with_key and "defaulted" not in invoke("price", *given).stdout
    assert with_key["tokens_per_s"] == priced["price"]["tokens_per_s"]  # the same price as the key at 4,096


def test_import_records_an_unknown_architecture_and_warns_and_sweep_refuses_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for folder in ("registry/checkpoints", "registry/servings", "locks"):
        (root / folder).mkdir(parents=True)
    for folder in ("facts/cards", "facts/stacks", "sources"):
        shutil.copytree(REPO / folder, root / folder)
    path = _file(tmp_path / "foo.gguf", "foo")
    r = invoke("import", str(path), "--name", "foo", root=root)
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith(f"passprice: warning: every price of foo is refused (UnknownArchitecture): {path}: "
                               "general.architecture 'foo' is no architecture passprice prices")
    assert invoke("header", "foo", root=root).exit_code == 0
    out = refused("price", "--checkpoint", "foo", "--card", "a40", root=root, name="Step")
    assert out["step"]["file"] == str(root / "registry" / "checkpoints" / "foo.toml")
    assert invoke("new-serving", "s", "--checkpoint", "foo", "--card", "a40", root=root).exit_code == 0
    r = invoke("sweep", "s", "--batches", "1", "--json", root=root)
    assert r.exit_code == 1 and [row["refusal"] for row in json.loads(r.stdout)] == ["Step"]
    # arch42: the row says which refusal of the step stopped it and why, as price --json does (it said Step alone).
    row = json.loads(r.stdout)[0]
    assert (row["step"], row["message"]) == (out["step"], out["message"])
    said = "decode step refused (UnknownArchitecture): "  # walk48: the reason named on the line
    assert row["step"]["refusal"] == "UnknownArchitecture" and row["message"].startswith(said)
    r = invoke("sweep", "s", "--batches", "1", root=root)
    cells = next(csv.DictReader(io.StringIO(r.stdout[r.stdout.index("card,"):])))
    assert r.exit_code == 1 and list(cells) == list(COLUMNS)  # the same columns
    assert cells["refusal"] == f"Step: UnknownArchitecture: {out['message'].removeprefix(said)}"
    assert cells["refusal"].startswith(f"Step: UnknownArchitecture: {out['step']['file']}: general.architecture 'foo'")
    assert "no row of the sweep has a price" in r.stderr and "Step: UnknownArchitecture: " in r.stderr
    r = invoke("sweep", "s", "--batches", "1", "--stack", "llamacpp-cuda-2405", "--json", root=root)
    row = json.loads(r.stdout)[0]  # a stack's rows are written a row at a time: the same keys
    assert (row["refusal"], row["step"], row["message"], row["expected_refusal"]) == (
        "Step", out["step"], out["message"], "Step")
    from passprice.check import _duplicate_checkpoints  # the warnings check gives of the checkpoint entries
    from passprice.registry import find_root

    assert [line[:56] for line in _duplicate_checkpoints(find_root(root))] == [
        "every price of foo is refused (UnknownArchitecture): /tm"]


# --- a window of 0 (arch42) -------------------------------------------------------------------------------------


def test_a_windowed_architecture_with_a_window_of_0_is_bad_input_naming_file_and_key(tmp_path: Path) -> None:
    # It was priced as no window at all (every layer global), exit 0; llama.cpp's versions disagree on what 0 means
    # (decode.ZERO_WINDOW_SOURCE), so it is refused as bad input naming the file and the key.
    from passprice.decode import ZERO_WINDOW_SOURCE, header_problems
    from passprice.errors import InputError

    assert "01b77b5793" in ZERO_WINDOW_SOURCE and "a5410f046c" in ZERO_WINDOW_SOURCE
    for arch, period in WINDOW_PERIODS.items():
        zero = header({**_meta(2), "attention.sliding_window": 0}, _tensors(2), arch)
        assert header_problems(zero) == [
            f"synthetic: metadata {arch}.attention.sliding_window: 0 ({arch} slides a window over {period - 1} of "
            f"every {period} layers, and a window of 0 positions is none llama.cpp agrees on: some versions mask "
            "every position of a windowed layer, the token's own included, a later one reads gemma3's 0 as no "
            "window; give the window the model's config.json gives (sliding_window))"]
        with pytest.raises(InputError):
            decode_step(zero, Deployment(ctx=10))
    # An architecture without windows reads no window whatever the key says, 0 included.
    assert _kv("llama", 2, 10, **{"attention.sliding_window": 0}) == (2 * PER_POSITION * 10, [LayerKind.ATTENTION] * 2)
    path = _file(tmp_path / "g.gguf", "gemma3", window=0)
    r = invoke("price", "--checkpoint", str(path), "--card", "h200_sxm_141gb")
    assert r.exit_code == 2, r.output
    assert f"{path}: metadata gemma3.attention.sliding_window: 0 (gemma3 slides a window over 5 of every 6" in r.stderr
    assert "Traceback" not in r.output


# --- features an architecture has none of (arch42) ----------------------------------------------------------------


def test_a_tensor_of_a_feature_its_architecture_lacks_is_refused_naming_the_tensor_and_the_architecture() -> None:
    # A llama header holding attn_kv_a_mqa was priced with latent attention, exit 0; llama.cpp loads a llama file by
    # llama's tensors and refuses one holding a tensor llama does not read.
    from passprice.decode import TensorNotInArchitecture

    assert {a.name: sorted(a.features) for a in KNOWN.values() if a.features} == {
        "llama": ["routed experts"], "qwen3moe": ["routed experts"],
        "qwen3next": ["recurrence", "routed experts"], "qwen35": ["recurrence"],
        "deepseek2": ["latent attention", "routed experts"], "gpt-oss": ["routed experts"]}
    cases = [
        ("llama", "blk.1.attn_kv_a_mqa.weight", "latent attention", ["deepseek2"]),
        ("qwen3", "blk.0.ffn_up_exps.weight", "routed experts",
         ["llama", "qwen3moe", "qwen3next", "deepseek2", "gpt-oss"]),
        ("gemma3", "blk.0.ssm_conv1d.weight", "recurrence", ["qwen3next", "qwen35"]),
    ]
    for arch, tensor, feature, known in cases:
        tensors = [*_tensors(2), (tensor, (E, E, 4) if "exps" in tensor else (E, E), "F16")]
        meta = {**_meta(2), "attention.sliding_window": 64, "expert_count": 4, "expert_used_count": 1}
        with pytest.raises(TensorNotInArchitecture) as e:
            decode_step(header(meta, tensors, arch), Deployment(ctx=10))
        assert e.value.fields() == {"file": "synthetic", "tensor": tensor, "architecture": arch, "feature": feature,
                                    "known": known}
        assert str(e.value).startswith(f"synthetic: tensor {tensor!r} is {feature}, which the {arch} architecture "
                                       f"has none of (llama.cpp loads a {arch} file by {arch}'s tensors")
