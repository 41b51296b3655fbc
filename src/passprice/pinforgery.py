"""A pinned fact comes from a registry, never from a hand: every fact a lock file the change adds or rewrites pins
must be one the registry holds (HEAD's fact at that path today, or BASE's) or the one BASE's lock already pinned (for a
lock file new to the change, one a BASE lock of the same card and checkpoint pinned: a lock renamed or copied).

A lock's pinned citation rewritten by hand (``memory.bandwidth`` re-cited to another registered source with a made-up
locator) and its digests recomputed priced exactly as it records, and its citation was registered: ``check`` passed
and ``passprice diff`` said "re-locked" (exit 0), though ``audit LOCK`` now traced the locked price to a document no
card ever cited for it (slip round 10).

What a lock pins besides facts is held the same way (slip round 45): its card's title and ``hypothetical`` mark, its
serving's description, its checkpoint entry's header sha256, its routing record's and drafting method's title and
note, its stack's title (:func:`passprice.reproduce.relabelled`) must each be HEAD's or BASE's today or what BASE's
copy of the lock pinned, and a ``[routing]`` or ``[draft]`` table BASE's copy had is not dropped. A lock rewritten
by hand to pin another title or header sha256, digests recomputed, or stripped of its ``[routing]`` table read
"re-locked" (exit 0), though ``check --frozen`` failed the first and the second no longer said the record's retitle.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from passprice.errors import InputError
from passprice.facts import Fact
from passprice.files import shell_word
from passprice.locks import Lock, read_lock
from passprice.registry import Root


def _today(root: Root, lock: Lock) -> tuple[Mapping[str, Fact] | None, frozenset[str]]:
    """The facts ``lock``'s price reads in ``root`` today (card, drafting method, routing, stack: lock paths), with
    the running code (:func:`passprice.reproduce.price_today`), ``None`` when its inputs do not resolve there; and the
    labels it pins that differ from today's there (the keys of its relabel lines: ``card.title``, ``routing.note``,
    ``stack.S.title`` …)."""
    from passprice.reproduce import price_today

    today = price_today(root, lock)
    return (today.facts if today.facts else None), frozenset(line.split(":", 1)[0] for line in today.relabelled)


def label_pins(lock: Lock) -> dict[str, str | bool | None]:
    """What ``lock`` pins besides facts and priced fields, by the key :func:`passprice.reproduce.relabelled` names it
    with: ``card.title``, ``card.hypothetical``, ``serving.description``, ``checkpoint.sha256``, ``routing.title``,
    ``routing.note``, ``draft.title``, ``draft.note`` (when the lock has the table), ``stack.NAME.title`` (when it
    was made under a stack) and ``stack.NAME.runtime`` / ``stack.NAME.builds`` (when the lock pins them: session 27),
    ``checkpoint.origin`` (when the lock pins it: session 27) and ``checkpoint.source`` (when it pins it: slip
    round 46), ``stack.NAME.card_vendor`` and ``stack.NAME.fitted_vendors`` (the latter's vendors joined by ``, ``;
    when the lock pins them: slip 48). Raises nothing."""
    out: dict[str, str | bool | None] = {
        "card.title": lock.card_title, "card.hypothetical": lock.card_hypothetical,
        "serving.description": lock.spec.description, "checkpoint.sha256": lock.checkpoint_sha256,
    }
    for table, pin in (("routing", lock.routing), ("draft", lock.draft)):
        if pin is not None:
            out[f"{table}.title"], out[f"{table}.note"] = pin.title, pin.note
    if lock.stack is not None:
        out[f"stack.{lock.stack.name}.title"] = lock.stack.title
        if lock.stack.runtime is not None:
            out[f"stack.{lock.stack.name}.runtime"] = lock.stack.runtime
        if lock.stack.builds is not None:
            out[f"stack.{lock.stack.name}.builds"] = lock.stack.builds
        if lock.stack.fitted_vendors is not None:  # the vendors the stack's card warning reads (slip 48)
            out[f"stack.{lock.stack.name}.card_vendor"] = lock.stack.card_vendor
            out[f"stack.{lock.stack.name}.fitted_vendors"] = ", ".join(lock.stack.fitted_vendors)
    if lock.checkpoint_origin is not None:
        out["checkpoint.origin"] = lock.checkpoint_origin
    if lock.checkpoint_source is not None:
        out["checkpoint.source"] = lock.checkpoint_source
    return out


def _label_lines(lock: Lock, on_both: frozenset[str], earlier: list[Lock]) -> list[str]:
    """One line for each label ``lock`` (a lock file the change adds or rewrites) pins that differs from HEAD's today
    and BASE's today (``on_both``: the keys relabelled on both sides) and from every lock of ``earlier`` (BASE's copy
    of it, or the BASE locks of its card and checkpoint); and one for a ``[routing]`` or ``[draft]`` table BASE's copy
    had that it dropped: each line's middle (:data:`_WHOLE`: the file's name goes before it, the name as a shell word
    after). Raises nothing."""
    pins = label_pins(lock)
    before = [label_pins(other) for other in earlier]
    out = []
    for key in sorted(on_both):
        if key not in pins or any(key in old and old[key] == pins[key] for old in before):
            continue
        # A label pinned as absent (card_vendor of a card stating none) reads "(none)", as check and reproduce
        # write it; Python's "None" was printed (slip 49: card_vendor dropped from a lock by hand, digests recomputed).
        pinned = "(none)" if pins[key] is None else repr(pins[key])
        out.append(
            f"{key}: pins {pinned}, which neither side of the change holds and BASE's lock did not pin: "
            "a lock's labels are pinned by passprice lock from a registry (check --frozen fails this one); re-lock "
            "it: passprice lock --update -o "
        )
    for table in ("routing", "draft"):
        if f"{table}.title" not in pins and any(f"{table}.title" in old for old in before):
            out.append(
                f"[{table}]: dropped, which BASE's lock pinned (the {table} record's title and note: a retitle "
                "would go unsaid by check, reproduce and price): a lock is written by passprice lock, never trimmed "
                "by hand; re-lock it: passprice lock --update -o "
            )
    return out


#: How a line of :func:`forged_pins` is made of its middle (what one lock content is found to pin): the lock file's
#: name, the middle, the name as a shell word (the command the line ends with re-locks that file).
_WHOLE = "{rel}: {middle}{word}"


class _Digests:
    """Each distinct fact's :meth:`passprice.facts.Fact.digest` once: by the fact object (held, so its ``id`` is not
    reused), else by its ``repr`` (an attrs class's: every field, a float as its shortest round trip, so ``5`` and
    ``5.0`` or ``0.0`` and ``-0.0``, which compare equal but digest apart, are two keys). 1,000 copies of a lock
    asked 168,440 digests (14.7 of diff's 30.8 s in the profile, issue 13, left61); now one per distinct fact."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Fact, str]] = {}
        self._by_text: dict[str, str] = {}

    def __call__(self, fact: Fact) -> str:
        held = self._by_id.get(id(fact))
        if held is not None and held[0] is fact:
            return held[1]
        text = repr(fact)
        digest = self._by_text.get(text)
        if digest is None:
            digest = self._by_text[text] = fact.digest()
        self._by_id[id(fact)] = (fact, digest)
        return digest


def _content(path: Path) -> bytes | None:
    """The bytes of the file at ``path`` (a lock file, under the cap a lock is read under), ``None`` where it does not
    read (then :func:`passprice.locks.read_lock` says why, and nothing is kept by content). Raises nothing."""
    from passprice.files import read_regular
    from passprice.schema import MAX_TOML_BYTES

    try:
        return read_regular(path, MAX_TOML_BYTES)
    except (InputError, OSError):
        return None


def _today_key(root: Root, lock: Lock, texts: dict[tuple[bool, str], str] | None = None) -> str | None:
    """What :func:`_today`'s answer for ``lock`` in ``root`` depends on, as text: the lock but its name, its
    ``[lock]`` digest and its file's name (which only words a refusal :func:`_today` does not keep, and whether the
    file lies in ``root``, kept as such): two locks of one serving under other names are priced once. ``None``
    where that cannot be told (the file's path does not resolve). ``texts``: the keys made before, by whether the
    file lies in ``root`` and the lock's digest (checked when it was read: it names all the rest), so a lock of one
    content is written out once (``repr`` of 1,000 copies' locks, each of its own bytes: issue 13, scale88). Raises
    nothing."""
    import attrs

    from passprice.registry import within

    try:
        inside = bool(lock.source) and within(root, lock.source)
    except InputError:
        return None
    known = None if texts is None or not lock.info.digest else texts.get((inside, lock.info.digest))
    if known is not None:
        return known
    info = attrs.evolve(lock.info, name="", digest="")
    text = f"{inside}:{attrs.evolve(lock, info=info, source='')!r}"
    if texts is not None and lock.info.digest:
        texts[inside, lock.info.digest] = text
    return text


def forged_pins(base: Root, head: Root, base_files: Iterable[str], changed: Iterable[str]) -> tuple[str, ...]:
    """One line for each lock file of ``changed`` (paths relative to the roots, added or rewritten on HEAD) pinning a
    fact that is neither HEAD's nor BASE's fact at that path today, nor the one BASE's copy of the lock pinned:
    ``locks/x.lock.toml: facts.memory.bandwidth: pins 4.8 TB/s (published) cited nvidia-hopper-whitepaper: …, which
    no registry side holds …``. A lock file that does not read, or whose inputs do not resolve on either side, is left
    to the review's other rules. Also when HEAD prices with its own code: a pin at a path no side holds a fact at
    was left out there, as a fact HEAD's code might add, and a made-up ``stack.overhead.pass`` (3 µs, "published",
    cited to the H200 datasheet) pinned in a lock of no stack beside a price-neutral edit of ``src/passprice`` read
    "re-locked" (exit 0; slip round 30). A path HEAD's code adds is no path of the running code's lock schema, so
    HEAD's lock pinning it does not read, and fails the review as such already. Never raises.

    Each distinct content is judged once (issue 13, left61: 1,000 copies of a lock in ``locks/`` took diff 29.1 s
    wall, 14.7 s of its profile's 30.8 s here in 168,440 fact digests): a lock file of the same bytes as one judged
    (and the same bytes of BASE's copy) gets that one's lines under its own name; a lock of another name and the same
    inputs is priced once (:func:`_today_key`); each distinct fact is digested once (:class:`_Digests`)."""
    on_base = set(base_files)
    out: list[str] = []
    earlier: list[Lock] | None = None  # BASE's locks, read once when a lock file is new to the change
    judged: dict[tuple[bytes, bytes | None], list[str]] = {}  # the middles found of each lock content
    todays: dict[tuple[int, str], tuple[Mapping[str, Fact] | None, frozenset[str]]] = {}
    digests = _Digests()
    texts: dict[tuple[bool, str], str] = {}

    def today(side: int, root: Root, lock: Lock) -> tuple[Mapping[str, Fact] | None, frozenset[str]]:
        key = _today_key(root, lock, texts)
        if key is None:
            return _today(root, lock)
        if (side, key) not in todays:
            todays[side, key] = _today(root, lock)
        return todays[side, key]

    for rel in changed:
        if not rel.startswith("locks/") or not rel.endswith(".lock.toml"):
            continue
        data = _content(head.path / rel)
        content = None if data is None else (data, _content(base.path / rel) if rel in on_base else None)
        if content is not None and content in judged:
            out += [_WHOLE.format(rel=rel, middle=m, word=shell_word(rel)) for m in judged[content]]
            continue
        try:
            lock = read_lock(head.path / rel, head.schema)
        except InputError:
            continue
        known: dict[str, set[str]] = {}
        # HEAD's facts today, BASE's (a lock made before the change's fact edit: drift, which the review flags), and
        # what BASE's copy of this lock pinned (a pin the change leaves alone).
        (head_facts, head_labels), (base_facts, base_labels) = today(0, head, lock), today(1, base, lock)
        sides = [head_facts, base_facts]
        olds: list[Lock] = []
        if rel in on_base:
            with contextlib.suppress(InputError):
                olds.append(read_lock(base.path / rel, base.schema))
        else:
            # A lock renamed or copied (``git mv``) pins what BASE's lock of the same card and checkpoint pinned: a
            # lock that drifted since (a historic price) renamed failed as "written by hand" (round 19).
            if earlier is None:
                earlier = _base_locks(base, on_base)
            olds += [other for other in earlier
                     if other.card_pin == lock.card_pin and _same_checkpoint(other, lock)]
        sides += [dict(other.facts) for other in olds]
        middles: list[str] = []
        if sides[0] is not None or sides[1] is not None:
            middles += _label_lines(lock, head_labels & base_labels, olds)
            if rel in on_base and olds:
                middles += _dropped_labels(lock, olds[0], head)
            for facts in sides:
                for path, fact in (facts or {}).items():
                    known.setdefault(path, set()).add(digests(fact))
            for path, pinned in lock.facts.items():
                if digests(pinned) in known.get(path, set()):
                    continue
                now_fact = (sides[0] or {}).get(path)
                now = ("none" if now_fact is None else
                       f"{now_fact.describe()} ({now_fact.provenance.value}) cited {now_fact.citation()}")
                middles.append(
                    f"facts.{path}: pins {pinned.describe()} ({pinned.provenance.value}) cited "
                    f"{pinned.citation()}, a fact no side of the change holds (HEAD's today: {now}) and BASE's lock "
                    "did not pin: a lock's facts are pinned by passprice lock from a registry, and a pin neither side "
                    "holds (written by hand, or made before a later commit of the change edited the fact) cannot be "
                    "traced; re-lock it: passprice lock --update -o "
                )
        if content is not None:
            judged[content] = middles
        out += [_WHOLE.format(rel=rel, middle=m, word=shell_word(rel)) for m in middles]
    return tuple(out)


def _dropped_labels(lock: Lock, old: Lock, head: Root) -> list[str]:
    """The middle (:data:`_WHOLE`) of one line for each label BASE's copy ``old`` of a lock file pinned that ``lock``
    (HEAD's) no longer pins though ``passprice lock`` would: the checkpoint entry's ``origin`` or ``source`` of the
    same checkpoint (a lock of a registry entry always pins them), a stack's ``runtime`` or ``builds`` of the same
    stack where HEAD's stack states it. A lock pinning none is one written before, of which nothing is said: slip
    round 46, a lock stripped of its origin (or of its stack's runtime and builds), digests recomputed, beside the
    entry's origin rewritten to "(fine-tuned)" (the stack's builds to b2850) read "re-locked", ✅, exit 0, and
    ``check``, ``reproduce`` and ``price --lock`` said nothing. Raises nothing."""
    pins, before = label_pins(lock), label_pins(old)
    dropped: list[str] = []
    if lock.checkpoint_pin.name == old.checkpoint_pin.name:
        dropped += [key for key in ("checkpoint.origin", "checkpoint.source") if key in before and key not in pins]
    if lock.stack is not None and old.stack is not None and lock.stack.name == old.stack.name:
        from passprice.stacks import load_stack

        try:
            today = load_stack(head, lock.stack.name)
        except InputError:
            today = None
        for key, stated in (("runtime", None if today is None else today.runtime),
                            ("builds", None if today is None else today.builds),
                            ("fitted_vendors", None if today is None else "")):  # passprice lock pins them (slip 48)
            name = f"stack.{lock.stack.name}.{key}"
            if stated is not None and name in before and name not in pins:
                dropped.append(name)
    return [
        f"{key}: dropped, which BASE's lock pinned (a label audit or a price shows: its change would go unsaid "
        "by check, reproduce and price): a lock is written by passprice lock, never trimmed by hand; re-lock it: "
        "passprice lock --update -o "
        for key in dropped
    ]


def _same_checkpoint(a: Lock, b: Lock) -> bool:
    """Whether locks ``a`` and ``b`` pin one checkpoint: its name, header sha256 and content (the origin aside: a
    lock written before session 27 pins none, and a relabelled one is said by its label line). Raises nothing."""
    pa, pb = a.checkpoint_pin, b.checkpoint_pin
    return (pa.name, pa.sha256, pa.content) == (pb.name, pb.sha256, pb.content)


def _base_locks(base: Root, files: Iterable[str]) -> list[Lock]:
    """The lock files of ``files`` (BASE's, relative to ``base``) that read. Never raises."""
    found = []
    for rel in sorted(files):
        if rel.startswith("locks/") and rel.endswith(".lock.toml"):
            try:
                found.append(read_lock(base.path / rel, base.schema))
            except InputError:
                continue
    return found


def forged_models(
    base: Root, head: Root, base_files: Iterable[str], changed: Iterable[str], models: Iterable[str],
    upgraded: bool = False,
) -> tuple[str, ...]:
    """One line for each lock file of ``changed`` (paths relative to the roots, added or rewritten on HEAD) whose
    ``lock.pricing_model`` is the digest of no code the review knows: not one of ``models`` (BASE's and HEAD's code
    and the running passprice's, :func:`passprice.pins.pricing_model_digest`), nor one a lock of BASE records (a lock
    the change leaves on its old code, renamed or copied). A lock pins the code that priced it by a digest computed
    from that code, never typed by hand (``passprice lock`` writes it); slip round 46: a lock's ``pricing_model``
    rewritten to ``sha256:000…``, its digests recomputed, read "1 re-locked" (✅, exit 0), ``check`` and ``price
    --lock`` exit 0, and ``reproduce`` named the change's own commit as the code that wrote the lock. A lock of the
    first format (its ``pricing_model`` typed by hand, ``"1"``) and a lock file that does not read are left to the
    review's other rules. ``upgraded``: HEAD also changes ``requirements.txt``, so each line says that such a lock
    was most likely priced by the passprice HEAD now installs, which the base branch's passprice reviewing it is not,
    and the two pull requests that upgrade (walkthrough 37: "never typed by hand; re-lock it" alone sent a newcomer
    to re-lock with the old passprice, undoing the upgrade). Never raises."""
    from passprice.pins import LOCK_FORMAT

    known = set(models)
    upgrade = ("; or, with requirements.txt changed too, priced by the passprice it now installs: upgrade in two "
               "pull requests, requirements.txt alone first, then re-lock under the new passprice"
               if upgraded else "")
    out: list[str] = []
    earlier: set[str] | None = None
    for rel in changed:
        if not rel.startswith("locks/") or not rel.endswith(".lock.toml"):
            continue
        try:
            lock = read_lock(head.path / rel, head.schema)
        except InputError:
            continue
        model = lock.info.pricing_model
        if lock.info.format < LOCK_FORMAT or model in known:
            continue
        if earlier is None:
            earlier = {other.info.pricing_model for other in _base_locks(base, base_files)}
        if model in earlier:
            continue
        shown = model.removeprefix("sha256:")[:12]
        out.append(
            f"{rel}: lock.pricing_model: pins {shown}…, the digest of no code of this review (BASE's, HEAD's, the "
            "running passprice's) nor of any BASE lock: a lock's pricing model is the digest passprice lock computes "
            f"of the code that priced it, never typed by hand{upgrade}; re-lock it: passprice lock --update -o "
            f"{shell_word(rel)}"
        )
    return tuple(out)
