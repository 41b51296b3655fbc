"""Nothing is built from a file before it matches its JSON Schema, and a file that does not is reported whole: every
mismatch at once, each with the file and the TOML key path.

Schemas are JSON Schema draft 2020-12 files in ``schema/`` (``card``, ``draft``, ``checkpoint``, ``serving``,
``lock``, ``sweep``), checked with ``jsonschema`` and its ``format`` checker. A number must be finite: TOML's
``nan`` and ``inf`` are refused as numbers.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passprice.digests import blake2b_digest
from passprice.errors import InputError, NotFound, Refusals, SchemaError, problem_lines
from passprice.files import read_regular, refuse_bom
from passprice.registry import schema_dir

if TYPE_CHECKING:
    import datetime
    import signal
else:
    try:
        # The C module behind :mod:`signal` (its constants and ``pthread_sigmask``): :mod:`signal` itself makes three
        # enumerations of every signal, handler and mask action when imported, which no command needs from here (a
        # price imported it for this module alone: 1.9 M of its instructions; issue 16, afresh101).
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without it
        import signal

#: The names a checkpoint entry writes a NaN or an infinity by (JSON and the schemas have no such number).
NONFINITE = ("nan", "inf", "-inf")

#: The largest finite float32 (the bound the checkpoint schema gives a float32 value).
FLOAT32_MAX = 3.4028234663852886e38

#: The pattern a schema gives a one-line text (a locator, a note, a formula, a cite): no control character (a
#: newline, a tab, BEL, DEL, C1), no line or paragraph separator (U+2028, U+2029) and no bidi control (the marks
#: U+061C, U+200E, U+200F; U+202A–U+202E, U+2066–U+2069), each of which breaks or reorders a line in `fact show`,
#: a terminal or the PR comment, and no invisible character (U+200B zero width space, U+2060–U+2064, U+FEFF), which
#: makes two texts that read alike differ, so a citation copied from the screen finds nothing (attack round 20). The
#: invisible ones are the Basic Multilingual Plane's default-ignorable code points but the joiners U+200C and U+200D
#: (which Persian, Indic scripts and emoji need) and the variation selectors U+FE00–U+FE0F (which change how a
#: character looks), plus the Specials U+FFF0–U+FFFB (U+FFF0–U+FFF8 unassigned and default-ignorable, left92; the
#: interlinear annotation marks U+FFF9–U+FFFB, which hide the text between them): attack80 found a locator holding
#: a soft hyphen (U+00AD) written by ``fact set`` and shown raw (the other additions: U+034F, U+115F, U+1160, U+17B4,
#: U+17B5, U+180B–U+180F, U+2065–U+206F, U+3164, U+FFA0). Characters past U+FFFF (the tags U+E0000–U+E007F) are not
#: named here: an ECMA-262 character class without the ``u`` flag cannot hold a range of them; the format
#: :data:`ONE_LINE_FORMAT` each schema states beside this pattern refuses them (left61), and beside the address
#: patterns (a source's ``url``, ``copies`` and ``repository``, which refuse what this one does and any space: left92,
#: a tag character in a ``url`` passed ``check``).
ONE_LINE = (
    "^[^\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u200b\\u2060-\\u206f\\u3164\\ufeff\\uffa0\\ufff0-\\ufffb]*$"
)


#: The format a schema states beside :data:`ONE_LINE` (``"format": "one-line"``, each of the 102 places): what the
#: pattern cannot state, the invisible characters past U+FFFF, refused by :func:`one_line`, a format checker
#: registered with ``jsonschema`` and ``jsonschema-rs`` (left61: ``title = "cuda<U+E0041>…"`` in a source passed
#: ``check``, exit 0). A schema statement, so the editors' copy says it too; a text the pattern refuses is one line,
#: the pattern's (:func:`problems`), and one the format alone refuses reads the same line.
ONE_LINE_FORMAT = "one-line"

#: The invisible characters past U+FFFF (:data:`ONE_LINE_FORMAT`): the default-ignorable code points of the planes past
#: the Basic Multilingual Plane (Unicode's DerivedCoreProperties.txt, ``Default_Ignorable_Code_Point``): the shorthand
#: format controls U+1BCA0–U+1BCA3, the musical symbol format controls U+1D173–U+1D17A and the tags and unassigned
#: code points U+E0000–U+E0FFF, but the variation selectors supplement U+E0100–U+E01EF (kept as U+FE00–U+FE0F are).
@functools.cache
def _past_bmp_invisible() -> re.Pattern[str]:
    """The pattern of those characters, compiled when first used (issue 16, afresh101: a price from a warm cache
    validates nothing and never asks)."""
    return re.compile("[\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e00ff\U000e01f0-\U000e0fff]")


def one_line(text: object) -> bool:
    """Whether ``text`` holds none of the invisible characters past U+FFFF (:func:`_past_bmp_invisible`: the tags
    U+E0000–U+E007F and the like), the :data:`ONE_LINE_FORMAT` check: ``"Table 1"`` and ``"😀 1"`` do,
    ``"Table\U000e0031"`` does not. What is not a string holds (its type is the schema's ``type``'s to judge).
    Raises nothing. An ASCII text (``str.isascii``, a flag of the string: no scan) holds none: 4,925 of the 5,259
    texts a cold ``check`` judges (``tests/test_cold124.py``)."""
    return not isinstance(text, str) or text.isascii() or _past_bmp_invisible().search(text) is None


#: The formats passprice registers beside those ``jsonschema`` knows, by name → check (each a function of the value,
#: ``True`` when it holds).
FORMATS: dict[str, Callable[[object], bool]] = {}


def _finite_number(checker: Any, instance: Any) -> bool:
    # An integer is any size here (TOML integers have no bound in ``tomllib``): every schema bounds its integers and
    # numbers with ``minimum``/``maximum``, which skip what is not a number.
    return (
        isinstance(instance, int | float)
        and not isinstance(instance, bool)
        and (not isinstance(instance, float) or math.isfinite(instance))
        and not isinstance(instance, Underflowed)
    )


#: The ``not`` a schema gives a file's name kept without its folder (a checkpoint entry's ``source``, the header file it
#: was imported from, and a lock's pin of it): no slash (attack round 50: ``../../etc/passwd`` passed, and ``audit``
#: printed it beside "the entry keeps no folder").
NO_FOLDER = {"pattern": "/"}


#: The format a schema gives a date a person writes (a source's ``date`` and ``retrieved``, a measured run's
#: ``date``): ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` naming a month and a day of the calendar, or ``unknown``.
CALENDAR_DATE = "calendar-date"


def latest_day() -> datetime.date:
    """The latest day of the calendar anywhere on Earth now: today in UTC+14 (Kiribati's Line Islands), so that a
    date a person writes as their own today is never "after today" for a reader in an earlier time zone. The clock a
    :data:`CALENDAR_DATE` check reads through :data:`TODAY` (tests put another in its place). Raises nothing."""
    import datetime

    return (datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=14)).date()


#: The day a date may not come after (:func:`calendar_date`, :func:`future_date`): a function of no arguments giving
#: a :class:`datetime.date`, :func:`latest_day` unless a test injects a fixed clock (``monkeypatch.setattr``).
TODAY: Callable[[], datetime.date] = latest_day


def future_date(text: object) -> bool:
    """Whether ``text``, a date of the :data:`CALENDAR_DATE` shape (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``) naming a
    day of the calendar, comes wholly after the day :data:`TODAY` gives: its first day is later (``2027`` is after
    2026-12-04, ``2026-12`` is not). A run measured or a source published on a day not yet come is a slip
    (``9999-12-31`` was accepted until session 27). Anything else (``unknown``, a bad date): ``False``. Raises
    nothing."""
    import datetime

    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{4}(?:-[0-9]{2}(?:-[0-9]{2})?)?", text):
        return False
    try:
        first = datetime.date.fromisoformat(text if len(text) == 10 else f"{text}-01" if len(text) == 7 else
                                             f"{text}-01-01")
    except ValueError:
        return False
    return first > TODAY()


def calendar_date(text: object) -> bool:
    """Whether ``text`` names a day (or month, or year) of the calendar, the :data:`CALENDAR_DATE` format:
    ``2024-02-29`` and ``2024-04`` do, ``2023-02-30``, ``2024-13`` and month ``00`` do not (a run's ``date =
    "2023-02-30"`` was taken as free text until session 25; a source's since attack round 44). What is not a string
    of the shape ``YYYY[-MM[-DD]]`` is left to the schema's pattern (``unknown``, ``Dec 2023``), so one line says
    what is wrong. Raises nothing."""
    import datetime

    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{4}(?:-[0-9]{2}(?:-[0-9]{2})?)?", text):
        return True
    if len(text) == 4:
        # No year 0 in the calendar, as `0000-01-01` was refused and `0000` read (round 47).
        return text != "0000" and not future_date(text)
    try:
        datetime.date.fromisoformat(text if len(text) == 10 else f"{text}-01")
    except ValueError:
        return False
    return not future_date(text)


FORMATS.update({CALENDAR_DATE: calendar_date, ONE_LINE_FORMAT: one_line})


@functools.cache
def _schema_document(kind: str, folder: str) -> dict[str, Any]:
    """The ``kind`` schema in ``folder``, parsed (once a process). Raises :class:`InputError` naming the file when
    it is missing or not JSON."""
    path = Path(folder) / f"{kind}.schema.json"
    try:
        schema = json.loads(read_regular(path, MAX_SCHEMA_BYTES, _schema_refusal(path)).decode("utf-8"))
    except NotFound:
        raise InputError(f"{path}: schema for {kind} files not found") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise InputError(f"{path}: not a JSON Schema passprice reads: {problem_lines(e)[0]}") from None
    if not isinstance(schema, dict):
        raise InputError(f"{path}: not a JSON Schema passprice reads: not an object")
    return schema


def _schema_refusal(path: Path) -> Callable[[int], None]:
    """What :func:`passprice.files.read_regular` calls for the schema at ``path`` past :data:`MAX_SCHEMA_BYTES`."""

    def refuse(size: int) -> None:
        raise schema_too_large(path, size)

    return refuse


def required_at_top(kind: str, folder: Path | None = None) -> tuple[str, ...]:
    """The keys the ``kind`` schema (in ``folder``, default the package's) requires at a document's top, as it
    lists them (``required``): a document lacking one is surely refused by :func:`validate`, whatever else it holds.
    Raises :class:`InputError` as :func:`validate` does for a schema it cannot read."""
    required = _schema_document(kind, str(folder or schema_dir())).get("required", [])
    return tuple(k for k in required if isinstance(k, str)) if isinstance(required, list) else ()


def ecma_pattern(pattern: str) -> str:
    """``pattern`` (a JSON Schema ``pattern``: an ECMA-262 regular expression) for Python's :mod:`re`, where a ``$``
    outside a character class means the end of the text, as in ECMA-262, not also "before a final newline", as in
    Python: ``re.search("^[a-z]*$", "abc\\n")`` matches, so ``jsonschema`` (which searches with :mod:`re`) let a
    cite, a locator or a name end with a newline past the one-line rule (:data:`ONE_LINE`), where ``jsonschema-rs``
    refused it. Each such ``$`` becomes ``\\Z``; an escaped ``\\$`` and a ``$`` in ``[...]`` are left alone."""
    out = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            opening = "[^" if pattern[i + 1 : i + 2] == "^" else "["
            out.append(opening)
            i += len(opening)
            if pattern[i : i + 1] == "]":  # a "]" first in a class is a member of it in Python
                out.append("]")
                i += 1
            continue
        elif c == "$":
            c = "\\Z"
        out.append(c)
        i += 1
    return "".join(out)


#: The schemas' patterns of a digest (as :func:`ecma_pattern` writes them), with what each wants in words.
_DIGEST_PATTERNS = {
    ecma_pattern("^[0-9a-f]{64}$"): "64 lowercase hexadecimal digits",
    ecma_pattern("^sha256:[0-9a-f]{64}$"): "'sha256:' then 64 lowercase hexadecimal digits",
}


def _ecma_schema(node: Any) -> Any:
    """A copy of the schema ``node`` with every ``pattern`` and ``patternProperties`` key made
    :func:`ecma_pattern`'s."""
    if isinstance(node, list):
        return [_ecma_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern" and isinstance(value, str):
            out[key] = ecma_pattern(value)
        elif key == "patternProperties" and isinstance(value, dict):
            out[key] = {ecma_pattern(k): _ecma_schema(v) for k, v in value.items()}
        else:
            out[key] = _ecma_schema(value)
    return out


@functools.cache
def _validator(kind: str, folder: str) -> Any:
    """``jsonschema``'s validator of the ``kind`` schema in ``folder``: numbers finite (:func:`_finite_number`),
    formats checked, patterns read as ECMA-262 reads them (:func:`ecma_pattern`)."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("number", _finite_number)
    cls = jsonschema.validators.extend(base, type_checker=checker)
    formats = jsonschema.FormatChecker(formats=())
    formats.checkers = {**base.FORMAT_CHECKER.checkers, **{name: (check, ()) for name, check in FORMATS.items()}}
    return cls(_ecma_document(kind, folder), format_checker=formats)


#: The signals a command turns into an exception where it runs: Ctrl-C (``KeyboardInterrupt``), SIGTERM and SIGHUP
#: (:class:`passprice.cli.Terminated`).
STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold back :data:`STOPPING` in this thread until the ``with`` ends, then let one that came meanwhile through:
    every call into ``jsonschema-rs`` (compiled code) is made under it. A signal that came while the library's code
    ran had its Python handler run there, and the library cleared the ``KeyboardInterrupt`` the handler raised and
    returned its verdict: 865 of 2,000 SIGALRMs timed inside ``is_valid`` of a checkpoint entry vanished so (their
    handler raising ``KeyboardInterrupt``; jsonschema-rs 0.61.2, CPython 3.11), and a Ctrl-C during ``passprice
    --no-cache check`` let the check run on to "all holds", exit 0, in 2 of 60 runs (issue 13's leftovers, session
    34). Held, the signal waits in the kernel (a few microseconds: one validation) and is delivered as the mask is
    restored, where Python raises it in passprice's own code. The mask to restore is asked before any signal is
    held: one that came just before the block could be raised as that call returned (in ``signal``'s conversion of
    the old mask), before the old mask was kept, and left the three held for the rest of the process (1,297 of 2,000
    timed SIGINTs, each held from then on, when the block's own answer was the mask to restore). A platform without
    ``pthread_sigmask`` (Windows) holds nothing. Raises nothing itself."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        yield
        return
    before = mask(signal.SIG_BLOCK, ())  # only asked: a KeyboardInterrupt raised here leaves nothing held
    try:
        mask(signal.SIG_BLOCK, STOPPING)
        yield
    finally:
        mask(signal.SIG_SETMASK, before)


@functools.cache
def _ecma_document(kind: str, folder: str) -> dict[str, Any]:
    """The ``kind`` schema in ``folder`` with its patterns made :func:`ecma_pattern`'s (once a process): what
    :func:`_validator` checks with and :func:`whole_floats` walks (without importing ``jsonschema``)."""
    document: dict[str, Any] = _ecma_schema(_schema_document(kind, folder))
    return document


@functools.cache
def _fast_validator(kind: str, folder: str) -> Any:
    """``jsonschema-rs``'s compiled validator for the same schema as :func:`_validator`, or ``None`` where the
    library is missing or cannot build it. It only ever says "valid" faster: a document it does not find valid, or
    one it cannot take (a TOML date, which is no JSON value), goes to ``jsonschema``, which decides every refusal
    and writes every message."""
    try:
        import jsonschema_rs
    except ImportError:  # a platform without its wheel: jsonschema alone, as before
        return None
    document = _schema_document(kind, folder)
    try:
        with signals_held():
            return jsonschema_rs.Draft202012Validator(document, validate_formats=True,
                                                      formats=dict(FORMATS))
    except Exception:
        return None


@functools.cache
def _original_nodes(kind: str, folder: str) -> dict[int, Any]:
    """Each table of the ``kind`` schema made :func:`_ecma_document`'s, by its ``id``, → the same table of the schema
    as written (:func:`_schema_document`, what :func:`_fast_validator` compiles): the two are built alike, key by
    key in the same order (:func:`_ecma_schema`)."""
    found: dict[int, Any] = {}
    todo: list[tuple[Any, Any]] = [(_ecma_document(kind, folder), _schema_document(kind, folder))]
    while todo:
        made, written = todo.pop()
        if isinstance(made, dict) and isinstance(written, dict):
            found[id(made)] = written
            todo.extend(zip(made.values(), written.values(), strict=False))
        elif isinstance(made, list) and isinstance(written, list):
            todo.extend(zip(made, written, strict=False))
    return found


def _fast_branch(kind: str, folder: str, node: Any, built: dict[int, Any]) -> Any:
    """``jsonschema-rs``'s compiled validator of ``node``, a table of :func:`_ecma_document` (a branch of ``anyOf``,
    ``oneOf`` or ``if``), with the schema's ``$defs`` beside it, kept in ``built`` by ``id``; ``None`` where the
    library is missing or cannot build it (a ``$ref`` pointing elsewhere than ``$defs``)."""
    if id(node) in built:
        return built[id(node)]
    built[id(node)] = None
    written = _original_nodes(kind, folder).get(id(node))
    if _fast_validator(kind, folder) is None or not isinstance(written, dict) or "$defs" in written:
        return None
    import jsonschema_rs

    branch = {**written, "$defs": _schema_document(kind, folder).get("$defs", {})}
    with contextlib.suppress(Exception), signals_held():
        built[id(node)] = jsonschema_rs.Draft202012Validator(branch, validate_formats=True,
                                                             formats=dict(FORMATS))
    return built[id(node)]


def _surely_valid(document: Mapping[str, Any], kind: str, folder: str) -> bool:
    """Whether the compiled validator (:func:`_fast_validator`) finds ``document`` valid: ``False`` where it finds
    it invalid, cannot take it, or is missing (then :mod:`jsonschema` decides)."""
    fast = _fast_validator(kind, folder)
    if fast is None:
        return False
    try:
        with signals_held():
            return bool(fast.is_valid(document))
    except Exception:
        return False


@functools.cache
def _bare_key() -> re.Pattern[str]:
    """A TOML bare key (compiled on first use)."""
    return re.compile(r"[A-Za-z0-9_-]+")


def key_part(part: Any) -> str:
    """One key of a TOML key path as TOML writes it: bare when it can be (``memory``, an array index ``0``), else
    quoted (``"streams.rewrite"``, a lock's dotted fact key), so ``facts."streams.rewrite".value`` is one path."""
    text = str(part)
    return text if isinstance(part, int) or _bare_key().fullmatch(text) else json.dumps(text, ensure_ascii=False)


@functools.cache
def _operations() -> re.Pattern[str]:
    """A datasheet's rate in operations a second (``TFLOPS``, ``TOPS``, ``TFLOP/s``): its prefix and unit word.
    Compiled when first used: only a schema problem's hint asks."""
    return re.compile(r"([kMGTPE]?)(FLOPS|OPS|FLOP/s|OP/s)", re.IGNORECASE)


def _case_hint(instance: Any, allowed: Any) -> str:
    """``; did you mean 'GB/s'?`` where the text ``instance`` is one of ``allowed`` but for letter case alone (a
    fact's unit ``GB/S``: tests/test_fix190.py), or but for how "a second" is written (``GBps``, ``GB/sec``, ``GB
    per second``: :data:`_PER_SECOND_WRITTEN`), else ``""``. Raises nothing."""
    if not isinstance(instance, str) or not isinstance(allowed, list):
        return ""
    alike = [v for v in allowed if isinstance(v, str) and v != instance and v.casefold() == instance.casefold()]
    if not alike:  # a rate written another way: 'TBps', 'TB/sec', 'TB per second' for 'TB/s' (tests/test_fix53w.py)
        per = _PER_SECOND_WRITTEN.fullmatch(instance.strip())
        if per is not None:
            alike = [v for v in allowed if isinstance(v, str) and v == f"{per[1]}/s"] or [
                v for v in allowed if isinstance(v, str) and v.casefold() == f"{per[1]}/s".casefold()]
    return f"; did you mean {shown_value(alike[0])}?" if len(alike) == 1 else ""


#: A unit a second written as a datasheet or a person may write it: ``TBps``, ``TB/sec``, ``TB/second``, ``TB per
#: second``, ``TB/S`` (its unit before the rate, group 1), which :func:`_case_hint` reads as ``TB/s``.
_PER_SECOND_WRITTEN = re.compile(r"(?i)([A-Za-z]+?)\s*(?:ps|/\s*s(?:ec(?:ond)?)?|\s+per\s+sec(?:ond)?)")


def _operations_hint(instance: Any, allowed: Sequence[Any]) -> str:
    """For a rate given in operations a second where a multiply-add rate belongs (``tensor.f8`` in ``TFLOPS``, as
    a datasheet prints it): how to write it, two operations a multiply-add; else ``""``. Walkthrough 39: the line
    listed the MAC/s units and left the reader to find that a TFLOPS figure is halved, or derived."""
    found = _operations().fullmatch(instance) if isinstance(instance, str) else None
    if found is None or not any(isinstance(a, str) and a.endswith("MAC/s") for a in allowed):
        return ""
    prefix = found[1].upper() if found[1] != "k" else "k"
    unit = f"{prefix}MAC/s" if f"{prefix}MAC/s" in allowed else "MAC/s"
    per = "FLOP/MAC" if found[2].upper().startswith("FLOP") else "op/MAC"  # the units a derivation's input takes
    return (f": a datasheet's {instance} counts a multiply-add as two operations, so give half its figure in {unit}, "
            f"or derive it from the quoted figure with an input of 2 {per} (passprice explain derivation)")


#: A JSON Schema type in words, as an error line names what a key takes.
_TYPE_WORDS = {"array": "a list", "integer": "a whole number", "number": "a number", "string": "a string",
               "object": "a table", "boolean": "true or false"}


def _type_words(types: Any) -> str:
    """The JSON Schema ``type`` value ``types`` (a name, or a list of them) in words: ``a list``, ``a whole number
    or a string``."""
    names = [types] if isinstance(types, str) else list(types) if isinstance(types, list) else []
    return " or ".join(_TYPE_WORDS.get(str(n), str(n)) for n in names if n != "null") or "another value"


def _as_list(text: str, items: Any) -> str:
    """The list a key written as the one string ``text`` means, as JSON writes it, by its schema's ``items``: whole
    numbers where the items are (``"0"`` → ``[0]``, ``"0, 2"`` → ``[0, 2]``; tests/test_fix157.py: ``["0"]``, the
    advice, then failed), else the string in a list (``["https://…"]``)."""
    kind = items.get("type") if isinstance(items, dict) else None
    if kind in ("integer", "number"):
        parts = [p.strip() for p in text.strip().strip("[]").split(",")]
        if parts and all(re.fullmatch(r"[+-]?\d{1,20}", p) for p in parts):
            return "[" + ", ".join(str(int(p)) for p in parts) + "]"
        return f"a list of {'whole numbers' if kind == 'integer' else 'numbers'} ([0])"
    return f"[{json.dumps(text, ensure_ascii=False)}]"


def _key_path(parts: Any) -> str:
    return ".".join(key_part(p) for p in parts) or "(top level)"


def shown_value(value: Any) -> str:
    """``repr(value)`` for an error line: an integer of more than 30 digits shown by its length (``10^400`` would
    fill the screen), a text of more than 120 characters cut; a boolean, a date or a time as TOML writes it
    (``true``, ``2024-01-01``): ``format = true`` in a lock was "True is not allowed here", and a date
    "datetime.date(2024, 1, 1) is not allowed here", Python's spelling of what the file does not say (attack round
    28)."""
    import datetime

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, int) and abs(value) > 10**30:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, Overflowed | Underflowed):
        return value.typed
    if isinstance(value, float):
        typed = _TYPED.get(id(value))
        if typed is not None and typed[0] is value:
            return typed[1] if len(typed[1]) <= 120 else f"{typed[1][:100]}…"
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:100]}…"


