"""Issue 16 (session 35, scale38): a price under many locks of one serving resolves each folder once a snapshot
(:func:`passprice.snapshot.resolved`) where it resolved each lock's whole path six times. What it names is the same,
links included: a lock that is a link into the folder is named by the file it links to, as before; a registry
reached through a link is named as when given by its own path; whatever ``Path.resolve`` gives or raises, the
memo gives or raises.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice import modelhistory, registry, snapshot

SERVING = "r1-qwen7b-h200"
COPIES = 48


@pytest.fixture(scope="module")
def many_locks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shipped registry with ``COPIES`` more locks of :data:`SERVING` (copies of its three), one more that is a
    link to one of them, and a link to the whole registry: (the registry, the link to it)."""
    top = tmp_path_factory.mktemp("scale38")
    root = top / "reg"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    own = sorted((root / "locks").glob(f"{SERVING}*.lock.toml"))
    assert len(own) == 3
    for i in range(COPIES):
        source = own[i % 3]
        shutil.copyfile(source, source.with_name(f"l{i:02d}-{source.name}"))
    (root / "locks" / "a-link.lock.toml").symlink_to(f"l06-{own[0].name}")  # sorted first: counted once (left55)
    (top / "through").symlink_to("reg")
    return root, top / "through"


def _plain(path: str | os.PathLike[str]) -> Path:
    return Path(path).resolve()


def _priced_as_before(monkeypatch: pytest.MonkeyPatch, root: Path, *args: str) -> str:
    """``price`` with every folder resolved again for each call (the code before this change)."""
    with monkeypatch.context() as mp:
        for module in (snapshot, registry, modelhistory):
            mp.setattr(module, "resolved", _plain)
            mp.setattr(module, "resolved_folder", _plain)
        result = invoke("price", SERVING, *args, root=root)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("through", [False, True], ids=["folder", "link-to-folder"])
