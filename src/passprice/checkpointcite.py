"""A price's bytes are cited as its facts are: an audit names the checkpoint they were read from and where it came from.

A price rests on its card's facts and on its checkpoint: the bytes of the pass (``weight_bytes``, ``sequence_bytes``)
and its work are read off the checkpoint's metadata and tensor table, not off a fact. An audit lists every fact with
its source and locator; :func:`checkpoint_cited` gives the same for the checkpoint: the registry entry the header was
read from, the content a lock pins (:func:`passprice.pins.checkpoint_digest`), the header file's sha256 and the
entry's ``origin`` (where the header came from, or that it is synthetic, built from a published configuration with no
weights behind it). Walkthrough 25: an auditor tracing a quote of ``llama3-8b-q4_k_m`` found every card figure's
document from ``audit`` but not that the checkpoint itself was a synthetic header (its ``origin``, read only in the
entry file). And a lock handed to an auditor whose own registry (``passprice init``) lacks the checkpoint it pinned
is told where passprice's own registry holds that content (:func:`packaged_entry`): the advice was to import "the
pinned header again" from a FILE the auditor did not have. Nothing here prices: the module is outside the pricing
model's digest.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from passprice.gguf_header import GGUFHeader
    from passprice.locks import Lock
    from passprice.registry import Root


@attrs.frozen
class CheckpointCited:
    """Where a price's checkpoint came from: its ``name`` (the entry's, or the header file's as given), ``entry``
    (the entry file, relative to the registry when inside it; ``None`` for a header file read directly),
    ``content`` (``sha256:…`` of what the pricer reads: what a lock pins), ``header_sha256`` (hex, of the header
    bytes as imported), ``origin`` (the entry's ``origin`` text; ``""`` when it has none) and the pass's bytes it
    supplies, ``weight_bytes`` and ``sequence_bytes`` (bytes, as ``price --json`` gives them)."""

    name: str
    entry: str | None
    content: str
    header_sha256: str
    origin: str
    weight_bytes: float
    sequence_bytes: float
    #: The entry's ``source``: the name of the header file it was imported from (or synth wrote), as ``import``
    #: records it, without its folder; ``""`` for a header file read directly (``name`` is its name).
    header_file: str = ""
    #: Of an audit of a lock that pins another origin than today's entry states (:meth:`pinned_by`): the lock's name
    #: and the origin it pinned (leftovers 28: ``audit LOCK`` cited today's origin alone, where ``check``,
    #: ``reproduce`` and ``price --lock`` say "relabelled since the lock"); ``None`` otherwise.
    lock: str | None = None
    pinned_origin: str | None = None
    #: The registry ``entry`` is relative to (:func:`passprice.registry.registry_named`: ``"built-in"`` or its
    #: folder); ``None`` for an entry outside the registry (``entry`` is then the path as given) or a header file.
    registry: str | None = None
    #: The header's ``general.name`` (a string), which ``passprice synth`` writes from ``--import NAME`` (else from
    #: ``-o``'s file name): what rebuilding a synthetic header byte for byte needs (walkthrough 35); ``None`` without.
    general_name: str | None = None

    @property
    def entry_shown(self) -> str | None:
        """``entry`` as the text names it: ``the built-in registry's registry/checkpoints/X.toml`` for the built-in
        registry (:func:`passprice.registry.in_root`), else ``entry``."""
        from passprice.registry import BUILT_IN

        if self.entry is not None and self.registry == "built-in":
            return f"{BUILT_IN}{self.entry}"
        return self.entry

    def pinned_by(self, lock: Lock) -> CheckpointCited:
        """This citation with ``lock``'s pinned origin where it differs from today's entry's (the lock pins one, the
        checkpoint is a registry entry); else unchanged. Raises nothing."""
        pinned = lock.checkpoint_origin
        if pinned is None or self.entry is None or pinned == self.origin:
            return self
        return attrs.evolve(self, lock=lock.name, pinned_origin=pinned)

    def _since_line(self) -> str | None:
        # the span that differs, as check/reproduce/price --lock say it (passprice.reproduce.relabelled)
        if self.pinned_origin is None:
            return None
        from passprice.reproduce import changed_span

        return f"checkpoint.origin: {changed_span(self.pinned_origin, self.origin)} (the lock pinned the old)"

    @property
    def synthetic(self) -> bool:
        """Whether the entry says its header was built, not read from a published file (``origin`` starting
        ``Synthetic``, as ``passprice synth`` writes it)."""
        return self.origin.startswith("Synthetic")

    def origin_shown(self) -> str:
        """The origin as a line shows it: the entry's text, or what is missing."""
        if self.origin:
            return self.origin
        if self.entry is None:
            return "not recorded: a header file read directly, not a registry entry (`passprice import` records one)"
        return "not recorded in the entry"

    def to_json(self) -> dict[str, Any]:
        """``{"name", "entry", "content", "header_sha256", "origin", "synthetic", "weight_bytes", "sequence_bytes",
        "header_file", "pinned_origin", "relabelled", "registry"}`` for ``audit --json`` (``entry``: a path relative
        to ``registry``, ``"built-in"`` or the registry's folder, leftovers 28; ``origin``: today's entry's;
        ``pinned_origin``: the one the audited lock pinned where it differs, else ``null``; ``relabelled``: the
        ``checkpoint.origin: …`` line ``reproduce --json`` gives, or ``null``)."""
        return {"name": self.name, "entry": self.entry, "content": self.content, "header_sha256": self.header_sha256,
                "origin": self.origin or None, "synthetic": self.synthetic, "weight_bytes": self.weight_bytes,
                "sequence_bytes": self.sequence_bytes, "header_file": self.header_file or None,
                "pinned_origin": self.pinned_origin, "relabelled": self._since_line(), "registry": self.registry}

    def _origin_lines(self) -> list[tuple[str, str]]:
        # (label, text): today's origin, and where a lock pinned another, that one and the span that differs
        if self.pinned_origin is None:
            return [("origin", self.origin_shown())]
        return [("origin (today's entry)", self.origin_shown()),
                (f"origin as lock {self.lock} pinned it (relabelled since the lock)", self.pinned_origin),
                ("relabelled since the lock", self._since_line() or "")]

    def _header_file_line(self) -> str:
        # Walkthrough 27: the entry's source is a bare file name, which read as if it said where the header is. A
        # file's name may hold a newline (attack round 50): escaped, as every path in an error line is.
        from passprice.errors import escaped
        from passprice.synthetic import NO_FILE_WRITTEN
        from passprice.unkept import unkept

        never = unkept(self.header_sha256) if self.synthetic else None
        if never is not None:
            # issue 13 (session 33): the shipped synth entries, imported before NO_FILE_WRITTEN, said "the name it
            # was imported from" of a file nobody wrote; their origins stay as locks pinned them
            return f"header file: {never.sentence(escaped(self.header_file))}"
        if self.synthetic and NO_FILE_WRITTEN in self.origin:
            # walkthrough 39: "the name it was imported from" of a file synth --import without -o never wrote
            built = re.search(r"built by passprice synth from the (?:published )?configuration (\S+)", self.origin)
            config = built[1] if built else "its configuration"
            return (f"header file: none exists: built by passprice synth from {config} and imported without -o, "
                    f"no header file written (the entry's source, {escaped(self.header_file)}, names no file; the "
                    "header sha256 above is of the bytes synth built)")
        return (f"header file: {escaped(self.header_file)}, the name it was imported from (the entry keeps no "
                "folder: the header sha256 above, of its header bytes decompressed, identifies it)")

    def _heading(self) -> str:
        return (f"checkpoint (the pass's bytes, weight_bytes {self.weight_bytes:,.0f} B and sequence_bytes "
                f"{self.sequence_bytes:,.0f} B a sequence, are read from its metadata and tensor table):")

    def _synthetic_line(self) -> str:
        # A header built from a bare config.json says so in its origin; the line does not call it published.
        built = ("a published configuration" if "from the published configuration" in self.origin
                 else "a configuration whose publication is not recorded")
        line = (f"a synthetic header: built from {built}, no published file of these bytes; "
                "its byte counts follow the configuration and the type mix its origin names")
        # only a name --import takes, which no text escapes: a header's general.name is anyone's bytes
        plain = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", self.general_name or "")
        if "passprice synth" in self.origin and plain:
            # Walkthrough 35: `synth CONFIG -o NAME.header.gguf`, the file this line names, wrote another header
            # (sha256 b64043a1… for 4918213…): synth writes general.name from --import NAME, else from -o's file name.
            line += (f"; `passprice synth` rebuilds these bytes from that configuration and mix with `--import "
                     f"{self.general_name}` in a registry of your own (the header's general.name; with -o alone "
                     "general.name is the file's name, and the header sha256 and content differ)")
        return line

    def text_lines(self) -> list[str]:
        """The audit's section for people (names and the origin through :func:`passprice.tables.printable`: a file
        name or origin text is shown, never obeyed)."""
        from passprice.tables import printable

        where = (f" — {printable(self.entry_shown)}" if self.entry_shown is not None
                 else " (a header file, not a registry entry)")
        lines = [self._heading(), f"  {printable(self.name)}{where}",
                 f"    content: {self.content} (what a lock pins)", f"    header sha256: {self.header_sha256}",
                 *([f"    {printable(self._header_file_line())}"] if self.header_file else []),
                 *(f"    {printable(label)}: {printable(text)}" for label, text in self._origin_lines())]
        if self.synthetic:
            lines.append(f"    {printable(self._synthetic_line())}")
        return lines

    def markdown_lines(self) -> list[str]:
        """The audit's section for a pull-request comment (names as code, the origin as escaped text)."""
        from passprice.tables import markdown_code, markdown_text

        where = (f" in {markdown_code(self.entry_shown)}" if self.entry_shown is not None
                 else " (a header file, not a registry entry)")
        lines = [f"**{self._heading()}**", "", f"- {markdown_code(self.name)}{where}",
                 f"  - content: {markdown_code(self.content)}",
                 f"  - header sha256: {markdown_code(self.header_sha256)}",
                 *([f"  - {markdown_text(self._header_file_line())}"] if self.header_file else []),
                 *(f"  - {markdown_text(label)}: {markdown_text(text)}" for label, text in self._origin_lines())]
        if self.synthetic:
            lines.append(f"  - ⚠️ {self._synthetic_line()}")
        return lines


