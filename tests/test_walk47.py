"""Findings of the forty-seventh walkthrough, a reviewer's view of a stack re-fit: one measured run added to
llamacpp-cuda-2405, the stack re-fitted (``calibrate``) and its lock re-locked (``lock --update``). The review must say
what moved, and only that: the facts the fit wrote again to the same value in one line, the lock's changed facts those
that moved, its change column the move of the price it pins (the expected price under the stack); ``lock --update``
says the price it replaces; and a plain ``init`` ships the entry of Qwen3-30B-A3B that uniform routing prices."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.locks import replaced, replaced_lines
from passprice.registry import Root
from passprice.review import Diff, diff, diff_markdown, diff_text

LOCK = "r1-qwen7b-h200-llamacpp"
SERVING = "r1-qwen7b-h200"
RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
STACK = "llamacpp-cuda-2405"
ADDED = '''
[[run]]
id = "w47.rtx_4090.8b-q4km.tg512"
stack = "llamacpp-cuda-2405"
card = "rtx_4090"
checkpoint = "llama3-8b-q4_k_m"
batch = 1
positions = [0, 512]
tokens_per_s = 130.0
locator = "a run of our own: llama-bench tg512, '130.00 ± 0.50'"
build = "e8496488 (2843)"
test = "tg512"
source = "xiongjiedai-gpu-benchmarks"
'''


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """BASE: the checkout's registry cut to one serving and its lock under the stack; HEAD: one run added to the
    stack's measured runs (111 → 112), the stack re-fitted and the lock re-locked, with the output of the re-lock."""
    tmp = tmp_path_factory.mktemp("walk47")
    base = copy_root(tmp / "base")
    for lock in (base / "locks").iterdir():
        if lock.name != f"{LOCK}.lock.toml":
            lock.unlink()
    for serving in (base / "registry" / "servings").iterdir():
        if serving.name != f"{SERVING}.toml":
            serving.unlink()
    head = tmp / "head"
    shutil.copytree(base, head)
    runs = head / RUNS
    runs.write_text(runs.read_text(encoding="utf-8") + ADDED, encoding="utf-8")
    fitted = invoke("calibrate", "--stack", STACK, root=head)
    assert fitted.exit_code == 0, fitted.output
    relock = invoke("lock", "--update", "-o", str(head / "locks" / f"{LOCK}.lock.toml"), root=head)
    assert relock.exit_code == 0, relock.output
    return base, head, relock.stdout


@pytest.fixture(scope="module")
def reviewed(review: tuple[Path, Path, str]) -> Diff:
    base, head, _ = review
    return diff(Root(head), str(base), str(head))


@pytest.fixture(scope="module")
def as_json(reviewed: Diff) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(reviewed.to_json()))
    return out


# The re-fit of the checkout's 111 runs with the one added, read off the stack file BASE → HEAD: 6 of its 13 facts
# move, 7 are written again with the same value (their citations "the 111 runs" → "the 112 runs", nothing else).
MOVED = ["overhead.layer", "share.read", "share.append", "share.float", "share.vector", "share.scale"]
UNMOVED = ["overhead.pass", "share.array", "terms.serial", "range.rows.min", "range.rows.max", "range.position.min",
           "range.position.max"]


def test_the_summary_says_how_many_moved_and_how_many_were_rederived(reviewed: Diff) -> None:
    # Was: "13 stack facts changed in 1 file", a row each, "0 µs → 0 µs (derivation changed)" among them.
    assert diff_text(reviewed).splitlines()[1].startswith(
        "6 stack facts changed in 1 file (7 more re-derived to the same value); ")


def test_an_unmoved_rederived_fact_is_no_row(reviewed: Diff, as_json: dict[str, Any]) -> None:
    [stack] = [f for f in as_json["files"] if f["path"] == f"facts/stacks/{STACK}.toml"]
    assert [c["path"] for c in stack["facts"] if not c["refit_unmoved"]] == MOVED
    assert [c["path"] for c in stack["facts"] if c["refit_unmoved"]] == UNMOVED
    text = diff_text(reviewed).splitlines()
    assert not [line for line in text if line.startswith("  overhead.pass ") or "0 µs → 0 µs" in line]
    # one row says their derivation's inputs changed, each kind of figure apart (the range facts read rows and
    # positions, not tokens/s)
    [line] = [line for line in text if line.startswith("  7 more facts")]
    assert line.startswith(
        "  7 more facts re-derived to the same value and provenance, the citation changed only in its count of runs "
        "(111 → 112) (not listed as changed): overhead.pass, share.array, terms.serial, range.rows.min, "
        "range.rows.max, range.position.min, range.position.max; derivation: overhead.pass, share.array, "
        "terms.serial: as overhead.layer's; range.rows.min, range.rows.max: 111 → 112 measured runs (each run's "
        "token-rows a pass); added w47.rtx_4090.8b-q4km.tg512 = 1; range.position.min: 111 → 112 measured runs "
        "(each run's positions); added w47.rtx_4090.8b-q4km.tg512 = 0; range.position.max: ")
    markdown = diff_markdown(reviewed)
    assert "| `stack.overhead.pass` |" not in markdown and "| `stack.share.read` |" in markdown
    assert f"- `facts/stacks/{STACK}.toml`: 7 more facts re-derived to the same value" in markdown


