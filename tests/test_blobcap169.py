"""Issue 13: the last reads of git objects with no cap of their own. Each is now sized first (``git cat-file -s``,
``--batch-check`` or ``ls-tree -l``) and read only within what its reader needs; past it, one line naming what and
the cap, or the file reported as its reader reports it in a work tree. Before (a 60 MB object each, a few KB to
5 MB of ``.git``): a committed source record, excerpt or document an audit reads was read up to 64 MiB; a revision's
compiled ``.pyc``, list of pricing models, package data and build files up to 64 MiB; a folder of ``locks/`` of any
size (a tree of 10^6 entries); a commit object of any size (a 60 MB message) at a shallow clone's cut. The figures
are in docs/PERFORMANCE.md."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.cli_helpers import copy_root, invoke

from passprice import gitread, sidecode, sourcechange
from passprice.errors import InputError
from passprice.registry import Root, schema_dir
from passprice.review import impacts, sides

CARD = "h200_sxm_141gb"
CARD_FILE = f"facts/cards/{CARD}.toml"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True, check=True,
                          input=stdin).stdout.decode().strip()


def _registry(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "the registry")
    return root


# --- 1. what an audit reads at a lock's commit (gitread.read_named) ---------------------------------------------


def test_read_named_caps_each_name_and_streams_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "record.toml").write_bytes(b"#" * 300)
    (tmp_path / "document.md").write_bytes(b"d" * 2000)
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "--no-verify", "-m", "one")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    record, document = f"{commit}:record.toml", f"{commit}:document.md"
    with pytest.raises(gitread.BlobTooLarge) as refused:
        gitread.read_named(tmp_path, [record], caps={record: (299, "a record's cap")})
    assert str(refused.value) == (f"{record}: 300 bytes as committed, past the 299-byte cap on a file passprice "
                                  "reads from git (a record's cap; not read)")
    assert gitread.read_named(tmp_path, [record], caps={record: (300, "a record's cap")}) == {record: b"#" * 300}
    # a document past NAMED_READ_BYTES: its id and size, not its bytes (streamed by blob_sha256 when compared)
    small = gitread.read_named(tmp_path, [document], hashed=[document])
    assert small == {document: b"d" * 2000} and not isinstance(small[document], gitread.Unread)
    monkeypatch.setattr(gitread, "NAMED_READ_BYTES", 1999)
    monkeypatch.setattr(gitread, "NAMED_TOTAL_BYTES", 300)  # the unread document is not counted
    got = gitread.read_named(tmp_path, [document, record], hashed=[document])
    assert got == {record: b"#" * 300, document: b"d" * 2000}
    unread = got[document]
    assert isinstance(unread, gitread.Unread) and unread.size == 2000 and len(unread) < 100
    assert gitread.blob_sha256(tmp_path, unread.blob) == hashlib.sha256(b"d" * 2000).hexdigest()


def test_an_audit_refuses_a_committed_record_past_a_source_record_s_cap(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: read up to gitread.NAMED_BYTES (64 MiB): a 60 MB record (a comment) took the audit to 173 MB.
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = copy_root(tmp_path)
    record = root / "sources" / "nvidia-h200-datasheet.toml"
    text = record.read_bytes()
    record.write_bytes(text + b"#" * (300_000 - len(text) - 1) + b"\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "a 300 KB record")
    commit = _git(root, "rev-parse", "HEAD")
    record.write_bytes(text)  # today's reads; the lock's commit holds the large one
    result = invoke("audit", str(root / "locks" / "r1-qwen7b-h200.lock.toml"), root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: {commit}:sources/nvidia-h200-datasheet.toml: 300,000 bytes as committed, past the "
        "262,144-byte cap on a file passprice reads from git (schema.MAX_FILE_BYTES, a source record's cap; not read)"]


def test_a_committed_document_past_1_mib_is_compared_streamed(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_root(tmp_path)
    readme = root / "facts" / "cards" / "README.md"  # passprice-card-review's document
    text = readme.read_bytes()
    readme.write_bytes(text + b"x" * 2_000_000 + b"\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "a 2 MB document")
    streamed: list[str] = []
    real = gitread.blob_sha256
    monkeypatch.setattr(gitread, "blob_sha256",
                        lambda top, blob, timeout=None: streamed.append(blob) or real(top, blob))
    lock = root / "locks" / "r1-qwen7b-h200.lock.toml"
    assert sourcechange.compared_since_lock(Root(root), lock, ["passprice-card-review"]) == ((), True)
    assert streamed == [_git(root, "rev-parse", "HEAD:facts/cards/README.md")]
    readme.write_bytes(text)
    (since,), compared = sourcechange.compared_since_lock(Root(root), lock, ["passprice-card-review"])
    assert compared and since.id == "passprice-card-review"
    assert since.changed == ("facts/cards/README.md rewritten",)


# --- 2. a revision's code folder and build files (Checkout.materialize) -----------------------------------------


def test_caps_of_the_code_s_other_files() -> None:
    assert sides.blob_cap("src/passprice/pricing_models.json") == 1_048_576  # modelhistory.KNOWN_BYTES
    for rel in ("src/passprice/__pycache__/schema.cpython-311.pyc", "src/passprice/templates/facts.yml",
                "pyproject.toml", "hatch_build.py", "src/passprice_sigint.pth"):
        assert sides.blob_cap(rel) == 4_194_304, rel  # pins.MODULE_BYTES
    assert sides.blob_cap("README.md") is None
    # the margins: the shipped list and templates are far within them
    package = Path(sides.__file__).parent.parent
    assert (package / "pricing_models.json").stat().st_size * 4 < 1_048_576
    assert (package / "templates" / "facts.yml").stat().st_size * 100 < 4_194_304


def test_a_revision_s_large_code_files_are_written_sparse_unread(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_root(tmp_path)
    shutil.copytree(schema_dir(), root / "schema")
    code = root / "src" / "passprice"
    (code / "__pycache__").mkdir(parents=True)
    (code / "templates").mkdir()
    (code / "__init__.py").write_bytes(b"")
    sizes = {"src/passprice/pricing_models.json": 1_048_577, "src/passprice/templates/facts.yml": 4_194_305,
             "src/passprice/__pycache__/locks.cpython-311.pyc": 4_194_305, "pyproject.toml": 4_194_305}
    for rel, size in sizes.items():
        # a .pyc whose header says "hash-based, not checked" (PEP 552), the rest zeros; the others zeros
        head = b"\0\0\0\0\x01\0\0\0" if rel.endswith(".pyc") else b""
        (root / rel).write_bytes(head + b"\0" * (size - len(head)))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "large code files")
    asked: list[int] = []
    real = gitread.read_blobs
    monkeypatch.setattr(gitread, "read_blobs",
                        lambda top, wanted, timeout=None: asked.extend(wanted.values()) or real(top, wanted, timeout))
    checkout = sides.Checkout.of(root)
    dest = tmp_path / "side"
    files = {**checkout.materialize("HEAD", dest, (sides.CODE,)),
             **checkout.materialize("HEAD", dest, sidecode.BUILD_FILES)}
    assert max(asked) == 0  # __init__.py alone read; before, each of the four whole
    for rel, size in sizes.items():
        assert isinstance(files[rel], gitread.Unread) and (dest / rel).stat().st_size == size, rel
    # each reader refuses its file by its size, as in a work tree; the .pyc counts as compiled code (unread)
    assert sidecode.compiled_files(dest / sides.CODE) == ("__pycache__/locks.cpython-311.pyc",)
    with pytest.raises(InputError, match="holds over 1,048,576 bytes: not passprice's list of pricing models"):
        from passprice.modelhistory import read_known

        read_known(dest / "src/passprice/pricing_models.json")
    assert sidecode._package_data(dest / sides.CODE)["templates/facts.yml"] == (
        "4,194,305 bytes, past the 4,194,304 a module may hold")
    assert sidecode._build_files(dest)["pyproject.toml"] == "4,194,305 bytes, past the 4,194,304 a module may hold"


def test_a_pyc_past_the_module_cap_counts_as_compiled_unread(tmp_path: Path) -> None:
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    with open(cache / "x.cpython-311.pyc", "wb") as out:
        out.truncate(4_194_305)  # a header of zeros: "checked against its source", had it been read
    with open(cache / "y.cpython-311.pyc", "wb") as out:
        out.truncate(4_194_304)
    assert sidecode.compiled_files(tmp_path) == ("__pycache__/x.cpython-311.pyc",)


# --- 3. the folders of locks/ a review lists in its branch's commits (diff._lock_listings) ----------------------


def _locks_tree(root: Path, entries: int, blob: str) -> str:
    """A commit whose ``locks/`` holds ``entries`` names of one lock ``blob`` (``git mktree``), on HEAD."""
    listing = "".join(f"100644 blob {blob}\tl{i:07d}.lock.toml\n" for i in range(entries)).encode()
    locks = _git(root, "mktree", stdin=listing)
    top = _git(root, "mktree", stdin=f"040000 tree {locks}\tlocks\n".encode())
    commit = _git(root, "commit-tree", top, "-p", "HEAD", "-m", f"{entries} locks")
    _git(root, "update-ref", "HEAD", commit)
    return commit


def test_a_locks_folder_past_its_cap_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "r"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "a.lock.toml").write_bytes(b"x = 1\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "one")
    blob = _git(root, "rev-parse", "HEAD:a.lock.toml")
    three = _locks_tree(root, 3, blob)
    four = _locks_tree(root, 4, blob)
    checkout = sides.Checkout.of(root)
    size = int(_git(root, "cat-file", "-s", f"{four}:locks"))
    assert size == 4 * (len("100644 l0000000.lock.toml") + 1 + 20)
    assert impacts._lock_listings(checkout, [three, four]) == {three: {blob: 6}, four: {blob: 6}}
    monkeypatch.setattr(impacts, "LOCK_TREE_BYTES", size - 1)
    read: list[object] = []
    real = gitread.read_blobs
    monkeypatch.setattr(gitread, "read_blobs", lambda *a, **k: read.append(a) or real(*a, **k))
    with pytest.raises(InputError) as refused:
        impacts._lock_listings(checkout, [three, four])
    assert str(refused.value) == (
        f"{four}:locks: a folder of {size:,} bytes as git stores it, past the {size - 1:,}-byte cap on one folder of "
        "locks/ passprice lists from git (diff.LOCK_TREE_BYTES; not read)")
    assert read == []  # sized first, nothing read
    monkeypatch.setattr(impacts, "LOCK_TREE_BYTES", size)
    monkeypatch.setattr(impacts, "LOCK_TREES_BYTES", size + 10)  # three's 3/4 of it and four's: past in all
    with pytest.raises(InputError) as refused:
        impacts._lock_listings(checkout, [three, four])
    assert str(refused.value) == (
        f"{four}:locks: a folder of {size:,} bytes as git stores it, {size * 7 // 4:,} bytes of folders in all, past "
        f"the {size + 10:,}-byte cap on the folders of locks/ passprice lists from git (diff.LOCK_TREES_BYTES; not "
        "read)")


# --- 4. a shallow clone's cut (gitread.at_shallow_boundary) -----------------------------------------------------


def test_a_commit_past_its_cap_at_a_shallow_cut_is_refused_unread(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    origin = _registry(tmp_path / "o")
    card = origin / CARD_FILE
    card.write_bytes(card.read_bytes() + b"# changed\n")
    _git(origin, "commit", "-q", "--no-verify", "-am", "a long message\n\n" + "m" * 20_000)
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    tip = _git(clone, "rev-parse", "HEAD")
    size = int(_git(clone, "cat-file", "-s", tip))
    assert gitread.at_shallow_boundary(clone, tip)  # within the cap (1 MiB)
    monkeypatch.setattr(gitread, "COMMIT_BYTES", size - 1)
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=clone)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: commit {tip[:12]}: {size:,} bytes as committed (its message), past the {size - 1:,}-byte "
        "cap on a commit passprice reads (gitread.COMMIT_BYTES; not read)"]
    assert result.stdout == ""
