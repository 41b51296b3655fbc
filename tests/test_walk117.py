"""What a new user with only the README found (issue 13's review, reproduce and audit uses), each failing input kept.

The items, by the section of this file:

5. ``audit r1-qwen7b-h200 --card sn40l``: the SN40L Hot Chips deck's record named no stored excerpt though its
   ``read:`` says the lines are in sources/excerpts/cite71-excerpt.txt; the README said that file held only the
   Hopper whitepaper's lines (test_5_*).
10. ``audit``'s header of a document printed ``(AMD, unknown)`` while its ``read:`` names the 2025 edition: the
    header says the edition the record states (test_10_*).
"""

from __future__ import annotations

import re

from cli_helpers import REPO, invoke

# --- 5. the SN40L deck's stored excerpt ---------------------------------------------------------------------------


def test_5_the_sn40l_deck_names_its_stored_excerpt() -> None:
    result = invoke("audit", "r1-qwen7b-h200", "--card", "sn40l")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = lines.index("  sambanova-sn40l-hot-chips-2024 — SambaNova SN40L RDU: Breaking the Barrier of Trillion+ "
                     "Parameter Scale Gen AI Computing (Hot Chips 2024, 2024)")
    block = lines[at + 1:at + 7]
    assert ("    stored excerpt: sources/excerpts/cite71-excerpt.txt (the text read, from the registry's top folder)"
            in block), block


def test_5_the_readme_lists_what_each_excerpt_file_holds() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    start = readme.index("The 13 files, and what each holds:")
    said = readme[start:readme.index("No figure of a document outside them", start)]
    files = sorted(p.name for p in (REPO / "sources" / "excerpts").glob("*.txt"))
    assert len(files) == 13
    assert sorted(set(re.findall(r"`([\w.-]+-excerpt\.txt)`", said))) == files
    assert ("`cite71-excerpt.txt`, the Hopper whitepaper's lines, the SN40L Hot Chips 2024 deck's slide text" in said)


# --- 10. the edition the record states ----------------------------------------------------------------------------


def test_10_the_header_says_the_edition_read() -> None:
    result = invoke("audit", "r1-qwen7b-h200", "--card", "mi300x")
    assert result.exit_code == 0, result.output
    assert ("  amd-cdna3-whitepaper — Introducing AMD CDNA 3 Architecture (white paper) (AMD, unknown; the copy read: "
            "the 2025 edition, '©2025', PID#2258402-B)") in result.output.splitlines()
    result = invoke("audit", "--source", "amd-cdna3-whitepaper")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].startswith(
        "  AMD · whitepaper · unknown; the copy read: the 2025 edition, '©2025', PID#2258402-B · https://www.amd.com/")
    # a record whose read states no edition is as before
    result = invoke("audit", "--source", "nvidia-h200-product-page")
    assert "  NVIDIA · " in result.output and "the copy read:" not in result.output
