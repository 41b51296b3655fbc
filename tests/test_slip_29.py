"""Slip round 29: a pull-request author changing a locked price (or the citation it rests on) past the review
(``passprice diff``), ``check`` and the pre-commit hook, each attempt a real git repository changed on a branch and
reviewed as CI reviews it; and three known leftovers:

- (L1) a commit that only removes a registry document a source record names outside the five record folders
  (``notes/…``, as the README's routing demo keeps one) ran no pre-commit hook (its ``files:`` pattern named the
  record folders and ``.gitattributes``), though ``check`` then fails: both hooks run on every commit now
  (``always_run``), a commit changing nothing ``check`` reads costing a memo replay.
- (L2) a lock's pinned fact and the card's fact hand-edited alike, the recorded price kept (HEAD priced with the
  running code): ``check`` and the review fail it ("does NOT reproduce"), as they did; but the variant with a
  price-neutral edit of ``src/passprice`` beside it (HEAD priced by its own code, whose locks were held only to their
  recorded provenance), the lock's recorded price set by hand to HEAD's price of a raised ``streams.read`` and its
  pins left as BASE pinned them, read "re-pin …, re-locked" (exit 0) while ``check`` failed it: HEAD's code now
  prices each changed lock from its pins in its own process, and the running code compares.
- (L3) two pull requests that each pass (one locks gpt-oss-20b-h200, the other raises the H200's streams.read and
  re-locks the four locks resting on it) merge without a conflict and leave the new lock stale on main: the
  workflow's ``merged`` job re-runs the review on each push to the default branch, which fails naming it, and
  ``check --frozen`` fails naming it (plain ``check`` reports the drift and passes, by design); the README says so,
  and that branch protection requiring an up-to-date branch closes it before the merge.

Attempts:

- (4) a registry document a fact's source names kept as a symbolic link (``notes/link.md`` → ``notes/real.md``), or
  named by a path with ``..`` in it: ``check`` (and the hook) passed, following the link, while a review reads the
  document at each revision through git, where neither names a file: no revision's review could price the locks
  resting on the fact ("BASE cannot price"; a later change read "out of date already on BASE", false), and a review
  of an unchanged work tree said the document changed. A document must be a file at its own plain path now.
- (5) ``requirements.txt`` (the line CI installs passprice by: the base branch's installs the reviewer of every later
  pull request) rewritten to another passprice read "no fact changed; no lock affected" (✅, exit 0): once merged,
  that passprice reviews every later change, a moved locked price among them. The review names it now, with the
  registry's other install files (``pyproject.toml``, ``hatch_build.py``, the hook's and the workflow's files): ⚠️,
  never failed, as passprice's own code is.
- (6, not fixed, said) a document untracked with ``git rm --cached`` stays for the hook's check: the hook passes, the
  review of the commit fails.
- (7) a derived fact's own citation re-cited, its derivation unchanged (the H200's ``array`` locator made to quote
  'INT8 Tensor Core 4,958 TOPS' over its 3958 TOPS input), the four locks resting on it re-pinned: "citation
  changed", nothing to verify, ✅ (a published or measured fact re-cited asks): it asks now.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke, side_processes
from passprice.locks import _canonical, _sorted
from passprice.modellist import UNRECORDED_SAYS
from passprice.registry import find_root
from passprice.scaffold import plan, write
from test_diff import commit_all, git
from test_slip_34 import renderings  # one in-process review rendered per format

# --- (L1) the pre-commit hook sees a commit removing a registry document outside the record folders -----------------

NOTES_SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "My notes on Mixtral routing"
kind = "registry"
publisher = "me"
path = "notes/mixtral-routing.md"
read = "how the figures were read off it"
"""
MISSING = ("sources/my-notes.toml: source.path: notes/mixtral-routing.md is not a file of this registry: put the "
           "document there (source.path is read from the registry's top folder), or correct source.path")


