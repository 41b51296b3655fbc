"""Slip round 11: the gaps last session's closing note listed, each reproduced and kept.

- (1) A lock file copied under another name (``cp locks/A.lock.toml locks/B.lock.toml``: the same pins, floors and
  price, and A's name inside) was accepted without a word by ``check`` and by the review that added it. ``check``
  warns of it now (not a failure: a duplicate lets no change past its floors), naming both files and the name the
  copy carries inside; the review names it under *Locks duplicating another* (⚠️, exit unchanged).
- (2) A committed symbolic link inside ``locks/`` under a name passprice does not read (``locks/sub → ../archive``,
  a folder holding a lock) was left out of the revision's files: ``check`` in a checkout of that commit fails the
  folder of records inside ``locks/``, while ``diff main HEAD`` said "no changes", exit 0. The link's folder is
  now materialized as the checkout sees it (its ``.toml`` names), so the review fails as ``check`` does; a link
  leading outside the repository is refused by name (what it names cannot be read at the revision).
- (3) A measurement file renamed (``git mv registry/measurements/A.toml B.toml``) keeps every run (found by id) and
  every fit, so ``check`` passed while each fitted stack fact's locator named ``A.toml``, a file that was gone: a
  citation nobody could follow. ``check`` (and a review, which runs check's file review on HEAD) fails it now, one
  line per locator, and ``passprice calibrate`` writes the locator again.
- (4) A card fact rewritten to an equal quantity (``4.8 TB/s`` → ``4800 GB/s``) was drift to ``check`` (``--frozen``
  failed every lock of the card) and to the review ("re-pin … check --frozen fails until then"). An equal quantity,
  every other field alike, is no drift now: ``check`` lists it as rewritten (``--frozen`` passes), ``reproduce``
  says so, and the review's fact row and lock rows say "rewritten, same quantity". A figure moved with the unit
  is still drift.
- (5) The review's list of passprice's own code changed (``sidecode.code_changes``) read every ``.py`` below each
  side's ``src/passprice`` whole, with no cap and through links: a 1 GiB sparse ``.py`` in a hidden folder of a
  folder side (which the side's own reading passes over) took the review 14 s and 1.1 GB, and a FIFO named ``.py``
  would hold it for ever. A file past the 4 MiB a module may hold, a link or a FIFO is now not read and named as
  changed with why.
- (8) A process killed (SIGKILL) while it wrote a file left its temporary file (``.NAME.<12 hex>.tmp``, mode
  ``0o600``) beside it, and no later run said a word. ``check`` warns of each such file in a record folder now,
  naming the file it was written for and how to remove it; nothing removes it (nothing proves no passprice is
  writing through it now, and a file passprice did not make is never its to delete): a file of another name or mode
  is not named.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke
from test_slip_34 import renderings  # one in-process review rendered per format

R1 = "r1-qwen7b-h200"

# --- (1) a lock file copied under another name ------------------------------------------------------------------------

COPY_LINE = (
    "locks/r1-copy.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml: it locks serving r1-qwen7b-h200 (price) "
    "with the same pins, floors and price under another file name; locks/r1-copy.lock.toml is named "
    "'r1-qwen7b-h200' inside, not after its file; it guards nothing locks/r1-qwen7b-h200.lock.toml does not, and "
    "re-locking one leaves the other pinning the old facts: remove one"
)


def test_check_warns_of_a_lock_copied_under_another_name(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    assert "duplicates" not in invoke("check", root=root).stdout
    shutil.copyfile(root / "locks" / f"{R1}.lock.toml", root / "locks" / "r1-copy.lock.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 0, result.output  # a warning: the copy lets nothing past its floors
    assert f"  warning: {COPY_LINE}" in result.stdout.splitlines()
    out = json.loads(invoke("check", "--json", root=root).stdout)
    assert out["warnings"].count(COPY_LINE) == 1
    # Another lock of the same serving (the best batch) is no duplicate; nor is the copy once re-locked elsewhere.
    assert sum("duplicates" in w for w in out["warnings"]) == 1


def test_a_review_adding_a_copied_lock_names_it(tmp_path: Path) -> None:
    from test_diff import commit_all, git, make_lock_file

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, R1, R1)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    shutil.copyfile(path / "locks" / f"{R1}.lock.toml", path / "locks" / "r1-copy.lock.toml")
    commit_all(path, "a copy of the lock")
    status, (text, markdown, as_json) = renderings(path, "text", "markdown", "json")
    assert status == 0, text
    assert "1 duplicating another" in text.splitlines()[1]
    assert f"locks duplicating another\n  {COPY_LINE}\n" in text
    assert markdown.startswith("⚠️ **passprice diff**")
    assert "#### Locks duplicating another" in markdown
    out = json.loads(as_json)
    assert out["duplicate_locks"] == [COPY_LINE] and out["exit_status"] == 0
    # A review that touches neither file says nothing of them (check still warns).
    assert json.loads(invoke("diff", "HEAD", "HEAD", "--json", root=path).stdout)["duplicate_locks"] == []


# --- (2) a committed symbolic link inside locks/ ---------------------------------------------------------------------


def _registry_with_lock(path: Path) -> Path:
    from test_diff import commit_all, git, make_lock_file

    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, R1, R1)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    return path


def test_a_committed_link_to_a_folder_of_locks_fails_the_review_as_check_fails_it(tmp_path: Path) -> None:
    from test_diff import commit_all

    path = _registry_with_lock(tmp_path / "registry")
    (path / "archive").mkdir()
    shutil.copyfile(path / "locks" / f"{R1}.lock.toml", path / "archive" / "old.lock.toml")
    (path / "locks" / "sub").symlink_to("../archive")
    commit_all(path, "a folder of old locks, linked into locks/")
    stray = ("locks/sub: not a folder passprice reads: its 1 .toml file is neither checked nor priced (passprice "
             "reads locks/ itself, not the folders in it: move them to locks/)")
    assert f"passprice: error: {stray}" in invoke("check", root=path).stderr  # the checkout's own check
    for revisions in (("main", "HEAD"), ("main",)):  # a revision, and the work tree
        result = invoke("diff", *revisions, root=path)
        assert result.exit_code == 2, result.output
        assert f"passprice: error: on HEAD: {stray}" in result.stderr.splitlines()
        assert "HEAD fails passprice check (1 problem)" in result.stdout.splitlines()[1]


def test_a_committed_link_in_locks_leading_outside_the_repository_is_refused(tmp_path: Path) -> None:
    from test_diff import commit_all, git

    path = _registry_with_lock(tmp_path / "registry")
    (tmp_path / "elsewhere").mkdir()
    (path / "locks" / "sub").symlink_to(tmp_path / "elsewhere")
    commit_all(path, "a link out")
    sha = git(path, "rev-parse", "HEAD")[:12]
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: locks/sub: a symbolic link at {sha}, leading outside the repository; passprice diff "
        "compares the files themselves (commit the file, or the folder's files, in place of the link)"
    ]


# --- (3) a measurement file renamed: the stack facts' locators --------------------------------------------------------

OLD_RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
NEW_RUNS = "registry/measurements/xjd-llamabench.toml"
STACK = "llamacpp-cuda-2405"


def test_a_renamed_measurement_file_fails_check_on_the_locators_naming_it(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / OLD_RUNS).rename(root / NEW_RUNS)
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    listed = result.stdout.split("\nproblems, as listed at the top")[0]  # (said again before check FAILED)
    problems = [line for line in listed.splitlines() if line.startswith("  facts/stacks/")]
    fitted = ("overhead.pass, overhead.layer, share.read, share.append, share.array, share.float, share.vector, "
              "share.scale, terms.serial")
    assert problems[0] == (
        f"  facts/stacks/{STACK}.toml: {fitted}: the locator names {OLD_RUNS}, but the runs they derive from are "
        f"in {NEW_RUNS} now (a measurement file renamed, or runs moved): a citation that does not lead to the "
        f"runs; run passprice calibrate --stack {STACK}"
    )
    assert [p.split(": ")[1] for p in problems[1:]] == [
        "range.rows.min", "range.rows.max", "range.position.min", "range.position.max"
    ]
    assert "the runs it derives from" in problems[1]
    # calibrate writes the locators again: check holds
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    assert invoke("check", root=root).exit_code == 0
    text = (root / "facts" / "stacks" / f"{STACK}.toml").read_text(encoding="utf-8")
    locators = [line for line in text.splitlines() if line.startswith("locator = ")]
    assert not any(OLD_RUNS in line for line in locators)
    assert sum(NEW_RUNS in line for line in locators) == 13  # the 13 derived facts calibrate wrote


# --- (4) a fact rewritten to the same quantity ------------------------------------------------------------------------

CARD = "facts/cards/h200_sxm_141gb.toml"
WRITTEN = 'value = 4.8\nunit = "TB/s"'


def _rewrite(root: Path, value: str) -> None:
    card = root / CARD
    text = card.read_text(encoding="utf-8")
    assert text.count(WRITTEN) == 1
    card.write_text(text.replace(WRITTEN, f'value = {value}\nunit = "GB/s"'), encoding="utf-8")


def test_a_fact_rewritten_to_the_same_quantity_is_no_drift_to_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _rewrite(root, "4800")
    result = invoke("check", "--frozen", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index(f"lock {R1} (locks/{R1}.lock.toml, locks serving {R1}): ok")
    assert lines[at + 5 : at + 8] == [
        "  drift: none",
        "  rewritten (no drift, also with --frozen; lock --update re-pins them as written):",
        "    memory.bandwidth: 4.8 TB/s → 4800 GB/s (rewritten, same quantity)",
    ]
    status = next(s for s in json.loads(invoke("check", "--json", root=root).stdout)["locks"] if s["name"] == R1)
    assert status["drift"] == [] and status["drifted"] is False
    assert status["rewritten"] == ["memory.bandwidth: 4.8 TB/s → 4800 GB/s (rewritten, same quantity)"]
    shown = invoke("reproduce", R1, root=root).stdout
    assert ("unchanged; memory.bandwidth: 4.8 TB/s → 4800 GB/s (rewritten, same quantity): no drift (lock --update "
            "re-pins it)") in shown
    # The figure moved with the unit: drift, as before.
    _rewrite(copy_root(tmp_path / "moved"), "4900")
    moved = invoke("check", "--frozen", root=tmp_path / "moved" / "root")
    assert moved.exit_code == 1
    assert "    memory.bandwidth: 4.8 TB/s (published) → 4900 GB/s (published)" in moved.stdout.splitlines()


def test_a_review_of_a_fact_rewritten_to_the_same_quantity_says_so(tmp_path: Path) -> None:
    from test_diff import commit_all

    path = _registry_with_lock(tmp_path / "registry")
    _rewrite(path, "4800")
    commit_all(path, "the bandwidth in GB/s")
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == ("1 fact changed in 1 file; 1 lock affected, 1 pinning a fact rewritten to the same quantity "
                        "(no drift)")
    assert "  memory.bandwidth  4.8 TB/s → 4800 GB/s  (rewritten, same quantity: unit TB/s → GB/s)  published" in lines
    assert (f"  {R1} (locks/{R1}.lock.toml, card h200_sxm_141gb, price): pins memory.bandwidth as written before "
            f"the change (rewritten, same quantity: no drift; passprice lock --update -o locks/{R1}.lock.toml "
            "re-pins the words)") in lines
    assert "check --frozen fails" not in result.stdout
    out = json.loads(invoke("diff", "main", "HEAD", "--json", root=path).stdout)
    assert out["drifted"] == [] and out["locks"][0]["rewritten"] == ["memory.bandwidth"]


# --- (5) the review's look at passprice's own code: bounded ---------------------------------------------------------


def test_a_huge_or_special_py_file_in_a_side_s_code_is_named_not_read(tmp_path: Path) -> None:
    import os

    from passprice.sidecode import Code, code_changes

    sides = []
    for name in ("base", "head"):
        folder = tmp_path / name / "src" / "passprice"
        folder.mkdir(parents=True)
        (folder / "a.py").write_text("x = 1\n", encoding="utf-8")
        sides.append(folder)
    hidden = sides[1] / ".hidden"
    hidden.mkdir()
    with open(hidden / "huge.py", "wb") as handle:
        handle.truncate(1 << 30)  # sparse: 1 GiB that costs no disk
    os.mkfifo(hidden / "pipe.py")
    (sides[1] / "link.py").symlink_to(sides[1] / "a.py")
    base, head = (Code(folder=f, model="m", running=False, own=True) for f in sides)
    assert code_changes(base, head) == (
        "src/passprice/.hidden/huge.py (1,073,741,824 bytes, past the 4,194,304 a module may hold: not read, "
        "counted as changed)",
        "src/passprice/.hidden/pipe.py (not a regular file: not read, counted as changed)",
        "src/passprice/link.py (a symbolic link: not read, counted as changed)",
    )
    (sides[1] / "a.py").write_text("x = 2\n", encoding="utf-8")
    assert "src/passprice/a.py" in code_changes(base, head)


# --- (8) a write killed: its temporary file ------------------------------------------------------------------------


def test_a_write_killed_leaves_a_temporary_file_check_names_and_never_removes(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    root = copy_root(tmp_path)
    target = root / "locks" / "slow.lock.toml"
    writer = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from passprice.files import write_atomically\n"
        "def rows():\n"
        "    yield 'x = 1\\n'\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "    yield 'y = 2\\n'\n"
        "write_atomically(Path(sys.argv[1]), rows())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    child = subprocess.Popen([sys.executable, "-c", writer, str(target)], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    left = [p for p in (root / "locks").iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and not target.exists()
    stale = left[0]
    assert stale.name.startswith(".slow.lock.toml.") and (stale.stat().st_mode & 0o777) == 0o600
    # Look-alikes that are not passprice's: another mode, another pattern.
    (root / "locks" / ".mine.lock.toml.0123456789ab.tmp").write_text("mine")
    os.chmod(root / "locks" / ".mine.lock.toml.0123456789ab.tmp", 0o644)
    (root / "locks" / ".notes.tmp").write_text("notes")
    os.chmod(root / "locks" / ".notes.tmp", 0o600)
    result = invoke("check", root=root)
    assert result.exit_code == 0, result.output  # a warning: passprice reads nothing from it
    warnings = [line for line in result.stdout.splitlines() if line.startswith("  warning:") and ".tmp" in line]
    assert warnings == [
        f"  warning: locks/{stale.name}: a temporary file passprice writes slow.lock.toml through, left by a write "
        "that did not finish (its process killed?) unless a passprice is writing it now; passprice reads nothing "
        f"from it and removes none it did not make this run: remove it (rm {stale})"
    ]
    assert stale.exists() and (root / "locks" / ".notes.tmp").exists()  # never removed