def test_the_lock_row_names_what_moved_and_the_move_of_the_price_it_pins(reviewed: Diff,
                                                                          as_json: dict[str, Any]) -> None:
    [lock] = as_json["locks"]
    assert lock["name"] == LOCK and lock["review"] == "re-locked"
    # Was: all of its pinned stack paths, the 7 unmoved among them.
    assert lock["changed"] == ["stack.overhead.layer", "stack.share.read", "stack.share.append", "stack.share.vector",
                               "stack.share.scale"]
    assert lock["relative_change"] == 0.0  # the card's limit reads no stack fact
    expected = [side["expected"]["tokens_per_s"] for side in (lock["before"], lock["after"])]
    assert lock["expected_relative_change"] == expected[1] / expected[0] - 1.0
    move = f"{100 * lock['expected_relative_change']:+.4g} %"
    [row] = [line for line in diff_markdown(reviewed).splitlines() if line.startswith(f"| `{LOCK}` |")]
    cells = [cell.strip() for cell in row.split("|")]
    # (beside them, until the checkout's locks are re-locked by this code, the pricing-model digest BASE's lock pins)
    assert [p for p in cells[2].split(", ") if not p.startswith("`pricing-model digest ")] == [
        "`stack.overhead.layer`", "`stack.share.read`", "`stack.share.append`", "`stack.share.vector`",
        "`stack.share.scale`"]
    assert cells[7] == f"{move} expected (limit +0 %)"  # was "+0 %"
    text = diff_text(reviewed)
    assert f"    expected  {expected[0]:,.1f} → {expected[1]:,.1f}  ({move}) under stack {STACK}" in text
    # arch43: the text's tokens/s line is the card's limit, said so as the row's "(limit +0 %)" (it read "(+0 %)")
    limit = f"{lock['before']['tokens_per_s']:,.1f}"
    assert lock["after"]["tokens_per_s"] == lock["before"]["tokens_per_s"]
    assert f"\n    tokens/s  {limit} → {limit}  (limit +0 %)\n" in text


def test_lock_update_says_the_price_it_replaces(review: tuple[Path, Path, str], as_json: dict[str, Any]) -> None:
    _, _, said = review
    [lock] = as_json["locks"]
    limit = lock["before"]["tokens_per_s"]
    old, new = (side["expected"]["tokens_per_s"] for side in (lock["before"], lock["after"]))
    assert f"  replaces  {limit:,.1f} tokens/s, unchanged" in said.splitlines()
    assert (f"  replaces  expected {old:,.1f} -> {new:,.1f} tokens/s ({100 * (new / old - 1):+.4g} %)"
            in said.splitlines())


def test_replaced_figures_by_hand() -> None:
    # 200 → 210 tokens/s is +5 %; two figures equal at one decimal are told apart with more (214.88 → 214.91).
    assert replaced_lines({"tokens_per_s": 200.0}, {"tokens_per_s": 210.0}) == ["200.0 -> 210.0 tokens/s (+5 %)"]
    assert replaced_lines({"tokens_per_s": 214.88}, {"tokens_per_s": 214.91}) == [
        "214.88 -> 214.91 tokens/s (+0.01396 %)"]
    assert replaced_lines({"tokens_per_s": 50.0, "expected": {"tokens_per_s": 20.0}},
                          {"tokens_per_s": 50.0, "expected": {"tokens_per_s": 25.0}}) == [
        "50.0 tokens/s, unchanged", "expected 20.0 -> 25.0 tokens/s (+25 %)"]
    assert replaced({"tokens_per_s": 200.0}, {"tokens_per_s": 210.0}) == {
        "tokens_per_s": 200.0, "relative_change": pytest.approx(0.05), "expected_tokens_per_s": None,
        "expected_relative_change": None}


def test_lock_update_json_gives_the_old_figure(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    result = invoke("lock", "--update", "-o", str(root / "locks" / "r1-qwen7b-h200.lock.toml"), "--json", root=root)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["replaced"]["tokens_per_s"] == document["price"]["tokens_per_s"]
    assert document["replaced"]["relative_change"] == 0.0


def test_a_plain_init_ships_the_qwen3_entry_uniform_routing_prices() -> None:
    """README (init): of Qwen3-30B-A3B a plain init ships qwen3-30b-a3b-q4_0 alone (the llamacpp-pr16834-moe runs
    name it); uniform routing prices it; the measured record, scoped to q4_k_m, refuses it OutOfScope."""
    from passprice.scaffold import fit_checkpoints

    shipped = {p.name for p in fit_checkpoints(Root(REPO))}
    assert {n for n in shipped if n.startswith("qwen3-30b-a3b")} == {"qwen3-30b-a3b-q4_0.toml"}
    priced = invoke("price", "--checkpoint", "qwen3-30b-a3b-q4_0", "--card", "h200_sxm_141gb", "--routing", "uniform",
                    root=REPO)
    assert priced.exit_code == 0, priced.output
    refused = invoke("price", "--checkpoint", "qwen3-30b-a3b-q4_0", "--card", "h200_sxm_141gb", "--routing",
                     "qwen3-30b-a3b-measured", root=REPO)
    assert refused.exit_code == 1
    assert ("OutOfScope: routing record 'qwen3-30b-a3b-measured' applies to checkpoint qwen3-30b-a3b-q4_k_m only"
            in refused.stderr)
