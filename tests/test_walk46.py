"""Findings of the forty-sixth walkthrough: a team's pull request (a datasheet revision of the H200's bandwidth with
its stream shares recomputed, a routing record's figure and note changed, every lock re-locked) read as its reviewer
reads the comment: which changed fact moved each re-locked price, and whether the locks pin the re-noted record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke
from passprice.registry import Root
from passprice.review import Diff, diff, diff_markdown, diff_text

LOCK = "qwen3-30b-a3b-h200"
ROUTING = "qwen3-30b-a3b-measured"


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """BASE: the checkout's registry cut to one serving and its lock (so the review prices one lock, fast); HEAD: the
    H200's bandwidth 4.8 → 4.89 TB/s with its shares recomputed, its capacity re-cited at 141 GB, the routing
    record's hot_share 0.9 → 0.85 and its note rewritten, and the lock re-locked (``lock --update``), as a team's
    pull request holds them."""
    tmp = tmp_path_factory.mktemp("walk46")
    base = copy_root(tmp / "base")
    for lock in (base / "locks").iterdir():
        if lock.name != f"{LOCK}.lock.toml":
            lock.unlink()
    for serving in (base / "registry" / "servings").iterdir():
        if serving.name != f"{LOCK}.toml":
            serving.unlink()
    head = tmp / "head"
    shutil.copytree(base, head)
    edit = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.89", "--unit", "TB/s",
                  "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator",
                  "a datasheet revision: 'GPU Memory Bandwidth 4.89TB/s'", root=head)
    assert edit.exit_code == 0, edit.output
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=head).exit_code == 0
    # The revision re-cites the capacity too, its figure kept: a changed fact that alone moves nothing.
    recite = invoke("fact", "set", "h200_sxm_141gb", "memory.capacity", "--value", "141", "--unit", "GB",
                    "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator",
                    "a datasheet revision: 'GPU Memory 141GB'", root=head)
    assert recite.exit_code == 0, recite.output
    record = head / "facts" / "routing" / f"{ROUTING}.toml"
    text = record.read_text(encoding="utf-8")
    assert text.count("\nvalue = 0.9\n") == 1 and text.count('\nnote = "The source counts') == 1
    record.write_text(text.replace("\nvalue = 0.9\n", "\nvalue = 0.85\n")
                      .replace('\nnote = "The source counts', '\nnote = "Re-read: the source counts'), encoding="utf-8")
    relock = invoke("lock", "--update", "-o", str(head / "locks" / f"{LOCK}.lock.toml"), root=head)
    assert relock.exit_code == 0, relock.output
    return base, head


@pytest.fixture(scope="module")
def reviewed(review: tuple[Path, Path]) -> Diff:
    """The review of the pull request, made once in process (text, markdown and JSON are rendered from it)."""
    base, head = review
    return diff(Root(head), str(base), str(head))


@pytest.fixture(scope="module")
def as_json(reviewed: Diff) -> dict[str, Any]:
    # hot_share 0.9 → 0.85 under its unchanged locator stating "90%" was asked only (exit 0); the citation it kept
    # contradicts it, and the review fails it (tests/test_review_contradicted.py); the rest of the review is as before
    assert reviewed.to_json()["exit_status"] == 1
    assert reviewed.to_json()["contradicted"] == [f"{ROUTING}:hot_share"]
    out: dict[str, Any] = json.loads(json.dumps(reviewed.to_json()))
    return out


def test_a_relocked_price_says_which_changed_fact_moved_it(as_json: dict[str, Any]) -> None:
    # Was: the re-locked lock's row read "re-locked", its four changed paths and "-4.889 %", and no word of which
    # moved it (the `alone` moves were given only for a price moved without re-locking). The moves are BASE's lock's
    # pinned inputs with one fact as HEAD has it: by hand (tests/test_newcomer_29.py), hot_share 0.9 → 0.85 alone
    # reads D(64) 94.444 → 104.834 experts a layer, 10,354.4 → 9,847.7 tokens/s, -4.894 %; the bandwidth alone
    # 4.89 / 4.8 − 1 = +1.875 % on a memory-bound pass.
    [lock] = as_json["locks"]
    assert lock["name"] == LOCK and lock["review"] == "re-locked"
    assert lock["changed"] == ["memory.capacity", "memory.bandwidth", "streams.read", "streams.append",
                               "routing.hot_share"]
    assert f"{100 * lock['relative_change']:+.4g}" == "-4.889"
    assert lock["alone_from"] == "base"
    # memory.capacity, re-cited at the same 141 GB, moves nothing alone and is left out (as a stack fact re-fitted to
    # its own value was, eight of a re-fit's thirteen reading "tokens/s unchanged, expected tokens/s unchanged").
    assert lock["alone"] == [
        {"path": "memory.bandwidth", "move": "tokens/s +1.875 %"},
        {"path": "streams.read", "move": "tokens/s -0.9199 %"},
        {"path": "streams.append", "move": "tokens/s -0.9327 %"},
        {"path": "routing.hot_share", "move": "tokens/s -4.894 %"},
    ]


def test_the_text_and_the_comment_say_it_of_base_s_lock(reviewed: Diff) -> None:
    # Walkthrough 49: the bandwidth and the shares recomputed from it are one change, priced at once (their `alone`
    # entries read +1.875 %, -0.9199 %, -0.9327 %, as if independent); the --json `alone` list keeps each (above).
    assert ("    alone     memory.bandwidth with the 2 facts derived from it (streams.read, streams.append): tokens/s "
            "+0.00496 %; routing.hot_share: tokens/s -4.894 %  (each changed fact alone: BASE's lock's pinned inputs "
            "with only it as HEAD has it, or it with the facts derived from it)") in diff_text(reviewed).splitlines()
    assert (f"- `{LOCK}`: each changed fact alone (BASE's lock's pinned inputs with only it as HEAD has it, or it "
            "with the facts derived from it): memory.bandwidth with the 2 facts derived from it (streams.read, "
            "streams.append): tokens/s +0.00496 %; routing.hot_share: tokens/s -4.894 %"
            ) in diff_markdown(reviewed).splitlines()


def test_a_bandwidth_with_its_recomputed_shares_moves_the_price_by_what_the_streams_measured(
        as_json: dict[str, Any]) -> None:
    # By hand (the pass of tests/test_newcomer_29.py): a share is the stream's measured rate over the bandwidth (4
    # significant digits), so bandwidth × share, the rate the pass streams at, barely moves: read 4.8 × 0.9333 →
    # 4.89 × 0.9162 (4.48 / 4.89), append 4.8 × 0.8646 → 4.89 × 0.8487 (4.15 / 4.89). At hot_share 0.9, D(64) =
    # 94.444 experts a layer: weights 822,597,632 + D / 128 × 17,553,162,240 B read, 64 × 201,424,896 B appended.
    [lock] = as_json["locks"]
    [group] = lock["alone_grouped"]
    assert group["inputs"] == ["memory.bandwidth"] and group["derived"] == ["streams.read", "streams.append"]
    assert group["move"] == "tokens/s +0.00496 %"
    assert (round(4.48 / 4.89, 4), round(4.15 / 4.89, 4)) == (0.9162, 0.8487)
    d = 58 * (1 - (1 - 8 * 0.9 / 58) ** 64) + 70 * (1 - (1 - 8 * 0.1 / 70) ** 64)
    weights, appended = 822_597_632 + d / 128 * 17_553_162_240, 64 * 201_424_896

    def tokens(bandwidth: float, read: float, append: float) -> float:
        return 64 / (weights / (bandwidth * read) + appended / (bandwidth * append))

    assert round(tokens(4.8e12, 0.9333, 0.8646), 1) == 10_354.4
    assert f"{100 * (tokens(4.89e12, 0.9162, 0.8487) / tokens(4.8e12, 0.9333, 0.8646) - 1):+.3g}" == "+0.00496"


def test_a_lock_row_names_the_routing_record_and_the_citations_it_now_rests_on(reviewed: Diff) -> None:
    # Walkthrough 49: `changed routing.hot_experts` named no record (two changed records: which?), and the row gave
    # no citation (the Facts section did, under the file).
    lines = diff_text(reviewed).splitlines()
    changed = ("    changed   memory.capacity, memory.bandwidth, streams.read, streams.append, "
               f"routing.hot_share ({ROUTING})")
    # The pricing-model digest joins the list only while the checkout's locks were made by other code.
    assert any(line == changed or line.startswith(f"{changed}, pricing-model digest ") for line in lines)
    assert ("    cites     memory.capacity: nvidia-h200-datasheet, a datasheet revision: 'GPU Memory 141GB'; "
            "memory.bandwidth: nvidia-h200-datasheet, a datasheet revision: 'GPU Memory Bandwidth 4.89TB/s'; "
            # session 37: the shares `fact recompute` rewrote from the new bandwidth had no citation on the row: a
            # derived fact gives its formula and its inputs' values and citations, short
            "streams.read = dot / bandwidth [dot 4.48 TB/s: azure-ai-benchmarking-guide, "
            # left47: the quote holding an input's figure kept whole (cut at 60 characters it lost `4.48`)
            "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table… '| Dot   | 4.48              |'…; "
            "bandwidth 4.89 TB/s: fact memory.bandwidth]; streams.append = triad / bandwidth [triad 4.15 TB/s: "
            "azure-ai-benchmarking-guide, Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table… "
            "'| Triad | 4.15              |'…; bandwidth 4.89 TB/s: fact memory.bandwidth]; "
            # walk53: hot_share 0.9 → 0.85 under its unchanged source and locator had no entry: the figure to check
            f"routing.hot_share ({ROUTING}): value changed, citation unchanged: gpu-container-handbook-routing-derisk, "
            "the definition of hot_frac_for_coverage: the fraction of a layer's experts that capture 90% of its…  "
            "(as HEAD cites them; whole under the file above)") in lines
    [lock] = reviewed.to_json()["locks"]
    assert lock["routing_record"] == ROUTING
    assert [c["path"] for c in lock["cites"]] == ["memory.capacity", "memory.bandwidth", "streams.read",
                                                  "streams.append", "routing.hot_share"]
    # routing.hot_share's figure changed under the same citation and no derivation: HEAD rests on what BASE cited,
    # the number a reviewer checks against it (walk53); the capacity re-cited at 141 GB moved nothing
    assert [c["derivation"] is None for c in lock["cites"]] == [True, True, False, False, True]
    assert [c["recited"] for c in lock["cites"]] == [True, True, False, False, False]  # the shares keep theirs
    assert [c["value_changed"] for c in lock["cites"]] == [False, True, True, True, True]
    assert lock["cites"][4]["source"] == "gpu-container-handbook-routing-derisk"
    read = lock["cites"][2]["derivation"]
    assert read["formula"] == "dot / bandwidth"
    assert [(i["name"], i["value"], i["unit"], i["fact"], i["source"]) for i in read["inputs"]] == [
        ("dot", 4.48, "TB/s", None, "azure-ai-benchmarking-guide"),
        ("bandwidth", 4.89, "TB/s", "memory.bandwidth", None)]
    assert read["inputs"][0]["locator"].endswith("row '| Dot   | 4.48              |' in TB/s")  # whole in --json


def test_a_relocked_lock_pins_the_renoted_record(as_json: dict[str, Any]) -> None:
    # Was: "does it still describe what the locked prices rest on (no lock pins it; …)", though the re-locked lock's
    # [routing] table pins the new note (slip round 44).
    [(path, ask)] = as_json["relabelled_records"].items()
    assert path == f"facts/routing/{ROUTING}.toml"
    assert "no lock pins it" not in ask
    assert f"({LOCK} pins it as changed, re-locked with it; a price prints the note, audit shows it)" in ask
