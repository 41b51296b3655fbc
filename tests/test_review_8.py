"""The review and lock workflow as a newcomer followed it from the README (session 8): each finding reproduced on a
throwaway git repository (the checkout's facts and registry, locks written fresh by the running code, a branch per
change), then the fix asserted.

1. the re-lock a refusal advised (``lock SERVING -o LOCK --force --require …``) rewrote a ``best`` lock as a batch-1
   ``price`` lock, dropped a lock's stack and serving options, and the review passed it as "re-locked";
2. a lock file edited by hand was counted "re-locked";
3. the summary counted "break their floors" where each row said "not judged" or "still holds";
4. a strengthened fact passed the review while ``check --frozen`` then failed on the drift;
5. ``lock --update`` refused by a floor gave no next step;
6. an unchanged floor was shown as "removed: assumed → assumed";
7. locks added were left out of the summary's count; a LockFloor refusal named one of the locks that break."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from passprice.cli import cli
from passprice.locks import FloorChange, compare_policies, read_lock
from passprice.registry import Root
from passprice.review import diff, diff_markdown

REPO = Path(__file__).resolve().parent.parent
CARD = "h200_sxm_141gb"
R1 = "r1-qwen7b-h200"
MTP = "qwen35-27b-h200-mtp"
STACK = "llamacpp-cuda-2405"
#: The locks of the base commit: file stem → the ``lock`` arguments that made it (a price lock, a best lock, a lock
#: made under a serving stack, a lock of the serving with its batch overridden, the draft-model hybrid).
LOCKS = {
    R1: [R1],
    f"{R1}-best": [R1, "--best"],
    f"{R1}-stack": [R1, "--stack", STACK],
    f"{R1}-b8": [R1, "--batch", "8"],
    MTP: [MTP],
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    """``passprice --root REPO ARGS…`` in-process, in ``repo`` (relative paths are the repository's)."""
    old = Path.cwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(cli, ["--root", str(repo), *args])
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository on ``main``: the checkout's facts, registry, schemas and sources, and :data:`LOCKS` written."""
    path = tmp_path_factory.mktemp("review8") / "base"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    for stem, args in LOCKS.items():
        code, _, err = run(path, "lock", *args, "-o", f"locks/{stem}.lock.toml")
        assert code == 0, err
    commit_all(path, "base")
    return path


@pytest.fixture
def repo(base: Path, tmp_path: Path) -> Path:
    """A clone of :func:`base` on branch ``pr``, ``main`` its base."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(base), str(clone))
    git(clone, "switch", "-q", "-c", "pr")
    return clone


def fact_set(repo: Path, path: str, value: str, unit: str, provenance: str, source: str, locator: str) -> None:
    code, _, err = run(repo, "fact", "set", CARD, path, "--value", value, "--unit", unit, "--provenance", provenance,
                       "--source", source, "--locator", locator)
    assert code == 0, err


def estimate_streams_read(repo: Path) -> None:
    """The H200's measured ``streams.read`` (0.9333) restated as an estimate: below every lock's floor."""
    fact_set(repo, "streams.read", "0.9333", "1", "estimated", "azure-ai-benchmarking-guide", "an estimate")


def lock_of(repo: Path, stem: str):  # type: ignore[no-untyped-def]
    return read_lock(repo / "locks" / f"{stem}.lock.toml")


def test_1a_pasting_the_advice_re_locks_each_lock_as_it_was_with_only_the_floor_loosened(repo: Path) -> None:
    estimate_streams_read(repo)
    commit_all(repo, "estimate")
    before = {stem: lock_of(repo, stem) for stem in LOCKS}
    d = diff(Root(repo), "main", None)
    assert d.exit_status == 1
    assert sorted(lock.name for lock in d.broken) == sorted(LOCKS)
    reason = next(r for r in d.refusal_reasons() if r.startswith("the change breaks"))
    commands = re.findall(r"`(passprice lock [^`]*)`", reason)
    # one command per broken lock, each re-locking that lock file in place: no SERVING, no --best, no --stack
    assert sorted(commands) == sorted(
        f"passprice lock --update -o locks/{stem}.lock.toml --force --require streams.read=estimated"
        for stem in LOCKS
    )
    # check gives each lock's command beside its floors
    code, out, _ = run(repo, "check")
    assert code == 1
    for command in commands:
        assert f"through review (`{command}`)" in out
    for command in commands:
        code, _, err = run(repo, *shlex.split(command)[1:])
        assert code == 0, err
        warned = [line for line in err.splitlines() if line.startswith("passprice: warning: lock ")]
        assert len(warned) == 1 and warned[0].endswith("floor on streams.read loosened: measured → estimated"), err
    for stem, old in before.items():
        new = lock_of(repo, stem)
        # the same question: kind, registered serving, serving options, stack and name kept
        assert (new.kind, new.info.serving, new.spec, new.name) == (old.kind, old.info.serving, old.spec, old.name)
        assert (new.stack.name if new.stack else None) == (old.stack.name if old.stack else None)
        # ... and the one policy change is the floor loosened
        assert compare_policies(old.policy, new.policy) == (
            FloorChange("streams.read", old.policy.paths["streams.read"], new.policy.paths["streams.read"],
                        old.policy.allowed("streams.read"), new.policy.allowed("streams.read")),
        )
        assert new.policy.paths["streams.read"].value == "estimated"
        assert new.price["tokens_per_s"] == old.price["tokens_per_s"]
    assert lock_of(repo, f"{R1}-best").price["batch"] == 580 and lock_of(repo, f"{R1}-b8").price["batch"] == 8
    commit_all(repo, "re-lock")
    d = diff(Root(repo), "main", None)
    assert d.exit_status == 0 and d.requestioned == ()
    assert d.summary() == (
        "1 fact changed in 1 file, 1 weakened; 5 locks affected, 5 re-locked, 5 with floors loosened"
    )


def test_1b_a_lock_file_rewritten_to_answer_another_question_fails_the_review(repo: Path) -> None:
    # The former advice, pasted: a best lock overwritten by a price lock, the stack's lock without its stack,
    # the batch-8 lock without its option (now a lock of the registered serving).
    for stem in (f"{R1}-best", f"{R1}-stack", f"{R1}-b8"):
        code, _, err = run(repo, "lock", R1, "-o", f"locks/{stem}.lock.toml", "--force")
        assert code == 0, err
    commit_all(repo, "former advice")
    d = diff(Root(repo), "main", None)
    assert d.exit_status == 1
    assert {lock.name: lock.question for lock in d.requestioned} == {
        f"{R1}-best": ("kind best → price",),
        f"{R1}-stack": (f"stack {STACK} → none",),
        f"{R1}-b8": (f"serving none → {R1}",),
    }
    assert d.relocked == ()
    assert "3 asking another question" in d.summary() and "re-locked" not in d.summary()
    best = next(lock for lock in d.locks if lock.name == f"{R1}-best")
    assert best.review().startswith("asks another question (kind best → price): a lock answers one")
    row = next(line for line in diff_markdown(d).splitlines() if line.startswith(f"| `{R1}-best`"))
    assert row.endswith("| ❌ asks another question (kind best → price): a lock answers one; restore it, or keep it "
                        "and add the new lock under another name |"), row
    assert any(r.startswith(f"it rewrites locks/{R1}-best.lock.toml to answer another question (kind best → price)")
               for r in d.refusal_reasons())
    data = d.to_json()
    assert sorted(data["requestioned"]) == sorted([f"{R1}-best", f"{R1}-stack", f"{R1}-b8"])


def test_2_a_lock_edited_by_hand_is_not_counted_re_locked(repo: Path) -> None:
    estimate_streams_read(repo)
    path = repo / "locks" / f"{R1}.lock.toml"
    text = path.read_text(encoding="utf-8")
    assert '\n"streams.read" = "measured"\n' in text  # [policy.paths]
    path.write_text(text.replace('\n"streams.read" = "measured"\n', '\n"streams.read" = "estimated"\n'),
                    encoding="utf-8")
    commit_all(repo, "hand edit")
    d = diff(Root(repo), "main", None)
    assert d.exit_status == 2
    lock = next(lock for lock in d.locks if lock.name == R1)
    assert lock.head_unread and not lock.breaks and lock not in d.relocked
    assert lock.review().startswith("HEAD's lock file does not read (edited by hand?)")
    assert lock.floors() == "not judged: HEAD's lock file does not read"
    summary = d.summary()
    assert "1 does not read on HEAD" in summary and "re-locked" not in summary
    # the other four break their floors on the estimate (their files read)
    assert "4 break their floors" in summary


def test_3_the_summary_counts_what_the_rows_show(repo: Path) -> None:
    card = repo / "facts" / "cards" / f"{CARD}.toml"
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("value = 0.9333", "value = 4.8.1", 1), encoding="utf-8")
    commit_all(repo, "invalid toml")
    d = diff(Root(repo), "main", None)
    assert d.exit_status == 2
    assert all(lock.floors().startswith("not judged: facts/cards/h200_sxm_141gb.toml: not valid TOML")
               for lock in d.broken)
    assert "5 not judged" in d.summary() and "floors" not in d.summary()
    assert {lock.review() for lock in d.locks} == {"not priced on HEAD (see below)"}
    # A tensor type edited in the checkpoint entry: the floors still hold; the content is not the pinned one.
    card.write_text(text, encoding="utf-8")
    entry = repo / "registry" / "checkpoints" / "deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    lines = entry.read_text(encoding="utf-8")
    assert lines.count('type = "Q6_K"') >= 1
    entry.write_text(lines.replace('type = "Q6_K"', 'type = "Q8_0"', 1), encoding="utf-8")
    commit_all(repo, "tensor type")
    d = diff(Root(repo), "main", None)
    assert d.exit_status == 1
    assert {lock.floors() for lock in d.broken} == {"still holds"}
    assert "4 with their checkpoint's content changed" in d.summary() and "floors" not in d.summary()


def test_4_a_strengthened_fact_says_which_locks_to_re_pin_for_check_frozen(repo: Path) -> None:
    fact_set(repo, "scale", "33.5", "Tcycle/s", "measured", "xytpai-nvbench", "a measurement")
    commit_all(repo, "scale measured")
    d = diff(Root(repo), "main", None)
    assert d.exit_status == 0
    drifting = sorted(lock.name for lock in d.drifting)
    assert drifting == sorted(LOCKS)
    lock = next(lock for lock in d.locks if lock.name == R1)
    assert lock.review() == (
        "pins scale as before the change, the price unmoved by it: re-pin (passprice lock --update -o "
        f"locks/{R1}.lock.toml; check --frozen fails until then)"
    )
    assert "5 to re-pin (lock --update) for check --frozen" in d.summary()
    assert diff_markdown(d).startswith("⚠️ ")
    assert json.loads(json.dumps(d.to_json()))["drifted"] == [x.name for x in d.drifting]
    code, _, _ = run(repo, "check", "--frozen")
    assert code == 1
    for stem in LOCKS:
        assert run(repo, "lock", "--update", "-o", f"locks/{stem}.lock.toml")[0] == 0
    code, out, err = run(repo, "check", "--frozen")
    assert code == 0, out + err
    assert diff(Root(repo), "main", None).drifting == ()


def test_5_an_update_refused_by_a_floor_says_how_to_loosen_it(repo: Path) -> None:
    estimate_streams_read(repo)
    code, out, err = run(repo, "lock", "--update", "-o", f"locks/{R1}-best.lock.toml")
    assert code == 1 and out == ""
    assert err.endswith(
        f"locks/{R1}-best.lock.toml not written (--update keeps the floors; two ways out: strengthen the fact's "
        "provenance (passprice fact set with a stronger --provenance and its --source), or loosen the lock's floor for "
        "it on purpose through review: `passprice lock --update -o "
        f"locks/{R1}-best.lock.toml --force --require streams.read=estimated`)\n"
    ), err
    # --update --require without --force stays refused: a floor changed is said with --force
    code, _, err = run(repo, "lock", "--update", "-o", f"locks/{R1}.lock.toml", "--require", "streams.read=estimated")
    assert code == 2 and "--update --force --require PATH=PROVENANCE changes PATH's floor alone" in err


def test_6_an_unchanged_floor_is_no_change(repo: Path) -> None:
    old = lock_of(repo, MTP)
    assert old.policy.paths["draft.acceptance.2"].value == "assumed"
    code, _, err = run(repo, "lock", MTP, "--force", "--floor", "assumed", "-o", f"locks/{MTP}.lock.toml")
    assert code == 0
    assert "draft.acceptance.2" not in err and "floor on draft.acceptance.1 removed: estimated → assumed" in err
    changes = compare_policies(old.policy, lock_of(repo, MTP).policy)
    assert "draft.acceptance.2" not in {c.path for c in changes} and len(changes) == 10


def test_7_added_locks_are_counted_and_every_lock_a_price_breaks_is_named(repo: Path) -> None:
    git(repo, "mv", f"locks/{R1}-b8.lock.toml", f"locks/{R1}-b8x.lock.toml")
    code, _, err = run(repo, "lock", R1, "--batch", "8", "-o", f"locks/{R1}-b8x.lock.toml", "--force")
    assert code == 0, err
    commit_all(repo, "rename")
    d = diff(Root(repo), "main", None)
    assert "2 locks affected, 1 added, 1 removed" in d.summary()
    estimate_streams_read(repo)
    code, out, err = run(repo, "best", R1)
    assert code == 1
    named = re.findall(r"lock (\S+) refuses", err)
    assert named == [R1, f"{R1}-best", f"{R1}-stack"], err
    for stem in (R1, f"{R1}-best", f"{R1}-stack"):
        assert f"`passprice lock --update -o locks/{stem}.lock.toml --force --require streams.read=estimated`" in err
    code, out, _ = run(repo, "best", R1, "--json")
    data = json.loads(out)
    assert data["lock"] == R1 and [v["lock"] for v in data["also"]] == [f"{R1}-best", f"{R1}-stack"]
