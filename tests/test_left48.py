"""Left48 (walk56's and attack69's leftovers, a review of fact changes in pull requests): a serving re-pointed to
another routing record, or a record's two facts changed in place, gets one ``alone`` entry for the record's facts
priced at once (walk56's step (c) read ``routing.hot_experts: tokens/s +108.3 %; routing.hot_share: refused alone
(BadRouting)`` of a +14.72 % move); the summary says an added source is one "that facts now cite"; a percentage a
locator quotes is shown as it writes it (``60 %``, not ``60%``); a figure in scientific notation is read whole
(``1e308 GB/s`` read as ``308 GB/s``). Each pinned on the library function that writes it (no git, one price a
case)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from cli_helpers import REPO, copy_root
from passprice.addedfacts import in_own_unit, other_figures, stated_with_unit
from passprice.facts import Fact, converter
from passprice.locks import Lock, read_lock
from passprice.registry import Root
from passprice.reproduce import Drift, RoutingTogether, find_checkpoint, routing_together
from passprice.review import LockImpact, PriceSide
from passprice.review.rendering import _alone, _alone_what

_SENTENCE = "'32 of the 128 experts take 60 % of the routed token-slots'"


def _share(value: float) -> Fact:
    return converter().structure({"value": value, "unit": "1", "provenance": "measured",
                                  "source": "gpu-container-handbook-routing-derisk", "locator": _SENTENCE}, Fact)


def _together(lock: Lock, today: dict[str, Fact], changed: Sequence[str], rerouted: tuple[str, str] | None,
              record: str) -> RoutingTogether | None:
    """:func:`routing_together` as the review calls it: the lock's pinned facts drifted to ``today``, the move
    against its recorded price, of the ``changed`` paths."""
    header = find_checkpoint(Root(REPO), lock)[0]
    assert header is not None
    drift = [Drift(path, lock.facts[path], fact) for path, fact in today.items()]
    return routing_together(lock, header, drift, lock.price, rerouted, record, changed)


def _impact(lock: object, alone: tuple[tuple[str, str], ...], group: RoutingTogether | None) -> LockImpact:
    side = PriceSide()
    return LockImpact("x", "locks/x.lock.toml", "c", "price", "x", "unchanged",
                      tuple(path for path, _ in alone), side, side, None, None, alone=alone,
                      routing_alone=group)  # type: ignore[arg-type]


def test_a_serving_re_pointed_to_another_routing_record_is_one_entry() -> None:
    """Walk56 (c): gpt-oss-120b-h100 from uniform to a record of hot_experts 0.25 and hot_share 0.6: +14.72 % as a
    whole, where each alone read +108.3 % and a refusal."""
    lock = read_lock(REPO / "locks" / "gpt-oss-120b-h100.lock.toml")
    changed = ("routing.hot_experts", "routing.hot_share")
    group = _together(lock, {"routing.hot_experts": _share(0.25), "routing.hot_share": _share(0.6)}, changed,
                      ("uniform", "gpt-oss-120b-chat"), "gpt-oss-120b-chat")
    assert group is not None and group.move == "tokens/s +14.72 %"
    alone = (("routing.hot_experts", "tokens/s +108.3 %"), ("routing.hot_share", "refused alone (BadRouting)"))
    impact = _impact(lock, alone, group)
    assert _alone(impact) == ("routing record uniform → gpt-oss-120b-chat as a whole (hot_experts 1 → 0.25, "
                              "hot_share 1 → 0.6): tokens/s +14.72 %")
    assert _alone_what(impact).endswith(", or the routing record's facts at once")
    document = impact.to_json()
    assert document["alone_routing"] == {
        "base": "uniform", "head": "gpt-oss-120b-chat", "move": "tokens/s +14.72 %",
        "facts": [{"path": "routing.hot_experts", "before": 1.0, "after": 0.25},
                  {"path": "routing.hot_share", "before": 1.0, "after": 0.6}]}
    assert [a["move"] for a in document["alone"]] == ["tokens/s +108.3 %", "refused alone (BadRouting)"]
    # not re-pointed, one fact of the record moved: its own alone entry says it all
    assert _together(lock, {"routing.hot_share": _share(0.6)}, changed, None, "uniform") is None


def test_a_routing_records_two_facts_changed_in_place_are_one_entry() -> None:
    """qwen3-30b-a3b-measured's hot set 58 → 50 of 128 and its share 0.9 → 0.85: -2.244 % together (+3.469 % and
    -4.894 % each alone, kept in --json's alone)."""
    lock = read_lock(REPO / "locks" / "qwen3-30b-a3b-h200.lock.toml")
    hot = attrs.evolve(lock.facts["routing.hot_experts"], value=0.390625, amount=0.390625)
    share = attrs.evolve(lock.facts["routing.hot_share"], value=0.85, amount=0.85)
    record = "qwen3-30b-a3b-measured"
    group = _together(lock, {"routing.hot_experts": hot, "routing.hot_share": share},
                      ("routing.hot_experts", "routing.hot_share"), None, record)
    assert group is not None and (group.base, group.head, group.move) == (record, record, "tokens/s -2.244 %")
    impact = _impact(lock, (("routing.hot_experts", "tokens/s +3.469 %"), ("routing.hot_share", "tokens/s -4.894 %")),
                     group)
    assert _alone(impact) == ("routing record qwen3-30b-a3b-measured's 2 facts at once (hot_experts 0.453125 → "
                              "0.390625, hot_share 0.9 → 0.85): tokens/s -2.244 %")


