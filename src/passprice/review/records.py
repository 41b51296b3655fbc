"""What a record says beside its figures is reviewed too: a title, note, description, scope, mark or origin a change
rewrites moves no number, yet a price, ``audit`` or a reader takes it as what the price rests on. So the review names
each record relabelled while a lock of HEAD rests on it (:func:`relabelled_records`, :func:`relabelled_stacks`,
:func:`relabelled_cards`, :func:`rerouted_stacks`), each scope widened or copied (:func:`scopes_widened`,
:func:`scopes_copied`), each card made real or said hypothetical against its mark (:func:`made_real`,
:func:`titles_contradicting`, :func:`hypothetical_claims`), each synthetic header made real and
the table of the shipped ones rewritten (:func:`synthetic_made_real`, :func:`unkept_changes`), each description left
on a row no longer cited (:func:`stale_descriptions`), each export rule set (:func:`export_lines`) and what each added
record is (:func:`added_records`). Each returns lines by path; :class:`~passprice.review.verdict.Diff` decides what
fails.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.derivations import Derivation
from passprice.errors import InputError, escaped, spelled
from passprice.facts import Fact, Provenance
from passprice.registry import lock_order
from passprice.review.changes import FileChange, _n, _read, side_toml
from passprice.review.impacts import _STACK_ROUTES
from passprice.review.quotes import _card_table
from passprice.review.runs import MAX_ADDED_RUNS, _is_measurement, measurements_added
from passprice.review.sides import CODE, Side, file_kind

if TYPE_CHECKING:
    import ast



def in_source(count: int) -> str:
    """The review's "to verify" clause for ``count`` facts or runs: ``in its source`` for one, ``in their sources``
    for more (issue 13: the header read "2 to verify in its source"). Raises nothing."""
    return "in its source" if count == 1 else "in their sources"


#: What the review says of the export rules it lists (:attr:`Diff.export_rules`).
EXPORT_WARNING = ("a .gitattributes rule makes `git archive` of HEAD leave these files out (export-ignore) or expand "
                  "$Format$ placeholders in them (export-subst): a release packed from HEAD is not the registry this "
                  "review read")


def export_lines(base: Side, head: Side) -> tuple[str, ...]:
    """One line a file of HEAD's facts, locks or sources (records and stored excerpts) on which HEAD's rules set
    ``export-ignore`` or ``export-subst`` (:attr:`passprice.review.sides.Side.exports`, read for a HEAD revision) where
    BASE's do not set the same (BASE's asked of the same files): ``PATH: export-ignore (a rule of .gitattributes at
    COMMIT; not at BASE)``. ``git archive`` then leaves the file out of, or rewrites it in, what it packs, while a
    checkout (what check, price and the review read) is unchanged: named as the review names a rewrite rule, never
    failed. Empty when HEAD is no revision, or sets none. Raises nothing (BASE's rules unread: each HEAD setting
    named)."""
    if not head.exports:
        return ()
    then: Mapping[str, tuple[str, str, str]] = {}
    if base.checkout is not None and base.info.revision is not None:
        with contextlib.suppress(InputError, OSError, subprocess.CalledProcessError):
            then = base.checkout.exports(base.info.revision, list(head.exports))
    out = []
    for path, (attribute, value, source) in sorted(head.exports.items()):
        if then.get(path, ("", "", ""))[:2] == (attribute, value):
            continue
        rule = attribute if value == "set" else f"{attribute}={value}"
        was = then.get(path)
        before = f"BASE's: {was[0] if was[1] == 'set' else f'{was[0]}={was[1]}'}" if was else "not at BASE"
        out.append(f"{path}: {rule} (a rule of {escaped(source)}; {before})")
    return tuple(out)


#: What a checkpoint entry edited under the same header sha256 asks (:attr:`Diff.entries_edited`).
EDITED_ENTRY = ("its content changed but the header sha256 it records did not: one file's header has one content; "
                "re-import the entry from its file (`passprice import`), or say which file holds this content")


def scopes_widened(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` change on both sides whose ``checkpoints`` list (its scope,
    :mod:`passprice.scopes`) HEAD widens, by path: what the reviewer must verify, naming the checkpoints added (or
    that the list was removed: any checkpoint) and the facts whose figures now apply to them. Slip round 36: the
    Qwen3-30B-A3B routing record's scope widened to ``deepseek-v3-q4_k_m`` (its 58 of 128 experts measured on
    Qwen3) read "no fact changed; no lock affected", nothing to verify, exit 0. A file that does not read on a side
    is left to the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind not in ("routing", "draft") or f.status != "changed" or "checkpoints" not in f.meta:
            continue
        table = "routing" if f.kind == "routing" else "method"
        try:
            before = side_toml(base.files[f.path], f.kind).get(table, {}).get("checkpoints") or []
            after = side_toml(head.files[f.path], f.kind).get(table, {}).get("checkpoints") or []
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not before:
            continue  # it applied to any checkpoint already
        new = [str(c) for c in after if c not in before]
        if after and not new:
            continue
        got = _read(head, f.path, f.kind, f.name)
        facts = got.facts or {}
        cited = sorted({fact.source for fact in facts.values() if fact.source is not None})
        what = (f"its checkpoints list is gone: it now applies to any checkpoint (was {', '.join(map(str, before))})"
                if not after else
                f"its checkpoints gain {', '.join(new)} (was {', '.join(map(str, before))})")
        out[f.path] = (f"{escaped(what)}: were {', '.join(escaped(p) for p in facts) or 'its figures'} established "
                       f"for {'every model' if not after else 'that model' if len(new) == 1 else 'those models'}? "
                       f"does {', '.join(escaped(c) for c in cited) or 'its source'} state them of it?")
    return out


#: How a synthetic checkpoint entry's ``entry.origin`` opens (``passprice synth --import`` and the test hybrids write
#: it so): the one words telling a reader the header was built, not read from a published GGUF file.
SYNTHETIC = "Synthetic"


def _checkpoint_document(side: Side, rel: str) -> dict[str, Any]:
    """The checkpoint entry ``rel`` of ``side`` as the review already read it (:func:`passprice.schema.load`, made
    once a snapshot: an added entry was parsed twice cold, once to compare it and once for its origin; leftovers round
    20's one parse), or, for an entry that does not validate, as plain TOML
    (:func:`passprice.review.changes.side_toml`). Raises what :func:`passprice.review.changes.side_toml` raises."""
    try:
        return schema.load(side.root.path / rel, "checkpoint", side.root.schema)
    except InputError:
        return side_toml(side.files[rel], "checkpoint")


def synthetic_made_real(base: Side, head: Side, files: Sequence[FileChange]) -> tuple[str, ...]:
    """One line for each checkpoint entry ``files`` add or change on HEAD whose ``entry.origin`` no longer opens with
    :data:`SYNTHETIC` though its header is a synthetic one: a header passprice knows it built
    (:data:`passprice.unkept.UNKEPT`, by the entry's ``header.sha256``), or the very header (same ``header.sha256``)
    of a BASE entry whose origin said synthetic. Slip 56 (issue 13): the Qwen3-30B-A3B Q4_K_M entry's origin
    rewritten to "… the header of the GGUF downloaded from huggingface.co …" read "claims changed, which the pricer
    does not read", its lock only "to re-pin" (exit 0), and re-pinned in the same pull request it passed: the locked
    price then read as a real checkpoint's. Each fails the review. Never raises (a file that does not read as TOML
    is left to the review's other rules)."""
    from passprice.unkept import UNKEPT

    out: list[str] = []
    for f in files:
        if f.kind != "checkpoint" or f.path not in head.files:
            continue
        try:
            new = _checkpoint_document(head, f.path)
            old = _checkpoint_document(base, f.path) if f.path in base.files else {}
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError):
            continue
        entry, header = new.get("entry"), new.get("header")
        was_entry, was_header = old.get("entry"), old.get("header")
        if not isinstance(entry, dict) or not isinstance(header, dict):
            continue
        origin, sha = entry.get("origin"), header.get("sha256")
        if not isinstance(origin, str) or not isinstance(sha, str) or origin.startswith(SYNTHETIC):
            continue
        was_synthetic = (isinstance(was_entry, dict) and isinstance(was_header, dict)
                         and str(was_entry.get("origin", "")).startswith(SYNTHETIC) and was_header.get("sha256") == sha)
        if sha in UNKEPT or was_synthetic:
            how = ("a header passprice synth built (passprice's table of shipped synthetic headers)" if sha in UNKEPT
                   else "the header BASE's entry called synthetic")
            out.append(f"{f.path}: entry.origin: no longer opens with {SYNTHETIC!r}, but its header (sha256 "
                       f"{sha[:12]}…) is {how}: a synthetic header's price is no real checkpoint's; restore the "
                       "origin")
    return tuple(out)


@functools.lru_cache(maxsize=2)
def _unkept_tree(source: bytes) -> ast.Module | None:
    """The syntax tree of a side's ``src/passprice/unkept.py`` (``source``), parsed once for :func:`_unkept_table`
    and :func:`_unkept_command`; ``None`` when it does not parse, or is not parsed: past
    :data:`passprice.pins.MODEL_TOKENS` as :func:`passprice.pins._count_tokens` counts it (it is no pricing module,
    so no cap held it: a 4,000,007-byte ``x = [a,a,…]`` took each of the two 8.1 s of CPU and 2.8 GB, left103), or
    declaring a codec whose decoding is quadratic (:func:`passprice.pins.slow_coding`)."""
    import ast

    from passprice.pins import MODEL_TOKENS, _count_tokens, slow_coding

    if slow_coding(source) is not None or _count_tokens(source) > MODEL_TOKENS:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _unkept_table(source: bytes) -> dict[str, tuple[str, str, str]] | None:
    """The table ``UNKEPT`` a ``src/passprice/unkept.py`` (``source``) writes, read from its syntax tree, never run:
    header sha256 → (name, config, mix), each a ``Unkept(…)`` of three string literals; ``None`` when the file does
    not parse or writes the table otherwise, or is not parsed (:func:`_unkept_tree`)."""
    import ast

    tree = _unkept_tree(source)
    if tree is None:
        return None
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if not isinstance(target, ast.Name) or target.id != "UNKEPT":
            continue
        value = node.value if isinstance(node, (ast.AnnAssign, ast.Assign)) else None
        if not isinstance(value, ast.Dict):
            return None
        out: dict[str, tuple[str, str, str]] = {}
        for key, call in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name) and call.func.id == "Unkept" and not call.keywords
                    and len(call.args) == 3
                    and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
                return None
            name, config, mix = (a.value for a in call.args)  # type: ignore[attr-defined]
            out[key.value] = (name, config, mix)
        return out
    return None


