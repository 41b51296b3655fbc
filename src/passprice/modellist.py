"""A pull request's change to passprice's list of pricing models is a change to history, shown and judged by the review.

The list (:data:`passprice.modelhistory.KNOWN`, ``src/passprice/pricing_models.json``) says which code passprice
locked this repository with, and the running package believes it: a lock pinning a listed digest reads as an honest
upgrade, one pinning no listed digest is refused as forged (:class:`passprice.enforce.LockModelForged`). So the list
is a fact about history, not code to review by eye: an entry is added only by a re-lock
(:func:`passprice.modelhistory.add_running` lists the code it locked with), and is never edited or removed. Nothing
here prices: the module is outside the pricing model's digest (only :mod:`passprice.diff` imports it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from passprice.modelhistory import KNOWN, KnownModel

#: Where the list lies in a checkout of passprice (a POSIX path from its root): the review reads it on each side.
LISTED = f"src/passprice/{KNOWN.name}"


@attrs.frozen
class ListChanges:
    """How a pull request changes the list (:func:`list_changes`): ``named``, one line for each entry added, removed
    or edited (the review shows each with passprice's own code, :attr:`passprice.diff.Diff.code_files`), and
    ``failing``, the lines of the changes that fail the review (shown with HEAD's problems)."""

    named: tuple[str, ...] = ()
    failing: tuple[str, ...] = ()


def list_changes(base: Mapping[str, KnownModel] | None, head: Mapping[str, KnownModel] | str | None,
                 head_model: str, base_pins: Mapping[str, Sequence[str]] | None = None) -> ListChanges:
    """What HEAD does to the list (:data:`LISTED`; ``base`` and ``head`` its entries on each side by digest
    (:func:`passprice.modelhistory.read_known`), ``None`` where a side has none, ``head`` the error line where
    HEAD's does not read) in a review whose HEAD code's pricing-model digest is ``head_model``; ``base_pins``: the
    BASE locks pinning each digest (lock names), named beside a removed entry.

    The list is a fact about history: an entry says passprice locked this repository with that code, and the running
    package believes it (:func:`passprice.modelhistory.is_known`: a lock pinning a listed digest is an upgrade, not a
    forgery). Slip 56 (issue 13): a pull request removing the entry every BASE lock pins read "no changes to facts,
    registry, locks or the pricing model" (exit 0), and one adding ``sha256:111…`` beside a lock pinning it named
    the list nowhere: the review compared only ``.py`` files of ``src/passprice``. So every entry added, removed or
    edited is named, and each fails the review but one: an added entry whose digest is HEAD's own code's (``passprice
    lock``'s re-lock adds exactly that, :func:`passprice.modelhistory.add_running`). A list HEAD removes, or that does
    not read on HEAD, fails; one BASE lacks counts each HEAD entry as added. Never raises."""
    if base == head:
        return ListChanges()
    if head is None:
        line = (f"{LISTED}: removed: the list of every pricing model passprice locked this repository with goes with "
                "the code that reads it; restore it")
        return ListChanges((line,), (line,))
    if isinstance(head, str):
        line = f"{LISTED}: does not read on HEAD ({head})"
        return ListChanges((line,), (line,))
    new, old = head, base or {}
    pins = base_pins or {}
    named: list[str] = []
    failing: list[str] = []
    for digest in sorted({*old, *new}, key=lambda d: (d not in old, d)):
        was, now = old.get(digest), new.get(digest)
        short = digest.removeprefix("sha256:")[:12]
        if was == now:
            continue
        if now is None:
            assert was is not None
            locks = pins.get(digest, ())
            pinned = (f"; {len(locks)} BASE lock{'s' if len(locks) != 1 else ''} pin{'' if len(locks) != 1 else 's'} "
                      f"it ({', '.join(locks[:3])}{' and more' if len(locks) > 3 else ''})" if locks else "")
            line = (f"{LISTED}: entry {short}… removed ({was.describe()}){pinned}: the list records what passprice "
                    "locked this repository with, and an entry leaves it never; restore it")
            failing.append(line)
        elif was is None:
            if digest == head_model:
                line = f"{LISTED}: entry {short}… added ({now.describe()}): HEAD's own pricing model, a re-lock's"
            else:
                line = (f"{LISTED}: entry {short}… added ({now.describe()}): the digest of no code of this review "
                        f"(HEAD's is {head_model.removeprefix('sha256:')[:12]}…): only a re-lock adds to the list, "
                        "and only the code it locked with (passprice lock adds it); remove the entry")
                failing.append(line)
        else:
            line = (f"{LISTED}: entry {short}… edited ({was.describe()} → {now.describe()}): an entry records when "
                    "passprice first locked with that code and is never rewritten; restore it")
            failing.append(line)
        named.append(line)
    return ListChanges(tuple(named), tuple(failing))
