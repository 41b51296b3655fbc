"""The commands over what is registered: list the cards, facts, servings, checkpoints and sources, explain a term,
make a root (``init``), read a checkpoint's header, and add a checkpoint (``import``, ``synth``). None prices a pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from passprice.cli.app import _echo_json, _json_option, _printed_json, _root, cli
from passprice.cli.options import _check_inputs, _check_output, _kept_problems, _load_all, _problems, _read_only
from passprice.cli.params import _FilePath, _FolderPath, _OutputPath, _require_unicode
from passprice.errors import InputError, escaped
from passprice.files import shown as shown_path

#: The line under ``passprice checkpoints``: which digest the table shows, and which one a lock pins
#: (:func:`passprice.pins.checkpoint_digest`).
CHECKPOINT_DIGESTS = (
    "sha256: of the header file as imported; a lock pins its content digest instead (of the metadata and tensor "
    "table priced: the same for any copy or name of the header)"
)

#: The line under ``passprice checkpoints`` saying what its origin column means (walkthrough 39: it had none).
CHECKPOINT_ORIGINS = (
    "origin: synthetic = a header built by passprice synth from a published configuration, no weights exist; file = "
    "read from a GGUF file's header (--json gives each entry's origin text)"
)


# --- facts ------------------------------------------------------------------------------------------------------------


@cli.command("cards")
@_json_option
@click.pass_context
def cards_command(ctx: click.Context, as_json: bool) -> None:
    """List the registered cards."""
    from passprice.cards import load_card
    from passprice.report import cards_json_chunks, cards_table

    root = _root(ctx)
    cards = [c for _, c in _load_all(root.names(root.cards), lambda name: load_card(root, name), root.cards, root)]
    if as_json:  # written card by card: 10,000 cards' one string and tables took 1.7 GB (attack round 55)
        for chunk in cards_json_chunks(cards, _kept_problems):
            _printed_json()
            click.echo(chunk, nl=False)
        click.echo()
    else:
        click.echo(cards_table(cards))


@cli.command("facts")
@click.argument("card")
@_json_option
@click.pass_context
def facts_command(ctx: click.Context, card: str, as_json: bool) -> None:
    """Show every fact of CARD: value, unit, provenance, citation, note."""
    from passprice.cards import load_card
    from passprice.report import fact_json, facts_text

    c = load_card(_root(ctx), card)
    if as_json:
        _echo_json({"name": c.name, "title": c.title, "facts": {p: fact_json(f) for p, f in c.facts().items()}})
    else:
        click.echo(facts_text(f"{c.name}: {c.title}", c.facts()))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@cli.command("servings")
@_json_option
@click.pass_context
def servings_command(ctx: click.Context, as_json: bool) -> None:
    """List the registered servings: checkpoint, card, batch, drafts, and what each is for."""
    from passprice.servings import load_spec

    root = _root(ctx)
    specs = _load_all(root.names(root.servings), lambda name: load_spec(root, name), root.servings, root)
    if as_json:
        from passprice.servings import spec_to_document

        _echo_json({"servings": {name: spec_to_document(spec) for name, spec in specs}, "problems": _kept_problems()})
        return
    from passprice.tables import text_table

    rows = [
        [
            name,
            spec.checkpoint,
            spec.card,
            str(spec.batch),
            f"{spec.draft.tokens} ({spec.draft.method})" if spec.draft else "",
            _clip(spec.description or "", 70),
        ]
        for name, spec in specs
    ]
    click.echo(text_table(["serving", "checkpoint", "card", "batch", "drafts", "description"], rows))


@cli.command("checkpoints")
@_json_option
@click.pass_context
def checkpoints_command(ctx: click.Context, as_json: bool) -> None:
    """List the registered checkpoints: architecture, tensors, bytes, header sha256 (of the file; a lock pins a
    content digest instead, of what is priced)."""
    from passprice.checkpoints import entry_row

    root = _root(ctx)
    loaded = _load_all(root.names(root.checkpoints), lambda name: entry_row(root, name), root.checkpoints, root)
    out = [row for _, row in loaded]
    if as_json:
        _echo_json({"checkpoints": out, "problems": _kept_problems()})
        return
    from passprice.tables import cut, printable, si, text_table

    rows = [
        [c["name"], cut(str(c["architecture"])), f"{c['tensors']:,}", si(c["tensor_bytes"], "B"),
         f"{c['context_length']:,}" if c["context_length"] else "", "synthetic" if c["synthetic"] else "file",
         c["sha256"][:16] + "…"]
        for c in out
    ]
    headers = ["checkpoint", "architecture", "tensors", "bytes", "context", "origin", "sha256"]
    click.echo(text_table(headers, rows, right=(2, 3, 4)))
    click.echo(f"\n  {CHECKPOINT_DIGESTS}")
    click.echo(f"  {CHECKPOINT_ORIGINS}")
    from passprice.unkept import unkept

    never = [c["name"] for c in out if c["synthetic"] and unkept(c["sha256"]) is not None]
    if never:  # issue 13 (session 33): their entries' source names a header file nobody wrote
        click.echo(f"  header file not kept: {', '.join(never)}: synthetic, built by passprice synth and imported "
                   "without -o, so no header file was written (the entry's source names none); `passprice header "
                   "NAME` gives the synth command that writes it again")
    from passprice.checkpoints import draft_note

    for c in out:  # a checkpoint's bytes a serving without drafts does not hold
        note = draft_note(c)
        if note is not None:
            click.echo(f"  {note}")
    for c in out:  # bytes not counted: of a type the gguf package does not know
        if c.get("unknown_type_tensors"):
            n = c["unknown_type_tensors"]
            click.echo(f"  {printable(c['name'])}: {n:,} tensor{'s' if n != 1 else ''} of a GGML type the gguf package "
                       "does not know, their bytes not counted: every price of it is refused (UnknownType)")


@cli.command("explain", context_settings={"ignore_unknown_options": True})
@click.argument("term", required=False)
@_json_option
def explain_command(term: str | None, as_json: bool) -> None:
    """Define TERM, a word passprice prints (array, vector, scale, flush, head rows, streams.*, TPOT …); without
    TERM, list every term. The README's glossary is the same text."""
    from passprice import glossary

    if term is None:
        if as_json:
            _echo_json({"terms": {t.name: {"short": t.short, "definition": t.long, "aliases": list(t.aliases)}
                                  for t in glossary.TERMS.values()}})
        else:
            click.echo(glossary.listing())
        return
    found = glossary.lookup(term)
    if as_json:
        _echo_json({"term": found.name, "short": found.short, "definition": found.long, "aliases": list(found.aliases)})
    else:
        click.echo(glossary.text(found, term))


