"""A fact is edited where it stands, and only there: the file keeps every comment, key order and blank line outside
the edited entry byte for byte, and an edit that would leave the file invalid never reaches it.

:func:`set_fact` replaces one fact entry of a card (``facts/cards/NAME.toml``) or a drafting method
(``facts/drafts/NAME.toml``, paths ``acceptance.N``) through ``tomlkit``, which keeps a document's layout as written;
the edited text is validated as the loaders would (schema, then building the card or method) before
:func:`apply_edit` replaces the file atomically. :func:`edit_fact` does both under an exclusive lock on the file
(:func:`locked`), so two edits of one file at once both land, one after the other, and never leave a partial file.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import math
import os
import re
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.cards import CARD_PATHS, HOST_PATHS, TENSOR_PATHS, card_from_document, card_path, is_card_path
from passprice.drafts import draft_path, method_from_document
from passprice.errors import InputError, NotFound, problem_lines
from passprice.facts import Fact
from passprice.files import is_there, open_regular, read_regular, shell_word, shown, target, write_atomically
from passprice.registry import Root, entry_name

if TYPE_CHECKING:
    from passprice.derivations import Finding

def __getattr__(name: str) -> Any:
    """``edit.tomlkit``: the :mod:`tomlkit` module, imported when first asked for. It is imported where an edit keeps
    a file's layout, not with this module: a review's private copy, written without it, imported it for nothing (30
    ms of a warm one-fact diff; speed50). Raises :class:`AttributeError` for any other name."""
    if name == "tomlkit":
        import tomlkit

        return tomlkit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The keys of a fact entry, in the order a new entry is written (``cite``, the free text facts had before they
#: named sources, is never written: an edit removes it).
ENTRY_KEYS = ("value", "unit", "provenance", "source", "locator", "note", "derivation")
_ACCEPTANCE = re.compile(r"^(?:draft\.)?acceptance\.([1-9][0-9]*)$")
_INTEGER = re.compile(r"^[+-]?[0-9]+$")


#: The most bytes a file ``fact set`` (or a recompute) edits may hold: tomlkit, which keeps the file's comments and
#: layout, parses about 8 µs a byte, and the edit parses the file twice (round 18: a 1 MB card file took 5.6 s, a
#: 5 MB one past 20 s). 128 KiB is six times the largest card (a100_pcie_80gb, 21 KB); a file past it is edited by hand.
MAX_EDITED_BYTES = 128 * 1024


def edited_bytes(file: Path) -> bytes:
    """The bytes of the card, drafting-method or stack file ``file`` an edit (or ``calibrate``'s write) reads
    (:func:`passprice.schema.read_bytes`).
    Raises :class:`InputError` naming the file when it holds more than :data:`MAX_EDITED_BYTES`."""
    data = schema.read_bytes(file)
    if len(data) > MAX_EDITED_BYTES:
        raise InputError(
            f"{file}: {len(data):,} bytes, past the {MAX_EDITED_BYTES:,} passprice edits in place (keeping a file's "
            "layout costs about 8 µs a byte): edit it by hand, or make it smaller"
        )
    return data


def parse_value(text: str) -> int | float:
    """The number ``text`` writes: an ``int`` for an integer literal (``141``), else a ``float`` (``4.8``, ``1e12``,
    and also ``nan`` or ``inf``, which validation then refuses). Raises :class:`InputError` for anything else."""
    from passprice.bounds import misspelt

    cleaned = text
    if not cleaned.isascii():  # float() would read Arabic-Indic and other Unicode digits as a number
        raise InputError(f"--value: {text!r} is not a number in ASCII digits")
    problem = misspelt(cleaned)  # round 18: float() read "8_0" as 80 and " 8" as 8
    if problem is not None:
        raise InputError(f"--value: {text!r} {problem}: write the number in digits alone")
    try:
        value = int(cleaned) if _INTEGER.match(cleaned) else float(cleaned)
    except ValueError:
        raise InputError(f"--value: {text!r} is not a number") from None
    if value == 0 and isinstance(value, float) and re.search(r"[1-9]", cleaned.lower().partition("e")[0]):
        # attack round 20: 1e-400 read as 0.0, and the schema's line named a 0.0 nobody wrote
        raise InputError(f"--value: {text!r} is too small for a double (it reads as 0): write the figure in a larger "
                         "unit, or give 0 if 0 is meant")
    if isinstance(value, float) and "n" not in cleaned.lower():  # nan, inf, infinity: written so, validation refuses
        # attack round 21: '4.8000000000000000000001' was written 4.8 with no word, '1e309' named an inf and
        # '2.5e-324' a 5e-324 nobody wrote. Decimal, not Fraction: '1e-99999999' compares without a 10**99999999.
        if math.isinf(value):
            raise InputError(f"--value: {text!r} is too large for a double (it reads as inf): write the figure in a "
                             "larger unit")
        if value != 0 and Decimal(cleaned) != Decimal(repr(value)):
            raise InputError(f"--value: {text!r} holds more than a double keeps (it reads as {value!r}): write "
                             f"{value!r}, or the figure in another unit")
    return value


@attrs.frozen
class FactFile:
    """Where a fact lives: the ``file``, its ``kind`` (``card``, ``draft``, or ``routing`` in the review's private
    copy), its entry ``name`` (the file's stem) and the fact's ``path`` within it (``streams.rewrite``,
    ``acceptance.1``)."""

    file: Path
    kind: str
    name: str
    path: str


def locate(root: Root, name: str, path: str | None, draft: bool = False) -> FactFile:
    """The file holding fact ``path`` of ``name``: a drafting method when ``draft``, when ``path`` is
    ``acceptance.N`` (or ``draft.acceptance.N``), or when only a drafting method has that name (no ``path``, or one
    a drafting method refuses by name); else a card. ``name`` is a registry name or a ``.toml`` path.

    Raises :class:`InputError` for an unknown card or method, or a path no such file has."""
    match = _ACCEPTANCE.match(path) if path is not None else None
    if not draft and match is None and not is_there(root.cards / f"{name}.toml"):
        # a name only a drafting method has: with no path, its facts; with a path not acceptance.N (acceptance.0),
        # the method's own refusal of that path, not "card NAME: not found; NAME is a drafting method"
        draft = is_there(root.drafts / f"{name}.toml")
    if not draft and match is None and not is_there(root.cards / f"{name}.toml"):
        # a routing record or a serving stack: facts too, but edited by hand (newcomer walkthrough, session 11: "not
        # found …; NAME is a registered routing record, not a card" said nothing of what to do)
        for folder, what in ((root.routing, "routing record"), (root.stacks, "serving stack")):
            if is_there(folder / f"{name}.toml"):
                raise InputError(
                    f"{name}: a {what} ({folder / f'{name}.toml'}), not a card: the fact commands edit cards and "
                    f"drafting methods (`passprice fact show {shell_word(name)}` reads its facts, and with --history "
                    "when each changed); edit the record's file by hand (its facts are tables of value, unit, "
                    "provenance, source and locator), then run passprice check"
                    + ("; passprice calibrate --stack rewrites a stack's fitted facts" if what == "serving stack"
                       else "")
                )
    if draft or match is not None:
        file = draft_path(root, name)
        if path is not None and match is None:
            raise InputError(f"{file}: {path}: not a drafting-method fact path (acceptance.1, acceptance.2, …)")
        fact = f"acceptance.{match.group(1)}" if match is not None else ""
        return FactFile(file, "draft", entry_name(file), fact)
    try:
        file = card_path(root, name)
    except NotFound as e:
        from passprice.registry import spelled_apart

        if ": not found in " not in str(e) or spelled_apart(name, root.names(root.cards)) is not None:
            raise  # a slip of case or '-'/'_' is answered with the suggestion alone (walkthrough 117)
        raise NotFound(f"{e}{_new_card_hint(root, name)}") from None
    if path is not None and not is_card_path(path):
        paths = [*CARD_PATHS, *HOST_PATHS, *TENSOR_PATHS]
        raise InputError(f"{file}: {path}: not a card fact path{_meant(path, paths)} (one of {', '.join(paths)})")
    return FactFile(file, "card", entry_name(file), path or "")


def _new_card_hint(root: Root, name: str) -> str:
    """What to do when ``name`` is no card and should be one: the fact commands edit the facts of a card that exists,
    and a card of one's own is a file written by hand (``fact set gaudi3 memory.bandwidth …`` said only "card
    'gaudi3': not found (registered: …)", and neither it nor the README said how a card is added: walkthrough 23).
    Empty for a name that is no plain registry name (a path, a ``.toml`` file) or one no file could be named."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name) or name.endswith(".toml"):
        return ""
    like = next((c for c in ("mi300x", "h200_sxm_141gb") if is_there(root.cards / f"{c}.toml")), None)
    copy = f" (copy a registered card's file, e.g. {shown(root.cards / f'{like}.toml')}, and edit it)" if like else ""
    return (f"; the fact commands edit the facts of a card that exists: a new card is a file of its own, "
            f"{shown(root.cards / f'{name}.toml')}, written by hand{copy}: a [card] table (its name, the title it "
            "is sold under) and a table a fact (value, unit, provenance, source, locator) for each of "
            "memory.capacity, memory.bandwidth, on_chip.capacity, on_chip.bandwidth, streams.read, streams.rewrite, "
            "streams.append, array, vector and scale (schema/card.schema.json); then run passprice check")


def _meant(path: str, paths: list[str]) -> str:
    """``; did you mean P?`` for the card fact paths of ``paths`` closest to ``path`` (a typo, ``memory.bandwith``:
    the card names a command is given are hinted, the fact paths were not, walkthrough 15), else ``""``; a path past
    64 characters is no typo and is not compared."""
    import difflib

    close = difflib.get_close_matches(path, paths, n=2, cutoff=0.75) if len(path) <= 64 else []
    return f"; did you mean {' or '.join(close)}?" if close else ""


def read_facts(where: FactFile, schema_folder: Path | None = None) -> dict[str, Fact]:
    """Every fact of the card or drafting method at ``where.file`` (validated), by path in its file.

    Raises :class:`InputError` or :class:`~passprice.errors.SchemaError` when the file does not read."""
    document = schema.load(where.file, where.kind, schema_folder)
    return _facts(where, document)


def _facts(where: FactFile, document: Mapping[str, Any]) -> dict[str, Fact]:
    source = str(where.file)
    if where.kind == "draft":
        method = method_from_document(where.name, document, source)
        return {f"acceptance.{i}": f for i, f in enumerate(method.acceptance, start=1)}
    if where.kind == "routing":
        # A routing record's facts by their tables (the review's private copy recomputes them: walkthrough 40).
        from passprice.routing import routing_from_document

        record = routing_from_document(where.name, document, source)
        return {"hot_experts": record.hot_experts, "hot_share": record.hot_share}
    return card_from_document(where.name, document, source).facts()


@attrs.frozen
class FactEdit:
    """One fact set: ``where`` it is, the ``old`` fact (``None`` when the entry is new) and the ``new`` one, the
    file's text ``before`` and ``after`` (identical outside the edited entry), and every fact of the record after
    the edit (``facts``)."""

    where: FactFile
    old: Fact | None
    new: Fact
    before: str
    after: str
    facts: Mapping[str, Fact] = attrs.field(factory=dict)

    def stale(self) -> list[Finding]:
        """What the edit leaves not following from its inputs: each fact of the record derived from the edited one
        that is now stale (naming the input that changed), and the edited fact itself when it keeps a derivation its
        new value does not follow from."""
        from passprice.lineage import stale_after

        return stale_after(self.facts, self.where.path)

    @property
    def changed(self) -> bool:
        """True when the file's text changes."""
        return self.before != self.after


def set_fact(
    where: FactFile, entry: Mapping[str, Any], schema_folder: Path | None = None, root: Root | None = None
) -> FactEdit:
    """The edit that makes fact ``where.path`` of ``where.file`` the ``entry`` (``value``, ``unit``,
    ``provenance``, ``source``, ``locator``, and optionally ``note`` and ``derivation``, a table; a key absent or
    ``None`` is removed from the entry, and so is a ``cite`` written before facts named sources): the existing
    table's keys are set in place, so their order, comments and the rest of the file stay as written; a new entry is
    appended as a ``[path]`` table. Nothing is written.

    Raises :class:`InputError` when the file does not read before the edit, or (naming the file and the key path) when
    the edited file would not validate: a non-finite or out-of-range value, a unit of the wrong dimension (``GB`` where
    ``B/s`` belongs), an unknown provenance, a ``derived`` fact without a derivation, a source ``root`` has no record
    of."""
    import tomlkit

    try:
        before = edited_bytes(where.file).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{where.file}: byte {e.start}: not UTF-8 text") from None
    old_facts = read_facts(where, schema_folder)
    return _edit(where, entry, before, tomlkit.parse(before), old_facts, schema_folder, root)


def _edit(
    where: FactFile,
    entry: Mapping[str, Any],
    before: str,
    document: Any,
    old_facts: Mapping[str, Fact],
    schema_folder: Path | None,
    root: Root | None,
) -> FactEdit:
    """:func:`set_fact` on a file's text ``before``, already parsed (``document``, a :mod:`tomlkit` document it
    edits in place) and read (``old_facts``).

    The entry is first placed in the file's plain data (:mod:`tomllib`'s) and held to the schema there: an entry
    the schema refuses never reaches ``document``, whose keys cost time quadratic in their number (tomlkit checks
    and copies the whole table at each dotted key it adds: a ``--derivation`` of 100 inputs, where the schema
    allows 32, took 4.8 s of CPU, one of 2,000 — a 106 KB argument — past 10 minutes). Its problems are then found
    and named as those of any other refused edit, every one at once (:func:`_checked`)."""
    plain = schema.toml_loads(before)
    if _placed_plainly(plain, where.path, entry) and schema.problems(plain, where.kind, schema_folder):
        _checked(where, [(where.path, entry)], before, plain, old_facts, schema_folder, root)
    _place(document, where.path, entry)
    return _checked(where, [(where.path, entry)], before, _dumped(document, before), old_facts, schema_folder, root)[0]


def _place(document: Any, path: str, entry: Mapping[str, Any]) -> None:
    """Make fact ``path`` of the :mod:`tomlkit` ``document`` the ``entry``, in place (:func:`set_fact`)."""
    import tomlkit
    from tomlkit.items import InlineTable, Table

    parts = path.split(".")
    parent: Any = document
    for part in parts[:-1]:
        if part not in parent:
            parent[part] = tomlkit.table(is_super_table=True)
        parent = parent[part]
    leaf = parts[-1]
    values = {k: entry.get(k) for k in ENTRY_KEYS}
    if leaf in parent and isinstance(parent[leaf], Table | InlineTable):
        table = parent[leaf]
        for key in [k for k in table if (k in ENTRY_KEYS and values.get(k) is None) or k == "cite"]:
            del table[key]
        for key in ENTRY_KEYS:
            value = values[key]
            if value is not None and (key not in table or not _same(table[key], value)):
                _set(table, key, value)
    else:
        if leaf in parent:
            del parent[leaf]
        table = tomlkit.table()
        for key in ENTRY_KEYS:
            if values[key] is not None:
                _set(table, key, values[key])
        parent[leaf] = table


def _placed_plainly(document: dict[str, Any], path: str, entry: Mapping[str, Any]) -> bool:
    """Make fact ``path`` of the plain ``document`` (a file's :mod:`tomllib` data) the ``entry``, in place, as
    :func:`_place` makes it in a :mod:`tomlkit` document (the schema sees the same data either way). False, with
    ``document`` perhaps half changed, when a table on the way is not a table (:func:`_place`'s own path decides)."""
    parent: Any = document
    for part in path.split(".")[:-1]:
        parent = parent.setdefault(part, {})
        if not isinstance(parent, dict):
            return False
    leaf = path.split(".")[-1]
    table = parent.get(leaf)
    if not isinstance(table, dict):
        table = parent[leaf] = {}
    for key in [k for k in table if k in ENTRY_KEYS or k == "cite"]:
        del table[key]
    table.update((k, entry[k]) for k in ENTRY_KEYS if entry.get(k) is not None)
    return True


def _dumped(document: Any, before: str) -> str:
    """The text of the edited ``document`` of a file whose text was ``before``, in its line endings."""
    import tomlkit

    return in_line_endings(tomlkit.dumps(document), before)


def in_line_endings(after: str, before: str) -> str:
    """``after`` (a file's text as tomlkit writes it) in the line endings of ``before`` (the file's text as read,
    bytes decoded, no newline translation): every line ended by CRLF when every line of ``before`` was, else as
    given (the keys tomlkit adds end in LF alone, so a CRLF file edited would mix the two)."""
    if "\r\n" in before and "\n" not in before.replace("\r\n", ""):
        return after.replace("\r\n", "\n").replace("\n", "\r\n")
    return after


#: What a ``derived`` fact set without a derivation is told to give (the schema says only that it is missing): the
#: option, with an example a user can edit (``passprice fact set --help`` has the same).
DERIVATION_HINT = (
    ": a derived fact says how it is computed: give --derivation TABLE, e.g. for streams.read: "
    "'{formula = \"dot / bandwidth\", digits = 4, inputs = {dot = {value = 4.48, unit = \"TB/s\", locator = "
    "\"...\"}, bandwidth = {fact = \"memory.bandwidth\"}}}' (passprice explain derivation), or another --provenance"
)


def derivation_hint(line: str) -> str:
    """:data:`DERIVATION_HINT` for the fact the schema's ``line`` (``FILE: KEY.derivation: missing …``) names: its
    streams share example for a ``streams.*`` key, named for that key, else a generic example for it (``fact set
    vector --provenance derived`` was given the example "for streams.read", tests/test_fix190.py). Raises
    nothing."""
    import re

    found = re.search(r": ([^:\s]+)\.derivation: ", line)
    key = found.group(1) if found else None
    if key is None:
        return DERIVATION_HINT
    if key.startswith("streams."):
        return DERIVATION_HINT.replace("for streams.read:", f"for {key}:", 1)
    return (f": a derived fact says how it is computed: give --derivation TABLE, e.g. for {key}: '{{formula = \"a * "
            "b\", inputs = {a = {value = 2, unit = \"1\", locator = \"...\"}, b = {fact = \"OTHER.KEY\"}}}' (its "
            "inputs' units giving the fact's; passprice explain derivation), or another --provenance")


def _checked(
    where: FactFile,
    entries: list[tuple[str, Mapping[str, Any]]],
    before: str,
    after: str | Mapping[str, Any],
    old_facts: Mapping[str, Fact],
    schema_folder: Path | None,
    root: Root | None,
) -> list[FactEdit]:
    """The edits setting each fact (path, entry) of ``entries`` that make the file's text ``before`` the text
    ``after``, once every problem of it is found: the schema's, the sources the entries name, their derivations'.
    ``after`` may be the edited file's plain data instead of its text when the schema refuses it (nothing is then
    returned). Raises :class:`InputError` with every problem at once, one line each."""
    problems: list[str] = []
    new_facts: dict[str, Fact] | None = None
    try:
        new_facts = validate_text(where, after, schema_folder)
    except InputError as e:
        # the schema's own reason (schema.DERIVED_NEEDS) replaced by the option that gives a derivation here
        needs = schema.DERIVED_NEEDS
        problems += [line.removesuffix(needs) + derivation_hint(line) if line.endswith(needs) else line
                     for line in problem_lines(e)]
    for path, entry in entries:
        one = attrs.evolve(where, path=path)
        if root is not None:
            from passprice.sources import SOURCE_ID, invalid_ids, missing_ids

            # An id that is no source id is the schema's to say (a card's and a drafting method's refuse it), once.
            named = [(key, i) for key, i in entry_sources(path, entry) if SOURCE_ID.fullmatch(i)]
            problems += missing_ids(root, named, str(where.file)) + invalid_ids(root, named, str(where.file))
        problems += derivation_problems(one, entry, new_facts if new_facts is not None else old_facts)
    if problems:
        raise InputError.of(dict.fromkeys(problems))
    assert new_facts is not None and isinstance(after, str)
    return [
        FactEdit(attrs.evolve(where, path=path), old_facts.get(path), new_facts[path], before, after, new_facts)
        for path, _ in entries
    ]


def entry_sources(path: str, entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every source id a fact ``entry`` (a table as given, not yet validated) names, with the key naming it: its
    ``source`` and each derivation input's (``streams.read.derivation.inputs.dot.source``). What is not a string
    where an id belongs is left to the schema to report."""
    out = []
    if isinstance(entry.get("source"), str):
        out.append((f"{path}.source", entry["source"]))
    derivation = entry.get("derivation")
    inputs = derivation.get("inputs") if isinstance(derivation, Mapping) else None
    if isinstance(inputs, Mapping):
        for name, spec in inputs.items():
            if isinstance(spec, Mapping) and isinstance(spec.get("source"), str):
                out.append((f"{path}.derivation.inputs.{schema.key_part(name)}.source", spec["source"]))
    return out


@attrs.frozen
class _Probe:
    """The edited fact as the derivation check reads it (``amount``, ``unit``, ``value``, ``derivation``), built
    from the entry as given, so the derivation is checked even when another key of the entry fails the schema."""

    amount: int | float
    unit: str
    derivation: Any

    def describe(self) -> str:
        from passprice.facts import shown_unit

        return f"{self.amount:g}" + ("" if self.unit == "1" else f" {shown_unit(self.unit, self.amount)}")


def derivation_problems(where: FactFile, entry: Mapping[str, Any], facts: Mapping[str, Fact]) -> list[str]:
    """What recomputing the derivation of the edited fact finds (:func:`passprice.derivations.recheck`), one line
    naming the file and the key: a formula that does not evaluate (syntax, a name no input has, a number out of
    range), a result in another dimension than the fact's unit, a value that does not follow from the inputs, a fact
    input whose recorded value is not the fact's today, a fact input that names this fact or one derived from it (a
    cycle). Empty when the entry has no derivation, or one the schema must first accept (its problems are the
    schema's to name)."""
    from passprice.derivations import Derivation, Unit, cycle_through, recheck

    table = entry.get("derivation")
    if table is None:
        return []
    try:
        derivation = Derivation.from_entry(table)
        if not isinstance(derivation.formula, str) or not all(
            isinstance(i.amount, int | float) and not isinstance(i.amount, bool) and isinstance(i.unit, str)
            for i in derivation.inputs
        ):
            return []
        amount, unit = entry["value"], entry["unit"]
        if not isinstance(amount, int | float) or isinstance(amount, bool) or not isinstance(unit, str):
            return []
        Unit.parse(unit)
    except (KeyError, TypeError, AttributeError, ValueError, InputError):
        return []
    probe = _Probe(amount, unit, derivation)
    record = {**facts, where.path: probe}
    out = []
    found = recheck(where.path, probe, record)
    if found is not None:
        out.append(f"{where.file}: {found.message}")
    cycle = cycle_through(record, where.path)
    if cycle:
        out.append(f"{where.file}: {where.path}.derivation: a cycle of derivations: {' -> '.join(cycle)}")
    return out


def _set(table: Any, key: str, value: Any) -> None:
    """Set ``key`` of a fact's ``table`` to ``value``; a derivation is written as the registry writes it, dotted keys
    in the fact's own table (``derivation.formula = …``, one inline table an input: ``derivation.inputs.dot = {…}``),
    replacing the one there."""
    import tomlkit
    from tomlkit.items import InlineTable

    if key != "derivation" or not isinstance(value, Mapping) or isinstance(table, InlineTable):
        table[key] = value
        return
    if key in table and _update_derivation(table[key], value):
        return
    if key in table:
        del table[key]
    for k, v in value.items():
        if k == "inputs" and isinstance(v, Mapping):
            for name, spec in v.items():
                inline = tomlkit.inline_table()
                inline.update(spec)
                table.add(tomlkit.key(["derivation", "inputs", str(name)]), inline)
        else:
            table.add(tomlkit.key(["derivation", k]), v)


def _update_derivation(current: Any, value: Mapping[str, Any]) -> bool:
    """Update the derivation written in ``current`` to ``value`` in place, item by item: each figure that changed
    is set where it is written (an input's inline table keeps its keys' order and spacing), so a recomputed value
    or a moved input changes only those characters (a review's diff shows the figures that moved). False, with
    nothing changed, when ``current`` is not the registry's dotted layout or the keys, inputs or input keys differ
    (the caller then writes the derivation anew)."""
    from tomlkit.items import InlineTable

    inputs = value.get("inputs")
    written = current.get("inputs") if hasattr(current, "get") else None
    if not isinstance(inputs, Mapping) or written is None or isinstance(current, InlineTable):
        return False
    # Only figures move in place: the same keys, inputs and input keys (tomlkit's view of dotted keys spread over a
    # table does not take a key removed or added reliably; such an edit is written anew).
    if set(current) != set(value) or set(written) != set(inputs):
        return False
    if not all(isinstance(written[n], InlineTable) and isinstance(inputs[n], Mapping) and set(written[n]) == set(
            inputs[n]) for n in written):
        return False
    for k, v in value.items():
        if k != "inputs" and not _same(current[k], v):
            current[k] = v
    for name, spec in inputs.items():
        item = written[name]
        for k, v in spec.items():
            if not _same(item[k], v):
                item[k] = v
    return True


def parse_derivation(text: str, facts: Mapping[str, Fact]) -> dict[str, Any]:
    """The derivation a command line gives as a TOML inline table, ``{formula = "dot / bandwidth", digits = 4,
    inputs = {dot = {value = 4.48, unit = "TB/s", locator = "…"}, bandwidth = {fact = "memory.bandwidth"}}}``; a
    fact input without a value and unit takes them from the record's fact as it is now (``facts``). Raises
    :class:`InputError` for text that is not an inline table or a fact input naming no fact."""
    write = "write {formula = \"…\", inputs = {…}}"
    try:
        table = schema.toml_loads(f"derivation = {text}")["derivation"]
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"--derivation: not a TOML inline table ({e}): {write}") from None
    except RecursionError:
        raise InputError(f"--derivation: not a TOML inline table: nested too deeply; {write}") from None
    except ValueError as e:  # an integer past Python's 4,300 digits (less its advice to raise the limit)
        raise InputError(f"--derivation: not a TOML inline table: {str(e).split(';')[0]}") from None
    if not isinstance(table, dict):
        raise InputError(f"--derivation: not a TOML inline table: {write}")
    inputs = table.get("inputs")
    if not isinstance(inputs, dict):
        return table  # the schema names what is wrong with it
    for name, spec in inputs.items():
        if isinstance(spec, dict) and isinstance(spec.get("fact"), str) and "value" not in spec and "unit" not in spec:
            fact = facts.get(spec["fact"])
            if fact is None:
                shown = schema.shown_value(spec["fact"])
                key = f"inputs.{schema.key_part(name)}.fact"
                raise InputError(f"--derivation: {key}: {shown} is not a fact of this record")
            inputs[name] = {"fact": spec["fact"], "value": fact.amount, "unit": fact.unit}
    return table


def _same(item: Any, value: Any) -> bool:
    """Whether the written ``item`` already holds ``value`` (same number and same kind of number, or same string),
    so setting it again would only risk re-rendering it."""
    current = item.unwrap() if hasattr(item, "unwrap") else item
    wanted = value.unwrap() if hasattr(value, "unwrap") else value
    return bool(current == wanted) and type(current) is type(wanted)


def validate_text(
    where: FactFile, text: str | Mapping[str, Any], schema_folder: Path | None = None
) -> dict[str, Fact]:
    """The facts ``text`` describes (or the data parsed from it), read as the file at ``where.file`` would be: TOML,
    then the schema, then the card or drafting method built from it. Raises :class:`InputError` naming the file
    (every schema problem at once)."""
    try:
        document = schema.toml_loads(text) if isinstance(text, str) else text
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{where.file}: the edit would not be valid TOML: {e}") from None
    schema.validate(document, where.kind, str(where.file), schema_folder)
    return _facts(where, document)


def apply_edit(edit: FactEdit) -> None:
    """Replace the file with ``edit.after`` atomically (a temporary file in its folder, then a rename), keeping its
    permission bits. Raises :class:`InputError` when the file changed since the edit was made, or cannot be
    written."""
    file = edit.where.file
    try:
        now = read_regular(file, schema.MAX_TOML_BYTES).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{file}: cannot read: {e}") from None
    if now != edit.before:
        raise InputError(f"{file}: changed while it was being edited; nothing written, run the edit again")
    if not edit.changed:
        return
    # write_atomically keeps the permission bits of the file it replaces.
    write_atomically(file, edit.after, force=True)


#: Seconds :func:`locked` waits for another edit of the same file (one takes well under a second) before it refuses.
LOCK_WAIT_S = 10.0
#: Seconds :func:`locked` waits in all, however many edits land meanwhile (each starts its per-file wait afresh):
#: six per-file waits, so a file replaced forever by editors that each take the new file before letting the old go
#: (the waiter never gets a turn) is refused rather than waited for without end (attack round 41).
LOCK_TOTAL_S = 60.0
#: ``errno`` values of ``flock`` on a file system without locks: the edit then goes ahead unlocked.
_NO_LOCKS = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})


