"""Left51 (issue 13's "review fact changes", walkthrough 57's three findings): the review's change column names
every part of a fact that changed, in ``fact set``'s words (one function, :func:`passprice.factparts.change_said`);
``reproduce`` says a moved ``host_capacity_bytes`` no sequence is held against as a pinned input, not a term of the
price; a commit-by-commit review counts a lock already out of date on BASE one way."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import copy_root, invoke
from passprice.registry import Root
from passprice.review import diff, diff_markdown, diff_text

#: Walkthrough 57's re-citation of the MI300X's memory bandwidth to ROCm's table, with a note of its own.
RECITE = ("fact", "set", "mi300x", "memory.bandwidth", "--value", "5.3", "--unit", "TB/s", "--provenance",
          "published", "--source", "amd-rocm-gpu-specs", "--locator", "MI300X row: memory bandwidth 5.3 TB/s",
          "--note", "Re-cited to ROCm's table.")


def _only_locks(root: Path, *names: str) -> None:
    """Keep only the lock files ``names`` of ``root`` (a review re-prices each lock: fewer cost less)."""
    for lock in (root / "locks").glob("*.lock.toml"):
        if lock.name.removesuffix(".lock.toml") not in names:
            lock.unlink()


def test_the_review_names_the_citation_a_re_cited_fact_changed(tmp_path: Path) -> None:
    """Before: ``fact set`` said "(citation, note changed)" and the review's change column "(note changed)", the
    citation a reviewer scans for left out. Both now say "citation, note changed"."""
    base = copy_root(tmp_path / "base")
    _only_locks(base)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    done = invoke(*RECITE, root=head)
    assert done.exit_code == 0, done.output
    assert done.stdout == ("facts/cards/mi300x.toml: memory.bandwidth: 5.3 TB/s (published) -> 5.3 TB/s (published) "
                           "(citation, note changed)\n")
    d = diff(Root(head), str(base), str(head))  # one review, said three ways
    assert "  memory.bandwidth  5.3 TB/s → 5.3 TB/s  (citation, note changed)  published" in diff_text(d).splitlines()
    assert ("| `mi300x` | `memory.bandwidth` | 5.3 TB/s | 5.3 TB/s | citation, note changed | published |"
            in diff_markdown(d))
    (change,) = [c for f in d.to_json()["files"] for c in f.get("facts", [])]
    assert change["path"] == "memory.bandwidth" and change["fields"] == ["source", "locator", "note"]


def test_reproduce_says_a_moved_host_capacity_is_a_pinned_input_not_a_term(tmp_path: Path) -> None:
    """Before: the H200's ``host.capacity`` halved (512 → 256 GiB: five locks pin it, no price reads it while no
    sequence is in host memory) read "first term that moved with today's inputs: host_capacity_bytes; tokens/s +0 %"
    in ``reproduce``, a pinned input as a moved price, though ``check --frozen`` and the review call the lock
    unaffected. Now it says what it is, and names no term of the price."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    old = '[host.capacity]\nvalue = 512\nunit = "GiB"'
    assert text.count(old) == 1
    card.write_text(text.replace(old, old.replace("512", "256")), encoding="utf-8")
    done = invoke("reproduce", "r1-qwen7b-h200", root=root)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert not any("first term that moved" in line for line in lines), done.stdout
    assert lines[-1] == (
        "  host_capacity_bytes 549,755,813,888 B → 274,877,906,944 B with today's inputs: a pinned input that moved "
        "(host.capacity), not a term of the price: no sequence is held in host memory, so the price does not read it "
        "and the lock does not guarantee it (no drift: check --frozen and the review call the lock unaffected)")
    assert ("    facts          unchanged (of those the price reads); no drift in 1 pinned fact changed today that "
            "it does not read: host.capacity (value changed)") in lines


def test_a_commit_touching_no_lock_counts_those_out_of_date_on_base_as_such(tmp_path: Path) -> None:
    """Before: reviewing only a commit that adds a checkpoint, on a BASE whose H200 capacity was changed without
    re-locking and whose MI300X bandwidth was re-cited without re-pinning, read "no fact changed; 1 checkpoint entry
    added; 1 lock affected, 1 out of date already on BASE; 1 warning of check on HEAD; 2 locks unaffected" (the
    MI300X lock, to re-pin already on BASE, among the unaffected). Now neither is affected: both are out of date
    already on BASE, counted by kind."""
    base = copy_root(tmp_path / "base")
    _only_locks(base, "r1-qwen7b-h200", "r1-qwen7b-mi300x-int8kv", "gemma3-270m-h100")
    h200 = base / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = h200.read_text(encoding="utf-8")
    assert text.count("[memory.capacity]\nvalue = 141\n") == 1
    h200.write_text(text.replace("[memory.capacity]\nvalue = 141\n", "[memory.capacity]\nvalue = 140\n"),
                    encoding="utf-8")
    mi300x = base / "facts" / "cards" / "mi300x.toml"
    text = mi300x.read_text(encoding="utf-8")
    old = "locator = \"memory section: '5.3 TB/s peak theoretical memory bandwidth'"
    assert text.count(old) == 1
    mi300x.write_text(text.replace(old, old.replace("memory section", "Memory section")), encoding="utf-8")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    entry = head / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"
    copied = entry.read_text(encoding="utf-8").replace('name = "gemma3-270m-q4_k_m"', 'name = "gemma-copy"', 1)
    assert 'name = "gemma-copy"' in copied
    (head / "registry" / "checkpoints" / "gemma-copy.toml").write_text(copied, encoding="utf-8")
    d = diff(Root(head), str(base), str(head))
    assert d.summary().startswith(
        "no fact changed; 1 checkpoint entry added; no lock affected; 2 locks out of date already on BASE, which this "
        "change does not touch: 1 recording a price BASE's inputs no longer give (re-lock), 1 pinning facts as BASE "
        "no longer holds them (re-pin);"), d.summary()
    assert d.summary().endswith("; 1 lock unaffected"), d.summary()
    lines = diff_text(d).splitlines()
    assert "locks affected" not in lines
    at = lines.index("locks out of date already on BASE (this change does not touch them)")
    assert lines[at + 1].startswith("  r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml, card h200_sxm_141gb, price): "
                                    "out of date already on BASE (capacity_bytes): re-lock it")
    assert ("  r1-qwen7b-mi300x-int8kv (locks/r1-qwen7b-mi300x-int8kv.lock.toml, card mi300x, price): out of date "
            "already on BASE: pins memory.bandwidth as BASE's registry no longer holds it, the price unmoved: re-pin "
            "(passprice lock --update -o locks/r1-qwen7b-mi300x-int8kv.lock.toml; check --frozen fails until then)"
            ) in lines
    data = d.to_json()
    assert data["behind"] == ["r1-qwen7b-h200", "r1-qwen7b-mi300x-int8kv"]
    assert data["unaffected"] == ["gemma3-270m-h100"]
    by_name = {lock["name"]: lock for lock in data["locks"]}
    assert by_name["r1-qwen7b-mi300x-int8kv"]["base_drift"] == ["memory.bandwidth"]
    assert by_name["r1-qwen7b-h200"]["behind"] and by_name["r1-qwen7b-h200"]["stale"] == "capacity_bytes"
