"""Issue 13: the last whole reads, and a history's cost.

1. A branch's ``locks/`` the review walks for the list of pricing models' records
   (:func:`passprice.review.impacts._branch_records`) past a cap — a folder past ``diff.LOCK_TREE_BYTES``, a commit
   holding 5,000 lock files (past the 4,000 files a side may hold), one lock file past the lock's cap, or lock files
   past ``diff.LOCK_BLOBS_BYTES`` in all — was swallowed: the walk's error caught with the rest, the branch's re-locks
   left unconfirmed (the entry failing as "the digest of no code of this review", exit 1) with no line naming why. Now
   one line names ``COMMIT:PATH``, the cap and what was read, among HEAD's problems, exit 2, and the rest of the report
   is kept (as tests/test_blobcap162.py keeps it for a committed record past its cap).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import test_slip_57
from cli_helpers import invoke
from test_diff import commit_all, git
from test_slip_57 import LISTED, R1

#: slip 57's branch that re-locked twice (a fixture of that file, used here too)
twice_repo = test_slip_57.twice_repo

CONFIRMED = ("entry {short}… added (passprice 0.1.0's, first locked 2026-12-05): the code of a commit of this branch, "
             "which re-locked with it (since re-locked again)")


def _git_in(root: Path, *args: str, stdin: str | None = None) -> str:
    """git in ``root`` with a fixed identity, ``stdin`` given: its standard output."""
    import os
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=root, env=env, input=stdin, capture_output=True, text=True,
                          check=True).stdout


def _branch(twice_repo: tuple[Path, str], tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(twice_repo[0], root, symlinks=True)
    git(root, "checkout", "-q", "twice")
    return root


def _review(root: Path) -> tuple[int, list[str], dict[str, object], str]:
    """``diff main``: the exit status, stderr's lines, the JSON report, and the text report."""
    doc = invoke("diff", "main", "--format", "json", root=root)
    text = invoke("diff", "main", root=root)
    assert doc.exit_code == text.exit_code and doc.stderr == text.stderr, (doc.output, text.output)
    return text.exit_code, text.stderr.splitlines(), json.loads(doc.stdout), text.stdout


def test_1_the_walk_is_confirmed_as_before(twice_repo: tuple[Path, str], tmp_path: Path) -> None:
    """The yardstick: slip 57's branch, nothing past a cap, exit 0, its entry confirmed by its first re-lock."""
    code, err, doc, _ = _review(_branch(twice_repo, tmp_path))
    assert (code, err) == (0, [])
    assert doc["code_changed"] == [f"{LISTED}: " + CONFIRMED.format(short=twice_repo[1][7:19])]