def _unkept_command(source: bytes) -> str | None:
    """The syntax of what makes ``Unkept.command`` in a ``src/passprice/unkept.py`` (``source``): ``CONFIGS``'
    assignment and the method itself, docstrings left out, as :func:`ast.dump` text; ``None`` when it does not
    parse or has neither, or is not parsed (:func:`_unkept_tree`)."""
    import ast

    tree = _unkept_tree(source)
    if tree is None:
        return None
    parts: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and "CONFIGS" in ast.dump(node)[:200]:
            parts.append(ast.dump(node))
        if isinstance(node, ast.ClassDef) and node.name == "Unkept":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "command":
                    body = item.body[1:] if (item.body and isinstance(item.body[0], ast.Expr)
                                             and isinstance(item.body[0].value, ast.Constant)) else item.body
                    parts.append(ast.dump(ast.Module(body=body, type_ignores=[])))
    return "\n".join(parts) if len(parts) == 2 else None


def unkept_changes(base: Side, head: Side) -> tuple[str, ...]:
    """Lines failing HEAD's ``src/passprice/unkept.py`` where it changes what BASE's says of a shipped synthetic
    header: each row of BASE's table ``UNKEPT`` (:data:`passprice.unkept.UNKEPT`) HEAD rewrites or drops, and
    ``Unkept.command`` or ``CONFIGS`` rewritten (:func:`_unkept_command`); one line when HEAD's table does not read as
    literals. Both files are read as syntax, never run. The table is history too: each row says which ``synth``
    command writes those header bytes again, and ``audit``, ``header`` and ``checkpoints`` tell a reader to run it.
    Slip 56 (issue 13): ``command`` rewritten to give ``--mix Q8_0`` for every header read only "passprice's own code
    changed: src/passprice/unkept.py" (exit 0), and once merged passprice sent readers to commands writing other
    bytes. A row HEAD adds is left to ``tests/test_unkept.py`` (it checks the table against the synthesized
    headers). Empty unless both sides bring their own code. Never raises."""
    from passprice.files import read_regular
    from passprice.pins import MODULE_BYTES

    if head.code.folder is None or not head.code.own or base.code.folder is None or not base.code.own:
        return ()

    def source(folder: Path) -> bytes:
        try:
            return read_regular(folder / "unkept.py", MODULE_BYTES) if (folder / "unkept.py").is_file() else b""
        except (OSError, InputError):
            return b""

    was, now = source(base.code.folder), source(head.code.folder)
    if was == now:
        return ()
    rel = f"{CODE}/unkept.py"
    old, table = _unkept_table(was) or {}, _unkept_table(now)
    if _unkept_command(was) != _unkept_command(now):
        return (f"{rel}: Unkept.command (or CONFIGS) rewritten: it gives the command that writes each of the "
                f"{len(old)} shipped synthetic headers again, byte for byte, and passprice tells readers to run it; "
                "restore it",)
    if table is None:
        return (f"{rel}: UNKEPT does not read as a table of Unkept(NAME, CONFIG, MIX) string literals: the review "
                "cannot tell which command it gives for each shipped synthetic header",)
    out = []
    for sha, row in old.items():
        if table.get(sha) == row:
            continue
        said = "dropped" if sha not in table else f"rewritten ({', '.join(row)} → {', '.join(table[sha])})"
        out.append(f"{rel}: UNKEPT: the row of header {sha[:12]}… ({row[0]}) {said}: it gives the command that "
                   "writes those bytes again, and passprice tells readers to run it; restore the row")
    return tuple(out)


