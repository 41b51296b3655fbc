"""Attack on the newest rules (the quote MISMATCH rule, its look-up cache, stacks' and runs' quotes, reproduce and
audit of a lock): each case that slipped, now caught by name.

1. A derivation input moved 4.48 → 4.58 TB/s (its fact recomputed) under the unchanged table row
   ``row '| Dot   | 4.48              |' in TB/s``: ``check`` said ``0 problems`` (the quote states no figure with a
   unit, its unit named by the locator after it), and the review, once re-locked, only asked. Now the row's numbers are
   read in the unit the locator names after the quote: a MISMATCH.
2. A measured run's tokens/s moved 145.55 → 150.55 under its unchanged llama-bench row ``'…|    145.55 ± 0.80 |'``,
   its stack re-fitted: ``check`` said 0 problems (a run's figure has unit ``1``, which the rule read nothing by).
3. A published figure moved onto a bare number its quote holds (``5`` of ``5 stacks: 4.8TB/s``, a year): that number
   read as its figure, ``check`` said 0 problems. Now a bare number is its figure only in a list sharing the unit
   written after it (``733 | 1,466 TOPS``).
4. A false alarm's words: 4.36557 TiB/s under ``'4.8TB/s'`` was said to be ``4.8TB/s (4.36557 TiB/s), not its value
   4.36557 TiB/s``; the quoted figure is now shown in the digits that tell it from the value.
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import copy_root, invoke
from passprice.sources import _in_named_unit

CARD = "facts/cards/h200_sxm_141gb.toml"
ROW = "row '| Dot   | 4.48              |' in TB/s"


def test_1_a_table_rows_numbers_are_read_in_the_unit_named_after_it() -> None:
    assert _in_named_unit(f"Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table (BabelStream): {ROW}") == [
        "| Dot   | 4.48 TB/s              |"]
    assert _in_named_unit("row '| Mul   | 4.00   |' in TB/s (row '| Copy  | 4.01   |' in GB/s)") == [
        "| Mul   | 4.00 TB/s   |", "| Copy  | 4.01 GB/s   |"]
    # no unit named after it, a word that is no unit, a figure written with its own unit: as quoted
    assert _in_named_unit("'GPU Memory 141GB 141GB'") == ["GPU Memory 141GB 141GB"]
    assert _in_named_unit("'x 3 y' in content, 'z 4.8 TB/s' in GB/s") == ["x 3 y", "z 4.8 TB/s"]


def test_1_an_input_moved_under_its_unchanged_table_row_is_a_mismatch(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    held = invoke("check", root=root)
    assert held.exit_code == 0, held.output
    assert "4.48 TB/s, not" not in held.output
    card = root / CARD
    text = card.read_text(encoding="utf-8")
    moved = text.replace("derivation.inputs.dot = { value = 4.48,", "derivation.inputs.dot = { value = 4.58,", 1)
    assert moved != text
    card.write_text(moved, encoding="utf-8")
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=root).exit_code == 0
    done = invoke("check", root=root)
    assert done.exit_code == 1, done.output
    assert ("  facts/cards/h200_sxm_141gb.toml: streams.read: its dot figure's quote of azure-ai-benchmarking-guide "
            "'| Dot   | 4.48              |' states 4.48 TB/s, not its 4.58 TB/s: the value and the words it cites "
            "disagree; quote the words of the document stating the value, or set the value they state\n") in done.output


RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


def test_2_a_run_moved_under_its_unchanged_llama_bench_row_is_a_mismatch(tmp_path: Path) -> None:
    """A run's tokens/s (unit ``1``) moved 145.55 → 150.55 under its row ``'…|    145.55 ± 0.80 |'``: with its stack
    re-fitted ``check`` said 0 problems; now the mean the row prints is held to, by name, whatever the stack says."""
    root = copy_root(tmp_path)
    runs = root / RUNS
    text = runs.read_text(encoding="utf-8")
    moved = text.replace("tokens_per_s = 145.55\n", "tokens_per_s = 150.55\n", 1)
    assert moved != text
    runs.write_text(moved, encoding="utf-8")
    done = invoke("check", root=root)
    assert done.exit_code == 1, done.output
    assert ("  registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0 (xd3.h100_pcie_80gb.8b-q4km.tg512): its "
            "quote of xiongjiedai-gpu-benchmarks '| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA"
            "       |  99 |         tg512 |    145.55 ± 0.80 |' states 145.55 ± 0.80, not its 150.55 tokens/s: "
            "the value and the words it cites disagree; "
            "quote the words of the document stating the value, or set the value they state\n") in done.output


def test_2_a_mean_quoted_with_its_spread_is_its_figure() -> None:
    from passprice.sources import _means_not

    assert _means_not(145.55, ["|    145.55 ± 0.80 |"]) == []
    assert _means_not(150.55, ["|    145.55 ± 0.80 |", "| 1,145.5 ±0.8 |"]) == ["145.55 ± 0.80", "1,145.5 ±0.8"]
    assert _means_not(83.4, ["83.19 tokens per second"]) == []  # (a mean of three runs' lines: no spread, no rule)


def test_3_a_bare_number_is_the_figure_only_in_a_list_sharing_the_unit_after_it() -> None:
    from passprice.addedfacts import quote_holds_another

    # a count of stacks, a year: no figure of the value's; the quote's bandwidth or capacity is another
    assert quote_holds_another(5.0, "TB/s", ["Memory Bandwidth 4.8TB/s across 5 HBM3e stacks"]) == ["4.8TB/s"]
    assert quote_holds_another(6.0, "TB/s", ["6 stacks, 4.8TB/s"]) == ["4.8TB/s"]
    assert quote_holds_another(2024.0, "GB", ["141GB (2024)"]) == ["141GB"]
    # a list sharing the unit written after its last number still holds each of them
    assert quote_holds_another(733.0, "TOPS", ["INT8 Tensor Core 733 | 1,466 TOPS"]) == []
    assert quote_holds_another(1979.0, "TFLOPS", ["1,979/3,958 TFLOPS"]) == []
    assert quote_holds_another(4.8, "TB/s", ["4.8 or 5.2 TB/s"]) == []
    assert quote_holds_another(4.48, "TB/s", ["| Dot | 4.48 |"]) == []  # (no figure with a unit: none other)


def test_3_a_value_moved_onto_a_count_its_quote_holds_is_a_mismatch(tmp_path: Path) -> None:
    """The H200's bandwidth set to 5 TB/s under a quote its stored excerpt holds, ``'HBM3e, 5 stacks: 4.8TB/s'``:
    ``check`` said 0 problems (the bare 5, a count of stacks, read as the figure); now a MISMATCH."""
    from cli_helpers import repin_excerpt

    root = copy_root(tmp_path)
    excerpt = "sources/excerpts/cite102-excerpt.txt"
    with (root / excerpt).open("a", encoding="utf-8") as out:
        out.write("69\tHBM3e, 5 stacks: 4.8TB/s\n")
    repin_excerpt(root, excerpt)
    card = root / CARD
    text = card.read_text(encoding="utf-8")
    old = ("value = 4.8\nunit = \"TB/s\"\nprovenance = \"published\"\nsource = \"nvidia-h200-product-page\"\n"
           "locator = \"Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL "
           "figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"")
    assert old in text
    card.write_text(text.replace(old, "value = 5\nunit = \"TB/s\"\nprovenance = \"published\"\nsource = "
                                      "\"nvidia-h200-product-page\"\nlocator = \"Memory: 'HBM3e, 5 stacks: 4.8TB/s'\"",
                                 1), encoding="utf-8")
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=root).exit_code == 0
    done = invoke("check", root=root)
    assert done.exit_code == 1, done.output
    assert ("  facts/cards/h200_sxm_141gb.toml: memory.bandwidth: its quote of nvidia-h200-product-page 'HBM3e, 5 "
            "stacks: 4.8TB/s' states 4.8TB/s, not its value 5 TB/s: the value and the words it cites disagree; quote "
            "the words of the document stating the value, or set the value they state\n") in done.output


def test_4_a_value_rounded_from_its_quote_is_told_from_it_in_the_mismatch() -> None:
    """4.36557 TiB/s, 4.8 TB/s rounded to 6 digits, under ``'4.8TB/s'`` is still a MISMATCH (a value moved under its
    quote by a conversion's rounding is one: write it in TB/s, as quoted), but said as ``4.8TB/s (4.36557 TiB/s), not
    its value 4.36557 TiB/s``, which read as no difference: the quoted figure is now shown in as many digits as tell
    it from the value."""
    from passprice.addedfacts import quote_holds_another

    assert quote_holds_another(4.36557, "TiB/s", ["4.8TB/s"]) == ["4.8TB/s (4.365575 TiB/s)"]
    assert quote_holds_another(4.8, "TiB/s", ["4.8TB/s"]) == ["4.8TB/s (4.36557 TiB/s)"]  # (6 digits tell it)