def test_1_a_lock_file_past_the_lock_s_cap_is_named_unread(twice_repo: tuple[Path, str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit of the branch adds a 300,000-byte lock (and one of 70 MB), the next removes them: each was left
    out of the walk without a word (the 300 KB one not read, the 70 MB one not listed). Now the newest is named, the
    other counted; the rest of the report is as it was, the entry still confirmed by the first re-lock."""
    from passprice import gitread

    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = _branch(twice_repo, tmp_path)
    kept = (root / R1).read_bytes()
    (root / "locks" / "big.lock.toml").write_bytes(kept + b"#" * (300_000 - len(kept) - 1) + b"\n")
    with open(root / "locks" / "huge.lock.toml", "wb") as out:
        out.truncate(70_000_000)  # past schema.MAX_TOML_BYTES: the listing leaves it out
    added = commit_all(root, "two large locks")
    git(root, "rm", "-q", "locks/big.lock.toml", "locks/huge.lock.toml")
    commit_all(root, "gone again")
    asked: list[int] = []
    real = gitread.read_blobs
    monkeypatch.setattr(gitread, "read_blobs",
                        lambda top, sizes, timeout=None, kind="blob": asked.extend(sizes.values())
                        or real(top, sizes, timeout, kind))
    code, err, doc, text = _review(root)
    line = (f"{added}:locks/huge.lock.toml: 70,000,000 bytes as committed, past the 262,144-byte cap on a lock file "
            "(schema.kind_cap; not read) (and 1 other lock file of this branch past it, unread): a re-lock it holds "
            f"confirms no entry of {LISTED}")
    if not err[0].endswith(line.split(": ", 1)[1]):  # git's order of the two in the folder decides which is named
        line = line.replace("huge.lock.toml: 70,000,000", "big.lock.toml: 300,000")
    assert code == 2, text
    assert err == [f"passprice: error: on HEAD: {line}"]
    assert doc["head_unreadable"] == [line] and line in doc["head_check"]
    assert doc["code_changed"] == [f"{LISTED}: " + CONFIRMED.format(short=twice_repo[1][7:19])]
    assert f"  {line}\n" in text or f"{line}\n" in text  # the text report names it among HEAD's problems
    assert asked and 300_000 not in asked and 70_000_000 not in asked  # neither large lock read (the code's are)


def test_1_a_commit_of_5000_lock_files_is_named_and_older_re_locks_unread(twice_repo: tuple[Path, str],
                                                                          tmp_path: Path) -> None:
    """5,000 distinct lock files in one commit (removed in the next): past the 4,000 files a side may hold. The
    walk reads the newer commit and stops there: the first re-lock, older, is not read, so its entry is not
    confirmed (exit 1's line, as before) and the review says why (exit 2)."""
    root = _branch(twice_repo, tmp_path)
    # the two commits built from trees (git mktree); the work tree and the index stay HEAD's
    made = tmp_path / "made"
    made.mkdir()
    for i in range(5000):
        (made / f"l{i:04d}.lock.toml").write_text(f'[lock]\npricing_model = "sha256:{i}"\n')
    blobs = _git_in(root, "hash-object", "-w", "--stdin-paths",
                    stdin="".join(f"{made}/l{i:04d}.lock.toml\n" for i in range(5000))).split()
    locks = _git_in(root, "mktree", stdin=_git_in(root, "ls-tree", "HEAD:locks") + "".join(
        f"100644 blob {blob}\tl{i:04d}.lock.toml\n" for i, blob in enumerate(blobs))).strip()
    top = _git_in(root, "mktree", stdin="".join(
        f"040000 tree {locks}\tlocks\n" if line.endswith("\tlocks") else f"{line}\n"
        for line in _git_in(root, "ls-tree", "HEAD").splitlines())).strip()
    many = _git_in(root, "commit-tree", top, "-p", "HEAD", "-m", "5,000 locks").strip()
    gone = _git_in(root, "commit-tree", "HEAD^{tree}", "-p", many, "-m", "gone again").strip()
    _git_in(root, "update-ref", "HEAD", gone)
    size = (root / R1).stat().st_size
    code, err, doc, text = _review(root)
    line = (f"{many}:locks: its locks/ holds 5,001 distinct lock files, past the 4,000 files a side may hold "
            "(PASSPRICE_MAX_SIDE_FILES; a review refuses such a revision): not read; the locks of the 1 newer commit "
            f"of this branch that changed locks/ were read ({size:,} bytes), of this one and 2 older ones not, so no "
            f"re-lock of them confirms an entry of {LISTED}")
    assert code == 2, text
    assert err == [f"passprice: error: on HEAD: {line}"]
    assert doc["head_unreadable"] == [line]
    (said,) = doc["code_changed"]
    assert said.startswith(f"{LISTED}: entry {twice_repo[1][7:19]}… added (passprice 0.1.0's, first locked "
                           "2026-12-05): the digest of no code of this review"), said


def test_1_lock_files_past_the_walk_s_bytes_are_named(twice_repo: tuple[Path, str], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The distinct lock files read, newest commit first, within diff.LOCK_BLOBS_BYTES (64 MiB; here the newest
    re-lock's lock alone): the first re-lock's, older, would pass it, and is named, unread."""
    from passprice.review import impacts

    root = _branch(twice_repo, tmp_path)
    size = (root / R1).stat().st_size
    monkeypatch.setattr(impacts, "LOCK_BLOBS_BYTES", size)
    first = git(root, "rev-parse", "twice~1")
    first_size = len(git(root, "show", f"{first}:{R1}").encode()) + 1  # git strips the last line break
    code, err, doc, _ = _review(root)
    line = (f"{first}:locks: its lock files take the lock files of this branch read to {size + first_size:,} bytes, "
            f"past the {size:,}-byte cap on what the review reads of them (diff.LOCK_BLOBS_BYTES): not read; the locks "
            f"of the 1 newer commit of this branch that changed locks/ were read ({size:,} bytes), of this one and 0 "
            f"older ones not, so no re-lock of them confirms an entry of {LISTED}")
    assert code == 2
    assert err == [f"passprice: error: on HEAD: {line}"]
    (said,) = doc["code_changed"]
    assert "the digest of no code of this review" in said


def test_1_a_locks_folder_past_its_cap_is_named(twice_repo: tuple[Path, str], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of ``locks/`` past diff.LOCK_TREE_BYTES (sized, not read): the walk's refusal, which the review
    swallowed, is its line now."""
    from passprice.review import impacts

    root = _branch(twice_repo, tmp_path)
    tip = git(root, "rev-parse", "HEAD")
    size = int(git(root, "cat-file", "-s", f"{tip}:locks"))
    monkeypatch.setattr(impacts, "LOCK_TREE_BYTES", size - 1)
    code, err, doc, _ = _review(root)
    line = (f"{tip}:locks: a folder of {size:,} bytes as git stores it, past the {size - 1:,}-byte cap on one folder "
            "of locks/ passprice lists from git (diff.LOCK_TREE_BYTES; not read): the locks of none of this branch's 2 "
            f"commits that changed locks/ were read, so no re-lock of them confirms an entry of {LISTED}")
    assert code == 2
    assert err == [f"passprice: error: on HEAD: {line}"]
    (said,) = doc["code_changed"]
    assert "the digest of no code of this review" in said


# --- 2. a committed document and today's, compared by digest, streamed (sourcechange.read_at_lock) --------------


def test_2_an_audit_s_documents_are_hashed_in_chunks_never_held(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``audit LOCK`` compares each cited source's document at the lock's commit with today's: the commit's past
    1 MiB was streamed through git already, today's was read whole (``schema.read_bytes``, up to 64 MiB: a 60 MB
    document took the audit from 37 MB to 96 MB, docs/PERFORMANCE.md). Now today's is hashed in chunks too: no read
    of it, and the comparison's peak (tracemalloc) stays far below the document, which is still found rewritten."""
    import subprocess
    import tracemalloc

    from cli_helpers import copy_root
    from passprice import schema, sourcechange
    from passprice.registry import Root

    root = copy_root(tmp_path)
    readme = root / "facts" / "stacks" / "README.md"  # passprice-stack-calibration's document
    text = readme.read_bytes()
    readme.write_bytes(text + b"x" * 20_000_000 + b"\n")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "a 20 MB document")
    lock = root / "locks" / "r1-qwen7b-h200-llamacpp.lock.toml"
    read: list[str] = []
    real = schema.read_bytes
    monkeypatch.setattr(schema, "read_bytes", lambda path, kind=None: read.append(str(path)) or real(path, kind))
    for rewritten in (False, True):
        if rewritten:
            readme.write_bytes(text + b"y" * 20_000_000 + b"\n")
        tracemalloc.start()
        try:
            found = sourcechange.compared_since_lock(Root(root), lock, ["passprice-stack-calibration"])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert found[1] is True
        assert [s.changed for s in found[0]] == ([("facts/stacks/README.md rewritten",)] if rewritten else [])
        assert peak < 8_000_000, peak  # was over 20 MB: the document held whole (60 MB: 64 MB traced)
    assert not [p for p in read if p.endswith("README.md")], read
    assert subprocess.run(["git", "diff", "--quiet"], cwd=root).returncode == 1  # the rewrite is today's alone


# --- 3. a long history's rest of each version, parsed once a shape (history._Reader._rest_reads) ----------------


def _long_history(tmp_path: Path) -> Path:
    """The H200 card's history over 40 commits: each changes another fact's note (or a figure) — one shape of the
    rest of the file — and among them versions broken away from ``memory.bandwidth``'s table (``broken = = ``), a
    multi-line basic string and a multi-line literal string each holding a ``note = "…"`` line (whose value is
    content there), the literal one later closed by a value holding ``'''`` (the file no longer reads), a note line
    inside an array written over lines (never reads), a note of 70 dotted parts (a line ``toml_loads`` looks
    through for a deep key), and ``memory.bandwidth`` itself changed twice."""
    import re

    from test_history import CARD_FILE, git, registry

    root = registry(tmp_path)
    file = root / CARD_FILE
    good = file.read_text(encoding="utf-8")
    notes = [m.start() for m in re.finditer(r'^note = "', good, re.M)]
    tails = {
        5: "broken = = \n",
        8: '[odd]\ntext = """\nnote = "a"\n"""\n',
        9: '[odd]\ntext = """\nnote = "b"\n"""\n',
        12: "[odd]\ntext = '''\nnote = \"a\"\n'''\n",
        13: "[odd]\ntext = '''\nnote = \"it'''s\"\n'''\n",
        16: '[odd]\nlist = [\nnote = "a"\n]\n',
        17: '[odd]\nlist = [\nnote = "b"\n]\n',
        20: "[odd]\nnote = \"" + ".a" * 70 + "\"\n",
        21: "[odd]\nnote = \"" + ".b" * 70 + "\"\n",
        30: "broken = = \n",
    }
    for i in range(40):
        at = notes[i % len(notes)]
        text = good[:at] + f'note = "edit {i}; ' + good[at + len('note = "'):] + tails.get(i, "")
        if i in (25, 33):
            text = text.replace("[memory.bandwidth]\nvalue = 4.8\n", f"[memory.bandwidth]\nvalue = 4.{i}\n", 1)
        file.write_text(text, encoding="utf-8")
        git(root, "commit", "-qam", f"c{i}")
    return root


def test_3_a_long_history_says_what_it_said_with_each_rest_parsed(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The history, text and JSON, of three facts is the same byte for byte as with each distinct rest parsed
    (the reader before: ``_VALUE_AT_END`` matching nothing makes each rest its own shape), and the rests are parsed
    a shape each: 17 parses a run where there were about 49."""
    import re

    from passprice import history, schema
    from test_history import CARD

    root = _long_history(tmp_path)
    parses: list[int] = []
    real = schema.toml_loads
    monkeypatch.setattr(schema, "toml_loads", lambda text: parses.append(len(text)) or real(text))
    said = {}
    for before in (False, True):
        if before:
            monkeypatch.setattr(history, "_VALUE_AT_END", re.compile(r"(?!)"))
        parses.clear()
        runs = []
        for fact in ("memory.bandwidth", "streams.rewrite", "host.read"):
            for how in ((), ("--json",)):
                result = invoke("fact", "show", CARD, fact, "--history", *how, root=root)
                runs.append((result.exit_code, result.stdout, result.stderr))
        said[before] = (runs, len(parses))
    (now, parsed_now), (then, parsed_then) = said[False], said[True]
    assert now == then
    assert all(code == 0 for code, _, _ in now)
    versions = json.loads(now[1][1])["versions"]
    errors = [v["error"] for v in versions if v["error"] is not None]
    # the two broken away (line 201), the array's two versions (line 203), the literal string closed early
    assert [e.split(": does not read: ")[1] for e in errors] == [
        "Invalid value (at line 201, column 10)", "Invalid value (at line 203, column 1)",
        "Invalid value (at line 203, column 1)",
        "Expected newline or end of document after a statement (at line 203, column 14)",
        "Invalid value (at line 201, column 10)"]
    # Each run reads 41 versions: each distinct rest was parsed (about 40 a run, besides the fact's tables and the
    # whole files that do not read); now a shape each (the note edits one, 7 for the tails), 17 parses a run in all.
    assert parsed_then >= 6 * 45, parsed_then
    assert parsed_now <= 6 * 17, parsed_now
