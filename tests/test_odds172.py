"""Issue 13's small left-overs (the review, reproduce and audit uses), each kept as its reproducer, built in the test.

- (1) ``roofline OTHER_CARD SERVING`` (and ``price``, ``best``, ``max-batch``, ``audit``, ``simulate``,
  ``speculate``, ``new-serving`` with ``--card OTHER``) of a serving file whose ``contexts.1.limit`` is past its
  checkpoint's context was refused ``ContextBeyondModel: … lower --limit`` (exit 1), while on the serving's own card
  (and ``sweep --cards``, ``compare``) it was bad input naming the file and key (exit 2). Now exit 2 everywhere: a
  card named on the command line clears the spec's ``source`` but keeps the file of its context classes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

GEMMA = "registry/servings/gemma3-270m-h100.toml"
OTHER = "h200_sxm_141gb"


def _gemma_past(tmp_path: Path) -> Path:
    """A registry whose Gemma 3 270M serving has a class of limit 65,536, past the model's 32,768 positions."""
    root = copy_root(tmp_path)
    path = root / GEMMA
    text = path.read_text(encoding="utf-8")
    assert text.count("limit = 32768") == 1
    path.write_text(text.replace("limit = 32768", "limit = 65536"), encoding="utf-8")
    return root


PAST = (
    f"passprice: error: {GEMMA}: contexts.1.limit: 65,536 positions is past the context length of checkpoint "
    "gemma3-270m-q4_k_m, 32,768 positions: a model reads no position past its context; give each class a limit of "
    "at most 32,768"
)


@pytest.mark.parametrize(
    "args",
    [
        ("roofline", OTHER, "gemma3-270m"),
        ("roofline", "h100_sxm5_80gb", "gemma3-270m"),
        ("price", "gemma3-270m"),
        ("price", "gemma3-270m", "--card", OTHER),
        ("best", "gemma3-270m", "--card", OTHER),
        ("max-batch", "gemma3-270m", "--card", OTHER),
        ("audit", "gemma3-270m", "--card", OTHER),
        ("simulate", "gemma3-270m", "--card", OTHER, "--synthetic", "3"),
        ("speculate", "gemma3-270m", "--card", OTHER, "--draft", "qwen35-mtp"),
        ("sweep", "gemma3-270m", "--cards", OTHER),
        ("compare", "gemma3-270m"),
        ("new-serving", "copied", "gemma3-270m", "--card", OTHER),
    ],
)
def test_a_files_limit_past_the_model_is_the_files_on_every_card(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = _gemma_past(tmp_path)
    args = tuple(a.replace("gemma3-270m", "gemma3-270m-h100") if a == "gemma3-270m" else a for a in args)
    # Before, with another card: "passprice: refused: ContextBeyondModel: context limit 65536 is past the
    # checkpoint's context length 32768: lower --limit" (exit 1).
    assert bad(*args, root=root) == [PAST]
    assert not (root / "registry/servings/copied.toml").exists()


def test_a_limit_the_command_line_gives_is_still_the_options(tmp_path: Path) -> None:
    root = _gemma_past(tmp_path)
    for extra in (("--limit", "40000"), ("--checkpoint", "llama2-7b-q4_0")):
        result = invoke("price", "gemma3-270m-h100", "--card", OTHER, *extra, root=root)
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith("passprice: refused: ContextBeyondModel: context limit "), result.stderr
        assert result.stderr.rstrip().endswith(": lower --limit"), result.stderr
    result = invoke("price", "gemma3-270m-h100", "--card", OTHER, "--limit", "30000", root=root)
    assert result.exit_code == 0, result.output
