"""Round 28 (issue 13's 2 s bound, issue 16): ``passprice diff`` of two revisions no longer rebuilds every checkpoint
header, decode step and pass shape on every run (a header is kept by its entry's file name and bytes, not by the
temporary folder a side is copied into), and the locks' and the unlocked servings' recomputed prices share one
private copy of HEAD. Behaviour only, no timing: the review of a changed card fact, a changed checkpoint entry and a
changed source record is the same, byte for byte and exit status, with the cache cold, warm and bypassed; a warm
run stores nothing new; a header found under another path names its own path; sharing the copy changes no word of
the review; no copy is left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from passprice import cache, checkpoints, serving
from passprice.registry import Root, embedded_root

CARD_FILE = "facts/cards/h200_sxm_141gb.toml"
ENTRY = "deepseek-r1-distill-qwen-7b-q4_k_m"
ENTRY_FILE = f"registry/checkpoints/{ENTRY}.toml"
SOURCE_FILE = "sources/nvidia-h200-datasheet.toml"


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; its standard output."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one ``old`` in the file at ``path`` by ``new``."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


@attrs.frozen
class Repo:
    """A git repository of passprice's own registry (facts, registry, schema, sources, locks): ``base``, and one
    commit on it each changing one card fact (``fact``: the H200's memory.bandwidth 4.8 → 4.9 TB/s, which leaves
    its three stream shares stale under four locks), one checkpoint entry's origin (``entry``) and one source
    record's read note (``source``)."""

    path: Path
    base: str
    fact: str
    entry: str
    source: str


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    path = tmp_path_factory.mktemp("perf28") / "registry"
    path.mkdir()
    shipped = embedded_root().path
    for folder in ("facts", "registry", "schema", "sources", "locks"):
        shutil.copytree(shipped / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "--no-verify", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    made = {}
    for name, rel, old, new in (
        ("fact", CARD_FILE, '[memory.bandwidth]\nvalue = 4.8\n', '[memory.bandwidth]\nvalue = 4.9\n'),
        ("entry", ENTRY_FILE, 'origin = "DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: ',
         'origin = "DeepSeek-R1-Distill-Qwen-7B (Q4_K_M): '),
        ("source", SOURCE_FILE, 'read = "', 'read = "Read: '),
    ):
        git(path, "checkout", "-q", "-b", name, base)
        edit(path / rel, old, new)
        git(path, "commit", "-q", "--no-verify", "-am", name)
        made[name] = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "main")
    return Repo(path, base, made["fact"], made["entry"], made["source"])


