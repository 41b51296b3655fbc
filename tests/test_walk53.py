"""What walkthroughs 51-52 and left43 left, each fixed with a test: a fact whose value moved under its unchanged
citation gets a ``cites`` entry saying so; ``audit LOCK`` of a stack lock names the card facts its fit reads; a
review's ``sources_changed`` follows a card a stack's fit rests on; a serving re-pointed between routing records
named by a file path compares the two records' facts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke


def test_a_value_moved_under_its_unchanged_citation_is_cited_as_such() -> None:
    # Walkthrough 46's routing.hot_share 0.9 → 0.85, the same source and locator: no entry on the lock's cites line
    # (tests/test_walk46.py reviews the real change); here the cases of one fact: value moved, unit re-written only.
    from types import SimpleNamespace

    import attrs

    from passprice.diff import _cites, _lock_cite
    from passprice.registry import Root
    from passprice.routing import load_routing

    old = load_routing(Root(REPO), "qwen3-30b-a3b-measured").facts()["routing.hot_share"]
    assert (old.value, old.source) == (0.9, "gpu-container-handbook-routing-derisk")
    moved = attrs.evolve(old, value=0.85, amount=0.85)
    cite = _lock_cite("routing.hot_share", old, moved)
    assert cite is not None and cite[3:] == (False, None, True)  # not re-cited, not re-derived, value changed
    said = _cites(SimpleNamespace(cites=(cite,), routing_record="qwen3-30b-a3b-measured"))  # type: ignore[arg-type]
    assert said == ("routing.hot_share (qwen3-30b-a3b-measured): value changed, citation unchanged: "
                    "gpu-container-handbook-routing-derisk, the definition of hot_frac_for_coverage: the fraction of "
                    "a layer's experts that capture 90% of its…")
    # a note re-written, the figure kept: nothing to check against the source
    assert _lock_cite("routing.hot_share", old, attrs.evolve(old, note="re-read")) is None
