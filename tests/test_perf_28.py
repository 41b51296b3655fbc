"""Round 28 (issue 13's 2 s bound, issue 16): ``passprice diff`` of two revisions no longer rebuilds every checkpoint
header, decode step and pass shape on every run (a header is kept by its entry's file name and bytes, not by the
temporary folder a side is copied into), and the locks' and the unlocked servings' recomputed prices share one
private copy of HEAD. Behaviour only, no timing: a header found under another path names its own path. The whole
reviews (the same bytes cold, warm and bypassed, a warm run storing nothing new, no copy left behind) and sharing the
copy changing no word of the review are in test_same_bytes (session 33: one repository, one question asked once)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from passprice import cache, checkpoints, serving
from passprice.registry import Root, embedded_root

ENTRY = "deepseek-r1-distill-qwen-7b-q4_k_m"


def stored(cache_dir: Path) -> set[str]:
    """The names of the cache's object entries."""
    folder = cache_dir / "objects"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


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
