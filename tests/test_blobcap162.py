"""Issue 13: a revision's file past the cap its reader reads it within is never read, and is a problem of the
review's report, not the whole of it. Sized by ``git ls-tree -l``, a committed registry record past its kind's cap
(a 300 KB card), ``schema/*.json`` past 1 MiB or a module of ``src/passprice`` past 4 MiB is written into the side's
folder as a sparse file of its size (:class:`passprice.gitread.Unread`), which its reader refuses by its size in
its own line: the review reports everything else, names the file among HEAD's problems, and exits 2, as it does for
the same file in a work tree. Before, the committed card replaced the report with one line; a 60 MB schema or module
was read whole (224 MB of memory; the schema, valid JSON, was used)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.cli_helpers import copy_root, invoke

from passprice import gitread, schema
from passprice.registry import schema_dir
from passprice.review import impacts, sides

CARD = "h200_sxm_141gb"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
PACKAGE_SCHEMA = schema_dir()  # the checkout's schema/, or an installed package's copy


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True, check=True, text=True).stdout


def _committed(tmp_path: Path, code: bool = False) -> Path:
    """A copy of the registry with the package's ``schema/`` (and, with ``code``, a small ``src/passprice``: an
    ``__init__.py`` and a ``locks.py``), committed once on ``main``."""
    root = copy_root(tmp_path)
    shutil.copytree(PACKAGE_SCHEMA, root / "schema")
    if code:
        (root / "src" / "passprice").mkdir(parents=True)
        (root / "src" / "passprice" / "__init__.py").write_bytes(b"")
        (root / "src" / "passprice" / "locks.py").write_bytes(b"x = 1\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    return root


def _grow(path: Path, size: int, filler: bytes) -> None:
    """``path`` grown to ``size`` bytes: ``filler`` before its text (JSON: spaces) or after it (TOML, Python: a
    comment of ``#``)."""
    text = path.read_bytes() if path.exists() else b""
    if filler == b" ":
        path.write_bytes(b" " * (size - len(text)) + text)
    else:
        path.write_bytes(text + b"#" * (size - len(text) - 1) + b"\n")


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the blobs :func:`passprice.gitread.read_blobs` is asked for, from now on."""
    asked: list[int] = []
    real = gitread.read_blobs

    def spy(top: Path, sizes: dict[str, int], timeout: float | None = None) -> dict[str, bytes]:
        asked.extend(sizes.values())
        return real(top, sizes, timeout)

    monkeypatch.setattr(gitread, "read_blobs", spy)
    return asked


def _same_report(committed: str, work_tree: str, head: str) -> None:
    """The committed side's report is the work tree's, but for the side's name in its first line."""
    assert committed.splitlines()[1:] == work_tree.splitlines()[1:]
    assert committed.splitlines()[0].endswith(f"→ HEAD ({head})"), committed.splitlines()[0]
    assert work_tree.splitlines()[0].endswith("→ work tree"), work_tree.splitlines()[0]


def test_a_committed_over_cap_card_gets_the_whole_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = _committed(tmp_path)
    card = root / "facts" / "cards" / f"{CARD}.toml"
    _grow(card, 300_000, b"#")
    serving = root / "registry" / "servings" / "deepseek-v3-h200.toml"
    serving.write_bytes(serving.read_bytes() + b"# another change\n")
    _git(root, "commit", "-q", "--no-verify", "-am", "a 300 KB card")
    head = _git(root, "rev-parse", "HEAD").strip()[:12]
    asked = _spy(monkeypatch)
    line = (f"facts/cards/{CARD}.toml: larger than 256 KiB, the most a card file may hold (300,000 bytes; "
            "PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)")
    committed = invoke("diff", "HEAD~1", "HEAD", root=root)
    # Was one line, "{head}:facts/cards/…: larger than 256 KiB …", and no report.
    assert committed.exit_code == 2, committed.output
    assert committed.stderr.splitlines() == [
        f"passprice: error: facts/cards/{CARD}.toml does not read on HEAD: "
        f"{line.removeprefix(f'facts/cards/{CARD}.toml: ')}"]
    assert f"facts/cards/{CARD}.toml (card {CARD}): changed\n  does not read on HEAD:\n    {line}\n" in committed.stdout
    assert "HEAD fails passprice check (1 problem):\n" in committed.stdout
    assert "registry/servings/deepseek-v3-h200.toml" in committed.stdout  # the other change, reported too
    assert "HEAD cannot price: " + line in committed.stdout  # each lock on the card: not priced, and why
    assert asked and max(asked) < 262_144  # the card was never read
    sized: list[str] = []
    real = gitread.read_sized
    monkeypatch.setattr(gitread, "read_sized", lambda path: sized.append(str(path)) or real(path))
    work_tree = invoke("diff", "HEAD~1", root=root)
    assert work_tree.exit_code == 2
    _same_report(committed.stdout, work_tree.stdout, head)
    # The work tree's card is not read whole either (it was, to 64 MiB): hashed in chunks for its git blob id.
    assert sized and not [p for p in sized if p.endswith(f"{CARD}.toml")]


def test_an_unchanged_over_cap_card_is_no_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The work tree's copy of the committed card, never read from git, is the same file (its git blob id)."""
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = _committed(tmp_path)
    _grow(root / "facts" / "cards" / f"{CARD}.toml", 300_000, b"#")
    _git(root, "commit", "-q", "--no-verify", "-am", "a 300 KB card")
    result = invoke("diff", "HEAD", root=root)
    assert result.exit_code == 2, result.output
    assert f"(card {CARD}): changed" not in result.stdout, result.stdout
    assert result.stderr.splitlines() == [
        f"passprice: error: on HEAD: facts/cards/{CARD}.toml: larger than 256 KiB, the most a card file may hold "
        "(300,000 bytes; PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)"]


def test_unread_is_its_blob(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "a").write_bytes(b"x" * 1000)
    blob = _git(root, "hash-object", "a").strip()
    assert blob == hashlib.sha1(b"blob 1000\0" + b"x" * 1000).hexdigest()
    unread = gitread.Unread(blob, 1000)
    # Either way round (bytes on the left asks the subclass first), == and != alike.
    assert unread == b"x" * 1000 and b"x" * 1000 == unread  # noqa: SIM300
    assert not (unread != b"x" * 1000) and not (b"x" * 1000 != unread)  # noqa: SIM202, SIM300
    assert unread != b"x" * 999 + b"y" and b"x" * 1001 != unread  # noqa: SIM300
    assert unread == gitread.Unread(blob, 1000) and unread != gitread.Unread("0" * 40, 1000)
    assert len(unread) < 100  # a few bytes naming the blob, never its content
    sha256 = hashlib.sha256(b"blob 3\0abc").hexdigest()
    assert gitread.Unread(sha256, 3) == b"abc"  # a repository of SHA-256 objects
    gitread.write_side_file(tmp_path / "sparse", gitread.Unread(blob, 5_000_000))
    assert (tmp_path / "sparse").stat().st_size == 5_000_000


def test_caps_of_schemas_and_modules() -> None:
    assert sides.blob_cap("schema/card.schema.json") == schema.MAX_SCHEMA_BYTES == 1_048_576
    assert sides.blob_cap("src/passprice/_data/schema/lock.schema.json") == 1_048_576
    assert sides.blob_cap("src/passprice/locks.py") == sides.blob_cap("src/passprice/review/sides.py") == 4_194_304
    # the list of pricing models: its reader's cap (tests/test_blobcap169.py; was None, read up to 64 MiB)
    assert sides.blob_cap("src/passprice/pricing_models.json") == 1_048_576
    # The margins: the largest shipped schema and module are well within them.
    assert max(p.stat().st_size for p in PACKAGE_SCHEMA.glob("*.json")) * 10 < schema.MAX_SCHEMA_BYTES
    package = Path(sides.__file__).parent.parent
    assert max(p.stat().st_size for p in package.rglob("*.py")) * 4 < 4_194_304


def test_a_committed_schema_past_1_mib_is_reported_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _committed(tmp_path)
    _grow(root / "schema" / "card.schema.json", 2_000_000, b" ")  # valid JSON: before, read whole and used
    _git(root, "commit", "-q", "--no-verify", "-am", "a 2 MB schema")
    head = _git(root, "rev-parse", "HEAD").strip()[:12]
    asked = _spy(monkeypatch)
    line = ("schema/card.schema.json: larger than 1 MiB, the most a schema file may hold (2,000,000 bytes; the "
            "largest shipped is 48 KB)")
    committed = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert committed.exit_code == 2, committed.output
    assert committed.stderr.splitlines() == [
        f"passprice: error: schema/card.schema.json does not read on HEAD: "
        f"{line.removeprefix('schema/card.schema.json: ')}"]
    assert asked and max(asked) < 1_048_576
    work_tree = invoke("diff", "HEAD~1", root=root)
    _same_report(committed.stdout, work_tree.stdout, head)
    assert work_tree.exit_code == 2 and work_tree.stderr == committed.stderr


def test_a_schema_folder_s_schema_past_1_mib_is_refused_unread(tmp_path: Path) -> None:
    folder = tmp_path / "schema"
    folder.mkdir()
    with open(folder / "card.schema.json", "wb") as out:
        out.truncate(1_048_577)  # sparse: a read would find zeros, not JSON
    with pytest.raises(schema.InputError) as refused:
        schema.required_at_top("card", folder)
    assert str(refused.value) == (
        f"{folder}/card.schema.json: larger than 1 MiB, the most a schema file may hold (1,048,577 bytes; the largest "
        "shipped is 48 KB)")


def test_a_committed_module_past_4_mib_is_reported_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _committed(tmp_path, code=True)
    _grow(root / "src" / "passprice" / "locks.py", 5_000_000, b"#")
    _git(root, "commit", "-q", "--no-verify", "-am", "a 5 MB module")
    head = _git(root, "rev-parse", "HEAD").strip()[:12]
    asked = _spy(monkeypatch)
    line = "src/passprice/locks.py: 5,000,000 bytes, past the 4,194,304 a module may hold: not read"
    committed = invoke("diff", "HEAD~1", "HEAD", root=root)
    # Was one line naming the review's temporary folder: "/tmp/passprice-diff-…/src/passprice/locks.py: larger than
    # 4,194,304 bytes: not a passprice file (5,000,000 bytes)".
    assert committed.exit_code == 2, committed.output
    assert committed.stderr.splitlines() == [f"passprice: error: on HEAD: {line}"]
    assert f"priced with HEAD: its own src/passprice was not judged ({line}); its locks are not priced" in (
        committed.stdout)
    assert f"  src/passprice/locks.py ({line.split(': ', 1)[1]}, counted as changed)" in committed.stdout
    assert asked and max(asked) < 4_194_304
    work_tree = invoke("diff", "HEAD~1", root=root)
    _same_report(committed.stdout, work_tree.stdout, head)
    assert work_tree.exit_code == 2 and work_tree.stderr == committed.stderr


def test_a_branch_s_lock_past_its_cap_has_no_pin_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The review's look at the branch's lock blobs (:func:`passprice.review.impacts._lock_pins`) read each whole up to
    64 MiB, though one past the lock's 256 KiB has no pin (:func:`passprice.review.changes.side_toml` refuses it by its
    length)."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    text = '[lock]\npricing_model = "sha256:aa"\ndigest = "sha256:1"\n'
    (root / "a.lock.toml").write_text(text)
    (root / "b.lock.toml").write_text(text + "#" * 300_000 + "\n")
    small = _git(root, "hash-object", "-w", "a.lock.toml").strip()
    large = _git(root, "hash-object", "-w", "b.lock.toml").strip()
    asked = _spy(monkeypatch)
    assert impacts._lock_pins(root, {small: len(text), large: len(text) + 300_001}) == {
        small: ("sha256:aa", "sha256:1"), large: None}
    assert asked == [len(text)]


