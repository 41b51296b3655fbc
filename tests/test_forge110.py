"""Forged cache entries (issue 13; issue 16: "a corrupted cache entry is ignored and rebuilt, never an error").

An entry is read back when its checksum, key, JSON or pickle and classes hold; its checksum is unkeyed, so an entry
rewritten with its checksum re-computed is read back whatever it holds. Forged so — a document missing a key, a
value of another JSON type, an extra key, an empty document; an object of an allowed class with a field set to
``None``, to a value of another type, to a tuple one item short or long, or a field's own object so changed — every
command that reads the cache (``check``, ``sources``, ``checkpoints``, ``cards``, ``price``, ``best``, ``diff``,
``audit``, ``reproduce``, ``sweep``, ``lock``) ended in a KeyError, AttributeError, TypeError or ValueError
traceback, exit 1, on a registry that holds. Now a run that fails so after the cache served it, before it printed
anything, removes the entries it was served and runs again with the cache bypassed
(:func:`passprice.cache.served_again`): its output and status are those of an empty cache. A memo entry whose
status is ``0.0`` passed the memo's check (``0.0 == 0``) and ``os._exit(0.0)`` raised TypeError: only an ``int`` 0
replays now.

Each forger is built here, on a copy of a cache warmed by the commands, with the checksum re-computed.
"""

from __future__ import annotations

import json
import marshal
import os
import pickle
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_helpers import REPO
from passprice import cache, memo
from passprice.digests import blake2b

#: The commands run against each forgery (``diff`` and ``best``, which read what ``price`` and ``check`` read, are run
#: by the hypothesis test and the document classes).
COMMANDS = [
    ("check",),
    ("sources",),
    ("checkpoints",),
    ("cards",),
    ("price", "r1-qwen7b-h200"),
    ("audit", "r1-qwen7b-h200"),
    ("reproduce", "locks/r1-qwen7b-h200.lock.toml"),
    ("sweep", "--file", "examples/grid.toml", "--format", "json"),
]
EXTRA = [("best", "r1-qwen7b-h200"), ("price", "qwen3-30b-a3b-mi300x"), ("diff",)]


