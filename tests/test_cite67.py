"""A quote is cited to the page that prints it, and a review shows what a quote says, not what is around it (cite67).

Found reading the stored pages and the reviews of an LMDeploy run: Azure's GB200 HBM sentence, 'we measured 7.35 TB/s
HBM bandwidth utilization (92% efficiency)', was cited to Azure's deep dive (…/4390442), whose stored copy ends before
its HBM section; the words are in the follow-up post (…/4399253) that recaps it, which the record now names. A run
added under a quoted table row was asked "its locator quotes 0.009, 0.01, 0.011, 1, 7, not 100 tokens/s": the 7 of
``llama2-7b`` outside the quote, the smallest figures first, never the row's own 100.02; now the quoted spans' figures,
nearest the run's first. A changed figure in a padded row read ``…    | [100.02 → 90.02]                | 76.55   | …``;
its context now shows each run of spaces as one. The Azure guide's rows are quoted (tests/test_cite66.py test_4).
"""

from __future__ import annotations

import tomllib

from cli_helpers import REPO
from passprice.review.runs import _quoted_span_figures
from passprice.textchange import text_change

ROW = ("| 1     | 1   | 1             | 128           | 100.02                | 76.55   | 0.011       | 0.01        | "
       "0.011       | 0.009  | 0.009  | 0.01   | 0.011  |")
LOCATOR = f"docs/en/benchmark/a100_fp16.md, Static Inference Benchmark, llama2-7b table, row '{ROW}'"


def test_1_the_gb200_hbm_quote_cites_the_post_that_prints_it() -> None:
    with (REPO / "sources" / "azure-hpc-blog-gb200.toml").open("rb") as f:
        record = tomllib.load(f)["source"]
    assert record["url"].endswith("/azure%E2%80%99s-nd-gb200-v6-delivers-record-performance-for-inference-workloads"
                                  "/4399253")
    assert record["title"] == "Azure’s ND GB200 v6 Delivers Record Performance for Inference Workloads"
    assert "4390442" not in record["url"] and "4390442" in record["note"]  # the post cited before, named as such
    with (REPO / "facts" / "cards" / "b200.toml").open("rb") as f:
        read = tomllib.load(f)["streams"]["read"]
    assert read["source"] == "azure-hpc-blog-gb200" and read["value"] == 0.91875  # 7.35 / 8, unchanged
    assert "'we measured 7.35 TB/s HBM bandwidth utilization (92% efficiency)'" in read["locator"]
    assert "follow-up post" not in read["locator"]


def test_2_an_added_runs_figures_are_the_quoted_ones_nearest_its_own_first() -> None:
    # Before: 0.009, 0.01, 0.011, 1, 7 (all the locator's figures, smallest first; 7 of "llama2-7b").
    assert _quoted_span_figures(LOCATOR, 100) == [100.02, 128, 76.55, 1, 0.011, 0.01, 0.009]
    assert 7 not in _quoted_span_figures(LOCATOR, 7)
    assert _quoted_span_figures("llama2-7b table, batch 1, 100.02 tokens/s", 100) == [100.02]  # quoting nothing
    assert _quoted_span_figures("Table 3: 7.61 ms, 131.44", 155.07) == [131.44, 7.61]  # read whole, nearest first
    assert _quoted_span_figures("row 'a | b'", 1) == []
    # a tokens/s figure quoted comes first and alone (left41)
    main = ("'(    7.61 ms per token,   131.44 tokens per second)', "
            "'(    7.40 ms per token,   135.07 tokens per second)'")
    assert _quoted_span_figures(main, 155.07) == [131.44, 135.07]


def test_3_a_padded_rows_changed_figure_shows_its_neighbours_compactly() -> None:
    new = LOCATOR.replace("| 100.02 ", "| 90.02 ", 1)
    shown = text_change(LOCATOR, new)
    # was "…    | [100.02 → 90.02]                | 76.55   | …"
    assert shown == "…| 1 | 128 | [100.02 → 90.02] | 76.55 | 0.011 | …"
    assert ROW in LOCATOR and "  " in ROW  # the locator itself keeps the row verbatim