@cli.command("init")
@click.argument("directory", default=".", type=_FolderPath())
@click.option(
    "--requirement", metavar="SPEC",
    help="The line of requirements.txt CI installs passprice by, e.g. 'passprice @ git+https://…@COMMIT' (default: "
    "how this passprice was installed, when its direct URL is recorded; else a placeholder to fill in).",
)
@click.option("--examples", is_flag=True, help="Copy the registered checkpoints, servings and locks too (a registry "
              "to try things in; without it registry/ and locks/ start empty).")
@_json_option
@click.pass_context
def init_command(
    ctx: click.Context, directory: Path, requirement: str | None, examples: bool, as_json: bool
) -> None:
    """Start a registry of your own in DIRECTORY (default: here): every record folder, the reference facts copied,
    the schemas, an editor configuration (.taplo.toml), a pre-commit hook and a CI workflow. Every command run in
    it then reads and writes its files."""
    from passprice.scaffold import COMMIT_FIRST, attributes_advice, nested_caution, plan, repository_top, write

    _require_unicode(str(directory), "DIRECTORY")
    if requirement is not None:
        requirement = _require_unicode(requirement, "--requirement")
    from passprice.registry import require_no_registry_in_records

    root = _root(ctx)
    require_no_registry_in_records(root, directory)
    the_plan = plan(root, requirement, examples, repository=repository_top(directory))
    kept = write(the_plan, directory)
    caution = nested_caution(directory)
    if caution is not None:
        click.echo(f"passprice: warning: {caution}", err=True)
    attributes = attributes_advice(directory, kept)  # the user's .gitattributes, left alone, lacking init's lines
    if attributes is not None:
        click.echo(f"passprice: warning: {attributes}", err=True)
    from passprice.scaffold import uncommitted_copies, uncommitted_line

    edited = uncommitted_line(the_plan, uncommitted_copies(the_plan))  # a checkout's working tree, as edited
    if edited is not None:
        click.echo(f"passprice: warning: {edited}", err=True)
    if as_json:
        _echo_json({"path": str(directory), "folders": list(the_plan.folders), "copied": list(the_plan.copied),
                    "files": [f for f in sorted(the_plan.files) if f not in kept],
                    "requirement": the_plan.requirement.line,
                    "requirement_origin": the_plan.requirement.origin, "advice": the_plan.requirement.advice(),
                    "caution": caution, "kept": list(kept), "attributes": attributes, "then": COMMIT_FIRST})
        return
    click.echo(f"a passprice registry in {directory}:")
    for folder in the_plan.folders:
        click.echo(f"  {folder + '/':<24}{the_plan.filled(folder)}")
    tooling = ("schema/", ".taplo.toml", ".pre-commit-config.yaml", ".github/workflows/facts.yml", ".gitattributes",
               "requirements.txt", "README.md")
    click.echo("  " + ", ".join(t for t in tooling if t not in kept))
    if kept:
        click.echo(f"  left alone (already here; init replaces nothing, so its own are not written): {', '.join(kept)}")
    click.echo(f"  requirements.txt: {the_plan.requirement.line}")
    advice = the_plan.requirement.advice()
    if advice is not None:
        click.echo(f"first: {advice}")
    from passprice.files import shell_word

    into = "" if directory.resolve() == Path.cwd().resolve() else f"cd {shell_word(directory)} && "
    # no repository in a repository; at a repository's top (a fork's own) no `git init` either (walkthrough 33)
    start = "" if caution is not None else "pre-commit install; " if repository_top(directory) else (
        "git init && pre-commit install; ")
    click.echo(f"next: {into}{start}passprice import MODEL.gguf --name NAME")
    # the README's "Commit the registry init wrote to the default branch" said nowhere in init's output (issue 13)
    click.echo(f"then: {COMMIT_FIRST}")


