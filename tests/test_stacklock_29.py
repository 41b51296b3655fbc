"""Stacklock 29 (issue 13: reproduce a historic price from its lock, for a price made under a serving stack).

No shipped lock priced under a serving stack, so reproducing a stack price from its lock was exercised only on locks
the tests wrote themselves (walk 35, slip 46). ``locks/r1-qwen7b-h200-llamacpp.lock.toml`` is one: ``passprice lock
r1-qwen7b-h200 --stack llamacpp-cuda-2405 -o locks/r1-qwen7b-h200-llamacpp.lock.toml`` (the serving's batch 1, the
stack's range). Here it reproduces to the bit, its expected price equals a hand computation from the stack's
overhead and share facts it pins, and a review of a change to one of those overhead facts names it.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from cli_helpers import REPO, invoke
from passprice import schema
from passprice.registry import embedded_root
from test_slip_34 import renderings  # one in-process review rendered per format

NAME = "r1-qwen7b-h200-llamacpp"
LOCK = f"locks/{NAME}.lock.toml"
STACK = "facts/stacks/llamacpp-cuda-2405.toml"

# The facts the lock pins, as its file holds them (asserted below), in SI units.
BANDWIDTH = 4.8e12  # memory.bandwidth 4.8 TB/s
READ, APPEND = 0.9333, 0.8646  # streams.read, streams.append
VECTOR = 33.5e12  # the card's vector rate, 33.5 TMAC/s: llama.cpp's integer mat-vec kernels run there, not on array
SCALE = 33.5e12  # the card's scale rate, 33.5 Tcycle/s
LAYERS = 28  # DeepSeek-R1-Distill-Qwen-7B's blocks (qwen2.block_count)
OVERHEAD_PASS, OVERHEAD_LAYER = 0.0, 96.63e-6  # stack.overhead.pass 0 µs, stack.overhead.layer 96.63 µs
SHARE_READ, SHARE_APPEND = 0.9883, 0.7532  # stack.share.read, stack.share.append
SHARE_ARRAY, SHARE_VECTOR, SHARE_SCALE = 1.0, 0.04165, 0.002051  # stack.share.array, .vector, .scale
SERIAL = 0.5  # stack.terms.serial
# The pass's bytes and work at batch 1, position 2048 of 4096 (the checkpoint's, as the limit's price records them).
WEIGHT_BYTES, SEQUENCE_BYTES = 4_370_560_992, 117_497_856
ARRAY_MACS, VECTOR_MACS, SCALE_CYCLES = 8_591_507_456, 423_750_656, 27_618_304


def _by_hand(overhead_layer: float = OVERHEAD_LAYER) -> tuple[float, float]:
    """The expected pass (s) and tokens/s under the stack, by the README's formula: fixed + the binding term at the
    stack's shares + terms.serial × the other terms.

    fixed  = 0 + 28 × 96.63 µs                                                         = 2.70564 ms
    memory = 4,370,560,992 B / (4.8 TB/s × 0.9333 × 0.9883)
           + 117,497,856 B / (4.8 TB/s × 0.8646 × 0.7532)                              = 1.0247 ms (binds)
    array  = 8.5915 GMAC / (33.5 TMAC/s × 1)                                           = 256.46 µs
    vector = 423.75 MMAC / (33.5 TMAC/s × 0.04165)                                     = 303.70 µs
    scale  = 27.618 Mcycle / (33.5 Tcycle/s × 0.002051)                                = 401.96 µs
    pass   = 2.70564 + 1.02475 + 0.5 × (0.25646 + 0.30370 + 0.40196) ms                = 4.21145 ms
    tokens/s = 1 sequence × 1 token / 4.21145 ms                                       = 237.448
    """
    fixed = OVERHEAD_PASS + LAYERS * overhead_layer
    memory = WEIGHT_BYTES / (BANDWIDTH * READ * SHARE_READ) + SEQUENCE_BYTES / (BANDWIDTH * APPEND * SHARE_APPEND)
    array = ARRAY_MACS / (VECTOR * SHARE_ARRAY)
    vector = VECTOR_MACS / (VECTOR * SHARE_VECTOR)
    scale = SCALE_CYCLES / (SCALE * SHARE_SCALE)
    assert memory > max(array, vector, scale)  # the pass binds on memory
    pass_s = fixed + memory + SERIAL * (array + vector + scale)
    return pass_s, 1 / pass_s


def _shipped() -> Path:
    return embedded_root().path


def test_the_shipped_lock_is_made_under_the_stack_and_pins_the_facts_the_hand_check_reads() -> None:
    data = tomllib.loads((_shipped() / LOCK).read_text(encoding="utf-8"))
    assert data["lock"]["name"] == NAME and data["lock"]["serving"] == "r1-qwen7b-h200"
    assert data["lock"]["kind"] == "price"
    assert data["stack"]["name"] == "llamacpp-cuda-2405"
    assert data["stack"]["integer_matrices"] == "vector" and data["stack"]["float_matrices"] == "vector"
    assert data["price"]["stack"] == "llamacpp-cuda-2405" and data["price"]["batch"] == 1
    facts = {path: (fact["value"], fact["unit"]) for path, fact in data["facts"].items()}
    assert facts["memory.bandwidth"] == (4.8, "TB/s") and facts["vector"] == (33.5, "TMAC/s")
    assert facts["scale"] == (33.5, "Tcycle/s")
    assert facts["streams.read"] == (READ, "1") and facts["streams.append"] == (APPEND, "1")
    assert facts["stack.overhead.pass"] == (0.0, "us") and facts["stack.overhead.layer"] == (96.63, "us")
    assert facts["stack.share.read"] == (SHARE_READ, "1") and facts["stack.share.append"] == (SHARE_APPEND, "1")
    assert facts["stack.share.array"] == (SHARE_ARRAY, "1") and facts["stack.share.vector"] == (SHARE_VECTOR, "1")
    assert facts["stack.share.scale"] == (SHARE_SCALE, "1") and facts["stack.terms.serial"] == (SERIAL, "1")
    assert facts["stack.range.rows.min"] == (1, "rows") and facts["stack.range.rows.max"] == (1, "rows")
    price = data["price"]
    assert (price["weight_bytes"], price["sequence_bytes"]) == (WEIGHT_BYTES, SEQUENCE_BYTES)
    assert (price["array_macs"], price["vector_macs"], price["scale_cycles"]) == (ARRAY_MACS, VECTOR_MACS,
                                                                                  SCALE_CYCLES)
    assert price["fixed_s"] == LAYERS * OVERHEAD_LAYER  # 2.70564 ms


def test_the_stack_lock_reproduces_exactly_and_its_expected_price_is_the_hand_computed_one() -> None:
    pass_s, tokens_per_s = _by_hand()
    assert round(pass_s * 1e3, 5) == 4.21145 and round(tokens_per_s, 3) == 237.448
    recorded = tomllib.loads((_shipped() / LOCK).read_text(encoding="utf-8"))["price"]["expected"]
    # the arithmetic above, in the order the pricer does it, gives the recorded figures to the bit
    assert recorded["pass_s"] == pass_s and recorded["tokens_per_s"] == tokens_per_s
    result = invoke("reproduce", LOCK, "--json", root=_shipped())
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["equals"] is True and out["reproduction"] == "reproduces exactly"
    assert out["changed"] == [] and out["facts_drifted"] == [] and out["serving_differences"] == []
    assert out["floors"]["holds"] is True
    assert out["price"]["expected"]["tokens_per_s"] == tokens_per_s  # reproduced from the pinned facts
    assert out["today"]["expected"]["tokens_per_s"] == tokens_per_s  # and from today's registry
    assert out["price"]["tokens_per_s"] == 996.0966124437687  # the limit beside it, as the lock records it
    text = invoke("reproduce", LOCK, root=_shipped()).stdout.splitlines()
    assert text[1] == "  reproduces exactly: 996.0966124437687 tokens/s at batch 1, binds on memory, from its 28 " \
                      "pinned facts"
    assert text[2] == ("  recorded expected under stack llamacpp-cuda-2405: 237.4 tokens/s at batch 1, binds on "
                       "memory, weakest estimated (0.2384 × the limit's 996.1)")


def test_price_under_the_lock_prices_under_its_stack_and_check_holds() -> None:
    priced = invoke("price", "--lock", LOCK, "--json", root=_shipped())
    assert priced.exit_code == 0, priced.output
    data = json.loads(priced.stdout)
    assert data["stack"] == "llamacpp-cuda-2405" and data["expected"]["tokens_per_s"] == _by_hand()[1]
    text = invoke("price", "--lock", LOCK, root=_shipped()).stdout.splitlines()
    assert (f"  lock          under lock {NAME} ({LOCK}): floors hold, and the price is the one {NAME} records"
            in text)
    for args in (("check",), ("check", "--frozen")):
        checked = invoke(*args, root=_shipped())
        assert checked.exit_code == 0, checked.output
        lines = checked.stdout.splitlines()
        at = lines.index(f"lock {NAME} ({LOCK}, locks serving r1-qwen7b-h200): ok")
        assert lines[at + 1:at + 6] == [
            "  reproduces exactly",
            "  pricing model: same",
            "  checkpoint: deepseek-r1-distill-qwen-7b-q4_k_m: content 169f62b972aa… as pinned",
            f"  floors: lock {NAME} holds; the price's weakest provenance is estimated",
            "  drift: none",
        ]


def _review_copies(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: a copy of passprice's own registry (facts, registry, locks, sources, schemas); HEAD: a copy of BASE."""
    base = tmp_path / "base"
    base.mkdir()
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(_shipped() / folder, base / folder)
    shutil.copytree(schema.schema_dir(), base / "schema")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    return base, head


