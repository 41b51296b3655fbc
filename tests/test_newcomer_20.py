"""Newcomer walkthrough 20: reproducing historic prices from locks, and finding which change moved a drifted one.

What a new user, reading only the README, could not answer, each kept as a test:

- ``reproduce``'s "each drifted fact alone" lines read ``tokens/s unchanged`` for every drifted fact of an array-bound
  lock whose ``memory_s`` and ``capacity_bytes`` had moved, so nothing said which fact moved which figure: each such
  line now names the first figure that fact alone moved, recorded → alone (as ``diff`` does for a lock row).
- A lock whose drifted fact fell below its floor read ``reproduces exactly`` (exit 0) and nothing about the floor,
  while ``check`` failed it: ``reproduce`` now has a ``floors`` line (and ``floors`` in ``--json``).
- Today's column of a lock priced on stream shares derived from a bandwidth since raised was shown unmarked (``price``
  and ``diff`` mark it): a ``stale`` line names them.
- The README did not say how to recover a lock's price with the code that wrote it (only ``reproduce``'s verdict
  did), nor how to list the commits since a lock; and it did not say that a lock's ``sequence_bytes`` is one
  sequence's, its ``rewrite_bytes`` included. Two recorded prices are checked here by hand from the lock files.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from cli_helpers import LISTED_MODEL, REPO, copy_root, invoke

H200 = "h200_sxm_141gb"


def _set(root: Path, path: str, value: str, unit: str, provenance: str = "published") -> None:
    out = invoke("fact", "set", H200, path, "--value", value, "--unit", unit, "--provenance", provenance,
                 "--source", "nvidia-h200-datasheet", "--locator", "walkthrough 20's figure", root=root)  # fmt: skip
    assert out.exit_code == 0, out.output


def _lock(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _value(lock: dict[str, Any], path: str) -> float:
    return float(lock["facts"][path]["value"])


def test_a_drifted_fact_that_moves_no_tokens_names_the_figure_it_moved(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    mine = root / "locks" / "my-chat.lock.toml"
    out = invoke("lock", "qwen35-27b-h200-chat", "-o", str(mine), root=root)
    assert out.exit_code == 0, out.output
    _set(root, "memory.bandwidth", "5.2", "TB/s")
    _set(root, "memory.capacity", "150", "GB")
    _set(root, "streams.rewrite", "0.8", "1", "estimated")
    out = invoke("reproduce", str(mine), root=root)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's):")
    price = _lock(mine)["price"]
    assert price["binds"] == "array" and price["batch"] == 256
    # The array binds at 256 sequences, so no drifted fact moves tokens/s; each moves a figure of its own.
    # 4.8 → 5.2 TB/s: memory_s × 4.8 / 5.2 (-7.692 %); 141 → 150 GB: capacity_bytes +6.383 %.
    memory_s = price["memory_s"]
    assert f"{memory_s * 1e3:.4g}" == "23.26" and f"{memory_s * 4.8 / 5.2 * 1e3:.4g}" == "21.47"
    assert lines[at + 1] == "    memory.bandwidth: tokens/s unchanged (memory_s 23.26 ms → 21.47 ms, -7.692 %)"
    assert lines[at + 2] == "    memory.capacity: tokens/s unchanged (capacity_bytes 141 GB → 150 GB, +6.383 %)"
    # 0.8333 → 0.8: each sequence's rewritten state (rewrite_bytes, one sequence's) is read and written at the
    # lower share: + 256 × R / 4.8 TB/s × (1 / 0.8 - 1 / 0.8333).
    rewrite = 256 * price["rewrite_bytes"] / 4.8e12 * (1 / 0.8 - 1 / 0.8333)
    now = memory_s + rewrite
    assert f"{now * 1e3:.4g}" == "23.56" and f"{100 * (now / memory_s - 1):+.4g}" == "+1.254"
    assert lines[at + 3] == "    streams.rewrite: tokens/s unchanged (memory_s 23.26 ms → 23.56 ms, +1.254 %)"
    # Programs get the same answer: each fact alone's first moved figure.
    data = json.loads(invoke("reproduce", str(mine), "--json", root=root).stdout)
    assert [(a["path"], a["first_moved"]) for a in data["facts_alone"]] == [
        ("memory.bandwidth", "memory_s"), ("memory.capacity", "capacity_bytes"), ("streams.rewrite", "memory_s")]
    assert abs(data["facts_alone"][0]["price"]["memory_s"] / (memory_s * 4.8 / 5.2) - 1) < 1e-12


def test_reproduce_says_a_broken_floor_and_still_reproduces(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _set(root, "streams.rewrite", "0.8", "1", "estimated")
    lock = "locks/qwen35-27b-h200-mtp.lock.toml"
    out = invoke("reproduce", lock, root=root)
    assert out.exit_code == 0, out.output  # the recorded price still follows from the pins
    assert (
        "    floors         BROKEN today: streams.rewrite is estimated, below the floor measured — the recorded "
        "price still follows from the pins, but the lock no longer holds (`passprice check` fails it)"
    ) in out.stdout.splitlines()
    floors = json.loads(invoke("reproduce", lock, "--json", root=root).stdout)["floors"]
    assert floors["refusal"] == "LockFloor"
    assert floors["offending"] == [{"path": "streams.rewrite", "provenance": "estimated", "floor": "measured"}]
    assert invoke("check", root=root).exit_code == 1  # as the line says
    # A lock that holds says so, with today's weakest provenance (r1-qwen7b-h200's: scale, estimated).
    held = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert "    floors         hold (today's weakest provenance is estimated)" in held.stdout.splitlines()


def test_reproduce_marks_todays_column_resting_on_stale_derived_facts(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _set(root, "memory.bandwidth", "5.2", "TB/s")
    out = invoke("reproduce", "locks/r1-qwen7b-h200-best.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    # streams.read = dot / bandwidth = 4.48 / 5.2 = 0.8615; streams.append = triad / bandwidth = 4.15 / 5.2 = 0.7981.
    assert f"{4.48 / 5.2:.4g}" == "0.8615" and f"{4.15 / 5.2:.4g}" == "0.7981"
    assert (
        "    stale          streams.read, streams.append are stale derived facts: input memory.bandwidth 4.8 TB/s "
        "when derived, 5.2 TB/s now — priced on their written values (streams.read 0.9333, recomputed 0.8615; "
        "streams.append 0.8646, recomputed 0.7981); `passprice check` names each (today's inputs column rests on "
        "them)"
    ) in out.stdout.splitlines()
    quiet = invoke("reproduce", "locks/r1-qwen7b-h200-best.lock.toml")
    assert "    stale  " not in quiet.stdout


def test_two_recorded_prices_by_hand_from_their_lock_files() -> None:
    # The MI300X lock, batch 1: weights at bandwidth × streams.read, the sequence at bandwidth × streams.append.
    lock = _lock(REPO / "locks" / "r1-qwen7b-mi300x-int8kv.lock.toml")
    price, bw = lock["price"], _value(lock, "memory.bandwidth") * 1e12
    assert (bw, _value(lock, "streams.read"), _value(lock, "streams.append")) == (5.3e12, 0.7302, 0.7717)
    memory_s = 4370560992 / (bw * 0.7302) + 234909696 / (bw * 0.7717)
    assert (price["weight_bytes"], price["sequence_bytes"], price["batch"]) == (4370560992, 234909696, 1)
    assert memory_s == price["memory_s"] == price["pass_s"]  # bit for bit
    assert 1 / memory_s == price["tokens_per_s"] == 842.629353984204
    # The Gated-DeltaNet hybrid, batch 16 drafting 2 tokens: sequence_bytes is one sequence's, its rewrite_bytes
    # (the recurrent state, rewritten in place at streams.rewrite) included; 2.4875 tokens emitted a sequence.
    lock = _lock(REPO / "locks" / "qwen35-27b-h200-mtp.lock.toml")
    price, bw = lock["price"], _value(lock, "memory.bandwidth") * 1e12
    assert (_value(lock, "streams.read"), _value(lock, "streams.append"), _value(lock, "streams.rewrite")) == (
        0.9333, 0.8646, 0.8333)  # fmt: skip
    w, s, r = 17032543232, 1823940608, 603979776
    assert (price["weight_bytes"], price["sequence_bytes"], price["rewrite_bytes"]) == (w, s, r)
    memory_s = w / (bw * 0.9333) + 16 * ((s - r) / (bw * 0.8646) + r / (bw * 0.8333))
    assert memory_s == price["memory_s"] == price["pass_s"] and price["binds"] == "memory"
    assert 16 * 2.4875 / memory_s == price["tokens_per_s"] == 3644.210997903983
    assert f"{w / (bw * 0.9333) * 1e3:.4g} ms" == "3.802 ms"
    assert f"{(s - r) / (bw * 0.8646) * 1e6:.4g} µs + {r / (bw * 0.8333) * 1e6:.4g} µs" == "294 µs + 151 µs"


def test_readme_says_how_to_recover_a_lock_and_list_the_commits_since() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert "**The price a lock recorded, from the code that wrote it.**" in text
    assert "C=$(git log -1 --format=%H -- locks/r1-qwen7b-h200-best.lock.toml)\n" in text
    assert "git worktree add --detach ../at-lock \"$C\"\n" in text
    assert "(cd ../at-lock && .venv/bin/passprice reproduce locks/r1-qwen7b-h200-best.lock.toml)" in text
    # reproduce's own verdict names the same commit, so the README and the output agree.
    assert "git log -1 --format=%H -- " in (REPO / "src" / "passprice" / "reproduce.py").read_text(encoding="utf-8")
    assert '`git log --oneline "$(git log -1 --format=%H -- LOCK)"..HEAD -- facts/ registry/`' in " ".join(
        text.split("\n"))
    flat = " ".join(text.split())
    assert "`sequence_bytes` for one sequence, its `rewrite_bytes` of recurrent state included" in flat
    assert ("= 3.802 ms + 16 × (294.0 µs + 151.0 µs) = 10.92 ms, and 16 × 2.4875 / 10.92 ms = 3,644.2 tokens/s"
            in flat)
    assert "`streams.rewrite: tokens/s unchanged (memory_s 23.26 ms → 23.56 ms, +1.254 %)`" in flat


def test_the_readme_s_alone_figures_are_what_reproduce_prints(tmp_path: Path) -> None:
    # The README quoted "+4.167 %" for memory.bandwidth alone with no bandwidth named; its own what-if raises it to
    # 5.2 TB/s, which reads +8.333 % (5.2 / 4.8 - 1), and 5 TB/s +4.167 % (5 / 4.8 - 1).
    flat = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("(with `memory.bandwidth` raised 4.8 → 5 TB/s and `memory.capacity` 141 → 150 GB, `r1-qwen7b-h200-best` "
            "reads `memory.bandwidth: tokens/s +4.167 %` and `memory.capacity: tokens/s +0.346 % (batch 580 → 618)`; "
            "at 5.2 TB/s, the what-if below, `+8.333 %`; `facts_alone` in `--json`, each fact's price alone and its "
            "`first_moved`") in flat
    assert f"{100 * (5.2 / 4.8 - 1):+.4g}" == "+8.333" and f"{100 * (5 / 4.8 - 1):+.4g}" == "+4.167"
    root = copy_root(tmp_path)
    _set(root, "memory.bandwidth", "5.2", "TB/s")
    _set(root, "memory.capacity", "150", "GB")
    lines = invoke("reproduce", "locks/r1-qwen7b-h200-best.lock.toml", root=root).stdout.splitlines()
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's):")
    assert lines[at + 1 : at + 3] == [
        "    memory.bandwidth: tokens/s +8.333 %",
        "    memory.capacity: tokens/s +0.346 % (batch 580 → 618)",
    ]


def _redigested(path: Path, table: str, key: str, value: object) -> None:
    """``path``'s lock with ``[table] key = value`` and its digest computed again (as test_hostile_28 writes it)."""
    import tomlkit

    from passprice.digests import sha256
    from passprice.locks import _PREAMBLE, _canonical, lock_document, read_lock

    body = lock_document(read_lock(path))
    body[table][key] = value
    del body["lock"]["digest"]
    body["lock"]["digest"] = "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest()
    path.write_text(_PREAMBLE + tomlkit.dumps(body), encoding="utf-8")