# --- checkpoints --------------------------------------------------------------------------------------------------


@cli.command("sources")
@_json_option
@click.pass_context
def sources_command(ctx: click.Context, as_json: bool) -> None:
    """List the sources facts cite: how many facts cite each, how many locks rest on them, the provenances each
    supports."""
    from passprice.check import relative_lines
    from passprice.lineage import source_uses, sources_text

    root = _root(ctx)
    uses, problems = source_uses(root)
    _problems(relative_lines(root, problems))  # a file named as check names it, as the other listings do
    if as_json:
        _echo_json({"sources": [u.to_json() for u in uses], "problems": _kept_problems()})
    else:
        click.echo(sources_text(uses))


@cli.command("header")
@click.argument("file")
@click.option("--metadata", "show_metadata", is_flag=True, help="List every metadata key.")
@click.option("--tensors", "show_tensors", is_flag=True, help="List every tensor.")
@_json_option
@click.pass_context
def header_command(ctx: click.Context, file: str, show_metadata: bool, show_tensors: bool, as_json: bool) -> None:
    """Read the GGUF header of FILE (.gguf, .gguf.xz, .gguf.gz, or a registry entry name)."""
    from passprice.checkpoints import load_checkpoint
    from passprice.report import header_json, header_text

    root = _root(ctx)
    header = load_checkpoint(root, file, array_digests=False)  # none of its views shows a long array's digest
    if as_json:
        _echo_json(header_json(header))
    else:
        click.echo(_with_unkept(header_text(header, show_metadata, show_tensors), header, root, file))
    from passprice.decode import header_problems

    # Shown whole (a reader of any header), with what no price reads it by, as `check` and `checkpoints` refuse it
    # (an entry without embedding_length was shown here without a word: issue 13's leftovers, session 26).
    problems = header_problems(header)
    if not problems:  # the usual case: passprice.check (cards, facts, drafts, routing) is not imported for nothing
        return
    from passprice.check import relative_lines

    for line in relative_lines(root, problems):
        click.echo(f"passprice: warning: {escaped(line)} (check, checkpoints and every price refuse it)", err=True)