def overflowed(value: Overflowed) -> str:
    """What is wrong with a number written finite that a float cannot hold (:class:`Overflowed`), in the file's own
    text: ``1e400 overflows a float (at most ±1.8e308): give a finite number``."""
    typed = value.typed if len(value.typed) <= 60 else f"{value.typed[:40]}… ({len(value.typed):,} characters)"
    return f"{typed} overflows a float (at most ±1.8e308): give a finite number"


def _table_of(extra: Sequence[str], node: Mapping[str, Any], instance: Any) -> str | None:
    """The name of the table ``extra`` (keys ``node``, a schema object, does not allow where they stand) belong in:
    a property of ``node`` that ``instance`` lacks, is a table, and allows every one of them (a source record's
    ``title``, ``kind``, ``read`` … written at the top of ``sources/ID.toml`` belong in its ``[source]`` table).
    ``None`` when there is none, or when the keys are those of more than one such table. Walkthrough 33: a source
    record written from the README's list of its keys, without ``[source]``, read "source: missing (required)" and
    "Additional properties are not allowed ('title', 'kind', …)", and neither line said where the keys go."""
    if not isinstance(instance, Mapping) or not extra:
        return None
    found = [
        name for name, child in node.get("properties", {}).items()
        if name not in instance and isinstance(child, Mapping) and child.get("type") == "object"
        and isinstance(child.get("properties"), Mapping) and all(k in child["properties"] for k in extra)
    ]
    return found[0] if len(found) == 1 else None


#: What a ``derived`` fact without its ``derivation`` is told, after "missing (required)" (leftovers 28c: the schema's
#: line said only that the key was missing, not why a derived fact needs one nor where a derivation is described).
DERIVED_NEEDS = (
    ": a fact whose provenance is \"derived\" must carry a derivation (the formula and inputs it is computed from: "
    "README.md, section Facts; passprice explain derivation), or give it another provenance"
)


#: The most valid key names :func:`_valid_keys_hint` lists (the rest counted), and the longest unexpected key it
#: looks for a near miss of (difflib's ratio is quadratic in a name's length: a key of 5,000 digits is no typo).
MAX_KEYS_LISTED = 10
MAX_KEY_MATCHED = 80


def _valid_keys_hint(extra: Sequence[str], node: Mapping[str, Any]) -> str:
    """What to write instead of the unexpected keys ``extra`` of a table whose schema object is ``node``, as click
    says of a mistyped option: ``: did you mean bandwidth?`` (the at most three property names of ``node`` closest to
    the one key, :func:`difflib.get_close_matches`, cutoff 0.6; of several keys, the closest name of each that has
    one: ``: did you mean bandwidth for 'bandwith', capacity for 'capcity'?``), else, when no key is near any name,
    ``: the keys here are bandwidth, capacity`` (at most :data:`MAX_KEYS_LISTED`, the rest counted). Empty when
    ``node`` names no properties, or allows names by pattern (which no list says). Leftovers 28c: ``bw = …`` in a
    card's ``[on_chip]`` said only "Additional properties are not allowed ('bw' was unexpected)"."""
    import difflib

    names = sorted(k for k in node.get("properties", {}) if isinstance(k, str) and node["properties"][k] != {
        "not": {}} and not (isinstance(node["properties"][k], Mapping) and node["properties"][k].get("not") == {}))
    if not names or node.get("patternProperties"):
        return ""
    short = [k for k in extra if isinstance(k, str) and len(k) <= MAX_KEY_MATCHED]
    if len(extra) == 1 and short:
        close = difflib.get_close_matches(short[0], names, n=3, cutoff=0.6)
        if close:
            return f"; did you mean {' or '.join(repr(c) for c in close)}?"
    else:
        pairs = [(k, difflib.get_close_matches(k, names, n=1, cutoff=0.6)) for k in short]
        said = [f"{close[0]!r} for {shown_value(k)}" for k, close in pairs if close]
        if said:
            return f"; did you mean {', '.join(said)}?"
    more = f" and {len(names) - MAX_KEYS_LISTED} more" if len(names) > MAX_KEYS_LISTED else ""
    return f"; the keys here are {', '.join(names[:MAX_KEYS_LISTED])}{more}"


def _unknown_keys(where: Sequence[Any], extra: Sequence[str], more: int, hint: str) -> str:
    """``memory.capacity: unknown key 'provenace'; did you mean 'provenance'?``: a table's keys its schema does not
    know (``extra``, the first five of them, ``more`` past those) with ``hint``, what to write instead
    (:func:`_valid_keys_hint`). JSON Schema's words ("Unevaluated properties are not allowed ('provenace' was
    unexpected)") named neither the key's place nor the key meant (tests/test_fix53w.py). Raises nothing."""
    shown = ", ".join(shown_value(k) for k in extra) + (f" and {more} more" if more else "")
    return f"{_key_path(where)}: unknown key{'s' if len(extra) + more > 1 else ''} {shown}{hint}"