def test_the_price_under_many_locks_names_them_as_before(
    many_locks: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, through: bool
) -> None:
    root = many_locks[1] if through else many_locks[0]
    calls: list[str] = []
    real = os.path.realpath

    def counted(path: str | os.PathLike[str], *args: object, **kwargs: object) -> str:
        calls.append(os.fspath(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as mp:
        mp.setattr(os.path, "realpath", counted)
        now = invoke("price", SERVING, root=root)
    assert now.exit_code == 0, now.output
    assert now.stdout == _priced_as_before(monkeypatch, root)
    # the first locks named, each by its own file; the link, sorted first, left out: it is the lock it links to,
    # counted once (left55: it was named first, by the file it links to, and that file again in its turn)
    line = next(x for x in now.stdout.splitlines() if x.lstrip().startswith("lock "))
    assert line.startswith(f"  lock          under locks {SERVING}-best (locks/l00-{SERVING}-best.lock.toml), "
                           f"{SERVING}-llamacpp (locks/l01-{SERVING}-llamacpp.lock.toml), "), line
    assert line.count(f"(locks/l06-{SERVING}-best.lock.toml)") == 1, line
    assert "a-link" not in now.stdout
    # the lock files' paths resolved: the link's alone (its own checks of a link resolve it too),
    # where each of the 52 locks' paths was resolved six times
    folders = tuple(str(r / "locks") + os.sep for r in many_locks)
    in_locks = [c for c in calls if c.startswith(folders)]
    # (none at all when the lock index kept by the folder's run before answers: the two runs share the registry, and
    # whether its files are old enough to be trusted by their status depends on the machine's speed; CI at 2ff7ef29)
    assert {Path(c).name for c in in_locks} <= {"a-link.lock.toml"} and len(in_locks) <= 4, in_locks


def test_the_json_price_under_many_locks_is_as_before(
    many_locks: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    now = invoke("price", SERVING, "--json", root=many_locks[1])
    assert now.exit_code == 0, now.output
    assert now.stdout == _priced_as_before(monkeypatch, many_locks[1], "--json")


def _outcome(resolve: Callable[[], Path]) -> tuple[str, str]:
    try:
        return "value", str(resolve())
    except (OSError, RuntimeError) as e:
        return type(e).__name__, str(e)


def test_resolved_is_path_resolve_for_links_dots_and_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.toml").write_text("")
    (tmp_path / "elsewhere.toml").write_text("")
    (tmp_path / "via").symlink_to("real")
    (tmp_path / "real" / "in.toml").symlink_to("a.toml")
    (tmp_path / "real" / "out.toml").symlink_to("../elsewhere.toml")
    (tmp_path / "real" / "dangling.toml").symlink_to("nothing.toml")
    (tmp_path / "real" / "loop.toml").symlink_to("loop.toml")
    (tmp_path / "real" / "file").write_text("")
    monkeypatch.chdir(tmp_path)
    cases = [
        *(tmp_path / "real" / n for n in ("a.toml", "in.toml", "out.toml", "dangling.toml", "loop.toml", "none")),
        *(tmp_path / "via" / n for n in ("a.toml", "in.toml", "out.toml", "loop.toml")),
        tmp_path / "via", "via/a.toml", "real/in.toml", "a.toml", "via/../elsewhere.toml", "via/.",
        "via/..", "real/file/x.toml", f"{tmp_path}/via//a.toml", tmp_path / "real" / "loop.toml" / "x.toml",
    ]
    plain = [_outcome(lambda c=c: Path(c).resolve()) for c in cases]
    assert ("RuntimeError", f"Symlink loop from '{tmp_path / 'real' / 'loop.toml'}'") in plain
    with snapshot.reading():
        for _ in range(2):  # the first call resolves each folder, the second takes it from the snapshot
            assert [_outcome(lambda c=c: snapshot.resolved(c)) for c in cases] == plain
            assert [_outcome(lambda c=c: snapshot.resolved_folder(c)) for c in cases] == plain
    assert [_outcome(lambda c=c: snapshot.resolved(c)) for c in cases] == plain  # outside: the call itself


def test_a_folder_resolved_once_a_snapshot_only(tmp_path: Path) -> None:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.toml").write_text("")
    (tmp_path / "via").symlink_to("one")
    with snapshot.reading():
        assert snapshot.resolved(tmp_path / "via" / "x.toml") == tmp_path / "one" / "x.toml"
        (tmp_path / "via").unlink()
        (tmp_path / "via").symlink_to("two")
        assert snapshot.resolved(tmp_path / "via" / "x.toml") == tmp_path / "one" / "x.toml"  # one snapshot
    assert snapshot.resolved(tmp_path / "via" / "x.toml") == tmp_path / "two" / "x.toml"  # the next reads afresh
    with snapshot.reading():
        assert snapshot.resolved(tmp_path / "via" / "x.toml") == tmp_path / "two" / "x.toml"


def test_copies_of_a_lock_are_judged_unforged_once_a_price(
    many_locks: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import cache, enforce

    made: set[str] = set()
    read: list[str] = []
    key, read_entry = cache.key, cache.read

    def keyed(kind: str, schema_bytes: bytes, data: bytes) -> str:
        found = key(kind, schema_bytes, data)
        if kind == enforce.UNFORGED_KIND:
            made.add(found)
        return found

    def counted(entry_key: str) -> dict | None:
        if entry_key in made:
            read.append(entry_key)
        return read_entry(entry_key)

    with monkeypatch.context() as mp:
        mp.setattr(cache, "key", keyed)
        mp.setattr(cache, "read", counted)
        result = invoke("price", SERVING, root=many_locks[0])
    assert result.exit_code == 0, result.output
    # 52 locks of three contents (the link is a fourth name of one): each verdict looked up once, not once a copy
    assert len(made) == 3 and sorted(read) == sorted(made)
