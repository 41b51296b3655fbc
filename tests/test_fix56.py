"""check's and validate's leftovers on quotes, excerpts and tables (issue 13), each rebuilt in a registry ``passprice
init`` wrote in a temporary folder.

1. A figure moved to another figure of its own quote passed ``check``: the H100 SXM's ``memory.capacity`` 80 → 94 GB
   under ``'GPU Memory 80GB 94GB'`` (the row's H100 NVL figure), its locator naming the H100 SXM column; an
   nvidia-smi ``used / total`` line's used figure; a host link's per-direction figure under its total. Now check
   reads which figure is the card's where the record says it (:mod:`passprice.quotecolumn`) and fails a moved one
   (exit 1), and warns naming the figures where nothing says which.
2. ``validate``'s table was padded to the width of one refused run's message (about 200 characters): the row now
   holds the refusal's name, and the message is said once below the table with the run's id.
3. An excerpt edited away from its registry document passed a review whose HEAD is a git revision (its document
   written empty there, not compared): the revision's document is now read through git and compared.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

H100 = "facts/cards/h100_sxm5_80gb.toml"
A100 = "facts/cards/a100_pcie_80gb.toml"
B200 = "facts/cards/b200.toml"


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _check(root: Path) -> tuple[int, list[str]]:
    result = invoke("--no-cache", "check", root=root)
    return result.exit_code, result.stdout.splitlines()


# --- 1. a figure moved to another figure of its own quote ----------------------------------------------------------


def test_1_the_shipped_registry_still_reads_no_problem_and_no_which_warning(tmp_path: Path) -> None:
    code, lines = _check(copy_root(tmp_path))
    assert code == 0 and lines[0].endswith(": 0 problems"), lines[:5]
    assert not any("which is this card's?" in line for line in lines), lines


def test_1_a_figure_moved_to_the_other_column_of_its_row_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit(root, H100, "[memory.capacity]\nvalue = 80\n", "[memory.capacity]\nvalue = 94\n")
    code, lines = _check(root)
    # Before: "0 problems", exit 0 (94GB is a figure of the quote).
    assert code == 1 and lines[0].endswith(": 1 problem"), lines[:5]
    assert lines[1] == (
        f"  {H100}: memory.capacity: its quote of nvidia-h100-product-page 'GPU Memory 80GB 94GB' states 80GB in its "
        "H100 SXM column (of 80GB and 94GB), not its value 94 GB: the value and the words it cites disagree; quote "
        "the words of the document stating the value, or set the value they state"), lines[:3]


def test_1_nvidia_smis_used_figure_as_a_capacity_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit(root, A100, "[memory.capacity]\nvalue = 81920\n", "[memory.capacity]\nvalue = 4\n")
    code, lines = _check(root)
    assert code != 0
    assert (f"  {A100}: memory.capacity: its quote of xiongjiedai-gpu-benchmarks '4MiB / 81920MiB' states 81920MiB "
            "as the total of its used / total (of 4MiB and 81920MiB), not its value 4 MiB: the value and the words it "
            "cites disagree; quote the words of the document stating the value, or set the value they state") in lines


def test_1_a_host_links_total_moved_to_its_rate_in_each_direction_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit(root, B200, "derivation.inputs.both_ways = { value = 128,", "derivation.inputs.both_ways = { value = 64,")
    code, lines = _check(root)
    assert code == 1
    assert (f"  {B200}: host.read: its both_ways figure's quote of nvidia-hopper-whitepaper 'H100 incorporates a PCI "
            "Express Gen 5 x16 lane interface, providing 128 GB/sec t' states 128 GB/s as its total (of 128 GB/s and "
            "64 GB/s), not its 64 GB/s: the value and the words it cites disagree; quote the words of the document "
            "stating the value, or set the value they state") in lines


def test_1_a_quote_naming_no_column_is_warned_of_naming_its_figures(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit(root, H100, "Product Specifications table, H100 SXM column (a row: its label, the H100 SXM figure, the H100 "
          "NVL figure): 'GPU Memory 80GB 94GB'", "Product Specifications table: 'GPU Memory 80GB 94GB'")
    code, lines = _check(root)
    assert code == 0 and lines[0].endswith(": 0 problems"), lines[:5]
    assert (f"  warning: {H100}: memory.capacity: its quote of nvidia-h100-product-page 'GPU Memory 80GB 94GB' states "
            "80GB and 94GB: which is this card's? name its column in the locator (`NAME column (the first)`), or "
            "quote its figure alone") in lines
    # a warm check (its look at quotes from the cache) says it again
    warm = invoke("check", root=root)
    warm2 = invoke("check", root=root)
    assert warm.exit_code == warm2.exit_code == 0
    assert sum("which is this card's?" in line for line in warm2.stdout.splitlines()) == 1


def test_1_the_column_is_placed_by_an_ordinal_or_the_rows_cells() -> None:
    from passprice.quotecolumn import selected

    span = "GPU Boost Clock 1410 MHz 1980 MHz 1755 MHz"
    locator = f"row GPU Boost Clock, H100 PCIe column: '{span}' (A100, H100 SXM5, H100 PCIe)"
    chosen = selected("scale", "clock", "MHz", locator, locator.index("'"), span)
    assert chosen is not None and chosen.chosen == 2 and chosen.why == "in its H100 PCIe column"
    locator = "A100 80GB SXM column (the second): 'GPU 1935GB/s 2039GB/s'"
    chosen = selected("memory.bandwidth", "", "GB/s", locator, locator.index("'"), "GPU 1935GB/s 2039GB/s")
    assert chosen is not None and chosen.chosen == 1
    # one figure, or one figure written twice, is nothing to decide
    assert selected("memory.capacity", "", "GB", "x: 'GPU Memory 141GB 141GB'", 3, "GPU Memory 141GB 141GB") is None


# --- 2. validate's table kept narrow --------------------------------------------------------------------------------

RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
FIRST_RUN = 'checkpoint = "llama3-8b-q4_k_m"\nbatch = 1\npositions = [0, 512]'
RUN = "xd3.h100_pcie_80gb.8b-q4km.tg512"


def test_2_a_refused_runs_row_holds_its_refusals_name_and_its_message_is_said_below(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit(root, RUNS, FIRST_RUN, FIRST_RUN.replace("batch = 1", "batch = 2000"))
    result = invoke("validate", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = lines[2]
    row = next(line for line in lines if line.startswith(f"{RUN} "))
    # Before: the row ended "refused (NotResident): the card memory must hold 139,130,626,048 bytes … card" and
    # the header was padded to 355 characters; now 166.
    assert row.endswith("  refused (NotResident)"), row
    assert len(header.rstrip()) == 166, header
    assert max(len(line) for line in lines[2:lines.index(row) + 1]) <= 170
    said = [line for line in lines if RUN + ":" in line]
    assert said == [
        f"  {RUN}: refused (NotResident): the card memory must hold 139,130,626,048 bytes but holds 85,520,809,984 "
        "(at most 1,201 sequences fit beside the 4,912,898,048 bytes held once): correct the run's batch, positions "
        "or card"], said
    assert lines[lines.index(said[0]) - 1] == "refused runs, each with the model's reason:"


def test_2_the_short_reason() -> None:
    from passprice.validate import short_why

    assert short_why("refused (NotResident): the card memory …") == "refused (NotResident)"
    assert short_why("stack not registered") == "stack not registered"
    assert short_why(None) == ""


# --- 3. an excerpt edited away from its document, reviewed at a git revision ---------------------------------------

SOURCE = "sources/hx1-design.toml"
EXCERPT = "sources/excerpts/hx1-design.txt"
DOCUMENT = "notes/hx1-design.md"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASSPRICE_NO_CACHE": "1"}
    return subprocess.run(["passprice", *args], cwd=root, capture_output=True, text=True, env=env, timeout=300)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _pin_excerpt(root: Path) -> None:
    digest = hashlib.sha256((root / EXCERPT).read_bytes()).hexdigest()
    path = root / SOURCE
    path.write_text(re.sub(r'(?m)^excerpt_sha256 = "[0-9a-f]{64}"$', f'excerpt_sha256 = "{digest}"',
                           path.read_text(encoding="utf-8")), encoding="utf-8")


@pytest.fixture
def designed(tmp_path: Path) -> Path:
    """``init``'s registry in git with a registry document, its source record and stored excerpt, committed on
    ``main``; then on branch ``edit`` the excerpt's line ``6 TB/s`` edited to ``6.2 TB/s`` and re-pinned,
    committed (no fact quotes that line)."""
    done = subprocess.run(["passprice", "init", "mine"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "mine"
    (root / "notes").mkdir()
    (root / DOCUMENT).write_text("# HX1 design\n\nPeak Memory Bandwidth 6 TB/s\nL2 64 MB\n", encoding="utf-8")
    (root / EXCERPT).write_text("# The HX1 design notes' lines, as read.\n1\t# HX1 design\n"
                                "3\tPeak Memory Bandwidth 6 TB/s\n4\tL2 64 MB\n", encoding="utf-8")
    (root / SOURCE).write_text(
        '#:schema ../schema/source.schema.json\n[source]\ntitle = "HX1 design notes"\nkind = "registry"\n'
        f'publisher = "me"\npath = "{DOCUMENT}"\nread = "read by hand"\nexcerpt = "{EXCERPT}"\n'
        f'excerpt_sha256 = "{"0" * 64}"\n', encoding="utf-8")
    _pin_excerpt(root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "hx1 design notes")
    _git(root, "checkout", "-qb", "edit")
    path = root / EXCERPT
    path.write_text(path.read_text(encoding="utf-8").replace("6 TB/s", "6.2 TB/s"), encoding="utf-8")
    _pin_excerpt(root)
    _git(root, "commit", "-qam", "excerpt edited")
    return root


LINE = (f"{SOURCE}: source.excerpt: {EXCERPT} holds 1 line NOT FOUND in {DOCUMENT}, the document it copies "
        "(source.path): 'Peak Memory Bandwidth 6.2 TB/s': copy the lines from the document again (and pin the "
        "excerpt's sha256 anew), or restore the document")


def test_3_a_review_of_a_revision_compares_the_excerpt_with_its_document(designed: Path) -> None:
    check = _run(designed, "check")
    assert check.returncode == 1 and f"  {LINE}" in check.stdout.splitlines(), check.stdout[-2000:]
    work_tree = _run(designed, "diff", "main")  # HEAD the work tree: compared, as before
    assert work_tree.returncode == 1 and LINE in work_tree.stdout, work_tree.stdout[-3000:]
    # Before: exit 0, the revision's document written empty and not compared.
    revision = _run(designed, "diff", "main", "edit")
    assert revision.returncode == 1, revision.stdout[-3000:] + revision.stderr[-2000:]
    assert LINE in revision.stdout, revision.stdout[-3000:]


def test_3_a_revision_whose_excerpt_holds_passes(designed: Path) -> None:
    _git(designed, "checkout", "-q", "main")
    _git(designed, "checkout", "-qb", "fine")
    (designed / "notes" / "other.md").write_text("unrelated\n", encoding="utf-8")
    _git(designed, "add", "-A")
    _git(designed, "commit", "-qm", "a note")
    revision = _run(designed, "diff", "main", "fine")
    assert LINE not in revision.stdout
    assert "NOT FOUND" not in revision.stdout, revision.stdout[-3000:]

