"""Round 36 (issue 16: a cold ``check``): a tensor name is split once a process (:func:`passprice.decode._split_name`
remembered by name in a bounded cache; a cold ``check`` split the same names 36,722 times, 2,628 of them distinct).

Behaviour only, no timing: the remembered split is the plain function's for every kind of name (a block's, a
top-level one, no suffix, a ``bias``, a name of many dots, a huge block index), the cache is bounded, and a decode
step built with the cache cold and warm is the same step."""

from __future__ import annotations

import pytest

from passprice import decode
from passprice.checkpoints import load_checkpoint
from passprice.decode import Deployment, decode_step
from passprice.registry import embedded_root

NAMES = (
    "blk.3.attn_q.weight", "blk.0.ffn_down_exps.weight", "blk.12.attn_norm.bias", "output.weight", "token_embd.weight",
    "rope_freqs", "blk.7.ssm_a", "blk.1.nextn.embed_tokens.weight", "blk.2.attn_q.scale", "blk.x.attn_q.weight",
    "blk.99999999999999999999.attn_k.weight", "weight", ".weight", "blk.4.", "",
)


@pytest.mark.parametrize("name", NAMES)
def test_the_remembered_split_is_the_plain_one(name: str) -> None:
    plain = decode._split_name.__wrapped__(name)
    assert decode._split_name(name) == plain
    assert decode._split_name(name) == plain  # a hit gives the same


def test_the_hand_computed_splits() -> None:
    assert decode._split_name("blk.3.attn_q.weight") == (3, "attn_q", "weight")
    assert decode._split_name("output.weight") == (None, "output", "weight")
    assert decode._split_name("blk.2.attn_q.scale") == (2, "attn_q.scale", "")


def test_the_cache_is_bounded() -> None:
    assert decode._split_name.cache_info().maxsize == decode._NAMES_KEPT == 16384


def test_a_step_is_the_same_built_cold_and_warm() -> None:
    root = embedded_root()
    header = load_checkpoint(root, "llama2-7b-f16")
    deployment = Deployment(ctx=1, kv_bytes=2.0, state_bytes=4.0, activation_bytes=2.0, speculative=False)
    decode._split_name.cache_clear()
    cold = decode_step(header, deployment, defer_recurrence=True)
    assert decode._split_name.cache_info().misses > 0
    warm = decode_step(header, deployment, defer_recurrence=True)
    assert decode._split_name.cache_info().hits > 0
    assert warm == cold