def _replaced(descriptor: int, path: Path) -> bool:
    """Whether the file at ``path`` is no longer the file open at ``descriptor``: an edit renamed another into place,
    or ``path`` no longer leads to a file (removed, a loop of links): the caller then opens ``path`` again, and
    :func:`passprice.files.open_regular` names what is there now."""
    try:
        held = os.fstat(descriptor)
    except OSError:
        return False
    try:
        now = os.stat(path)
    except OSError:
        return True
    return (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino)


@contextlib.contextmanager
def locked(file: Path, wait_s: float = LOCK_WAIT_S, total_s: float = LOCK_TOTAL_S) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``file`` (the file a link at ``file`` points to) for a read-modify-write.

    The lock is taken on the file itself, so no lock file is left beside it: once locked, the descriptor is checked
    to still be the file at that path (an edit that finished meanwhile replaced it by a rename, so the lock is on a
    file nobody reads any more), and taken again on the new file if not. Another process waiting on the same file
    gets it when this one's edit is renamed into place, and then reads the edited file.

    On a file system without locks (``flock`` fails with ``ENOLCK``, ``EOPNOTSUPP`` …) and where ``fcntl`` does not
    exist, the edit goes ahead unlocked: :func:`apply_edit` still refuses to replace a file that changed since it
    was read, which catches a concurrent edit unless both compare in the same instant before either renames.

    The wait is bounded by ``wait_s`` seconds on one file: each time another edit lands (the file at the path is
    replaced by its rename) the wait starts afresh on the new file, so a busy file (two editors of twelve edits each,
    under load, starved one past a single 10 s wait) is waited for, and only one edit holding the same file for
    ``wait_s`` is refused. The whole wait is bounded too, by ``total_s`` seconds: edits that keep landing without
    end (each editor taking the new file before letting the old go) are refused, not waited for forever.

    Raises :class:`InputError` when ``file`` cannot be opened (:func:`passprice.files.open_regular`), another
    edit holds it for longer than ``wait_s`` seconds (a hung editor), or edits kept landing on it for ``total_s``
    seconds: nothing waits without end."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    end = target(file)
    overall = time.monotonic() + total_s

    def endless() -> InputError:
        return InputError(
            f"{file}: other edits kept landing on it for {total_s:g} s; nothing written, run the edit again"
        )

    while True:
        if time.monotonic() > overall:
            raise endless()
        handle = open_regular(end)
        deadline = time.monotonic() + wait_s  # each file the path leads to: an edit landing on it is progress
        try:
            progressed = False
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > overall:
                        raise endless() from None
                    if time.monotonic() > deadline:
                        if _replaced(handle.fileno(), end):
                            progressed = True  # another edit landed meanwhile: a busy file, not a hung editor
                            break
                        raise InputError(
                            f"{file}: another edit has held it for {wait_s:g} s; nothing written, run the edit again"
                        ) from None
                    time.sleep(0.005)
                except OSError as e:
                    if e.errno not in _NO_LOCKS:
                        raise InputError(f"{file}: cannot lock: {e.strerror or e}") from None
                    yield  # a file system without locks
                    return
            if progressed or _replaced(handle.fileno(), end):
                continue  # opened again: a removed file is then refused by its own line, not as one held
            yield
            return
        finally:
            handle.close()  # releases the lock


