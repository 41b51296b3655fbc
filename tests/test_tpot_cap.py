"""A serving's TPOT cap (``max_tpot``, ``--max-tpot SECONDS``): the best batch is sought only among batches whose
time per output token is at most the cap; the search agrees with the seed's scan stopped at the first slower batch;
a cap no batch meets is refused ``OverTPOT`` by name; the cap is part of the serving a lock pins and reproduces."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import bad, copy_root, invoke, refused
from passprice.batching import OverTPOT
from passprice.serving import ServingCost
from passprice.servings import ServingSpec, spec_from_document, spec_to_document
from synth import card
from test_batching import ARRAY, MEMORY, SCALE, VECTOR, room_card, same, shape

R1 = "r1-qwen7b-h200"


def tpot(cost: ServingCost) -> float:
    return cost.pass_s / cost.emitted_per_sequence


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_root(tmp_path_factory.mktemp("tpot-cap"))


# --- the search ------------------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    room=st.integers(1, 3000),
    bind=st.sampled_from(["memory", "array", "vector", "scale"]),
    drafts=st.booleans(),
    at=st.floats(0.0, 1.2),
)
def test_the_capped_search_equals_the_capped_scan(room: int, bind: str, drafts: bool, at: float) -> None:
    figures = {"memory": MEMORY, "array": ARRAY, "vector": VECTOR, "scale": SCALE}[bind]
    kw = {"emitted": 2.4875, "rows": 4, "array": 32e9, "vector": 1.6e9, "scale": 1.2e8} if drafts else {}
    sh = shape(**kw)  # type: ignore[arg-type]
    c = card(**room_card(room, **figures), on_chip_capacity=1e12)
    first = sh.cost_split(c, 1, False)  # type: ignore[arg-type]
    top = sh.cost_split(c, room, False)  # type: ignore[arg-type]
    # A cap from batch 1's TPOT to past the largest batch's.
    cap = tpot(first) + at * (tpot(top) - tpot(first))
    fast = sh.best(c, False, max_tpot=cap)  # type: ignore[arg-type]
    same(fast, sh.best_by_scan(c, False, max_tpot=cap))  # type: ignore[arg-type]
    assert tpot(fast) <= cap
    if fast.batch < room:  # the next batch is past the cap, or no faster (a compute-bound plateau)
        after = sh.cost_split(c, fast.batch + 1, False)  # type: ignore[arg-type]
        assert tpot(after) > cap or after.tokens_per_s <= fast.tokens_per_s * (1 + 1e-12)
    if at >= 1.0:  # a cap every batch meets changes nothing
        same(fast, sh.best(c, False))  # type: ignore[arg-type]


def test_memory_bound_best_is_the_last_batch_within_the_cap() -> None:
    # Memory binds every batch: tokens/s rises with the batch, so the capped best is the largest batch within the
    # cap. The default shape's pass is 4 GB of weights plus about 50 MB a sequence at 3 TB/s: TPOT grows by the
    # same step each batch; a cap halfway between batch 40's and 41's TPOT gives batch 40.
    sh = shape()
    c = card(**room_card(1000, **MEMORY), on_chip_capacity=1e12)
    t40, t41 = (tpot(sh.cost_split(c, b, False)) for b in (40, 41))  # type: ignore[arg-type]
    best = sh.best(c, False, max_tpot=(t40 + t41) / 2)  # type: ignore[arg-type]
    assert best.batch == 40 and best.binds.value == "memory"
    assert sh.best(c, False, max_tpot=t40).batch == 40  # type: ignore[arg-type]  # at most the cap: equal is within


def test_a_cap_below_batch_one_is_refused_both_ways() -> None:
    sh = shape()
    c = card(**room_card(100, **MEMORY), on_chip_capacity=1e12)
    one = tpot(sh.cost_split(c, 1, False))  # type: ignore[arg-type]
    for search in (sh.best, sh.best_by_scan):
        with pytest.raises(OverTPOT) as e:
            search(c, False, max_tpot=one * 0.99)  # type: ignore[operator]
        assert e.value.batch == 1 and e.value.tpot_s == one and e.value.max_tpot_s == one * 0.99
        assert "over the serving's TPOT cap" in str(e.value) and "--max-tpot" in str(e.value)


# --- the command line, on a registered serving -----------------------------------------------------------------------


def test_best_within_a_ten_millisecond_cap_on_the_h200() -> None:
    # r1-qwen7b-h200 binds on memory: 4.371 GB of weights at 4.8 TB/s × 0.9333 (streams.read) is 0.9757 ms, and each
    # sequence's 117.5 MB at 4.8 TB/s × 0.8646 (streams.append) 28.3 µs more. Within 10 ms: (10 − 0.9757) / 0.0283
    # = 318.8 sequences, so batch 318 (its TPOT 9.979 ms), where the uncapped best is 580 (TPOT 17.4 ms).
    result = invoke("best", R1, "--max-tpot", "0.01", "--no-lock", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["batch"] == 318
    assert out["pass_s"] == pytest.approx(9.979e-3, rel=1e-3) and out["pass_s"] <= 0.01
    over = json.loads(invoke("price", R1, "--batch", "319", "--no-lock", "--json").stdout)
    assert over["pass_s"] > 0.01
    text = invoke("best", R1, "--max-tpot", "0.01", "--no-lock").stdout
    assert "TPOT cap 10 ms on the best batch" in text and "batch 318 sequences" in text and "over it" not in text
    # A price at a batch given is not held to the cap, and says so when it is over it (it said "within").
    text = invoke("price", R1, "--batch", "580", "--max-tpot", "0.01", "--no-lock").stdout
    assert ("  TPOT cap      over it: 17.4 ms against the --max-tpot cap of 10 ms (it bounds the best batch's "
            "search, `passprice best`; a price at a batch given is not held to it)") in text
    assert json.loads(invoke("best", R1, "--no-lock", "--json").stdout)["batch"] == 580


def test_a_cap_no_batch_meets_is_refused_by_name() -> None:
    out = refused("best", R1, "--max-tpot", "0.0005", "--no-lock", name="OverTPOT")
    assert out["batch"] == 1 and out["max_tpot_s"] == 0.0005
    assert out["tpot_s"] == pytest.approx(1.004e-3, rel=1e-3)


@pytest.mark.parametrize(("value", "says"), [("0", "--max-tpot"), ("-1", "--max-tpot"), ("nan", "--max-tpot"),
                                             ("1e400", "--max-tpot"), ("3601", "--max-tpot")])
def test_a_bad_cap_is_one_error_line(value: str, says: str) -> None:
    bad("best", R1, "--max-tpot", value, "--no-lock", says=says)


def test_the_cap_is_written_read_and_left_out_when_unset(root: Path) -> None:
    spec = ServingSpec(checkpoint="c", card="k", max_tpot=0.05)
    document = spec_to_document(spec)
    assert document["max_tpot"] == 0.05
    assert spec_from_document(document, "x.toml") == spec
    assert "max_tpot" not in spec_to_document(ServingSpec(checkpoint="c", card="k"))  # old locks keep their bytes
    result = invoke("new-serving", "r1-capped", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m",
                    "--card", "h200_sxm_141gb", "--max-tpot", "0.01", root=root)
    assert result.exit_code == 0, result.output
    text = (root / "registry" / "servings" / "r1-capped.toml").read_text(encoding="utf-8")
    assert "max_tpot = 0.01\n" in text
    out = json.loads(invoke("best", "r1-capped", "--json", root=root).stdout)
    assert out["batch"] == 318
    path = root / "registry" / "servings" / "r1-capped.toml"
    path.write_text(text.replace("max_tpot = 0.01", "max_tpot = 0"), encoding="utf-8")
    bad("best", "r1-capped", root=root, says="r1-capped.toml: max_tpot: 0 is less than the minimum of 1e-06")
    path.write_text(text, encoding="utf-8")


def test_a_best_lock_pins_the_cap_and_reproduces_it(root: Path) -> None:
    path = root / "locks" / "r1-capped-best.lock.toml"
    result = invoke("lock", R1, "--best", "--max-tpot", "0.01", "-o", str(path), root=root)
    assert result.exit_code == 0, result.output
    lock = tomllib.loads(path.read_text(encoding="utf-8"))
    assert lock["serving"]["max_tpot"] == 0.01 and lock["price"]["batch"] == 318
    out = json.loads(invoke("reproduce", str(path), "--json", root=root).stdout)
    assert out["equals"] is True and out["price"]["batch"] == 318
    # The registered locks hold no cap: their serving tables are as before.
    for registered in (root / "locks").glob("*.lock.toml"):
        if registered != path:
            assert "max_tpot" not in tomllib.loads(registered.read_text(encoding="utf-8"))["serving"]


def test_a_cap_given_to_a_command_that_does_not_search_says_it_has_no_effect() -> None:
    # --max-tpot was accepted and silently ignored by max-batch and by speculate at a given batch (round 15).
    result = invoke("max-batch", R1, "--max-tpot", "0.01", "--no-lock")
    assert result.exit_code == 0 and "at most 580 sequences a pass" in result.stdout
    assert result.stderr == ("passprice: warning: --max-tpot bounds the best batch's search (best, lock --best); it "
                             "does not change this result: max-batch is what memory holds, whatever each sequence "
                             "waits\n")
    speculate = invoke("speculate", "qwen35-27b-h200-chat", "--tokens", "1..2", "--batch", "1", "--max-tpot", "0.01",
                       "--no-lock")
    assert speculate.exit_code == 0 and "add --best to search within it" in speculate.stderr
    searched = invoke("speculate", "qwen35-27b-h200-chat", "--tokens", "1..2", "--best", "--max-tpot", "0.05",
                      "--no-lock")
    assert searched.exit_code == 0 and "--max-tpot" not in searched.stderr
