"""A new user's findings (README only) on issue 13's review and audit uses, each reproduced here.

1. The quote check ignored which file a locator names inside one source: ``h200_sxm_141gb``'s ``streams.read`` set
   to cite ``Azure_Results/ND_H200_v5_results.md``'s row ``'| Dot   | 3.18              |'`` read ``checked``, that
   row being the H100's file's (line 51 of sources/excerpts/github-sources-excerpt.txt; the H200's reads 4.48, line
   63). A quote whose locator names a part the excerpt heads a section for is looked for under that part alone.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.sources import Source, stored_text_of

AZURE = "azure-ai-benchmarking-guide"
EXCERPT = "sources/excerpts/github-sources-excerpt.txt"
H200_DOT_3_18 = ("Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6), HBM Bandwidth table "
                 "(BabelStream): row '| Dot   | 3.18              |' in TB/s")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry, its first commit (on main) the checkout's registry."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _azure() -> Source:
    return Source(id=AZURE, title="t", kind="web", read="r", url="https://example.com", excerpt=EXCERPT)


# --- (1) a locator naming one file of a source ---------------------------------------------------------------------


def test_1_the_excerpt_holds_the_dot_rows_where_the_finding_says() -> None:
    lines = (REPO / EXCERPT).read_text(encoding="utf-8").splitlines()
    assert lines[50] == "| Dot   | 3.18              |"  # line 51, under ND_H100_v5_results.md
    assert lines[62] == "| Dot   | 4.48              |"  # line 63, under ND_H200_v5_results.md
    assert lines[43].startswith(f"== {AZURE} Azure_Results/ND_H100_v5_results.md ")
    assert lines[55].startswith(f"== {AZURE} Azure_Results/ND_H200_v5_results.md ")


def test_1_a_part_named_is_searched_alone() -> None:
    stored = stored_text_of(_azure(), (REPO / EXCERPT).read_bytes(), EXCERPT)
    assert list(stored.parts) == ["Azure_Results/ND_A100_v4_results.md", "Azure_Results/ND_H100_v5_results.md",
                                  "Azure_Results/ND_H200_v5_results.md"]
    assert stored.parts_named(H200_DOT_3_18) == ("Azure_Results/ND_H200_v5_results.md",)
    assert stored.parts_named("ND_H200_v5_results.md, row '| Dot | 4.48 |'") == (
        "Azure_Results/ND_H200_v5_results.md",)  # the file's name alone names it (no other part ends so)
    assert stored.parts_named("Azure_Results/ND_H200_v5_results.md.bak") == ()  # a longer name is not it
    assert stored.parts_named("HBM Bandwidth table: row '| Dot | 3.18 |'") == ()  # names none: the whole text
    assert stored.holds("| Dot | 3.18 |")  # in the source's text (today's look, no part named)
    assert not stored.holds("| Dot | 3.18 |", part="Azure_Results/ND_H200_v5_results.md")
    assert stored.holds("| Dot | 4.48 |", part="Azure_Results/ND_H200_v5_results.md")
    assert stored.part_holding("| Dot | 3.18 |", ("Azure_Results/ND_H200_v5_results.md",)) == (
        "Azure_Results/ND_H100_v5_results.md")


def test_1_audit_says_not_found_and_under_which_file_it_is(repo: Path) -> None:
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.6625", "--unit", "1",
                    "--provenance", "measured", "--source", AZURE, "--locator", H200_DOT_3_18, root=repo)
    assert result.exit_code == 0, result.output
    audit = invoke("audit", "--source", AZURE, root=repo)
    assert audit.exit_code == 0, audit.output
    assert ("  h200_sxm_141gb:streams.read: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
            "'| Dot   | 3.18              |' (under Azure_Results/ND_H200_v5_results.md; found only under "
            "Azure_Results/ND_H100_v5_results.md))") in audit.stdout.splitlines(), audit.stdout  # was `checked`
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 1, review.output  # a NOT FOUND quote fails the review
    assert "1 quote NOT FOUND in its stored text" in review.stdout.splitlines()[1], review.stdout


def test_1_the_shipped_b200_host_stream_reads_as_today(repo: Path) -> None:
    # its locator names both Hopper files, its derivation inputs one each: each quote is under the file its input names
    audit = invoke("audit", "--source", AZURE, root=repo)
    assert "  b200:host.stream: checked (2 of 2 quoted spans found in the stored text)" in audit.stdout.splitlines()
    assert "NOT FOUND" not in audit.stdout