def _with_unkept(text: str, header: Any, root: Any, ref: str) -> str:
    """``header``'s text (the checkpoint ``ref`` of ``root``) with, under its ``sha256`` line, a ``header file`` line
    when it is a shipped synthetic header no file holds (:mod:`passprice.unkept`: its entry's source names a file
    never written, issue 13), as ``checkpoints`` and ``audit`` say it: of an entry whose origin says synthetic only
    (attack 60: an entry of those bytes whose origin says "Downloaded from …" was told "this shipped synthetic header
    was built by passprice synth" by ``header`` alone)."""
    from passprice.checkpoints import checkpoint_origin
    from passprice.unkept import unkept

    never = unkept(header.sha256) if str(header.source).endswith(".toml") else None
    if never is not None and not (checkpoint_origin(root, ref) or "").startswith("Synthetic"):
        never = None
    if never is None:
        return text
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("  sha256 ")), None)
    if at is None:
        return text
    lines.insert(at + 1, f"  header file   {never.sentence(escaped(header.shards[0].file))}")
    return "\n".join(lines)


@cli.command("import")
@click.argument("file", type=_FilePath())
@click.option("--name", help="Entry name (default: the file name without .gguf and compression suffixes).")
@click.option("--origin", default="", help="Where the checkpoint came from (recorded in the entry).")
@click.option("--force", is_flag=True, help="Overwrite an existing entry.")
@_json_option
@click.pass_context
def import_command(ctx: click.Context, file: Path, name: str | None, origin: str, force: bool, as_json: bool) -> None:
    """Import the GGUF header of FILE into registry/checkpoints/NAME.toml."""
    from passprice.checkpoints import (
        architecture_note,
        default_origin,
        entry_name,
        import_header,
        unknown_types_note,
        write_entry,
    )
    from passprice.gguf_header import read_header
    from passprice.tables import printable

    root = _root(ctx)
    if root.embedded:
        raise InputError(
            f"{_read_only(root)}; start a registry of your own with `passprice init DIR`, "
            "run inside one (or a checkout), or name one before the command: passprice --root DIR COMMAND"
        )
    # The entry records the file's name (its `source`): a name in bytes that are not UTF-8 cannot be written to
    # TOML; say so of FILE before reading it, not of the entry when it comes to be written.
    _require_unicode(file.name, "FILE's name (the entry records it; rename the file)")
    origin = _require_unicode(origin, "--origin")
    from passprice.registry import require_record_name

    if name is not None:  # before the header is read; the entry's own check let "x\n" through to its read-back
        require_record_name("checkpoint", name)
    else:  # `import .gz` said "checkpoint name '': use letters …", of a name nobody gave (attack round 28)
        try:
            require_record_name("checkpoint", entry_name(file))
        except InputError:
            raise InputError(
                f"{shown_path(file)}: imported under its file's name less its suffixes, {entry_name(file)!r}, which "
                "is no checkpoint name: give --name NAME (letters, digits, '.', '_' and '-', first a letter or digit)"
            ) from None
    try:
        header = read_header(file)
    except InputError as e:
        from passprice.synthetic import looks_like_config

        if len(e.lines) == 1 and ": byte 0: bad magic" in e.lines[0] and looks_like_config(file):
            from passprice.enforce import command_span

            synth = command_span(["passprice", "synth", str(file), "--import", name or "NAME"])
            raise InputError(f"{e.lines[0]}; this file is JSON: a model configuration (config.json) is built into a "
                             f"header-only checkpoint by {synth}") from None
        raise
    entry = name if name is not None else entry_name(file)
    target = root.checkpoints / f"{entry}.toml"
    from passprice.registry import require_not_other_record

    require_not_other_record(root, target)
    # By default the origin names the file (its path in the registry when it lies there, else its name) and the
    # header sha256 that identifies it, escaped to one line (a newline in a file's name is kept in `source`).
    origin = origin or default_origin(file, root.path, header.sha256)
    write_entry(target, import_header(header, entry, origin), force=force)
    _warn_same_content(root, header, entry)
    unknown = unknown_types_note(header, entry)
    if unknown:  # written (it reads back equal), but no price of it can be: said now, not first at `price`
        click.echo(f"passprice: warning: {printable(unknown)}", err=True)
    unpriced = architecture_note(header, entry)
    if unpriced:  # recorded as read (an architecture passprice does not price): every price of it refuses
        click.echo(f"passprice: warning: {printable(unpriced)}", err=True)
    if as_json:
        _echo_json({"entry": entry, "path": str(target), "sha256": header.sha256, "tensors": len(header.tensors),
                    "source": header.shards[0].file, "origin": origin})
    else:
        from passprice.registry import named_in

        # the entry as check and lock name a registry file: relative to it (leftovers 29b: /abs/root/registry/…)
        click.echo(f"imported {shown_path(file)} as {entry}: {named_in(root, target)} ({len(header.tensors)} tensors, "
                   f"sha256 {header.sha256})")


