"""A fact change is reviewed by what it does: every changed figure is shown old against new, with a weaker provenance
flagged, and every locked price resting on it is re-priced on both sides, so a reviewer sees how the prices move and
whether a lock's floors still hold, without checking anything out by hand (``passprice diff [BASE [HEAD]]``).

One module per part of a review, each importing only those before it: :mod:`~passprice.review.sides` (reading the two
sides), :mod:`~passprice.review.changes` (what changed, file by file), :mod:`~passprice.review.impacts` (what the
change does to the locks), the findings a reviewer must verify: :mod:`~passprice.review.quotes` (the facts' quotes and
sources), :mod:`~passprice.review.runs` (the measured runs), :mod:`~passprice.review.records` (what records say
beside their figures), :mod:`~passprice.review.headlocks` (HEAD's locks as ``check`` reads them);
:mod:`~passprice.review.verdict` (the :class:`Diff` and its exit status) and
:mod:`~passprice.review.rendering` (text, markdown and JSON). A test that patches a name patches it in the module
whose functions read it, never here: these are re-exported names.
"""

from passprice.review.changes import FactChange, FileChange
from passprice.review.impacts import LockImpact, PriceSide, recomputed_prices, stale_stack_facts
from passprice.review.rendering import diff_markdown, diff_text, render
from passprice.review.sides import Checkout, Side, SideInfo
from passprice.review.verdict import Diff, diff

__all__ = [
    "Checkout",
    "Diff",
    "FactChange",
    "FileChange",
    "LockImpact",
    "PriceSide",
    "Side",
    "SideInfo",
    "diff",
    "diff_markdown",
    "diff_text",
    "recomputed_prices",
    "render",
    "stale_stack_facts",
]
