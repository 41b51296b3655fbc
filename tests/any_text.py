"""Hypothesis text over every character UTF-8 can encode (``st.text()``'s own default alphabet), drawn without
building Hypothesis's codec table: one strategy for the fuzz tests that promise "any text".

``st.text()`` and ``st.characters(codec="utf-8")`` ask Hypothesis for the code points the utf-8 codec encodes
(``hypothesis.internal.charmap.intervals_from_codec``), which it learns by encoding each of the 1,114,112 code points
once per process unless a ``.hypothesis/`` folder kept the table: about 2.5-3.5 s of CPU in each test worker of a
fresh checkout (CI's). Strict UTF-8 encodes every code point but the surrogates U+D800-U+DFFF, which are exactly the
Unicode category ``Cs`` (the category table Hypothesis ships or builds in ~0.2 s), so excluding ``Cs`` draws from
the same 1,112,064 characters, the same intervals, hence the same examples and shrinking (session 36;
``test_any_text_is_every_character_utf_8_encodes`` pins the intervals).
"""

from __future__ import annotations

from hypothesis import strategies as st

#: One character of any that UTF-8 encodes: every code point but the surrogates (category Cs).
UTF8 = st.characters(exclude_categories=("Cs",))


def any_text(*, min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    """``st.text(min_size=..., max_size=...)`` as Hypothesis draws it by default (every character UTF-8 encodes),
    without its per-process codec table (see the module's docstring). Sizes in characters."""
    return st.text(UTF8, min_size=min_size, max_size=max_size)