def test_a_registry_of_ones_own_is_told_where_the_code_that_wrote_a_lock_is(tmp_path: Path) -> None:
    # In a registry made by `passprice init` (no src/passprice) the verdict sent the reader to "the passprice of the
    # commit that last changed the lock", a commit holding no passprice; its requirements.txt names the one it ran.
    root = copy_root(tmp_path)
    lock = root / "locks" / "r1-qwen7b-h200-best.lock.toml"
    recorded = _lock(lock)["price"]["vector_macs"]
    _redigested(lock, "lock", "pricing_model", LISTED_MODEL)  # written by other code …
    _redigested(lock, "price", "vector_macs", recorded + 1.0)  # … that counted another figure
    out = invoke("reproduce", str(lock), root=root)
    assert out.exit_code == 1, out.output
    assert out.stdout.splitlines()[1] == (
        "  does NOT reproduce: the pricing model changed and moves the price (first: vector_macs); the lock's own "
        "price comes from the code that wrote it: the passprice this registry's requirements.txt named at the commit "
        f"that last changed the lock (`git show \"$(git log -1 --format=%H -- {lock})\":requirements.txt`), "
        "installed in a virtual environment of its own; or re-lock it with today's code (`passprice lock --update -o "
        f"{lock}`) and review the change"  # walkthrough 34: was `-o LOCK`
    )
    # A checkout of passprice itself keeps the commit's own code as the answer.
    (root / "src" / "passprice").mkdir(parents=True)
    (root / "src" / "passprice" / "pins.py").write_text((REPO / "src" / "passprice" / "pins.py").read_text())
    out = invoke("reproduce", str(lock), root=root)
    assert ("the lock's own price comes from the code that wrote it: the passprice of the commit that last changed "
            f"the lock (`git log -1 --format=%H -- {lock}`)") in out.stdout


def test_readme_says_where_a_registry_of_ones_own_keeps_the_code_that_wrote_a_lock() -> None:
    flat = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ('A registry of your own (`passprice init`) holds no passprice, so its commit carries the line that '
            'installed one instead, and `reproduce` names it: `git show "$C":requirements.txt`') in flat