@contextlib.contextmanager
def replacing(file: Path, replace: bool = True) -> Iterator[None]:
    """Hold :func:`locked` on ``file`` while a command reads what it holds and writes it again, when ``replace`` and
    ``file`` is a regular file now; else hold nothing (a new file, or one the writer refuses by its own line).

    A command that rewrites a file from what the file says — ``lock --update`` (the lock's policy, kind and serving,
    ``--force --require`` changing one floor) and ``new-serving NAME NAME --force`` (the serving with options
    applied) — is a read-modify-write as ``fact set`` is: two at once (attack round 45: two ``lock --update --force
    --require`` of one lock, each loosening another floor, lost one floor in 6 of 6 runs, both exiting 0; two
    ``new-serving`` of one serving, one ``--batch 7``, one ``--kv-bytes 1``, lost one in 3 of 4) each read the old
    file and the second rename replaced the first's edit. Under the lock the second waits and reads the first's file.

    Raises :class:`InputError` as :func:`locked` does (held past its wait); a name that cannot be looked up
    (too long, a loop of links) holds nothing here and is refused by the command's own checks."""
    import stat

    from passprice.files import look

    try:
        found = look(file)
    except InputError:
        found = None
    if not replace or found is None or not stat.S_ISREG(found.st_mode):
        yield
        return
    with locked(file, LOCK_WAIT_S, LOCK_TOTAL_S):  # read at the call: a test shortens the wait
        yield


