"""Attack87 (session 43): inputs that escaped issue 13's bar after this session's merges (git79, left61, digest77,
left59), each kept as its reproducer, built here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke, until


def _checkout(root: Path, locks: bytes) -> Path:
    """``root`` made a checkout of passprice whose ``src/passprice/locks.py`` holds ``locks``."""
    package = root / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("LOCK_FORMAT = 2\n", encoding="utf-8")
    (package / "locks.py").write_bytes(locks)
    return package


#: One f-string of 79,000 replacement fields: 237,008 bytes, 395,006 tokens (a brace 3 since session 44: under
#: pins.MODEL_TOKENS, 400,000 since then). Python 3.11's parser scans the f-string from its start for each field's
#: line: ``check`` of a checkout of 200,000 (600,006 tokens, under the cap of then) ran past 30 s.
_FIELDS = b"x = f'" + b"{a}" * 79_000 + b"'\n"


def test_a_checkout_whose_f_string_holds_79_000_fields_is_not_parsed(tmp_path: Path) -> None:
    """The f-strings' work (each f-string's ``{`` times its bytes: 79,000 × 237,002) is counted before the parse,
    and past pins.FSTRING_WORK the checkout's code is not judged, named in one warning line; ``check`` holds."""
    from passprice import pins

    root = copy_root(tmp_path)
    _checkout(root, _FIELDS)
    said = ("src/passprice/locks.py: 237,008 bytes; the pricing model's f-strings reach 18,723,158,000 of the "
            "parser's work (an f-string's replacement fields times its bytes) with it, past the 100,000,000 "
            "passprice parses of another checkout's code: split f-strings of many fields")  # fmt: skip
    assert pins.checkout_model(root) == (f"not judged: {said}", pins.pricing_model_digest())
    result = invoke("check", root=root)
    assert result.exit_code == 0 and "all holds" in result.stdout, result.output
    assert result.stderr == (
        f"passprice: warning: this checkout's src/passprice was not judged ({said}): whether it prices with the "
        "running passprice's pricing model is unknown; locks are written, checked and reproduced by the running "
        "code\n"
    )


def test_the_f_string_work_counts_f_strings_alone() -> None:
    """What pins._fstring_work counts, by hand: ``f'a{b}'`` is 1 brace × 6 bytes, ``rf"{a}{b}"`` 2 × 8; a comment's
    f-string, a plain string's brace and a bytes literal's are not f-strings; the package's own modules stay far
    under the cap."""
    from passprice import pins

    assert pins._fstring_work(b"x = f'a{b}'  # f'{{{'\ny = '{' + b'{'\nz = rf\"{a}{b}\"\n") == 6 + 16
    assert pins._fstring_work(b"x = F'''\n{a}\n'''\n") == 1 * 11
    assert pins._fstring_work(b"x = [a, b]\n") == 0
    own = sum(pins._fstring_work((pins.PACKAGE / f"{n}.py").read_bytes()) for n in pins.pricing_modules())
    assert 0 < own < pins.FSTRING_WORK / 100, own


def test_a_review_side_whose_code_nests_past_the_parser_is_named_not_a_traceback(tmp_path: Path) -> None:
    """HEAD's ``src/passprice/locks.py`` of ``x = a+a+…`` (300,001 names, 600,006 bytes, 600,006 tokens: under the
    cap of then; 190,001 names here, 380,006 bytes, 380,004 tokens, under the cap since session 44) nests deeper
    than Python builds a tree: ``diff BASE HEAD`` (two folders) printed ``RecursionError: maximum recursion depth
    exceeded during ast construction`` and a traceback, exit 1; the side's code is now unreadable, said whole, and
    the review goes on (BASE, a registry without code, prices with the running code)."""
    from passprice import pins

    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    package = _checkout(head, b"x = " + b"a+" * 190_000 + b"a\n")
    (package / "__init__.py").write_bytes(b"")
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 0, result.output
    short = pins.pricing_model_digest().removeprefix("sha256:")[:12]
    assert (f"priced with HEAD: this passprice's code ({short}…), not the src/passprice HEAD brings (unreadable "
            "(RecursionError)), which BASE lacks: a registry kept apart from its code is checked with the passprice "
            "it installs, so its locks are reviewed with that\n") in result.stdout, result.output
    assert "Traceback" not in result.output


