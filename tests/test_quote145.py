"""A new user's findings (README only) on the quote check of line-numbered stored excerpts, each reproduced here.

1. A quote could span excerpt lines that are not next to each other and read ``checked``: in the L40S's
   ``on_chip.capacity`` locator, ``'looks like: Detected 1 CUDA Capable'`` joined the excerpt's lines 15 and 19 of
   sources/excerpts/cite74-excerpt.txt. Where an excerpt numbers its lines, lines whose numbers are neither the same
   nor next to each other do not join; lines ``N`` and ``N+1`` still do (a sentence the copy breaks).
2. A typo in the page declaration (``# numbers are pages``, or ``# Numbers are pages: ID`` naming an id no section
   of the file is headed) turned page checking off without a word: ``check`` warns, coded ``pages_declaration``.
3. ``audit --source azure-ai-benchmarking-guide`` with the B200 ``streams.rewrite``'s ``h100_mul`` locator quoting
   nothing said "only its own locator quotes nothing": the input quoting nothing is said too.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.sources import Source, StoredText, stored_text_of

L40S = "facts/cards/l40s.toml"
DEVICE_QUERY = "alvarobartt-cuda-device-query"
#: The L40S on_chip.capacity locator's first quote, as the card ships it.
SHIPPED = "'(142) Multiprocessors, (128) CUDA Cores/MP:    18176 CUDA Cores'"


def _stored(text: str, source: str = "s") -> StoredText:
    record = Source(id=source, title="t", kind="web", read="r", url="https://example.com",
                    excerpt="e.txt")
    return stored_text_of(record, text.encode(), "e.txt")


# --- (1) a quote across lines whose numbers are not next to each other -----------------------------------------------


@pytest.mark.parametrize(("span", "held"), [
    ("looks like: Detected 1 CUDA Capable", False),  # lines 15 and 19: was found, `checked`
    ("65536 deviceQuery, CUDA Driver = 12.4", False),  # lines 36 and 59
    ("(2.52 GHz) L2 Cache", False),  # lines 26 and 29
    ("CUDA Driver Version: 12.4 CUDA Capability Major/Minor", True),  # lines 22 and 23 still join
    ("(142) Multiprocessors, (128) CUDA Cores/MP: 18176 CUDA Cores", True),  # one line
])
def test_1_the_l40s_excerpt_joins_only_lines_next_to_each_other(span: str, held: bool) -> None:
    data = (REPO / "sources/excerpts/cite74-excerpt.txt").read_bytes()
    record = Source(id=DEVICE_QUERY, title="t", kind="web", read="r", url="https://example.com",
                    excerpt="sources/excerpts/cite74-excerpt.txt")
    assert stored_text_of(record, data, "cite74-excerpt.txt").holds(span) is held


def test_1_a_gap_is_a_barrier_in_both_searched_forms_and_no_quote_holds_it() -> None:
    stored = _stored("1\tab\n2\tcd\n3\tef\n7\tgh\n7\tij\n8\tkl\n")
    assert stored.holds("ab cd ef")  # 1, 2, 3 consecutive
    assert stored.holds("gh ij kl")  # 7, 7 (one number twice), 8
    assert not stored.holds("ef gh")  # 3 then 7: was found
    assert not stored.holds("efgh")  # nor with the blanks taken out
    assert not stored.holds("ef\x01gh")  # a span holding the barrier's character reads it as a blank
    loose = _stored("no numbers here\nand there\n")
    assert loose.holds("here and there")  # an excerpt that numbers no line joins every line, as before
    raw = _stored("1\tab\x01cd\n")
    assert raw.holds("ab cd")  # the character in the excerpt is a blank


def test_1_audit_says_not_found_of_the_l40s_quote_spanning_lines_15_and_19(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / L40S
    card.write_text(card.read_text(encoding="utf-8").replace(SHIPPED, "'looks like: Detected 1 CUDA Capable'", 1),
                    encoding="utf-8")
    result = invoke("audit", "--source", DEVICE_QUERY, root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # was: "l40s:on_chip.capacity: checked (3 of 3 quoted spans found in the stored text)"
    assert ("  l40s:on_chip.capacity: NOT FOUND (3 of 4 quoted spans found in the stored text; not in it: "
            "'looks like: Detected 1 CUDA Capable')") in lines, result.stdout
    assert ("quotes checked against a stored text: 2 of 3 facts' quotes checked against a stored text (1 NOT FOUND)"
            in lines)


def test_1_the_shipped_l40s_quotes_are_still_checked() -> None:
    lines = invoke("audit", "--source", DEVICE_QUERY).stdout.splitlines()
    assert "  l40s:on_chip.capacity: checked (3 of 3 quoted spans found in the stored text)" in lines
    assert "  l40s:on_chip.bandwidth: checked (2 of 2 quoted spans found in the stored text)" in lines
    assert "  l40s:scale: checked (1 of 1 quoted span found in the stored text)" in lines


# --- (2) a mistyped page declaration -----------------------------------------------------------------------------


def _repin(root: Path, excerpt: str) -> None:
    digest = hashlib.sha256((root / excerpt).read_bytes()).hexdigest()
    for record in (root / "sources").glob("*.toml"):
        text = record.read_text(encoding="utf-8")
        if f'excerpt = "{excerpt}"' in text:
            lines = [f'excerpt_sha256 = "{digest}"' if line.startswith("excerpt_sha256 = ") else line
                     for line in text.splitlines()]
            record.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _warnings(root: Path) -> list[dict[str, str]]:
    result = invoke("check", "--json", root=root)
    assert result.exit_code == 0, result.output
    return [w for w in json.loads(result.stdout)["coded_warnings"] if w["code"] == "pages_declaration"]


def test_2_the_shipped_declarations_warn_nothing() -> None:
    result = invoke("check", "--json")
    assert result.exit_code == 0, result.output
    assert not [w for w in json.loads(result.stdout)["coded_warnings"] if w["code"] == "pages_declaration"]


def test_2_check_warns_of_a_declaration_in_another_case_or_spacing(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    excerpt = root / "sources/excerpts/cite72-excerpt.txt"
    text = excerpt.read_text(encoding="utf-8")
    assert "\n# Numbers are pages\n" in text
    excerpt.write_text(text.replace("\n# Numbers are pages\n", "\n# numbers  are pages\n", 1), encoding="utf-8")
    _repin(root, "sources/excerpts/cite72-excerpt.txt")
    line = text.splitlines().index("# Numbers are pages") + 1
    assert line == 10
    text_line = ("sources/excerpts/cite72-excerpt.txt: line 10: '# numbers  are pages' is not the declaration that "
                 "the numbers are pages, so a quote after 'p. N' is looked for in the whole text; write it "
                 "'# Numbers are pages' (or '# Numbers are pages: ID ID …')")
    assert _warnings(root) == [{"code": "pages_declaration", "text": text_line}]  # was none: pages silently off
    result = invoke("check", root=root)
    assert f"  warning: {text_line}" in result.stdout.splitlines()


def test_2_check_warns_of_a_declared_id_no_section_is_headed(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    excerpt = root / "sources/excerpts/cite70-excerpt.txt"
    text = excerpt.read_text(encoding="utf-8")
    exact = "# Numbers are pages: nvidia-cuda-programming-guide"
    assert exact in text.splitlines()
    excerpt.write_text(text.replace(exact, "# Numbers are pages: nvidia-cuda-programing-guide", 1), encoding="utf-8")
    _repin(root, "sources/excerpts/cite70-excerpt.txt")
    assert _warnings(root) == [{"code": "pages_declaration", "text": (
        "sources/excerpts/cite70-excerpt.txt: line 30: '# Numbers are pages:' names nvidia-cuda-programing-guide, "
        "which no section of this file is headed nor any record naming it is: no section's numbers are read as pages "
        "for it; name the section's source id (its '== ID PATH URL ==' line)")}]


def test_2_the_exact_declaration_keeps_its_meaning() -> None:
    paged = _stored("# Numbers are pages\n== s x https://a ==\n3\tthree\n")
    assert paged.paged and paged.holds("three", 3) and not paged.holds("three", 4)
    named = _stored("# Numbers are pages: s\n== s x https://a ==\n3\tthree\n")
    assert named.paged
    mistyped = _stored("# numbers are pages\n== s x https://a ==\n3\tthree\n")
    assert not mistyped.paged and mistyped.holds("three", 4)  # read as the copy's lines, as before: warned of


# --- (3) an input's locator quoting nothing beside the fact's own ---------------------------------------------------


def test_3_audit_says_an_input_quoting_nothing_too(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts/cards/b200.toml"
    quoted = "row '| Mul   | 2.90              |' in TB/s"
    text = card.read_text(encoding="utf-8")
    assert text.count(quoted) == 1
    card.write_text(text.replace(quoted, "row Mul 2.90 in TB/s", 1), encoding="utf-8")
    result = invoke("audit", "--source", "azure-ai-benchmarking-guide", root=root)
    assert result.exit_code == 0, result.output
    # was: "its derivation's figures checked: 3 of 3 quoted spans found in the stored text; only its own locator
    # quotes nothing"
    assert ("  b200:streams.rewrite: not checked (its derivation's quoted figures checked: 3 of 3 quoted spans found "
            "in the stored text; its own locator quotes nothing, and 1 of its derivation's inputs quotes nothing too "
            "(the h100_mul figure's locator))") in result.stdout.splitlines(), result.stdout
