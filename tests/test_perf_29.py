"""Round 29 (issue 16, issue 13's 2 s bound: the review path): a serving stack's fit findings
(:func:`passprice.calibrate.verify_stack`) are kept across processes by the bytes of everything the re-fit reads
(:func:`passprice.stackfits.fit_inputs`), so a warm ``check`` or ``diff`` re-runs no fit and imports no NumPy.

Behaviour only, no timing: the kept findings are never stale (each input edited in place, its size and modification
time kept as they were, as an edit within the same second leaves them; the findings then equal a fit re-run with the
cache bypassed, and differ from before where the edit moves the fit). The reviews of a changed card fact, checkpoint
entry and source record, and ``check``, the same bytes and exit status cold, warm and without the cache (a warm
``check`` importing no NumPy), are in test_same_bytes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from passprice import registry, stackfits
from passprice.calibrate import verify_stack
from passprice.errors import InputError
from passprice.measurements import load_runs
from passprice.registry import Root, embedded_root
from passprice.stacks import load_stack

STACK = "lmdeploy-turbomind-2312"
MEASUREMENTS = "registry/measurements/lmdeploy-turbomind-a100.toml"
CARD = "facts/cards/a100_sxm4_80gb.toml"
ENTRY = "registry/checkpoints/llama2-7b-f16.toml"
SOURCE = "sources/nvidia-a100-80gb-datasheet-zh.toml"  # nvidia-a100-datasheet until cite90 removed it
STACK_FILE = f"facts/stacks/{STACK}.toml"
FOLDERS = ("facts", "registry", "schema", "sources", "locks")


def copy_registry(to: Path) -> Path:
    """A copy of passprice's own registry (its folders) at ``to``."""
    shipped = embedded_root().path
    to.mkdir()
    for folder in FOLDERS:
        shutil.copytree(shipped / folder, to / folder)
    return to


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Replace the one ``old`` in ``path`` by ``new`` of the same length, then give the file back its modification
    and access times: what an edit within the same second (on a file system of one-second times) leaves."""
    assert len(old.encode()) == len(new.encode()), (old, new)
    info = path.stat()
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    monkeypatch.delenv("PASSPRICE_MAX_FIT_RUNS", raising=False)
    # The shipped registry's stacks as shipped come from the package's table, not the cache folder
    # (stackfits.shipped_stack, tests/test_reviewfast159.py): left out, so the cache's keys are what is tested here.
    monkeypatch.setattr(stackfits, "_SHIPPED", [(("", "", ""), {})])
    yield folder


def kept_findings(root: Root) -> tuple[object, ...]:
    """The stack's findings as ``check`` gets them (:func:`stackfits.stack_findings`, the cache on)."""
    return stackfits.stack_findings(root, load_stack(root, STACK), load_runs(root))


