"""Slip 51 (issue 13: can a change slip past a lock or a review?), aimed at a lock made under a serving stack
(``r1-qwen7b-h200`` locked under ``llamacpp-cuda-2405``, as the shipped ``r1-qwen7b-h200-llamacpp``), in a copy of
passprice's own registry.

Found: a lock re-digested to pin its stack's route ``integer_matrices = "array"`` (the stack says ``vector``; no
figure moved, since today's price reads the stack's route) read ``price --lock``: "floors hold, and the price is the
one r1-stack records", while ``check``, ``reproduce`` and the review failed it (its pinned inputs price 244.6
tokens/s, not the 237.4 it records). ``price --lock`` now compares every pin with today's registry, the routes
among them, and says a route pinned otherwise as the record not priced from its pins.

Found too: a stack file renamed with its content kept read in the review as one stack "removed" and another "added",
its 14 facts listed as added and asked "to verify", the lock made under it "not priced on HEAD" with "stack not
found" alone; and a measured runs' file renamed as one file "removed" and another "added". Both now read as renamed,
and the locks the rename touches are named.

Decided: a lock whose floors were loosened and re-digested passes ``check --frozen`` (``--frozen`` fails on what a
lock pinned that drifted, not on the lock's own policy, which no file but BASE's copy can judge); the review shows it
as a lock change a reviewer must see (⚠️, "floors loosened", each floor's path with its old and new provenance).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs

from cli_helpers import REPO, invoke
from passprice.facts import Provenance
from test_slip_34 import renderings  # one in-process review rendered per format
from test_slip_46 import RUNS, _stack_locked
from test_slip_50 import _forge

LOCK = "locks/r1-stack.lock.toml"
STACK = "facts/stacks/llamacpp-cuda-2405.toml"


def _route_forged(lock):  # type: ignore[no-untyped-def]
    assert lock.stack.integer_matrices == "vector"
    return attrs.evolve(lock, stack=attrs.evolve(lock.stack, integer_matrices="array"))


def _refused_forged(root: Path) -> str:
    """``price --lock LOCK --json`` of a forged lock: refused by name (exit 1, slip 53); its JSON document."""
    result = invoke("price", "--lock", LOCK, "--json", root=root)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1].startswith("passprice: refused: LockForged: lock r1-stack "), result.stderr
    assert json.loads(result.stdout)["refusal"] == "LockForged"
    return result.stdout


def test_a_forged_route_pin_is_not_the_locked_price_under_price_lock(tmp_path: Path) -> None:
    _, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _route_forged)
    # before: "lock under lock r1-stack (locks/r1-stack.lock.toml): floors hold, and the price is the one r1-stack
    # records", nothing more; slip 51: "but the price is NOT the one r1-stack records", exit 0; slip 53: refused by
    # name, exit 1 (the record is not what its pins give under the code that wrote it)
    out = json.loads(_refused_forged(head))
    assert out["lock"] == "r1-stack"
    # the other three said it already
    assert invoke("reproduce", LOCK, root=head).exit_code == 1
    assert invoke("check", "--frozen", root=head).exit_code == 1


def test_the_unforged_lock_is_still_the_locked_price(tmp_path: Path) -> None:
    _, head = _stack_locked(tmp_path)
    priced = invoke("price", "--lock", LOCK, root=head)
    assert priced.exit_code == 0, priced.output
    assert ("lock          under lock r1-stack (locks/r1-stack.lock.toml): floors hold, and the price is the one "
            "r1-stack records") in [line.strip() for line in priced.stdout.splitlines()]


def test_a_stack_renamed_reads_as_renamed_and_names_its_locks(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    os.rename(head / STACK, head / "facts" / "stacks" / "llamacpp-cuda-2405b.toml")
    status, (text, markdown_text) = renderings(REPO, "text", "markdown", base=str(base), head=str(head))
    assert status == 2, text  # HEAD fails check: the stack's runs name the old stack
    lines = text.splitlines()
    # before: "14 stack facts changed in 1 file, 14 to verify in their sources; 14 stack facts added in 1 new file;
    # 2 locks affected, 2 not judged; …"
    assert lines[1].startswith("no fact changed; 1 serving stack renamed; 2 locks affected, 2 not judged; "), lines[1]
    assert ("facts/stacks/llamacpp-cuda-2405.toml (stack llamacpp-cuda-2405): removed (renamed to "
            "facts/stacks/llamacpp-cuda-2405b.toml: its facts compared there)") in lines
    assert ("facts/stacks/llamacpp-cuda-2405b.toml (stack llamacpp-cuda-2405b): added (renamed from "
            "facts/stacks/llamacpp-cuda-2405.toml: its facts compared with that file's)") in lines
    note = ("its stack llamacpp-cuda-2405 is renamed on HEAD (facts/stacks/llamacpp-cuda-2405.toml → "
            "facts/stacks/llamacpp-cuda-2405b.toml): a lock names its stack by its file's name, so HEAD cannot price "
            "it; keep the file's name, or re-lock it under stack llamacpp-cuda-2405b")
    assert lines.count(f"    note      {note}") == 2  # r1-stack and the shipped r1-qwen7b-h200-llamacpp
    assert not any("to verify" in line for line in lines)  # before: each of the 14 facts "moved from …"
    markdown = markdown_text.splitlines()
    assert f"- `r1-stack`: {note}" in markdown


def test_a_measured_runs_file_renamed_reads_as_renamed_and_names_its_locks(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    os.rename(head / RUNS, head / "registry" / "measurements" / "xiongjiedai-llama3.toml")
    status, (text, as_json) = renderings(REPO, "text", "json", base=str(base), head=str(head))
    assert status == 1, text  # check fails: the stack's facts cite the old file's name
    lines = text.splitlines()
    # before: "registry/measurements/xiongjiedai-llama3-llamabench.toml (removed)", and the added one described alone
    assert ("  registry/measurements/xiongjiedai-llama3-llamabench.toml (removed: renamed to "
            "registry/measurements/xiongjiedai-llama3.toml)") in lines
    assert any(line.startswith(
        "  registry/measurements/xiongjiedai-llama3.toml (added): renamed from "
        "registry/measurements/xiongjiedai-llama3-llamabench.toml (the same bytes): the runs of stack "
        "llamacpp-cuda-2405, whose fitted facts cite the file by its name, and 2 locks rest on them: "
        "r1-qwen7b-h200-llamacpp, r1-stack; 111 measured runs (") for line in lines), lines
    review = json.JSONDecoder().raw_decode(as_json)[0]
    renamed = {f["path"]: f["renamed"] for f in review["files"] if f["renamed"] is not None}
    assert renamed == {"registry/measurements/xiongjiedai-llama3-llamabench.toml":
                       "registry/measurements/xiongjiedai-llama3.toml",
                       "registry/measurements/xiongjiedai-llama3.toml":
                       "registry/measurements/xiongjiedai-llama3-llamabench.toml"}


def _loosened(lock):  # type: ignore[no-untyped-def]
    assert lock.policy.paths["stack.overhead.layer"] is Provenance.DERIVED
    paths = {**lock.policy.paths, "stack.overhead.layer": Provenance.ASSUMED}
    return attrs.evolve(lock, policy=attrs.evolve(lock.policy, paths=paths))


def test_a_floor_loosened_and_re_digested_is_a_change_the_review_shows(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _loosened)
    # Decided (DESIGN, Locks): --frozen fails on what a lock pinned that drifted, not on its own policy; a looser
    # floor is a lock made with --require as well as one edited, and only BASE's copy tells them apart: the review.
    assert invoke("check", "--frozen", root=head).exit_code == 0
    status, (text, markdown_text) = renderings(REPO, "text", "markdown", base=str(base), head=str(head))
    assert status == 0, text
    lines = text.splitlines()
    assert lines[1] == "no fact changed; 1 lock affected, 1 re-locked, 1 with floors loosened; 10 locks unaffected"
    assert "    policy    floor on stack.overhead.layer loosened: derived → assumed (LOOSENED)" in lines
    markdown = markdown_text.splitlines()
    assert markdown[0].startswith("⚠️ **passprice diff**")
    assert "- ⚠️ `r1-stack`: floor on stack.overhead.layer loosened: derived → assumed" in markdown


def _vendors_forged(lock):  # type: ignore[no-untyped-def]
    assert lock.stack.fitted_vendors == ("NVIDIA",)
    return attrs.evolve(lock, stack=attrs.evolve(lock.stack, fitted_vendors=("AMD", "NVIDIA")))


def test_a_forged_label_pin_is_not_counted_re_locked(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _vendors_forged)
    status, (text, as_json, markdown_text) = renderings(REPO, "text", "json", "markdown", base=str(base),
                                                        head=str(head))
    assert status == 1, text
    lines = text.splitlines()
    # before: "no fact changed; 1 lock affected, 1 re-locked; HEAD fails passprice check (1 problem); …", the row
    # "re-locked"
    # a pin no side holds is the review's own rule, not check's (tests/test_fix53w.py)
    assert lines[1] == ("no fact changed; 1 lock affected, 1 with pins edited by hand; HEAD fails the review's rules "
                        "(1 problem; passprice check does not check them); 10 locks unaffected")
    assert ("  r1-stack (locks/r1-stack.lock.toml, card h200_sxm_141gb, price): its pins were edited by hand (one no "
            "registry holds, or one BASE's copy pinned dropped): see HEAD fails the review's rules") in lines
    review = json.JSONDecoder().raw_decode(as_json)[0]
    assert review["forged_pins"] == ["r1-stack"] and review["unreproduced"] == []
    markdown = markdown_text.splitlines()
    assert markdown[0].startswith("❌ **passprice diff**") and "re-locked" not in markdown[0]
    assert ("- `r1-stack`: its pins were edited by hand (one no registry holds, or one BASE's copy pinned dropped): "
            "restore its file as BASE has it (`git checkout BASE -- FILE`), or re-lock it with `passprice lock "
            "--update -o locks/r1-stack.lock.toml`") in markdown
    # check --frozen, reproduce and price --lock say the relabel (slip 48)
    assert invoke("check", "--frozen", root=head).exit_code == 1
