"""Attack round 52 (issue 13: hostile input on session 29's additions), each found first against a non-editable
install of this checkout, then here against passprice's own registry. Each test asserts the exit status and the
exact line; the docstring or a comment says what it did before.

1. ``audit r1-qwen7b-h200 --step 4.9e-324`` (a subnormal, 0 once divided by 100) was a ZeroDivisionError traceback
   (exit 1); ``--step 1e-16`` printed an elasticity of +0.000 for every fact (each fact scaled by ``1 + 1e-18``, which
   is 1), and ``--step 1e-12`` moved ``streams.read``'s +0.972 to +0.977: rounding, not the price.
"""

from __future__ import annotations

import pytest

from cli_helpers import invoke

R1 = "r1-qwen7b-h200"
STEP_RANGE = "(a finite number from 0.0001 to 50)"


# --- 1. audit --step below what a double can measure -----------------------------------------------------------------

@pytest.mark.parametrize(("step", "shown"), [("4.9e-324", "5e-324"), ("1e-16", "1e-16"), ("1e-300", "1e-300"),
                                             ("0.00009999", "9.999e-05"), ("0", "0"), ("-0", "0")])
@pytest.mark.parametrize("fmt", [(), ("--json",), ("--format", "markdown")])
def test_1_a_step_too_small_to_measure_is_one_error_line(step: str, shown: str, fmt: tuple[str, ...]) -> None:
    result = invoke("audit", R1, "--step", step, *fmt)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"passprice: error: Invalid value for '--step': {shown} is out of range {STEP_RANGE} "
                             "(see 'cli audit --help')\n")


def test_1_the_smallest_step_measures_what_one_percent_does() -> None:
    """At 0.0001 % the elasticities are the 1 % ones to the three decimals shown (+1.000 memory.bandwidth, +0.972
    streams.read on r1-qwen7b-h200: each is the price's slope, which a 1 % step and a 1e-6 one both measure)."""
    import json

    small = {f["path"]: f["elasticity"] for f in json.loads(invoke("audit", R1, "--step", "0.0001", "--json").stdout)
             ["facts"]}
    assert round(small["memory.bandwidth"], 3) == 1.0
    assert round(small["streams.read"], 3) == 0.972


def test_1_the_library_refuses_a_step_outside_the_range() -> None:
    from passprice.audit import audit

    with pytest.raises(ValueError, match="outside 1e-06 … 0.5"):
        audit(None, None, None, step=0.0)  # type: ignore[arg-type]
