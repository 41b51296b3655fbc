"""The ``fact`` group: ``show`` a card's (or drafting method's) facts, ``recompute`` a derived one from its formula,
``set`` one with its provenance and source. Every edit keeps the file's other bytes as they were."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from passprice.cli.app import _echo_json, _json_option, _root, _Subgroup, cli
from passprice.cli.options import _read_only
from passprice.cli.params import _require_unicode
from passprice.errors import InputError
from passprice.files import shell_word


@cli.group("fact", cls=_Subgroup)
def fact_group() -> None:
    """Show one fact of a card, a serving stack, a routing record or (--draft) a drafting method; set or recompute
    a card's or a drafting method's (paths acceptance.N) in place (a stack's or routing record's file is edited by
    hand)."""


def _record_facts(
    root: Any, name: str, path: str | None = None
) -> tuple[str, Path, dict[str, Any], str | None] | None:
    """A routing record's or a serving stack's facts for ``fact show`` (walkthrough 19: an audit lists
    ``routing.hot_share`` and ``stack.share.read``, and ``fact show`` refused both records): (its kind, its file, its
    facts by lock path, its note), or ``None`` when ``name`` is a card's and ``path`` (if given) a card fact path, or
    names no such record. A card and a record of one name: a ``path`` no card has is looked for in the record
    (``fact show a40 routing.hot_share`` said "not a card fact path", silent on the routing record a40: round 32)."""
    from passprice.cards import is_card_path
    from passprice.files import is_there

    if "/" in name or os.sep in name or name.endswith(".toml"):
        return None
    if is_there(root.cards / f"{name}.toml") and (path is None or is_card_path(path)):
        return None
    records = []
    if is_there(root.routing / f"{name}.toml"):
        from passprice.routing import load_routing

        routing = load_routing(root, name)
        records.append(("routing record", root.routing / f"{name}.toml", routing.facts(), routing.note))
    if is_there(root.stacks / f"{name}.toml"):
        from passprice.stacks import load_stack

        stack = load_stack(root, name)
        records.append(("serving stack", root.stacks / f"{name}.toml", stack.lock_facts(), stack.note))
    if path is not None:
        # A routing record and a stack of one name: the path is looked for in both (`fact show uniform
        # stack.share.read` said the routing record had no such fact, silent on the stack uniform: round 33).
        held = [r for r in records if _fact_of(r[2], path) is not None]
        records = held + [r for r in records if r not in held]
    return records[0] if records else None


def _fact_of(facts: dict[str, Any], path: str) -> str | None:
    """The lock path of ``facts`` (a routing record's or a stack's, by lock path) that ``path`` names: itself, or
    one whose part after the record's kind (``share.read`` of ``stack.share.read``) it is; else ``None``."""
    return path if path in facts else next((p for p in facts if p.split(".", 1)[1] == path), None)


def _other_records(root: Any, name: str, file: Path) -> str:
    """What else ``name`` names besides the record ``file`` (a card, a routing record, a stack), for the line refusing
    a fact path none of them has: ``; nor a fact path of the card a40 (…)``, ``; nor a fact of the serving stack
    uniform (it has …)``."""
    from passprice.files import is_there

    also = ""
    if is_there(root.cards / f"{name}.toml"):  # a card of the name too: say so (round 32)
        from passprice.cards import CARD_PATHS, HOST_PATHS, TENSOR_PATHS

        paths = ", ".join((*CARD_PATHS, *HOST_PATHS, *TENSOR_PATHS))
        also += f"; nor a fact path of the card {name} ({paths})"
    if file != root.stacks / f"{name}.toml" and is_there(root.stacks / f"{name}.toml"):
        from passprice.stacks import load_stack

        also += f"; nor a fact of the serving stack {name} (it has {', '.join(load_stack(root, name).lock_facts())})"
    return also