def _hook_env(path: Path) -> dict[str, str]:
    """The environment a commit in the registry at ``path`` runs its hook in (this interpreter's folder first on
    PATH: the ``passprice`` the ``language: system`` hook runs; pre-commit's cache inside the test's folder)."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PRE_COMMIT_HOME": str(path.parent / "pre-commit"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL":
            "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


@pytest.fixture(scope="module")
def hooked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry ``passprice init`` writes holding the README's ``sources/my-notes.toml`` and the document it names
    (``notes/mixtral-routing.md``), committed, with its pre-commit hook installed: built once for the module (three
    tests built it afresh, ~0.45 s of CPU each with ``pre-commit install``'s process; session 38), copied by
    :func:`_hooked_registry`."""
    pytest.importorskip("pre_commit")
    path = tmp_path_factory.mktemp("slip29-hooked") / "registry"
    write(plan(find_root(REPO)), path)
    (path / "sources" / "my-notes.toml").write_text(NOTES_SOURCE, encoding="utf-8")
    (path / "notes").mkdir()
    (path / "notes" / "mixtral-routing.md").write_text("# Mixtral routing\n", encoding="utf-8")
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=path, env=_hook_env(path), check=True,
                   capture_output=True)
    return path


def _hooked_registry(hooked: Path, path: Path) -> dict[str, str]:
    """A copy at ``path`` of the registry :func:`hooked` built (work tree, history and installed hook, links kept);
    the environment a commit there runs the hook in (:func:`_hook_env`)."""
    shutil.copytree(hooked, path, symlinks=True)
    return _hook_env(path)


