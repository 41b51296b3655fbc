"""Slip round 35 (issue 13): changes a review should ask about.

Slip 1: a pull request changing a routing record (Qwen3-30B-A3B's hot experts 58 -> 65 of 128) moved a lock made
under a serving stack (expected 6,589.8 -> 6,454.1 tokens/s here) priced with the stack's OLD fit, which ``check``
re-fits to other figures (share.read 0.8564 -> 0.912). The review failed on HEAD's check, but the lock's row read
only "price moved, lock not updated", not "(on stale facts)" as a lock resting on a stale card fact does. The stack's
re-fit findings are now carried into the lock rows resting on them.

Slip 2: a measured run moved from an existing measurement file into a new one, its tokens/s 135.07 -> 155.07 and
its locator rewritten to match (or its positions [256, 512] moved), read "no fact changed; 2 other files changed",
nothing to verify, exit 0: the new file's run was compared with no run, its id being BASE's in another file. It is
now compared with itself there ("ID (moved from FILE)").

Slip 3: a copy of the H200's card with its array's constant ``sparsity`` 2 -> 1 under NEW words ('the dense rate as
listed': 989.5 -> 1979 TMAC/s under the same 'INT8 Tensor Core 3,958 TOPS' (with sparsity)) read "17 facts added in
1 new file", nothing to verify: slip 34 held a constant against others of the same words only. A constant is now
also held against the constant of that name in a fact of the same path citing the same place.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from cli_helpers import REPO, invoke
from test_diff import commit_all
from test_newcomer_24 import MOE, ROUTING, STACK, _registry
from test_slip_34 import POINTS, branch, h200_copy, registry, renderings, review

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

ROUTING_FILE = f"facts/routing/{ROUTING}.toml"


def _moved_routing(text: str) -> str:
    """The routing record with its hot set 58 -> 65 of 128 (the source's other workload), cited anew."""
    for old, new in (("value = 0.453125", "value = 0.5078125"), ("value = 58,", "value = 65,"),
                     ("coverage 58/128 (45%)", "coverage 65/128 (51%)"),
                     ("coverage, 58 of 128", "coverage, 65 of 128")):
        assert old in text
        text = text.replace(old, new)
    return text


def test_a_lock_under_a_stack_whose_fit_no_longer_follows_is_marked_on_stale_facts(tmp_path: Path) -> None:
    root = _registry(tmp_path / "made")
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    made = invoke("new-serving", "w24-moe", "--checkpoint", MOE, "--card", "h200_sxm_141gb", "--batch", "64",
                  "--routing", ROUTING, "--description", "slip 35", root=root)
    assert made.exit_code == 0, made.output
    lock = invoke("lock", "w24-moe", "--stack", STACK, "-o", str(root / "locks" / "w24-moe.lock.toml"), root=root)
    assert lock.exit_code == 0, lock.output
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(root, base)
    shutil.copytree(root, head)
    (head / ROUTING_FILE).write_text(_moved_routing((head / ROUTING_FILE).read_text()))
    # one review as text, markdown and JSON
    status, (stdout, md, as_json) = renderings(head, "text", "markdown", "json", base=str(base), head=str(head))
    assert status == 1, stdout
    assert ("  w24-moe (locks/w24-moe.lock.toml, card h200_sxm_141gb, price): rests on stack.overhead.pass, "
            "stack.share.read, stack.share.append, no longer the fit of stack vllm-w24's runs: re-fit them (`passprice "
            "calibrate --stack vllm-w24`); price moved, "
            "lock not updated (weight_bytes, the weights' bytes a pass reads)") in stdout
    assert ("    tokens/s  10,354.4 → 10,069.4  (-2.752 %)\n" in stdout)  # the card's limit rests on no stack fact
    assert ("    expected  6,589.8 → 6,454.1  (-2.06 %) under stack vllm-w24, recorded 6,589.8  HEAD's expected price "
            "rests on stack facts that do not follow: not a price to publish") in stdout
    assert "1 rests on derived facts that do not follow" in stdout
    [row] = [line for line in md.splitlines() if line.startswith("| `w24-moe`")]
    assert "(on stale facts)" not in row and "❌ rests on stack.overhead.pass" in row
    assert ("- `w24-moe`: expected tokens/s 6,589.8 → 6,454.1  (-2.06 %) under stack vllm-w24, recorded 6,589.8 ❌ (on "
            "stale stack facts)") in md
    locks = json.loads(as_json)["locks"]
    [moe] = [x for x in locks if x["name"] == "w24-moe"]
    assert [(u["path"], u["kind"]) for u in moe["unsound"]] == [
        ("stack.overhead.pass", "mismatch"), ("stack.share.read", "mismatch"), ("stack.share.append", "mismatch")]
    assert "it is 0.912, not 0.8564" in moe["unsound"][1]["message"]
    # the lock not under the stack (same card, same routing) rests on no stack fact: its row is as before
    [plain] = [x for x in locks if x["name"] == "qwen3-30b-a3b-h200"]
    assert plain["unsound"] == [] and plain["review"] == ("price moved, lock not updated (weight_bytes, the weights' "
                                                          "bytes a pass reads)")


def _move_first_run(path: Path, *edits: tuple[str, str]) -> None:
    """The first run of llamacpp-points.toml moved (its id kept) into registry/measurements/new-points.toml, with
    ``edits`` (regular expression, replacement) applied to it."""
    text = (path / POINTS).read_text()
    first = text[text.index("[[run]]"):].split("\n\n")[0]
    (path / POINTS).write_text(text.replace(first + "\n\n", "", 1))
    moved = first
    for pattern, new in edits:
        assert re.search(pattern, moved), pattern
        moved = re.sub(pattern, new, moved)
    (path / "registry" / "measurements" / "new-points.toml").write_text(text[:text.index("[[run]]")] + moved + "\n")


RUN = "xd2.h100_pcie_80gb.l2-7b-q4_0.main (moved from registry/measurements/llamacpp-points.toml)"


def test_a_run_moved_into_a_new_file_with_its_figure_moved_is_to_verify(registry: Path) -> None:
    path = branch(registry, "moved-run")
    _move_first_run(path, (r"135\.07", "155.07"))  # the figure and the locator quoting it, both
    commit_all(path, "a run moved to a new file")
    status, text, out = review(path)
    assert status == 0, text
    assert "no fact changed; 2 other files changed; 1 measured run to verify in its source" in text
    assert (f"1 measured run to verify in its source: {RUN} cited anew (locator …( 7.40 ms per token, "
            "[135.07 → 155.07] tokens per second)' (the third, …, tokens/s 135.07 → 155.07 (+14.81 %)): does "
            "xiongjiedai-gpu-benchmarks: ") in text
    assert out["runs_to_verify"] == {"registry/measurements/new-points.toml": 1}
    path = branch(registry, "moved-run-setting")
    _move_first_run(path, (r"positions = \[[^\]]*\]", "positions = [1, 64]"))
    commit_all(path, "a run moved to a new file, another setting")
    status, text, out = review(path)
    assert status == 0, text
    assert f"{RUN}'s setting moved (first position" in text and "last position 512 → 64" in text
    assert out["runs_to_verify"] == {"registry/measurements/new-points.toml": 1}


def test_a_copied_cards_constant_moved_under_new_words_is_to_verify(registry: Path) -> None:
    path = branch(registry, "constant-reworded")
    old = 'derivation.inputs.sparsity = { value = 2, unit = "1", constant = "2:4 structured sparsity doubles the dense'
    h200_copy(path, (old + ' rate" }', 'derivation.inputs.sparsity = { value = 1, unit = "1", constant = "the dense '
                     'rate as listed" }'))
    commit_all(path, "a copy, its array doubled under new words")
    status, text, out = review(path)
    assert status == 0, text
    assert ("17 facts added in 1 new file, 16 to verify in their sources (16 copied citations: each cites what "
            "another card's fact cites)") in text, text.splitlines()[1]  # copied citations (tests/test_fix166.py)
    assert ("to verify: its constant sparsity is 1 where facts/cards/h200_sxm_141gb.toml: array reads 2 from the same "
            "citation: does nvidia-h200-datasheet: Technical Specifications table, H200 SXM column: 'INT8 Tensor Core "
            "3,958 TOPS' (with sparsity) give 1?") in text
    assert "h200_copy:array" in out["to_verify"]  # with the copy's copied citations


def test_no_shipped_card_fact_is_asked_its_constant_if_added() -> None:
    from passprice.addedfacts import _cited_constant_asks
    from passprice.cards import load_cards
    from passprice.registry import find_root

    facts = {f"facts/cards/{c.name}.toml": dict(c.facts()) for c in load_cards(find_root(REPO))}
    assert sum(len(held) for held in facts.values()) == 238
    assert [(rel, p) for rel, held in facts.items() for p, f in held.items()
            if _cited_constant_asks(rel, p, f, facts, {(rel, p)})] == []