def checkpoint_cited(root: Root, header: GGUFHeader, price: dict[str, Any]) -> CheckpointCited:
    """The checkpoint ``header`` as an audit cites it: when it was read from a registry entry (its ``source`` an
    entry ``.toml``), that entry's name, path and ``origin``; else the header file's name. ``price`` is the audited
    price's JSON object (:func:`passprice.report.cost_json`), for its ``weight_bytes`` and ``sequence_bytes``.

    Raises :class:`~passprice.errors.InputError` when the entry file no longer reads (as loading it does)."""
    from passprice import schema
    from passprice.checkpoints import entry_origin
    from passprice.files import is_there
    from passprice.pins import checkpoint_digest
    from passprice.registry import registry_named

    source = header.source
    entry: str | None = None
    registry: str | None = None
    origin = header_file = ""
    name = Path(source).name if source else "(unnamed header)"
    if source.endswith(".toml") and is_there(source):
        name = Path(source).stem
        data = schema.read_bytes(Path(source))
        origin = entry_origin(root, data)
        header_file = entry_origin(root, data, "source")
        # Relative to the registry when inside it, with the registry it is relative to: the text names the
        # built-in registry's as such (a command run outside any registry named "registry/checkpoints/X.toml", no
        # path of the user's folder: leftovers 27b), --json keeps the path and says which registry (leftovers 28:
        # it held the phrase "the built-in registry's registry/…").
        try:
            entry = str(Path(source).resolve().relative_to(root.path.resolve()))
            registry = registry_named(root)
        except (OSError, ValueError):  # outside the registry: the path as given
            entry = source
    general_name = header.metadata.get("general.name")
    return CheckpointCited(name, entry, checkpoint_digest(header), header.sha256, origin,
                           float(price.get("weight_bytes", 0.0)), float(price.get("sequence_bytes", 0.0)), header_file,
                           registry=registry, general_name=general_name if isinstance(general_name, str) else None)


