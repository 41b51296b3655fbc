"""Hostile input against today's main (issue 13), each escape found kept as its reproducer, built in the test.

- (1) ``synth`` structures a configuration's keys into :class:`passprice.synthetic.ModelConfig` after the schema
  validated it, but the schema named neither of the two Qwen-MoE keys the record holds (``decoder_sparse_step``,
  ``mlp_only_layers``: "other keys are allowed and ignored"). A step of ``"²"``, ``[]``, ``{}`` or ``[4096]`` ran into
  cattrs' ``ClassValidationError`` (an exception group printed as a traceback, exit 1), and ``true``, ``1.5`` or
  ``"1"`` read silently as a step of 1 (``int(True)``, ``int(1.5)``, ``int("1")``), a header built; an
  ``mlp_only_layers`` of ``true`` the same. Now the schema types both: one ``passprice: error:`` line naming the
  file and key, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import bad, invoke

#: A small Qwen3-MoE configuration that ``synth`` builds as given.
CONFIG = {
    "model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "vocab_size": 100, "intermediate_size": 128, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
}


def _config(tmp_path: Path, **changes: object) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"source": "https://example.com/qwen3-moe", "config": {**CONFIG, **changes}}),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("decoder_sparse_step", "²", "config.decoder_sparse_step: '²' is not of type 'integer'"),
        ("decoder_sparse_step", [], "config.decoder_sparse_step: [] is not of type 'integer'"),
        ("decoder_sparse_step", {}, "config.decoder_sparse_step: {} is not of type 'integer'"),
        ("decoder_sparse_step", [4096], "config.decoder_sparse_step: [4096] is not of type 'integer'"),
        ("decoder_sparse_step", True, "config.decoder_sparse_step: true is not of type 'integer'"),
        ("decoder_sparse_step", 1.5, "config.decoder_sparse_step: 1.5 is not of type 'integer'"),
        ("decoder_sparse_step", "1", "config.decoder_sparse_step: '1' is not of type 'integer'"),
        ("mlp_only_layers", True, "config.mlp_only_layers: true is not of type 'array'"),
        ("mlp_only_layers", 1.5, "config.mlp_only_layers: 1.5 is not of type 'array'"),
        ("mlp_only_layers", [-1], "config.mlp_only_layers.0: -1 is less than the minimum of 0"),
        ("mlp_only_layers", ["x"], "config.mlp_only_layers.0: 'x' is not of type 'integer'"),
    ],
)
def test_synth_refuses_a_mistyped_qwen_moe_key_by_name(tmp_path: Path, key: str, value: object, says: str) -> None:
    path = _config(tmp_path, **{key: value})
    out = tmp_path / "x.gguf"
    bad("synth", str(path), "-o", str(out), says=f"{path}: {says}")
    assert not out.exists()


def test_synth_still_builds_the_qwen_moe_keys_of_a_published_config(tmp_path: Path) -> None:
    for changes in ({"decoder_sparse_step": 1, "mlp_only_layers": []}, {"decoder_sparse_step": None}):
        out = tmp_path / "x.gguf"
        result = invoke("synth", str(_config(tmp_path, **changes)), "-o", str(out), "--force")
        assert result.exit_code == 0, result.output
        assert out.is_file()
    bad("synth", str(_config(tmp_path, decoder_sparse_step=2)), "-o", str(tmp_path / "y.gguf"),
        says="config: decoder_sparse_step 2: passprice builds a routed FFN in every block (a step of 1)")
