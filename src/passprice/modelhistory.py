"""A lock's pricing model names code some passprice had: the package ships the list of every pricing-model digest
passprice has written its own repository's locks with (``pricing_models.json``, beside its modules), each with the
passprice version, the day and the commit that first locked with it, and a lock naming a digest neither listed nor
the running code's is refused as forged.

A lock pins the code that priced it by a digest of that code (:func:`passprice.pins.pricing_model_digest`), and a
lock whose own pins do not give its record is refused as forged (:class:`passprice.enforce.LockForged`) only when
that digest is the running code's: one of other code is an honest upgrade, whose move ``reproduce`` blames on the
code. Issue 13 (slip 55): a lock whose record AND ``pricing_model`` were both edited by hand (the model rewritten to
``sha256:111…``, digests recomputed) read as such an upgrade (``price --lock`` exit 0, "the pricing model (code) or
the checkpoint moved it"); only ``check`` and the review, which know BASE's and HEAD's code, caught it. Telling an
upgrade from a forgery on every price without git history needs the list of code that ever wrote a lock: shipped in
the package, read only from the running package (never from a registry or a checkout a pull request could write).

Slip 57: each entry also lists the ``[lock] digest`` of every lock passprice wrote into its ``locks/`` with that code
(``records``), so a lock there naming a real older digest beside a forged record is refused
(:class:`passprice.enforce.LockUnlisted`). The limit that remains: a lock of one's own registry (or kept outside
passprice's ``locks/``) naming a real older digest keeps today's "the pricing model (code) moved it" line, which says
which passprice version and commit wrote a lock of that code; ``reproduce`` with that passprice installed, ``check``
and the review catch it.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from passprice import snapshot
from passprice.errors import InputError
from passprice.pins import PACKAGE
from passprice.snapshot import resolved, resolved_folder

#: The shipped list, beside the package's modules (a data file: no module of the pricing model, so adding a digest
#: to it does not move the digest it lists).
KNOWN = PACKAGE / "pricing_models.json"

#: The most bytes :data:`KNOWN` may hold (some 200 bytes a digest: room for 5,000 re-locks; the shipped list held
#: 17 KB in session 33). A full list reads in well under a second (attack 60: 4 MiB, 25,000 digests, took 3.2 s).
KNOWN_BYTES = 1024 * 1024

#: What :data:`KNOWN` holds (checked with jsonschema on every read).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["models"],
    "properties": {
        "about": {"type": "string"},
        "models": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["digest", "version", "first_locked", "commit"],
                "additionalProperties": False,
                "properties": {
                    # Lengths as well as patterns: a pattern's ``$`` also matches before a final newline
                    # ("sha256:…\n" passed it, then failed KnownModel's validator: a traceback, attack 60).
                    "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$", "maxLength": 71},
                    "version": {"type": "string", "pattern": "^[0-9A-Za-z][0-9A-Za-z.+!_-]*$", "maxLength": 64},
                    "first_locked": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "maxLength": 10,
                                     "format": "date"},
                    "commit": {"type": "string", "pattern": "^([0-9a-f]{12}|)$", "maxLength": 12},
                    # The [lock] digest of every lock passprice wrote this repository's locks/ with under that code
                    # (slip 57): an older-model lock in a checkout's locks/ whose record is not here is forged.
                    "records": {"type": "array", "uniqueItems": True,
                                "items": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$", "maxLength": 71}},
                },
            },
        },
    },
}


def _as_records(value: Iterable[str]) -> tuple[str, ...]:
    """A model's ``records`` as a tuple (the list holds a JSON array)."""
    return tuple(value)