def packaged_entry(root: Root, lock: Lock) -> Path | None:
    """The entry file of passprice's own registry (:func:`passprice.registry.embedded_root`) holding the checkpoint
    content ``lock`` pinned, when ``root`` is another registry (where the caller found none); ``None`` when the
    package's registry is ``root`` or holds no such entry. Raises nothing but what reading the package's own entries
    raises (:class:`~passprice.errors.InputError`, which a caller may ignore)."""
    from passprice.registry import embedded_root
    from passprice.reproduce import find_checkpoint

    if root.embedded:
        return None
    package = embedded_root()
    if os.path.realpath(package.path) == os.path.realpath(root.path):
        return None
    header, _ = find_checkpoint(package, lock)
    if header is None or not header.source.endswith(".toml"):
        return None
    return Path(header.source)


def packaged_copy(root: Root, lock: Lock) -> str | None:
    """``cp ENTRY TARGET``: the command that copies passprice's own entry holding the checkpoint content ``lock``
    pinned (:func:`packaged_entry`) into ``root``'s ``registry/checkpoints``, each path one shell word; ``None`` when
    the package's registry holds none (an :class:`~passprice.errors.InputError` reading its entries counts as none)
    or ``root`` has a file of that entry's name (its content changed: a copy would replace it). Raises nothing."""
    from passprice.errors import InputError
    from passprice.files import shell_word

    try:
        entry = packaged_entry(root, lock)
    except InputError:
        return None
    if entry is None:
        return None
    target = root.checkpoints / entry.name
    if os.path.lexists(target):  # an entry of that name holds other content: never advise copying over it
        return None
    return f"cp {shell_word(entry)} {shell_word(target)}"


def packaged_hint(root: Root, lock: Lock) -> str | None:
    """The line that says how to bring in the checkpoint ``lock`` pinned from passprice's own registry
    (:func:`packaged_entry`), or ``None`` when it holds none (an :class:`~passprice.errors.InputError` reading its
    entries counts as none) or when this registry has a file of that entry's name (its content changed: a copy would
    replace it, and the refusal already says to import the pinned header again or re-lock)."""
    from passprice.errors import InputError
    from passprice.files import shell_word
    from passprice.tables import printable

    try:
        entry = packaged_entry(root, lock)
    except InputError:
        return None
    if entry is None:
        return None
    target = root.checkpoints / entry.name
    if os.path.lexists(target):  # an entry of that name holds other content: never advise copying over it
        return None
    return (f"passprice: hint: passprice's own registry holds the checkpoint content lock {printable(lock.name)} "
            f"pinned, in {printable(str(entry))}: copy that entry into this registry "
            f"(cp {shell_word(entry)} {shell_word(target)}) and run this again")