def _record_fact_file(root: Any, name: str, path: str) -> Any:
    """Where fact ``path`` of routing record or serving stack ``name`` lives, for ``fact show --history``
    (:class:`passprice.edit.FactFile`: its file, ``kind`` ``routing`` or ``stack``, and the fact's table in the file,
    ``hot_share`` or ``share.read``), by the path an audit lists (``routing.hot_share``, ``stack.share.read``,
    ``stack.cards.CARD.share.read``) or without its prefix; ``None`` when :func:`_record_facts` finds no such record
    (a card's fact: the card's history). Raises :class:`InputError` for a path the record has not, naming those it
    has."""
    from passprice.edit import FactFile

    record = _record_facts(root, name, path)
    if record is None:
        return None
    kind, file, facts, _ = record
    full = path if path in facts else next((p for p in facts if p.split(".", 1)[1] == path), None)
    if full is None:
        raise InputError(f"{file}: {path}: no such fact (it has {', '.join(facts)})")
    return FactFile(file, "routing" if kind == "routing record" else "stack", name, full.split(".", 1)[1])


def _show_history(root: Any, where: Any, as_json: bool) -> None:
    """``fact show --history``'s output of ``where`` (:class:`passprice.edit.FactFile`): every version of the fact,
    newest first (:func:`passprice.history.fact_history`)."""
    from passprice.history import fact_history, history_text

    versions = fact_history(root, where)
    if as_json:
        _echo_json({"name": where.name, "kind": where.kind, "path": where.path, "file": str(where.file),
                    "versions": [v.to_json() for v in versions]})
    else:
        shown = where.file.relative_to(root.path) if where.file.is_relative_to(root.path) else where.file
        click.echo(history_text(where, versions, str(shown)))


def _fact_file(ctx: click.Context, name: str, path: str | None, draft: bool) -> Any:
    from passprice.edit import locate

    root = _root(ctx)
    return root, locate(root, name, path, draft)


@fact_group.command("show")
@click.argument("name")
@click.argument("path", required=False)
@click.option("--draft", is_flag=True,
              help="NAME is a drafting method (facts/drafts), not a card, serving stack or routing record.")
@click.option("--history", is_flag=True,
              help="Every version of fact PATH, from each git commit that changed it (and uncommitted changes).")
@_json_option
@click.pass_context
def fact_show_command(ctx: click.Context, name: str, path: str | None, draft: bool, history: bool,
                      as_json: bool) -> None:
    """Show fact PATH of NAME, a card, a serving stack (facts/stacks: share.read) or a routing record
    (facts/routing: routing.hot_share), every fact without PATH: value, unit, provenance, source and locator,
    derivation, note. With --history, when it changed, and from what (read through git)."""
    from passprice.edit import read_facts
    from passprice.registry import named_in
    from passprice.report import fact_json, facts_text

    if history and not draft and path is not None:
        record_file = _record_fact_file(_root(ctx), name, path)
        if record_file is not None:  # a routing record's or a stack's fact, as a card's (walkthrough 21)
            _show_history(_root(ctx), record_file, as_json)
            return
    record = None if draft or history else _record_facts(_root(ctx), name, path)
    if record is not None:  # a routing record's or a stack's facts, read-only, by the paths an audit lists
        kind, file, facts, note = record
        if path is not None:
            full = _fact_of(facts, path)
            if full is None:
                also = _other_records(_root(ctx), name, file)
                raise InputError(f"{file}: {path}: no such fact (it has {', '.join(facts)}){also}")
            facts = {full: facts[full]}
        if as_json:
            _echo_json({"name": name, "kind": kind, "file": str(file), "note": note,
                        "facts": {p: fact_json(f) for p, f in facts.items()}})
        else:
            click.echo(facts_text(f"{name} ({named_in(_root(ctx), file)}), a {kind}", facts)
                       + (f"\n\n{kind} note: {note}" if note else ""))
        return
    if history and path is None:
        raise click.UsageError("--history needs the fact's PATH")
    root, where = _fact_file(ctx, name, path, draft)
    if history:
        _show_history(root, where, as_json)
        return
    facts = read_facts(where, root.schema)
    if path is not None:
        if where.path not in facts:
            raise InputError(f"{where.file}: {where.path}: no such fact (it has {', '.join(facts)})")
        facts = {where.path: facts[where.path]}
    # A drafting method's [method] note, which its figures' citations point to ("[method] note and this figure's
    # note"), shown as a routing record's is (`audit` showed it, `fact show --draft` did not: leftovers 27b).
    note = _method_note(root, where.file) if where.kind == "draft" else None
    if as_json:
        _echo_json({"name": where.name, "kind": where.kind, "file": str(where.file),
                    "facts": {p: fact_json(f) for p, f in facts.items()},
                    **({"note": note} if where.kind == "draft" else {})})
    else:
        # The card file relative to the root, as every other command names a registry file in text (left31: the
        # absolute path was printed); --json keeps the absolute "file".
        click.echo(facts_text(f"{where.name} ({named_in(root, where.file)})", facts)
                   + (f"\n\ndrafting method note: {note}" if note else ""))


