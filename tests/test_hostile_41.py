"""Attack round 41 (issue 13): hostile input against the code merged in the hour before it (the per-file wait of
``edit.locked``, the review's stack re-fit, runs moved between measurement files, unknown tensor type ids). One
test per finding, each building its reproducer."""

from __future__ import annotations

import fcntl
import itertools
import os
from pathlib import Path

import pytest

from edit_clock import EditClock
from passprice import edit
from passprice.edit import locked
from passprice.errors import InputError


def test_an_edit_is_refused_when_edits_keep_landing_without_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """7ea0e0c made the wait per file: each edit landing restarts it. An editor that takes each new file before it
    lets the old one go (as test_leftovers_s20's busy editor does), kept up without end, held the waiter forever:
    here 0.05 s apart against a 0.1 s wait, the waiter was still waiting after 5 s (100 files landed). Now the whole
    wait is bounded (``total_s``, 60 s by default): refused after 0.6 s, nothing yielded. The editor's edits land by
    the waiter's clock (:class:`EditClock`): an editor thread not run for 0.1 s on a busy machine let the waiter's
    wait on one file run out ("another edit has held it for 0.1 s")."""
    card = tmp_path / "card.toml"
    card.write_text("n = 0\n", encoding="utf-8")
    holding = card.open("rb")
    fcntl.flock(holding.fileno(), fcntl.LOCK_EX)
    landed = 0

    def land() -> None:
        nonlocal holding, landed
        landed += 1
        fresh = tmp_path / f".card.{landed}"
        fresh.write_text(f"n = {landed}\n", encoding="utf-8")
        handle = fresh.open("rb")
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        os.replace(fresh, card)
        holding.close()
        holding = handle

    monkeypatch.setattr(edit, "time", EditClock((0.05 * k, land) for k in itertools.count(1)))
    try:
        refused = r"card\.toml: other edits kept landing on it for 0\.6 s; nothing written"
        with pytest.raises(InputError, match=refused), locked(card, wait_s=0.1, total_s=0.6):
            pytest.fail("the lock was taken while another editor held every file")
    finally:
        holding.close()
    assert landed >= 2  # files did land: the per-file wait alone would have gone on


def _move_first_run(path: Path, *edits: tuple[str, str]) -> None:
    """The first run of llamacpp-points.toml moved into registry/measurements/new-points.toml, with ``edits``
    (regular expression, replacement) applied to it."""
    import re

    from test_slip_34 import POINTS

    text = (path / POINTS).read_text()
    first = text[text.index("[[run]]"):].split("\n\n")[0]
    (path / POINTS).write_text(text.replace(first + "\n\n", "", 1))
    moved = first
    for pattern, new in edits:
        assert re.search(pattern, moved), pattern
        moved = re.sub(pattern, new, moved)
    (path / "registry" / "measurements" / "new-points.toml").write_text(text[:text.index("[[run]]")] + moved + "\n")


def test_a_run_moved_and_renamed_at_once_is_to_verify(tmp_path_factory: pytest.TempPathFactory) -> None:
    """05edbf9 compares a run moved into another measurement file with itself where BASE held it, by its id. Moved
    and renamed at once (xd2.h100_pcie_80gb.l2-7b-q4_0.main -> ...main2), its tokens/s 135.07 -> 155.07 and its
    locator to match, it read 'no fact changed; 2 other files changed', nothing to verify, exit 0 (slip 35 again):
    its id is in no file of BASE, and the run BASE held at its setting under an id HEAD does not hold was looked for
    only in the same file. Now that run is looked for in BASE's other files too ('ID (was OLD in FILE)')."""
    from test_diff import commit_all
    from test_slip_34 import branch, registry, review

    path = branch(registry.__wrapped__(tmp_path_factory), "moved-renamed")  # type: ignore[attr-defined]
    _move_first_run(path, (r"135\.07", "155.07"), (r'id = "([^"]*)"', r'id = "\g<1>2"'))
    commit_all(path, "a run moved to a new file and renamed")
    status, text, out = review(path)
    assert status == 0, text
    assert out["runs_to_verify"] == {"registry/measurements/new-points.toml": 1}, text
    assert ("xd2.h100_pcie_80gb.l2-7b-q4_0.main2 (was xd2.h100_pcie_80gb.l2-7b-q4_0.main in "
            "registry/measurements/llamacpp-points.toml) cited anew (locator") in text


def test_the_review_refits_no_stack_file_outside_the_registry(tmp_path: Path) -> None:
    """dc1f05c/433b507 re-fit the stack a lock names on HEAD (``stack_refit_findings``) from ``facts/stacks/NAME.toml``
    joined as a path: a HEAD lock naming ``../../../outside/vllm-w24`` (its digest recomputed) had a stack file of
    another folder, one the pricing refuses ('leads out of it'), loaded and re-fitted, its share.read 0.8564 -> 0.5
    found 'not following' (1 finding). Now a name leaving facts/stacks gives no finding, as a stack that does not
    read (the pricing's own refusal is what the review shows)."""
    import shutil

    from cli_helpers import invoke
    from passprice.registry import find_root
    from passprice.review.impacts import stack_refit_findings
    from test_newcomer_24 import STACK, _registry

    root = _registry(tmp_path / "made")
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    assert stack_refit_findings(find_root(root), STACK) == ()  # as calibrated: every fact follows
    outside = root.parent / "outside"  # facts/stacks/../../../outside
    outside.mkdir()
    text = (root / "facts" / "stacks" / f"{STACK}.toml").read_text()
    assert "value = 0.8564\n" in text
    (outside / f"{STACK}.toml").write_text(text.replace("value = 0.8564\n", "value = 0.5\n", 1))
    inside = tmp_path / "inside"
    shutil.copytree(root, inside)
    (inside / "facts" / "stacks" / f"{STACK}.toml").write_text((outside / f"{STACK}.toml").read_text())
    [found] = [x for x in stack_refit_findings(find_root(inside), STACK) if x.path == "share.read"]
    assert found.kind == "mismatch" and "not 0.5" in found.message  # the same file inside the registry: found
    assert stack_refit_findings(find_root(root), f"../../../outside/{STACK}") == ()