def test_a_checkout_module_holding_a_nul_byte_is_named_in_the_lock_refusal(tmp_path: Path) -> None:
    """A NUL byte in the checkout's ``locks.py``: Python refuses it before parsing, its error naming no file and no
    line, so ``lock`` into the checkout said ``src/passprice/a module: line None: source code string cannot contain
    null bytes``; the module is named now, without a line, exit 2, nothing written."""
    from passprice import pins

    root = copy_root(tmp_path)
    _checkout(root, b"x = 1\0\n")
    assert pins.checkout_model(root) == (
        "not read: src/passprice/locks.py: source code string cannot contain null bytes", pins.pricing_model_digest())
    before = sorted(p.name for p in (root / "locks").iterdir())
    result = invoke("lock", "r1-qwen7b-h200", "-o", str(root / "locks" / "new.lock.toml"), root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"passprice: error: {root / 'src' / 'passprice'}: this checkout's code cannot be read (src/passprice/locks.py: "
        "source code string cannot contain null bytes), so it is not the code of the passprice running (pricing "
        f"model {pins.pricing_model_digest()[:19]}…): a lock written now would record prices this checkout's review "
        "does not reproduce; fix the module (and `pip install -e .` here), then run the same command again\n"
    ), result.stderr
    assert sorted(p.name for p in (root / "locks").iterdir()) == before


def test_the_history_search_finds_a_lock_whose_file_name_git_quotes(tmp_path: Path) -> None:
    """A lock committed as ``locks/a"b.lock.toml`` (or with a backslash or a tab in its name): ``git log --raw``
    writes such a path C-quoted (``"locks/a\\"b.lock.toml"``, core.quotepath=off leaves ``"``, ``\\`` and controls
    quoted), so pickaxe handed that text on as the path, ``digest_in_history`` passed it over (it ends ``.toml"``)
    and found None; read NUL-separated (``-z``), each path is the file's own."""
    import subprocess

    from passprice.gitread import pickaxe
    from passprice.locks import digest_in_history
    from passprice.registry import Root

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgSign=false",
                               *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout

    digest = f"{7:064x}"
    git("init", "-q")
    (tmp_path / "locks").mkdir()
    names = ['locks/a"b.lock.toml', "locks/c\\d.lock.toml", "locks/e\tf.lock.toml"]
    for name in names:
        (tmp_path / name).write_text(f'[lock]\ndigest = "sha256:{digest}"\n', encoding="utf-8")
    git("add", "-A")
    git("commit", "-q", "-m", "one")
    commit, date = git("log", "-1", "--format=%H %cs").split()
    found = pickaxe(tmp_path, f'digest = "sha256:{digest}', "locks/", timeout=20).found  # git86: a Pickaxe
    assert [(c, d, sorted(p for p, _ in files)) for c, d, files in found] == [(commit, date, sorted(names))]
    assert digest_in_history(Root(tmp_path), digest) == ((commit[:12], date, 'locks/a"b.lock.toml'), None)


