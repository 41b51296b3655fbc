"""Changes that slipped past the locks through the newest rules (issue 13): each escape kept as its reproducer,
built in the test.

- (1) ``check`` looks up every fact's quotes in its source's stored excerpt, but read only cards, drafting methods
  and routing records: a serving stack's fact quoting a stored excerpt (``llamacpp-cuda-2405``'s
  ``memory.reserved``, ``'VRAM scratch buffer: 70.50 MiB'``) whose line was edited (``700.50``) and the excerpt's
  ``excerpt_sha256`` re-pinned read "all holds", where ``audit --source`` said NOT FOUND and the review failed. Now
  a stack's facts are looked up too, named by their key in the stack file.
- (2) No command looked up a measured run's quote (the run a stack is fitted to): its excerpt's row edited
  (``145.55 ± 0.80`` to ``155.55``, the run's ``tokens_per_s`` left) and re-pinned read "all holds" in ``check``
  and nothing in ``audit --source``. Now ``check`` looks each run's quotes up as it does a fact's, naming the
  measurement file, the run's key and id.
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import copy_root, invoke, repin_excerpt

SOURCE = "xiongjiedai-gpu-benchmarks"
EXCERPT = "sources/excerpts/xiongjiedai-aa72e0e-excerpt.txt"


def _edit_excerpt(root: Path, old: str, new: str) -> None:
    """Replace ``old`` (once in the excerpt) by ``new`` and pin the excerpt anew, as a hand edit would."""
    path = root / EXCERPT
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    repin_excerpt(root, EXCERPT)


def _problems(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if "NOT FOUND" in line]


def test_shipped_registry_has_no_quote_problem() -> None:
    result = invoke("check")
    assert result.exit_code == 0, result.output
    assert _problems(result.output) == []


def test_1_a_stack_facts_quote_lost_from_its_excerpt_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit_excerpt(root, "VRAM scratch buffer: 70.50 MiB", "VRAM scratch buffer: 700.50 MiB")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    assert _problems(result.output) == [
        f"facts/stacks/llamacpp-cuda-2405.toml: memory.reserved: its quotes of {SOURCE} are NOT FOUND in its stored "
        f"excerpt {EXCERPT} (3 of 4 quoted spans found in the stored text; not in it: 'VRAM scratch buffer: 70.50 "
        "MiB' (under LLaMA 2/Professional GPUs/H100_PCIe_v2.ipynb)): restore the quoted words there, or quote the "
        "words it holds"]
    assert result.output.rstrip().endswith("check FAILED")
    # audit said so before; it still does
    audit = invoke("audit", "--source", SOURCE, root=root)
    assert "llamacpp-cuda-2405:memory.reserved: NOT FOUND (3 of 4 quoted spans found in the stored text" in (
        audit.output)


def test_2_a_measured_runs_quote_lost_from_its_excerpt_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit_excerpt(root, "|    145.55 ± 0.80 |", "|    155.55 ± 0.80 |")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    assert _problems(result.output) == [
        "registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0 (xd3.h100_pcie_80gb.8b-q4km.tg512): its "
        f"quotes of {SOURCE} are NOT FOUND in its stored excerpt {EXCERPT} (0 of 1 quoted span found in the stored "
        "text; not in it: '| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B |' (under LLaMA 3/Professional "
        "GPUs/H100_PCIe_v3.ipynb)): restore the quoted words there, or quote the words it holds"]


def test_2_a_runs_value_and_quote_moved_past_its_excerpt_fails_check(tmp_path: Path) -> None:
    # the run's figure and its quote moved together, the excerpt left: its quote is no longer the source's words
    root = copy_root(tmp_path)
    path = root / "registry/measurements/xiongjiedai-llama3-llamabench.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count("tokens_per_s = 145.55\n") == 1 and text.count("|    145.55 ± 0.80 |'") == 1
    path.write_text(text.replace("tokens_per_s = 145.55\n", "tokens_per_s = 155.55\n")
                    .replace("|    145.55 ± 0.80 |'", "|    155.55 ± 0.80 |'"), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    assert [p[:120] for p in _problems(result.output)] == [
        "registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0 (xd3.h100_pcie_80gb.8b-q4km.tg512): its "
        "quotes of xiongj"]