def review(repo: Repo, head: str, cache_dir: Path, tmp: Path, *options: str) -> tuple[int, str, str]:
    """``passprice [OPTIONS] diff BASE HEAD`` in a process of its own (the result memo bypassed, so it is reviewed
    afresh), with ``cache_dir`` as its cache folder and ``tmp`` as its temporary folder: exit status, stdout,
    stderr."""
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(cache_dir), "PASSPRICE_NO_MEMO": "1", "TMPDIR": str(tmp)}
    env.pop("PASSPRICE_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "passprice", *options, "diff", repo.base, head], cwd=repo.path,
                          env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def stored(cache_dir: Path) -> set[str]:
    """The names of the cache's object entries."""
    folder = cache_dir / "objects"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


@pytest.mark.parametrize("change", ["fact", "entry", "source"])
def test_a_review_is_the_same_cold_warm_and_without_the_cache(repo: Repo, tmp_path: Path, change: str) -> None:
    head = getattr(repo, change)
    cache_dir, tmp = tmp_path / "cache", tmp_path / "tmp"
    tmp.mkdir()
    cold = review(repo, head, cache_dir, tmp)
    objects = stored(cache_dir)
    assert objects  # the headers, decode steps and pass shapes, kept by content
    # A process stores its first 16 pass shapes built (serving._SHAPES_STORED): a review pricing more is wholly
    # kept after a run or two more; then a run finds everything and stores nothing new (nothing is keyed by the
    # temporary folders' paths).
    for _ in range(3):
        warm = review(repo, head, cache_dir, tmp)
        assert warm == cold
        if stored(cache_dir) == objects:
            break
        objects = stored(cache_dir)
    assert stored(cache_dir) == objects
    bypassed = review(repo, head, tmp_path / "unused", tmp, "--no-cache")
    assert bypassed == cold
    assert not (tmp_path / "unused").exists()
    # Every temporary copy (both sides, HEAD with its derived facts recomputed) is removed.
    assert list(tmp.iterdir()) == []
    status, out, err = cold
    if change == "fact":
        assert status == 1, err
        assert "4.8 TB/s → 4.9 TB/s" in out
        assert "streams.read: STALE, recomputed 0.9143" in out
        # The five locks on the card (the shipped stack lock among them) and the three servings on it no lock pins,
        # each priced with the card's facts recomputed (in one private copy of HEAD since round 28).
        assert out.count("recomputed  tokens/s ") == 8
        assert "5 locks affected" in out and "3 servings no lock pins move" in out
        assert err.startswith("passprice: refused: derived facts do not follow from their inputs: ")
    else:
        assert status == 0, err
        assert err == ""
        assert (ENTRY_FILE if change == "entry" else SOURCE_FILE) in out


def test_a_header_found_under_another_path_names_that_path(tmp_path: Path, cache_dir_env: Path) -> None:
    """A checkpoint entry's header is kept by the entry's file name and bytes; found for a copy of the entry in
    another folder (diff's next temporary side), it is the same header with that copy's path as its source, and
    what is computed from it is keyed as from the first."""
    shipped = embedded_root().path

    def copy(name: str) -> Root:
        root = tmp_path / name
        for folder in ("registry", "schema"):
            shutil.copytree(shipped / folder, root / folder)
        return Root(root)

    def as_a_new_process() -> None:
        checkpoints._CACHE.clear()
        checkpoints._CONTENT.clear()
        serving._STEPS.clear()
        serving._SHAPES.clear()
        serving._SHARED_SHAPES.clear()

    first_root, second_root = copy("a"), copy("b")
    as_a_new_process()
    first = checkpoints.load_checkpoint(first_root, ENTRY)
    assert first.source == str(first_root.checkpoints / f"{ENTRY}.toml")
    objects = stored(cache_dir_env)
    as_a_new_process()
    second = checkpoints.load_checkpoint(second_root, ENTRY)
    assert stored(cache_dir_env) == objects  # found, not built again
    assert second == first and second is not first
    assert second.source == str(second_root.checkpoints / f"{ENTRY}.toml")
    assert cache.identity(second) is not None and cache.identity(second) == cache.identity(first)
    # A broken copy of the entry under the same name is its own file: refused naming its own path.
    broken = second_root.checkpoints / f"{ENTRY}.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace('type = "Q4_K"', 'type = "Q9_X"', 1),
                      encoding="utf-8")
    as_a_new_process()
    with pytest.raises(Exception) as refused:
        checkpoints.load_checkpoint(second_root, ENTRY)
    assert str(broken) in str(refused.value)


@pytest.fixture
def cache_dir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    return folder


def test_sharing_the_recomputed_copy_changes_no_word_of_the_review(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The locks' and the unlocked servings' prices with the card's stale facts recomputed are made in one private
    copy of HEAD; made in a copy each (as before round 28), the review says the same."""
    from passprice import diff as diff_module

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    shared = diff_module.diff(Root(repo.path), repo.base, repo.fact)
    made: list[str] = []
    real = diff_module._recomputed_copy

    def counted(*args: object) -> object:
        made.append("copy")
        return real(*args)  # type: ignore[arg-type]

    @contextlib.contextmanager
    def unshared() -> Iterator[None]:
        yield

    monkeypatch.setattr(diff_module, "_recomputed_copy", counted)
    again = diff_module.diff(Root(repo.path), repo.base, repo.fact)
    assert made == ["copy"]  # the locks' copy served the unlocked servings too
    made.clear()
    monkeypatch.setattr(diff_module, "_shared_copies", unshared)
    apart = diff_module.diff(Root(repo.path), repo.base, repo.fact)
    assert made == ["copy", "copy"]
    for fmt in ("text", "markdown", "json"):
        assert diff_module.render(apart, fmt) == diff_module.render(shared, fmt) == diff_module.render(again, fmt)
    assert apart.exit_status == shared.exit_status == 1
    assert [p.name for p in tmp_path.iterdir()] == []
