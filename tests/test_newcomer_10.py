"""Findings of session 9's README-only walkthrough (a newcomer using passprice from its README), each kept as a test
of what the command now says."""

from __future__ import annotations

from cli_helpers import invoke

MOE = "qwen3-30b-a3b-h200"
ADVICE = (
    "`passprice lock --update -o locks/qwen3-30b-a3b-h200.lock.toml --force --require routing.hot_experts=assumed "
    "--require routing.hot_share=assumed`"
)


def test_a_floor_broken_by_an_option_says_the_serving_holds_and_to_change_its_file_first() -> None:
    """``price qwen3-30b-a3b-h200 --routing uniform``: the lock floors the measured routing; the refusal advised
    loosening the floors, which, pasted, loosened the lock of a serving that still rests on the measured routing
    (and the option's price was still not the locked one, -13.49 %). The advice now says the weaker fact is the
    option's, and what serving that way for good takes."""
    out = invoke("price", MOE, "--routing", "uniform")
    assert out.exit_code == 1
    assert out.stderr.endswith(
        "for a what-if, price without the lock (--no-lock): the serving as registered holds, the weaker fact comes "
        f"from an option given here; to serve this way for good, change {MOE}'s serving file, then loosen the floor "
        f"on purpose through review ({ADVICE})\n"
    )
    assert out.stderr.startswith(
        "passprice: refused: LockFloor: lock qwen3-30b-a3b-h200 refuses this price: routing.hot_experts is assumed, "
        "below the floor measured; routing.hot_share is assumed, below the floor measured"
    )
    assert invoke("price", MOE, "--routing", "uniform", "--no-lock").exit_code == 0  # the what-if it points to


def test_a_review_row_shows_enough_decimals_to_tell_two_prices_apart() -> None:
    """A fact recompute moved a price by +4.021e-05 %: the review's row read ``10,354.4 | 10,354.4 | … ❌ price
    moved``. The two prices are now shown with the fewest decimals that tell them apart; equal or far-apart prices
    keep one decimal."""
    from types import SimpleNamespace

    from passprice.review.rendering import _shorts

    def lock(before: float, after: float) -> SimpleNamespace:
        def side(x: float) -> SimpleNamespace:
            return SimpleNamespace(price={"tokens_per_s": x}, short=lambda: f"{x:,.1f}")

        return SimpleNamespace(before=side(before), after=side(after))

    assert _shorts(lock(10354.4, 10354.4 * (1 + 4.021e-07))) == ("10,354.400", "10,354.404")
    assert _shorts(lock(33339.2, 33337.2)) == ("33,339.2", "33,337.2")
    assert _shorts(lock(996.1, 996.1)) == ("996.1", "996.1")
