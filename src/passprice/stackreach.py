"""A serving stack's expected price on a card its runs never measured is an extrapolation across cards, and says so
with the error its fit reported for a card held out.

A stack's facts are fitted to measured runs (``passprice calibrate``; each fitted fact's derivation names every run
and the errors of the fit, in sample and with each card left out in turn: ``card_out_mean`` and ``card_out_max``).
The stack's ``range.*`` facts bound the batches and positions it holds on, and a price outside them is refused
(:class:`~passprice.stacks.BeyondStack`); the cards are not bounded, since the leave-one-card-out error is the
fit's own measure of how it carries to a card it did not see. :func:`card_reach` says which case a price is in.
"""

from __future__ import annotations

import attrs

from passprice.fits import RunDerivation
from passprice.registry import Root
from passprice.stacks import Stack


@attrs.frozen
class CardReach:
    """Where a stack's expected price on ``card`` stands: ``fitted`` (the cards whose runs its facts were fitted to,
    sorted), and ``card_out_mean``/``card_out_max`` (the fit's relative error on a card held out, as it reported
    them; ``None`` when it reported none)."""

    stack: str
    card: str
    fitted: tuple[str, ...]
    card_out_mean: float | None = None
    card_out_max: float | None = None

    @property
    def measured(self) -> bool:
        """True when the stack's runs measured ``card`` (or when the fit named no runs to judge by)."""
        return not self.fitted or self.card in self.fitted

    def warning(self) -> str | None:
        """One line for a card the stack's runs never measured (``None`` otherwise): the cards they did, and the
        held-out-card error the fit reported."""
        if self.measured:
            return None
        errors = ""
        if self.card_out_mean is not None and self.card_out_max is not None:
            errors = (f" (with a card held out of the fit, its error was {100 * self.card_out_mean:.3g} % on average, "
                      f"{100 * self.card_out_max:.3g} % at most)")
        return (f"stack {self.stack} was fitted on runs on {len(self.fitted)} cards ({', '.join(self.fitted)}), not "
                f"{self.card}: its expected price here extrapolates across cards{errors}")


def card_reach(root: Root, stack: Stack, card: str) -> CardReach:
    """Which cards ``stack``'s fitted facts were fitted on (the cards of the runs their derivations name, read from
    ``root``'s measured runs; a card the stack gives facts of its own counts too), and the held-out-card errors its
    fit reported. A run its derivations name that the registry no longer holds is skipped (``check`` reports it).
    Raises :class:`~passprice.errors.InputError` for a measurement file that does not read."""
    from passprice.measurements import load_runs

    named: set[str] = set()
    errors: dict[str, float] = {}
    for fact in stack.facts.values():
        if isinstance(fact.derivation, RunDerivation):
            named.update(r.run for r in fact.derivation.runs)
            errors.update(fact.derivation.errors or {})
    cards = {run.card for run in load_runs(root, stack.name) if run.id in named} if named else set()
    cards.update(stack.cards)
    return CardReach(stack.name, card, tuple(sorted(cards)), errors.get("card_out_mean"), errors.get("card_out_max"))
