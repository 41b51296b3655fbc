"""Walkthrough 82 (an auditor's and a reviewer's walk with the README only): every citation of the README's three
audited prices (r1-qwen7b-h200, qwen3-30b-a3b-h200, r1-qwen7b-h200-llamacpp) traced to its source record and, where
the checkout keeps one, to the stored text of its document. The README called the stored copy of the H200's
specifications table a copy "of the H200 datasheet's specifications table"; the excerpt's own header says it is
NVIDIA's H200 product page (the source record's ``copies:`` address), not the datasheet the locators name, and that
copy's INT8 row prints ``3,958 TFLOPS`` where the card's ``array`` locator quotes ``'INT8 Tensor Core 3,958 TOPS'``.
Of the reviewer's edits, a serving stack's route (``integer_matrices``) moved, re-fitted and re-locked, passed the
review with nothing to verify: it is asked now (:func:`passprice.review.records.rerouted_stacks`)."""

from __future__ import annotations

import tomllib

from cli_helpers import REPO
from passprice.registry import Root
from passprice.review import FileChange, Side, SideInfo
from passprice.review.records import rerouted_stacks

README = (REPO / "README.md").read_text(encoding="utf-8")
EXCERPT = (REPO / "sources" / "excerpts" / "cite71-excerpt.txt").read_text(encoding="utf-8")


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
    # cite102: the page is a record of its own, its copy the record's `copies:` address (tests/test_cite102.py)
    # (the list of every excerpt file and what it holds since tests/test_walk117.py)
    assert "`cite102-excerpt.txt`, the H200 product page's specifications table" in prose
    assert ("(Those copied from a repository are a third party's text copy at a commit, the record's `copies:` "
            "address;") in prose
    assert "NVIDIA's H200 product page (https://www.nvidia.com/en-us/data-center/h200/) is not the datasheet" in EXCERPT
    source = tomllib.loads((REPO / "sources" / "nvidia-h200-datasheet.toml").read_text(encoding="utf-8"))["source"]
    assert "copies" not in source  # the page's address, listed here until cite102
    # The INT8 row, as the README says: the copy prints TFLOPS, the locator quotes TOPS (the figure is the same).
    cells = _h200_cells()
    at = cells.index("INT8 Tensor Core²")
    assert cells[at + 1] == "3,958 TFLOPS"
    card = tomllib.loads((REPO / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8"))
    assert card["array"]["locator"].endswith("'INT8 Tensor Core 3,958 TOPS' (with sparsity)")
    assert ("its `array` locator quotes the datasheet's `'INT8 Tensor Core 3,958 TOPS'`, which the page prints "
            "`3,958 TFLOPS`") in prose
    # Every other quote of the H200's datasheet the r1-qwen7b-h200 price rests on is the copy's, cell after cell.
    for label, value in (("GPU Memory Bandwidth", "4.8TB/s"), ("GPU Memory", "141GB"), ("FP32", "67 TFLOPS")):
        assert cells[cells.index(label) + 1] == value


STACK = "facts/stacks/llamacpp-cuda-2405.toml"
LOCK = "locks/r1-qwen7b-h200-llamacpp.lock.toml"


def _sides(head_stack: bytes, locks: bool = True) -> tuple[Side, Side, list[FileChange]]:
    """BASE with the checkout's llama.cpp stack, HEAD with ``head_stack``; both with the lock made under the stack
    when ``locks``; the one changed file, the stack, its ``integer_matrices`` changed."""
    base_stack = (REPO / STACK).read_bytes()
    lock = {LOCK: (REPO / LOCK).read_bytes()} if locks else {}
    base = Side(SideInfo("BASE"), Root(REPO), {STACK: base_stack, **lock})
    head = Side(SideInfo("HEAD"), Root(REPO), {STACK: head_stack, **lock})
    change = FileChange(STACK, "stack", "llamacpp-cuda-2405", "changed", meta=("integer_matrices",))
    return base, head, [change]


def test_a_stack_rerouted_under_a_lock_is_to_verify_old_to_new() -> None:
    """Before: llama.cpp's ``integer_matrices`` moved ``vector`` → ``array`` (its quantised matrices on the tensor
    cores, which the README says llama.cpp's mat-vec kernels do not use), the stack re-fitted by ``calibrate`` and
    ``r1-qwen7b-h200-llamacpp`` re-locked (expected 237.4 → 237.1 tokens/s), read "[stack] changed:
    integer_matrices" and "re-locked": exit 0, nothing to verify, nothing of what the route was or became. It asks
    now, naming the lock made under the stack."""
    text = (REPO / STACK).read_text(encoding="utf-8")
    assert text.count('integer_matrices = "vector"') == 1
    base, head, files = _sides(text.replace('integer_matrices = "vector"', 'integer_matrices = "array"').encode())
    assert rerouted_stacks(base, head, files) == {STACK: (
        "serving stack llamacpp-cuda-2405 rerouted: its integer_matrices 'vector' → 'array': do the runtime and builds "
        "its runs measured run those matrices there (the route is no cited fact: no source is asked of it)?; 1 lock "
        "made under it: r1-qwen7b-h200-llamacpp")}
    # No lock made under the stack: nothing a locked price rests on, nothing asked (as a relabelled stack's title).
    assert rerouted_stacks(*_sides(head.files[STACK], locks=False)) == {}
    # The route unchanged (another key of [stack] changed): nothing asked.
    assert rerouted_stacks(*_sides(base.files[STACK])) == {}