@attrs.frozen
class KnownModel:
    """One pricing-model digest passprice has written locks with: ``digest`` (``sha256:`` + 64 hex), the passprice
    ``version`` that wrote them (``0.1.0``), the day it first did (``first_locked``, ``YYYY-MM-DD``, UTC) and that
    commit of passprice's repository (``commit``, 12 hex digits; empty when unknown); and ``records``, the
    ``[lock] digest`` of every lock passprice wrote into its repository's ``locks/`` with that code (slip 57: from
    ``git log -p -- locks/`` for the models before it, then added by each ``passprice lock``), among which an
    older-model lock there must be (:class:`passprice.enforce.LockUnlisted`)."""

    digest: str = attrs.field(validator=attrs.validators.matches_re(r"sha256:[0-9a-f]{64}"))
    version: str = attrs.field(validator=attrs.validators.instance_of(str))
    first_locked: str = attrs.field(validator=attrs.validators.matches_re(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"))
    commit: str = attrs.field(validator=attrs.validators.matches_re(r"([0-9a-f]{12}|)"))
    # each record's form is the schema's to check (a regular expression a record here cost 1 ms a read of 773)
    records: tuple[str, ...] = attrs.field(
        default=(), converter=_as_records, validator=attrs.validators.deep_iterable(attrs.validators.instance_of(str)))

    def describe(self) -> str:
        """``passprice 0.1.0's, first locked 2026-12-01 at commit c23cf4390948``. Raises nothing."""
        at = f" at commit {self.commit}" if self.commit else ""
        return f"passprice {self.version}'s, first locked {self.first_locked}{at}"


def read_known(path: Path = KNOWN) -> dict[str, KnownModel]:
    """The list at ``path`` (default: the running package's :data:`KNOWN`), by digest. Raises :class:`InputError`
    (one line naming the file, and the entry for a bad one) for a file that is missing or not a regular file (a FIFO
    is refused unopened: :func:`passprice.files.open_regular`), over :data:`KNOWN_BYTES`, not JSON (nested too deep
    included), not :data:`SCHEMA`'s, or listing one digest twice (two entries would say different code wrote it)."""
    return {m.digest: m for m in _read(path)[1]}


def _read(path: Path) -> tuple[dict[str, Any], list[KnownModel]]:
    """The document at ``path`` and its models, in the file's order; raises as :func:`read_known`."""
    import cattrs

    from passprice.files import open_regular, shown

    shipped = " (shipped in the package beside its modules: reinstall passprice)" if path == KNOWN else ""
    try:
        with open_regular(path) as f:
            data = f.read(KNOWN_BYTES + 1)
    except InputError as e:  # missing (an install without it: every price of a lock stopped on "no such file"), a FIFO
        raise InputError(f"{e}: passprice's list of pricing models{shipped}") from None
    except OSError as e:
        raise InputError(f"{shown(path)}: cannot be read ({e.strerror}): passprice's list of pricing models"
                         f"{shipped}") from None
    if len(data) > KNOWN_BYTES:
        raise InputError(f"{shown(path)}: holds over {KNOWN_BYTES:,} bytes: not passprice's list of pricing models")
    try:
        doc = json.loads(data)
    except RecursionError:  # "[" 10^5 times: a traceback, exit 1 (attack 60)
        raise InputError(f"{shown(path)}: not passprice's list of pricing models: JSON nested too deep") from None
    except ValueError as e:
        raise InputError(f"{shown(path)}: not passprice's list of pricing models: {e}") from None
    if not _surely_valid(doc):
        # jsonschema (pure Python, about 50 ms of imports on a quiet machine) only for a list the compiled validator
        # does not find valid, to decide and word the refusal: a cold `check` imported it for the shipped list
        # alone (cold38, session 35)
        import jsonschema

        try:
            jsonschema.validate(doc, SCHEMA, format_checker=jsonschema.FormatChecker(["date"]))
        except RecursionError:
            raise InputError(f"{shown(path)}: not passprice's list of pricing models: JSON nested too deep") from None
        except jsonschema.ValidationError as e:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
            raise InputError(f"{shown(path)}: not passprice's list of pricing models: "
                             f"{where.lstrip('.') or 'the document'}: {_said(e)}") from None
        except ValueError as e:
            raise InputError(f"{shown(path)}: not passprice's list of pricing models: {e}") from None
    try:
        models = cattrs.structure(doc["models"], list[KnownModel])
    except (cattrs.BaseValidationError, ValueError, TypeError) as e:  # the schema states every rule: a last resort
        raise InputError(f"{shown(path)}: not passprice's list of pricing models: {e}") from None
    first: dict[str, int] = {}
    for i, m in enumerate(models):
        if m.digest in first:
            raise InputError(f"{shown(path)}: models[{i}].digest: {m.digest} is listed already "
                             f"(models[{first[m.digest]}]): not passprice's list of pricing models")
        first[m.digest] = i
    return doc, models


def _said(error: Any) -> str:
    """What a ``jsonschema`` error of the list says, in one short line: a record listed twice by the record and its
    two places, and any value past 120 characters cut (:func:`passprice.schema.shown_value`). Attack 62: a
    ``records`` of 13,600 digests holding one twice was refused by a line of 915,335 characters quoting them all
    (``[…] has non-unique elements``) that named neither the record nor where."""
    from passprice.schema import shown_value

    instance = error.instance
    if error.validator == "uniqueItems" and isinstance(instance, list):
        first: dict[str, int] = {}
        for i, item in enumerate(instance):
            mark = json.dumps(item, sort_keys=True)
            if mark in first:
                return f"{shown_value(item)} is listed twice ([{first[mark]}] and [{i}])"
            first[mark] = i
    message = str(error.message)
    text = repr(instance)
    if len(text) > 120 and text in message:
        message = message.replace(text, shown_value(instance))
    return message if len(message) <= 400 else f"{message[:300]}… ({error.validator} failed)"


def _surely_valid(doc: Any) -> bool:
    """Whether ``jsonschema-rs`` (compiled) finds ``doc`` :data:`SCHEMA`'s, formats checked: it only ever says
    "valid" faster; ``False`` where it does not, or is missing (then :mod:`jsonschema` decides and words the
    refusal)."""
    try:
        import jsonschema_rs
    except ImportError:
        return False
    from passprice.schema import signals_held

    try:
        with signals_held():  # a Ctrl-C meanwhile is not lost in the library (passprice.schema.signals_held)
            return bool(jsonschema_rs.Draft202012Validator(SCHEMA, validate_formats=True).is_valid(doc))
    except Exception:
        return False


@functools.cache
def _shipped() -> dict[str, KnownModel]:
    return read_known()


def written_by(digest: str) -> KnownModel | None:
    """The listed model of ``digest`` in the running package's list (read once a process), or ``None`` when no
    passprice is listed as having written a lock with it. Raises :class:`InputError` as :func:`read_known`."""
    return _shipped().get(digest)


def known_count() -> int:
    """How many digests the running package's list holds. Raises :class:`InputError` as :func:`read_known`."""
    return len(_shipped())


def is_known(digest: str) -> bool:
    """Whether ``digest`` is a pricing model some passprice had: listed (:func:`written_by`), or the running code's
    (:func:`passprice.pins.pricing_model_digest`, computed only for a digest not listed: ~0.2 s cold, a few ms
    cached). Raises :class:`InputError` as :func:`read_known`."""
    if written_by(digest) is not None:
        return True
    from passprice.pins import pricing_model_digest

    return digest == pricing_model_digest()


def list_to_update(root: Path) -> Path | None:
    """The list ``passprice lock`` updates when it writes a lock into ``root``'s ``locks/``:
    ``root/src/passprice/pricing_models.json`` when ``root`` is a checkout of passprice (it holds that path, a file
    or not, and ``src/passprice/pins.py``) whose code is the running code (:func:`passprice.pins.checkout_model` is
    ``None``); else ``None`` (a registry of one's own, or a checkout of other code, whose lock the running code did
    not price as that checkout's code would). Raises nothing."""
    from passprice.files import is_there
    from passprice.pins import checkout_model

    listed = root / "src" / "passprice" / KNOWN.name
    try:
        if not (os.path.lexists(listed) and is_there(root / "src" / "passprice" / "pins.py")):
            return None
        if checkout_model(root) is not None:
            return None  # the checkout's code is not the running code: the lock was not priced by it
    except (OSError, RuntimeError, ValueError, InputError):
        return None
    return listed


#: What a refusal to update the list adds: whose file it is and why ``lock`` needs it (slip 57).
_UPDATES = ("passprice's list of pricing models, which passprice lock updates when it locks this checkout (the code "
            "it locked with and the lock's [lock] digest)")


def require_updatable(listed: Path) -> None:
    """Refuse, before a lock is written, a list at ``listed`` that ``passprice lock`` could not update: not a
    regular file (a folder, a FIFO, a link to one), read-only or in a folder it cannot write
    (:func:`passprice.files.check_writable`), that does not read (:func:`read_known`), or with less than :data:`ROOM`
    bytes left under :data:`KNOWN_BYTES` (attack 62: a list 137 bytes short of the cap took a lock's record, exit 0,
    and every later price of an older-model lock refused the list as over the cap). Issue 13, slip 57: a lock
    into the checkout's ``locks/`` ignored such a list without a word (exit 0), and the code it locked with was then
    refused by every later passprice as forged. Raises :class:`InputError`, one line naming the file."""
    from passprice.files import check_writable, shown

    try:
        check_writable(listed, force=True)
    except InputError as e:
        raise InputError(f"{e}: {_UPDATES}; the lock was not written") from None
    try:
        _read(listed)
        size = os.stat(listed).st_size
    except InputError as e:
        raise InputError(f"{e}; passprice lock updates it when it locks this checkout: restore it (git checkout -- "
                         f"src/passprice/{KNOWN.name}); the lock was not written") from None
    except OSError as e:  # replaced meanwhile by a loop of links, or removed
        raise InputError(f"{shown(listed)}: cannot be read ({e.strerror}): {_UPDATES}; the lock was not written") \
            from None
    if size > KNOWN_BYTES - ROOM:
        raise InputError(_full(listed, size) + "; the lock was not written")


#: The bytes one more entry of the list takes at most as :func:`add_running` writes it (a new model with one record:
#: some 330; a record added to an entry: 77): :func:`require_updatable` refuses a list with less room than this left
#: under :data:`KNOWN_BYTES`, before the lock is written.
ROOM = 1024


def _full(listed: Path, size: int) -> str:
    """The words refusing a list with no room for the record of one more lock: its size and the cap."""
    from passprice.files import shown

    return (f"{shown(listed)}: holds {size:,} bytes, and with one more lock's record would pass the {KNOWN_BYTES:,} "
            f"bytes passprice reads (modelhistory.KNOWN_BYTES; it refuses a larger list on every price): "
            f"{_UPDATES}; raise the cap in the code that reads it before locking with it")


def add_running(root: Path, today: str | None = None, record: str | None = None,
                replaced: str | None = None) -> KnownModel | None:
    """When ``root`` is a checkout of passprice whose code is the running code (:func:`list_to_update`): list the
    running code's digest in that checkout's list, with ``passprice.__version__``, ``today`` (default: today, UTC)
    and the checkout's HEAD commit (12 hex digits; empty outside git), and add ``record`` (the ``[lock] digest`` of
    the lock just written, ``sha256:`` + 64 hex) to its ``records``; return the entry as written, or ``None`` when
    it is no such checkout or the list holds both already; ``replaced``, the ``[lock] digest`` of the lock file
    the new one replaced, is dropped from the running code's records when the list as committed at the checkout's
    HEAD does not hold it (a lock this code wrote and re-wrote before any commit: no commit holds it, so the review
    would fail its record, :func:`passprice.modellist.list_changes`). Read, edited and written atomically
    (:func:`passprice.files.write_atomically`) under the list's lock (:func:`passprice.edit.locked`, as ``fact set``
    edits a card): attack 62, two ``lock`` runs of two locks at once each read the list and the second's rename
    dropped the first's record (91 of 200 records lost, every run exiting 0; the lock whose record went was then
    refused as :class:`passprice.enforce.LockUnlisted` once its code was older); now none is. ``passprice lock``
    calls it after writing a lock into ``locks/``, so each re-lock of passprice's repository lists the code it
    locked with and what it wrote. Raises :class:`InputError` as :func:`read_known`, for a list that cannot be
    written or that the record would take past :data:`KNOWN_BYTES`, and as :func:`passprice.edit.locked` for one
    another edit holds too long."""
    from passprice.edit import locked
    from passprice.pins import pricing_model_digest

    listed = list_to_update(root)
    if listed is None:
        return None
    with locked(listed):  # two locks at once each read the list and the second rename lost the first's record
        return _add(root, listed, pricing_model_digest(), today, record, replaced)


def _add(root: Path, listed: Path, digest: str, today: str | None, record: str | None,
         replaced: str | None) -> KnownModel | None:
    """:func:`add_running`'s read-modify-write of ``listed``, run under :func:`passprice.edit.locked`."""
    import datetime

    from passprice import __version__
    from passprice.files import write_atomically

    doc, models = _read(listed)
    at = next((i for i, m in enumerate(models) if m.digest == digest), None)
    if at is None:
        day = today or datetime.datetime.now(datetime.UTC).date().isoformat()
        model = KnownModel(digest, __version__, day, _head(root), (record,) if record else ())
        doc["models"].append(_entry(model))  # the document read and checked above, not the file read again
    else:
        kept = models[at].records
        if replaced and replaced != record and replaced in kept and not _committed(root, digest, replaced):
            kept = tuple(r for r in kept if r != replaced)
        if record and record not in kept:
            kept = (*kept, record)
        if kept == models[at].records:
            return None
        model = attrs.evolve(models[at], records=kept)
        doc["models"][at] = _entry(model)
    text = json.dumps(doc, indent=1) + "\n"
    if len(text.encode("utf-8")) > KNOWN_BYTES:  # what passprice would then refuse on every price (attack 62)
        raise InputError(_full(listed, os.stat(listed).st_size))
    write_atomically(listed, text, force=True)
    if listed.resolve() == KNOWN.resolve():
        _shipped.cache_clear()
    return model


def _entry(model: KnownModel) -> dict[str, Any]:
    """``model`` as the list writes it: its ``records`` left out while it has none."""
    entry = attrs.asdict(model)
    entry["records"] = list(model.records)
    if not model.records:
        del entry["records"]
    return entry


def in_checkout_locks(root: Path, source: str | None) -> bool:
    """Whether the lock file ``source`` (its path as a command names it: relative to ``root``, or absolute) lies in
    ``locks/`` of ``root``, a checkout of passprice (it holds ``src/passprice/pricing_models.json`` and
    ``src/passprice/pins.py``): the locks passprice's own re-locks write and list (:func:`add_running`). Raises
    nothing."""
    from passprice.files import is_there

    if not source:
        return False
    try:
        path = Path(source) if Path(source).is_absolute() else root / source
        return (resolved(path).parent == resolved_folder(root / "locks")
                and snapshot.made(("passprice-checkout", os.fspath(root), os.getcwd()),  # once a snapshot, not a lock
                                  lambda: os.path.lexists(root / "src" / "passprice" / KNOWN.name)
                                  and is_there(root / "src" / "passprice" / "pins.py")))
    except (OSError, RuntimeError, ValueError, InputError):
        return False


def names_record(model: str, record: str) -> bool:
    """Whether the running package's list names ``record`` (a lock's ``[lock] digest``) among those passprice wrote
    with the pricing model ``model``. Raises :class:`InputError` as :func:`read_known`."""
    known = written_by(model)
    return known is not None and record in known.records


def _committed(root: Path, digest: str, record: str) -> bool:
    """Whether the list as committed at ``root``'s HEAD records ``record`` under ``digest``; ``True`` when that
    cannot be told (outside git, no such file committed, git failing, a list that does not read): then nothing is
    dropped. Raises :class:`InputError` as :func:`committed_list` (a committed list past :data:`KNOWN_BYTES`)."""
    data = committed_list(root)
    if data is None:
        return True
    try:
        models = json.loads(data).get("models", [])
        return any(isinstance(m, dict) and m.get("digest") == digest and record in (m.get("records") or [])
                   for m in models)
    except (ValueError, AttributeError, TypeError, RecursionError):
        return True


def committed_list(root: Path) -> bytes | None:
    """The bytes of the list as committed at ``root``'s HEAD (``src/passprice/pricing_models.json``), read only once
    git has given its size (``git ls-tree -l``) and only when within :data:`KNOWN_BYTES`, as :mod:`passprice.gitread`
    reads every blob (:func:`passprice.gitread.read_blobs`); ``None`` when it cannot be told (outside git, no such
    file committed, git failing). Left52: ``git show`` of it was read whole, however large, before its length was
    looked at. Raises :class:`InputError`, one line naming the commit and the path, for a committed list past
    :data:`KNOWN_BYTES` (not read)."""
    import subprocess

    from passprice.gitread import read_blobs, run_git

    rel = f"src/passprice/{KNOWN.name}"
    try:
        listing = run_git(root, ["ls-tree", "-l", "-z", "HEAD", "--", rel], timeout=10)
    except (subprocess.CalledProcessError, InputError, OSError):
        return None
    fields = listing.split(b"\0", 1)[0].split(b"\t", 1)[0].split()
    if len(fields) != 4 or fields[1] != b"blob" or not fields[3].isdigit():
        return None
    size, blob = int(fields[3]), fields[2].decode("ascii", "replace")
    if size > KNOWN_BYTES:
        raise InputError(
            f"{_head(root) or 'HEAD'}:{rel}: {size:,} bytes as committed, past the {KNOWN_BYTES:,} bytes passprice "
            f"reads of its list of pricing models (modelhistory.KNOWN_BYTES; not read): commit a list within the cap "
            "before locking this checkout")
    try:
        return read_blobs(root, {blob: size}).get(blob)
    except (subprocess.CalledProcessError, InputError, OSError):
        return None


def _head(root: Path) -> str:
    """``root``'s HEAD commit, 12 hex digits, or ``""`` outside git or on any failure. Raises nothing. Run as every
    other git call here is (:func:`passprice.gitread.run_git`: its config guard, settings and environment, 10 s):
    left57, it ran ``git rev-parse`` bare, without the guard: a repository whose config was a FIFO held it its whole
    10 s, where the guard refuses at once."""
    import subprocess

    from passprice.gitread import run_git

    try:
        head = run_git(root, ["rev-parse", "--verify", "-q", "HEAD"], timeout=10).decode("ascii", "replace").strip()
    except (subprocess.CalledProcessError, InputError, OSError):
        return ""
    return head[:12] if len(head) >= 12 else ""
