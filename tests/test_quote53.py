"""``check``'s look at quotes (:func:`passprice.lineage.quote_problems`) kept in the cache of validated files: a warm
``check`` of an unchanged registry looks nothing up, and what it says is what the look-up says, whatever the cache
holds. Each case in a registry ``passprice init --examples`` wrote in a temporary folder, with a cache folder of its
own and the result memo bypassed (the cache alone answers).

1. An excerpt edited within the same second after a warm ``check`` (its size and modification time as they were,
   its record pinning no sha256) is seen by the next ``check``: the entry is keyed by the excerpt's bytes.
2. A cache entry that is corrupted (its checksum, or a forged entry of the wrong shape) is ignored.
3. ``--no-cache`` gives the same lines, and writes no entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

DATASHEET = "sources/nvidia-l40s-datasheet.toml"
EXCERPT = "sources/excerpts/cite73-excerpt.txt"
#: The L40S card's quote of its datasheet's excerpt, and the same line edited (same length).
HELD, EDITED = "Memory Bandwidth 864GB/s", "Memory Bandwidth 860GB/s"
LOST = ("  facts/cards/l40s.toml: memory.bandwidth: its quotes of nvidia-l40s-datasheet are NOT FOUND in its stored "
        "excerpt sources/excerpts/cite73-excerpt.txt (0 of 1 quoted span found in the stored text; not in it: "
        "'Memory Bandwidth 864GB/s'): restore the quoted words there, or quote the words it holds")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry ``passprice init --examples`` wrote (never outside a temporary folder)."""
    where = tmp_path_factory.mktemp("init")
    done = subprocess.run(["passprice", "init", "--examples", "mine"], cwd=where, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return where / "mine"


@pytest.fixture
def root(made: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`made`, its datasheet record pinning no sha256 of its excerpt (an edit of the
    excerpt alone then changes nothing but the excerpt's bytes)."""
    copy = tmp_path / "mine"
    shutil.copytree(made, copy, symlinks=True)
    record = copy / DATASHEET
    text = record.read_text(encoding="utf-8")
    unpinned = re.sub(r'(?m)^excerpt_sha256 = "[0-9a-f]{64}"\n', "", text)
    assert unpinned != text
    record.write_text(unpinned, encoding="utf-8")
    return copy


def _check(root: Path, cache: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(cache), "PASSPRICE_NO_MEMO": "1"}
    env.pop("PASSPRICE_NO_CACHE", None)
    return subprocess.run(["passprice", *options, "check"], cwd=root, capture_output=True, text=True, env=env,
                          timeout=300)


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite ``old`` as ``new`` (same length) in ``path``, its size and modification time put back: what an edit
    within the same second leaves of the file's status."""
    assert len(old) == len(new)
    st = path.stat()
    data = path.read_bytes()
    assert old.encode() in data
    path.write_bytes(data.replace(old.encode(), new.encode(), 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def _quote_entries(cache: Path) -> list[Path]:
    """The entries of ``cache`` holding check's quote lines (a document ``{"lines": [...]}``)."""
    out = []
    for entry in sorted((cache / "documents").glob("*.json")):
        _, _, body = entry.read_bytes().partition(b"\n")
        try:
            document = json.loads(body)["document"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(document, dict) and set(document) == {"lines"}:
            out.append(entry)
    return out


def _problems(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The NOT FOUND lines of a ``check``, each once (a check that fails says its problems again at its end)."""
    return list(dict.fromkeys(line for line in done.stdout.splitlines() if "NOT FOUND" in line))


def test_an_excerpt_edited_within_the_same_second_is_seen(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _check(root, cache)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.splitlines()[-1] == "all holds"
    assert len(_quote_entries(cache)) == 1  # the look-up's lines kept: [] (nothing NOT FOUND)
    warm = _check(root, cache)
    assert (warm.returncode, warm.stdout) == (0, first.stdout)
    _edit_in_place(root / EXCERPT, HELD, EDITED)
    lost = _check(root, cache)
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert _problems(lost) == [LOST]
    assert lost.stdout.splitlines()[0].endswith(": 1 problem") and lost.stdout.splitlines()[-1] == "check FAILED"
    assert len(_quote_entries(cache)) == 2
    again = _check(root, cache)  # warm, the edit kept: its own entry answers the same
    assert (again.returncode, _problems(again)) == (1, [LOST])
    _edit_in_place(root / EXCERPT, EDITED, HELD)  # put back within the same second too
    back = _check(root, cache)
    assert (back.returncode, back.stdout) == (0, first.stdout)


@pytest.mark.parametrize("damage", ["checksum", "not lines", "not text"])
def test_a_corrupted_entry_is_ignored(root: Path, tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    _edit_in_place(root / EXCERPT, HELD, EDITED)
    first = _check(root, cache)
    assert (first.returncode, _problems(first)) == (1, [LOST])
    [entry] = _quote_entries(cache)
    digest, _, body = entry.read_bytes().partition(b"\n")
    if damage == "checksum":
        forged = digest + b"\n" + body.replace(b"NOT FOUND", b"NOT HERE!")
    else:  # a forged entry whose checksum holds, its document of another shape
        data = json.loads(body)
        data["document"]["lines"] = "all holds" if damage == "not lines" else [1, 2]
        body = json.dumps(data).encode()
        forged = hashlib.blake2b(body, digest_size=32).hexdigest().encode() + b"\n" + body
    entry.write_bytes(forged)
    done = _check(root, cache)
    assert (done.returncode, _problems(done)) == (1, [LOST]), done.stdout + done.stderr
    assert done.stdout == first.stdout
    # the entry written again, whole
    assert json.loads(entry.read_bytes().partition(b"\n")[2])["document"] == {"lines": [LOST.strip()]}


def test_no_cache_gives_the_same_lines_and_writes_no_entry(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cached = _check(root, cache)
    bypassed = _check(root, tmp_path / "other", "--no-cache")
    assert (bypassed.returncode, bypassed.stdout) == (cached.returncode, cached.stdout) == (0, cached.stdout)
    _edit_in_place(root / EXCERPT, HELD, EDITED)
    cached = _check(root, cache)
    bypassed = _check(root, tmp_path / "other", "--no-cache")
    assert (bypassed.returncode, _problems(bypassed)) == (cached.returncode, _problems(cached)) == (1, [LOST])
    assert bypassed.stdout == cached.stdout
    assert not (tmp_path / "other").exists() or not _quote_entries(tmp_path / "other")


def test_a_value_moved_under_its_quote_is_seen_by_a_warm_check(root: Path, tmp_path: Path) -> None:
    """The entry is keyed by each citing fact whole, not its locators alone: a fact's value moved under an unchanged
    quote (864 -> 860 GB/s under ``'Memory Bandwidth 864GB/s'``) is a MISMATCH (tests/test_fix53w.py) that a warm
    ``check`` must say, where an entry keyed by the locators alone replayed the warm run's "no problem"."""
    cache = tmp_path / "cache"
    warm = _check(root, cache)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert _quote_entries(cache)
    card = root / "facts/cards/l40s.toml"
    _edit_in_place(card, "value = 864\n", "value = 860\n")
    moved = _check(root, cache)
    mismatch = [line for line in moved.stdout.splitlines() if "l40s.toml: memory.bandwidth:" in line]
    assert mismatch and "states 864GB/s, not its value 860 GB/s" in mismatch[0], moved.stdout
    assert moved.returncode == 1
    assert _check(root, cache, "--no-cache").stdout.count("states 864GB/s, not its value 860 GB/s") == \
        moved.stdout.count("states 864GB/s, not its value 860 GB/s")