def fresh_findings(root: Root, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    """The stack's fit re-run with the cache bypassed."""
    with monkeypatch.context() as m:
        m.setenv("PASSPRICE_NO_CACHE", "1")
        return tuple(verify_stack(root, load_stack(root, STACK), load_runs(root)))


def kept_entries(cache_dir: Path) -> set[str]:
    folder = cache_dir / "objects"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


# Each edit of an input the fit reads, of the same length, and whether it moves the findings of the shipped registry
# (the stack holds on it: no finding).
EDITS = [
    pytest.param(MEASUREMENTS, "tokens_per_s = 100.02\n", "tokens_per_s = 100.03\n", True, id="a measured run"),
    pytest.param(CARD, "[memory.bandwidth]\nvalue = 2039\n", "[memory.bandwidth]\nvalue = 1039\n", True,
                 id="a card its runs name"),
    pytest.param(STACK_FILE, "[share.read]\nvalue = 0.9329\n", "[share.read]\nvalue = 0.9029\n", True,
                 id="the stack's fitted fact"),
    pytest.param(ENTRY, '"llama.context_length" = { type = "uint32", value = 4096 }',
                 '"llama.context_length" = { type = "uint32", value = 0096 }', True, id="a checkpoint entry"),
    pytest.param(SOURCE, 'kind = "datasheet"', 'kind = "datashoot"', True, id="a source record a card cites"),
    pytest.param("package-schema/card.schema.json", '"title"', '"titlE"', False, id="a schema"),
    pytest.param("facts/routing/uniform.toml", "#", "#", False, id="a routing record"),
]


@pytest.mark.parametrize(("rel", "old", "new", "moves"), EDITS)
def test_kept_findings_follow_every_input_edited_within_the_same_second(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, rel: str, old: str, new: str, moves: bool
) -> None:
    root = Root(copy_registry(tmp_path / "registry"))
    if rel.startswith("package-schema/"):
        # The schemas read are the package's, never a root's own copy (Root.schema): a copy of them stands in.
        shutil.copytree(root.schema, tmp_path / "registry" / "package-schema")
        monkeypatch.setattr(registry, "schema_dir", lambda: tmp_path / "registry" / "package-schema")
        assert root.schema == tmp_path / "registry" / "package-schema"
    before = kept_findings(root)
    assert before == () == fresh_findings(root, monkeypatch)  # the shipped stack holds
    stack = load_stack(root, STACK)
    inputs = stackfits.fit_inputs(root, stack, load_runs(root))
    assert inputs is not None
    assert len(kept_entries(cache_dir)) >= 1
    assert kept_findings(root) == before  # found again
    if rel.endswith("uniform.toml"):
        # A comment's text: not what the fit reads, but the file's bytes are in the key all the same.
        text = (root.path / rel).read_text(encoding="utf-8")
        old = text.splitlines()[0]
        new = old[:-1] + ("x" if old[-1] != "x" else "y")
    edit_in_place(root.path / rel, old, new)
    try:
        edited = stackfits.fit_inputs(root, load_stack(root, STACK), load_runs(root))
    except InputError:  # an input that no longer loads (the stack, a measured run): the findings say so below
        edited = b""
    assert edited != inputs  # a new key
    after = kept_findings(root)
    assert after == fresh_findings(root, monkeypatch)
    if moves:
        assert after != before
        assert any(f.kind in ("stale", "mismatch", "broken") for f in after)  # type: ignore[attr-defined]
    # Edited back (the same second again): the first findings, found in the cache.
    edit_in_place(root.path / rel, new, old)
    assert stackfits.fit_inputs(root, load_stack(root, STACK), load_runs(root)) == inputs
    assert kept_findings(root) == before


def test_the_fit_run_cap_is_part_of_the_key(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = Root(copy_registry(tmp_path / "registry"))
    assert kept_findings(root) == ()
    monkeypatch.setenv("PASSPRICE_MAX_FIT_RUNS", "3")
    capped = kept_findings(root)
    assert [f.kind for f in capped] == ["broken"]  # type: ignore[attr-defined]
    assert "past the 3 a stack is fitted from (set PASSPRICE_MAX_FIT_RUNS to allow more)" in capped[0].message  # type: ignore[attr-defined]
    monkeypatch.delenv("PASSPRICE_MAX_FIT_RUNS")
    assert kept_findings(root) == ()


def test_an_input_that_cannot_be_keyed_is_fitted_afresh(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Root(copy_registry(tmp_path / "registry"))
    stack, runs = load_stack(root, STACK), load_runs(root)
    os.mkfifo(root.sources / "a-fifo.toml")  # never opened: a FIFO would block a read
    assert stackfits.fit_inputs(root, stack, runs) is None
    os.unlink(root.sources / "a-fifo.toml")
    assert stackfits.fit_inputs(root, stack, runs) is not None
    (root.checkpoints / "llama2-7b-f16.toml").rename(tmp_path / "gone.toml")  # a run's checkpoint not there
    assert stackfits.fit_inputs(root, stack, runs) is None
    found = kept_findings(root)
    assert [f.kind for f in found] == ["broken"] * len(found) and found  # type: ignore[attr-defined]
    assert found == fresh_findings(root, monkeypatch)
    assert "llama2-7b-f16" in found[0].message  # type: ignore[attr-defined]