def edit_fact(
    where: FactFile, entry: Mapping[str, Any], schema_folder: Path | None = None, root: Root | None = None
) -> FactEdit:
    """:func:`set_fact` then :func:`apply_edit` under :func:`locked`: the file is read, edited, validated and
    replaced while no other ``fact set`` can, so concurrent edits of one file (different facts) all land. The
    edit made. Raises :class:`InputError` as those do."""
    with locked(where.file):
        edit = set_fact(where, entry, schema_folder, root)
        _require_no_slip(edit, schema_folder)
        apply_edit(edit)
    return edit


#: How far an edit may move a figure (a factor either way) before a derived fact it leaves out of its schema's range
#: is taken for a unit slipped (GB/s for TB/s is a factor of 1,000) and refused, not warned of.
SLIP_FACTOR = 100.0


def out_of_range(edit: FactEdit, schema_folder: Path | None = None) -> list[str]:
    """The facts derived from the edited one whose value, recomputed from the edited record (as ``fact recompute``
    would), is one their schema refuses: one line each, naming the derived fact, its recomputed value and the
    schema's rule (``memory.bandwidth`` lowered to 3 TB/s makes ``streams.read``, a share at most 1, recompute to
    1.493). Nothing is written. Raises nothing: a derivation that cannot be evaluated is left to the stale
    warnings.

    The recomputed entries are placed in the edited file's plain data (:func:`_placed_plainly`), which the schema
    sees as it would see the text, all of them at once, and the schema's problems are told apart by the key path
    each names; an entry is checked alone only when a problem names none of them, the record does not build, or
    the schema found nothing in that entry among the others' problems (the record is then built with it). A
    :mod:`tomlkit` parse and a schema check for each derived fact took 0.9 s of CPU each for a card of 115,000
    blank lines (127 KB, within :data:`MAX_EDITED_BYTES`: 3.5 s for ``memory.bandwidth``, from which three facts
    derive), and 2.5 s for a drafting method of 64 acceptances each derived from ``acceptance.1`` (31 KB) set so
    that all fall below 0."""
    recomputed: list[tuple[Finding, dict[str, Any]]] = []
    for found in edit.stale():
        if found.path == edit.where.path or found.kind != "stale" or found.expected is None:
            continue
        try:
            entry = _recomputed(attrs.evolve(edit.where, path=found.path), edit.facts, strict=False)
        except InputError:
            continue
        if entry is not None:
            recomputed.append((found, entry))
    if not recomputed:
        return []
    plain = schema.toml_loads(edit.after)
    together = copy.deepcopy(plain)
    by_path: dict[str, list[str]] | None = None
    found_problems: list[str] = []
    if all(_placed_plainly(together, found.path, entry) for found, entry in recomputed):
        found_problems = schema.problems(together, edit.where.kind, schema_folder)
        by_path = {found.path: [] for found, _ in recomputed}
        for problem in found_problems:
            owner = next((p for p in by_path if problem.startswith((f"{p}.", f"{p}:"))), None)
            if owner is None:
                by_path = None  # a problem of no one entry: each is checked alone
                break
            by_path[owner].append(problem)
        if by_path is not None and not found_problems:
            try:
                _facts(edit.where, together)
            except InputError:
                by_path = None
    lines: list[str] = []
    for found, entry in recomputed:
        if by_path is not None and (by_path[found.path] or not found_problems):
            rules_found = by_path[found.path]
        else:  # checked alone: the schema took it among the others' problems, but the record may not build
            document = copy.deepcopy(plain)
            if not _placed_plainly(document, found.path, entry):
                continue
            try:
                validate_text(attrs.evolve(edit.where, path=found.path), document, schema_folder)
                rules_found = []
            except InputError as e:
                rules_found = [line.removeprefix(f"{edit.where.file}: ") for line in problem_lines(e)]
        if rules_found:
            lines.append(f"{edit.where.path}: {edit.new.describe()} would make {found.path}, derived from it, "
                         f"{found.expected} when recomputed, which its schema refuses ({'; '.join(rules_found)})")
    return lines