def test_a_percentage_is_quoted_as_the_locator_writes_it() -> None:
    """Walk56's test 5 read `its locator quotes 32 of the 128 (0.25), 60%` of `… take 60 % …`."""
    from passprice.addedfacts import asked
    from passprice.review.changes import _quoted_figures

    rel = "facts/routing/gpt-oss-120b-chat.toml"
    added = [(rel, "routing.hot_experts"), (rel, "routing.hot_share")]
    wrong = asked({rel: {"routing.hot_experts": _share(0.3), "routing.hot_share": _share(0.6)}},
                  ["gpu-container-handbook-routing-derisk"], added, _quoted_figures)
    assert wrong[(rel, "routing.hot_experts")].startswith(
        "it is 0.3 but its locator quotes 32 of the 128 (0.25), 60 %: does gpu-container-handbook-routing-derisk: ")


def test_a_figure_in_scientific_notation_is_read_whole() -> None:
    """Attack69: `1e308 GB/s` read as `308 GB/s` (the digits after the `e+` the power's rewrite left)."""
    [(shown, amount, _, _, unit)] = stated_with_unit("Bandwidth 1e308 GB/s")
    assert (shown, amount, unit) == ("1e+308 GB/s", 1e308, "GB/s")
    assert other_figures(308, "GB/s", "Bandwidth 1e308 GB/s") == ["1e+308 GB/s"]  # not its own figure
    assert other_figures(1e308, "GB/s", "Bandwidth 1e308 GB/s") == []
    assert in_own_unit(3.35, "TB/s", "'3e20 GB/s'") == ["3e+20 GB/s (3e+17 TB/s)"]  # 3e20 GB = 3e17 TB
    # past a float: no figure at all, never the exponent's digits
    assert stated_with_unit("1e+999 GB/s") == stated_with_unit("1e309 GB/s") == []
    assert stated_with_unit("4.8e12 B/s")[0][:2] == ("4800000000000 B/s", 4.8e12)  # as before


def test_reproduce_says_the_re_pointed_routing_record_as_a_whole(tmp_path: Path) -> None:
    """Left49: walk56 (c) in a copy of the registry (the record added, gpt-oss-120b-h100's serving pointed at it),
    reproduced in process: "each drifted fact alone" read ``routing.hot_experts: tokens/s +108.3 %`` and
    ``routing.hot_share: refused alone (BadRouting)``; it now says the record's +14.72 % as a whole, as the review
    does (one function, :func:`routing_together`), and ``--json`` gives it as ``facts_routing``, keeping each
    fact's own price in ``facts_alone``."""
    from passprice.reproduce import reproduce, reproduction_json, reproduction_text

    root = copy_root(tmp_path)
    (root / "facts" / "routing" / "gpt-oss-120b-chat.toml").write_text(
        "[routing]\nname = \"gpt-oss-120b chat (walk56 c)\"\n" + "".join(
            f"\n[{key}]\nvalue = {value}\nunit = \"1\"\nprovenance = \"measured\"\n"
            f"source = \"gpu-container-handbook-routing-derisk\"\nlocator = \"{_SENTENCE}\"\n"
            for key, value in (("hot_experts", 0.25), ("hot_share", 0.6))), encoding="utf-8")
    serving = root / "registry" / "servings" / "gpt-oss-120b-h100.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace('routing = "uniform"',
                                                                   'routing = "gpt-oss-120b-chat"'), encoding="utf-8")
    rep = reproduce(Root(root), read_lock(root / "locks" / "gpt-oss-120b-h100.lock.toml"))
    lines = reproduction_text(rep, "locks/gpt-oss-120b-h100.lock.toml").splitlines()
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's, or the routing record's "
                     "facts at once):")
    assert lines[at + 1:] == ["    routing record uniform → gpt-oss-120b-chat as a whole (hot_experts 1 → 0.25, "
                              "hot_share 1 → 0.6): tokens/s +14.72 %"]
    assert lines[at - 1] == "  first term that moved with today's inputs: weight_bytes; tokens/s +14.72 %"
    document = reproduction_json(rep)
    assert document["facts_routing"] == {
        "base": "uniform", "head": "gpt-oss-120b-chat", "move": "tokens/s +14.72 %",
        "facts": [{"path": "routing.hot_experts", "before": 1.0, "after": 0.25},
                  {"path": "routing.hot_share", "before": 1.0, "after": 0.6}]}
    assert [(a["path"], a["first_moved"], a["price"].get("refusal")) for a in document["facts_alone"]] == [
        ("routing.hot_experts", "tokens_per_s", None), ("routing.hot_share", None, "BadRouting")]
    # the lock as it stands, nothing drifted: no entry
    assert reproduction_json(reproduce(Root(REPO), rep.lock))["facts_routing"] is None