def test_a_large_document_is_hashed_as_streamed_not_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    (root / "notes").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    big, little = b"d" * 3_000_000, b"little\n"
    (root / "notes" / "big.html").write_bytes(big)
    (root / "notes" / "little.txt").write_bytes(little)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "documents")
    asked = _spy(monkeypatch)
    checkout = sides.Checkout.of(root)
    found = checkout.documents(checkout.commit("HEAD"), ["notes/big.html", "notes/little.txt"])
    assert found == {"notes/big.html": "sha256:" + hashlib.sha256(big).hexdigest(),
                     "notes/little.txt": "sha256:" + hashlib.sha256(little).hexdigest()}
    assert asked == [len(little)]  # the 3 MB one streamed through git, never held whole (was read up to 64 MiB)


def test_an_over_cap_lock_first_among_hundreds_that_do_not_read(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Past 100 lock files that surely do not read, HEAD is refused before its tree is written, naming the first:
    an over-cap one, unread and not yet on disk, is named by its size (not "no such file")."""
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = _committed(tmp_path)
    _git(root, "checkout", "-q", "-b", "bad")
    (root / "locks" / "a.lock.toml").write_bytes(b"[lock]\n" + b"#" * (300_000 - 8) + b"\n")
    for i in range(101):
        (root / "locks" / f"u{i}.lock.toml").write_text(f"[lock]\nx = {i}\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "102 lock files that do not read")
    sha = _git(root, "rev-parse", "HEAD").strip()[:12]
    _git(root, "checkout", "-q", "main")
    result = invoke("diff", "main", "bad", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: HEAD bad ({sha}): more than 100 of its 102 lock files that differ from the other side's do "
        "not read (the side is refused whole); the first: locks/a.lock.toml: larger than 256 KiB, the most a lock file "
        "may hold (300,000 bytes; PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)"]