def cautions(edit: FactEdit, schema_folder: Path | None = None) -> list[str]:
    """What ``fact set`` says on stderr of an edit it wrote, beside the stale derived facts (:meth:`FactEdit.stale`):
    a figure moved by more than :data:`SLIP_FACTOR` either way (a unit slipped upward, ``3350 TB/s`` for ``3350
    GB/s``, left the derived shares tiny but valid, and was written without a word on it: walkthrough 13); a note
    or derivation the old entry had and the new one lacks (``fact set`` writes the entry given, and the note went
    unsaid until ``diff`` showed "note removed"); each derived fact :func:`out_of_range` finds. One line each,
    without the file. Raises nothing."""
    lines: list[str] = []
    old, new = edit.old, edit.new
    if old is not None and old.value and new.value:
        ratio = abs(new.value / old.value)
        if not 1 / SLIP_FACTOR <= ratio <= SLIP_FACTOR:
            lines.append(f"{edit.where.path}: {new.describe()} is {ratio:.4g} × the figure it replaces "
                         f"({old.describe()}): check the value and its unit")
    if old is not None and old.note and not new.note:
        lines.append(f"{edit.where.path}: its note was removed (fact set writes the entry as given: --note keeps one)")
    if old is not None and old.derivation is not None and new.derivation is None:
        lines.append(f"{edit.where.path}: its derivation was removed (fact set writes the entry as given: "
                     "--derivation keeps one)")
    if edit.stale():
        lines += [f"{line}: the card's figures disagree" for line in out_of_range(edit, schema_folder)]
    return lines


