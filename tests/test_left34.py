"""What issue 13's walkthroughs left for reviewers and MoE users (session 32, left34), each reproduced here first.

4. ``init``'s ``next:`` lines never said to commit the registry to the default branch, though the README says the
   first pull request's review fails without that commit (the base branch installs no reviewer): a ``then:`` line.
5. ``price --memory-use 0.9`` at a batch given, and ``simulate`` and ``sweep`` of a serving whose file holds
   ``memory_use``, took the headroom silently (it bounds the best and largest batch's searches only): each now says
   so on stderr. (``sweep`` reads a serving file's ``memory_use`` and takes ``--memory-use`` since moe43: a row
   holding more than that fraction of card memory is refused; ``tests/test_moe43.py``.)

Items 1-3 (a copied card's notes and ``[card]`` variant, a copied stream share asked by its input, a hand-edited
lock's recorded figure) are pinned in ``test_slip_52.py`` and ``test_walk41.py`` beside their reproducers; item 6
(llama-quant.cpp line numbers) in ``test_moe42.py``-adjacent citations, checked by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke
from passprice.addedfacts import copied_words
from passprice.facts import Fact, Provenance
from passprice.scaffold import COMMIT_FIRST

R1 = "r1-qwen7b-h200"
UNUSED = "passprice: warning: --memory-use bounds the best and largest batch's searches"


def test_init_says_to_commit_the_registry_to_the_default_branch(tmp_path: Path) -> None:
    result = invoke("init", str(tmp_path / "mine"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("next: cd ") and lines[-1] == f"then: {COMMIT_FIRST}"
    assert lines[-1] == ("then: commit the registry to the default branch before the first pull request: the review "
                         "runs the base branch's passprice, installed by its requirements.txt, and a base without one "
                         "reviews nothing and fails")
    made = json.loads(invoke("init", "--json", str(tmp_path / "json")).stdout)
    assert made["then"] == COMMIT_FIRST


def test_price_at_a_batch_says_memory_use_is_unused() -> None:
    plain = invoke("price", R1, "--no-lock")
    given = invoke("price", R1, "--no-lock", "--memory-use", "0.9")
    assert given.exit_code == plain.exit_code == 0, given.output
    # the price at the serving's batch is the same; the spec line alone names the headroom
    assert given.stdout.replace(" · memory use 90 % of card memory at most for the best and largest batch", "") == (
        plain.stdout)
    assert plain.stderr == "" or UNUSED not in plain.stderr
    assert (f"{UNUSED} (best, max-batch, compare, lock --best); it does not change this result: price prices the "
            "serving's batch") in given.stderr


def test_simulate_of_a_serving_with_memory_use_says_it_is_unused(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    assert invoke("new-serving", "r1-90", R1, "--memory-use", "0.9", root=root).exit_code == 0
    result = invoke("simulate", "r1-90", "--synthetic", "8", "--no-lock", root=root)
    assert result.exit_code == 0, result.output
    assert (f"{UNUSED} (best, max-batch, compare, lock --best); it does not change this result: simulate admits "
            "requests while the card's memory holds them, up to --max-batch") in result.stderr
    plain = invoke("simulate", R1, "--synthetic", "8", "--no-lock", root=root)
    assert UNUSED not in plain.stderr
    # sweep reads a serving file's memory_use since moe43: each row's capacity_bytes is its fraction of the card's
    # 141 GB, and a row holding more is refused (it was read and ignored, with this warning)
    swept = invoke("sweep", "r1-90", R1, "--batches", "521", "--no-lock", root=root)
    assert swept.exit_code == 0, swept.output
    assert UNUSED not in swept.stderr
    rows = [line.split(",") for line in swept.stdout.splitlines()[1:]]
    assert [(r[1], r[18], r[-1]) for r in rows] == [("r1-90", "", "NotResident"),
                                                    ("r1-qwen7b-h200", "141000000000", "")]


def _fact(amount: float, unit: str, note: str | None, locator: str) -> Fact:
    from passprice.derivations import quantity

    return Fact(value=quantity(amount, unit).value, amount=amount, unit=unit, provenance=Provenance.PUBLISHED,
                source="sheet", locator=locator, note=note)


def test_copied_words_asks_only_of_words_left_under_moved_figures() -> None:
    note = "from 5 x 16 GiB HBM3 stacks"
    old = {"memory.capacity": _fact(80, "GB", note, "SXM: 80GB"), "memory.bandwidth": _fact(3.35, "TB/s", None, "bw"),
           "scale": _fact(1, "GHz", "about 80 GB of it", "clock")}
    new = {"memory.capacity": _fact(94, "GB", note, "NVL: 94GB"), "memory.bandwidth": _fact(3.35, "TB/s", None, "bw"),
           "scale": _fact(1, "GHz", "about 80 GB of it", "clock")}
    cards = {"a.toml": old, "b.toml": new}
    tables = {"a.toml": {"variant": "SXM5, 700 W"}, "b.toml": {"variant": "SXM5, 700 W"}}
    asked = copied_words(cards, tables, [("b.toml", p) for p in new])
    assert asked[("b.toml", "memory.capacity")] == (
        "its note is a.toml: memory.capacity's word for word, written of 80 GB: is it true of 94 GB?; its [card] "
        "variant 'SXM5, 700 W' is a.toml's as copied, whose figures this card moved (memory.capacity): does it "
        "describe this card?")
    # a note left as copied under an unmoved figure, stating the moved one
    assert asked[("b.toml", "scale")] == ("its note, as a.toml has it, states memory.capacity 80 GB (here 94 GB): is "
                                          "it this card's?")
    assert ("b.toml", "memory.bandwidth") not in asked
    # the variant rewritten, the notes too: nothing asked; a plain copy (no figure moved): nothing asked
    tables["b.toml"] = {"variant": "NVL, 400 W"}
    new["memory.capacity"] = _fact(94, "GB", "from 6 x 16 GiB stacks", "NVL: 94GB")
    new["scale"] = _fact(1, "GHz", "about 94 GB of it", "clock")
    assert copied_words(cards, tables, [("b.toml", p) for p in new]) == {}
    assert copied_words({"a.toml": old, "c.toml": dict(old)}, {}, [("c.toml", p) for p in old]) == {}
