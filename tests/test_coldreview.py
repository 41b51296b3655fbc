"""A cold one-fact review (issue 16): what a side's check, its stack fits and the review's lock impacts read again.

- (1) ``measurements.runs_of_document``: inside a snapshot, the runs of one validated measurement document are made
  once for each entry name (``check``'s validation, its stack fits, the review's vendors and re-fit read the same
  files of one side three or four times); a refusal and a call that left a run out are never kept.
- (2) ``stackfits._registry_part``: the shipped stacks' key (the ``*.toml`` files alone) and the cache's whole key
  are made from one walk of the registry folders, each file read once; the shipped key is the one
  ``shipped_stacks.json`` names, and the whole key still moves with every byte of those folders.

No timings here: the instructions are in docs/PERFORMANCE.md (the round of the cold one-fact review's repeated
reads).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from passprice import files, measurements, snapshot, stackfits
from passprice.errors import InputError
from passprice.measurements import load_runs, runs_of_document
from passprice.registry import Root, embedded_root

_DOC: dict[str, Any] = {
    "source": {"source": "some-source"},
    "run": [
        {"id": "a", "stack": "s", "card": "h200_sxm_141gb", "checkpoint": "c", "batch": 1, "positions": [0, 512],
         "tokens_per_s": 100.0, "locator": "table 1"},
        {"id": "b", "stack": "s", "card": "h200_sxm_141gb", "checkpoint": "c", "batch": 2, "positions": [0, 1024],
         "tokens_per_s": 150.0, "locator": "table 2"},
    ],
}


def _copy(tmp_path: Path) -> Root:
    shipped = embedded_root()
    where = tmp_path / "registry"
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(shipped.path / folder, where / folder)
    return Root(where)


# --- (1) a document's runs, made once a snapshot ------------------------------------------------------------------


def test_1_a_documents_runs_are_made_once_a_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    made = [0]
    real = measurements._runs_of_document

    def counted(*args: Any) -> Any:
        made[0] += 1
        return real(*args)

    monkeypatch.setattr(measurements, "_runs_of_document", counted)
    with snapshot.reading():
        first = runs_of_document("m", _DOC, "registry/measurements/m.toml")
        again = runs_of_document("m", _DOC, "elsewhere/m.toml")  # `where` only words a refusal
        assert made[0] == 1 and again == first and again is not first  # a list of its own
        assert all(x is y for x, y in zip(first, again, strict=True))
        assert [r.id for r in first] == ["a", "b"] and first[1].batch == 2 and first[0].source == "m"
        other = runs_of_document("n", _DOC, "registry/measurements/n.toml")  # another name: its runs' `source`
        assert made[0] == 2 and [r.source for r in other] == ["n", "n"]
        copy = {**_DOC}  # the same content as another object: made again (keyed by the object, never its address alone)
        runs_of_document("m", copy, "x")
        assert made[0] == 3
    runs_of_document("m", _DOC, "x")  # outside a snapshot: made every time
    runs_of_document("m", _DOC, "x")
    assert made[0] == 5


def test_1_a_refusal_and_a_run_left_out_are_not_kept() -> None:
    bad = {**_DOC, "run": [{**_DOC["run"][0], "positions": [512, 512]}]}
    small = {**_DOC, "run": [_DOC["run"][0], {**_DOC["run"][1], "tokens_per_s": 5e-324}]}
    with snapshot.reading():
        for _ in range(2):
            with pytest.raises(InputError, match=r"^m\.toml: run\.0\.positions: first 512 is not below last 512"):
                runs_of_document("m", bad, "m.toml")
        problems: list[str] = []
        assert [r.id for r in runs_of_document("m", small, "m.toml", problems)] == ["a"]
        assert len(problems) == 1 and problems[0].startswith("m.toml: run.1")
        # not kept: asked again without a list, the run left out is refused, as ever
        with pytest.raises(InputError, match=r"^m\.toml: run\.1"):
            runs_of_document("m", small, "m.toml")
        again: list[str] = []
        runs_of_document("m", small, "m.toml", again)
        assert again == problems


def test_1_load_runs_three_times_in_a_snapshot_makes_the_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    root = embedded_root()
    made = [0]
    real = measurements._runs_of_document

    def counted(*args: Any) -> Any:
        made[0] += 1
        return real(*args)

    monkeypatch.setattr(measurements, "_runs_of_document", counted)
    fresh = load_runs(root)
    files_read = made[0]
    assert files_read == len(root.names(root.measurements)) >= 9 and len(fresh) > 100
    with snapshot.reading():
        kept = [load_runs(root) for _ in range(3)]
        one = load_runs(root, "llamacpp-cuda-2405")
    assert made[0] == 2 * files_read
    assert all(runs == fresh for runs in kept) and one == [r for r in fresh if r.stack == "llamacpp-cuda-2405"]


def test_1_a_missing_source_is_still_named_once_for_its_id(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    name = sorted(root.names(root.measurements))[0]
    path = root.measurements / f"{name}.toml"
    cited = sorted({r.source_id for r in measurements.load_file(path, root.schema, root.sources)})
    (root.sources / f"{cited[0]}.toml").unlink()
    with snapshot.reading(), pytest.raises(InputError) as e:
        measurements.load_file(path, root.schema, root.sources)
    assert f"no source '{cited[0]}' (" in e.value.lines[0] and e.value.lines[0].count(repr(cited[0])) == 1


# --- (2) the stacks' two registry keys, one walk -------------------------------------------------------------------


def test_2_both_keys_read_each_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy(tmp_path)
    read: list[str] = []
    real = files.read_regular

    def counted(path: Any, *args: Any, **kw: Any) -> bytes:
        read.append(os.fspath(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(files, "read_regular", counted)
    with snapshot.reading():
        toml = stackfits._registry_part(root, whole=False)
        whole = stackfits._registry_part(root)
        assert stackfits._registry_part(root, whole=False) == toml and stackfits._registry_part(root) == whole
    assert toml is not None and whole is not None and toml != whole
    assert len(read) == len(set(read)) > 100
    assert any(p.endswith(".txt") for p in read)  # the excerpts: in the whole key alone


def test_2_an_excerpt_moves_the_whole_key_alone_and_a_record_moves_both(tmp_path: Path) -> None:
    root = _copy(tmp_path)

    def keys() -> tuple[bytes | None, bytes | None]:
        return stackfits._registry_part(root, whole=False), stackfits._registry_part(root)

    toml, whole = keys()
    excerpt = sorted((root.sources / "excerpts").glob("*.txt"))[0]
    excerpt.write_bytes(excerpt.read_bytes() + b"\n")
    toml2, whole2 = keys()
    assert toml2 == toml and whole2 != whole
    record = sorted(root.checkpoints.glob("*.toml"))[0]
    record.write_bytes(record.read_bytes() + b"\n")
    toml3, whole3 = keys()
    assert toml3 != toml and whole3 not in (whole, whole2)
    (root.measurements / "notes.md").write_text("a note\n", encoding="utf-8")  # a file of no *.toml name
    assert keys() == (toml3, keys()[1]) and keys()[1] != whole3


def test_2_entries_one_key_cannot_name(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    toml, whole = stackfits._registry_part(root, whole=False), stackfits._registry_part(root)
    odd = root.sources / "odd.toml"
    odd.mkdir()  # a folder named *.toml: the shipped key cannot name it; the whole key follows it
    (odd / "x.txt").write_text("x\n", encoding="utf-8")
    assert stackfits._registry_part(root, whole=False) is None
    followed = stackfits._registry_part(root)
    assert followed is not None and followed != whole
    shutil.rmtree(odd)
    assert (stackfits._registry_part(root, whole=False), stackfits._registry_part(root)) == (toml, whole)
    if not hasattr(os, "mkfifo"):
        return
    os.mkfifo(root.measurements / "pipe")  # no *.toml name: the shipped key leaves it out; the whole key cannot
    assert stackfits._registry_part(root, whole=False) == toml
    assert stackfits._registry_part(root) is None


def test_2_a_review_copys_refit_walks_the_folders_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import cache
    from passprice.review.impacts import _refit_stack
    from passprice.stacks import load_stack

    root = _copy(tmp_path)
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    cache.configure(True)
    walks = [0]
    real = stackfits._RegistryParts

    class Counted(real):  # type: ignore[misc, valid-type]
        def _walk(self) -> None:
            walks[0] += 1
            super()._walk()

    monkeypatch.setattr(stackfits, "_RegistryParts", Counted)
    stack = load_stack(root, "llamacpp-cuda-2405")
    before = (root.stacks / "llamacpp-cuda-2405.toml").read_bytes()
    with snapshot.suspended():  # as the review's private copy is re-fitted: outside HEAD's snapshot
        _refit_stack(root, stack)
    # the cache's key and the shipped table's (when the table names the running code) from one walk, not two
    assert walks[0] == 1
    assert (root.stacks / "llamacpp-cuda-2405.toml").read_bytes() == before  # the shipped stack re-fits as it is
    assert not snapshot.active()
