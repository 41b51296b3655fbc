"""Issue 13 (left36): ``max-batch`` says what bounds its answer, with the bytes."""

from __future__ import annotations

from cli_helpers import invoke


def test_max_batch_says_the_memory_that_bounds_it() -> None:
    # Hand-checked: (141e9 − 4.677e9) B / 234.9e6 B = 580.3 → 580; at memory use 0.9, (126.9e9 − 4.677e9) / 234.9e6
    # = 520.3 → 520. It printed only "at most 580 sequences a pass".
    result = invoke("max-batch", "r1-qwen7b-h200", "--no-lock")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == (
        "  bounded by card memory: 141 GB less 4.677 GB held once (weights, embedding table) holds ⌊(141 GB − 4.677 "
        "GB) / 234.9 MB a sequence (its KV cache, state and conv ring)⌋ = 580")
    result = invoke("max-batch", "r1-qwen7b-h200", "--no-lock", "--memory-use", "0.9")
    assert "at most 520 sequences a pass" in result.stdout
    assert "  bounded by card memory: 126.9 GB (90 % of 141 GB) less 4.677 GB" in result.stdout
    assert "⌋ = 520" in result.stdout