def _require_no_slip(edit: FactEdit, schema_folder: Path | None) -> None:
    """Refuse an edit that moves a figure by more than :data:`SLIP_FACTOR` either way and leaves a fact derived from
    it out of its schema's range (:func:`out_of_range`): a unit slipped. A newcomer's ``memory.bandwidth`` of 4.8 GB/s
    for 4.8 TB/s made ``streams.read`` recompute to 933.3, was written with the ordinary stale warning, and
    ``price`` then said 1 tokens/s with "floors hold". A smaller move that does the same (a what-if lowering the
    bandwidth below what the card was measured reading) is written, and ``fact set`` warns of it. Nothing is
    written. Raises :class:`InputError` naming the file, the edited fact, the derived fact and the schema's rule."""
    old, new = edit.old, edit.new
    if old is None or not old.value or not new.value:
        return
    ratio = abs(new.value / old.value)
    if 1 / SLIP_FACTOR <= ratio <= SLIP_FACTOR:
        return
    lines = out_of_range(edit, schema_folder)
    if lines:
        raise InputError(f"{edit.where.file}: {lines[0]}; nothing written: {ratio:.4g} × the figure it replaces — "
                         "check the value and its unit")


def recompute_fact(where: FactFile, schema_folder: Path | None = None, root: Root | None = None) -> FactEdit | None:
    """Recompute derived fact ``where.path`` from today's facts of its record and write it in place: its value
    becomes what its formula gives (in its unit, to its digits: :func:`passprice.derivations.recheck`'s
    ``expected``) and each fact input records today's value and unit; provenance, source, locator, note and the
    other inputs are kept. ``None`` when the fact follows from its inputs already (nothing written). Read, edited
    and replaced under :func:`locked`, as ``fact set`` is.

    Raises :class:`InputError` for a fact that is not there or has no derivation, and for a derivation that cannot
    be evaluated (``broken``: the line ``check`` gives), and as :func:`set_fact` does."""
    with locked(where.file):
        facts = read_facts(where, schema_folder)
        entry = _recomputed(where, facts, strict=True)
        if entry is None:
            return None
        edit = set_fact(where, entry, schema_folder, root)
        apply_edit(edit)
    return edit