def made_real(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` change on both sides that BASE marks ``hypothetical`` and HEAD does not, by path: what the
    reviewer must verify. Slip round 38: WS1's ``hypothetical = true`` removed read "[card] changed: hypothetical",
    no lock affected, though its locked price then reads as a product's (its figures all assumed) and the lock pins
    ``hypothetical = true``."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "changed" or "hypothetical" not in f.meta:
            continue
        try:
            before = side_toml(base.files[f.path], "card").get("card", {}).get("hypothetical", False)
            after = side_toml(head.files[f.path], "card").get("card", {}).get("hypothetical", False)
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if before is True and after is not True:
            got = _read(head, f.path, f.kind, f.name)
            assumed = sum(1 for fact in (got.facts or {}).values()
                          if fact.provenance in (Provenance.ASSUMED, Provenance.ESTIMATED))
            out[f.path] = (f"card {spelled(f.name)} is no longer marked hypothetical: its prices now read as a real "
                           f"card's, {assumed} of its facts estimated or assumed; is it a product, and does each "
                           "figure now cite that product's documents?")
    return out


#: The provenances a card that does not exist cannot have of its own (:func:`hypothetical_claims`).
_PRODUCT_PROVENANCES = (Provenance.PUBLISHED, Provenance.MEASURED)


def titles_contradicting(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` add or change whose HEAD title says hypothetical (:func:`passprice.cards.says_hypothetical`)
    while HEAD does not mark it ``hypothetical = true``, and BASE did not hold that same contradiction, by path: what
    the reviewer must verify. Left26b: ``RTX 4090 (Hypothetical)`` unmarked is priced, locked and reviewed as a real
    card (no question of its published figures, :func:`hypothetical_claims`) while every table's title calls it
    made up. A file that does not parse on HEAD is left to the review's errors."""
    from passprice.cards import says_hypothetical

    def contradiction(side: Side, path: str) -> str | None:
        card = _card_table(side, path)
        if card is None:
            return None
        title = card.get("name")
        if not isinstance(title, str) or card.get("hypothetical", False) is True or not says_hypothetical(title):
            return None
        return title

    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status not in ("added", "changed"):
            continue
        title = contradiction(head, f.path)
        if title is None or (f.status == "changed" and contradiction(base, f.path) == title):
            continue
        out[f.path] = (f"card {spelled(f.name)}'s title {escaped(repr(title))} says hypothetical, but it is not marked "
                       "hypothetical = true: its prices read and lock as a real card's under a title that says it is "
                       "made up; mark it hypothetical, or retitle it")
    return out


def hypothetical_claims(head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` adds that HEAD marks ``hypothetical`` and of whose facts one or more is ``published`` or
    ``measured``, by path: what the reviewer must verify, naming the first five such facts. A card that does not
    exist has no datasheet or benchmark of its own, so such a figure is another card's, borrowed under its
    provenance. Walkthrough 30: a hypothetical card copied from the H100's file (its 80 GB ``published``, its stream
    shares ``measured`` on the H100) read "17 facts added in 1 new file", nothing to verify, and its prices read
    ``published``/``measured`` beside real cards'. A card that does not read is left to the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "added" or not f.compared:
            continue
        card = _card_table(head, f.path)
        if card is None or card.get("hypothetical", False) is not True:
            continue
        strong = [path for path, fact in (_read(head, f.path, f.kind, f.name).facts or {}).items()
                  if fact.provenance in _PRODUCT_PROVENANCES]
        if not strong:
            continue
        named = ", ".join(strong[:5]) + (f" and {len(strong) - 5:,} more" if len(strong) > 5 else "")
        out[f.path] = (f"card {spelled(f.name)} is marked hypothetical, yet {len(strong):,} of its facts are "
                       f"published or measured ({named}): a card that does not exist has no datasheet or benchmark "
                       "of its own; is each figure another card's, to be cited as estimated or assumed?")
    return out


def _pinning(side: Side, card: str) -> list[str]:
    """The names of the lock files of ``side`` (``locks/NAME.lock.toml``) whose ``[card]`` pins the card ``card``,
    by name (:func:`~passprice.registry.lock_order`, as every listing of locks); a lock file that does not read is
    left out (``check`` names it)."""
    out = []
    for rel in sorted(side.files, key=lock_order):
        if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
            continue
        try:
            pinned = side_toml(side.files[rel], "lock").get("card", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(pinned, dict) and pinned.get("name") == card:
            out.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
    return out


def _pins_record(side: Side, lock: str, kind: str, today: tuple[str, Any] | None) -> bool:
    """Whether ``side``'s lock file ``locks/LOCK.lock.toml`` pins its routing record's (``kind`` ``routing``) or
    drafting method's (``draft``) title and note (a ``[routing]``/``[draft]`` table, slip round 44) otherwise than
    ``today`` (the record's title and note on that side): ``check --frozen`` fails it until re-pinned. With ``today``
    ``None``: whether it pins them at all (a lock written before slip round 44 pins neither). Raises nothing."""
    try:
        table = side_toml(side.files[f"locks/{lock}.lock.toml"], "lock").get(kind)
    except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(table, dict) and (today is None or (table.get("title"), table.get("note")) != today)


def _pricing_with(side: Side, kind: str, name: str) -> list[str]:
    """The names of the lock files of ``side`` whose ``[serving]`` prices with the routing record (``kind``
    ``routing``) or drafting method (``draft``) ``name``, by name (:func:`~passprice.registry.lock_order`); a lock
    file that does not read is left out (``check`` names it)."""
    out = []
    for rel in sorted(side.files, key=lock_order):
        if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
            continue
        try:
            serving = side_toml(side.files[rel], "lock").get("serving", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if not isinstance(serving, dict):
            continue
        draft = serving.get("draft")
        used = serving.get("routing") if kind == "routing" else draft.get("method") if isinstance(draft, dict) else None
        if used == name:
            out.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
    return out


def _locators(fact: Fact | None) -> list[str]:
    """``fact``'s locator and each of its derivation's inputs' (``[]`` for ``None``)."""
    from passprice.derivations import Derivation

    if fact is None:
        return []
    out = [fact.locator] if fact.locator else []
    if isinstance(fact.derivation, Derivation):
        out += [i.locator for i in fact.derivation.inputs if i.locator]
    return out


def stale_descriptions(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each record ``files`` change whose facts were re-cited from one table row to another (their locators' ``row
    'LABEL'``, :mod:`passprice.rowcite`) while a description was left as it was, by path: what to verify. A
    description is a string of the record's own table (``[routing]``'s ``name`` and ``note`` …) the change left
    unchanged that holds words of the row no longer cited and none of the row cited now, or quotes the old row; and
    the ``read`` line of a source the re-cited facts cite on HEAD that quotes the old row. Walkthrough 49: the
    Qwen3-30B-A3B routing record re-cited from row 'narrow (single-domain Python)' to row 'diverse (prose, code,
    math)' kept its title "measured skew (single-domain Python, ~8k tokens)" and its source's ``read`` the narrow row,
    and the review, which flags a derived fact left stale, said nothing. Shown, never failed. A file or source that
    does not read is left to the review's errors."""
    from passprice.rowcite import old_row_words, rows
    from passprice.sources import cited_ids, load_source

    out: dict[str, str] = {}
    for f in files:
        if not f.holds_facts or f.status != "changed" or not f.compared or f.path not in base.files:
            continue
        was = rows(loc for c in f.facts for loc in _locators(c.old))
        now = rows(loc for c in f.facts for loc in _locators(c.new))
        # Sets for the look-ups: a card of 17,524 distinct row labels on each side (256 KiB, 13 inputs a fact) took
        # 10.7 s to compare as tuples (attack66).
        was_set, now_set = set(was), set(now)
        old, new = [r for r in was if r not in now_set], [r for r in now if r not in was_set]
        if not old or not new:
            continue
        old_set = set(old)
        said = []
        try:
            before = side_toml(base.files[f.path], f.kind).get(_table(f.kind), {})
            after = side_toml(head.files[f.path], f.kind).get(_table(f.kind), {})
        except (InputError, KeyError):
            before, after = {}, {}
        for key, text in after.items():
            if not isinstance(text, str) or before.get(key) != text:
                continue
            quoted = [r for r in rows([text]) if r in old_set]
            stale = old_row_words(text, old, new)
            if quoted or stale:
                said.append(f"its {key} still says " + (_rows_named(quoted) if quoted
                                                         else ", ".join(f"'{w}'" for w in stale)))
        ids = dict.fromkeys(sid for c in f.facts if c.new is not None for _, sid in cited_ids(c.path, c.new))
        for sid in ids:
            try:
                read = load_source(head.root, sid).read
            except InputError:
                continue
            quoted = [r for r in rows([read]) if r in old_set]
            if quoted:
                said.append(f"source {sid}'s read still names {_rows_named(quoted)}")
        if said:
            out[f.path] = (f"{'; '.join(said)}, though its facts now cite {_rows_named(new)} in place of "
                           f"{_rows_named(old)}: does each still describe the record? (nothing priced reads it; "
                           "`audit` shows it)")
    return out


def _rows_named(labels: Iterable[str]) -> str:
    """``row 'narrow (single-domain Python)'``, each of ``labels`` so, joined by commas (the first few, the rest
    counted: :func:`passprice.rowcite.named`)."""
    from passprice.rowcite import named

    return named(labels)


def relabelled_records(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` change on both sides whose title (``[routing]``/``[method]``
    ``name``) or ``note`` changed while a lock of HEAD prices with it, by path: what the reviewer must verify, naming
    those locks. Neither moves a number (a lock written since slip round 44 pins both, :func:`_pins_record`), yet a
    price prints the routing record's note (``routing note``) and ``audit`` its title and note ("today's record") as
    what the price rests on: slip round 43, the Qwen3-30B-A3B record retitled "measured skew (diverse prose)" and its
    note rewritten read "[routing] changed: name, note; no lock affected", ✅. A file that does not read is left to
    the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind not in ("routing", "draft") or f.status != "changed" or not {"name", "note"} & set(f.meta):
            continue
        table = "routing" if f.kind == "routing" else "method"
        try:
            before = side_toml(base.files[f.path], f.kind).get(table, {})
            after = side_toml(head.files[f.path], f.kind).get(table, {})
            was, now = str(before.get("name", f.name)), str(after.get("name", f.name))
            renoted = before.get("note") != after.get("note")
            note = after.get("note")
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        locks = _pricing_with(head, f.kind, f.name)
        if not locks or (was == now and not renoted):
            continue
        what = "routing record" if f.kind == "routing" else "drafting method"
        asks = []
        if was != now:
            asks.append(f"{what} {spelled(f.name)} is retitled {escaped(repr(was))} → {escaped(repr(now))}")
        if renoted:
            asks.append(f"{what} {spelled(f.name)}'s note changed")
        pins = [n for n in locks if _pins_record(head, n, f.kind, (now, note))]
        # Walkthrough 46: a lock re-locked with the change pins the record as it is now, and read "no lock pins it".
        current = [n for n in locks if n not in pins and _pins_record(head, n, f.kind, None)]
        said = []
        if pins:
            said.append(f"{', '.join(spelled(n) for n in pins)} pin{'s' if len(pins) == 1 else ''} it as before the "
                        "change: re-pin (passprice lock --update)")
        if current:
            said.append(f"{', '.join(spelled(n) for n in current)} pin{'s' if len(current) == 1 else ''} it as "
                        "changed, re-locked with it")
        pinned = "; ".join(said) or "no lock pins it"
        out[f.path] = (f"{'; '.join(asks)}: does it still describe what the locked prices rest on ({pinned}; "
                       f"{'a price prints the note, ' if f.kind == 'routing' else ''}audit shows it)?; "
                       f"{_n(len(locks), 'lock')} price{'s' if len(locks) == 1 else ''} with it: "
                       f"{', '.join(spelled(n) for n in locks)}")
    return out


#: The keys of a stack file's ``[stack]`` table a lock made under it pins (its ``[stack]`` table: ``title`` for
#: ``name``), in the order they are said.
_STACK_LABELS = (("name", "title"), ("runtime", "runtime"), ("builds", "builds"))


def relabelled_stacks(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each serving stack ``files`` change on both sides whose title (``[stack] name``), ``runtime`` or ``builds``
    changed while a lock of HEAD is made under it, by path: what the reviewer must verify, each text old → new
    (:func:`passprice.textchange.text_change`), naming those locks (their ``[stack]`` table pins the three:
    ``check --frozen`` fails on each until re-pinned). None moves a number. Walkthrough 57: the llama.cpp stack
    retitled read "[stack] changed: name" and nothing of what it was or became, where a routing record or drafting
    method retitled (:func:`relabelled_records`) and a card (:func:`relabelled_cards`) say both titles. A file that
    does not read is left to the review's errors; raises nothing."""
    from passprice.textchange import text_change

    out: dict[str, str] = {}
    for f in files:
        if f.kind != "stack" or f.status != "changed" or not {key for key, _ in _STACK_LABELS} & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "stack").get("stack", {})
            after = side_toml(head.files[f.path], "stack").get("stack", {})
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        locks, pinning = [], []
        for rel in sorted(head.files, key=lock_order):  # the locks by name (left53)
            if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
                continue
            try:
                table = side_toml(head.files[rel], "lock").get("stack")
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if not isinstance(table, dict) or table.get("name") != f.name:
                continue
            name = rel.removeprefix("locks/").removesuffix(".lock.toml")
            locks.append(name)
            if any(table.get(pin) is not None and table.get(pin) != after.get(key) for key, pin in _STACK_LABELS):
                pinning.append(name)
        changed = [(pin, before.get(key), after.get(key)) for key, pin in _STACK_LABELS
                   if before.get(key) != after.get(key)]
        if not locks or not changed:
            continue
        said = "; ".join(
            f"its {pin} {text_change(escaped(str(was)), escaped(str(now)))}" if was is not None and now is not None
            else f"its {pin} {escaped(repr(was)) if was is not None else '(none)'} → "
                 f"{escaped(repr(now)) if now is not None else '(none)'}"
            for pin, was, now in changed)
        pinned = (f"{', '.join(spelled(n) for n in pinning)} pin{'s' if len(pinning) == 1 else ''} it as before the "
                  "change: re-pin (passprice lock --update)" if pinning else "no lock pins it as before the change")
        out[f.path] = (f"serving stack {spelled(f.name)} relabelled: {said}: does it still name the runtime and builds "
                       f"its runs measured ({pinned}; audit shows it)?; {_n(len(locks), 'lock')} made under it: "
                       f"{', '.join(spelled(n) for n in locks)}")
    return out


def rerouted_stacks(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each serving stack ``files`` change on both sides whose route (``integer_matrices``, ``float_matrices``)
    changed while a lock of HEAD is made under it, by path: what the reviewer must verify, each key old → new, naming
    those locks. The route is a claim about the runtime (llama.cpp's mat-vec kernels run quantised matrices on the
    vector units), not a fact with a citation, so no fact's review asks it. Walkthrough 82: llama.cpp's
    ``integer_matrices`` moved ``vector`` → ``array``, the stack re-fitted and its lock re-locked, read "[stack]
    changed: integer_matrices", the lock "re-locked" with nothing of what the route was or became, exit 0 and nothing
    to verify (expected 237.4 → 237.1 tokens/s). A file that does not read is left to the review's errors; raises
    nothing."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "stack" or f.status != "changed" or not set(_STACK_ROUTES) & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "stack").get("stack", {})
            after = side_toml(head.files[f.path], "stack").get("stack", {})
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        changed = [(key, before.get(key), after.get(key)) for key in _STACK_ROUTES if before.get(key) != after.get(key)]
        locks = []
        for rel in sorted(head.files, key=lock_order):  # the locks by name (left53)
            if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
                continue
            try:
                table = side_toml(head.files[rel], "lock").get("stack")
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if isinstance(table, dict) and table.get("name") == f.name:
                locks.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
        if not locks or not changed:
            continue
        said = "; ".join(f"its {key} {escaped(repr(was)) if was is not None else '(none)'} → "
                         f"{escaped(repr(now)) if now is not None else '(none)'}" for key, was, now in changed)
        out[f.path] = (f"serving stack {spelled(f.name)} rerouted: {said}: do the runtime and builds its runs measured "
                       "run those matrices there (the route is no cited fact: no source is asked of it)?; "
                       f"{_n(len(locks), 'lock')} made under it: {', '.join(spelled(n) for n in locks)}")
    return out


def relabelled_cards(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` change on both sides whose title (``[card] name``) changed or that HEAD newly marks
    ``hypothetical``, by path: what the reviewer must verify, with the locks of HEAD that pin the card (their
    ``[card]`` table pins its title and ``hypothetical``: ``check --frozen`` fails on each until it is re-locked).
    Neither moves a number. Slip round 42: the H200 card marked ``hypothetical = true`` and retitled read "[card]
    changed: name, hypothetical", no lock affected, ✅, though four locks pin it as the real H200 under its old
    title. The reverse (no longer hypothetical) is :func:`made_real`'s."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "changed" or not {"name", "hypothetical"} & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "card").get("card", {})
            after = side_toml(head.files[f.path], "card").get("card", {})
            was, now = str(before.get("name", f.name)), str(after.get("name", f.name))
            hypothetical = before.get("hypothetical", False) is not True and after.get("hypothetical", False) is True
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        asks = []
        if hypothetical:
            asks.append(f"card {spelled(f.name)} is now marked hypothetical: its prices no longer claim a real card; "
                        "is it not the product its figures cite?")
        if was != now:
            asks.append(f"card {spelled(f.name)} is retitled {escaped(repr(was))} → {escaped(repr(now))}: is it the "
                        "same card?")
        if not asks:
            continue
        locks = _pinning(head, f.name)
        pinned = (f"{_n(len(locks), 'lock')} pin{'s' if len(locks) == 1 else ''} it as it was: "
                  f"{', '.join(spelled(n) for n in locks)}" if locks else "no lock pins it")
        out[f.path] = "; ".join(asks) + "; " + pinned
    return out


def scopes_copied(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` add whose facts cite a place (source and locator, or a
    derivation input's) that a record of its kind on BASE cites while that record's ``checkpoints`` list lacks one the
    new record applies to (or the new one lists none: any checkpoint), by path: what the reviewer must verify, as
    :func:`scopes_widened` asks of a record changed. Slip round 38: Qwen3-30B-A3B's measured routing record copied as
    ``deepseek-v3-measured.toml`` for ``deepseek-v3-q4_k_m``, its Qwen3 figures and citations kept, read "2 facts
    added", nothing to verify, exit 0."""
    from passprice.addedfacts import _place

    added = [f for f in files if f.kind in ("routing", "draft") and f.status == "added" and not f.head_errors]
    if not added:
        return {}

    def scope(side: Side, rel: str, kind: str) -> list[str] | None:
        try:
            document = side_toml(side.files[rel], kind)
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        got = document.get("routing" if kind == "routing" else "method", {})
        listed = got.get("checkpoints") if isinstance(got, dict) else None
        return [str(c) for c in listed] if isinstance(listed, list) else []

    def places(facts: Mapping[str, Fact]) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for path, fact in facts.items():
            own = _place(fact.source, fact.locator)
            if own is not None:
                out.setdefault(own, path)
            if isinstance(fact.derivation, Derivation):
                for i in fact.derivation.inputs:
                    at = _place(i.source or fact.source, i.locator) if i.kind == "figure" else None
                    if at is not None:
                        out.setdefault(at, path)
        return out

    out: dict[str, str] = {}
    for f in added:
        after = scope(head, f.path, f.kind)
        got = _read(head, f.path, f.kind, f.name)
        if after is None or got.facts is None:
            continue
        mine = places(got.facts)
        for rel in sorted(base.files):
            kind, name = file_kind(rel)
            if kind != f.kind or rel == f.path:
                continue
            before = scope(base, rel, kind)
            if not before or (after and not set(after) - set(before)):
                continue  # it applies to any checkpoint, or to each the new record names
            theirs = _read(base, rel, kind, name)
            shared = sorted({mine[p] for p in places(theirs.facts or {}) if p in mine})
            if not shared:
                continue
            new = [c for c in after if c not in before]
            what = (f"it applies to {'any checkpoint' if not after else ', '.join(new)}, and "
                    f"{', '.join(escaped(p) for p in shared)} cite{'s' if len(shared) == 1 else ''} the places "
                    f"{escaped(rel)} cites for {', '.join(before)}")
            cited = sorted({fact.source for fact in got.facts.values() if fact.source is not None})
            model = "every model" if not after else "that model" if len(new) == 1 else "those models"
            out[f.path] = (f"{escaped(what)}: were they established for {model}? "
                           f"does {', '.join(escaped(c) for c in cited) or 'its source'} state them of it?")
            break
    return out


#: The most added source records and checkpoint entries a review describes (:func:`added_records`); the rest are
#: listed by path, as any other file.
MAX_ADDED_RECORDS = 20


def added_records(head: Side, files: Sequence[FileChange],
                  recited: Mapping[str, Sequence[str]] | None = None,
                  noted: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
    """Each source record, routing record, checkpoint entry, card and measurement file ``files`` adds on ``head`` that
    reads there, by path: a card as :func:`added_card` says (its title and hypothetical mark, which its facts' rows
    do not show: walkthrough 30; the first :data:`MAX_ADDED_RECORDS` cards, counted apart), a routing record as
    ``routing record TITLE: E experts, k a token, for CHECKPOINTS; note: …``, a source as ``TITLE (BY, DATE), KIND,
    at WHERE; read: HOW``, a checkpoint entry as ``ARCH, N tensors, B of weights[, E experts, K a token]; origin:
    …`` (the first sentence of its ``origin``), a measurement file as :func:`~passprice.review.runs.measurements_added`
    says; the first
    :data:`MAX_ADDED_RECORDS`. One that does not read is left to the review's errors. A measurement file ``files``
    change is described too when ``recited`` holds runs of it to verify (:func:`~passprice.review.runs.runs_to_verify`,
    by path): ``N measured runs to verify in their sources: …`` (:func:`in_source`), and when ``noted`` holds runs of it
    whose ``note`` changed (:func:`~passprice.review.runs.runs_to_verify`'s ``noted``, by path): ``N run notes changed
    (listed: neither the fit nor a price reads a note): …`` (slip round 47)."""
    import tomllib

    from passprice.checkpoints import entry_origin, load_checkpoint
    from passprice.sources import load_source
    from passprice.tables import si

    out: dict[str, str] = {}
    recited = recited or {}
    noted = noted or {}
    cards = 0  # added cards are counted apart, so a change adding many leaves its sources described
    for f in files:
        if f.kind == "card" and f.status == "added":
            if cards < MAX_ADDED_RECORDS:
                described_card = added_card(head, f.path, f.name)
                if described_card is not None:
                    out[f.path] = described_card
                    cards += 1
            continue
        if len(out) - cards >= MAX_ADDED_RECORDS:
            break
        if f.status == "added" and f.kind == "other" and _is_measurement(f.path):
            described = measurements_added(head, f.path)
            if described is not None:
                asks = recited.get(f.path, ())
                more = f"; and {len(asks) - MAX_ADDED_RUNS:,} more" if len(asks) > MAX_ADDED_RUNS else ""
                out[f.path] = described + (f"; {_n(len(asks), 'measured run')} to verify {in_source(len(asks))}: "
                                           + "; ".join(asks[:MAX_ADDED_RUNS]) + more if asks else "")
            continue
        if f.status == "changed" and f.kind == "other" and (f.path in recited or f.path in noted):
            parts = []
            asks = recited.get(f.path, ())
            if asks:
                more = f"; and {len(asks) - MAX_ADDED_RUNS:,} more" if len(asks) > MAX_ADDED_RUNS else ""
                parts.append(f"{_n(len(asks), 'measured run')} to verify {in_source(len(asks))}: "
                             + "; ".join(asks[:MAX_ADDED_RUNS]) + more)
            notes = [line for line in noted.get(f.path, ()) if not line.startswith("[source] ")]
            if notes:
                more = f"; and {len(notes) - MAX_ADDED_RUNS:,} more" if len(notes) > MAX_ADDED_RUNS else ""
                parts.append(f"{_n(len(notes), 'run note')} changed (listed: neither the fit nor a price reads a "
                             "note): " + "; ".join(notes[:MAX_ADDED_RUNS]) + more)
            # its [source] table's keys rewritten (:func:`~passprice.review.runs.source_table_changes`), old → new
            parts += [line for line in noted.get(f.path, ()) if line.startswith("[source] ")]
            out[f.path] = "; ".join(parts)
            continue
        if f.status != "added" or f.kind not in ("source", "checkpoint", "routing"):
            continue
        try:
            if f.kind == "routing":  # its scope and caveat, which its two facts' rows do not show (walkthrough 21)
                from passprice.routing import load_routing
                from passprice.scopes import scope_said

                routing = load_routing(head.root, f.name)
                router = (f"{routing.experts:,} experts, {routing.used:,} a token"
                          if routing.experts is not None and routing.used is not None else "any router")
                scope = scope_said(routing.checkpoints) if routing.checkpoints else "any checkpoint"
                note = f"; note: {routing.note}" if routing.note else ""
                out[f.path] = f"routing record {routing.title}: {router}, for {scope}{note}"
                continue
            if f.kind == "source":
                source = load_source(head.root, f.name)
                read = f"; read: {source.read}" if source.read else ""
                out[f.path] = f"{source.describe()}, {source.kind}, at {source.where()}{read}"
                continue
            header = load_checkpoint(head.root, f.name)
            origin = entry_origin(head.root, head.files[f.path])  # the document load_checkpoint parsed, if it did
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError):
            continue
        from passprice import ggml

        weights = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in header.tensors if ggml.known(t.type_id))
        arch = header.architecture or "unknown architecture"
        experts = header.meta_int(f"{arch}.expert_count")
        used = header.meta_int(f"{arch}.expert_used_count")
        moe = f", {experts:,} routed experts ({used:,} a token)" if experts and used else ""
        first = origin.split(". ")[0].strip().rstrip(".")
        first = first if len(first) <= 300 else first[:299] + "…"
        out[f.path] = (f"{arch}, {len(header.tensors):,} tensors, {si(weights, 'B')} of weights{moe}"
                       + (f"; origin: {first}" if first else ""))
    return out


def added_card(head: Side, rel: str, name: str) -> str | None:
    """An added card ``rel`` (named ``name``) as the review describes it: ``card TITLE (VENDOR; VARIANT), marked
    hypothetical: N facts: A published, B measured, …`` (the mark only when HEAD's ``[card]`` says
    ``hypothetical = true``; each provenance strongest first, those it has); ``None`` when it does not read on
    HEAD (the review's errors say why)."""
    read = _read(head, rel, "card", name)
    if read.facts is None or read.meta is None:
        return None
    table = read.meta
    title = str(table.get("name") or name)
    about = "; ".join(str(table[k]) for k in ("vendor", "variant") if isinstance(table.get(k), str) and table[k])
    mark = ", marked hypothetical" if table.get("hypothetical") is True else ""
    counts = {p: sum(1 for fact in read.facts.values() if fact.provenance is p) for p in Provenance}
    by = ", ".join(f"{n:,} {p.value}" for p, n in counts.items() if n)
    return (f"card {printable_title(title)}" + (f" ({printable_title(about)})" if about else "") + mark
            + f": {_n(len(read.facts), 'fact')}" + (f": {by}" if by else ""))


def printable_title(text: str) -> str:
    """A card's title, vendor or variant as a review line shows it: as written when every character prints, else
    its ``repr`` (:func:`passprice.tables.printable`), cut to 120 characters."""
    from passprice.tables import printable

    shown = printable(text)
    return shown if len(shown) <= 120 else shown[:119] + "…"


def checkpoint_renames(files: Sequence[FileChange]) -> tuple[FileChange, ...]:
    """``files`` with each checkpoint entry BASE has and HEAD lacks whose content digest
    (:attr:`passprice.review.changes.FileChange.content`) one HEAD adds has marked renamed
    (:attr:`passprice.review.changes.FileChange.renamed`, both ways), each paired once, in path order: an entry renamed
    (``git mv``, its ``[entry] name`` set) read "1 checkpoint entry added; 1 checkpoint entry removed" with the same
    content on both lines, where ``reproduce`` says it is renamed (tests/test_fix154.py). Raises nothing."""
    gone = [f for f in files if f.kind == "checkpoint" and f.status == "removed" and f.content[0] is not None]
    added = [f for f in files if f.kind == "checkpoint" and f.status == "added" and f.content[1] is not None]
    pairs: dict[str, str] = {}
    for old in gone:
        new = next((g.path for g in added if g.path not in pairs.values() and g.content[1] == old.content[0]), None)
        if new is not None:
            pairs[old.path] = new
    into = {new: old for old, new in pairs.items()}
    return tuple(attrs.evolve(f, renamed=pairs.get(f.path) or into.get(f.path)) if f.path in pairs or f.path in into
                 else f for f in files)


def _table(kind: str) -> str:
    """The own table of a record of ``kind``: ``card``, ``method`` (a drafting method), ``routing``, ``stack``. A
    stack's and a routing record's were called ``[method]`` (attack round 32)."""
    return {"draft": "method"}.get(kind, kind)
