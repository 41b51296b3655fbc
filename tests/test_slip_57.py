"""Slip round 57 (issue 13): the list of pricing models' leftovers. A branch that re-locked twice failed its own
review on its first code's entry; ``passprice lock`` ignored a list it could not update without a word; and a
lock in the checkout's ``locks/`` naming a real older pricing model beside a forged record still priced. Each test
builds its reproducer (a private checkout of the registry with passprice's ``src/passprice``, a scratch git
repository for the review) and asserts the exit status and the words said."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke, refused
from test_diff import commit_all, git
from test_slip_53 import R1, forge_record
from test_slip_55 import OLDEST, _with_model

LISTED = "src/passprice/pricing_models.json"


def _checkout(tmp: Path) -> Path:
    """A private copy of the registry and its locks beside passprice's own ``src/passprice`` (the running code):
    a checkout of passprice, as ``passprice lock`` and the list's records see one."""
    root = copy_root(tmp)
    shutil.copytree(REPO / "src" / "passprice", root / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root


# --- 3. an older-model lock in the checkout's locks/ whose record the list does not name -----------------------------


@pytest.fixture(scope="module")
def forged_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's r1-qwen7b-h200 lock recording 1,000 tokens/s (its pins give 996.1) under the first pricing
    model passprice had (a real, listed digest), re-digested: slip 55's limit."""
    root = _checkout(tmp_path_factory.mktemp("slip57"))
    forge_record(root, R1, tokens_per_s=1000.0)
    _with_model(root, R1, OLDEST)
    return root


def _digest(root: Path, rel: str) -> str:
    from passprice.locks import read_lock

    return read_lock(root / rel).info.digest


def test_price_refuses_an_older_model_lock_whose_record_is_not_listed(forged_checkout: Path) -> None:
    """Before: exit 0, "the pricing model (code) or the checkpoint moved it; the lock's pricing model d82efb38ac44…
    is passprice 0.1.0's". Now: ``LockUnlisted``, exit 1, naming the model, whose it is and the record."""
    out = refused("price", "r1-qwen7b-h200", root=forged_checkout, name="LockUnlisted")
    record = _digest(forged_checkout, R1)
    assert (out["pricing_model"], out["record"], out["source"]) == (OLDEST, record, R1)
    assert out["message"] == (
        f"lock r1-qwen7b-h200 ({R1}) is forged: it pins the older pricing model d82efb38ac44… (passprice 0.1.0's, "
        f"first locked 2026-12-01 at commit c23cf4390948), but its record (lock digest {record[7:19]}…) is none of "
        "the locks passprice 0.1.0 lists as written with that code in this repository's locks/: it was edited by "
        "hand and its digests recomputed, so no price rests on it; restore the lock from the last commit that holds "
        f"it as written, or re-lock it through review (`passprice lock --update -o {R1} --force`), or price without "
        "the lock (--no-lock)")


def test_reproduce_and_check_refuse_it_too(forged_checkout: Path) -> None:
    from passprice.check import _judge_lock
    from passprice.registry import Root

    result = invoke("reproduce", str(forged_checkout / R1), root=forged_checkout)
    assert result.exit_code == 1 and not result.stdout
    assert result.stderr.startswith("passprice: refused: LockUnlisted: lock r1-qwen7b-h200 (")
    assert len(result.stderr.splitlines()) == 1 and "(--no-lock)" not in result.stderr
    status, _ = _judge_lock(Root(forged_checkout), forged_checkout / R1)
    assert not status.ok(False) and status.refusal == "LockUnlisted"


def test_the_same_lock_outside_the_checkout_s_locks_still_prices(forged_checkout: Path, tmp_path: Path) -> None:
    """A user's own lock, kept elsewhere (or in a registry of one's own: test_slip_55), is judged as before: the
    list records passprice's own locks only."""
    elsewhere = tmp_path / "mine.lock.toml"
    shutil.copyfile(forged_checkout / R1, elsewhere)
    result = invoke("price", "r1-qwen7b-h200", "--no-lock", root=forged_checkout)
    assert result.exit_code == 0, result.output
    from passprice.modelhistory import in_checkout_locks

    assert in_checkout_locks(forged_checkout, R1) and in_checkout_locks(forged_checkout, str(forged_checkout / R1))
    assert not in_checkout_locks(forged_checkout, str(elsewhere))
    assert not in_checkout_locks(forged_checkout.parent, "root/locks/r1-qwen7b-h200.lock.toml")  # no src/passprice


def test_an_older_model_lock_whose_record_is_listed_prices(forged_checkout: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A lock restored from the commit that holds it as written: its record is listed under its model, so it
    prices (exit 0) with the "moved it" line of an upgrade."""
    import attrs

    from passprice import modelhistory

    known = modelhistory.read_known()
    record = _digest(forged_checkout, R1)
    listed = {**known, OLDEST: attrs.evolve(known[OLDEST], records=(*known[OLDEST].records, record))}
    monkeypatch.setattr(modelhistory, "_shipped", lambda: listed)
    result = invoke("price", "r1-qwen7b-h200", root=forged_checkout)
    assert result.exit_code == 0, result.output
    assert "the lock's pricing model d82efb38ac44… is passprice 0.1.0's" in result.stdout


def test_every_lock_of_the_checkout_is_listed_with_its_record() -> None:
    """The list names each lock of ``locks/`` under the model it pins (773 records of 98 models from git history at
    first; each ``passprice lock`` of the checkout adds its own)."""
    import tomllib

    from passprice.modelhistory import names_record

    for path in (REPO / "locks").glob("*.lock.toml"):
        lock = tomllib.loads(path.read_text(encoding="utf-8"))["lock"]
        assert names_record(lock["pricing_model"], lock["digest"]), path.name


# --- 2. lock refuses a list it cannot update, before writing ----------------------------------------------------------


@pytest.fixture(scope="module")
def lock_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _checkout(tmp_path_factory.mktemp("slip57lock"))


@pytest.mark.parametrize(("how", "said"), [
    ("read-only", "is read-only; passprice does not replace it (make it writable first): passprice's list of pricing "
                  "models, which passprice lock updates when it locks this checkout (the code it locked with and the "
                  "lock's [lock] digest); the lock was not written"),
    ("folder", "is a folder; give a file to write: passprice's list of pricing models, which passprice lock updates "
               "when it locks this checkout (the code it locked with and the lock's [lock] digest); the lock was not "
               "written"),
    ("damaged", "not passprice's list of pricing models: Expecting value: line 1 column 13 (char 12); passprice lock "
                "updates it when it locks this checkout: restore it (git checkout -- src/passprice/"
                "pricing_models.json); the lock was not written"),
])
def test_lock_refuses_a_list_it_cannot_update(lock_checkout: Path, how: str, said: str) -> None:
    """Before: exit 0, the lock written and the list left as it was without a word (every later passprice then
    refused that lock's code as forged). Now: one line naming the file, exit 2, the lock not written."""
    listed = lock_checkout / LISTED
    good = listed.read_bytes()
    before = (lock_checkout / R1).read_bytes()
    listed.unlink()
    if how == "folder":
        listed.mkdir()
    else:
        listed.write_bytes(b'{"models": [' if how == "damaged" else good)
        if how == "read-only":
            listed.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        result = invoke("lock", "--update", "-o", str(lock_checkout / R1), "--force", root=lock_checkout)
        assert result.exit_code == 2, result.output
        assert result.stderr == f"passprice: error: {listed}: {said}\n"
        assert (lock_checkout / R1).read_bytes() == before
    finally:
        if listed.is_dir():
            listed.rmdir()
        else:
            listed.chmod(0o644)
            listed.unlink()
        listed.write_bytes(good)


def test_lock_lists_the_code_and_the_lock_it_wrote(lock_checkout: Path) -> None:
    from passprice.locks import read_lock
    from passprice.modelhistory import read_known
    from passprice.pins import pricing_model_digest

    result = invoke("lock", "--update", "-o", str(lock_checkout / R1), "--force", root=lock_checkout)
    assert result.exit_code == 0, result.output
    written = read_lock(lock_checkout / R1).info
    assert written.pricing_model == pricing_model_digest()
    assert written.digest in read_known(lock_checkout / LISTED)[written.pricing_model].records


def test_a_list_that_fails_after_the_lock_is_written_says_so(lock_checkout: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The list changed under the command after its check (a concurrent writer): the lock is written, and one line
    says the list was not updated and what to run."""
    from passprice import modelhistory
    from passprice.errors import InputError

    def fails(*args: object, **kwargs: object) -> None:
        raise InputError("src/passprice/pricing_models.json: is read-only")

    monkeypatch.setattr(modelhistory, "add_running", fails)
    result = invoke("lock", "--update", "-o", str(lock_checkout / R1), "--force", root=lock_checkout)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"passprice: error: src/passprice/pricing_models.json: is read-only: the lock {lock_checkout / R1} was "
        "written, but passprice's list of pricing models was not updated with it; make the list writable and run "
        f"passprice lock --update -o {lock_checkout / R1} again\n")


def test_a_record_re_written_before_any_commit_is_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``lock`` twice before a commit: the first lock's record, which no commit holds, leaves the list with it (the
    review would fail it as the record of no lock of the branch); a committed record stays."""
    from passprice import modelhistory, pins

    running = "sha256:" + "2" * 64
    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("", encoding="utf-8")
    a, b, c = ("sha256:" + x * 64 for x in "abc")
    (package / "pricing_models.json").write_text(json.dumps({"models": [
        {"digest": running, "version": "0.1.0", "first_locked": "2026-12-05", "commit": "", "records": [a]}]}),
        encoding="utf-8")
    git(tmp_path, "init", "-q", "-b", "main")
    commit_all(tmp_path, "base")
    monkeypatch.setattr(pins, "checkout_model", lambda root: None)
    monkeypatch.setattr(pins, "pricing_model_digest", lambda folder=None: running)
    assert modelhistory.add_running(tmp_path, record=b, replaced=a) is not None  # a is committed: kept
    assert modelhistory.add_running(tmp_path, record=c, replaced=b) is not None  # b never was: dropped
    assert modelhistory.read_known(package / "pricing_models.json")[running].records == (a, c)


# --- 1. a branch that re-locked twice ---------------------------------------------------------------------------------


def test_each_change_to_the_records_is_judged() -> None:
    from passprice.modelhistory import KnownModel
    from passprice.modellist import asked_models, list_changes

    r = ["sha256:" + x * 64 for x in "0123"]
    a = KnownModel("sha256:" + "a" * 64, "0.1.0", "2026-12-01", "c23cf4390948", (r[0],))
    mid = KnownModel("sha256:" + "c" * 64, "0.1.0", "2026-12-05", "", (r[1],))
    own = KnownModel("sha256:" + "b" * 64, "0.1.0", "2026-12-06", "", (r[2],))
    base = {a.digest: a}
    head = {a.digest: a, mid.digest: mid, own.digest: own}
    assert asked_models(base, head) == {mid.digest, own.digest}
    twice = list_changes(base, head, own.digest, branch={mid.digest: frozenset(r[1:2]), own.digest: frozenset(r[2:3])})
    assert twice.failing == ()
    assert twice.named[0] == (f"{LISTED}: entry bbbbbbbbbbbb… added (passprice 0.1.0's, first locked 2026-12-06): "
                              "HEAD's own pricing model, a re-lock's")
    assert twice.named[1] == (f"{LISTED}: entry cccccccccccc… added (passprice 0.1.0's, first locked 2026-12-05): the "
                              "code of a commit of this branch, which re-locked with it (since re-locked again)")
    unseen = list_changes(base, head, own.digest, branch={own.digest: frozenset(r[2:3])})
    assert len(unseen.failing) == 1 and "nor of a commit of this branch that re-locked with it" in unseen.failing[0]
    stray = list_changes(base, {**head, a.digest: KnownModel(*[getattr(a, f) for f in ("digest", "version",
                                                                                        "first_locked", "commit")],
                                                                      (r[0], r[3]))},
                         own.digest, branch={mid.digest: frozenset(r[1:2]), own.digest: frozenset(r[2:3])})
    assert stray.failing == (
        f"{LISTED}: entry aaaaaaaaaaaa…: 1 record (first: lock digest 333333333333…) that no lock in locks/ of HEAD or "
        "of this branch's commits pinning that code holds: only passprice lock adds a record, the [lock] digest of "
        "the lock it writes; remove them",)
    removed = list_changes({a.digest: KnownModel(a.digest, a.version, a.first_locked, a.commit, (r[0], r[3]))},
                           base, own.digest)
    assert removed.failing == (
        f"{LISTED}: entry aaaaaaaaaaaa…: 1 record removed (first: lock digest 333333333333…): a record says passprice "
        "wrote that lock with that code, and a lock restored from the commit holding it prices by it; restore them",)
    bare = KnownModel(a.digest, a.version, a.first_locked, a.commit)
    first = list_changes({a.digest: bare}, base, own.digest)  # the list's first records (slip 57's own change)
    assert first.failing == () and first.named == (
        f"{LISTED}: 1 record listed under 1 entry, the locks passprice wrote with each code (the list's first "
        "records)",)


@pytest.fixture(scope="module")
def twice_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository: ``main`` (the registry with the r1-qwen7b-h200 lock, passprice's ``src/passprice``), then a
    branch whose first commit changes the pricing code (``cost.py``) and re-locks with it (the lock's model that
    code's digest, listed with its record), and whose second changes the code back and re-locks again (the lock as
    on ``main``), keeping the first code's entry: the honest workflow of two changes re-locked after each. Returns
    the repository and the first code's digest."""
    from passprice.locks import read_lock
    from passprice.pins import pricing_model_digest

    root = _checkout(tmp_path_factory.mktemp("slip57twice"))
    for lock in (root / "locks").glob("*.lock.toml"):
        if lock.name != "r1-qwen7b-h200.lock.toml":
            lock.unlink()
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    git(root, "checkout", "-q", "-b", "twice")
    cost = root / "src" / "passprice" / "cost.py"
    original, kept = cost.read_text(encoding="utf-8"), (root / R1).read_bytes()
    cost.write_text(original + "\n_SLIP57 = 1\n", encoding="utf-8")
    first = pricing_model_digest(root / "src" / "passprice")
    _with_model(root, R1, first)
    doc = json.loads((root / LISTED).read_text(encoding="utf-8"))
    doc["models"].append({"digest": first, "version": "0.1.0", "first_locked": "2026-12-05", "commit": "",
                          "records": [read_lock(root / R1).info.digest]})
    (root / LISTED).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    commit_all(root, "change the code, re-lock")
    cost.write_text(original, encoding="utf-8")
    (root / R1).write_bytes(kept)
    commit_all(root, "change it back, re-lock")
    return root, first


def test_a_branch_that_re_locked_twice_passes_its_review(twice_repo: tuple[Path, str]) -> None:
    """Before: exit 1, "entry …: added …: the digest of no code of this review (HEAD's is …): only a re-lock adds to
    the list … remove the entry". Now the entry is the code of the branch's first re-lock: named, exit 0."""
    root, first = twice_repo
    result = invoke("diff", "main", "--format", "json", root=root)
    assert result.exit_code == 0, result.output
    said = json.loads(result.stdout)["code_changed"]
    assert said == [f"{LISTED}: entry {first[7:19]}… added (passprice 0.1.0's, first locked 2026-12-05): the code of "
                    "a commit of this branch, which re-locked with it (since re-locked again)"]


def test_an_entry_whose_code_the_branch_never_had_still_fails(twice_repo: tuple[Path, str], tmp_path: Path) -> None:
    """The same branch with a commit whose lock and list name a digest its code does not have (``cost.py`` not
    changed): no code of the branch digests to it, so the entry fails as before."""
    _, first = twice_repo
    root = tmp_path / "repo"
    shutil.copytree(twice_repo[0], root, symlinks=True)
    git(root, "checkout", "-q", "-b", "forged", "main")
    git(root, "checkout", "-q", "twice", "--", LISTED)
    _with_model(root, R1, first)
    commit_all(root, "a lock and an entry naming code this commit does not have")
    git(root, "checkout", "-q", "main", "--", "locks")
    commit_all(root, "restore the lock")
    result = invoke("diff", "main", "--format", "json", root=root)
    assert result.exit_code == 1, result.output
    said = json.loads(result.stdout)["code_changed"]
    assert len(said) == 1 and said[0].startswith(f"{LISTED}: entry {first[7:19]}… added (passprice 0.1.0's, first "
                                                 "locked 2026-12-05): the digest of no code of this review")


def test_a_re_lock_followed_by_merges_of_other_code_passes(tmp_path: Path) -> None:
    """A branch that re-locks (its lock and list naming its code's digest) and then merges three other branches,
    each changing other pricing code: every merge's ``locks/`` differs from its merged side's, so each is a commit of
    the branch holding the lock, and its code is another's. Only the three newest commits holding a model were asked
    for their code, so the re-lock's own commit was never read and the entry failed as "the digest of no code of this
    review" (a lead branch's review, which had merged three helpers' branches after re-locking). The re-lock's commit,
    the oldest holding the model, is asked first now."""
    from passprice.locks import read_lock
    from passprice.pins import pricing_model_digest

    root = _checkout(tmp_path)
    for lock in (root / "locks").glob("*.lock.toml"):
        if lock.name != "r1-qwen7b-h200.lock.toml":
            lock.unlink()
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    git(root, "checkout", "-q", "-b", "lead")
    cost = root / "src" / "passprice" / "cost.py"
    cost.write_text(cost.read_text(encoding="utf-8") + "\n_RELOCKED = 1\n", encoding="utf-8")
    first = pricing_model_digest(root / "src" / "passprice")
    _with_model(root, R1, first)
    doc = json.loads((root / LISTED).read_text(encoding="utf-8"))
    doc["models"].append({"digest": first, "version": "0.1.0", "first_locked": "2026-12-05", "commit": "",
                          "records": [read_lock(root / R1).info.digest]})
    (root / LISTED).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    commit_all(root, "change the code, re-lock")
    for module in ("roofline", "speculate", "batching"):
        git(root, "checkout", "-q", "-b", module, "main")
        code = root / "src" / "passprice" / f"{module}.py"
        code.write_text(code.read_text(encoding="utf-8") + f"\n_{module.upper()} = 1\n", encoding="utf-8")
        commit_all(root, f"a helper's change of {module}")
        git(root, "checkout", "-q", "lead")
        git(root, "merge", "-q", "--no-ff", "--no-edit", module)
    result = invoke("diff", "main", "--format", "json", root=root)
    said = json.loads(result.stdout)["code_changed"]
    assert f"{LISTED}: entry {first[7:19]}… added (passprice 0.1.0's, first locked 2026-12-05): the code of a commit " \
           "of this branch, which re-locked with it (since re-locked again)" in said, said
    assert not any("the digest of no code of this review" in line for line in said), said
