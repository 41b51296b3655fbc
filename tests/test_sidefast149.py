"""A run's probe prices are made once a process (:data:`passprice.calibrate._PRICED`): a cold one-fact ``diff``
priced every run of a stack twice, for HEAD's ``check`` (the stack's fit re-run) and again for the re-fit of its
private copy, whose cards hold the same bytes (docs/PERFORMANCE.md, "A one-fact review's runs priced once").

Behaviour only, no timing: a second reading of the same runs prices nothing and gives the very doubles a fresh one
gives; a card or probe of other bytes (a fact moved, ``1`` for ``1.0``, ``-0.0`` for ``0.0``, a renamed stack) is
priced afresh; a copy of the registry (another root, other card and header objects of the same bytes) is priced
once. The review's output with the memo is in test_diff*, test_review137 and the bench's review rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from cli_helpers import copy_root
from passprice import calibrate, serving
from passprice.cards import load_card
from passprice.measurements import load_runs
from passprice.registry import Root, embedded_root
from passprice.stacks import load_stack

STACK = "lmdeploy-turbomind-2312"


@pytest.fixture
def costs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The number of :meth:`passprice.serving.PassShape.cost` calls made from now on (one item a call), with the
    process's probe prices forgotten first and after."""
    calibrate._PRICED.clear()
    made: list[int] = []
    cost = serving.PassShape.cost

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return cost(self, *args, **kwargs)

    monkeypatch.setattr(serving.PassShape, "cost", counted)
    yield made
    calibrate._PRICED.clear()


def read(root: Root, stack_name: str = STACK) -> list[calibrate.RunModel]:
    stack = load_stack(root, stack_name)
    return calibrate.model_runs(root, stack, load_runs(root, stack.name))


def same(a: list[calibrate.RunModel], b: list[calibrate.RunModel]) -> bool:
    """Every run the same, with the very same doubles (bits, not ``==``)."""
    return len(a) == len(b) and all(
        x.run == y.run and x.components.tobytes() == y.components.tobytes()
        and repr((x.layers, x.measured_s, x.batch)) == repr((y.layers, y.measured_s, y.batch))
        for x, y in zip(a, b, strict=True)
    )


def test_the_same_runs_read_again_price_nothing_and_give_the_same_doubles(costs: list[int]) -> None:
    root = embedded_root()
    first = read(root)
    runs = len(first)
    assert runs == 17 and len(costs) == 9 * runs  # at share 1, then at half of each of the 8 shares
    costs.clear()
    again = read(root)
    assert costs == [] and same(first, again)
    calibrate._PRICED.clear()
    assert same(read(root), first) and len(costs) == 9 * runs  # forgotten: priced afresh, the same doubles


def test_a_copy_of_the_registry_is_priced_once(tmp_path: Path, costs: list[int]) -> None:
    # HEAD's check and the review's private copy: other roots, other card and header objects, the same bytes.
    first = read(embedded_root())
    costs.clear()
    copied = read(Root(copy_root(tmp_path)))
    assert costs == [] and same(first, copied)


def _card_edited(root: Path, name: str, old: str, new: str) -> None:
    path = root / "facts" / "cards" / f"{name}.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_card_of_other_bytes_is_priced_afresh(tmp_path: Path, costs: list[int]) -> None:
    root = embedded_root()
    runs = {r.card for r in load_runs(root, STACK)}
    assert runs == {"a100_sxm4_80gb"}, runs
    first = read(root)
    copy = copy_root(tmp_path)
    # the card's memory bandwidth moved (every run's memory term reads it)
    _card_edited(copy, "a100_sxm4_80gb", "[memory.bandwidth]\nvalue = 2039", "[memory.bandwidth]\nvalue = 2000")
    costs.clear()
    moved = read(Root(copy))
    assert len(costs) == 9 * len(moved)
    assert not same(first, moved)
    calibrate._PRICED.clear()
    costs.clear()
    assert same(read(Root(copy)), moved)  # what a process that never saw the first card reads


def test_equal_but_not_identical_values_are_not_taken_for_each_other(costs: list[int]) -> None:
    # ``==`` holds for -0.0 and 0.0 and for 1 and 1.0; the key is the card's text, where they differ.
    card = load_card(embedded_root(), "a100_sxm4_80gb")
    for one, other in ((0.0, -0.0), (1.0, 1)):
        a = attrs.evolve(card, array=attrs.evolve(card.array, value=one))
        b = attrs.evolve(card, array=attrs.evolve(card.array, value=other))
        assert a == b
        entry = calibrate._priced_runs("v", "probe", a, {})
        assert calibrate._priced_runs("v", "probe", b, {}) is not entry
        # a card of the same text (another object) shares it; another probe or version does not
        assert calibrate._priced_runs("v", "probe", attrs.evolve(a), {}) is entry
        assert calibrate._priced_runs("w", "probe", a, {}) is not entry
        assert calibrate._priced_runs("v", "other", a, {}) is not entry


def test_another_stack_s_probe_is_priced_afresh(costs: list[int]) -> None:
    root = embedded_root()
    stack = load_stack(root, STACK)
    runs = load_runs(root, stack.name)
    calibrate.model_runs(root, stack, runs)
    for other in (attrs.evolve(stack, name="renamed"), attrs.evolve(stack, runtime="another runtime")):
        costs.clear()
        calibrate.model_runs(root, other, runs)
        assert len(costs) == 9 * len(runs)


def test_the_memo_is_bounded(costs: list[int]) -> None:
    root = embedded_root()
    card = load_card(root, "a100_sxm4_80gb")
    for n in range(calibrate._PRICED_KEPT + 5):
        calibrate._priced_runs("v", f"probe {n}", card, {})
    assert len(calibrate._PRICED) == calibrate._PRICED_KEPT