def test_a_review_of_an_edited_overhead_fact_of_the_stack_names_the_lock(tmp_path: Path) -> None:
    base, head = _review_copies(tmp_path)
    path = head / STACK
    text = path.read_text(encoding="utf-8")
    assert text.count("[overhead.layer]\nvalue = 96.63\n") == 1
    path.write_text(text.replace("[overhead.layer]\nvalue = 96.63\n", "[overhead.layer]\nvalue = 100.0\n"),
                    encoding="utf-8")
    # by hand: 28 × 100 µs = 2.8 ms fixed, the rest as above: 4.30590 ms a pass, 232.244 tokens/s, -2.191 %
    _, moved = _by_hand(100e-6)
    assert round(moved, 3) == 232.244 and round((moved / _by_hand()[1] - 1) * 100, 3) == -2.191
    status, (text, as_json) = renderings(REPO, "text", "json", base=str(base), head=str(head))  # one review
    assert status == 1, text  # moves a locked price without re-locking it
    lines = text.splitlines()
    assert lines[1] == ("1 stack fact changed in 1 file; 1 lock affected, 1 price moved unreviewed, 1 rests on derived "
                        "facts that do not follow; HEAD fails passprice check (1 problem); 9 locks unaffected")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"  {NAME} ({LOCK}, "))
    assert lines[at - 1] == "locks affected"
    assert lines[at + 1] == "    changed   stack.overhead.layer"
    assert ("    expected  237.4 → 232.2  (-2.191 %) under stack llamacpp-cuda-2405, recorded 237.4  HEAD's expected "
            "price rests on stack facts that do not follow: not a price to publish") in lines
    review = json.JSONDecoder().raw_decode(as_json)[0]
    (lock,) = review["locks"]
    assert lock["name"] == NAME and lock["changed"] == ["stack.overhead.layer"]
    assert lock["moved"] == "expected.pass_s" and lock["holds"] is True
    assert lock["after"]["expected"]["tokens_per_s"] == moved
    assert NAME not in review["unaffected"] and len(review["unaffected"]) == 9
    # the limit's locks of the same serving rest on no stack fact: unaffected
    assert {"r1-qwen7b-h200", "r1-qwen7b-h200-best"} <= set(review["unaffected"])