def _recomputed(where: FactFile, facts: Mapping[str, Fact], strict: bool) -> dict[str, Any] | None:
    """The entry :func:`recompute_fact` writes for fact ``where.path`` of the record ``facts``, or ``None`` when it
    follows from its inputs (or, not ``strict``, is not there or has no derivation)."""
    from passprice.derivations import Derivation, recheck

    fact = facts.get(where.path)
    if fact is None:
        if not strict:
            return None
        raise InputError(f"{where.file}: {where.path}: no such fact to recompute")
    if not isinstance(fact.derivation, Derivation):
        if not strict:
            return None
        raise InputError(f"{where.file}: {where.path}: has no derivation to recompute it from")
    finding = recheck(where.path, fact, facts)
    if finding is None:
        return None
    if finding.kind == "broken" or finding.expected is None:
        raise InputError(f"{where.file}: {finding.message}")
    entry = fact.to_entry()
    inputs = entry["derivation"]["inputs"]
    for item in inputs.values():
        today = facts.get(item.get("fact", ""))
        if today is not None:
            item["value"], item["unit"] = today.amount, today.unit
    entry["value"] = parse_value(finding.expected)
    if fact.derivation.digits is None:  # exactly the result: finding.expected is rounded to 10 digits for people
        entry["value"] = _exact_value(where, fact, Derivation.from_entry(entry["derivation"]))
    return entry


#: The most significant digits :func:`_exact_value` writes: a double holds 15 decimal digits exactly, so a value
#: of at most 15 reads back as the same decimal (passprice reads a written float by its shortest repr).
EXACT_DIGITS = 15


