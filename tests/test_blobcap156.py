"""Issue 13: ``passprice diff`` never reads a revision's blob past what its kind may hold. Sized by ``git ls-tree
-l``, a registry record past its kind's cap (:func:`passprice.review.sides.blob_cap`: 256 KiB for a card, serving, lock,
source …; 8 MiB for a checkpoint entry) is refused in one line naming ``commit:path``, its size and the cap, exit 2:
read whole up to 64 MiB, four 64 MB records cost the review 2.8-3.4 s of CPU and 372 MB. And a bzip2 file given as a
GGUF file is named, as a zstd one is."""

from __future__ import annotations

import bz2
import os
import subprocess
from pathlib import Path

import pytest
from tests.cli_helpers import bad, copy_root, invoke

from passprice import gitread
from passprice.review import sides

CARD = "h200_sxm_141gb"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True, check=True, text=True).stdout


def _committed(tmp_path: Path) -> Path:
    """A copy of the registry, committed once on ``main``."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    return root


def _bombs(root: Path, size: int) -> str:
    """The task's reproducer at ``size`` bytes a file: one comment line of ``size - 3`` letters in a new card, serving,
    ``locks/`` file and stored excerpt folder's ``.toml``, committed; the commit's first 12 hex digits."""
    for i, folder in enumerate(["facts/cards", "registry/servings", "locks", "sources/excerpts"]):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / f"bomb{i}.toml").write_bytes(b"# " + bytes([97 + i]) * (size - 3) + b"\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "bomb")
    return _git(root, "rev-parse", "HEAD").strip()[:12]


def test_each_kind_s_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    for rel in ("facts/cards/x.toml", "facts/stacks/x.toml", "registry/servings/x.toml", "registry/measurements/x.toml",
                "locks/x.lock.toml", "locks/notes.toml", "sources/x.toml"):
        assert sides.blob_cap(rel) == 262_144, rel
    assert sides.blob_cap("registry/checkpoints/x.toml") == 8_388_608
    # Since test_blobcap162: a module and a schema have caps of their own; other files none but the 64 MiB.
    assert sides.blob_cap("src/passprice/cli/app.py") == 4_194_304 and sides.blob_cap("schema/card.json") == 1_048_576
    assert sides.blob_cap("requirements.txt") is None
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(256 << 20))
    assert sides.blob_cap("registry/checkpoints/x.toml") == 67_108_864
    # Raised, the variable raises the cap; lowered, not below 256 KiB (the source listing reads a source within it).
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "400000")
    assert sides.blob_cap("facts/cards/x.toml") == sides.blob_cap("locks/notes.toml") == 400_000
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "1000")
    assert sides.blob_cap("sources/x.toml") == 262_144


@pytest.mark.parametrize("size", [300_000, 3_000_000])
def test_the_reproducer_is_refused_unread_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    size: int) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = _committed(tmp_path)
    head = _bombs(root, size)
    asked: list[int] = []
    real = gitread.read_blobs

    def spy(top: Path, sizes: dict[str, int], timeout: float | None = None) -> dict[str, bytes]:
        asked.extend(sizes.values())
        return real(top, sizes, timeout)

    monkeypatch.setattr(gitread, "read_blobs", spy)
    # Since test_blobcap162 each record past its cap is a problem of the review's report, in its kind reader's own
    # words, as a work tree's is (it replaced the whole report, naming the first in git's order).
    card = (f"facts/cards/bomb0.toml: larger than 256 KiB, the most a card file may hold ({size:,} bytes; "
            "PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)")
    serving = card.replace("facts/cards/bomb0", "registry/servings/bomb1").replace("a card", "a serving")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 2 and card in result.stdout and serving in result.stdout, result.output
    assert result.stderr.splitlines() == [f"passprice: error: facts/cards/bomb0.toml does not read on HEAD: "
                                          f"{card.removeprefix('facts/cards/bomb0.toml: ')}",
                                          f"passprice: error: registry/servings/bomb1.toml does not read on HEAD: "
                                          f"{serving.removeprefix('registry/servings/bomb1.toml: ')}"]
    result = invoke("diff", "HEAD", "HEAD~1", root=root)  # the bombs in BASE said "no changes", exit 0
    assert result.exit_code == 0 and "does not read on BASE:" in result.stdout, result.output
    assert card in result.stdout and serving in result.stdout and f"{head}:" not in result.stdout, result.output
    assert asked and max(asked) < 262_144  # none of the bombs was read


def test_a_lock_folder_s_other_record_names_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = _committed(tmp_path)
    (root / "locks" / "notes.toml").write_bytes(b"# " + b"n" * 299_997 + b"\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "notes")
    # Since test_blobcap162 it is not read, and, as in a work tree, no reader of passprice's reads it: an other file.
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 0 and "locks/notes.toml (added)" in result.stdout, result.output


def test_a_checkpoint_entry_past_8_mib_is_refused_and_one_of_300_kb_read(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    root = _committed(tmp_path)
    entry = sorted((root / "registry" / "checkpoints").glob("*.toml"))[0]
    rel = f"registry/checkpoints/{entry.name}"
    text = entry.read_bytes()
    entry.write_bytes(text + b"# " + b"x" * (300_000 - len(text)) + b"\n")
    _git(root, "commit", "-q", "--no-verify", "-am", "300 KB")
    assert "checkpoint file may hold" not in invoke("diff", "HEAD~1", "HEAD", root=root).output
    size = 8_388_609
    entry.write_bytes(text + b"# " + b"x" * (size - len(text) - 3) + b"\n")
    _git(root, "commit", "-q", "--no-verify", "-am", "8 MiB + 1")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 2 and result.stderr.splitlines() == [
        f"passprice: error: {rel} does not read on HEAD: larger than 8 MiB, the most a checkpoint file may hold "
        "(8,388,609 bytes; with PASSPRICE_MAX_HEADER_BYTES set past 32 MiB, 64 MiB)"]


def test_a_raised_cap_reads_the_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _committed(tmp_path)
    card = root / "facts" / "cards" / f"{CARD}.toml"
    card.write_bytes(card.read_bytes() + b"# " + b"x" * 299_000 + b"\n")
    _git(root, "commit", "-q", "--no-verify", "-am", "big")
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "400000")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 0, result.output
    assert "file may hold" not in result.output


@pytest.mark.parametrize("level", [b"1", b"9"])
def test_a_bzip2_file_is_named(tmp_path: Path, level: bytes) -> None:
    path = tmp_path / "x.gguf.bz2"
    data = bz2.compress(b"GGUF" + bytes(60), compresslevel=int(level))
    assert data[:4] == b"BZh" + level
    path.write_bytes(data)
    # Was "bad magic: a GGUF file starts with b'GGUF'" alone; a zstd file was already told to decompress.
    assert bad("header", str(path)) == [
        f"passprice: error: {path}: byte 0: bad magic of a bzip2 file (not read: decompress it): a GGUF file starts "
        "with b'GGUF'"]


def test_a_work_tree_s_over_cap_card_is_still_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES", raising=False)
    root = _committed(tmp_path)
    card = root / "facts" / "cards" / f"{CARD}.toml"
    card.write_bytes(card.read_bytes() + b"# " + b"x" * 299_000 + b"\n")
    size = card.stat().st_size
    line = (f"facts/cards/{CARD}.toml: larger than 256 KiB, the most a card file may hold ({size:,} bytes; "
            "PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)")
    # HEAD the work tree: read and reported as before (the report, then check's lines), exit 2.
    result = invoke("diff", "HEAD", root=root)
    assert result.exit_code == 2, result.output
    assert "does not read on HEAD:" in result.stdout and line in result.stdout, result.stdout
    # Committed: since test_blobcap162 the same report (it was the one line, under --json too).
    _git(root, "commit", "-q", "--no-verify", "-am", "big")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 2, result.output
    assert "does not read on HEAD:" in result.stdout and line in result.stdout, result.stdout