def _commit(path: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    """``git commit -m MESSAGE`` of what is staged, the pre-commit hook running as it does for an author (what git
    and the hook print, together, on ``stdout``)."""
    return subprocess.run(["git", "commit", "-q", "-m", message], cwd=path, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)


def test_a_commit_removing_only_a_notes_document_fails_the_hook(hooked: Path, tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    path = tmp_path / "registry"
    env = _hooked_registry(hooked, path)
    assert invoke("check", root=path).exit_code == 0
    # a commit of a file check does not read runs the hook too, and passes
    (path / "README.md").write_text("# my registry\n", encoding="utf-8")
    git(path, "add", "README.md")
    done = _commit(path, env, "readme")
    assert done.returncode == 0, done.stdout
    assert "passprice check" in done.stdout and "Passed" in done.stdout
    # the document alone removed: was "passprice check....(no files to check)Skipped" and the commit made
    head = git(path, "rev-parse", "HEAD")
    git(path, "rm", "-q", "notes/mixtral-routing.md")
    done = _commit(path, env, "drop my notes")
    assert done.returncode == 1, done.stdout
    assert "passprice check" in done.stdout and "Failed" in done.stdout
    assert f"passprice: error: {MISSING}" in done.stdout
    assert git(path, "rev-parse", "HEAD") == head  # no commit was made
    checked = invoke("check", root=path)
    assert checked.exit_code == 2 and checked.stderr == f"passprice: error: {MISSING}\n"
    # the old pattern skipped it: the hook as it was, with its files: pattern
    config = path / ".pre-commit-config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "always_run: true", r"files: ^(facts|locks|registry|schema|sources)/|(^|/)\.gitattributes$"), encoding="utf-8")
    git(path, "add", ".pre-commit-config.yaml")
    done = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files",
                           "notes/mixtral-routing.md"], cwd=path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "(no files to check)Skipped" in done.stdout, done.stdout


def test_a_document_only_untracked_passes_the_hook_and_fails_the_review(hooked: Path, tmp_path: Path) -> None:
    """Not fixed, said: ``git rm --cached`` leaves the document in the work tree, untracked, and pre-commit stashes
    unstaged changes but leaves untracked files, so the hook's check still finds it and passes; the commit holds no
    document, which the review of the commit (and check in CI's clean checkout) fails. The README says so."""
    pytest.importorskip("pre_commit")
    path = tmp_path / "registry"
    env = _hooked_registry(hooked, path)
    git(path, "rm", "-q", "--cached", "notes/mixtral-routing.md")
    done = _commit(path, env, "untrack my notes")
    assert done.returncode == 0, done.stdout
    assert "passprice check" in done.stdout and "Passed" in done.stdout
    review = invoke("diff", "main~1", "main", root=path)
    assert review.exit_code == 2, review.output
    assert f"  {MISSING}" in review.stdout.splitlines()


def test_a_document_moved_with_its_source_record_passes_the_hook(hooked: Path, tmp_path: Path) -> None:
    """The honest change the hook must not block: the document moved and the record's source.path with it."""
    pytest.importorskip("pre_commit")
    path = tmp_path / "registry"
    env = _hooked_registry(hooked, path)
    git(path, "mv", "notes/mixtral-routing.md", "notes/routing.md")
    record = path / "sources" / "my-notes.toml"
    record.write_text(NOTES_SOURCE.replace("notes/mixtral-routing.md", "notes/routing.md"), encoding="utf-8")
    git(path, "add", "sources/my-notes.toml")
    done = _commit(path, env, "notes renamed")
    assert done.returncode == 0, done.stdout


# --- (L2) a lock's pins and recorded price edited by hand apart ---------------------------------------------------

R1 = "r1-qwen7b-h200"
R1_LOCK = f"locks/{R1}.lock.toml"

#: The review's lines about the pricing-model list begin so.
LIST = "src/passprice/pricing_models.json: "


def lock_lines(head_check: list[str]) -> list[str]:
    """HEAD's check lines about its locks: a lock re-locked by ``passprice lock`` and then edited by hand also leaves
    the pricing-model list a record no lock holds (slip 57), a line of its own, beside the lock's."""
    return [x for x in head_check if not x.startswith(LIST)]
CARD = "h200_sxm_141gb"


def _table(text: str, head: str) -> str:
    """The lines of a TOML document's table ``[head]`` and its sub-tables (up to the next other table)."""
    out, on = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("["):
            on = line.startswith((f"[{head}]", f"[{head}."))
        if on:
            out.append(line)
    return "".join(out)


def _redigest(text: str) -> str:
    """``text`` (a lock file) with its ``lock.digest`` recomputed, as someone copying the hash would."""
    body = _sorted(tomllib.loads(text))
    stated = body["lock"].pop("digest")
    return text.replace(stated, "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest())


def _raise_read(path: Path) -> None:
    edited = invoke("fact", "set", CARD, "streams.read", "--value", "0.95", "--unit", "1", "--provenance", "measured",
                    "--source", "azure-ai-benchmarking-guide", "--locator", "a what-if: a faster read", root=path)
    assert edited.exit_code == 0, edited.output


def _relock_apart(path: Path, keep: str) -> None:
    """The card's streams.read raised to 0.95 and r1's lock re-locked (996.1 → 1,013.4 tokens/s), then ``keep``
    (``pins``: BASE's pins under the new price; ``price``: the new pins under BASE's price) put back as BASE's
    lock had it, the digest recomputed."""
    lock = path / R1_LOCK
    before = lock.read_text(encoding="utf-8")
    _raise_read(path)
    relocked = invoke("lock", "--update", "-o", str(lock), root=path)
    assert relocked.exit_code == 0, relocked.output
    after = lock.read_text(encoding="utf-8")
    if keep == "pins":
        forged = before.replace(_table(before, "price"), _table(after, "price"))
    else:
        forged = after.replace(_table(after, "price"), _table(before, "price"))
    assert forged not in (before, after)
    lock.write_text(_redigest(forged), encoding="utf-8")


@pytest.fixture(scope="module")
def forged_pins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`test_slip_10._base`'s registry on a branch ``pr`` whose r1 lock holds BASE's pins under the price of a
    raised streams.read (:func:`_relock_apart` ``pins``), uncommitted: made once for the two tests that start from it
    (a fact set and a re-lock, ~1 s of CPU; session 38), copied by each."""
    from test_slip_10 import _base

    path = _base(tmp_path_factory.mktemp("slip29-forged") / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    _relock_apart(path, keep="pins")
    return path


def _tidy_code(path: Path) -> None:
    """A price-neutral edit of ``src/passprice`` (its pricing-model digest moves): HEAD is priced by its own code."""
    module = path / "src" / "passprice" / "serving.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n#: read by nothing\nUNREAD_CONSTANT = 1\n",
                      encoding="utf-8")


def test_pins_edited_with_the_card_and_the_price_kept_fail_check_and_the_review(tmp_path: Path) -> None:
    """The leftover as asked: the card's fact and the lock's pin of it hand-edited alike, the pricing code unchanged
    (HEAD priced with the running code): the recorded price does not follow from the pins, and both say so."""
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    _relock_apart(path, keep="price")
    commit_all(path, "streams.read 0.95; the lock's pin of it too")
    checked = invoke("check", root=path)
    assert checked.exit_code == 1
    assert ("  does NOT reproduce, although the pricing model's code is the lock's (first: memory_s): its pinned "
            "inputs do not give what it records") in checked.stdout
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    assert result.exit_code == 1, result.output
    # slip 58: its digest, recomputed by hand, is in no record of the list either
    line, unrecorded = lock_lines(json.loads(result.stdout)["head_check"])
    assert unrecorded.startswith(f"{R1_LOCK}: lock.digest: ") and UNRECORDED_SAYS in unrecorded
    assert line.startswith(f"{R1_LOCK}: does NOT reproduce, although the pricing model's code is the lock's (first: "
                           "memory_s)")


def test_a_price_set_by_hand_over_base_s_pins_beside_a_code_edit_fails_the_review(
    forged_pins: Path, tmp_path: Path
) -> None:
    path = tmp_path / "registry"
    shutil.copytree(forged_pins, path, symlinks=True)
    _tidy_code(path)
    commit_all(path, "streams.read 0.95; r1's price; tidy serving.py")
    checked = invoke("check", root=path)
    assert checked.exit_code == 1
    assert "    tokens_per_s: 1013.4088703140782 → 996.0966124437687 (-1.708 %)" in checked.stdout.splitlines()
    status, (as_json, markdown) = renderings(path, "json", "markdown")  # one review
    out = json.loads(as_json)
    assert out["pricing_model"]["priced_with"][1].endswith("in its own process")
    assert status == 1, as_json  # was 0: "re-pin (…), re-locked", the recorded 996.1 → 1,013.4
    *lines, unrecorded = lock_lines(out["head_check"])
    assert UNRECORDED_SAYS in unrecorded  # slip 58: its digest, recomputed by hand, is in no record of the list
    assert lines == [
        f"{R1_LOCK}: does NOT reproduce from its own pinned inputs with HEAD's own code (first: memory_s: "
        "0.0009867685485031106 recorded, 0.0010039186836974126 from its pins): its recorded price is not what its "
        "pinned facts give (the lock was edited by hand, its digest recomputed, or written by other code than "
        f"HEAD's); restore it, then re-lock it with HEAD's code: passprice lock --update -o {R1_LOCK}"
    ]
    row = next(line for line in markdown.splitlines() if line.startswith(f"| `{R1}` |"))
    assert row.endswith("| ❌ does NOT reproduce from its own pinned inputs (edited by hand?): see HEAD fails "
                        "passprice check |")


def test_head_s_code_that_cannot_price_pins_fails_the_review(forged_pins: Path, tmp_path: Path) -> None:
    """The same forged price, HEAD's reproduce.find_checkpoint made to raise (the review's pricing of HEAD's locks
    never calls it): the pins went unpriced and the lock was left alone, "re-locked" (exit 0)."""
    path = tmp_path / "registry"
    shutil.copytree(forged_pins, path, symlinks=True)
    module = path / "src" / "passprice" / "reproduce.py"
    text = module.read_text(encoding="utf-8")
    head = "def find_checkpoint(root: Root, lock: Lock) -> tuple[GGUFHeader | None, CheckpointState]:\n"
    assert text.count(head) == 1
    module.write_text(text.replace(head, head + "    raise RuntimeError('not today')\n"), encoding="utf-8")
    commit_all(path, "streams.read 0.95; r1's price; reproduce.py")
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    assert result.exit_code == 1, result.output
    line, unrecorded = lock_lines(json.loads(result.stdout)["head_check"])
    assert UNRECORDED_SAYS in unrecorded  # slip 58: its digest, recomputed by hand, is in no record of the list
    assert line.startswith(f"{R1_LOCK}: does NOT reproduce from its own pinned inputs with HEAD's own code: they "
                           "were not priced (its own code could not price it: RuntimeError: not today)")


def test_a_lock_re_locked_by_head_s_own_code_still_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No false alarm: streams.read raised beside the code edit, and the lock re-locked by HEAD's own code (a
    passprice run from the checkout's src/passprice, as the README asks): its pins give its price with that code."""
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    _raise_read(path)
    _tidy_code(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(path / "src")
    done = subprocess.run([sys.executable, "-B", "-m", "passprice", "lock", "--update", "-o", R1_LOCK], cwd=path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    commit_all(path, "streams.read 0.95, re-locked by HEAD's code; tidy serving.py")
    started = side_processes(monkeypatch)
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    out = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    # HEAD's code priced its lock's pins and its locks from one process (two before, each importing the package),
    # stopped when the review returned
    assert len(started) == 1 and started[0].poll() is not None
    assert out["head_check"] == [] and [x["review"] for x in out["locks"]] == ["re-locked"]


# --- (L3) two pull requests that each pass, merged, leave a lock stale on main -------------------------------------

GPT = "gpt-oss-20b-h200"
RELOCKED = ("qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp", R1)


@pytest.fixture(scope="module")
def on_main(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's registry folders committed on ``main``: made once for the module, copied by each test."""
    path = tmp_path_factory.mktemp("slip29-main") / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    return path


def test_two_passing_pull_requests_merged_leave_a_lock_main_names(on_main: Path, tmp_path: Path) -> None:
    path = tmp_path / "registry"
    shutil.copytree(on_main, path, symlinks=True)
    git(path, "checkout", "-q", "-b", "lock-gpt")
    locked = invoke("lock", GPT, "-o", str(path / "locks" / f"{GPT}.lock.toml"), root=path)
    assert locked.exit_code == 0, locked.output
    commit_all(path, "lock gpt-oss-20b-h200")
    first = invoke("diff", "main", "HEAD", root=path)
    assert first.exit_code == 0, first.output
    git(path, "checkout", "-q", "-b", "faster-read", "main")
    _raise_read(path)
    for name in RELOCKED:
        assert invoke("lock", "--update", "-o", str(path / "locks" / f"{name}.lock.toml"), root=path).exit_code == 0
    commit_all(path, "streams.read 0.95, re-locked")
    second = invoke("diff", "main", "HEAD", root=path)
    assert second.exit_code == 0, second.output
    assert "5 locks affected, 5 re-locked" in second.stdout.splitlines()[1]  # gpt-oss is no lock on this base
    git(path, "checkout", "-q", "main")
    git(path, "merge", "-q", "--no-ff", "-m", "merge lock-gpt", "lock-gpt")
    git(path, "merge", "-q", "--no-ff", "-m", "merge faster-read", "faster-read")  # no conflict: other files

    # check reports the drift and passes (drift passes check by design); --frozen fails, naming the lock
    checked = invoke("check", root=path)
    assert checked.exit_code == 0, checked.output
    lines = checked.stdout.splitlines()
    at = lines.index(f"lock {GPT} (locks/{GPT}.lock.toml, locks serving {GPT}): ok")
    assert lines[at + 5: at + 8] == [
        "  drift:",
        "    streams.read: 0.9333 (measured) → 0.95 (measured)",
        # 9,603.7 and 9,733.7 before session 39 read a windowed layer's window less the row (window55)
        "  today: 9,604.3 tokens/s at batch 32 recorded; 9,734.3 tokens/s at batch 32 with today's inputs",
    ]
    frozen = invoke("check", "--frozen", root=path)
    assert frozen.exit_code == 1
    assert frozen.stdout.splitlines()[-1] == (
        f"check FAILED (--frozen: the inputs of {GPT} drifted since they were locked; review the change, then re-lock "
        f"each: `passprice lock --update -o locks/{GPT}.lock.toml`)")
    # the workflow's merged job: the review run again on what the push brought (the commit before it → main)
    review = invoke("diff", git(path, "rev-parse", "main~1"), "main", root=path)
    assert review.exit_code == 1, review.output
    assert review.stderr == (f"passprice: refused: it moves the locked price of {GPT} without re-locking (review the "
                             f"move, then `passprice lock --update -o locks/{GPT}.lock.toml`)\n")
    assert f"  {GPT} (locks/{GPT}.lock.toml, card {CARD}, price): price moved, lock not updated (memory_s)" in (
        review.stdout.splitlines())
    # re-locked on main, all passes again
    assert invoke("lock", "--update", "-o", str(path / "locks" / f"{GPT}.lock.toml"), root=path).exit_code == 0
    commit_all(path, "re-lock gpt-oss-20b-h200 on main")
    assert invoke("check", "--frozen", root=path).exit_code == 0
    assert invoke("diff", "main~1", "main", root=path).exit_code == 0


def test_the_workflow_reviews_each_push_to_the_default_branch() -> None:
    import yaml

    from passprice.scaffold import workflow

    for text in ((REPO / ".github" / "workflows" / "facts.yml").read_text(encoding="utf-8"),
                 workflow("python -m pip install -r requirements.txt")):
        flow = yaml.safe_load(text)
        assert set(flow[True]) == {"pull_request", "push"}  # yaml reads the key `on` as True
        assert flow["jobs"]["facts"]["if"] == "github.event_name == 'pull_request'"
        merged = flow["jobs"]["merged"]
        assert merged["if"] == ("github.event_name == 'push' && github.ref_name == "
                                "github.event.repository.default_branch")
        runs = [step.get("run") for step in merged["steps"]]
        assert runs[-2:] == ["passprice check",
                             'passprice diff "$BEFORE" "$GITHUB_SHA" --format markdown >> "$GITHUB_STEP_SUMMARY"']
        assert merged["steps"][-1]["env"] == {"BEFORE": "${{ github.event.before }}"}
        assert merged["steps"][0]["with"] == {"fetch-depth": 0, "persist-credentials": False}


# --- (4) a registry document kept as a symbolic link, or named through ``..`` ----------------------------------------


def _linked_registry(path: Path, source_path: str) -> None:
    """This checkout's registry at ``path`` with ``notes/real.md``, a link ``notes/link.md`` to it, a source record
    ``my-notes`` naming ``source_path``, and the H200's streams.read cited from it (its figure unchanged)."""
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "notes").mkdir()
    (path / "notes" / "real.md").write_text("# Bench notes\nDot: 4.48 TB/s of 4.8 (0.9333)\n", encoding="utf-8")
    os.symlink("real.md", path / "notes" / "link.md")
    (path / "sources" / "my-notes.toml").write_text(NOTES_SOURCE.replace("notes/mixtral-routing.md", source_path),
                                                    encoding="utf-8")


@pytest.mark.parametrize(
    ("source_path", "problem"),
    [
        ("notes/link.md", "notes/link.md passes through a symbolic link (notes/link.md): a document of this registry "
         "is a file at its own path (a review reads it through git at each revision, where a link holds only its "
         "target's name): put the document itself there, or name its own path in source.path"),
        ("notes/../notes/real.md", "notes/../notes/real.md is not a plain path (it holds '..'): name the document by "
         "its own path from the registry's top folder, as git lists it (a review reads it at each revision)"),
    ],
)
def test_a_document_through_a_link_or_dot_dot_fails_check(tmp_path: Path, source_path: str, problem: str) -> None:
    path = tmp_path / "registry"
    _linked_registry(path, source_path)
    checked = invoke("check", root=path)
    assert checked.exit_code == 2, checked.output  # was 0: the link followed, the path resolved
    assert checked.stderr == f"passprice: error: sources/my-notes.toml: source.path: {problem}\n"
    cited = invoke("fact", "set", CARD, "streams.read", "--value", "0.9333", "--unit", "1", "--provenance",
                   "measured", "--source", "my-notes", "--locator", "Dot line", root=path)
    assert cited.exit_code == 2 and f"source.path: {problem}" in cited.stderr
    # the document at its own plain path is what check and a review both read: the same registry, byte for byte,
    # whichever path it was named by, so it is checked once (in the link's case; session 39)
    (path / "sources" / "my-notes.toml").write_text(NOTES_SOURCE.replace("notes/mixtral-routing.md", "notes/real.md"),
                                                    encoding="utf-8")
    (path / "notes" / "link.md").unlink()
    if source_path == "notes/link.md":
        assert invoke("check", root=path).exit_code == 0


def test_a_review_of_a_linked_document_fails_on_head_s_check(tmp_path: Path) -> None:
    """The review CI runs (``diff BASE`` of the work tree) of a registry whose main holds the link, a pull request
    editing the link's target: it said "1 source whose document changed, to verify" (as it said of an unchanged
    work tree) with BASE's locks not priced, exit 0. main's check failing, so does HEAD's, and the review."""
    path = tmp_path / "registry"
    _linked_registry(path, "notes/link.md")
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry with a linked document")
    git(path, "checkout", "-q", "-b", "pr")
    (path / "notes" / "real.md").write_text("# Bench notes\nDot: 4.56 TB/s of 4.8 (0.95)\n", encoding="utf-8")
    commit_all(path, "notes: a better run")
    result = invoke("diff", "main", root=path)
    assert result.exit_code == 2, result.output
    assert "HEAD fails passprice check (1 problem)" in result.stdout.splitlines()[1]
    assert ("  sources/my-notes.toml: source.path: notes/link.md passes through a symbolic link (notes/link.md): a "
            "document of this registry is a file at its own path") in "\n".join(result.stdout.splitlines())


# --- (5) the line that installs the reviewer, rewritten --------------------------------------------------------------


def test_a_rewritten_requirements_line_is_named_by_the_review(tmp_path: Path) -> None:
    path = tmp_path / "registry"
    write(plan(find_root(REPO)), path)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    assert invoke("diff", "main", "HEAD", root=path).stdout.splitlines()[1].startswith("no changes")
    git(path, "checkout", "-q", "-b", "pr")
    (path / "requirements.txt").write_text(
        "passprice @ git+https://github.com/someone-else/passprice@0123456789abcdef0123456789abcdef01234567\n",
        encoding="utf-8")
    workflow = path / ".github" / "workflows" / "facts.yml"
    workflow.write_text(workflow.read_text(encoding="utf-8") + "# tidied\n", encoding="utf-8")
    commit_all(path, "requirements: another passprice")
    status, (text, markdown_text, as_json) = renderings(path, "text", "markdown", "json")  # one review
    assert status == 0, text  # shown, never failed
    lines = text.splitlines()
    # was "no changes to facts, registry, locks or the pricing model; 8 locks unaffected" (✅)
    assert lines[1] == ("no fact changed; no lock affected; how passprice is installed changed (requirements.txt, "
                        ".github/workflows/facts.yml)")
    at = lines.index("how passprice is installed changed: these decide which passprice checks and reviews the "
                     "registry: once merged, the one they install reviews every later pull request, so read them as "
                     "code (guard them with a CODEOWNERS rule)")
    assert lines[at + 1: at + 3] == ["  requirements.txt", "  .github/workflows/facts.yml"]
    markdown = markdown_text.splitlines()
    assert markdown[0].startswith("⚠️ **passprice diff**")
    assert "#### How passprice is installed" in markdown and "- `requirements.txt`" in markdown
    out = json.loads(as_json)
    assert out["install_changed"] == ["requirements.txt", ".github/workflows/facts.yml"]
    # the work tree as CI reviews it: the same
    work = invoke("diff", "main", "--json", root=path)
    assert json.loads(work.stdout)["install_changed"] == ["requirements.txt", ".github/workflows/facts.yml"]


# --- (7) a derived fact's own citation re-cited ----------------------------------------------------------------------


def test_a_derived_fact_re_cited_asks_to_verify(on_main: Path, tmp_path: Path) -> None:
    path = tmp_path / "registry"
    shutil.copytree(on_main, path, symlinks=True)
    git(path, "checkout", "-q", "-b", "pr")
    card = path / "facts" / "cards" / f"{CARD}.toml"
    text = card.read_text(encoding="utf-8")
    old = ("locator = \"Technical Specifications table, H200 SXM column: 'INT8 Tensor Core 3,958 TOPS' (with "
           "sparsity)\"\nnote")
    assert text.count(old) == 1
    card.write_text(text.replace(old, old.replace("3,958", "4,958")), encoding="utf-8")
    for name in RELOCKED:
        assert invoke("lock", "--update", "-o", str(path / "locks" / f"{name}.lock.toml"), root=path).exit_code == 0
    commit_all(path, "array: re-cited")
    _, (as_json, markdown) = renderings(path, "json", "markdown")  # one review
    out = json.loads(as_json)
    assert out["exit_status"] == 0
    # was: "1 fact changed in 1 file; 4 locks affected, 4 re-locked; …", nothing to verify, ✅
    assert out["summary"].startswith(
        "1 fact changed in 1 file, 1 to verify in its source; 5 locks affected, 5 re-locked")
    assert out["to_verify"] == [f"{CARD}:array"]
    (fact,) = [f for file in out["files"] for f in file["facts"]]
    assert fact["to_verify"] == (
        "its citation changed: does nvidia-h200-datasheet: Technical Specifications table, H200 SXM column: 'INT8 "
        "Tensor Core 4,958 TOPS' (with sparsity) give what its derivation (sparse / sparsity / ops_per_mac) takes "
        "from it?")
    assert markdown.startswith("⚠️ **passprice diff**")