def _warn_same_content(root: Any, header: Any, entry: str) -> None:
    """The warning ``import`` and ``synth --import`` give when another entry of the registry holds the content just
    written under ``entry`` (walkthrough 39: the same header under a second name said nothing)."""
    from passprice.checkpoints import entries_holding

    others = entries_holding(root, header, skip=entry)
    if others:
        from passprice.registry import named_in

        said = ", ".join(named_in(root, root.checkpoints / f"{name}.toml") for name in others)
        click.echo(f"passprice: warning: {entry} holds the same header content as {said}: one checkpoint under "
                   f"{len(others) + 1} names (passprice check lists it; remove one unless both names are wanted)",
                   err=True)


@cli.command("synth")
@click.argument("config", type=_FilePath())
@click.option("--mix", default="Q4_K_M", show_default=True,
              help="Type mix, by llama.cpp's rules: Q4_K_M, Q4_0, Q8_0, F16, BF16, MXFP4 (MXFP4_MOE), NVFP4.")
@click.option("-o", "--output", type=_OutputPath(stdout=False), help="Header-only .gguf to write.")
@click.option("--import", "entry", metavar="NAME", help="Import it as registry/checkpoints/NAME.toml.")
@click.option("--mla", type=click.Choice(["split", "joined"]), default="split", show_default=True,
              help="DeepSeek's latent attention as llama.cpp stores it since April 2025 (split) or before (joined).")
