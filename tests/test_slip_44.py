"""Slip 44 (issue 13: what a lock pins and what ``price --lock`` says), each reproduced first.

1. A routing record's or drafting method's title and note were pinned by no lock, yet a price prints the routing
   note: ``facts/routing/qwen3-30b-a3b-measured.toml`` retitled and re-noted passed ``check --frozen`` (exit 0,
   "drift: none"), ``reproduce`` and ``price --lock`` silently. A lock now pins them (``[routing]``, ``[draft]``);
   a lock written before (the shipped ones until re-locked) pins neither and says nothing of them.
2. ``roofline``, ``simulate``, ``max-batch`` and ``sweep`` under a lock said neither the relabel nor the drift
   ``price`` and ``best`` say (slip 43).
3. A source's document changed: the review read "no lock affected; 8 locks unaffected" beside a to-verify line
   naming 4 locked prices resting on the source.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from cli_helpers import copy_root, invoke
from test_diff import commit_all, git
from test_slip_34 import H200, branch, registry, renderings
from test_slip_42 import TITLE, retitle
from test_slip_43 import PAD, lock_lines

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"
MTP = "facts/drafts/qwen35-mtp.toml"
QWEN3 = "locks/qwen3-30b-a3b-h200.lock.toml"
QWEN35 = "locks/qwen35-27b-h200-mtp.lock.toml"
R1 = "locks/r1-qwen7b-h200.lock.toml"
OLD_TITLE = "Qwen3-30B-A3B, measured skew (single-domain Python, ~8k tokens)"
NEW_TITLE = "Qwen3-30B-A3B, measured skew (diverse prose)"
RETITLED = f"routing.title: {OLD_TITLE!r} → {NEW_TITLE!r} (the lock pinned the old)"
RENOTED = "routing.note: [ → Rewritten. ]The source counts, p… (the lock pinned the old)"
METHOD = "Qwen3.5 MTP block (up to three drafts, the block reused)"
BANDWIDTH = "memory.bandwidth: 4.8 TB/s (published) → 4.8 TB/s (published) (citation changed)"


def relabel_routing(root: Path) -> None:
    """The Qwen3-30B-A3B routing record retitled and its note rewritten (its figures kept)."""
    record = root / ROUTING
    text = record.read_text(encoding="utf-8")
    assert f'name = "{OLD_TITLE}"\n' in text and '\nnote = "The source counts' in text
    text = text.replace(f'name = "{OLD_TITLE}"\n', f'name = "{NEW_TITLE}"\n', 1)
    record.write_text(text.replace('\nnote = "The source counts', '\nnote = "Rewritten. The source counts', 1),
                      encoding="utf-8")


def relock(root: Path, serving: str, lock: str) -> None:
    """``serving`` locked anew into ``lock`` (inside ``root``) by this code: a lock that pins what it pins today."""
    result = invoke("lock", serving, "--force", "-o", str(root / lock), root=root)
    assert result.exit_code == 0, result.output


def recite(root: Path) -> None:
    """The H200's bandwidth re-cited (its value kept): drift, no number moved (as slip 43's test 3)."""
    card = root / H200
    old = ("locator = \"Specifications table, H200 SXM column (a row: its label, "
           "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"")
    text = card.read_text(encoding="utf-8")
    assert old in text
    card.write_text(text.replace(old, "locator = \"Spec table: 'GPU Memory Bandwidth 4.8TB/s'\"", 1), encoding="utf-8")


def test_1_a_lock_pins_its_routing_record_and_drafting_method(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    relock(root, "qwen3-30b-a3b-h200", QWEN3)
    relock(root, "qwen35-27b-h200-mtp", QWEN35)
    relock(root, "r1-qwen7b-h200", R1)
    routing = tomllib.loads((root / QWEN3).read_text(encoding="utf-8"))
    note = tomllib.loads((root / ROUTING).read_text(encoding="utf-8"))["routing"]["note"]
    assert routing["routing"] == {"name": "qwen3-30b-a3b-measured", "title": OLD_TITLE, "note": note}
    assert "draft" not in routing
    drafted = tomllib.loads((root / QWEN35).read_text(encoding="utf-8"))
    assert drafted["draft"]["name"] == "qwen35-mtp" and drafted["draft"]["title"] == METHOD
    assert drafted["draft"]["note"].startswith("As far as we know Qwen publishes no per-draft acceptance rate")
    assert "routing" not in drafted  # a dense checkpoint: no routing figure pinned, no record
    plain = tomllib.loads((root / R1).read_text(encoding="utf-8"))
    assert "routing" not in plain and "draft" not in plain
    frozen = invoke("check", "--frozen", root=root)  # a fresh lock reads back and holds
    assert "lock qwen3-30b-a3b-h200 (locks/qwen3-30b-a3b-h200.lock.toml, locks serving qwen3-30b-a3b-h200): ok" \
        in frozen.stdout.splitlines()


def test_1_a_routing_record_relabelled_under_a_lock_is_said_by_check_reproduce_and_price(tmp_path: Path) -> None:
    # Before: check --frozen exit 0 ("drift: none"), reproduce "reproduces exactly", price --lock "floors hold, and
    # the price is the one qwen3-30b-a3b-h200 records" and nothing more.
    root = copy_root(tmp_path)
    relock(root, "qwen3-30b-a3b-h200", QWEN3)
    relabel_routing(root)
    price = invoke("price", "--lock", str(root / QWEN3), root=root)
    assert price.exit_code == 0, price.output
    assert lock_lines(price.stdout) == [
        f"  lock          under lock qwen3-30b-a3b-h200 ({QWEN3}): floors hold, and the price is the one "
        "qwen3-30b-a3b-h200 records; relabelled since the lock (below)",
        f"{PAD}relabelled since the lock: {RETITLED}",
        f"{PAD}relabelled since the lock: {RENOTED}",
    ]
    out = json.loads(invoke("price", "--lock", str(root / QWEN3), "--json", root=root).stdout)
    assert out["lock"]["relabelled"] == [RETITLED, RENOTED] and out["lock"]["drifted"] == []
    assert round(out["tokens_per_s"], 1) == 10354.4  # no number moves
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1, frozen.output
    lines = frozen.stdout.splitlines()
    at = lines.index("lock qwen3-30b-a3b-h200 (locks/qwen3-30b-a3b-h200.lock.toml, locks serving "
                     "qwen3-30b-a3b-h200): FAILS")
    assert lines[at + 5:at + 8] == ["  drift (an error with --frozen):", f"    {RETITLED}", f"    {RENOTED}"]
    reproduced = json.loads(invoke("reproduce", str(root / QWEN3), "--json", root=root).stdout)
    assert reproduced["relabelled"] == [RETITLED, RENOTED]


def test_1_a_drafting_method_retitled_under_a_lock_is_said(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    relock(root, "qwen35-27b-h200-mtp", QWEN35)
    method = root / MTP
    method.write_text(method.read_text(encoding="utf-8").replace(f'name = "{METHOD}"', 'name = "Qwen3.5 MTP"', 1),
                      encoding="utf-8")
    said = f"draft.title: {METHOD!r} → 'Qwen3.5 MTP' (the lock pinned the old)"
    result = invoke("price", "qwen35-27b-h200-mtp", root=root)
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout)[1:] == [f"{PAD}relabelled since the lock: {said}"]
    assert json.loads(invoke("reproduce", str(root / QWEN35), "--json", root=root).stdout)["relabelled"] == [said]


def test_1_a_lock_made_before_pins_neither_and_says_nothing(tmp_path: Path) -> None:
    # A lock made before slip round 44 (no [routing] table: the shipped lock as it was until 5d82536, written again
    # without it and digested as passprice writes a lock): as before, nothing is said of the record.
    import attrs

    from passprice.locks import lock_text, read_lock

    root = copy_root(tmp_path)
    assert "\n[routing]\n" in (root / QWEN3).read_text(encoding="utf-8")  # the shipped lock pins it since 5d82536
    (root / QWEN3).write_text(lock_text(attrs.evolve(read_lock(root / QWEN3), routing=None)), encoding="utf-8")
    assert "\n[routing]\n" not in (root / QWEN3).read_text(encoding="utf-8")
    relabel_routing(root)
    price = invoke("price", "--lock", str(root / QWEN3), root=root)
    assert price.exit_code == 0, price.output
    assert lock_lines(price.stdout) == [
        f"  lock          under lock qwen3-30b-a3b-h200 ({QWEN3}): floors hold, and the price is the one "
        "qwen3-30b-a3b-h200 records"
    ]
    assert json.loads(invoke("reproduce", str(root / QWEN3), "--json", root=root).stdout)["relabelled"] == []
    checked = invoke("check", root=root)
    assert "routing.title" not in checked.stdout and "routing.note" not in checked.stdout


def test_1_the_review_names_the_lock_pinning_the_old_title(registry: Path) -> None:
    # Before: "[routing] changed: name, note; ... no lock affected" whichever lock priced with the record.
    path = branch(registry, "s44-base")
    relock(path, "qwen3-30b-a3b-h200", QWEN3)  # the shipped lock pins the record since 5d82536: nothing to commit
    assert "\n[routing]\n" in (path / QWEN3).read_text(encoding="utf-8") and not git(path, "status", "--porcelain")
    git(path, "checkout", "-q", "-b", "s44-relabelled")
    relabel_routing(path)
    commit_all(path, "the routing record retitled and re-noted")
    result = invoke("diff", "s44-base", "HEAD", root=path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == ("no fact changed; 1 record retitled or re-noted under a locked price, to verify; 1 lock "
                        "affected, 1 to re-pin (lock --update) for check --frozen; 9 locks unaffected")
    assert ("  qwen3-30b-a3b-h200 (locks/qwen3-30b-a3b-h200.lock.toml, card h200_sxm_141gb, price): pins "
            "routing.title, routing.note as before the change, the price unmoved by it: re-pin (passprice lock "
            "--update -o locks/qwen3-30b-a3b-h200.lock.toml; check --frozen fails until then)") in lines
    verify = next(line for line in lines if line.startswith("  to verify: routing record"))
    assert "(qwen3-30b-a3b-h200 pins it as before the change: re-pin (passprice lock --update); a price prints the " \
           "note, audit shows it)" in verify


def test_2_roofline_and_simulate_under_a_lock_say_a_card_retitled(tmp_path: Path) -> None:
    # Before: "floors hold; the serving is the locked one, its prices not compared …" and nothing more.
    root = copy_root(tmp_path)
    card = root / H200
    card.write_text(retitle(card.read_text(encoding="utf-8")), encoding="utf-8")
    head = (f"under lock r1-qwen7b-h200 ({R1}): floors hold; the serving is the locked one, its prices not compared "
            "with the locked ones (`passprice reproduce r1-qwen7b-h200` compares them); relabelled since the lock "
            "(below)")
    roof = invoke("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--lock", R1, root=root)
    assert roof.exit_code == 0, roof.output
    lines = roof.stdout.splitlines()
    assert lines[-2:] == [f"  lock: {head}", f"{PAD}relabelled since the lock: {TITLE}"]
    assert json.loads(invoke("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--lock", R1, "--json",
                             root=root).stdout)["lock"]["relabelled"] == [TITLE]
    sim = invoke("simulate", "r1-qwen7b-h200", "--synthetic", "8", "--lock", R1, root=root)
    assert sim.exit_code == 0, sim.output
    assert sim.stdout.splitlines()[-2:] == [f"  lock        {head}", f"{PAD}relabelled since the lock: {TITLE}"]
    out = json.loads(invoke("simulate", "r1-qwen7b-h200", "--synthetic", "8", "--lock", R1, "--json",
                            root=root).stdout)
    assert (out["lock"]["relabelled"], out["lock"]["drifted"]) == ([TITLE], [])


def test_2_max_batch_and_sweep_under_a_lock_say_a_citation_changed(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    recite(root)
    result = invoke("max-batch", "r1-qwen7b-h200", "--lock", R1, root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-2:] == [
        f"  lock  under lock r1-qwen7b-h200 ({R1}): floors hold; the serving is the locked one, its prices not "
        "compared with the locked ones (`passprice reproduce r1-qwen7b-h200` compares them); drifted since the lock "
        "(below)",
        f"{PAD}drifted since the lock: {BANDWIDTH}",
    ]
    lock = json.loads(invoke("max-batch", "r1-qwen7b-h200", "--lock", R1, "--json", root=root).stdout)["lock"]
    assert (lock["drifted"], lock["relabelled"]) == ([BANDWIDTH], [])
    swept = invoke("sweep", "r1-qwen7b-h200", "--batches", "1,2", "-o", str(tmp_path / "rows.csv"), root=root)
    assert swept.exit_code == 0, swept.output
    # under the serving's three locks (the third made under llamacpp-cuda-2405: stacklock 29), each line prefixed
    # by its lock
    assert swept.stderr.splitlines()[-4:] == [
        "passprice: r1-qwen7b-h200: under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best "
        "(locks/r1-qwen7b-h200-best.lock.toml), r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml): "
        "floors hold; the serving is the locked one, its prices not compared with the locked ones (`passprice "
        "reproduce r1-qwen7b-h200` compares them); drifted since the lock (below)",
        f"{PAD}drifted since the lock: r1-qwen7b-h200: {BANDWIDTH}",
        f"{PAD}drifted since the lock: r1-qwen7b-h200-best: {BANDWIDTH}",
        f"{PAD}drifted since the lock: r1-qwen7b-h200-llamacpp: {BANDWIDTH}",
    ]


def test_2_an_unchanged_lock_says_nothing_more() -> None:
    result = invoke("max-batch", "r1-qwen7b-h200", "--lock", R1)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].endswith("(`passprice reproduce r1-qwen7b-h200` compares them)")
    lock = json.loads(invoke("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--lock", R1, "--json").stdout)["lock"]
    assert (lock["relabelled"], lock["drifted"]) == ([], [])


def test_3_locks_resting_on_a_changed_source_are_not_counted_unaffected(registry: Path) -> None:
    path = branch(registry, "s44-retrieved")
    record = path / "sources" / "nvidia-h200-datasheet.toml"
    record.write_text(record.read_text().replace('retrieved = "unknown"', 'retrieved = "2026-11-30"'))
    commit_all(path, "retrieved anew")
    status, (text, as_json, markdown) = renderings(path, "text", "json", "markdown")  # one review
    out = json.loads(as_json)
    assert status == 0, text
    resting = ["qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200", "r1-qwen7b-h200-best",
               "r1-qwen7b-h200-llamacpp"]  # by name (left53: r1-qwen7b-h200 was last)
    assert text.splitlines()[1] == (
        "no fact changed; 1 source record changed; 1 source whose document changed, to verify (under 5 locked "
        "prices); no lock affected; 5 locks resting on a source whose document changed, to verify; 5 locks unaffected"
    )
    assert (f"5 locks resting on a source whose document changed, to verify (sources below): {', '.join(resting)}"
            in text.splitlines())
    assert out["on_changed_sources"] == resting
    assert out["unaffected"] == ["gemma3-270m-h100", "gpt-oss-120b-h100", "qwen35-27b-h100-every8",
                                 "qwen35-27b-ws1-trailing", "r1-qwen7b-mi300x-int8kv"]
    # (under the source it rests on since session 27: tests/test_leftovers_27.py)
    assert "- ⚠️ 5 locks resting on a source whose document changed, to verify (the sources above): " \
           "`qwen3-30b-a3b-h200`" in markdown


def test_2_speculate_under_a_lock_says_a_drafting_method_retitled(tmp_path: Path) -> None:
    """``speculate`` under a lock said "floors hold …" alone after the drafting method the lock pins was retitled
    (session 26: the last pricing command without slip 44's lines); it says it as ``price`` does. Its serving is
    resolved without the draft (it varies the draft length itself), so today's acceptance facts are the method's: a
    first wiring read the pinned ``draft.acceptance.1`` as "0.85 (estimated) → gone"."""
    root = copy_root(tmp_path)
    plain = invoke("speculate", "qwen35-27b-h200-mtp", "--tokens", "1,2", root=root)
    assert plain.exit_code == 0, plain.output
    assert "since the lock" not in plain.stdout  # unchanged: no false drift of the method's acceptance facts
    method = root / MTP
    method.write_text(method.read_text(encoding="utf-8").replace(f'name = "{METHOD}"', 'name = "Qwen3.5 MTP"', 1),
                      encoding="utf-8")
    said = f"draft.title: {METHOD!r} → 'Qwen3.5 MTP' (the lock pinned the old)"
    result = invoke("speculate", "qwen35-27b-h200-mtp", "--tokens", "1,2", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # (no "serving differs … draft: … → (none)" line since session 27: tests/test_leftovers_27.py, item 6)
    assert lines[-2] == ("  lock: under lock qwen35-27b-h200-mtp (locks/qwen35-27b-h200-mtp.lock.toml): floors hold; "
                         "the serving is the locked one, its prices not compared with the locked ones (`passprice "
                         "reproduce qwen35-27b-h200-mtp` compares them); relabelled since the lock (below)")
    assert lines[-1] == f"{PAD}relabelled since the lock: {said}"
    out = json.loads(invoke("speculate", "qwen35-27b-h200-mtp", "--tokens", "1,2", "--json", root=root).stdout)
    assert (out["lock"]["relabelled"], out["lock"]["drifted"]) == ([said], [])
