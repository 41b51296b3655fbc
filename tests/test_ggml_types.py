"""The generated copy of gguf's type tables (passprice.ggml_types) is gguf's, exactly; pricing reads it without
importing gguf, NumPy or PyYAML."""

from __future__ import annotations

from pathlib import Path

import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFValueType

from passprice import ggml, ggml_types


def test_generated_type_table_equals_gguf() -> None:
    # Regenerate with `python -m passprice.ggml --write` when gguf adds or changes a type.
    assert {int(t.value): t.name for t in GGMLQuantizationType} == ggml_types.TYPE_NAMES
    assert {int(t.value): (int(s[0]), int(s[1])) for t, s in GGML_QUANT_SIZES.items()} == ggml_types.BLOCK_SIZES
    assert {int(t.value): t.name for t in GGUFValueType} == ggml_types.VALUE_TYPES


def test_generated_module_is_what_the_generator_writes() -> None:
    text = Path(ggml_types.__file__).read_text(encoding="utf-8")
    body = text.split("\n#: Tensor type id", 1)[1]
    assert body == ggml.generated_source().split("\n#: Tensor type id", 1)[1]


def test_table_figures() -> None:
    # Q4_K: 256 weights in 144 bytes (llama.cpp ggml-common.h block_q4_K: 2 f16 + 12 scale bytes + 128 nibble bytes).
    q4k = ggml.by_name("Q4_K")
    assert (q4k.id, q4k.block_elems, q4k.block_bytes) == (12, 256, 144)
    assert ggml.tensor_bytes(12, (3584, 512)) == 3584 * 512 // 256 * 144
    # Q8_0: 32 weights in 34 bytes; a partial block rounds up.
    assert ggml.tensor_bytes(8, (33,)) == 2 * 34
    assert ggml.type_name(9999) == "type#9999"
    assert not ggml.known(9999)


def test_a_type_missing_from_the_copy_is_looked_up_in_gguf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ggml_types, "BLOCK_SIZES", {k: v for k, v in ggml_types.BLOCK_SIZES.items() if k != 12})
    ggml._table.cache_clear()
    ggml._by_name.cache_clear()
    try:
        assert 12 not in ggml._table()
        assert ggml.ggml_type(12).block_bytes == 144  # from gguf itself
        assert ggml.by_name("Q4_K").id == 12
    finally:
        ggml._table.cache_clear()
        ggml._by_name.cache_clear()