@click.option("--no-mtp", is_flag=True, help="Leave out the multi-token-prediction blocks the config declares.")
@click.option("--note", default="", help="Appended to the entry's origin note.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file or entry.")
@_json_option
@click.pass_context
def synth_command(
    ctx: click.Context, config: Path, mix: str, output: Path | None, entry: str | None, mla: str, no_mtp: bool,
    note: str, force: bool, as_json: bool,
) -> None:
    """Build a header-only GGUF checkpoint from a published model configuration (CONFIG: a config.json)."""
    from passprice.synthetic import (
        Latent,
        build,
        compression,
        entry_text,
        read_config,
        requantized_experts,
        type_counts,
        write_header,
    )
    from passprice.typemix import Mix

    if output is None and entry is None:
        raise click.UsageError("give -o FILE.gguf, --import NAME, or both")
    note = _require_unicode(note, "--note")
    if entry is not None:  # the entry's own check let "x\n" through to its read-back (round 25)
        from passprice.registry import require_record_name

        require_record_name("checkpoint", entry)
    _check_output(output, force)
    _check_inputs([("CONFIG", config)], [("-o", output)])
    root = _root(ctx)
    if output is not None:
        from passprice.registry import require_not_record

        require_not_record(root, output)
        compression(output)  # a suffix naming another format: refused before the configuration is read
    published = read_config(config, root.schema)
    built = build(published, Mix.parse(mix), entry or (output.name if output else None), Latent(mla), not no_mtp)
    target = None
    if entry is not None:
        from passprice.checkpoints import write_entry

        if root.embedded:
            from passprice.registry import outside_registry

            raise outside_registry(root, "--import writes into registry/checkpoints/, and they are read-only")
        text, entry_header = entry_text(built, entry, note, output.name if output is not None else None,
                                        unwritten=output is None)
        target = root.checkpoints / f"{entry}.toml"
        from passprice.registry import require_not_other_record

        require_not_other_record(root, target)
        write_entry(target, text, force=force)
        _warn_same_content(root, entry_header, entry)
        from passprice.checkpoints import architecture_note
        from passprice.tables import printable

        unpriced = architecture_note(entry_header, entry)
        if unpriced:  # a configuration without a key its architecture needs (gpt-oss with no sliding_window)
            click.echo(f"passprice: warning: {printable(unpriced)}", err=True)
    if output is not None:
        write_header(built, output, force)
    counts = type_counts(built)
    summary: dict[str, Any] = {
        "config": str(config),
        "source": published.source,
        "architecture": published.config.arch,
        "mix": built.mix.value,
        "tensors": len(built.tensors),
        "tensor_bytes": built.tensor_bytes(),
        "types": counts,
        "output": str(output) if output is not None else None,
        "entry": str(target) if target is not None else None,
        "warning": requantized_experts(built),
    }
    if summary["warning"] is not None and not as_json:
        click.echo(f"passprice: warning: {summary['warning']}", err=True)
    if as_json:
        _echo_json(summary)
        return
    types = ", ".join(f"{n} {ty}" for ty, n in counts.items())
    click.echo(f"{config}: {published.config.arch}, {built.mix.value}: {len(built.tensors):,} tensors, "
               f"{built.tensor_bytes():,} bytes of weights ({types})")
    if output is not None:
        click.echo(f"  header -> {output}")
    if target is None:
        # walkthrough 39: `synth -o` then `passprice import FILE` gave an entry whose origin named "a file outside
        # this registry" and never said synthetic, so its prices, locks and audits read as a real checkpoint's
        from passprice.enforce import command_span

        shown = str(config) if not str(config).startswith("-") else f"./{config}"  # `-x.json`: an option (round 58)
        words = ["passprice", "synth", shown, "--mix", built.mix.value]
        words += (["--mla", mla] if mla != "split" else []) + (["--no-mtp"] if no_mtp else [])
        again = command_span([*words, "--import", "NAME"])
        click.echo(f"  not imported: {again} imports it with an origin that says it is synthetic; `passprice "
                   "import` of the file cannot tell it from a real checkpoint's header (its entry would say so only "
                   "with --origin)")
    if target is not None:  # a registry file, named as check names it (leftovers 29b)
        from passprice.registry import named_in

        click.echo(f"  entry -> {named_in(root, target)}")