def _evaluated_node(node: Any, root: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The schema object ``node`` with the properties of what it refers to (``$ref`` into ``root``'s ``$defs``) and
    of its ``allOf`` branches beside its own: the keys an ``unevaluatedProperties: false`` table allows. Raises
    nothing (a reference that does not resolve is left out)."""
    if not isinstance(node, Mapping):
        return {}
    names: dict[str, Any] = {}
    parts = [node, *(b for b in node.get("allOf", []) if isinstance(b, Mapping))]
    seen = 0
    while parts and seen < 16:
        part = parts.pop(0)
        seen += 1
        props = part.get("properties")
        if isinstance(props, Mapping):
            for k, v in props.items():
                names.setdefault(k, v)
        ref = part.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and root is not None:
            target: Any = root
            for step in ref[2:].split("/"):
                target = target.get(step) if isinstance(target, Mapping) else None
            if isinstance(target, Mapping):
                parts.append(target)
    return {"properties": names}


def _unevaluated(message: str) -> list[str]:
    """The keys a ``jsonschema`` message ``Unevaluated properties are not allowed ('a', 'b' were unexpected)`` names,
    in its order (each written as Python's ``repr``); ``[]`` when the message is not of that form. Raises nothing."""
    import ast

    head, tail = "not allowed (", " unexpected)"
    at = message.find(head)
    if at < 0 or not message.endswith(tail):
        return []
    inner = message[at + len(head):-len(tail)].removesuffix(" were").removesuffix(" was")
    try:
        keys = ast.literal_eval(f"({inner},)")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return [k for k in keys if isinstance(k, str)] if isinstance(keys, tuple) else []


def _spelled_id(where: Sequence[Any], instance: Any) -> str:
    """`` (spelled 'ID')`` for a look-alike source id (a ``source`` key's text not ASCII: a Cyrillic ``е`` in
    ``azure-ai-benchmarking-guidе``), its code points as :func:`passprice.errors.spell` writes them; ``""`` for any
    other key or value. ``check`` and ``reproduce`` spelled the id (their lines pass through
    :func:`passprice.errors.spelled_words`, which does not spell a name the line spells already) while ``price``
    printed it unspelled (issue 13, left30b): spelled here, every command prints the one line. Raises nothing."""
    from passprice.errors import spell

    if not where or where[-1] != "source" or not isinstance(instance, str) or instance.isascii():
        return ""
    return f" (spelled {spell(instance)})"


def _forbidden_keys(error: Any) -> list[str]:
    """The keys of ``error``'s table that its schema forbids by ``"not": {"anyOf": [{"required": [KEY]}, …]}`` or
    ``"not": {"required": [KEY]}`` (a key allowed only beside other values: a stack fact's ``digits`` beside a fit's
    ``method``), those present; ``[]`` for any other error. Raises nothing."""
    value = error.validator_value
    if error.validator != "not" or not isinstance(value, dict) or set(value) not in ({"anyOf"}, {"required"}):
        return []
    branches = value.get("anyOf", [value])
    if not isinstance(branches, list) or not all(isinstance(b, dict) and set(b) == {"required"} for b in branches):
        return []
    keys = [k for b in branches for k in b["required"] if isinstance(k, str)]
    return [k for k in keys if isinstance(error.instance, dict) and k in error.instance]


def _explain(error: Any, root: Mapping[str, Any] | None = None) -> str:
    """One line for one ``jsonschema`` error: the key path and what was wrong, in words a file's author can act on. A
    value is shown by :func:`shown_value` (cut past 120 characters): a source record's ``kind`` of 700 KB made every
    line of ``check`` naming it 500,000 characters long (round 23)."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        # Say what was wrong against the alternative that got furthest into the value (the deepest key path),
        # not only that none matched.
        # Among those, a bound or pattern it broke says more than a type it is not.
        # A oneOf every branch of which holds (`required` keys of a value that is no table) says least of all.
        return _explain(max(error.context, key=lambda e: (
            len(e.absolute_path), e.validator != "type" and not (e.validator == "oneOf" and not e.context))), root)
    where = list(error.absolute_path)
    instance = error.instance
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        said = f"{_key_path([*where, missing])}: missing (required)"
        if missing == "derivation" and isinstance(instance, Mapping) and instance.get("provenance") == "derived":
            return said + DERIVED_NEEDS
        return said
    if error.validator == "dependentRequired":
        # "'host.capacity' is a dependency of 'host.read'": the key missing, as `required` says it, so a lock cut
        # short inside its host link still reads as one "incomplete lock" line (attack round 59)
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"{_key_path([*where, missing])}: missing (required)"
    if error.validator == "additionalProperties":
        extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
        patterns = [re.compile(p) for p in error.schema.get("patternProperties", {})]  # ecma_pattern's already
        extra = [k for k in extra if not any(p.search(k) for p in patterns)]
        if extra:  # each key shown short: a key of 5,000 digits would fill the screen
            table = _table_of(extra, error.schema, error.instance)
            hint = f"; they are keys of the [{table}] table: write [{table}] on a line above them" if table else (
                _valid_keys_hint(extra[:5], error.schema))
            return _unknown_keys(where, extra[:5], max(0, len(extra) - 5), hint)
        return f"{_key_path(where)}: {error.message}"
    if error.validator == "unevaluatedProperties":
        extra = _unevaluated(error.message)
        if extra:  # named as additionalProperties names them: 5,000 stray subtables of a fact's table made check's
            # line and the listings' --json "problems" 44,000 characters long (attack round 51)
            return _unknown_keys(where, extra[:5], max(0, len(extra) - 5),
                                 _valid_keys_hint(extra[:5], _evaluated_node(error.schema, root)))
        return f"{_key_path(where)}: {error.message}"
    if error.validator == "type" and isinstance(instance, Overflowed):
        return f"{_key_path(where)}: {overflowed(instance)}"
    if error.validator == "type" and isinstance(instance, Underflowed):
        return f"{_key_path(where)}: {underflowed(instance)}"
    if error.validator == "type" and isinstance(instance, float) and not math.isfinite(instance):
        return f"{_key_path(where)}: must be a finite number, not {instance!r}"
    if (error.validator == "type" and error.validator_value == "array" and isinstance(instance, str)
            and isinstance(error.schema, dict) and error.schema.get("description")):
        # A list written as one string (a source's `copies = "https://…"`) read "is not of type 'array'", not what
        # the key lists nor how it is written (walkthrough 42).
        return (f"{_key_path(where)}: {shown_value(instance)} is one string, not a list: write "
                f"{_as_list(instance, error.schema.get('items'))} ({error.schema['description']})")
    if (error.validator == "type" and error.validator_value == "number" and isinstance(instance, str)
            and where and where[-1] == "tokens_per_s"):
        # a run's `tokens_per_s = "98.42 tok/s"` read "is not of type 'number'": the unit is the key's, as `fact set`
        # reads a figure with its unit (tests/test_fix54w.py)
        lead = re.match(r"\s*([0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)", instance)
        write = f"; write {lead.group(1).replace(',', '')}" if lead else ""
        return f"{_key_path(where)}: {shown_value(instance)} is not a number (tokens per second{write})"
    if error.validator == "type" and instance is None:
        # JSON's null read as Python's "None is not of type 'array'" (tests/test_fix157.py)
        return (f"{_key_path(where)}: is null, not {_type_words(error.validator_value)}: give one, or leave the key "
                "out where it is optional")
    if error.validator == "enum" and error.validator_value == list(NONFINITE):
        # A checkpoint entry's float: a finite number, or the name of a NaN or infinity the header held.
        said = overflowed(instance) if isinstance(instance, Overflowed) else underflowed(instance) if isinstance(
            instance, Underflowed) else (
            f"must be a finite number, not {instance!r}") if isinstance(instance, float) else (
            f"{shown_value(instance)} is not a number"
        )
        hint = 'a NaN or an infinity a header holds is written "nan", "inf" or "-inf"'
        return f"{_key_path(where)}: {said} ({hint})"
    if error.validator in ("maximum", "minimum") and abs(error.validator_value) == FLOAT32_MAX:
        return f"{_key_path(where)}: {shown_value(instance)} is past float32's range (±{FLOAT32_MAX!r})"
    if error.validator == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value)
        return (f"{_key_path(where)}: {shown_value(instance)} is not allowed here (one of {allowed})"
                f"{_operations_hint(instance, error.validator_value) or _case_hint(instance, error.validator_value)}")
    if error.validator == "minLength" and instance == "":
        return f"{_key_path(where)}: is empty (\"\"): give the text, or leave the key out if it is optional"
    if error.validator == "maxLength" and isinstance(instance, str):
        # "'xxx…' is too long" said neither the bound nor by how much (a stack note of 4,001 characters; round 33)
        return (f"{_key_path(where)}: {shown_value(instance)} is too long ({len(instance):,} characters; at most "
                f"{error.validator_value:,})")
    if error.validator == "minLength":
        return f"{_key_path(where)}: {shown_value(instance)} is too short (at least {error.validator_value} characters)"
    if (error.validator == "format" and error.validator_value == ONE_LINE_FORMAT and isinstance(error.schema, dict)
            and error.schema.get("pattern", ONE_LINE) not in (ONE_LINE, ecma_pattern(ONE_LINE))
            and error.schema.get("description")):
        # An address (a source's url, copies, repository) states the format beside a pattern of its own: a tag
        # character in it reads as a U+200B there does, "is not DESCRIPTION" (left92: U+E0041 passed its pattern).
        said = f"{shown_value(instance)} is not {error.schema['description']}"
        return f"{_key_path(where)}: {said}{_spelled_id(where, instance)}"
    if (error.validator == "pattern" and error.validator_value == ecma_pattern(ONE_LINE)) or (
            error.validator == "format" and error.validator_value == ONE_LINE_FORMAT):
        shown = shown_value(instance)
        return (
            f"{_key_path(where)}: {shown} holds a control character, a line separator, a bidi control or an "
            "invisible character (a newline, a tab, U+2028, U+202E, U+200B …): write it on one line"
        )
    if error.validator in ("maximum", "minimum") and isinstance(instance, int) and abs(instance) > 10**30:
        bound = "at most" if error.validator == "maximum" else "at least"
        return f"{_key_path(where)}: {shown_value(instance)} is out of range ({bound} {error.validator_value})"
    if error.validator == "not" and where and where[-1] == "cite":
        return (
            f"{_key_path(where)}: a fact cites a source record now: give source = ID (a file in sources/) and "
            "locator = where in it (table, row, figure), instead of cite"
        )
    if error.validator == "not" and error.validator_value == NO_FOLDER:
        # A header file's name as an entry keeps it and a lock pins it: audit says "the entry keeps no folder"
        # beside it; "../../etc/passwd" passed check, reproduce and audit (attack round 50).
        return (f"{_key_path(where)}: {shown_value(instance)} holds a slash: it is a file's name alone, without a "
                "folder (the name the header was imported from)")
    forbidden = _forbidden_keys(error)
    if forbidden:
        # "{'method': 'x', …} should not be valid under {'anyOf': [{'required': ['digits']}, …]}": a stack fact's
        # derivation of an unknown method printed the table and the schema (attack round 63)
        return f"{_key_path(where)}: {', '.join(shown_value(k) for k in forbidden)} may not be given here"
    if error.validator == "not" and error.validator_value == {} and isinstance(error.schema, dict):
        # A key a schema no longer has (``"not": {}``) says why in its description.
        return f"{_key_path(where)}: no longer a key: {error.schema.get('description', 'remove it')}"
    if error.validator == "pattern" and error.validator_value in _DIGEST_PATTERNS:
        # "does not match '^[0-9a-f]{64}$'" (or the schema's description of what the digest is of) did not say
        # what a digest is written as; an upper-case hex digit is the usual slip (attack round 44).
        return (f"{_key_path(where)}: {shown_value(instance)} is not "
                f"{_DIGEST_PATTERNS[error.validator_value]} (a sha256 digest)")
    if error.validator == "pattern" and isinstance(error.schema, dict) and error.schema.get("description"):
        # A pattern says what it wants in its description ("YYYY-MM-DD, or \"unknown\""), in words a person reads.
        said = f"{shown_value(instance)} is not {error.schema['description']}"
        return f"{_key_path(where)}: {said}{_spelled_id(where, instance)}"
    if error.validator == "pattern" and isinstance(error.validator_value, str):
        # The pattern as the schema writes it (ecma_pattern's "\\Z" back to "$").
        shown_pattern = error.validator_value.replace("\\Z", "$")
        return f"{_key_path(where)}: {shown_value(instance)} does not match {shown_pattern!r}"
    if error.validator == "format" and error.validator_value == CALENDAR_DATE:
        # The forms the key's pattern takes: a source's `retrieved` is a day, its `date` (and a run's) may be less.
        pattern = error.schema.get("pattern", "") if isinstance(error.schema, dict) else ""
        form = "YYYY, YYYY-MM or YYYY-MM-DD" if ")?" in pattern else "YYYY-MM-DD"  # the month and day optional
        if future_date(instance):
            return (f"{_key_path(where)}: {shown_value(instance)} is after today ({TODAY().isoformat()} in UTC+14, "
                    "the latest day anywhere): a run or a source is dated on a day that has come")
        return (f"{_key_path(where)}: {shown_value(instance)} is not a date of the calendar ({form}: a month from 01 "
                "to 12, a day the month has)")
    if error.validator == "const":
        return f"{_key_path(where)}: {shown_value(instance)} is not allowed here (must be {error.validator_value!r})"
    if error.validator == "uniqueItems" and isinstance(instance, list):
        seen: set[str] = set()
        for item in instance:
            mark = json.dumps(item, sort_keys=True)
            if mark in seen:
                return f"{_key_path(where)}: {shown_value(item)} is listed more than once"
            seen.add(mark)
        return f"{_key_path(where)}: an item is listed more than once"
    if error.validator in ("maxItems", "minItems") and isinstance(instance, list):
        bound = "at most" if error.validator == "maxItems" else "at least"
        return f"{_key_path(where)}: {len(instance):,} items ({bound} {error.validator_value:,})"
    if error.validator == "items" and error.validator_value is False and isinstance(instance, list):
        # `items: false` after `prefixItems` (a measured run's [first, last] positions): jsonschema's "Expected at
        # most 2 items but found 19998 extra: [3, 4, …]" listed every extra item, 3,500 characters, beside the
        # maxItems line saying the same (attack round 45); one line, the maxItems one's words.
        most = len(error.schema.get("prefixItems", ())) if isinstance(error.schema, dict) else 0
        return f"{_key_path(where)}: {len(instance):,} items (at most {most:,})"
    message = str(error.message)
    text = repr(instance)
    if len(text) > 120 and text in message:  # the value of 20,000 items would fill the screen: show it cut
        message = message.replace(text, shown_value(instance))
    elif message.startswith(text) and shown_value(instance) != text:  # `True is not of type 'string'`: TOML's true
        message = shown_value(instance) + message[len(text):]
    return f"{_key_path(where)}: {message}"


def _forms(error: Any) -> str | None:
    """The line for a value none of a key's forms (``oneOf``) takes, when the key's schema states its forms in an
    ``errorMessage`` (a sweep file's ``batches``: a list or a ``{ from, to, factor }`` range, not the command line's
    ``'1-4096*2'``) and the value, or a part of it, is of a wrong type: the key path and the value (or, inside a
    form, the part that is wrong and why), then the forms.
    jsonschema's own words named one form alone (``batches: '1-4096*2' is not of type 'array'``, ``batches.factor:
    1.01 is not of type 'integer'``; arch43). ``None`` for any other error: :func:`_explain` says it."""
    forms = error.schema.get("errorMessage") if isinstance(error.schema, Mapping) else None
    if error.validator not in ("oneOf", "anyOf") or not isinstance(forms, str):
        return None
    where = list(error.absolute_path)
    # the form that got furthest into the value, a bound or a missing key before a type (as _explain picks); one
    # that is the right form with a wrong bound or key (`[1, 2, 1]`, `{ from = 0, … }`) is _explain's line alone
    deepest = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"), default=None)
    if deepest is not None and deepest.validator != "type":
        return None
    if deepest is None or len(deepest.absolute_path) <= len(where):
        said = f"{_key_path(where)}: {shown_value(error.instance)} is none of the forms it takes"
    elif deepest.validator_value == "integer":
        said = f"{_key_path(list(deepest.absolute_path))}: {shown_value(deepest.instance)} is not a whole number"
    else:
        said = _explain(deepest)
    return f"{said}; {_key_path(where)} is {forms}"


def _oversized(document: Mapping[str, Any], schema: Mapping[str, Any], node: Mapping[str, Any] | None = None,
               at: str = "") -> list[str]:
    """The arrays of ``document`` longer than the schema's ``maxItems`` for them, one line each, found before the
    full validation walks every item: a measurement file of 5,000 runs (the schema allows 1,000) is refused at once,
    not after seconds of checking each run against a schema it is refused by anyway. Arrays in tables are looked at
    too (``node``: the schema of ``document``, the whole schema's by default; ``at``: its key path): a checkpoint
    entry's ``header.shards`` of 5,500 rows took 3.4 s and printed 7,000 lines, one for each row's bad figures
    (attack round 44). The bound is the schema's own, read from it, not restated here."""
    out: list[str] = []
    node = schema if node is None else node
    properties = node.get("properties", {})
    # (``type(x) is dict`` first: a parsed document's and a schema's tables are dicts, and the ABC's
    # ``isinstance`` cost more than the walk, 15,000 checks a cold ``check``)
    if type(properties) is not dict and not isinstance(properties, Mapping):
        return out
    for key, value in document.items():
        sub = properties.get(key)
        if type(sub) is not dict and not isinstance(sub, Mapping):
            continue
        ref = sub.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            sub = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), sub)
            if type(sub) is not dict and not isinstance(sub, Mapping):
                continue
        if (type(value) is dict or isinstance(value, Mapping)) and at.count(".") < 4:
            out += _oversized(value, schema, sub, f"{at}{key_part(key)}.")
            continue
        most = sub.get("maxItems")
        if isinstance(value, list) and isinstance(most, int) and len(value) > most:
            out.append(f"{at}{key_part(key)}: {len(value):,} items (at most {most:,})")
    return out


def problems(document: Mapping[str, Any], kind: str, folder: Path | None = None) -> list[str]:
    """Every way ``document`` fails the ``kind`` schema (from ``folder``, default the package's), one line each,
    ``KEY.PATH: what was wrong``, sorted by key path; empty when it matches.

    A document ``jsonschema-rs`` (a compiled validator, about 300 times faster on a checkpoint entry's tensor
    table) finds valid is valid; any other goes through ``jsonschema``, whose verdict and messages stand. The two
    are held to agree on what is valid by a differential test (``tests/test_schema_fast.py``)."""
    where = str(folder or schema_dir())
    oversized = _oversized(document, _schema_document(kind, where))
    if oversized:
        return oversized
    if _surely_valid(document, kind, where) and not _holds_underflow(document):
        kept, more = _whole_lines(whole_floats(document, kind, where))
        return [line for _, line in kept] + more
    if _values_past(document, MAX_EXPLAINED):
        return _compiled_problems(document, kind, where)
    wide = _wide_table(document) if _fast_validator(kind, where) is not None else None
    if wide is not None:  # found invalid: jsonschema walked each of 30,000 keys (0.5 s; attack65)
        return [wide]
    validator = _validator(kind, where)
    # At most MAX_EXPLAINED_ERRORS errors are asked of jsonschema, lazily: each costs it about 120 µs, and a 222 KB
    # routing record of 30,000 derivation inputs `za = 1` (under every cap of size and values) took 3.8 s of CPU and
    # 278 MB to print 30,003 lines (attack65).
    errors = list(itertools.islice(validator.iter_errors(document), MAX_EXPLAINED_ERRORS + 1))
    cut = len(errors) > MAX_EXPLAINED_ERRORS
    del errors[MAX_EXPLAINED_ERRORS:]
    # A value of the wrong type (a derivation's input `sms = 5`, not a table) also "is valid under each of"
    # {required: [fact]}, {required: [locator]}, {required: [constant]} (a `required` holds of a non-object): that
    # second line says nothing the type's line does not (attack round 31).
    typed = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    floats = whole_floats(document, kind, where)
    # A float where a whole number goes (digits = 4.5) is one line, whole_floats' (which says how to write it), not
    # also jsonschema's "4.5 is not of type 'integer'" (attack round 31).
    said = {tuple(at) for at, _ in floats}
    # A date its key's pattern already refuses (a source's `retrieved = "2027"`, a day wanted) is that one line, not
    # also the calendar-date format's "is after today" or "not a date of the calendar" (attack round 49).
    patterned = {tuple(e.absolute_path) for e in errors if e.validator == "pattern"}
    loose = _looser_bounds(errors)
    # A whole float past its key's bound (`range.position.max.value = 1e308`, a count of at most 4,294,967,295) is
    # one value, one line: the bound's, saying how a whole number is written, not also whole_floats' line beside it
    # (issue 13: two lines for one fault).
    bounded = {tuple(e.absolute_path) for e in errors if e.validator in _LOWER | _UPPER and id(e) not in loose} & said
    found = [((list(map(str, e.absolute_path)), e.message),
              _false_key(e, validator.schema, document) or _forms(e) or _explain(e, validator.schema)
              + _branches(e, validator.schema, document)
              + (f" ({_WHOLE_SPELLING})" if e.validator in _LOWER | _UPPER and tuple(e.absolute_path) in bounded
                 else ""))
             for e in errors if not (e.validator == "oneOf" and not e.context and tuple(e.absolute_path) in typed)
             and not (e.validator == "type" and isinstance(e.instance, float) and tuple(e.absolute_path) in said)
             and not (e.validator == "format" and tuple(e.absolute_path) in patterned) and id(e) not in loose]
    kept, more = _whole_lines([(at, line) for at, line in floats if tuple(at) not in bounded])
    found.extend(((list(map(str, at)), ""), line) for at, line in kept)
    # One line per problem: two keywords saying one thing (`items: false` and `maxItems`) give one line.
    lines = _folded(list(dict.fromkeys(line for _, line in sorted(found, key=lambda pair: pair[0])))) + more
    if cut:
        return [*lines[:MAX_COMPILED_PROBLEMS],
            f"(top level): and more problems (over {MAX_EXPLAINED_ERRORS:,}; the first {MAX_COMPILED_PROBLEMS} by key "
            f"path of the first {MAX_EXPLAINED_ERRORS:,} found are listed): make it smaller"]
    return lines


#: An unknown key's line naming the keys they may be (:func:`_unknown_keys`): its table's path, the keys meant
#: (``'provenance'``, or ``'capacity' for 'capacty', 'bandwidth' for 'bandwith'``).
_MEANT = re.compile(r"^(.*): unknown keys? .*?; did you mean (.*)\?$")


def _folded(lines: list[str]) -> list[str]:
    """``lines`` without the ``TABLE.KEY: missing (required)`` line of a key an unknown key's line of that table
    names as meant (``memory.capacity: unknown key 'provenace'; did you mean 'provenance'?``): one fault, one line
    (tests/test_fix53w.py). Raises nothing."""
    meant = set()
    for line in lines:
        found = _MEANT.match(line)
        if found is None:
            continue
        table = found.group(1)
        said = found.group(2)
        keys = re.findall(r"'([^']+)' for ", said) if " for " in said else re.findall(r"^'([^']+)'$", said)
        meant |= {f"{key}: missing (required)" if table == "(top level)" else f"{table}.{key}: missing (required)"
                  for key in keys}
    return [line for line in lines if line not in meant]


_LOWER = frozenset({"minimum", "exclusiveMinimum"})
_UPPER = frozenset({"maximum", "exclusiveMaximum"})


def _looser_bounds(errors: Sequence[Any]) -> set[int]:
    """The ids of the ``errors`` that break a bound on a key whose value breaks a tighter bound of the same side
    too: one value, one line, the tighter bound's. Attack 62: a routing share pinned at -1 in a lock read "-1.0 is
    less than or equal to the minimum of 0" (the share's ``exclusiveMinimum``) and "-1.0 is less than the minimum of
    0" (every fact's ``minimum``), and one at 1e308 named both the share's maximum 1 and every fact's 1e18."""
    tightest: dict[tuple[tuple[Any, ...], bool], tuple[tuple[float, bool], Any]] = {}
    for e in errors:
        bound = e.validator_value
        if e.validator not in _LOWER | _UPPER or isinstance(bound, bool) or not isinstance(bound, int | float):
            continue
        low = e.validator in _LOWER
        rank = (float(bound) if low else -float(bound), str(e.validator).startswith("exclusive"))
        key = (tuple(e.absolute_path), low)
        if key not in tightest or rank > tightest[key][0]:
            tightest[key] = (rank, e)
    kept = {id(e) for _, e in tightest.values()}
    return {id(e) for e in errors if e.validator in _LOWER | _UPPER and id(e) not in kept
            and (tuple(e.absolute_path), e.validator in _LOWER) in tightest}


def _false_key(error: Any, root: Any, document: Any) -> str:
    """``KEY.PATH: VALUE is not allowed here`` for a key a ``false`` subschema forbids (a format-2 lock's
    ``tool_version``), ``""`` for any other error. ``jsonschema`` reports such an error at the table holding the key,
    its schema path ending at ``properties``, so it read ``lock: False schema does not allow '0.0.1'``, naming no key
    (slip round 46); the key is the one of that table the ``properties`` it ends at forbid. Raises nothing."""
    if error.validator is not None or error.schema is not False:
        return ""
    node, table = root, document
    try:
        for part in error.absolute_schema_path:
            node = node[part]
        for part in error.absolute_path:
            table = table[part]
    except (KeyError, IndexError, TypeError):
        return ""
    if not isinstance(node, Mapping) or not isinstance(table, Mapping):
        return ""
    keys = [k for k, sub in node.items() if sub is False and k in table and table[k] == error.instance]
    if not keys:
        return ""
    return f"{_key_path([*error.absolute_path, keys[0]])}: {shown_value(error.instance)} is not allowed here"


#: The most whole-float lines (:func:`whole_floats`) listed for one document; the rest are counted in one line.
MAX_WHOLE_LINES = 20


def _whole_lines(
    found: list[tuple[tuple[Any, ...], str]],
) -> tuple[list[tuple[tuple[Any, ...], str]], list[str]]:
    """The first :data:`MAX_WHOLE_LINES` of ``found`` (key path, line) pairs, and, past them, one line counting the
    rest: a checkpoint entry of 3,000 tensors with float ``dims`` printed 6,000 lines after its one "3,236 items"
    line, and 20,000 tensors 40,000 (attack round 30's leftover; the lead, session 15). Without a count line when
    all are listed. Raises nothing."""
    if len(found) <= MAX_WHOLE_LINES:
        return found, []
    rest = len(found) - MAX_WHOLE_LINES
    return found[:MAX_WHOLE_LINES], [
        f"(and {rest:,} more floats where a whole number goes: write each without a decimal point or exponent)"
    ]


def _whole_only(node: Mapping[str, Any]) -> bool:
    """Whether the schema ``node`` takes only whole numbers of the numbers it takes: ``type`` ``integer`` (or a list
    naming ``integer`` and not ``number``), or an ``enum``/``const`` whose numbers are all integers (``lock.format``,
    ``header.version``)."""
    kind = node.get("type")
    if kind == "integer" or (isinstance(kind, list) and "integer" in kind and "number" not in kind):
        return True
    values = node["enum"] if isinstance(node.get("enum"), list) else [node["const"]] if "const" in node else []
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return bool(numbers) and all(isinstance(v, int) for v in numbers)


#: How a whole number is written, as a line refusing a float where one goes says it.
_WHOLE_SPELLING = "a whole number, written without a decimal point or exponent"


def _whole_line(at: Sequence[Any], value: float, node: Mapping[str, Any]) -> str:
    """The line refusing the float ``value`` at key path ``at`` where the schema ``node`` takes a whole number: as
    ``jsonschema`` words a type or ``enum`` error, and how to write the number (``2.0`` → ``2``)."""
    if "enum" in node or "const" in node:  # lock.format's line since round 28
        values = node["enum"] if isinstance(node.get("enum"), list) else [node.get("const")]
        allowed = ", ".join(repr(v) for v in values)
        return (f"{_key_path(at)}: {shown_value(value)} is not allowed here (one of {allowed}: a whole number, written "
                "without a decimal point)")
    # The integer spelled out only while it is short: `batch = 1e300` printed its 301 digits (attack round 31)
    whole = f": {int(value)}" if value.is_integer() and abs(value) < 1e30 else ""
    return f"{_key_path(at)}: {shown_value(value)} is not of type 'integer' ({_WHOLE_SPELLING}{whole})"


def _pointed(root: Mapping[str, Any], ref: str) -> Any:
    """The node a local ``$ref`` (``#/$defs/count``) points at in ``root``, or ``None`` for any other reference."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in filter(None, ref[1:].split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


#: The kinds of document whose whole floats are read as the integers they equal: none. A model's ``config.json`` was
#: one until issue 13's leftovers (session 26): ``"num_hidden_layers": 2.0`` built a header of 2 blocks, exit 0, on
#: the thought that published configurations hold ``8192.0`` where an integer goes; none of the 14 copied into
#: ``examples/configs/`` holds one, and the header synth writes needs an integer, so a whole float there is refused
#: by name as in every record (the line says how to write it: ``2``). Kept, empty, for a kind that must take them.
WHOLE_FLOATS_TAKEN: frozenset[str] = frozenset()


def whole_floats(document: Any, kind: str, folder: Path | str | None = None) -> list[tuple[tuple[Any, ...], str]]:
    """Every TOML (or JSON) float ``document`` holds where the ``kind`` schema takes only a whole number (a
    ``batch``, a tensor's ``dims``, a lock's ``format``: :func:`_whole_only`), as ``(key path, line)`` pairs, the line
    ``KEY.PATH: 2.0 is not of type 'integer' (a whole number is written without a decimal point or exponent: 2)``.

    JSON Schema counts ``2.0`` an integer (a number whose fraction is zero), and so do ``jsonschema`` and
    ``jsonschema-rs``: a serving of ``batch = 2.0`` priced as batch 2, a tensor's ``dims = [4096.0]`` read as 4096,
    and nothing said that the file wrote a float where passprice writes, and reads, an integer (attack round 29). A
    float there is refused by name, as every value the model does not take. The walk follows the schema beside the
    document (``$ref``, ``properties``, ``patternProperties``, ``additionalProperties``, ``items``,
    ``prefixItems``, ``allOf``, ``anyOf``, ``oneOf``, ``if``/``then``/``else``); a float found under a branch
    (``anyOf``/``oneOf``, ``then``/``else``) counts only when the branch is the one the value takes (its ``if``
    holds, or the value is valid under it, floats taken as JSON Schema takes them), asked only then. Linear in the
    document; a document without a float costs one walk of its values. None for a kind of
    :data:`WHOLE_FLOATS_TAKEN` (none now; a model's ``config.json`` was one until session 26)."""
    if kind in WHOLE_FLOATS_TAKEN:
        return []
    where = str(folder or schema_dir())
    root = _ecma_document(kind, where)
    reaching = _whole_reaching(kind, where)
    if id(root) not in reaching:
        return []
    marked = _float_holders(document)
    if not marked:
        return []
    out: list[tuple[tuple[Any, ...], str]] = []

    built: dict[int, Any] = {}

    def valid(instance: Any, node: Any) -> bool:
        # The compiled validator first (its "valid" stands, as for a whole document: _surely_valid): jsonschema
        # alone took 1 s of CPU for a sweep's `batches` of 16,384 whole floats, its oneOf branch checked item by
        # item (attack round 30); then jsonschema (imported, and the validator built, only here: a valid file's walk
        # never asks)
        fast = _fast_branch(kind, where, node, built)
        if fast is not None:
            with contextlib.suppress(Exception), signals_held():
                if fast.is_valid(instance):
                    return True
        validator = _validator(kind, where)
        try:
            return bool(validator.evolve(schema=node).is_valid(instance))
        except Exception:
            return False

    def walk(instance: Any, node: Any, at: tuple[Any, ...], seen: int) -> list[tuple[tuple[Any, ...], str]]:
        if id(node) not in reaching or seen > 64:  # (a node not in `reaching` finds nothing below it: not walked)
            return []
        found: list[tuple[tuple[Any, ...], str]] = []
        ref = node.get("$ref")
        if isinstance(ref, str):
            found += walk(instance, _pointed(root, ref), at, seen + 1)
        if isinstance(instance, float) and math.isfinite(instance) and _whole_only(node):
            found.append((at, _whole_line(at, instance, node)))
        for sub in node.get("allOf", ()) if isinstance(node.get("allOf"), list) else ():
            found += walk(instance, sub, at, seen + 1)
        for key in ("anyOf", "oneOf"):
            for sub in node.get(key, ()) if isinstance(node.get(key), list) else ():
                inner = walk(instance, sub, at, seen + 1)
                if inner and valid(instance, sub):
                    found += inner
        if "if" in node:
            holds: bool | None = None
            for key, wanted in (("then", True), ("else", False)):
                inner = walk(instance, node.get(key), at, seen + 1)
                if inner:
                    holds = valid(instance, node["if"]) if holds is None else holds
                    if holds == wanted:
                        found += inner
        if isinstance(instance, dict):
            properties = node.get("properties")
            properties = properties if isinstance(properties, dict) else {}
            patterns = node.get("patternProperties")
            patterns = patterns if isinstance(patterns, dict) else {}
            extra = node.get("additionalProperties")
            for key, value in instance.items():
                if not isinstance(value, float) and id(value) not in marked:
                    continue
                matched = False
                if key in properties:
                    matched = True
                    found += walk(value, properties[key], (*at, key), seen + 1)
                for pattern, sub in patterns.items():
                    if re.search(pattern, key):
                        matched = True
                        found += walk(value, sub, (*at, key), seen + 1)
                if not matched and isinstance(extra, dict):
                    found += walk(value, extra, (*at, key), seen + 1)
        elif isinstance(instance, list):
            first = node.get("prefixItems")
            first = first if isinstance(first, list) else []
            items = node.get("items")
            for i, value in enumerate(instance):
                if not isinstance(value, float) and id(value) not in marked:
                    continue
                if i < len(first):
                    found += walk(value, first[i], (*at, i), seen + 1)
                elif isinstance(items, dict):
                    found += walk(value, items, (*at, i), seen + 1)
        return found

    # A set beside the list: `not in out` alone was quadratic (40,000 floats in a checkpoint entry's tensor dims,
    # a 1.8 MB file: 34 s of CPU; attack round 30).
    kept: set[tuple[tuple[Any, ...], str]] = set()
    for pair in walk(document, root, (), 0):
        if pair not in kept:
            kept.add(pair)
            out.append(pair)
    return out


def _walked(node: Mapping[str, Any], root: Mapping[str, Any]) -> list[Any]:
    """The schema nodes :func:`whole_floats`'s walk may go on to from ``node``: its ``$ref``'s target, ``allOf``,
    ``anyOf`` and ``oneOf`` branches, ``then`` and ``else``, every ``properties`` and ``patternProperties`` value,
    ``additionalProperties``, ``prefixItems`` and ``items`` (``if`` is only validated against, never walked)."""
    out: list[Any] = []
    ref = node.get("$ref")
    if isinstance(ref, str):
        out.append(_pointed(root, ref))
    for key in ("allOf", "anyOf", "oneOf", "prefixItems"):
        if isinstance(node.get(key), list):
            out += node[key]
    for key in ("properties", "patternProperties"):
        if isinstance(node.get(key), dict):
            out += node[key].values()
    out += [node.get(key) for key in ("then", "else", "additionalProperties", "items")]
    return [n for n in out if isinstance(n, dict)]


#: :func:`_whole_reaching`'s answers, by kind and folder, each beside the schema document it was found in: the ids
#: stand only while that very document is :func:`_ecma_document`'s (a test that clears that cache builds another,
#: whose nodes' ids the old set does not hold, or holds by chance: a float in a synth config went unfound).
_REACHING: dict[tuple[str, str], tuple[Any, frozenset[int]]] = {}


def _whole_reaching(kind: str, folder: str) -> frozenset[int]:
    """The ``id`` of every node of :func:`_ecma_document`'s ``kind`` schema (held for the process, so the ids
    stand) from which :func:`whole_floats`'s walk can reach a node that takes only whole numbers
    (:func:`_whole_only`), itself included: the only nodes the walk enters. A value under any other node (a
    measurement's ``tokens_per_s``, a card's ``value``: ``number``) can hold no finding, so the walk's answer is the
    same and a cold ``check`` walks 10,814 nodes fewer times (cold38, session 35). Found by a fixed point over the
    walk's edges (:func:`_walked`; a ``$ref`` cycle included). Kept beside the document it walked
    (:data:`_REACHING`), found again for another."""
    root = _ecma_document(kind, folder)
    kept = _REACHING.get((kind, folder))
    if kept is not None and kept[0] is root:
        return kept[1]
    nodes: dict[int, Mapping[str, Any]] = {}
    todo: list[Any] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict) and id(node) not in nodes:
            nodes[id(node)] = node
            todo += _walked(node, root)
    edges = {i: [id(n) for n in _walked(node, root)] for i, node in nodes.items()}
    reaching = {i for i, node in nodes.items() if _whole_only(node)}
    grown = True
    while grown:
        grown = False
        for i, targets in edges.items():
            if i not in reaching and any(t in reaching for t in targets):
                reaching.add(i)
                grown = True
    found = frozenset(reaching)
    _REACHING[(kind, folder)] = (root, found)
    return found


def _float_holders(document: Any) -> set[int]:
    """The ``id`` of every table and array of ``document`` (itself included) that holds a finite float, nested at
    any depth: the only values :func:`whole_floats` walks into (a checkpoint entry's tensor table, thousands of rows
    of integers, is passed by). Empty when the document holds no float. Recursive (three times faster than a walk
    with a stack of its own); a document nested past the interpreter's recursion is walked without it."""
    marked: set[int] = set()

    def holds(value: Any) -> bool:
        found = False
        for item in value.values() if isinstance(value, dict) else value:
            kind = type(item)
            if kind is int or kind is str or kind is bool:  # the most of a document, told apart at once
                continue
            if isinstance(item, float):
                found = found or math.isfinite(item)
            elif isinstance(item, dict | list) and holds(item):
                found = True
        if found:
            marked.add(id(value))
        return found

    if not isinstance(document, dict | list):
        return marked
    try:
        holds(document)
    except RecursionError:
        marked.clear()
        todo: list[tuple[Any, tuple[int, ...]]] = [(document, ())]
        while todo:
            item, above = todo.pop()
            if isinstance(item, float):
                if math.isfinite(item) and above and above[-1] not in marked:
                    marked.update(above)
            elif isinstance(item, dict | list):
                inner = (*above, id(item))
                todo.extend((v, inner) for v in (item.values() if isinstance(item, dict) else item))
    return marked


def _words(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _branches(error: Any, root: Mapping[str, Any], document: Any) -> str:
    """What each allowed value of a key whose value is not allowed (an ``enum`` error) would require besides, when
    the table holding it requires keys by that value (``allOf`` of ``if`` ``{KEY: const|enum}`` ``then`` ``required``:
    a source record's ``kind``): ``; with kind 'registry' it needs path (missing here); with any other kind, url, date
    and retrieved (missing here: url, date)``, else ``""``. A value no branch matches hides every branch's requirement,
    so without this a user who fixed the value met the next round of errors (session 13)."""
    if error.validator != "enum" or len(error.absolute_schema_path) < 3 or not error.absolute_path:
        return ""
    *table_path, properties, key, _ = error.absolute_schema_path
    if properties != "properties" or key != error.absolute_path[-1]:
        return ""
    table: Any = root
    for part in table_path:
        try:
            table = table[part]
        except (KeyError, IndexError, TypeError):
            return ""
    instance: Any = document
    for part in list(error.absolute_path)[:-1]:
        instance = instance[part]
    said = []
    branches = table.get("allOf", []) if isinstance(table, Mapping) else []
    for i, branch in enumerate(branches):
        condition = branch.get("if", {}).get("properties", {}).get(key) if isinstance(branch, Mapping) else None
        needed = branch.get("then", {}).get("required") if isinstance(branch, Mapping) else None
        if not isinstance(condition, Mapping) or not isinstance(needed, list) or not needed:
            continue
        values = [condition["const"]] if "const" in condition else list(condition.get("enum", []))
        if not values:
            continue
        last = i == len(branches) - 1 and len(values) > 3
        which = f"any other {key}" if last else f"{key} {' or '.join(repr(v) for v in values)}"
        missing = [k for k in needed if not isinstance(instance, Mapping) or k not in instance]
        lacks = f" (missing here: {', '.join(missing)})" if missing else " (given here)"
        said.append(f"with {which} it needs {_words(needed)}{lacks}")
    return "; " + "; ".join(said) if said else ""


#: The most values (every table, array and scalar, nested) of an invalid document ``jsonschema`` is asked to explain:
#: it walks about 25,000 a second, so an invalid file of 300,000 (a checkpoint entry's metadata value nested 1,000 ×
#: 300 deep, 629 KB, with a wrong ``header.version``) took 12 s. The largest shipped file, deepseek-v3's entry, holds
#: 8,978. A larger invalid document is explained in ``jsonschema-rs``'s words instead (:func:`_compiled_problems`).
MAX_EXPLAINED = 32_768
#: The most problems listed for a document too large for ``jsonschema`` (:data:`MAX_EXPLAINED`), or with more than
#: :data:`MAX_EXPLAINED_ERRORS` problems.
MAX_COMPILED_PROBLEMS = 20
#: The most errors ``jsonschema`` is asked to find in one document (it finds them lazily, about 120 µs each): past it
#: the first :data:`MAX_COMPILED_PROBLEMS` lines by key path are listed and the rest counted as "more". A routing
#: record of 30,000 derivation inputs (222 KB, under its 256 KiB cap and :data:`MAX_EXPLAINED`) printed 30,003 lines
#: in 3.8 s of CPU and 278 MB (attack65).
MAX_EXPLAINED_ERRORS = 200
#: The most keys a table of an invalid document too large for ``jsonschema`` may hold for ``jsonschema-rs`` to be
#: asked why: each of its errors carries the table it is about, converted to Python, and its message names every key
#: not allowed. A card of 75,000 one-key tables (964 KB) took ``passprice facts`` 2.5 s of CPU and 600 MB, 1.1 s of
#: it in ``jsonschema-rs`` (round 23); the largest table of a shipped file holds 34 keys.
MAX_TABLE_KEYS = 4096
#: The most tables and arrays an invalid document may hold for ``jsonschema-rs`` to be asked why
#: (:func:`_compiled_problems`): each is converted for it. attack105: a card of 2,024 keys, each a chain of 30
#: one-key tables (``x0.k0.k1…k29 = 1``: 60,721 tables, 250 KB, no table past :data:`MAX_TABLE_KEYS`), cost ``check``
#: about 1.3 s of ``jsonschema-rs`` under a profiler, and four such files under 1 MB in all (three as locks) 1.92-2.63
#: s of CPU and 460-480 MiB (a clean ``check`` 0.58 s, load 8). The largest shipped file, deepseek-v3's entry, holds
#: 2,257.
MAX_TABLES = 32_768


def _values_past(document: Any, limit: int) -> bool:
    """Whether ``document`` holds more than ``limit`` values jsonschema would walk (tables, arrays and scalars,
    nested), counted without recursion and stopping at ``limit``. An array longer than :data:`WALKED_ITEMS` counts
    as one value: every schema bounds its arrays and walks their items only within the bound (``if``/``then``), so
    jsonschema refuses such an array by its length without walking it (a checkpoint entry's 120,000 float32s, a
    routing record's 100,000 names: about 1 s in all)."""
    todo = [document]
    seen = 0
    while todo:
        value = todo.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(value, dict):
            todo.extend(value.values())
        elif isinstance(value, list) and len(value) <= WALKED_ITEMS:
            todo.extend(value)
    return False


#: The longest array the schemas walk item by item (:func:`_values_past`): the bound of a checkpoint entry's arrays
#: (the header reader's ``KEEP_ARRAY_LIMIT``), the tightest the schemas give.
WALKED_ITEMS = 1024


def _short_instance(message: str) -> str:
    """``message`` (``jsonschema-rs``'s) with the JSON value it opens with (``{"type": …} is not valid under …``, the
    whole value, perhaps megabytes of it) cut to its first 100 characters."""
    if message[:1] not in ('{', '[', '"'):
        return message
    try:
        _, end = json.JSONDecoder().raw_decode(message)
    except ValueError:
        return message
    return message if end <= 100 else f"{message[:100]}…{message[end:]}"


def _wide_table(document: Any) -> str | None:
    """The line refusing an invalid ``document`` for its first table (depth first) of more than
    :data:`MAX_TABLE_KEYS` keys, ``None`` where it holds none: no passprice file holds one, and asking either
    validator why such a file is invalid walks every key (a routing record's 30,000 derivation inputs: 0.5 s in
    ``jsonschema`` after its first errors, attack65). Raises nothing."""
    todo: list[tuple[tuple[Any, ...], Any]] = [((), document)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, dict) and len(value) > MAX_TABLE_KEYS:
            return (f"{_key_path(where)}: a table of {len(value):,} keys (no passprice file holds one of more than "
                    f"{MAX_TABLE_KEYS:,}, and this file does not validate): make it smaller")
        if isinstance(value, dict):
            todo.extend(((*where, k), v) for k, v in value.items())
        elif isinstance(value, list):
            todo.extend(((*where, i), v) for i, v in enumerate(value))
    return None


def _shape(document: Any) -> tuple[int, int]:
    """The tables and arrays ``document`` holds, and the most keys one table of them holds: one walk, no key path
    made (:func:`_compiled_problems`'s test of :data:`MAX_TABLES`). Raises nothing."""
    tables = widest = 0
    todo = [document]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            tables += 1
            widest = max(widest, len(value))
            todo.extend(value.values())
        elif isinstance(value, list):
            tables += 1
            todo.extend(value)
    return tables, widest


def _compiled_problems(document: Any, kind: str, folder: str) -> list[str]:
    """The problems of a document too large for ``jsonschema`` to walk in time (:data:`MAX_EXPLAINED`), one line
    each, ``KEY.PATH: what was wrong`` in ``jsonschema-rs``'s words (the value it opens with cut to 100 characters), the
    first :data:`MAX_COMPILED_PROBLEMS` by key path, then how many more; a TOML date or time (no JSON value, which
    ``jsonschema-rs`` cannot take) is named by its key path. Never empty for an invalid document."""
    import datetime
    import itertools

    tables, widest = _shape(document)
    if tables > MAX_TABLES:  # said before the walks below, which make each value's key path (attack105)
        wide = _wide_table(document) if widest > MAX_TABLE_KEYS else None
        return [wide if wide is not None else
                f"(top level): {tables:,} tables and arrays (no passprice file holds more than {MAX_TABLES:,}, and "
                "this file does not validate): make it smaller"]
    todo: list[tuple[tuple[Any, ...], Any]] = [((), document)]
    while todo:  # a date, time or datetime anywhere: no schema of passprice's holds one
        where, value = todo.pop()
        if isinstance(value, datetime.date | datetime.time):
            return [f"{_key_path(where)}: {shown_value(value)} is a TOML date or time, which no passprice file holds "
                    "here (write it as a string)"]
        if isinstance(value, dict):
            todo.extend(((*where, k), v) for k, v in value.items())
        elif isinstance(value, list):
            todo.extend(((*where, i), v) for i, v in enumerate(value))
    wide = _wide_table(document)
    if wide is not None:
        return [wide]
    fast = _fast_validator(kind, folder)
    lines: list[str] = []
    if fast is not None:
        try:
            with signals_held():
                found = list(itertools.islice(fast.iter_errors(document), 10 * MAX_COMPILED_PROBLEMS))
        except Exception:
            found = []
        for error in found:
            lines.append(f"{_key_path(list(error.instance_path))}: {_short_instance(str(error.message))}")
    lines = sorted(set(lines))
    if not lines:
        return [f"(top level): more than {MAX_EXPLAINED:,} values, and not valid: make it smaller"]
    more = len(lines) - MAX_COMPILED_PROBLEMS
    return lines[:MAX_COMPILED_PROBLEMS] + ([f"(top level): and {more} more problems"] if more > 0 else [])


def validate(document: Mapping[str, Any], kind: str, source: str, folder: Path | None = None) -> None:
    """Check ``document`` (read from ``source``) against the ``kind`` schema.

    Raises :class:`SchemaError` listing every problem, each as ``SOURCE: KEY.PATH: what was wrong``.
    """
    found = problems(document, kind, folder)
    if found:
        other = record_kind(document)
        if other is not None and other != kind and kind in _MARKS:
            # Another kind of record (round 18: `--stack ../cards/x` read a card file as a stack, three lines of
            # stray keys): one line naming what the file is, at the key the wanted kind would have.
            raise SchemaError(source, [
                f"{_MARKS[kind][0]}: missing (required): this is a {other} file (it has {_MARKS[other][1]}), not a "
                f"{kind} file"
            ])
        raise SchemaError(source, found)


#: The table (or keys) by which each kind of registry record is known: what :func:`record_kind` looks for, and what
#: a record of another kind is said to lack.
_MARKS = {
    "lock": ("lock", "a [lock] table"),
    "stack": ("stack", "a [stack] table"),
    "routing": ("routing", "a [routing] table"),
    "draft": ("method", "a [method] table"),
    "checkpoint": ("entry", "an [entry] table"),
    "measurement": ("run", "[[run]] tables"),
    "source": ("source", "a [source] table"),
    "card": ("card", "a [card] table"),
    "serving": ("checkpoint", "checkpoint and card names"),
    "sweep": ("servings", "servings and batches"),
}


def record_kind(document: Mapping[str, Any]) -> str | None:
    """The kind of registry record ``document`` (a parsed TOML file) is by its marking tables (:data:`_MARKS`):
    ``lock``, ``stack``, ``routing``, ``draft``, ``checkpoint``, ``measurement``, ``source``, ``card``, ``serving``
    or ``sweep``; ``None`` when it has no record's marks. A guess for an error line, never a validation."""
    def table(key: str) -> bool:
        return isinstance(document.get(key), dict)

    if table("lock"):
        return "lock"
    if table("stack"):
        return "stack"
    if table("routing") and "hot_share" in document:
        return "routing"
    if table("method") and "acceptance" in document:
        return "draft"
    if table("entry") and table("header"):
        return "checkpoint"
    if table("source"):
        return "measurement" if isinstance(document.get("run"), list) else "source"
    if table("card") and table("memory"):
        return "card"
    if isinstance(document.get("checkpoint"), str) and isinstance(document.get("card"), str):
        return "serving"
    if "servings" in document and "batches" in document:
        return "sweep"
    return None


#: Bytes a TOML file passprice reads may have (its largest, a checkpoint entry's tensor table, is a few MB): past it
#: the file is refused, not read whole (``/dev/zero`` has no end).
MAX_TOML_BYTES = 64 << 20


#: Bytes a schema file (``schema/*.json``, the package's or a side's) may hold: the largest shipped,
#: ``lock.schema.json``, is 48 KB; 1 MiB is 21 times that. Past it the file is refused unread (``diff`` sizes a
#: revision's by ``git ls-tree -l``): read up to :data:`MAX_TOML_BYTES`, a 60 MB committed schema cost a review
#: 64 MiB of memory first (tests/test_blobcap162.py).
MAX_SCHEMA_BYTES = 1 << 20


def schema_too_large(where: object, size: int) -> InputError:
    """The refusal of the schema file at ``where`` (a path or ``revision:path``) of ``size`` bytes, past
    :data:`MAX_SCHEMA_BYTES`."""
    return InputError(f"{where}: larger than 1 MiB, the most a schema file may hold ({size:,} bytes; the largest "
                      "shipped is 48 KB)")


#: Bytes a registry file of one kind may hold before it is parsed, unless :data:`FILE_BYTES_VARIABLE` says otherwise
#: (issue 13): the standard library's ``tomllib`` costs up to about 1.1 s of CPU a MB of hostile but valid TOML
#: (75,000 one-key tables: 1.46 s for 1.29 MB; an array of 480,000 integers: 1.13 s for 960 KB), so ``diff`` of one
#: such 960 KB card ran 2.5 s of CPU. The largest shipped files: a stack 93 KB, a measurement 51 KB, a card or a lock
#: 16 KB, a routing record or a drafting method 3 KB, a source 2 KB, a serving 1 KB; 256 KiB is 2.5 times the largest
#: and parses in at most about 0.3 s. A checkpoint entry (its tensor table: 126 KB shipped, a few MB for a model of
#: many unfused expert tensors) keeps :data:`MAX_TOML_BYTES`.
MAX_FILE_BYTES = 256 << 10
#: The kinds whose files may hold more than :data:`MAX_FILE_BYTES` (and how much: a checkpoint entry
#: :data:`MAX_ENTRY_BYTES` unless :data:`HEADER_CAP_VARIABLE` is set, :func:`kind_cap`).
MAX_KIND_BYTES = {"checkpoint": MAX_TOML_BYTES}
#: Bytes a checkpoint entry may hold under the header reader's default cap (attack round 57): what ``import`` writes
#: is bounded by that cap (2,048 tensors, 512 keys, 4,096 array elements and 1 MiB of text kept, counted as the entry
#: writes it: ``gguf_header.written_bytes``), a few MB at most (the largest shipped, DeepSeek-V3's, 126 KB), and
#: ``import`` refuses an entry past it (it would not read back). At 64 MiB a hand-made entry of one 50 MB string took
#: ``checkpoints`` 14 s and ``check`` 23 s (470 MiB) to parse (``tomllib``: 0.18 s of CPU a MB of a basic string, about
#: 1.1 s a MB of one-key tables), which a registry file under the cap is never refused for.
MAX_ENTRY_BYTES = 8 << 20
#: ``passprice.gguf_header.CAP_VARIABLE`` (not imported: a price reads entries, never the header reader): set past the
#: reader's default cap, it raises the reader's budgets, so an entry may hold up to :data:`MAX_TOML_BYTES`.
HEADER_CAP_VARIABLE = "PASSPRICE_MAX_HEADER_BYTES"
#: The environment variable that raises (or lowers) :data:`MAX_FILE_BYTES` for every kind it covers.
FILE_BYTES_VARIABLE = "PASSPRICE_MAX_FILE_BYTES"


#: ``passprice.gguf_header.MAX_HEADER_BYTES`` (not imported, as :data:`HEADER_CAP_VARIABLE`; a test holds them equal).
HEADER_READER_CAP = 32 << 20


def header_cap_raised() -> bool:
    """Whether :data:`HEADER_CAP_VARIABLE` raises the header reader's cap: a whole number of bytes (ASCII digits,
    blanks around them) past :data:`HEADER_READER_CAP`. Only then may a checkpoint entry hold more than
    :data:`MAX_ENTRY_BYTES` (and :data:`MAX_ENTRY_SEPARATORS`): set to 24 (a lower cap, whose reader keeps less) it let
    a 50 MB entry be parsed (attack round 58); a value the reader refuses (``0``, ``-1``, ``1e99``, text) is refused
    before any command runs (:mod:`passprice.settings`) and raises nothing here. Raises nothing."""
    digits = os.environ.get(HEADER_CAP_VARIABLE, "").strip()
    return re.fullmatch(r"[0-9]{1,30}", digits, flags=re.ASCII) is not None and int(digits) > HEADER_READER_CAP


def kind_cap(kind: str) -> int:
    """The most bytes a file of ``kind`` (a schema's name: ``card``, ``stack``, ``checkpoint`` ...) may hold before it
    is parsed: a checkpoint entry :data:`MAX_ENTRY_BYTES` while :data:`HEADER_CAP_VARIABLE` is not set;
    :data:`MAX_KIND_BYTES` for its kind, else :data:`FILE_BYTES_VARIABLE` when set and not empty, else
    :data:`MAX_FILE_BYTES`. Raises :class:`InputError` when the variable is not a whole number of bytes from 1 to
    :data:`MAX_TOML_BYTES`."""

    if kind == "checkpoint" and not header_cap_raised():
        return MAX_ENTRY_BYTES
    if kind in MAX_KIND_BYTES:
        return MAX_KIND_BYTES[kind]
    text = os.environ.get(FILE_BYTES_VARIABLE)
    if not text:
        return MAX_FILE_BYTES
    digits = text.strip()
    if not re.fullmatch(r"[0-9]{1,10}", digits, flags=re.ASCII) or not 1 <= int(digits) <= MAX_TOML_BYTES:
        raise InputError(
            f"{FILE_BYTES_VARIABLE}: {text[:40]!r} is not a number of bytes (a whole number from 1 to {MAX_TOML_BYTES})"
        )
    return int(digits)


def _size(size: int) -> str:
    """``size`` bytes in words: ``256 KiB``, ``3 MiB``, ``1,000 bytes`` or ``1 byte``."""
    for shift, unit in ((20, "MiB"), (10, "KiB")):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return "1 byte" if size == 1 else f"{size:,} bytes"  # PASSPRICE_MAX_FILE_BYTES=1 said "1 bytes" (round 29)


def require_size(where: object, kind: str, size: int) -> None:
    """Raise :class:`InputError` (one line naming ``where``, a path or ``revision:path``) when ``size`` bytes is more
    than a ``kind`` file may hold (:func:`kind_cap`): checked before the file is parsed."""
    cap = kind_cap(kind)
    if size > cap:
        if kind == "checkpoint" and cap == MAX_ENTRY_BYTES:
            how = f"; with {HEADER_CAP_VARIABLE} set past {_size(HEADER_READER_CAP)}, {_size(MAX_TOML_BYTES)}"
        else:
            how = "" if kind in MAX_KIND_BYTES else f"; {FILE_BYTES_VARIABLE}=BYTES raises the cap"
        raise InputError(f"{where}: larger than {_size(cap)}, the most a {kind} file may hold ({size:,} bytes{how})")


#: The most lines a checkpoint entry may hold before it is parsed (attack round 58): ``import`` writes one line a
#: shard, a tensor and a metadata key (the schema's 2,048, 2,048 and 512) and about 30 more, under 4,700 (the largest
#: shipped, DeepSeek-V3's, 1,166); 8 MiB of one-key tables (``[t1]``, ``a = 1``: 1.06 million lines) cost ``tomllib``
#: 6.5-7 s of CPU and 594 MiB before ``checkpoints`` printed its one line. 8,192 such lines parse in about 0.05 s.
MAX_ENTRY_LINES = 8192
#: The most separators (``,``, ``=``, ``.``, ``[``, ``{`` and line ends outside strings) a checkpoint entry may hold
#: before it is parsed, which bounds what one line can hold: ``import`` writes about 16 a tensor, 9 a shard and one an
#: array element kept, under about 64,000 (DeepSeek-V3's 15,769); 8 MiB of ``a = [1,1,…]`` (4.2 million) cost
#: ``tomllib`` 9.6 s, 131,072 about 0.15-0.4 s. Eight times as many with :data:`HEADER_CAP_VARIABLE` set (whose
#: reader keeps more elements). A key's dots and an array's or inline table's opening are counted since attack105:
#: 7,879 lines of 31-part dotted keys (236,370 parts, 971,982 bytes, under 8,192 lines and 131,072 of the others)
#: cost ``check`` 1.70-2.21 s of CPU (a clean ``check`` 0.58 s, load 8), ``tomllib`` making each part's table; 7,879
#: lines of arrays nested 50 deep, 1.66 s.
MAX_ENTRY_SEPARATORS = 1 << 17


def _separators(data: bytes) -> int:
    """The separators :data:`MAX_ENTRY_SEPARATORS` counts in ``data`` (line ends left to the caller): one pass over
    the bytes (what ``translate`` deletes), not five ``bytes.count``; inside a snapshot, counted once for each bytes
    object (a file read once a snapshot is checked by each reader that loads it: 446 counts of 137 texts in a cold
    ``check``, 160 M instructions, 2 %: tests/test_cold124.py)."""
    return _counts(data)[0]


def _counts(data: bytes) -> tuple[int, int]:
    """:func:`_separators` of ``data`` and its dots (``data.count(b".")``); inside a snapshot, counted once for each
    bytes object."""
    from passprice import snapshot

    if not snapshot.active():
        return _counted(data)
    return snapshot.made(("separators", data), lambda: _counted(data))


def _counted(data: bytes) -> tuple[int, int]:
    """How many of ``data``'s bytes are ``,``, ``=``, ``.``, ``[`` or ``{`` (the sum of their five counts), and how
    many are ``.``."""
    return len(data) - len(data.translate(None, b",=.[{")), data.count(b".")


@functools.cache
def _one_line_string() -> re.Pattern[bytes]:
    """A TOML basic or literal string on one line (its escapes kept inside it), or one left open taken to the end of
    its line: every string start matches at once, so no start is scanned twice (a pattern needing the closing quote
    re-scanned the rest of the line from each quote of ``"\\"\\"\\"…`` left open: 1.8 s for 300 KB, round 58). A
    string's body is a run of plain bytes, then escapes each followed by its run, taken possessively (``*+``): the
    same matches as the alternation ``(?:[^"\\\n]|\\[^\n])*`` it replaced (the longest run of its pieces always ends
    where the rest matches, so nothing is given back), in a third of the instructions: the 171 KB llamacpp lock's
    strings were 45 M of a price's instructions, taken out at every read (:func:`shape_problem`;
    ``tests/test_afresh125.py``)."""
    return re.compile(rb'"[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+\\?(?:"|(?=\n)|\Z)|\'[^\'\n]*+(?:\'|(?=\n)|\Z)')


def require_entry_shape(where: object, data: bytes) -> None:
    """Raise :class:`InputError` (one line naming ``where``) when the checkpoint entry ``data`` holds more than
    :data:`MAX_ENTRY_LINES` lines or :data:`MAX_ENTRY_SEPARATORS` separators outside its strings (every ``,``,
    ``=``, ``.``, ``[``, ``{`` and line end; a text with a multi-line string delimiter, which ``import`` never
    writes, counted whole): checked before it is parsed, by byte counts (about 10 ms for 8 MiB), since ``tomllib``
    costs up to 0.8 s of CPU a MB of hostile but valid TOML under the 8 MiB an entry may hold. What ``import`` writes
    is held to it too."""
    lines = data.count(b"\n")
    if lines > MAX_ENTRY_LINES:
        raise InputError(
            f"{where}: {lines:,} lines, past the {MAX_ENTRY_LINES:,} a checkpoint entry may hold (import writes one a "
            "tensor, shard and metadata key): not parsed"
        )
    cap = MAX_ENTRY_SEPARATORS * (8 if header_cap_raised() else 1)
    if _separators(data) + lines <= cap:
        return
    bare = data if b'"""' in data or b"'''" in data else _one_line_string().sub(b"", data)
    found = _separators(bare) + lines
    if found > cap:
        more = "" if cap > MAX_ENTRY_SEPARATORS else (
            f" (8 times as many with {HEADER_CAP_VARIABLE} set past {_size(HEADER_READER_CAP)})")
        raise InputError(
            f"{where}: {found:,} separators (',', '=', '.', '[', '{{' and line ends outside strings), past the {cap:,} "
            "a checkpoint "
            f"entry may hold{more}: not parsed"
        )


#: The most separators (``,``, ``=``, ``.``, ``[`` and ``{`` outside one-line strings and comments: as
#: :data:`MAX_ENTRY_SEPARATORS` counts them, less line ends) a file of a kind other than a checkpoint entry may hold
#: before it is parsed, by
#: kind (:func:`kind_separators`); a kind not named here may hold :data:`MAX_FILE_SEPARATORS`. ``tomllib`` costs up to
#: about 2.4 µs of CPU a separator (31-part dotted keys; an array of integers 1.5 µs, one-key tables 0.5 µs), so a
#: file under its byte cap could cost it 0.25 s (a 242 KB card of 2,024 keys of 31 parts, 62,744 separators): four
#: such cards added on HEAD held ``diff`` at 2.2-3.0 s of CPU (``tests/test_bound111.py``). The largest shipped: a
#: lock 12,116 (171 KB: 0.071 a byte, so about 18,500 at the 256 KiB a lock may hold), a stack 8,627 (93 KB: 0.093
#: a byte, 24,300 at 256 KiB), a measurement 1,780 (58 KB); a card 625, a drafting method 81, a routing record 41, a
#: serving 23, a source 14.
MAX_KIND_SEPARATORS = {"lock": 1 << 15, "stack": 1 << 15, "measurement": 1 << 14}
#: The most separators a file of a kind :data:`MAX_KIND_SEPARATORS` does not name may hold before it is parsed (a
#: card, drafting method, routing record, serving or source: the largest shipped, a card, holds 625): at most about
#: 10 ms of ``tomllib``.
MAX_FILE_SEPARATORS = 1 << 12


def kind_separators(kind: str) -> int:
    """The most separators a ``kind`` file (a schema's name) may hold before it is parsed: :data:`MAX_KIND_SEPARATORS`
    or :data:`MAX_FILE_SEPARATORS`, raised in proportion when :data:`FILE_BYTES_VARIABLE` raises the byte cap past
    :data:`MAX_FILE_BYTES` (a larger file of the same density holds as many more), a checkpoint entry's
    :data:`MAX_ENTRY_SEPARATORS` (times 8 with :data:`HEADER_CAP_VARIABLE` raised). Raises :class:`InputError` when
    the byte cap's variable is set wrong (:func:`kind_cap`)."""
    if kind == "checkpoint":
        return MAX_ENTRY_SEPARATORS * (8 if header_cap_raised() else 1)
    base = MAX_KIND_SEPARATORS.get(kind, MAX_FILE_SEPARATORS)
    cap = kind_cap(kind)
    return base if cap <= MAX_FILE_BYTES else -(-base * cap // MAX_FILE_BYTES)


#: A file other than a checkpoint entry may hold at most this many dots outside its strings and comments, and one
#: more each :data:`BYTES_A_DOT` bytes (:func:`shape_problem`): ``tomllib`` makes a table of each part of a dotted key
#: and passprice's checks walk it (about 2.4 µs of parse and 1.2 µs of walks a part), so with a cap a file alone, 68
#: cards of 4,090 separators each (988 KB, 31-part keys) still cost ``diff`` 1.75-2.2 s of CPU. The densest shipped
#: file holds one each 30 bytes (the 171 KB llamacpp lock: 5,696), every other at most one each 80; a file at the cap
#: of one each 16 bytes, one a 64th of a µs a byte: about 0.25 s a MB in all, whatever the files' number.
MAX_DOTS = 64
#: See :data:`MAX_DOTS`.
BYTES_A_DOT = 16
#: A file other than a checkpoint entry may hold at most :data:`MAX_DOTS` separators, and one more each
#: :data:`BYTES_A_SEPARATOR` bytes (:func:`shape_problem`): an array of integers ``[1,1,…]`` costs ``tomllib`` 1.5 µs a
#: separator at two bytes each (0.75 s a MB). The densest shipped file (but a checkpoint entry) holds one each 10.8
#: bytes (the llamacpp stack; the llamacpp lock one each 14); one each 5 bytes, about 0.3 s a MB.
BYTES_A_SEPARATOR = 5


@functools.cache
def _comments() -> re.Pattern[bytes]:
    """A TOML comment to its line's end (searched once the strings are out of the text)."""
    return re.compile(rb"#[^\n]*")


@functools.cache
def _nesting() -> re.Pattern[bytes]:
    """A run of more than 64 openings of arrays or inline tables (blanks, or a bare key and ``=``, between them),
    nesting past what any passprice file holds."""
    return re.compile(rb"[\[{](?:[ \t\r\n]*(?:[A-Za-z0-9_-]+[ \t]*=[ \t]*)?[\[{]){64,}")


def _refused_first(data: bytes, bare: bytes, separators: int, dots: int) -> bool:
    """Whether :func:`toml_loads` refuses ``data`` (``bare``: its text with strings and comments taken out) at no
    cost beyond what :func:`shape_problem` allows, in words of its own that say more: a dotted key of more than
    :data:`MAX_KEY_PARTS` parts (:func:`deep_key`, before ``tomllib`` is asked: its line and column), or nesting past
    the interpreter's recursion once the rest of the text is within ``separators`` and ``dots`` (``tomllib`` stops at
    the first nesting too deep: what it parses before it is bounded so). Raises nothing."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True  # refused as not UTF-8 before any parse
    if deep_key(text) is not None:
        return True
    if _nesting().search(bare) is None:
        return False
    rest = _nesting().sub(b"", bare)
    return _separators(rest) <= separators and rest.count(b".") <= dots


def shape_problem(kind: str, data: bytes) -> str | None:
    """What makes the ``kind`` file ``data`` (a schema's name; not a checkpoint entry, :func:`require_entry_shape`)
    too costly to parse, in words (``64,768 separators (…), past the 4,096 a card file may hold (…): not parsed``),
    or ``None``: more separators outside its one-line strings and comments (``,``, ``=``, ``.``, ``[`` and ``{``: not
    line ends, which a blank line costs ``tomllib`` next to nothing of, as a checkpoint entry counts them) than
    :func:`kind_separators` allows, or than :data:`MAX_DOTS` and one each :data:`BYTES_A_SEPARATOR` bytes, or more
    dots outside its strings and comments than :data:`MAX_DOTS` and one each :data:`BYTES_A_DOT` bytes. The first two
    bound one file's ``tomllib`` cost (about 80 ms at most), the last two any number of files' (about 0.25-0.3 s a
    MB). Counted on the bytes (``bytes.count``; the strings and comments taken out only when a raw count is past its
    cap; a text holding a multi-line string delimiter counted whole). Raises :class:`InputError` when the byte cap's
    variable is set wrong. A kind no registry file is (a sweep file, a model configuration: read once by the command
    given it, under its byte cap) is not counted."""
    if kind not in _LARGEST_SHIPPED:
        return None
    cap = kind_separators(kind)
    size = len(data)
    dense = MAX_DOTS + size // BYTES_A_SEPARATOR
    dotted = MAX_DOTS + size // BYTES_A_DOT
    separators, dots = _counts(data)
    if separators <= min(cap, dense) and dots <= dotted:
        return None
    if size < SHAPE_KEPT_FROM:
        return _shape_counted(kind, data, cap, dense, dotted)
    # A large file past a raw count: its verdict is kept in the cache by everything it is a function of (the kind,
    # the three caps, the bytes; the cache's key adds passprice's code), "" for none.
    from passprice import cache

    named = f"{kind}\0{cap}\0{dense}\0{dotted}\0".encode() + data
    kept = cache.kept_object("shape", named, str)
    if kept is not None:
        return kept or None
    found = _shape_counted(kind, data, cap, dense, dotted)
    cache.keep_object("shape", named, found or "")
    return found


#: The size from which a file past a raw count of :func:`shape_problem` has its verdict kept in the cache: taking its
#: strings and comments out costs about 90 instructions a byte (the 171 KB llamacpp lock: 15 M of every price under
#: it, against about 3 M to hash its bytes and read the entry back); a card's or serving's few KB cost less than that.
SHAPE_KEPT_FROM = 32 * 1024


def _shape_counted(kind: str, data: bytes, cap: int, dense: int, dotted: int) -> str | None:
    """:func:`shape_problem` of a ``kind`` file ``data`` past a raw count, counted with its strings and comments taken
    out; ``cap``, ``dense`` and ``dotted``: its separator, density and dot caps. Raises nothing."""
    size = len(data)
    whole = b'"""' in data or b"'''" in data
    bare = data if whole else _comments().sub(b"", _one_line_string().sub(b"", data))
    found = _separators(bare)
    if found <= min(cap, dense) and bare.count(b".") <= dotted:
        # Within every cap once strings and comments are out: no refusal, whatever :func:`_refused_first` would say
        # (it only turns one into None), so it is not asked: its key-run and nesting searches were 27 M instructions
        # of every price reading the 171 KB llamacpp lock, whose raw dots (13,663) are past its 10,789.
        return None
    if _refused_first(data, bare, min(cap, dense), dotted):
        return None
    said = "separators (',', '=', '.', '[' and '{' outside strings and comments)"
    if found > cap:
        largest = _LARGEST_SHIPPED.get(kind)
        shipped = "" if largest is None else f"the largest shipped holds {largest:,}; "
        return (f"{found:,} {said}, past the {cap:,} a {kind} file may hold ({shipped}{FILE_BYTES_VARIABLE}=BYTES "
                "raises it with the byte cap): not parsed")
    if found > dense:
        return (f"{found:,} {said} in {size:,} bytes, past the {dense:,} a file of its size may hold ({MAX_DOTS} and "
                f"one each {BYTES_A_SEPARATOR} bytes; the densest shipped file holds one each 10): not parsed")
    dots = bare.count(b".")
    if dots > dotted:
        return (f"{dots:,} dots outside strings and comments in {size:,} bytes, past the {dotted:,} a file of its "
                f"size may hold ({MAX_DOTS} and one each {BYTES_A_DOT} bytes; the densest shipped file holds one each "
                "30): not parsed")
    return None


def require_shape(where: object, kind: str, data: bytes) -> None:
    """Raise :class:`InputError` (one line naming ``where``, a path or ``revision:path``) when the ``kind`` file
    ``data`` is shaped to cost ``tomllib`` more than its kind's files may (:func:`shape_problem`; a checkpoint entry:
    :func:`require_entry_shape`, its lines too): checked on the bytes before the file is parsed, since ``tomllib``
    costs up to about 2.4 µs a separator (``tests/test_bound111.py``)."""
    if kind == "checkpoint":
        require_entry_shape(where, data)
        return
    problem = shape_problem(kind, data)
    if problem is not None:
        raise InputError(f"{where}: {problem}")


#: The most separators a shipped file of each kind holds (:data:`MAX_KIND_SEPARATORS`), said in a refusal.
_LARGEST_SHIPPED = {"lock": 12_116, "stack": 8_627, "measurement": 1_780, "card": 625, "draft": 81, "routing": 41,
                    "serving": 23, "source": 14}


def read_bytes(path: Path, kind: str | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (:func:`passprice.files.read_regular`: a FIFO, a device or a folder
    is refused before a byte is read, so no read blocks or runs without end). Raises :class:`InputError` naming the
    file when it is missing, not a regular file, cannot be read, or is larger than :data:`MAX_TOML_BYTES` or, with
    ``kind`` (a schema's name), than :func:`kind_cap` allows a ``kind`` file (:func:`require_size`'s line), said from
    the open file's size before a byte is read and at most ``cap + 1`` bytes read when it holds more than it said
    (a 50 MB checkpoint entry was read whole, 175-265 MiB at its peak, before it was refused: attack round 58).
    Inside a snapshot (:func:`passprice.snapshot.reading`) a file is read once (a caller passing ``kind`` still
    checks :func:`require_size` of what it gets: bytes read earlier without ``kind`` are not capped by it)."""
    from passprice import snapshot

    return snapshot.file_bytes(path, lambda: _read_record(path, kind))


def read_unkept(path: Path, kind: str | None = None) -> bytes:
    """:func:`read_bytes` of ``path`` without keeping its bytes in the snapshot: for a look over thousands of files of
    which a command uses a few (the locks' index, :func:`passprice.locks._lock_index`), so their bytes are let go as
    soon as they are looked at. Raises what :func:`read_bytes` raises."""
    from passprice import snapshot

    kept = snapshot.kept_bytes(path)
    return kept if kept is not None else _read_record(path, kind)


def _read_record(path: Path, kind: str | None = None) -> bytes:
    """:func:`read_regular` of ``path``, refusing a symbolic link inside a registry to a file outside it (the
    root: the nearest folder at or above the link's own holding ``facts/`` and ``registry/``): a pull request adding
    ``facts/cards/x.toml`` linked to a TOML file of the CI machine made ``check`` and ``diff --format comment`` quote
    its values in their error lines (``memory.bandwidth.value: 'hunter2-password' is not of type 'number'``), as a
    name inside a registry file naming a path outside it may not (:func:`passprice.registry.require_inside`). Only
    a link costs the walk up; a folder of the registry that is itself a link is not looked at."""
    require_link_inside(path)
    if kind is None:
        return read_regular(path, MAX_TOML_BYTES)
    return read_regular(path, kind_cap(kind), lambda size: require_size(path, kind, size))


def require_link_inside(path: Path) -> None:
    """Raise :class:`InputError` naming ``path`` when it is a symbolic link inside a registry (the nearest folder at
    or above the link's own holding ``facts/`` and ``registry/``) to a file outside it, or lies in a folder of the
    registry that is a link (or is reached through one) to a folder outside it (``facts/cards`` linked to a folder
    of the CI machine): such a file is neither read (:func:`read_bytes`) nor written through (``new-serving --force``
    over such a link wrote the serving onto the file outside, which then did not read back). Anything else passes;
    only a link on the way (its folder's resolved path, once a process, differs from its own) costs the walk up."""
    from passprice.registry import LINKED_OUT, _real

    here_text = os.path.dirname(os.path.abspath(path))
    linked = os.path.islink(path)
    try:
        folder_linked = _real(here_text) != os.path.normpath(here_text)
    except (OSError, ValueError):
        folder_linked = False  # a name the lookups refuse on their own
    if linked or folder_linked:
        from passprice.registry import Root, _is_root, within

        here = Path(here_text)
        for folder in (here, *here.parents):
            if _is_root(folder):
                if not within(Root(folder), path):
                    if linked:
                        raise InputError(
                            f"{path}: a symbolic link to {os.path.realpath(path)}, outside the registry ({folder}): "
                            "a registry's files lie inside it (copy the file in, or link to one inside)"
                        )
                    raise InputError(
                        f"{path}: lies in {_real(here_text)}, outside the registry ({folder}), through a symbolic "
                        f"link: {LINKED_OUT}"
                    )
                break


#: The most parts a dotted key may have (``a.b.c`` has 3; passprice's deepest, a lock's
#: ``facts."host.read".derivation.inputs.x``, 5). The standard library's ``tomllib`` keeps every prefix of a dotted key
#: it defines, so a key of n parts costs it n² (round 22: ``a.a.a…`` of 16,000 parts, a 32 KB card, took 1 GB and 5 s
#: of CPU; 200,000 in a table header, 400 KB, ran for minutes). tomlkit refuses past 100 levels.
MAX_KEY_PARTS = 64
#: A key's part (bare, basic or literal quoted).
_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""


@functools.cache
def _key_runs() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A run of key parts joined by dots, and one part with the dot after it: compiled at the first text with
    :data:`MAX_KEY_PARTS` dots, not at import (a price read from the cache parses no TOML: compiling them was 1.7 M of
    its 381 M instructions)."""
    return re.compile(rf"(?:{_KEY_PART}[ \t]*\.[ \t]*)+{_KEY_PART}"), re.compile(rf"{_KEY_PART}[ \t]*\.")


@functools.cache
def _quoted_ends() -> tuple[re.Pattern[str], dict[str, re.Pattern[str]]]:
    """What opens a string or a comment in TOML text, and what closes each kind of string (by its opening quotes),
    matched from just after the opening: a multi-line string closes at its first three quotes (up to two more quotes
    are its content's last), a one-line one at its quote (else, unterminated, at the line's end, where ``tomllib``
    refuses it). Compiled at the first text :func:`deep_key` searches, not at import."""
    return re.compile(r'"""|\'\'\'|["\'#]'), {
        '"""': re.compile(r'(?:[^"\\]|\\[\s\S]|"(?!""))*"{3,5}'),
        "'''": re.compile(r"(?:[^']|'(?!''))*'{3,5}"),
        '"': re.compile(r'(?:[^"\\\n]|\\.)*"'),
        "'": re.compile(r"[^'\n]*'"),
    }


def _in_string(text: str, at: int, scanned: list[int]) -> int | None:
    """Where the string or comment of the TOML ``text`` that holds offset ``at`` ends, or ``None`` when ``at`` lies
    outside every string and comment (a string's opening quote is outside it: a quoted key part starts there).
    ``scanned[0]`` is an offset outside any string up to which ``text`` is already read; it moves on, so a caller asking
    of offsets in increasing order reads ``text`` once (linear: each string's end is found by one match, an
    unterminated multi-line string running to the end as ``tomllib`` reads it)."""
    openers, ends = _quoted_ends()
    i = scanned[0]
    while True:
        opened = openers.search(text, i)
        if opened is None or opened.start() >= at:
            scanned[0] = i
            return None
        start, quote = opened.start(), opened.group()
        if quote == "#":
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
        else:
            closed = ends[quote].match(text, start + len(quote))
            if closed is not None:
                end = closed.end()
            elif len(quote) == 3:
                end = len(text)
            else:
                end = text.find("\n", start)
                end = len(text) if end < 0 else end
        if end > at:
            scanned[0] = end
            return end
        i = end


def deep_key(text: str) -> tuple[int, int] | None:
    """The line and column (1-based) of the first run of more than :data:`MAX_KEY_PARTS` key parts joined by dots in
    the TOML ``text`` outside its strings and comments, or ``None``. Linear in the text. A string value or a comment
    of many dotted parts (``note = "a.b.c…"``, valid TOML) is no key: ``tomllib`` reads it in its length (left103:
    a note of 100 dotted parts was refused as a key); a quoted key part is the key's (``"a"."a"… = 1``)."""
    if text.count(".") < MAX_KEY_PARTS:
        return None
    # A run holds no newline (no part does, nor the blanks between parts), so only a line of MAX_KEY_PARTS dots or
    # more can hold one: the runs are looked for only when there is such a line (a checkpoint entry's 10,000 dotted
    # tensor names, each a run of a few parts, cost the search 0.16 s of a cold check; the lines' dots, 2 ms).
    if all(line.count(".") < MAX_KEY_PARTS for line in text.split("\n")):
        return None
    dotted, part_dot = _key_runs()
    scanned = [0]
    at = 0
    while (m := dotted.search(text, at)) is not None:
        run = m.group()
        at = m.end()
        if run.count(".") >= MAX_KEY_PARTS and sum(1 for _ in part_dot.finditer(run)) >= MAX_KEY_PARTS:
            inside = _in_string(text, m.start(), scanned)
            if inside is not None:  # inside a string value or a comment: look on after it
                at = inside
                continue
            line = text.count("\n", 0, m.start()) + 1
            return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    return None


@functools.cache
def toml_refusal(message: str) -> ValueError:
    """A ``tomllib.TOMLDecodeError`` (:func:`_not_read`) saying ``message``: what a reader raises for a TOML text it
    refuses before parsing it (:func:`passprice.review.changes.side_toml`: past its kind's cap), so every caller's
    handling of a syntax error holds. Raises nothing."""
    return _not_read()(message)


def _not_read() -> type[ValueError]:
    """The error :func:`toml_loads` raises for what it refuses itself or ``tomllib`` fails on without a
    ``TOMLDecodeError``: a ``tomllib.TOMLDecodeError`` (every caller's handling of a syntax error holds), made with
    its message alone."""
    import tomllib

    class NotRead(tomllib.TOMLDecodeError):
        def __init__(self, message: str) -> None:
            ValueError.__init__(self, message)

    return NotRead


class Overflowed(float):
    """A number a TOML file wrote finite (``1e400``, ``-1_0e1_000``) that a float cannot hold: ``tomllib`` reads it
    as an infinity, which the schemas refuse, in Python's word for it: a serving's ``share = 1e400`` was "must be a
    finite number, not inf", a value the file does not hold (attack round 31). The float is the infinity (every
    comparison and sum as ``float('inf')``); ``typed`` is the text as the file wrote it, for the error line
    (:func:`shown_value`). Pickled as a plain float."""

    typed: str

    def __new__(cls, typed: str) -> Overflowed:
        """The infinity of ``typed`` (a TOML float's text, past ±1.8e308), remembering the text."""
        self = super().__new__(cls, typed.replace("_", ""))
        self.typed = typed
        return self

    def __reduce__(self) -> tuple[type[float], tuple[float]]:
        return (float, (float(self),))


class Underflowed(float):
    """A number a TOML or JSON file wrote with a digit other than 0 in it (``1e-400``) that a float cannot hold apart
    from zero: read as ``0.0`` (or ``-0.0``), it was said to be one in the error line (``memory.bandwidth.value: 0.0
    is less than the minimum of 1e-09``), a value the file does not hold, and where zero is allowed it passed as zero
    (attack round 33). It is no number to the schemas (:func:`_finite_number`): refused in the file's own text
    (:func:`underflowed`). ``typed`` is that text. Pickled as a plain float."""

    typed: str

    def __new__(cls, typed: str) -> Underflowed:
        """The zero of ``typed`` (a float's text nearer zero than 4.9e-324), remembering the text."""
        self = super().__new__(cls, typed.replace("_", ""))
        self.typed = typed
        return self

    def __reduce__(self) -> tuple[type[float], tuple[float]]:
        return (float, (float(self),))


def underflowed(value: Underflowed) -> str:
    """What is wrong with a number written apart from zero that a float holds only as zero (:class:`Underflowed`):
    ``1e-400 underflows a float (read as 0: nothing but 0 is nearer zero than ±4.9e-324): give a number a float
    holds``."""
    typed = value.typed if len(value.typed) <= 60 else f"{value.typed[:40]}… ({len(value.typed):,} characters)"
    return (f"{typed} underflows a float (read as 0: nothing but 0 is nearer zero than ±4.9e-324): give a number a "
            "float holds")


#: Whether any :class:`Underflowed` was read in this process: until one is, no document holds one, and the compiled
#: validator's "valid" (which reads one as the zero it is) stands unchecked (:func:`problems`).
_UNDERFLOWS = [0]

#: The text of each float a file wrote with an exponent or an underscore (``1e300``, ``1E5``, ``1_000.5``) that
#: Python writes otherwise (``1e+300``), by the float's ``id`` (the float kept beside it, so a reused ``id`` never
#: answers): an error line shows a value as the file wrote it (:func:`shown_value`). ``batch = 1e300`` was "1e+300
#: is greater than the maximum of 4294967295" (attack round 33). The newest :data:`MAX_TYPED` are kept.
_TYPED: dict[int, tuple[float, str]] = {}
MAX_TYPED = 4096


def parse_float(text: str) -> float:
    """A TOML or JSON float's value (``tomllib``'s and ``json``'s ``parse_float``): :class:`Overflowed` for one
    written finite that overflows a float (a model configuration's ``rms_norm_eps: 1e400`` was "must be a finite
    number, not inf" too), :class:`Underflowed` for one written apart from zero that a float holds only as zero
    (``1e-400``), else ``float(text)`` (its text kept for an error line when Python writes it otherwise,
    :data:`_TYPED`)."""
    value = float(text)
    if math.isinf(value) and "inf" not in text:
        return Overflowed(text)
    if value == 0.0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        _UNDERFLOWS[0] += 1
        return Underflowed(text)
    if ("e" in text or "E" in text or "_" in text) and "n" not in text and repr(value) != text:
        if len(_TYPED) >= MAX_TYPED:
            del _TYPED[next(iter(_TYPED))]
        _TYPED[id(value)] = (value, text)
    return value


def _holds_underflow(document: Any) -> bool:
    """Whether ``document`` holds an :class:`Underflowed` anywhere (walked only once one was read,
    :data:`_UNDERFLOWS`)."""
    if not _UNDERFLOWS[0]:
        return False
    todo = [document]
    while todo:
        value = todo.pop()
        if isinstance(value, Underflowed):
            return True
        if isinstance(value, dict):
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return False


def toml_loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``, refusing first a dotted key of more than :data:`MAX_KEY_PARTS` parts
    (:func:`deep_key`), which would cost ``tomllib`` the square of its parts. Raises ``tomllib.TOMLDecodeError``
    only: for that key (its message: the key's line and column, as tomllib's own), for arrays or tables nested past
    the interpreter's recursion (``tomllib`` raises ``RecursionError``) and for an integer of more digits than Python
    converts (``tomllib`` raises a bare ``ValueError``) — each caller catching ``TOMLDecodeError`` alone let either
    through as a traceback (round 23: ``passprice diff`` of a serving file holding ``x = [[[…]]]`` 5,000 deep, or an
    integer of 5,000 digits, on either side)."""
    import tomllib

    at = deep_key(text)
    if at is not None:
        raise _not_read()(f"a dotted key of more than {MAX_KEY_PARTS} parts (at line {at[0]}, column {at[1]})")
    plain = _flat_document(text)
    if plain is None:
        plain = _plain_document(text)
    if plain is None:
        plain = _with_plain_tensors(text)
    if plain is not None:
        return plain
    try:
        return tomllib.loads(text, parse_float=parse_float)
    except RecursionError:
        raise _not_read()("arrays or tables nested too deeply") from None
    except tomllib.TOMLDecodeError as e:
        end = " (at end of document)"
        if not str(e).endswith(end):
            raise
        raise _not_read()(f"{str(e)[: -len(end)]} {end_of_document(text)}") from None
    except ValueError as e:  # an integer past Python's 4,300 digits (less its advice to raise the limit)
        raise _not_read()(str(e).split(";")[0]) from None


def end_of_document(text: str) -> str:
    """Where ``text`` ends, as ``tomllib`` words a place: ``(at end of document: line L, column C)``, L and C counted
    from 1 as its other messages count them (C: the column just past the last character). ``tomllib`` says only
    ``(at end of document)`` for an error there — a truncated lock's ``Unterminated string`` named no line (a new
    user's finding, tests/test_walk128.py) — so every caller of :func:`toml_loads` gets the line of the cut."""
    line = text.count("\n") + 1
    column = len(text) - text.rfind("\n")  # rfind is -1 on the first line: column len(text) + 1
    return f"(at end of document: line {line}, column {column})"


#: The most characters a text :func:`_flat_document` reads may hold (a source record is 150 to 600): past it a file
#: is parsed by ``tomllib`` alone, which a line the flat reader does not take would then cost twice.
FLAT_CHARS = 4096


@functools.cache
def _flat_line() -> re.Pattern[str]:
    """One line of a flat TOML text (:func:`_flat_document`), compiled at the first such text."""
    return re.compile(
        r'(?:([A-Za-z0-9_-]+) = (?:"([^"\\\x00-\x1f\x7f]*)"|(0|[1-9][0-9]{0,18})|(true|false))'
        r"|\[([A-Za-z0-9_-]+)\]|#[^\x00-\x08\x0a-\x1f\x7f]*|)"
    )


def _flat_document(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` when every line of ``text`` (at most :data:`FLAT_CHARS` characters, no carriage
    return) is empty, a comment, a table header of one bare key (``[source]``) or ``KEY = VALUE`` written plainly
    (one bare key, one space each side of ``=``, nothing after the value: a basic string without escapes, tabs or
    control characters, a decimal integer of at most 19 digits without sign, underscore or leading zero, ``true`` or
    ``false``), no key written twice in a table and no table twice or over a key; else ``None`` (the caller parses it
    with ``tomllib``, which words every refusal). A source record (4,000 of them: 0.12 s of ``tomllib``) is one."""
    if len(text) > FLAT_CHARS or "\r" in text:
        return None
    line = _flat_line().fullmatch
    document: dict[str, Any] = {}
    table = document
    for written in text.split("\n"):
        found = line(written)
        if found is None:
            return None
        key, string, integer, boolean, header = found.groups()
        if key is not None:
            if key in table:
                return None
            table[key] = string if string is not None else int(integer) if integer is not None else boolean == "true"
        elif header is not None:
            if header in document:
                return None
            table = document[header] = {}
    return document


#: A key as :func:`_plain_document` reads one: bare, or a basic string without escapes or control characters.
_PLAIN_KEY = r'[A-Za-z0-9_-]+|"[^"\\\x00-\x1f\x7f]*"'
#: A key of an inline table as :func:`_plain_document` reads one: bare only.
_PLAIN_BARE = r"[A-Za-z0-9_-]+"
#: A value as :func:`_plain_document` reads one: a basic string without escapes, tabs or control characters; a
#: decimal number without ``+``, underscore or leading zero (a float with a fraction or an exponent or both); a boolean.
_PLAIN_SCALAR = r'"[^"\\\x00-\x1f\x7f]*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false'


@functools.cache
def _plain_patterns() -> tuple[re.Pattern[str], ...]:
    """One line of a plain TOML text (:func:`_plain_document`), one key part, one scalar, one item line of an array
    written over lines and one ``KEY = VALUE`` pair of an inline table: compiled at the first text the flat reader
    (:func:`_flat_document`) does not take."""
    scalar = _PLAIN_SCALAR
    inline = rf"\{{ ?{_PLAIN_BARE} = (?:{scalar})(?:, {_PLAIN_BARE} = (?:{scalar}))* ?\}}"
    line = re.compile(
        rf"(?:((?:{_PLAIN_KEY})(?:\.(?:{_PLAIN_KEY}))*) = "
        rf"({scalar}|\[(?:(?:{scalar})(?:, (?:{scalar}))*)?\]|{inline}|\[)"
        rf"|(\[\[?)((?:{_PLAIN_KEY})(?:\.(?:{_PLAIN_KEY}))*)\]\]?|#[^\x00-\x08\x0a-\x1f\x7f]*|)"
    )
    item = re.compile(rf" *({scalar}|{inline}),")
    pair = re.compile(rf"({_PLAIN_BARE}) = ({scalar})")
    return line, re.compile(_PLAIN_KEY), re.compile(scalar), item, pair


def _plain_value(written: str) -> Any:
    """The value of a scalar :data:`_PLAIN_SCALAR` matched, as ``tomllib`` reads it (a float by :func:`parse_float`,
    given the same text); :data:`_NOT_PLAIN` for an integer of more than 19 digits (``tomllib`` words its refusal)."""
    first = written[0]
    if first == '"':
        return written[1:-1]
    if first == "t" or first == "f":
        return first == "t"
    if "." in written or "e" in written or "E" in written:
        return parse_float(written)
    if len(written) > 20 or (len(written) == 20 and first != "-"):
        return _NOT_PLAIN
    return int(written)


#: What :func:`_plain_value` answers for a value the plain reader leaves to ``tomllib``.
_NOT_PLAIN = object()


def _plain_inline(written: str, pair: re.Pattern[str], frozen: dict[int, dict[str, Any]]) -> Any:
    """:func:`_plain_value` of ``written``, or, for an inline table of plain pairs (``{ value = 50, unit = "MiB" }``:
    bare keys, :data:`_PLAIN_SCALAR` values, as the line's pattern matched it), its table, listed in ``frozen`` (no
    later header or dotted key may add to it, as TOML says); :data:`_NOT_PLAIN` for a key written twice or a value
    :func:`_plain_value` leaves to ``tomllib``."""
    if written[0] != "{":
        return _plain_value(written)
    table: dict[str, Any] = {}
    for key, value in pair.findall(written):
        item = _plain_value(value)
        if key in table or item is _NOT_PLAIN:
            return _NOT_PLAIN
        table[key] = item
    frozen[id(table)] = table
    return table


def _plain_document(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text, parse_float=parse_float)`` when every line of ``text`` (no carriage return) is empty, a
    comment, a table header of dotted keys written plainly (``[facts."host.read".derivation]``: each part bare or a
    basic string without escapes, no space) naming a table no earlier header or key made, or ``KEY = VALUE`` written
    plainly (a key, or a dotted key of the header's parts, one space each side of ``=``, nothing after the value: a
    scalar of :data:`_PLAIN_SCALAR`, an array of them on the line, ``", "`` between them, an inline table of them
    with bare keys, ``{ value = 50, unit = "MiB" }``, or ``[`` opening an array written one item a line, each a scalar
    or such an inline table followed by ``,``, closed by ``]`` alone on its line) naming a key its table does not
    hold; else ``None`` (the caller parses it with ``tomllib``, which words every refusal). A lock file as passprice
    writes one is such a text: 1,000 copies of a 15 KB lock, each of its own bytes, cost ``tomllib`` 1.9 s
    (issue 13, scale88); read here line by line, a quarter of that. So are a card (its derivations' dotted keys and
    inline tables), a stack (its runs over lines) and a drafting method (``tests/test_cold124.py``: 416 M of a cold
    ``check``'s 8,128 M instructions). The rules kept are TOML 1.0's for these lines: a header's earlier parts are
    tables (made if missing, never through a value), its last part a table not made before (TOML lets ``[a]`` follow
    ``[a.b]``; left to ``tomllib``), a key once in its table; a dotted key's earlier parts are tables made by dotted
    keys of the same table (made if missing; through anything else, left to ``tomllib``); no header names or passes
    through a table a dotted key or an inline table made (left to ``tomllib``, which refuses some), and nothing adds
    to an inline table."""
    if "\r" in text:
        return None
    line, key_part, scalar, item_line, pair = _plain_patterns()
    match = line.fullmatch
    parts = key_part.findall
    scalars = scalar.findall
    document: dict[str, Any] = {}
    table = document
    arrays: dict[int, list[dict[str, Any]]] = {}  # the arrays of tables made, by identity (held: ids stay theirs)
    # Tables a dotted key made (``derivation.inputs.x = …``) and inline tables, by identity (each held in the
    # document): a later dotted key walks on only through the first; no header may name or pass through either.
    dotted: dict[int, dict[str, Any]] = {}
    frozen: dict[int, dict[str, Any]] = {}
    lines = iter(text.split("\n"))
    for written in lines:
        found = match(written)
        if found is None:
            return None
        key, value, opened, header = found.groups()
        if key is not None:
            into = table
            if "." in key:  # a dotted key (or a quoted part holding a dot: split as the header's parts are)
                names = [p[1:-1] if p[0] == '"' else p for p in parts(key)]
                for name in names[:-1]:
                    inner = into.get(name)
                    if inner is None:
                        inner = into[name] = {}
                        dotted[id(inner)] = inner
                    elif id(inner) not in dotted:  # a value, an inline table, a table a header made
                        return None
                    into = inner
                key = names[-1]
            elif key[0] == '"':
                key = key[1:-1]
            if key in into:
                return None
            if value == "[":  # an array over lines: one item a line, each followed by a comma, then "]" alone
                items: list[Any] = []
                for inside in lines:
                    if inside == "]":
                        break
                    row = item_line.fullmatch(inside)
                    if row is None:
                        return None
                    items.append(_plain_inline(row.group(1), pair, frozen))
                else:
                    return None  # never closed
                if _NOT_PLAIN in items:
                    return None
                into[key] = items
            elif value[0] == "[":
                items = [_plain_value(v) for v in scalars(value[1:-1])]
                if _NOT_PLAIN in items:
                    return None
                into[key] = items
            else:
                item = _plain_inline(value, pair, frozen)
                if item is _NOT_PLAIN:
                    return None
                into[key] = item
        elif header is not None:
            if len(opened) != len(written) - len(opened) - len(header):  # [[a] or [a]]
                return None
            names = [p[1:-1] if p[0] == '"' else p for p in parts(header)]
            table = document
            for name in names[:-1]:
                inner = table.get(name)
                if inner is None:
                    inner = table[name] = {}
                elif isinstance(inner, list) and id(inner) in arrays:
                    inner = inner[-1]  # into the last table of an array of tables, as TOML says
                elif not isinstance(inner, dict) or id(inner) in dotted or id(inner) in frozen:
                    return None
                table = inner
            last = table.get(names[-1])
            if last is None and len(opened) == 2:
                made: list[dict[str, Any]] = []
                arrays[id(made)] = made  # an array of tables (``[[a]]``), not an array a key wrote (``a = [...]``)
                table[names[-1]] = last = made
            if len(opened) == 2 and isinstance(last, list) and id(last) in arrays:
                last.append(table := {})
            elif last is not None:
                return None
            else:
                table[names[-1]] = table = {}
    return document


#: A TOML decimal integer as passprice writes one (no sign, underscore or leading zero; at most 19 digits).
_PLAIN_INT = r"(?:0|[1-9][0-9]{0,18})"
#: A basic string without escapes, quotes, tabs or control characters: its value is its text.
_PLAIN_STR = r'"[^"\\\x00-\x1f\x7f]*"'
#: One row of a checkpoint entry's tensor table as ``passprice import`` writes it, on a line of its own.
_TENSOR_ROW = (
    rf"  \{{ name = ({_PLAIN_STR}), type = \"([A-Za-z0-9_]+)\", dims = \[({_PLAIN_INT}(?:, {_PLAIN_INT})*)\], "
    rf"offset = ({_PLAIN_INT}), shard = ({_PLAIN_INT}) \}},\n"
)


@functools.cache
def _tensor_block() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A line ``tensors = [`` followed by rows (:data:`_TENSOR_ROW`) and the ``]`` closing them, and one row:
    compiled at the first text holding ``tensors = [``."""
    return re.compile(rf"^tensors = \[\n(?:{_TENSOR_ROW})+\]", re.MULTILINE), re.compile(_TENSOR_ROW)


def _with_plain_tensors(text: str) -> dict[str, Any] | None:
    """``tomllib.loads(text)`` (floats by :func:`parse_float`) when ``text`` holds a ``header.tensors`` table of
    plain rows (:data:`_TENSOR_ROW`), its rows read by one regular expression instead of ``tomllib``'s inline-table
    parser (10,021 rows, 0.25 s of a cold check's parse of the shipped entries; the rows in 10 ms); else ``None``,
    and the caller parses the text itself (so every refusal is ``tomllib``'s own, of the text as written).

    The rows are cut out and the array is parsed holding one string of 32 random hexadecimal digits in their place,
    its newlines kept (every later line and column as written). That string at ``header.tensors`` proves the cut
    began a statement ``tensors = [`` of the ``[header]`` table (at a line's start, inside a multi-line string or
    array no such string is parsed, nor read as a value of that key; no other text of the file can hold it but by a
    chance of 2^-128). In that statement, the rows (inline tables of five keys each, of plain strings and integers,
    each as its text says) and the one string parse alike, so the text parses as the cut text does, with the rows
    in their place; anything else (no such block, a parse error, the string elsewhere) answers ``None``."""
    if "\ntensors = [\n" not in text and not text.startswith("tensors = [\n"):
        return None
    import tomllib

    block, row = _tensor_block()
    found = block.search(text)
    if found is None:
        return None
    stand_in = os.urandom(16).hex()  # not secrets.token_hex: `import secrets` loads hmac and OpenSSL (some 30 ms)
    newlines = found.group().count("\n")
    # The plain reader first (tests/test_cold124.py: the rest of a shipped entry, its metadata's inline tables and
    # its shards over lines, is plain), given the statement on one line after the block's line ends: it takes a text
    # only when every line before is a whole statement of its own, so the statement begins one there too, and the
    # text then parses as the cut text below does (the same statement, the same text after its "]").
    blank = "\n" * newlines
    document = _plain_document(f'{text[: found.start()]}{blank}tensors = ["{stand_in}"]{text[found.end() :]}')
    if document is None:
        cut = f'tensors = ["{stand_in}",{blank}]'
        try:
            document = tomllib.loads(text[: found.start()] + cut + text[found.end() :], parse_float=parse_float)
        except (ValueError, RecursionError):  # TOMLDecodeError is a ValueError
            return None
    header = document.get("header")
    if not isinstance(header, dict) or header.get("tensors") != [stand_in]:
        return None
    header["tensors"] = [
        {
            "name": name[1:-1],
            "type": kind,
            "dims": [int(d) for d in dims.split(", ")],
            "offset": int(offset),
            "shard": int(shard),
        }
        for name, kind, dims, offset, shard in row.findall(text, found.start(), found.end())
    ]
    return document


def read_toml(path: Path, text: str | None = None) -> dict[str, Any]:
    """Parse the TOML file at ``path`` (or ``text`` read from it) with the standard library's ``tomllib``. Raises
    :class:`InputError` naming the file and the line and column of a syntax error, or that the file cannot be read,
    is larger than :data:`MAX_TOML_BYTES`, starts with a UTF-8 byte-order mark (refused, not skipped: TOML files
    are UTF-8 without one, and passprice rewrites files it edits byte for byte), nests too deeply or holds an
    integer of more digits than Python converts."""
    import tomllib  # here: a file served from the cache of validated files is never parsed

    if text is None:
        data = read_bytes(path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"{path}: byte {e.start}: not UTF-8 text") from None
    refuse_bom(path, text)  # tomllib's "Invalid statement (line 1, column 1)" would not say why
    try:
        return toml_loads(text)
    except RecursionError:
        raise InputError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML: {e}") from None
    except ValueError as e:  # an integer past Python's 4,300 digits (less its advice to raise the limit)
        raise InputError(f"{path}: not valid TOML: {str(e).split(';')[0]}") from None


def parse_bytes(path: Path, data: bytes) -> dict[str, Any]:
    """The TOML document of the file at ``path`` whose bytes are ``data`` (:func:`read_toml` of their text). Raises
    :class:`InputError` naming the file: the byte offset of the first byte that is not UTF-8, or what
    :func:`read_toml` raises."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start}: not UTF-8 text") from None
    return read_toml(path, text)


def content_digest(document: Mapping[str, Any]) -> bytes | None:
    """A BLAKE2b digest (32 bytes) of what a parsed TOML ``document`` holds, the order its keys were written in aside:
    two files differing only by comments, blank lines, spacing, how a string is quoted or in what order keys and
    tables come have one digest (issue 13, scale88: 1,000 copies of a lock each of its own bytes were each validated,
    digest-checked and structured). The document's canonical JSON (sorted keys, as a lock's own digest is taken):
    ``1`` and ``1.0``, ``true`` and ``1``, ``"1"`` and ``1`` differ. ``None`` for a document that holds what JSON
    does not (a date or time, ``nan`` or ``inf``) or a number written apart from zero that a float holds only as
    zero (:class:`Underflowed`, which JSON would write ``0.0``): such a document is its own. Raises nothing."""
    if _holds_underflow(document):
        return None
    try:
        text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    from hashlib import blake2b  # not blake2b_digest: it would hold the text's bytes among its recent objects

    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=32).digest()


#: Files of at most this many bytes are parsed and validated on every read, never kept in the validated-document
#: cache: a 138-byte source record is parsed and validated in 0.054 ms, its entry keyed and read back in 0.085 ms
#: (and first written in about 0.1-0.2 ms more: 4,000 of them made a first ``check`` create 4,000 entry files).
SMALL = 256


def load(
    path: Path,
    kind: str,
    folder: Path | None = None,
    data: bytes | None = None,
    check: tuple[str, Callable[[dict[str, Any], str], None]] | None = None,
    kept: bool = True,
    parsed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Read the TOML file at ``path`` (whose bytes are ``data`` when the caller has read them) and validate it
    against the ``kind`` schema; the parsed document. An unchanged file (the same bytes, schema and passprice) comes
    from the validated-document cache (:mod:`passprice.cache`) without being parsed or validated again.

    ``check``, a ``(name, function)`` pair: a further check of the schema-valid document (called with it and the
    file's path; it raises on a bad document), run when the file is parsed and held as passed by the cache entry,
    which is then kept under the kind ``KIND+NAME`` (a document stored without the check never answers for one).

    ``kept=False``: the document is neither looked up in nor stored to that cache, for a caller that keeps the object
    it builds from it instead (a serving file's :class:`~passprice.servings.ServingSpec`): one entry a file, not two,
    which halves what a first read of a registry of thousands of small files writes. A file of at most
    :data:`SMALL` bytes is never kept either (without ``check``): parsing it is cheaper than its cache entry.

    ``parsed``: the document :func:`parse_bytes` made of ``data``, when the caller parsed it (it is not parsed again).

    Raises :class:`InputError` (syntax, larger than :func:`kind_cap` allows a ``kind`` file, or what ``check``
    raises) or :class:`SchemaError` (every schema problem)."""
    from passprice import cache

    if data is None:
        data = read_bytes(path, kind)
    require_size(path, kind, len(data))  # before any parse (issue 13), and before the cache is asked
    require_shape(path, kind, data)
    raw = data
    schema_folder = folder or schema_dir()

    def build() -> dict[str, Any]:
        document = parse_bytes(path, raw) if parsed is None else parsed
        try:
            validate(document, kind, str(path), schema_folder)
        except SchemaError as e:
            e.document = document  # for a caller that words its refusal from it (locks._not_a_lock): not parsed again
            raise
        if check is not None:
            check[1](document, str(path))
        return document

    if len(raw) <= SMALL:  # parsed and validated faster than its cache entry is keyed and read, or first written
        kept = False
    entry_kind = kind if check is None else f"{kind}+{check[0]}"

    def shaped(document: dict[str, Any]) -> bool:
        return _shaped(document, kind, str(schema_folder)) and _absent_absent(document, kind, str(schema_folder), raw)

    if check is not None:  # a further check may read more than the file: nothing of it is remembered here
        return cache.validated(entry_kind, Path(schema_folder) / f"{kind}.schema.json", data, build, shaped)
    memo = (kind, str(path), str(schema_folder), blake2b_digest(raw))
    refused = _REFUSED.get(memo)
    if refused is not None:  # the same bad bytes of the same file read again in this process (check reads a file
        raise refused  # once for each review): parsed and refused once a process, not once a read
    try:
        # Inside a snapshot (passprice.snapshot) the same bytes are parsed and validated once, whatever file holds
        # them: a valid document is a function of the kind, the schema folder and the bytes alone (the path only
        # words a refusal, which is never kept). A review's BASE and HEAD are written into two temporary folders, and
        # its private copy of HEAD into a third: each unchanged source record, drafting method, routing record and
        # stack had its document made once a folder, parsed and validated or read back from the cache of validated
        # files (tests/test_reviewfast175.py).
        from passprice import snapshot

        return snapshot.made(
            ("document", kind, os.fspath(schema_folder), snapshot.fingerprint(raw)),
            (lambda: cache.validated(entry_kind, Path(schema_folder) / f"{kind}.schema.json", data, build, shaped))
            if kept else build,
        )
    except InputError as e:
        _REFUSED.keep(memo, e)
        raise


def _shaped(document: Any, kind: str, folder: str) -> bool:
    """Whether a document the cache served for a ``kind`` file has its schema's top-level shape
    (:func:`_document_shape`; issue 13, tests/test_forge132.py): one that has not (an entry forged with its checksum
    re-computed: a key the schema does not have, a required key dropped, a table where a list was, a grid's card
    ``1.5``) is a miss, parsed and validated again. Raises nothing: a schema that does not read holds nothing."""
    try:
        return _document_shape(kind, folder)(document)
    except Exception:
        return False


def _absent_absent(document: dict[str, Any], kind: str, folder: str, data: bytes) -> bool:
    """Whether each optional top-level key of the ``kind`` schema that a document the cache served for the file of
    bytes ``data`` lacks is absent from the file too (:func:`_optional_keys`; :func:`_gives_key`): a document
    right-shaped at its top level but one optional table short (a stack's ``memory``, forged with its checksum
    re-computed: ``check`` and ``diff`` refused the llama.cpp lock's price for want of ``stack.memory.reserved``,
    tests/test_forge110.py) is a miss. What it costs a served document: a set difference, a ``bytes.find`` of each
    name it lacks, and a look at the line of each place the name is found. Raises nothing (a schema that does not
    read: holds, as :func:`_shaped` has said otherwise)."""
    try:
        keys = _optional_keys(kind, folder)
    except Exception:
        return True
    missing = keys.keys() - document.keys()
    first: list[int] = []  # where the first table header starts, found once when first asked
    return not any(_gives_key(data, keys[name], first) for name in missing if keys[name] in data)


def _gives_key(data: bytes, word: bytes, first: list[int]) -> bool:
    """Whether a line of the TOML bytes ``data`` gives the top-level key ``word``: a table header (``[word]``,
    ``[word.sub]``, ``[[word]]``) or, before the first header (``first``: its offset, once found), a key (``word =``,
    ``word.sub =``); the name bare or quoted, blanks around it. A line of a multi-line string that reads as one is
    taken for one (the entry is then a miss each run, built again: what a file so written costs)."""
    at = data.find(word)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        lead = data[start:at]
        end = at + len(word)
        rest = data[end:end + 64].lstrip(b"\"'").lstrip(b" \t")[:1]
        if not lead.strip(b" \t[\"'") and lead.count(b"[") <= 2 and rest in (b".", b"=", b"]"):
            if b"[" in lead:
                return True
            if not first:
                header = _HEADER.search(data)
                first.append(header.start() if header else len(data))
            if at < first[0]:
                return True
        at = data.find(word, end)
    return False


#: A line that starts a table (``[name]`` or ``[[name]]``): top-level keys lie before the first.
_HEADER = re.compile(rb"(?m)^[ \t]*\[")


@functools.cache
def _optional_keys(kind: str, folder: str) -> dict[str, bytes]:
    """The optional top-level keys of the ``kind`` schema in ``folder`` (its ``properties`` less its ``required``),
    each with its name's UTF-8 bytes, as :func:`_absent_absent` looks for them. Compiled once a process. Raises
    :class:`InputError` for a schema that does not read."""
    root = _schema_document(kind, folder)
    top = _node(root, root)
    required = set(top.get("required") or ())
    return {name: name.encode("utf-8") for name in top.get("properties") or {} if name not in required}


#: The Python types of each JSON type a document read from TOML and kept as JSON holds.
_JSON_TYPES: dict[str, frozenset[type]] = {
    "object": frozenset({dict}), "array": frozenset({list}), "string": frozenset({str}), "integer": frozenset({int}),
    "number": frozenset({int, float}), "boolean": frozenset({bool}), "null": frozenset({type(None)}),
}


def _node(node: Any, root: dict[str, Any]) -> Any:
    """``node`` with a local ``$ref`` (``#/$defs/…``) followed, to the depth of a few references."""
    for _ in range(8):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not (isinstance(ref, str) and ref.startswith("#/")):
            break
        target: Any = root
        for step in ref[2:].split("/"):
            target = target.get(step) if isinstance(target, dict) else None
        node = target
    return node


def _types_of(node: Any, root: dict[str, Any]) -> frozenset[type] | None:
    """The Python types a value of the schema ``node`` may have (its ``type``, or every ``anyOf``/``oneOf`` branch's
    together), or ``None`` when the node does not say (any type)."""
    node = _node(node, root)
    if not isinstance(node, dict):
        return None
    kinds = node.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        return frozenset().union(*(_JSON_TYPES.get(n, frozenset()) for n in names))
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(branches, list) and branches:
        each = [_types_of(b, root) for b in branches]
        return None if any(t is None for t in each) else frozenset().union(*each)  # type: ignore[arg-type]
    return None


@functools.cache
def _document_shape(kind: str, folder: str) -> Callable[[Any], bool]:
    """The top-level shape of the ``kind`` schema in ``folder`` as a check of a document (compiled once a process):
    a table; its ``required`` keys there; no key besides its ``properties`` where ``additionalProperties`` is false
    (and no ``patternProperties``); each key's value of the JSON types its property names (``integer`` an int or a
    whole float, as JSON Schema counts); an array's items of the types its ``items`` names. Not deeper (a measurement
    file's runs are checked as a list of tables, not key by key), not bounds, value patterns or formats: a value
    within its type is a value, as one edited in the file is. What it costs a served document: a key-set comparison
    and a dict look-up a key. Raises :class:`InputError` for a schema that does not read."""
    root = _schema_document(kind, folder)  # as written: no pattern is read, so none is made ECMA's (3 ms a check)
    top = _node(root, root)
    properties = top.get("properties") or {}
    required = frozenset(top.get("required") or ())
    closed = top.get("additionalProperties", True) is False and not top.get("patternProperties")
    known: dict[str, tuple[frozenset[type] | None, frozenset[type] | None]] = {}
    for name, sub in properties.items():
        sub = _node(sub, root)
        types = _types_of(sub, root)
        items = _types_of(sub.get("items"), root) if isinstance(sub, dict) and types == _JSON_TYPES["array"] else None
        known[name] = (types, items)
    whole = frozenset({int})

    def check(document: Any) -> bool:
        if type(document) is not dict or not document.keys() >= required:
            return False
        for name, value in document.items():
            shape = known.get(name)
            if shape is None:
                if closed:
                    return False
                continue
            types, items = shape
            if (types is not None and type(value) not in types
                    and not (types >= whole and type(value) is float and value.is_integer())):
                return False
            if items is not None and type(value) is list and not set(map(type, value)) <= items:
                return False
        return True

    return check


#: Files refused in this process, by kind, path, schema folder and the sha256 of their bytes (never across
#: processes: an invalid file is parsed and refused again on every run, as :mod:`passprice.cache` says).
_REFUSED = Refusals()
