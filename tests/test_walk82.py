"""Walkthrough 82 (an auditor's and a reviewer's walk with the README only): every citation of the README's three
audited prices (r1-qwen7b-h200, qwen3-30b-a3b-h200, r1-qwen7b-h200-llamacpp) traced to its source record and, where
the checkout keeps one, to the stored text of its document. The README called the stored copy of the H200's
specifications table a copy "of the H200 datasheet's specifications table"; the excerpt's own header says it is
NVIDIA's H200 product page (the source record's ``copies:`` address), not the datasheet the locators name, and that
copy's INT8 row prints ``3,958 TFLOPS`` where the card's ``array`` locator quotes ``'INT8 Tensor Core 3,958 TOPS'``."""

from __future__ import annotations

import tomllib

from cli_helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
EXCERPT = (REPO / "tests" / "data" / "cite71-excerpt.txt").read_text(encoding="utf-8")


def _h200_cells() -> list[str]:
    """The cells of the stored H200 copy, one a line, as the excerpt holds them (``LINE<TAB>TEXT``)."""
    block = EXCERPT.split("\n== nvidia-h200-datasheet ", 1)[1].split("\n== ", 1)[0].splitlines()
    return [line.split("\t", 1)[1] for line in block[1:]]


def test_the_readme_names_the_stored_h200_copy_as_the_product_page_it_is() -> None:
    """Before: `'a third party's text copy of the H200 datasheet's specifications table'`, where the excerpt's
    header says `NVIDIA's H200 product page … (not the datasheet)` and the source record lists that page under
    ``copies``. The README now says what the copy is, and names the one quote of the H200's specifications the copy
    does not print word for word."""
    prose = " ".join(README.split())
    assert "text copy of the H200 datasheet's specifications table" not in prose
    assert ("a third party's text copy of the H200 product page's specifications table (the record's `copies:` "
            "address, not the datasheet PDF the locators name)") in prose
    assert "NVIDIA's H200 product page (https://www.nvidia.com/en-us/data-center/h200/) is not the datasheet" in EXCERPT
    source = tomllib.loads((REPO / "sources" / "nvidia-h200-datasheet.toml").read_text(encoding="utf-8"))["source"]
    assert source["copies"] == ["https://www.nvidia.com/en-us/data-center/h200/"]
    # The INT8 row, as the README says: the copy prints TFLOPS, the locator quotes TOPS (the figure is the same).
    cells = _h200_cells()
    at = cells.index("INT8 Tensor Core²")
    assert cells[at + 1] == "3,958 TFLOPS"
    card = tomllib.loads((REPO / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8"))
    assert card["array"]["locator"].endswith("'INT8 Tensor Core 3,958 TOPS' (with sparsity)")
    assert "prints `3,958 TFLOPS` where the `array` locator quotes the datasheet's `'INT8 Tensor Core 3,958 TOPS'`" \
        in prose
    # Every other quote of the H200's datasheet the r1-qwen7b-h200 price rests on is the copy's, cell after cell.
    for label, value in (("GPU Memory Bandwidth", "4.8TB/s"), ("GPU Memory", "141GB"), ("FP32", "67 TFLOPS")):
        assert cells[cells.index(label) + 1] == value