def test_a_git_that_is_a_script_is_watched_and_ended_with_what_it_started(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``git`` on PATH a script that runs the real git as its child (not ``exec``), a blob a FIFO past the loose
    objects listed: the watch looked at the script (waiting for its child), never at the git blocked opening the
    FIFO, so ``git cat-file`` ran to its time limit ("took longer than 60.0 s"), and the kill then ended the script
    alone: the real git stayed blocked for ever. Now git's children are looked at too (the FIFO named at once) and
    git's whole process group is killed (the real git gone)."""
    import platform
    import shutil
    import subprocess

    from passprice import gitread

    if platform.machine() not in gitread._OPENING or not os.access("/proc/self/syscall", os.R_OK):
        pytest.skip("no /proc/PID/syscall of a known machine: the look-through's bound is all there is")
    real = shutil.which("git")
    assert real is not None
    repo, scripts = tmp_path / "repo", tmp_path / "bin"
    repo.mkdir()
    scripts.mkdir()
    run = ["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgSign=false"]
    subprocess.run([*run, "init", "-q"], cwd=repo, check=True)
    (repo / "x").write_text("hello\n", encoding="utf-8")
    subprocess.run([*run, "add", "x"], cwd=repo, check=True)
    subprocess.run([*run, "commit", "-q", "-m", "one"], cwd=repo, check=True)
    blob = subprocess.run(["git", "rev-parse", "HEAD:x"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    loose.unlink()
    os.mkfifo(loose)
    child = tmp_path / "child"
    wrapper = scripts / "git"
    wrapper.write_text(f'#!/bin/sh\n"{real}" "$@" &\necho $! > "{child}"\nwait $!\n', encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{scripts}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(gitread, "MAX_LOOSE_LISTED", 0)
    with pytest.raises(gitread.GitFailed) as raised:
        gitread.run_git(repo, ["cat-file", "-p", blob], timeout=30.0)
    assert str(raised.value) == (
        f"{loose}: a FIFO (named pipe), where git reads an object of its repository: git cat-file waited to open it "
        "(a FIFO's writer never comes), so passprice stopped git; make it a regular file or remove it")
    pid = int(child.read_text(encoding="ascii"))

    def gone() -> bool:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as said:
                return said.read().rpartition(")")[2].split()[0] in ("Z", "X")
        except OSError:
            return True

    assert until(gone, 20.0), f"the real git {pid} still runs"


def test_the_kept_batch_of_a_review_is_watched_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``git cat-file --batch`` a review keeps open (gitread.one_batch) read git's answers with no watch and no
    time limit: a blob that is a FIFO past the loose objects listed held ``read_blobs`` for ever (killed at 20 s
    here); now git is looked at while it says nothing, killed, and the one-shot read that follows names the FIFO."""
    import platform
    import subprocess

    from passprice import gitread

    if platform.machine() not in gitread._OPENING or not os.access("/proc/self/syscall", os.R_OK):
        pytest.skip("no /proc/PID/syscall of a known machine: the look-through's bound is all there is")
    run = ["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgSign=false"]
    subprocess.run([*run, "init", "-q"], cwd=tmp_path, check=True)
    for name in ("x", "y"):
        (tmp_path / name).write_text(f"{name} holds\n", encoding="utf-8")
    subprocess.run([*run, "add", "x", "y"], cwd=tmp_path, check=True)
    subprocess.run([*run, "commit", "-q", "-m", "one"], cwd=tmp_path, check=True)
    x, y = (subprocess.run(["git", "rev-parse", f"HEAD:{n}"], cwd=tmp_path, check=True, capture_output=True,
                           text=True).stdout.strip() for n in ("x", "y"))
    monkeypatch.setattr(gitread, "MAX_LOOSE_LISTED", 0)
    with gitread.one_batch(tmp_path):
        assert gitread.read_blobs(tmp_path, {x: 8}) == {x: b"x holds\n"}  # the kept process answers
        loose = tmp_path / ".git" / "objects" / y[:2] / y[2:]
        loose.unlink()
        os.mkfifo(loose)
        with pytest.raises(gitread.GitFailed) as raised:
            gitread.read_blobs(tmp_path, {x: 8, y: 8})
    assert str(raised.value) == (
        f"{loose}: a FIFO (named pipe), where git reads an object of its repository: git cat-file waited to open it "
        "(a FIFO's writer never comes), so passprice stopped git; make it a regular file or remove it")
