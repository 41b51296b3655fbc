"""A serving file passprice writes reads back as the very serving the command line described, every default made
explicit, or it is not written.

``passprice new-serving NAME`` turns the options every pricing command takes (``--checkpoint``, ``--card``,
``--batch``, ``--position`` …, or a registered serving they override) into ``registry/servings/NAME.toml``: the names
it gives are loaded (so a typo is refused with the registry's hints before anything is written), its contexts are
completed against the checkpoint (limit min(4096, the model's context), position limit / 2, :func:`complete`), the
text is parsed back and validated against ``schema/serving.schema.json`` exactly as every serving file is read, and
the file is written atomically (:func:`passprice.files.write_atomically`), never over an existing one without
``force``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from passprice.errors import InputError, SchemaError
from passprice.files import make_folder, require_no_lookalike, write_atomically
from passprice.registry import Root, named_in, read_only, require_record_name
from passprice.servings import (
    Resolved,
    ServingSpec,
    file_limit_problem,
    limit_past_model,
    require_inside_root,
    resolve,
    spec_from_document,
    spec_to_document,
)

#: The first line of every serving file: the schema an editor (taplo, Even Better TOML) validates it against, relative
#: to ``registry/servings/``.
SCHEMA_LINE = "#:schema ../../schema/serving.schema.json"

#: The order a serving file's keys are written in: what it is, what it prices, then the serving's choices, as the
#: registered servings are laid out; a table (``draft``) and the array of tables (``contexts``) come last.
_ORDER = (
    "description", "checkpoint", "card", "batch", "kv_page", "kv_bytes", "state_bytes", "attention",
    "activation_words", "scaling", "kv_rotated", "flush", "host_memory", "shared_prefix", "prefix_read_once",
    "routing", "max_tpot", "memory_use",
)


def serving_text(spec: ServingSpec) -> str:
    """The text of the serving file holding ``spec``: :data:`SCHEMA_LINE`, the top-level keys of
    :func:`~passprice.servings.spec_to_document` in :data:`_ORDER`, then ``[draft]`` and one ``[[contexts]]`` table a
    context class, written with tomlkit (quoting and escaping as TOML requires). ``spec`` should be completed
    (:func:`~passprice.servings.complete`) for the file to state its contexts."""
    import tomlkit

    document = spec_to_document(spec)
    out = tomlkit.document()
    for key in _ORDER:
        if key in document:
            out.add(key, document[key])
    draft = document.get("draft")
    if draft is not None:
        table = tomlkit.table()
        for key, value in draft.items():
            table.add(key, value)
        out.add(tomlkit.nl())
        out.add("draft", table)
    contexts = document.get("contexts")
    if contexts:
        array = tomlkit.aot()
        for context in contexts:
            table = tomlkit.table()
            for key, value in context.items():
                # a whole position as an integer, as the shipped files write it (`position = 16384`, not 16384.0)
                whole = key == "position" and isinstance(value, float) and value.is_integer()
                table.add(key, int(value) if whole else value)
            array.append(table)
        out.add(tomlkit.nl())
        out.add("contexts", array)
    return f"{SCHEMA_LINE}\n{tomlkit.dumps(out).rstrip()}\n"


@attrs.frozen
class Written:
    """A serving file :func:`write_serving` wrote: its registry ``name``, its ``path`` and the completed ``spec`` it
    holds (what ``passprice price NAME`` prices), and a ``warning`` (one line, or ``None``): a mixture of experts
    written without a routing record, every price of which is refused ``Routed`` unless given ``--routing``."""

    name: str
    path: Path
    spec: ServingSpec
    warning: str | None = None


def routing_problem(resolved: Resolved) -> str | None:
    """Why no price of the serving ``resolved`` could take its ``routing``, or ``None`` (walkthrough 40:
    ``new-serving`` wrote one with ``--routing uniform`` on a dense checkpoint, and one naming a record of another
    router, and every price of each was then refused ``BadRouting``): a routing record on a dense checkpoint (no
    ``expert_count``), or one the checkpoint's router cannot take (:func:`passprice.routing.mismatch`: another
    expert count or experts a token, shares past their bound). One phrase after ``routing: 'NAME'``; raises
    nothing."""
    from passprice.routing import mismatch

    routing = resolved.serving.routing
    if routing is None:
        return None
    header = resolved.header
    experts = header.meta_int("expert_count") or 0
    used = header.meta_int("expert_used_count") or 0
    if not experts:
        return (f"names a routing record, but checkpoint {resolved.spec.checkpoint!r} is dense (no expert_count): "
                "every price of the serving would be refused BadRouting")
    problem = mismatch(routing, experts, used) if used else None
    if problem is not None:
        return (f"does not fit checkpoint {resolved.spec.checkpoint!r}: {problem}; every price of the serving would "
                "be refused BadRouting")
    return None


def _require_routing_fits(root: Root, path: Path, resolved: Resolved) -> None:
    """Refuse writing a serving whose routing no price of it could take (:func:`routing_problem`). Raises
    :class:`InputError` naming the file and key (nothing written)."""
    problem = routing_problem(resolved)
    if problem is None:
        return
    routing = resolved.serving.routing
    assert routing is not None
    advice = ": leave out --routing, or name the mixture of experts meant" if "is dense" in problem else ""
    raise InputError(f"{named_in(root, path)}: routing: {routing.name!r} {problem} (nothing written){advice}")


def _routing_warning(root: Root, resolved: Resolved) -> str | None:
    """The warning for a mixture of experts written without a routing record, naming the records registered for
    its expert count (:func:`passprice.routing.records_for`), or ``None``."""
    from passprice.routing import records_for, router_said
    from passprice.serving import every_expert_read

    experts = resolved.header.meta_int("expert_count") or 0
    if resolved.serving.routing is not None or not experts or every_expert_read(resolved.header):
        return None  # every expert read by every token: no routing asked (tests/test_fix179.py)
    records = records_for(root, experts, resolved.header)
    named = (f"registered here for {router_said(experts, resolved.header)}: {', '.join(records)}" if records
             else "facts/routing/uniform.toml states uniform routing as an assumption")
    return (f"{resolved.spec.checkpoint} is a mixture of {experts} experts and the serving names no routing record: "
            f"every price of it is refused Routed unless given --routing NAME: write it with --routing NAME ({named})")


def write_serving(
    root: Root, name: str, spec: ServingSpec, *, description: str | None = None, force: bool = False
) -> Written:
    """Write ``spec`` (a serving as the command line describes it: names not yet loaded, contexts possibly open) to
    ``registry/servings/{name}.toml`` of ``root``, with ``description`` (a serving derived from another does not
    inherit its description: the old one would describe another serving).

    Every name the spec gives is loaded and held to its scope (:func:`~passprice.servings.resolve`); the contexts are
    completed against the checkpoint; a name that is a path must lie inside the registry (a registry file names
    nothing outside it, :func:`~passprice.servings.require_inside_root`); the text is parsed back and validated
    against the serving schema and must describe the same spec before the file is written.

    Raises :class:`InputError` (one line) when ``root`` is the read-only embedded registry, ``name`` is not a record
    name (letters, digits, ``.``, ``_``, ``-``), a name the spec gives names nothing or lies outside the registry,
    the file exists and not ``force``, or it cannot be written; :class:`InputError` also for a value the serving
    schema refuses (a description with a newline), naming the key, and for a routing record no price of the serving
    could take (:func:`_require_routing_fits`). Scope refusals (:class:`~passprice.scopes.OutOfScope`) propagate."""
    if root.embedded:
        raise InputError(
            f"{read_only(root)}; start a registry of your own with `passprice init DIR`, "
            "run inside one (or a checkout), or name one before the command: passprice --root DIR COMMAND"
        )
    require_record_name("serving", name)
    path = root.servings / f"{name}.toml"
    spec = attrs.evolve(spec, description=description)
    _require_not_relative(root, path, spec)
    try:
        require_inside_root(root, attrs.evolve(spec, source=str(path)))
    except InputError as e:
        raise InputError(
            f"{e}: bring it in first (`passprice import FILE --name NAME` for a checkpoint, a card's file into "
            "facts/cards/) and give its name"
        ) from None
    resolved = resolve(root, attrs.evolve(spec, source=None))
    # A limit the serving written from gives (new-serving NEW OLD) is OLD's file's problem, named by its file and key
    # as every command reading OLD names it (it said "NEW.toml (not written)": tests/test_fix168.py).
    theirs = file_limit_problem(root, spec, resolved.header)
    if theirs is not None:
        raise InputError(theirs)
    past = limit_past_model(resolved.spec, resolved.header)
    if past is not None:  # the file would be refused by every command reading it (tests/test_attack163.py)
        raise InputError(f"{named_in(root, path)} (not written): {past}")
    _require_routing_fits(root, path, resolved)
    completed = attrs.evolve(resolved.spec, source=None)
    text = serving_text(completed)
    _read_back(root, path, text, completed)
    from passprice.schema import require_link_inside

    require_link_inside(path)  # --force over a link to a file outside the registry: it would not read back
    require_no_lookalike(path)
    make_folder(root.servings)
    write_atomically(path, text, force)
    return Written(name, path, completed, _routing_warning(root, resolved))


def own_description(root: Root, name: str, serving: str | None) -> str | None:
    """The description of the serving ``serving`` (a registry name or a file) when it is the very file
    ``new-serving NAME`` replaces (``registry/servings/{name}.toml`` of ``root``), else ``None``.

    A serving derived from another does not inherit its description (it would describe the other serving), but one
    rewritten in place is the same serving: ``new-serving gemma3-270m-h100 gemma3-270m-h100 --batch 7 --force``
    dropped the file's ``description`` without a word (attack round 45). Raises :class:`InputError` as
    :func:`~passprice.servings.load_spec` does."""
    from passprice.files import look
    from passprice.servings import load_spec, serving_path

    if serving is None:
        return None
    try:
        there = look(root.servings / f"{name}.toml")
    except InputError:
        return None  # a name write_serving refuses by its own line
    read = look(serving_path(root, serving))
    if there is None or read is None or not os.path.samestat(there, read):
        return None
    return load_spec(root, serving).description


def _require_not_relative(root: Root, path: Path, spec: ServingSpec) -> None:
    """Refuse a name of ``spec`` (``checkpoint``, ``card``, ``draft.method``, ``routing``) that is a relative path
    (``registry/q.gguf``, ``facts/cards/x.toml``, ``q.gguf``): a serving file's paths are looked up from the working
    folder of whoever reads it, so the file read back where it was written and nowhere else (``price NAME`` from
    another folder: "checkpoint: registry/q.gguf: no such file"). A registry name or an absolute path passes.
    Raises :class:`InputError` naming the file and key (nothing written)."""
    import os

    from passprice.files import is_there
    from passprice.registry import named_in

    named = [("checkpoint", spec.checkpoint, root.checkpoints), ("card", spec.card, root.cards),
             ("routing", spec.routing, root.routing)]  # fmt: skip
    if spec.draft is not None:
        named.append(("draft.method", spec.draft.method, root.drafts))
    for key, ref, folder in named:
        if not ref or os.path.isabs(ref):
            continue
        if "/" not in ref and os.sep not in ref and is_there(folder / f"{ref}.toml"):
            continue  # a registry name (a record may be named x.gguf)
        if "/" in ref or os.sep in ref or ref.endswith((".toml", ".gguf", ".xz", ".gz")):
            raise InputError(
                f"{named_in(root, path)}: {key}: {ref!r} is a path relative to the working folder, which a serving "
                "file read from "
                "another folder does not find (nothing written): give its registry name (`passprice import FILE "
                "--name NAME` for a checkpoint, a card's file into facts/cards/): a file outside the registry is "
                "refused, and one inside it has a name"
            )


def _read_back(root: Root, path: Path, text: str, spec: ServingSpec) -> None:
    """Parse ``text`` and validate it as the serving file ``path`` would be read; raise :class:`InputError` when the
    schema refuses it or it reads back as another spec (nothing has been written yet)."""
    from passprice import schema

    try:
        document: dict[str, Any] = schema.load(path, "serving", root.schema, data=text.encode("utf-8"), kept=False)
        back = spec_from_document(document, str(path))
    except (InputError, SchemaError) as e:
        raise InputError(f"{e} (nothing written)") from None
    if back != spec:  # a value TOML cannot carry as given: refuse rather than write another serving
        raise InputError(f"{path}: the serving would read back differently from the one described (nothing written)")
