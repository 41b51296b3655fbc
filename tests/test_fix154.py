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


# --- (2) a made-up estimate raising prices -------------------------------------------------------------------------

H200_LOCKS = ("qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200", "r1-qwen7b-h200-best",
              "r1-qwen7b-h200-llamacpp")


def test_2_a_guessed_estimate_above_the_measurement_is_asked(repo: Path) -> None:
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.99", "--unit", "1",
                    "--provenance", "estimated", "--source", "passprice-card-review", "--locator", "a guess", root=repo)
    assert result.exit_code == 0, result.output
    for lock in H200_LOCKS:
        relocked = invoke("lock", "--update", "--force", "-o", str(repo / f"locks/{lock}.lock.toml"), "--require",
                          "streams.read=estimated", root=repo)
        assert relocked.exit_code == 0, relocked.output
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 0, review.output  # asked, never failed: the README's policy for what is to verify
    lines = review.stdout.splitlines()
    assert lines[0].startswith("⚠️ passprice diff: main")
    # was "1 fact changed in 1 file, 1 weakened; 5 locks affected, …", nothing to verify
    assert lines[1].startswith("1 fact changed in 1 file, 1 weakened, 1 to verify in its source; 5 locks affected"), (
        lines[1])
    # 0.99 x 4.8 TB/s = 4.752 TB/s, above the 4.48 TB/s measured (0.9333 x 4.8 = 4.48); +6.075 % = 0.99 / 0.9333 - 1
    assert ("                to verify: the citation changed and its basis names no figure (its locator and note "
            "quote no number): what gives 0.99? does passprice-card-review: a guess give it, estimated?; its value "
            "moved above the measured 0.9333 it replaces (→ 0.99, +6.075 %) on a weaker basis: what justifies it over "
            "the measured figure?") in lines, review.stdout


# --- (3) the review's warnings of check on HEAD are check's --------------------------------------------------------


def test_3_a_copied_card_s_warnings_are_counted_and_listed_as_check_prints_them(repo: Path) -> None:
    text = (repo / "facts/cards/h100_sxm5_80gb.toml").read_text(encoding="utf-8")
    text = text.replace('name = "NVIDIA H100 SXM5 80GB"', 'name = "H100 copy"', 1).replace(
        'note = "GH100 with 132 SMs', 'note = "A copy. GH100 with 132 SMs', 1)
    (repo / "facts/cards/h100_copy.toml").write_text(text, encoding="utf-8")
    check = invoke("check", root=repo)
    warned = [line for line in check.stdout.splitlines() if line.startswith("  warning: ")]
    # 4 measured facts on each of the 2 cards, and the standing line of the 22 sources retrieved "unknown"
    assert len(warned) == 9, check.stdout
    assert sum("is measured but cites the same place as another card's measured fact" in w for w in warned) == 8
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 0, review.output
    lines = review.stdout.splitlines()
    # was "…; 0 warnings" (none listed) for this copy, and "1 warning of check on HEAD" with its note copied
    # each of its 16 facts not assumed is a copied citation, to verify (tests/test_fix166.py)
    assert lines[1] == ("17 facts added in 1 new file, 16 to verify in their sources (16 copied citations: each cites "
                        "what another card's fact cites); no lock affected; 9 warnings of check on HEAD; 10 locks "
                        "unaffected"), lines[1]
    assert [line for line in lines if line.startswith("  warning: ")] == warned


# --- (4) a checkpoint entry renamed ----------------------------------------------------------------------------------


def test_4_a_renamed_checkpoint_entry_is_said_renamed(repo: Path) -> None:
    _git(repo, "mv", "registry/checkpoints/codellama-7b-q8_0.toml", "registry/checkpoints/cl7-q8.toml")
    entry = repo / "registry/checkpoints/cl7-q8.toml"
    entry.write_text(entry.read_text(encoding="utf-8").replace('name = "codellama-7b-q8_0"', 'name = "cl7-q8"', 1),
                     encoding="utf-8")
    runs = repo / "registry/measurements/llamacpp-points.toml"
    runs.write_text(runs.read_text(encoding="utf-8").replace('checkpoint = "codellama-7b-q8_0"',
                                                             'checkpoint = "cl7-q8"'), encoding="utf-8")
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 0, review.output
    lines = review.stdout.splitlines()
    # was "no fact changed; 1 checkpoint entry added; 1 checkpoint entry removed; …", the same content on both
    assert lines[1].startswith("no fact changed; 1 checkpoint entry renamed; 1 other file changed; "), lines[1]
    assert ("registry/checkpoints/cl7-q8.toml (checkpoint cl7-q8): added (renamed from "
            "registry/checkpoints/codellama-7b-q8_0.toml: the same content)") in lines
    assert ("registry/checkpoints/codellama-7b-q8_0.toml (checkpoint codellama-7b-q8_0): removed (renamed to "
            "registry/checkpoints/cl7-q8.toml: the same content)") in lines


# --- (5) the ratio worked out from a changed citation ----------------------------------------------------------------


def test_5_a_re_cited_ratio_is_worked_out_from_its_new_quote(repo: Path) -> None:
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.85", "--unit", "1",
                    "--provenance", "measured", "--source", AZURE, "--locator",
                    "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table (BabelStream): row "
                    "'| Copy  | 4.01              |' in TB/s", root=repo)
    assert result.exit_code == 0, result.output
    review = invoke("diff", "main", root=repo)
    asks = [line for line in review.stdout.splitlines() if "to verify:" in line and "streams.read" not in line]
    # 4.01 / 4.8 = 0.83541…: said to 4 digits
    assert any(line.endswith("; the locator quotes 4.01 TB/s, which over the card's memory.bandwidth (4.8 TB/s) is "
                             "0.8354, not 0.85") for line in asks), review.stdout


# --- (6) a stack's refusal on a lock row -----------------------------------------------------------------------------


def test_6_a_stack_refusal_is_not_called_the_limit() -> None:
    from types import SimpleNamespace

    from passprice.review.rendering import _refused_by_stack

    priced = SimpleNamespace(price={"tokens_per_s": 996.1, "stack": "llamacpp-cuda-2405"}, refusal=None)
    refused = SimpleNamespace(price=None, refusal={"refusal": "BeyondStack"})
    assert _refused_by_stack(SimpleNamespace(before=priced, after=refused)) == (
        "  (refused by its stack llamacpp-cuda-2405, not at the card's limit)")
    other = SimpleNamespace(price=None, refusal={"refusal": "NotResident"})
    assert _refused_by_stack(SimpleNamespace(before=priced, after=other)) is None
