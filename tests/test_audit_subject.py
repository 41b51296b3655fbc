"""An audit's target and what it prices are decided in the library (:mod:`passprice.audit`), not in the command
line: which TARGET names a lock and which a serving, the lock's pinned subject against a serving's today (with its
locks' floors), and whether a lock's pinned inputs still give the price it records — called directly here on the
shipped registry, the figures read off its lock files."""

from __future__ import annotations

import tomllib

import attrs
import pytest

from cli_helpers import REPO
from passprice.audit import audit_subject, lock_subject, names_lock, serving_subject
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.servings import load_spec, resolve

R1 = "r1-qwen7b-h200"
BEST = "r1-qwen7b-h200-best"
TITLE = "audit of lock r1-qwen7b-h200-best (pinned facts): deepseek-r1-distill-qwen-7b-q4_k_m on h200_sxm_141gb"


def recorded(name: str) -> dict[str, object]:
    price: dict[str, object] = tomllib.loads((REPO / "locks" / f"{name}.lock.toml").read_text("utf-8"))["price"]
    return price


@pytest.mark.parametrize(
    ("target", "is_lock"),
    [
        (R1, False),  # a serving and a lock of that name: the serving, priced with today's facts
        (f"{R1}.lock.toml", True),  # ... whose lock is audited by its file name
        (f"locks/{R1}.lock.toml", True),
        (BEST, True),  # a name only a lock has
        ("gpt-oss-20b-h200", False),  # a serving no lock names
        ("no-such-thing", False),  # neither: the serving path says it is not found
    ],
)
def test_which_target_names_a_lock(target: str, is_lock: bool) -> None:
    assert names_lock(find_root(REPO), target) is is_lock


def test_a_lock_is_audited_on_its_pinned_inputs_and_reproduces_its_recorded_price() -> None:
    subject = lock_subject(find_root(REPO), BEST)
    assert (subject.kind, subject.title, subject.reference) == ("best", TITLE, BEST)
    report = audit_subject(subject)
    price = recorded(BEST)
    assert report.audit.cost.tokens_per_s == price["tokens_per_s"] == 33339.20102265113
    assert report.audit.cost.batch == price["batch"] == 580
    assert (report.reproduces, report.warning) == (True, None)
    assert report.extra() == {"title": TITLE, "reproduces": True, "recorded_tokens_per_s": 33339.20102265113}
    assert report.stale.findings == ()


def test_a_lock_whose_recorded_price_its_inputs_do_not_give_says_which_field_moved() -> None:
    subject = lock_subject(find_root(REPO), BEST)
    assert subject.lock is not None
    edited = attrs.evolve(subject, lock=attrs.evolve(subject.lock, price={**subject.lock.price, "tokens_per_s": 1.0}))
    report = audit_subject(edited)
    assert report.reproduces is False
    assert report.warning == (
        "WARNING: the lock records 1.0 tokens/s, its pinned inputs give 33339.20102265113 with today's code (first: "
        "tokens_per_s); `passprice reproduce r1-qwen7b-h200-best` says why"
    )
    assert report.extra()["reproduces"] is False


def test_a_serving_is_audited_today_against_the_floors_its_locks_set_together() -> None:
    root = find_root(REPO)
    subject = serving_subject(root, R1, resolve(root, load_spec(root, R1)))
    assert subject.title == (
        "audit of r1-qwen7b-h200 (today's facts): deepseek-r1-distill-qwen-7b-q4_k_m on h200_sxm_141gb, floors of "
        "locks r1-qwen7b-h200, r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp"
    )
    assert subject.policy is not None and subject.policy.allowed("memory.bandwidth").value == "published"
    report = audit_subject(subject)
    assert report.audit.cost.tokens_per_s == recorded(R1)["tokens_per_s"] == 996.0966124437687
    assert report.reproduces is None and "reproduces" not in report.extra()
    bandwidth = report.audit.rows[0]
    # Memory-bound at batch 1: tokens/s moves one for one with the bandwidth.
    assert (bandwidth.path, bandwidth.binding, round(bandwidth.elasticity or 0.0, 6)) == ("memory.bandwidth", True, 1.0)
    assert bandwidth.floor is not None and bandwidth.floor.value == "published"


def test_the_check_runs_on_the_price_before_the_audit_and_its_refusal_stops_it() -> None:
    root = find_root(REPO)
    subject = serving_subject(root, R1, resolve(root, load_spec(root, R1)))
    seen = []

    def refuse(cost: object) -> None:
        seen.append(cost)
        raise InputError("not finite")

    with pytest.raises(InputError, match="not finite"):
        audit_subject(subject, refuse)
    assert len(seen) == 1