def _method_note(root: Any, file: Path) -> str | None:
    """The ``[method]`` note of the drafting method in ``file`` (``None`` when it has none), as
    :func:`passprice.drafts.load_draft_method` reads it. Raises :class:`InputError` as that does."""
    from passprice.drafts import load_draft_method

    return load_draft_method(root, str(file)).note


@fact_group.command("recompute")
@click.argument("name")
@click.argument("path", required=False)
@click.option("--draft", is_flag=True, help="NAME is a drafting method (facts/drafts), not a card.")
@_json_option
@click.pass_context
def fact_recompute_command(ctx: click.Context, name: str, path: str | None, draft: bool, as_json: bool) -> None:
    """Recompute derived fact PATH of card NAME (or, with --draft, of a drafting method) from today's facts, in
    place (without PATH: every derived fact of NAME that no longer follows from its inputs, inputs first): its value
    from its formula, its fact inputs' recorded values today's; provenance, source, locator and note kept. What
    `check` and `diff` name stale. A serving stack's or routing record's facts are not recomputed here (exit 2)."""
    from passprice.edit import provenance_kept, recompute_fact, recompute_record
    from passprice.report import fact_json

    root, where = _fact_file(ctx, name, path, draft)
    if root.embedded:
        raise InputError(
            f"{_read_only(root)}; start a registry of your own with `passprice init DIR`, "
            "run inside one (or a checkout), or name one before the command: passprice --root DIR COMMAND"
        )
    if path is not None:
        one = recompute_fact(where, root.schema, root)
        edits = [one] if one is not None else []
    else:
        edits = recompute_record(where, root.schema, root)
    shown = where.file.relative_to(root.path) if where.file.is_relative_to(root.path) else where.file
    kept = provenance_kept(edits)
    from passprice.addedfacts import MEASURED_ELSEWHERE, warning_json
    from passprice.lineage import borrowed_in

    # a copied card's measurement kept as its own (walkthrough 117): on stderr, and in --json's warnings
    borrowed = borrowed_in(root, where.file) if edits and not draft else []
    if as_json:
        _echo_json({"file": str(where.file), "recomputed": [
            {"path": e.where.path, "old": fact_json(e.old) if e.old is not None else None, "new": fact_json(e.new)}
            for e in edits
        ], "provenance_kept": kept, "warnings": [warning_json(MEASURED_ELSEWHERE, line) for line in borrowed]})
        return
    for e in edits:
        old = e.old.describe() if e.old is not None else "(new)"
        click.echo(f"{shown}: {e.where.path}: {old} -> {e.new.describe()} (recomputed from today's inputs)")
    if kept is not None:
        click.echo(f"{shown}: {kept}")
    for line in borrowed:
        click.echo(f"passprice: warning: {line}", err=True)
    if not edits:
        what = f"{path} follows" if path is not None else "every derived fact follows"
        click.echo(f"{shown}: nothing to recompute: {what} from its inputs")


@fact_group.command("set")
@click.argument("name")
@click.argument("path")
@click.option("--value", required=True, help="The figure, in --unit (a finite number).")
@click.option("--unit", required=True, help="Its unit, exactly: GB, GiB, TB/s, TMAC/s, Tcycle/s, 1 …")
@click.option("--provenance", required=True, help="published, measured, derived, estimated or assumed.")
@click.option("--source", "source_id", required=True, metavar="ID",
              help="The source it comes from: a record in sources/ (passprice sources lists them).")
@click.option("--locator", required=True, help="Where in the source: table, row, column, page, quoted figure.")
@click.option("--note", help="Basis of an estimate, what a device reports, caveats.")
@click.option("--derivation", metavar="TABLE",
              help='How it is computed (required for derived), a TOML inline table: {formula = "dot / bandwidth", '
              'digits = 4, inputs = {dot = {value = 4.48, unit = "TB/s", locator = "…"}, bandwidth = {fact = '
              '"memory.bandwidth"}}}; a fact input without value and unit takes the fact\'s.')
