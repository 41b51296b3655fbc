"""Float metadata is bounded in a checkpoint entry's schema (a float32 within its range, every float finite), and a
NaN or an infinity a real GGUF header holds is shown honestly: as the string "nan", "inf" or "-inf" in `header
--json` and in the entry `import` writes (JSON has no such number; TOML's own nan/inf in an entry is refused as a
typo). Before: an entry's float64 inf, float32 1e39 or nan passed `check` ("all holds"), and `header --json` of it,
or of a GGUF holding a NaN, exited 2 blaming "a bandwidth, rate or share so small…"."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFValueType, GGUFWriter

from cli_helpers import REPO, bad, invoke


def _nan_header(path: Path) -> Path:
    w = GGUFWriter(path, "llama")
    # A token-row's width, which check holds every entry to as checkpoints does since session 26 (issue 13's
    # leftovers: this entry, without it, passed check while checkpoints refused it).
    w.add_uint32("llama.embedding_length", 4)
    w.add_float32("llama.rope.freq_base", math.nan)
    w.add_float64("odd.inf", math.inf)
    w.add_key_value("odd.floats", [1.5, -math.inf, math.nan], GGUFValueType.ARRAY, sub_type=GGUFValueType.FLOAT32)
    w.add_tensor("x", np.zeros((4,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _registry(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    assert invoke("init", str(root)).exit_code == 0
    return root


def test_a_nan_in_a_real_header_is_shown_and_imported(tmp_path: Path) -> None:
    header = _nan_header(tmp_path / "nan.gguf")
    shown = invoke("header", str(header), "--json")
    assert shown.exit_code == 0, shown.output
    metadata = json.loads(shown.stdout)["metadata"]
    assert metadata["llama.rope.freq_base"] == "nan"
    assert metadata["odd.inf"] == "inf"
    assert metadata["odd.floats"] == [1.5, "-inf", "nan"]
    root = _registry(tmp_path)
    assert invoke("import", str(header), "--name", "nan", root=root).exit_code == 0
    text = (root / "registry/checkpoints/nan.toml").read_text(encoding="utf-8")
    assert '"llama.rope.freq_base" = { type = "float32", value = "nan" }' in text
    assert '"odd.inf" = { type = "float64", value = "inf" }' in text
    assert '"odd.floats" = { type = "array[float32]", value = [1.5, "-inf", "nan"] }' in text
    entry = invoke("header", "nan", "--json", root=root)
    assert entry.exit_code == 0, entry.output
    assert json.loads(entry.stdout)["metadata"] == metadata
    text_form = invoke("header", "nan", "--metadata", root=root)
    assert text_form.exit_code == 0
    rows = [" ".join(line.split()) for line in text_form.stdout.splitlines()]  # columns as wide as the longest key
    assert "llama.rope.freq_base float32 nan" in rows
    assert "odd.floats array[float32] [1.5, -inf, nan]" in rows
    checked = invoke("check", root=root)
    assert checked.exit_code == 0 and "all holds" in checked.stdout, checked.output


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('"odd.f64" = { type = "float64", value = inf }',
         'metadata."odd.f64".value: must be a finite number, not inf (a NaN or an infinity a header holds is written '
         '"nan", "inf" or "-inf")'),
        ('"odd.f32" = { type = "float32", value = 1e39 }',
         'metadata."odd.f32".value: 1e39 is past float32\'s range (±3.4028234663852886e+38)'),
        ('"odd.f32" = { type = "float32", value = -1e39 }',
         'metadata."odd.f32".value: -1e39 is past float32\'s range (±3.4028234663852886e+38)'),
        ('"odd.f32" = { type = "float32", value = nan }', 'metadata."odd.f32".value: must be a finite number, not nan'),
        ('"odd.f32" = { type = "float32", value = "NaN" }', 'metadata."odd.f32".value: \'NaN\' is not a number'),
        ('"odd.fs" = { type = "array[float64]", value = [1.0, -inf] }',
         'metadata."odd.fs".value.1: must be a finite number, not -inf'),
    ],
)
def test_an_entry_float_out_of_bounds_fails_check(line: str, says: str, tmp_path: Path) -> None:
    root = _registry(tmp_path)
    entry = root / "registry/checkpoints/odd.toml"
    text = (REPO / "registry/checkpoints/gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")
    entry.write_text(text.replace('name = "gemma3-270m-q4_k_m"', 'name = "odd"', 1) + line + "\n", encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2 and "all holds" not in result.stdout
    assert f"passprice: error: registry/checkpoints/odd.toml: {says}" in result.stderr.splitlines()[0]
    bad("header", "odd", "--json", root=root, says=f"{entry}: {says}")