def _exact_value(where: FactFile, fact: Fact, derivation: Any) -> int | float:
    """The value a derivation without ``digits`` gives from ``derivation``'s inputs (today's), written exactly in the
    fact's unit: an ``int`` or a ``float`` whose shortest decimal is the result. Raises :class:`InputError` naming
    the file and fact when no decimal of at most :data:`EXACT_DIGITS` significant digits is the result (``4 / 4.9``
    repeats): the derivation then needs ``digits`` to say how it is rounded."""
    from decimal import Decimal, localcontext

    from passprice.derivations import Unit, decimal_text

    exact = derivation.result().value / Unit.parse(fact.unit).multiplier
    rest = exact.denominator
    for factor in (2, 5):
        while rest % factor == 0:
            rest //= factor
    if rest == 1:  # a terminating decimal: written exactly when short enough
        with localcontext() as context:
            context.prec = 400
            text = format(Decimal(exact.numerator) / Decimal(exact.denominator), "f")
        digits = text.replace("-", "").replace(".", "").strip("0")
        if len(digits) <= EXACT_DIGITS:
            return parse_value(text.rstrip("0").rstrip(".") if "." in text else text)
    raise InputError(
        f"{where.file}: {where.path}: {derivation.formula} gives {decimal_text(exact, None)}… from today's inputs, "
        f"which no decimal of at most {EXACT_DIGITS} digits writes exactly, and its derivation has no digits: add "
        f"{where.path}.derivation.digits (the significant digits it is rounded to), then recompute"
    )


def _recomputed_text(before: str, entries: Sequence[tuple[str, Mapping[str, Any]]], keep_layout: bool) -> str:
    """The text of ``before`` with each (path, entry) of ``entries`` placed in turn: by :mod:`tomlkit`, the file's
    comments and layout kept (:func:`_place`); with ``keep_layout`` false, the plain data (:func:`_placed_plainly`)
    written by :func:`passprice.plaintoml.dumps`, tomlkit where that cannot be done exactly (imported only then: a
    review's private copy imported it, 30 ms, for nothing; speed50)."""
    if not keep_layout:
        from passprice import plaintoml

        try:
            plain = schema.toml_loads(before)
        except (tomllib.TOMLDecodeError, ValueError, RecursionError):
            plain = None
        if plain is not None and all(_placed_plainly(plain, path, entry) for path, entry in entries):
            text = plaintoml.dumps(plain)
            if text is not None:
                return text
    import tomlkit

    document = tomlkit.parse(before)
    for path, entry in entries:
        _place(document, path, entry)
    return _dumped(document, before)


def provenance_kept(edits: Sequence[FactEdit]) -> str | None:
    """What ``fact recompute`` says of the provenance of the facts it recomputed (``edits``) that are not
    ``derived`` (a measured share, a published figure written as a formula over its source's): each keeps its
    provenance, one clause a provenance, with why: a recompute moves the value its formula gives from today's inputs,
    not what the fact rests on, which is still the figure it cites (session 32's decision: writing ``derived`` broke
    the README's recompute example, and a lock floored at ``measured`` refused the recomputed share). ``None`` when
    every one is ``derived`` (or none was recomputed). Past 8 facts of one provenance, the first 8 are named and the
    rest counted. Raises nothing."""
    kept: dict[str, list[str]] = {}
    for e in edits:
        if e.new.provenance.value != "derived":
            kept.setdefault(e.new.provenance.value, []).append(e.where.path)
    if not kept:
        return None

    def named(paths: list[str]) -> str:  # a chain of 63 acceptances is named by its first 8 and counted
        return ", ".join(paths[:8]) + (f" and {len(paths) - 8:,} more" if len(paths) > 8 else "")

    stays = "; ".join(f"{named(paths)} {'stays' if len(paths) == 1 else 'stay'} {provenance}"
                      for provenance, paths in kept.items())
    return (f"provenance kept: {stays} (a recompute moves the value its formula gives from today's inputs, not what "
            "the fact rests on: still the figure it cites, as its provenance says; `passprice fact set` changes the "
            "provenance by hand)")


def recompute_record(
    where: FactFile, schema_folder: Path | None = None, root: Root | None = None, keep_layout: bool = True
) -> list[FactEdit]:
    """:func:`recompute_fact` for every derived fact of the record at ``where.file`` that does not follow from its
    inputs (stale or a mismatch), inputs first (a share derived from a rate derived in turn is recomputed after
    it): the edits made, in order. The file is read, parsed and validated once, each fact recomputed from the ones
    recomputed before it, the whole edit checked once and written once, under :func:`locked` (64 chained
    acceptances of a drafting method took 14 s when each was a ``fact set`` of its own, re-reading, re-parsing and
    re-validating the file). ``keep_layout`` false (a private copy only passprice reads:
    :func:`passprice.review.impacts.recomputed_prices`): the file's comments and layout are not kept, and tomlkit does
    not parse it (:func:`_recomputed_text`). Raises :class:`InputError` at the first derivation that cannot be
    evaluated, and with every problem of the edit (a recomputed value out of the schema's range), nothing written."""
    from passprice.derivations import Derivation, recheck

    done: set[str] = set()
    entries: list[tuple[str, Mapping[str, Any]]] = []
    with locked(where.file):
        try:
            before = edited_bytes(where.file).decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"{where.file}: byte {e.start}: not UTF-8 text") from None
        old_facts = validate_text(where, before, schema_folder)
        facts: dict[str, Fact] = dict(old_facts)
        while True:
            due = {
                p: f for p, f in facts.items()
                if p not in done and isinstance(f.derivation, Derivation) and recheck(p, f, facts) is not None
            }
            if not due:
                break
            # One whose fact inputs are not themselves due (a cycle, which check refuses, takes them in path order).
            ready = [
                p for p, f in sorted(due.items()) if not set(f.derivation.facts()) & set(due)  # type: ignore[union-attr]
            ]
            path = (ready or sorted(due))[0]
            done.add(path)
            entry = _recomputed(attrs.evolve(where, path=path), facts, strict=False)
            if entry is None:
                continue
            # The next recheck reads this fact as recomputed; the schema checks every entry once, at the end.
            facts[path] = Fact.from_entry(entry, f"{where.file}: {path}")
            entries.append((path, entry))
        if not entries:
            return []
        after = _recomputed_text(before, entries, keep_layout)
        edits = _checked(where, entries, before, after, old_facts, schema_folder, root)
        apply_edit(edits[-1])
    return edits