@click.option("--cite", hidden=True, help="Replaced by --source and --locator.")
@click.option("--draft", is_flag=True, help="NAME is a drafting method (facts/drafts), not a card.")
@_json_option
@click.pass_context
def fact_set_command(
    ctx: click.Context,
    name: str,
    path: str,
    value: str,
    unit: str,
    provenance: str,
    source_id: str,
    locator: str,
    note: str | None,
    derivation: str | None,
    cite: str | None,
    draft: bool,
    as_json: bool,
) -> None:
    """Set fact PATH of card NAME (or, with --draft, of a drafting method) in place, keeping the file's comments
    and layout; a serving stack's or routing record's file is edited by hand (exit 2 says so). The entry is replaced
    whole: a note or derivation not given is removed. An edit that would leave the file invalid is refused (exit 2)
    and the file is left untouched. Derived facts the edit leaves stale are named on stderr (passprice: warning: …)."""
    from passprice.edit import edit_fact, parse_derivation, parse_value, read_facts
    from passprice.report import fact_json

    if cite is not None:
        raise InputError("--cite: a fact cites a source record now: give --source ID (passprice sources lists them; "
                         "add sources/ID.toml for a new document) and --locator 'table, row, figure'")
    root, where = _fact_file(ctx, name, path, draft)
    if root.embedded:
        raise InputError(
            f"{_read_only(root)}; start a registry of your own with `passprice init DIR`, "
            "run inside one (or a checkout), or name one before the command: passprice --root DIR COMMAND"
        )
    value, unit = _require_unicode(value, "--value"), _require_unicode(unit, "--unit")
    provenance, source_id = _require_unicode(provenance, "--provenance"), _require_unicode(source_id, "--source")
    locator, note = _require_unicode(locator, "--locator"), _require_unicode(note, "--note")
    derivation = _require_unicode(derivation, "--derivation")
    entry = {
        "value": parse_value(value),
        "unit": unit,
        "provenance": provenance,
        "source": source_id,
        "locator": locator,
        "note": note,
        "derivation": parse_derivation(derivation, read_facts(where, root.schema)) if derivation else None,
    }
    edit = edit_fact(where, entry, root.schema, root)  # read, edited and replaced under a lock on the file
    stale = edit.stale()
    shown = where.file.relative_to(root.path) if where.file.is_relative_to(root.path) else where.file
    if not as_json:
        old = f"{edit.old.describe()} ({edit.old.provenance.value})" if edit.old is not None else "(new)"
        state = "" if edit.changed else " (unchanged)"
        if edit.changed and edit.old is not None:
            # walkthrough 39: "0.92 (measured) -> 0.92 (measured)" of an edit that added a note said nothing of it;
            # every part the line does not show is named, in the review's words (walkthrough 57)
            from passprice.factparts import change_said

            was, now = edit.old, edit.new
            seen = {"value", "unit"} if was.describe() != now.describe() else set()
            seen |= {"provenance"} if was.provenance != now.provenance else set()
            what = change_said(was, now, leave=frozenset(seen))
            state = f" ({what})" if what else "" if seen else " (as written changed)"
        click.echo(f"{shown}: {where.path}: {old} -> {edit.new.describe()} ({edit.new.provenance.value}){state}")
    from passprice.addedfacts import MEASURED_ELSEWHERE

    # every warning, in the order stderr gives them: (code, text), the text as printed after "passprice: warning: "
    # (--json's warnings: walkthrough 117's copied measurements were on stderr alone)
    warned: list[tuple[str, str]] = [("stale", f"{shown}: {found.message}") for found in stale]
    from passprice.edit import cautions

    said = cautions(edit, root.schema) if edit.changed else []
    # A derived fact whose recomputed value its schema refuses is not one `fact recompute` can write (it would be
    # refused): the hint named a command that failed (session 15).
    fixable = [f.path for f in stale if f.kind in ("stale", "mismatch") and f.path != where.path
               and not any(f" would make {f.path}, derived from it," in line for line in said)]
    if fixable:
        # The stale warnings said what each recomputes to, not how to write it (session 15's walkthrough found the
        # command only in diff's refusal, after the pull request failed). The whole record is recomputed only when
        # that leaves the fact just set as given.
        flag = " --draft" if draft else ""
        commands = ([f"passprice fact recompute {shell_word(name)}{flag}"] if len(fixable) == len(stale)
                    else [f"passprice fact recompute {shell_word(name)} {path}{flag}" for path in fixable])
        them = "it" if len(fixable) == 1 else "them"
        from passprice.lineage import borrowed_in

        borrowed = borrowed_in(root, where.file) if not draft else []
        once = (" once the measurements they rest on are this card's (below: another card's measured facts cite the "
                "same places)") if any(f": {p} is measured but " in line for line in borrowed for p in fixable) else ""
        warned.append(("recompute", f"{shown}: {'; '.join(f'`{c}`' for c in commands)} writes {them} from "
                                    f"today's inputs{once} (`passprice diff` fails a change that leaves a derived fact "
                                    "stale)"))
        warned += [(MEASURED_ELSEWHERE, line) for line in borrowed]
    warned += [("caution", f"{shown}: {line}") for line in said]
    if edit.changed:
        from passprice.lineage import quote_problems

        # check's line for a quote of the fact its stored excerpt lacks, or one stating another figure: written all
        # the same (the excerpt may be about to be updated), said now rather than by the next check
        # (tests/test_fix53w.py: a locator set to 'Peak Memory Bandwidth 8.2 TB/s' was written without a word)
        warned += [("quote", line) for line in quote_problems(root, only=(where.file, where.path))]
    if (not draft and edit.changed and edit.old is not None
            and (edit.old.amount, edit.old.unit) != (edit.new.amount, edit.new.unit)):
        # the locks whose price the edit moves: check passes such drift ("all holds"), the review fails it unless the
        # change re-locks them (a new user's first review failed on 4)
        from passprice.check import prices_moved_by
        from passprice.enforce import command_span
        from passprice.locks import MAX_FLOOR_WARNINGS

        moved = prices_moved_by(root, name, where.path)
        if moved:
            # the first few named, as the floor lines below are (1,001 copies of a lock made one line of 1,001 names
            # and commands: tests/test_leftovers_30.py)
            shown_moved = moved[:MAX_FLOOR_WARNINGS]
            relocks = ", ".join(command_span(["passprice", "lock", "--update", "-o", s.pasted or s.path])
                                for s in shown_moved)
            rest = (f" and {len(moved) - len(shown_moved):,} more (`passprice check` lists every one)"
                    if len(moved) > len(shown_moved) else "")
            one = len(moved) == 1
            warned.append(("price_moved", f"{shown}: {where.path}: the edit moves {len(moved):,} locked "
                                          f"price{'' if one else 's'} ({', '.join(s.name for s in shown_moved)}"
                                          f"{rest}): a review fails it unless the change re-locks "
                                          f"{'it' if one else 'each'}: {relocks}{rest and ', …'}"))
    if not draft and edit.old is not None and edit.new.provenance.weaker_than(edit.old.provenance):
        from passprice.locks import MAX_FLOOR_WARNINGS, floors_below
        from passprice.registry import pasted_path

        below = floors_below(root, name, where.path, edit.new.provenance)
        for lock, file, floor in below[:MAX_FLOOR_WARNINGS]:
            relock = (f"passprice lock --update -o {shell_word(pasted_path(root, file))} --force --require "
                      f"{where.path}={edit.new.provenance.value}")
            warned.append(("below_floor", f"{shown}: {where.path} is {edit.new.provenance.value} now, below the "
                                          f"floor {floor.value} of lock {lock}: `passprice check` (the pre-commit "
                                          "hook) and the review fail it; restore the fact, or loosen that floor on "
                                          f"purpose (`{relock}`)"))
        if len(below) > MAX_FLOOR_WARNINGS:
            more = len(below) - MAX_FLOOR_WARNINGS
            warned.append(("below_floor", f"{shown}: and {more:,} more lock{'s' if more > 1 else ''} below "
                                          f"{'their floors' if more > 1 else 'its floor'} for {where.path} "
                                          "(`passprice check` lists every one)"))
    if as_json:
        from passprice.addedfacts import warning_json

        _echo_json({"file": str(where.file), "path": where.path, "changed": edit.changed,
                    "old": fact_json(edit.old) if edit.old is not None else None, "new": fact_json(edit.new),
                    "stale": [f.to_json() for f in stale], "warnings": [warning_json(c, t) for c, t in warned]})
    for _, text in warned:
        click.echo(f"passprice: warning: {text}", err=True)