def _run(cache_dir: Path, args: tuple[str, ...], memo_on: bool = False) -> tuple[int, str, str]:
    env = dict(os.environ, PASSPRICE_CACHE_DIR=str(cache_dir))
    env.pop("PASSPRICE_NO_CACHE", None)
    if memo_on:
        env.pop("PASSPRICE_NO_MEMO", None)
    else:
        env["PASSPRICE_NO_MEMO"] = "1"  # the memo would replay the output: the entries below are what is read
    done = subprocess.run(
        [sys.executable, "-m", "passprice", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder every command above has filled (twice: the second run stores what the first read)."""
    folder = tmp_path_factory.mktemp("warm") / "cache"
    for _ in range(2):
        for args in COMMANDS + EXTRA:
            _run(folder, args)
    shutil.rmtree(folder / "memo", ignore_errors=True)
    assert len(os.listdir(folder / "documents")) > 50 and len(os.listdir(folder / "objects")) > 50
    return folder


@pytest.fixture(scope="module")
def uncached(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, ...], tuple[int, str, str]]:
    """What each command answers from an empty cache."""
    out = {}
    for args in COMMANDS + EXTRA:
        folder = tmp_path_factory.mktemp("empty")
        out[args] = _run(folder, args)
        assert out[args][0] == 0, out[args][2]
    return out


def _seal(body: bytes) -> bytes:
    """An entry's bytes: the BLAKE2b digest (hex) of ``body``, a newline, ``body`` (as the cache writes)."""
    return blake2b(body).hexdigest().encode("ascii") + b"\n" + body


# --- the forgers -----------------------------------------------------------------------------------------------------

ODD: list[Any] = [None, "x", 10**30, float("nan"), [], {}, True, -1, 0, 1.5, [1, 2], {"a": 1}]


def _places(document: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) inside ``document``, depth first."""
    out: list[tuple[Any, Any]] = []

    def walk(value: Any) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for k, v in list(items):
            out.append((value, k))
            walk(v)

    walk(document)
    return out


def forge_document(document: dict[str, Any], how: str, rng: random.Random) -> dict[str, Any]:
    """``document`` forged ``how``: ``drop`` a key or item, ``retype`` a value (another JSON type: null, a string, a
    huge int, NaN, a list, a table …), ``extra`` a key, ``empty`` it all."""
    if how == "empty":
        return {}
    places = _places(document)
    if not places:
        return {**document, "extra": 1}
    container, k = rng.choice(places)
    if how == "drop":
        del container[k]
    elif how == "retype":
        container[k] = rng.choice([v for v in ODD if type(v) is not type(container[k])])
    elif isinstance(container, dict):
        container["extra"] = 1
    else:
        container.append(1)
    return document


def forge_object(obj: Any, how: str, rng: random.Random) -> Any:
    """``obj`` (an allowed class's object) forged ``how``: a field set to ``none``, to a value of another type
    (``retype``), a tuple field one item ``short`` or ``long``, or a field's own object retyped (``deep``)."""
    if attrs.has(type(obj)):
        field = rng.choice(attrs.fields(type(obj)))
        old = getattr(obj, field.name)
        new: Any = None
        if how == "retype":
            new = rng.choice([v for v in ODD if type(v) is not type(old)])
        elif how == "short" and isinstance(old, tuple) and old:
            new = old[:-1]
        elif how == "long" and isinstance(old, tuple):
            new = (*old, *(old[:1] or (0,)))
        elif how == "deep":
            new = forge_object(old, "retype", rng)
        object.__setattr__(obj, field.name, new)
        return obj
    if isinstance(obj, tuple):
        return obj[:-1] if how == "short" else (*obj, None)
    return None if how == "none" else 7


def forge_cache(folder: Path, kind: str, forge: Callable[[Any], Any]) -> int:
    """Forge every entry of ``folder``'s ``kind`` folder (``documents``: ``forge`` of each document; ``objects``:
    of each object, a batch's each), its checksum re-computed. Returns the entries forged."""
    count = 0
    for entry in sorted((folder / kind).iterdir()):
        raw = entry.read_bytes()
        body = raw.partition(b"\n")[2]
        if kind == "documents":
            stored = json.loads(body)
            stored["document"] = forge(stored["document"])
            entry.write_bytes(_seal(json.dumps(stored).encode()))
        else:
            head = cache._unpickle(raw, raw.index(b"\n") + 1)
            if len(head) == 3:  # a batch: (key, "shared-chunks", N), then its chunks
                objects = cache._read_batch(entry, head[0])
                assert objects is not None
                entry.unlink()
                cache._write_batch(entry, head[0], {k: forge(o) for k, o in objects.items()})
            else:
                entry_key, obj = head
                entry.write_bytes(_seal(pickle.dumps((entry_key, forge(obj)), protocol=5)))
        count += 1
    return count


def _forged_copy(warm: Path, tmp_path: Path, kind: str, forge: Callable[[Any], Any]) -> Path:
    folder = tmp_path / "cache"
    shutil.copytree(warm, folder)
    assert forge_cache(folder, kind, forge) > 50
    return folder


def _as_uncached(folder: Path, args: tuple[str, ...], uncached: dict[tuple[str, ...], tuple[int, str, str]]) -> None:
    status, out, err = _run(folder, args)
    assert "Traceback" not in err, (args, err[-600:])
    assert (status, out, err) == uncached[args], (args, status, err[-600:])


#: Forgeries of exactly the right shape holding false values, which the code answers from as it would from a file
#: saying so (docs/DESIGN.md, "A forged entry", what is left): only the absence of a traceback is asserted for them.
#: None are left of the two classes here since tests/test_odds150.py: every tuple one item short (a drafting method of
#: two acceptance figures where its file has three, which ``check`` found its locks' pinned ``draft.acceptance.3``
#: lacked) is a miss by its file's bytes (``drafts.all_figures``), as is every document's first key dropped where the
#: schema has it optional (a stack without its ``memory`` table: ``check`` and ``diff`` refused the llama.cpp lock's
#: price for want of ``stack.memory.reserved``, ``sources`` counted one citing fact fewer; ``schema._absent_absent``).
#: Wrong-shaped entries the code took for values (an extra top-level key; a tuple of a tied length one item short or
#: long: a header's tensor table, a pass shape's expert streams, a serving's context mix) are misses since
#: tests/test_forge132.py: answered as from an empty cache; a document whose first key the schema requires is a miss
#: since then (it ran again before, another having failed).
LEFT: dict[tuple[str, str], set[tuple[str, ...]]] = {}


def _each_as_uncached(
    folder: Path, kind: str, how: str, commands: list[tuple[str, ...]],
    uncached: dict[tuple[str, ...], tuple[int, str, str]],
) -> None:
    """Every command of ``commands`` answers from ``folder`` as from an empty cache, but those :data:`LEFT` names,
    which end in no traceback, with passprice's statuses."""
    differ = []
    for args in commands:
        status, out, err = _run(folder, args)
        assert "Traceback" not in err and status in (0, 1, 2), (args, status, err[-600:])
        if (status, out, err) != uncached[args]:
            differ.append(args)
    assert set(differ) == LEFT.get((kind, how), set()), differ


# --- every command against every class of forgery -------------------------------------------------------------------

DOCUMENT_CLASSES = ["drop", "retype", "extra", "empty"]
OBJECT_CLASSES = ["none", "retype", "short", "long", "deep"]


def forge_every_document(document: dict[str, Any], how: str) -> dict[str, Any]:
    """``document`` forged ``how`` at its top level, the same for every entry (no draw: the entries' names move with
    passprice's code, so a draw would forge other entries on another checkout): ``drop`` its first key, ``retype``
    each value to a string (a table, list or number where one was), ``extra`` a key, ``empty``."""
    if how == "empty":
        return {}
    if how == "extra":
        return {**document, "extra": [1]}
    if how == "drop":
        return {k: v for k, v in document.items() if k != min(document, default=None)}
    return {k: "x" if not isinstance(v, str) else [v] for k, v in document.items()}


def forge_every_object(obj: Any, how: str) -> Any:
    """``obj`` forged ``how``, every field of it: ``None``, a string (``retype``), each tuple one item ``short`` or
    ``long``, or each field's own object's fields ``None`` (``deep``)."""
    if not attrs.has(type(obj)):
        return forge_object(obj, "short" if how == "short" else "none", random.Random(0))
    for field in attrs.fields(type(obj)):
        old = getattr(obj, field.name)
        new: Any = None
        if how == "retype":
            new = "x" if not isinstance(old, str) else 7
        elif how in ("short", "long"):
            if not isinstance(old, tuple):
                continue
            new = old[:-1] if how == "short" else (*old, *(old[:1] or (0,)))
        elif how == "deep":
            if not attrs.has(type(old)):
                continue
            new = forge_every_object(old, "none")
        object.__setattr__(obj, field.name, new)
    return obj


@pytest.mark.parametrize("how", DOCUMENT_CLASSES)
def test_forged_documents_answer_as_an_empty_cache(
    how: str, warm: Path, tmp_path: Path, uncached: dict[tuple[str, ...], tuple[int, str, str]]
) -> None:
    # Before: drop -> check KeyError 'hot_share', sources KeyError 'source', checkpoints KeyError 'tensors', and
    # price/best/audit/sweep "locks/qwen3-30b-a3b-h200.lock.toml: its [lock] table does not read", exit 2; retype ->
    # check TypeError, sources AttributeError, sweep "card '0': not found", exit 2; empty -> KeyError in 7 commands.
    folder = _forged_copy(warm, tmp_path, "documents", lambda d: forge_every_document(d, how))
    forged = {p.name: p.read_bytes() for p in (folder / "documents").iterdir()}
    _each_as_uncached(folder, "documents", how, COMMANDS + EXTRA, uncached)
    if ("documents", how) in LEFT:  # nothing failed: nothing was run again, nothing rewritten
        return
    # the runs again stored what they built over the forged entries they read, and the next run answers as well
    kept = {p.name: p.read_bytes() for p in (folder / "documents").iterdir()}
    assert sum(kept.get(name) not in (None, body) for name, body in forged.items()) > 20
    _as_uncached(folder, ("check",), uncached)


@pytest.mark.parametrize("how", OBJECT_CLASSES)
def test_forged_objects_answer_as_an_empty_cache(
    how: str, warm: Path, tmp_path: Path, uncached: dict[tuple[str, ...], tuple[int, str, str]]
) -> None:
    # Before (each a traceback, exit 1): none -> check AttributeError 'NoneType' … 'replace', cards TypeError,
    # price AttributeError … 'source', reproduce … 'name'; retype -> price "refused: BadPrefix: a shared prefix of
    # True positions" (exit 1), sweep TypeError; short/long -> price qwen35 ValueError 'scaling' must be in …
    folder = _forged_copy(warm, tmp_path, "objects", lambda o: forge_every_object(o, how))
    _each_as_uncached(folder, "objects", how, COMMANDS + EXTRA[:2], uncached)


def test_a_memo_entry_whose_status_is_not_an_int_is_a_miss(tmp_path: Path) -> None:
    # Before: os._exit(0.0) raised "TypeError: 'float' object cannot be interpreted as an integer", exit 1.
    folder = tmp_path / "cache"
    first = _run(folder, ("cards",), memo_on=True)
    assert first[0] == 0
    assert _run(folder, ("cards",), memo_on=True) == first  # a replay
    (entry,) = (folder / "memo").iterdir()
    kept = marshal.loads(entry.read_bytes().partition(b"\n")[2])
    assert kept["status"] == 0 and memo.still(kept)
    for status in (0.0, False, "0", None, 2**70):
        forged = dict(kept, status=status)
        assert not memo.still(forged)
        body = marshal.dumps(forged, 2)
        entry.write_bytes(memo._checksum(body) + b"\n" + body)
        assert _run(folder, ("cards",), memo_on=True) == first, status


def test_a_failure_after_printing_is_not_run_again() -> None:
    # A run that printed before it failed cannot run again without printing twice: it fails as it did.
    calls = []

    def run() -> None:
        calls.append(1)
        cache._SERVED.append(None)
        print("half", end="")
        raise KeyError("x")

    with pytest.raises(KeyError):
        cache.served_again(run, lambda e: False, lambda e: None)
    assert calls == [1]


def test_an_answer_or_a_run_served_nothing_is_not_run_again() -> None:
    calls = []

    def served() -> None:
        calls.append(1)
        cache._SERVED.append(None)
        raise KeyError("x")

    def answered() -> None:
        calls.append(1)
        cache._SERVED.append(None)
        raise ValueError("an answer")

    def fresh() -> None:
        calls.append(1)
        raise KeyError("x")

    with pytest.raises(ValueError):
        cache.served_again(answered, lambda e: isinstance(e, ValueError), lambda e: None)
    assert calls == [1]
    calls.clear()
    with pytest.raises(KeyError):
        cache.served_again(fresh, lambda e: False, lambda e: None)
    assert calls == [1]
    calls.clear()
    with pytest.raises(KeyError):  # served: run again, uncached, where it fails again as it would uncached
        cache.served_again(served, lambda e: False, lambda e: None)
    assert calls == [1, 1]
    assert cache.enabled()  # the cache is back on after


# --- any mutation of a real entry ------------------------------------------------------------------------------------

HYPOTHESIS_COMMANDS = [("sources",), ("price", "r1-qwen7b-h200"), ("checkpoints",)]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(["documents", "objects"]),
    how=st.sampled_from(sorted(set(DOCUMENT_CLASSES + OBJECT_CLASSES))),
    seed=st.integers(0, 2**32 - 1),
    share=st.floats(0.05, 1.0),
)
def test_any_forged_entries_give_passprices_own_answer(
    kind: str, how: str, seed: int, share: float, warm: Path, tmp_path_factory: pytest.TempPathFactory,
    uncached: dict[tuple[str, ...], tuple[int, str, str]],
) -> None:
    rng = random.Random(seed)
    folder = tmp_path_factory.mktemp("forged") / "cache"
    shutil.copytree(warm, folder)

    def forge(value: Any) -> Any:
        if rng.random() > share:
            return value
        if kind == "documents":
            return forge_document(value, how if how in DOCUMENT_CLASSES else "retype", rng)
        return forge_object(value, how if how in OBJECT_CLASSES else "none", rng)

    forge_cache(folder, kind, forge)
    for args in HYPOTHESIS_COMMANDS:
        status, _, err = _run(folder, args)
        assert "Traceback" not in err, (args, err[-600:])
        if status != uncached[args][0]:
            # passprice's own answer to a value of the right type that lies (DESIGN.md, "A forged entry")
            said = (err.splitlines() or [""])[-1][:18]
            assert (status, said) in ((2, "passprice: error: "), (1, "passprice: refused")), (args, err[-600:])
