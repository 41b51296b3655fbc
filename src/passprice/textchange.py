"""A changed text is shown by what changed in it: a reviewer of a 400-character derivation whose one run moved
(``… p1-o128 = 100.02 …`` → ``… p1-o128 = 90.02 …``) is shown that run's figure in its words around it, not both
texts whole (a stack's re-fit printed 13 facts' derivations twice over, 800 characters each, for one figure)."""

from __future__ import annotations

import difflib
import re

#: Texts this long or shorter are shown whole, old → new.
WHOLE = 100
#: Words of unchanged text kept on each side of a changed span.
CONTEXT = 4
#: More changed spans than this are counted, not shown.
SPANS = 4

#: Tokens: words (a number keeps its decimal point), runs of spaces, and each other character on its own, so a
#: figure followed by ``),`` is one token and its punctuation others.
_TOKENS = re.compile(r"\w[\w.]*\w|\w|\s+|[^\w\s]")


def text_change(old: str, new: str) -> str:
    """``old → new`` for people: both whole when either is at most :data:`WHOLE` characters or they share little;
    otherwise each changed span in square brackets (``[old → new]``, ``[+ added]``, ``[- removed]``) with up to
    :data:`CONTEXT` words of unchanged text on each side and ``…`` for what is left out, at most :data:`SPANS` spans
    (then ``and N more changes``). Tokens are words, runs of spaces and single other characters, compared by
    ``difflib.SequenceMatcher`` (Ratcliff–Obershelp matching, Python's standard library), so the result is a function
    of the two texts alone. Equal texts give ``unchanged``. Raises nothing."""
    if old == new:
        return "unchanged"
    if len(old) <= WHOLE or len(new) <= WHOLE:
        return f"{old} → {new}"
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < 0.5:  # mostly rewritten: the spans would say less than the texts
        return f"{old} → {new}"
    ops = matcher.get_opcodes()
    spans = sum(1 for op in ops if op[0] != "equal")
    out: list[str] = []
    shown = 0
    for i, (tag, a0, a1, b0, b1) in enumerate(ops):
        if tag == "equal":
            out.append(_kept(a[a0:a1], first=i == 0, last=i == len(ops) - 1 or shown == SPANS))
            continue
        shown += 1
        if shown > SPANS:
            break
        was, now = "".join(a[a0:a1]), "".join(b[b0:b1])
        body = f"[{was.strip()} → {now.strip()}]" if tag == "replace" else (
            f"[+ {now.strip()}]" if tag == "insert" else f"[- {was.strip()}]"
        )
        lead = " " if (was or now)[:1].isspace() and out and not out[-1][-1:].isspace() else ""
        out.append(lead + body)
    text = "".join(out)
    more = spans - SPANS
    return text + (f" and {more} more change{'s' if more != 1 else ''}" if more > 0 else "")


def _kept(tokens: list[str], first: bool, last: bool) -> str:
    """Unchanged ``tokens`` between changed spans: whole when at most twice :data:`CONTEXT` words (cut only at
    spaces), else its first and last :data:`CONTEXT` words around `` … ``; only its last words before the first span
    (``first``) and its first after the last (``last``), with ``…`` where words are left out."""
    text = "".join(tokens)
    if first and last:
        return text
    words = text.split(" ")
    if first:
        return text if len(words) <= CONTEXT + 1 else "…" + " ".join(words[-CONTEXT - 1:])
    if last:
        return text if len(words) <= CONTEXT + 1 else " ".join(words[:CONTEXT + 1]) + " …"
    if len(words) <= 2 * CONTEXT + 1:
        return text
    return " ".join(words[:CONTEXT + 1]) + " … " + " ".join(words[-CONTEXT - 1:])
