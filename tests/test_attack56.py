"""Attack round 56 (issue 13): hostile input against the quote rule's exceptions and readings, ``audit --fact
ROUTING:PATH`` and the comparison of a stored excerpt with its registry document: what escaped, each with its
reproducer built here and the exit status and line asserted (before the fix: ``check`` exit 0 and no line, the review
asking nothing, or edit's line of a command that edits nothing)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
from passprice.addedfacts import from_basis
from test_fix55w import DOCUMENT, EXCERPT, SOURCE, _bandwidth, _lines, _pin_excerpt, _run, made  # noqa: F401

CARD = "facts/cards/h100_sxm5_80gb.toml"
LOCATOR = "Product Specifications table, H100 SXM column: 'GPU Memory Bandwidth 3.35TB/s 3.9TB/s'"
QUOTE_LINE = ("facts/cards/h100_sxm5_80gb.toml: memory.bandwidth: its quote of nvidia-h100-product-page 'GPU Memory "
              "Bandwidth 3.35TB/s 3.9TB/s' states 3.35TB/s, 3.9TB/s, not its value {value} TB/s: the value and the "
              "words it cites disagree; quote the words of the document stating the value, or set the value they "
              "state")


def _set_bandwidth(root: Path, value: str, locator: str, *note: str) -> None:
    """``fact set`` of the H100's ``memory.bandwidth``, assumed, citing the product page (exit 0: the file is
    written, a quote that disagrees is a warning)."""
    result = invoke("fact", "set", "h100_sxm5_80gb", "memory.bandwidth", "--value", value, "--unit", "TB/s",
                    "--provenance", "assumed", "--source", "nvidia-h100-product-page", "--locator", locator,
                    *(("--note", note[0]) if note else ()), root=root)
    assert result.exit_code == 0, result.output


def _check_lines(root: Path) -> tuple[int, list[str]]:
    result = invoke("check", root=root)
    return result.exit_code, [line.strip() for line in result.stdout.splitlines()]


# --- 1. a note opening ``Basis:`` and saying nothing after it spared a figure its own quote contradicts ------------


@pytest.mark.parametrize("note", ["Basis:", "Estimate:", "  Basis:   ", "Basis: —", "Estimate: ..."])
def test_an_empty_basis_note_is_held_to_its_quote(tmp_path: Path, note: str) -> None:
    """An assumed 3.97 TB/s under ``'GPU Memory Bandwidth 3.35TB/s 3.9TB/s'`` with the note ``Basis:`` (nothing
    after) passed ``check`` (exit 0, no quote line): the opening alone exempted it from its quote. A note that states
    no basis is no basis: ``check`` fails it with the quote's line."""
    root = copy_root(tmp_path)
    _set_bandwidth(root, "3.97", LOCATOR, note)
    status, lines = _check_lines(root)
    assert status == 1
    assert QUOTE_LINE.format(value="3.97") in lines


def test_a_basis_note_with_words_still_spares_its_quote(tmp_path: Path) -> None:
    """The same fact with a note stating its basis (``Basis: the NVL figure 3.9TB/s, raised for the faster
    bins``) is not held to its quotes, as README says of ``Basis:``."""
    root = copy_root(tmp_path)
    _set_bandwidth(root, "3.97", LOCATOR, "Basis: the NVL figure 3.9TB/s, raised for the faster bins")
    assert not any("not its value" in line for line in _check_lines(root)[1])


# --- 2. a page, section or table number read as the factor an estimate works its figure out by --------------------


@pytest.mark.parametrize(("value", "after"), [
    ("3.953", " (p. 18)"),  # 3.35 TB/s raised by 18 %
    ("3.953", " (section 18)"),
    ("3.618", ", Table 8"),  # 3.35 TB/s raised by 8 %
    ("3.082", " (§ 8)"),  # 3.35 TB/s less 8 %
    ("60.3", ", page 18"),  # 3.35 TB/s times 18
    ("3.97", " (1 card: 3.97 TB/s)"),  # its own figure, unquoted, times 1
])  # fmt: skip
def test_a_place_number_is_no_factor(tmp_path: Path, value: str, after: str) -> None:
    """An assumed 3.953 TB/s under ``'GPU Memory Bandwidth 3.35TB/s 3.9TB/s' (p. 18)`` passed ``check`` (exit 0,
    no quote line): the page number 18 was read as a bare number the quoted 3.35 TB/s is scaled by (3.35 x 1.18),
    so the locator "worked its figure out". A number naming a place in the document is no factor."""
    root = copy_root(tmp_path)
    _set_bandwidth(root, value, LOCATOR + after)
    status, lines = _check_lines(root)
    assert status == 1
    assert QUOTE_LINE.format(value=value) in lines


@pytest.mark.parametrize(("amount", "unit", "locator", "holds"), [
    (3.953, "TB/s", LOCATOR + " (p. 18)", False),
    (6.5, "TB/s", "'Peak Memory Bandwidth 6 TB/s' (section 8.3)", False),
    (3.35 * 1.03, "TB/s", "Table 3: 'GPU Memory Bandwidth 3.35TB/s'", False),
    (4.56, "TB/s", "'4.8 TB/s' less 5 %", True),
    (4.56, "TB/s", "p. 5: '4.8 TB/s' less 5 %", True),
    (96, "GB", "(6 HBM3E stacks x 16 GB)", True),
    (4.56, "TB/s", "'4.8 TB/s' less 5%", True),
    (4.56, "TB/s", "'4.8 TB/s' less five percent", True),
    (4.56, "TB/s", "'4.8 TB/s' (5 stacks)", False),  # a bare 5 is no percentage: it lowered 4.8 by 5 %
    (5.04, "TB/s", "'4.8 TB/s', 5 readers", False),
    (6.5, "TB/s", "'Peak Memory Bandwidth 6 TB/s' (1 card: 6.5 TB/s)", False),  # its own figure times 1
    (6.5, "TB/s", "'Peak Memory Bandwidth 6 TB/s' (6.5 TB/s over 1 card)", False),
    (4.56, "TB/s", "'4.8 TB/s' less 5 %: 4.56 TB/s", True),
    (100, "Tcycle/s", "'50,000 block-scale lanes at 2.0 GHz'", True),
])  # fmt: skip
def test_from_basis_reads_factors_not_places(amount: float, unit: str, locator: str, holds: bool) -> None:
    """:func:`passprice.addedfacts.from_basis`: a page, section or table number is no factor, and a bare number no
    percentage (``'4.8 TB/s' (5 stacks)`` read 4.56 TB/s as 4.8 less 5 %); a stated operation (less 5 %, 6 stacks x
    16 GB, lanes at a clock) still is, a page named beside it or not."""
    assert from_basis(amount, unit, locator) is holds


# --- 3. audit --fact ROUTING:PATH with a path that is none of the record's facts ------------------------------------


@pytest.mark.parametrize(("ref", "line"), [
    ("uniform:HOT_SHARE", "passprice: error: --fact uniform:HOT_SHARE: HOT_SHARE is no fact of routing record uniform "
                          "(facts/routing/uniform.toml): its facts are hot_experts and hot_share; did you mean "
                          "uniform:hot_share?"),
    ("uniform:hot_share.value", "passprice: error: --fact uniform:hot_share.value: hot_share.value is no fact of "
                                "routing record uniform (facts/routing/uniform.toml): its facts are hot_experts and "
                                "hot_share"),
    ("qwen3-30b-a3b-measured:experts", "passprice: error: --fact qwen3-30b-a3b-measured:experts: experts is no fact "
                                       "of routing record qwen3-30b-a3b-measured "
                                       "(facts/routing/qwen3-30b-a3b-measured.toml): its facts are hot_experts and "
                                       "hot_share"),
])  # fmt: skip
def test_audit_fact_names_a_routing_records_facts(ref: str, line: str) -> None:
    """``audit --fact uniform:HOT_SHARE`` said edit's "not a card: the fact commands edit cards and drafting methods
    … edit the record's file by hand, then run passprice check" of a command that edits nothing (exit 2), as
    ``STACK:PATH`` did before: it names the record's facts, and the one meant where only the case differs."""
    result = invoke("audit", "--fact", ref)
    assert (result.exit_code, result.stderr.splitlines()) == (2, [line])


def test_audit_fact_still_reads_a_routing_share() -> None:
    """``uniform:hot_share`` and ``uniform:routing.hot_experts`` are audited (exit 0)."""
    for ref, head in (("uniform:hot_share", "audit of fact uniform:hot_share"),
                      ("uniform:routing.hot_experts", "audit of fact uniform:hot_experts")):
        result = invoke("audit", "--fact", ref)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[0] == head


# --- 4. a registry document not UTF-8, or past 1 MiB, turned off the comparison of its stored excerpt with it -------

REV2_65 = "Peak Memory Bandwidth, revision 2 (faster HBM3E bins) 6.5 TB/s"


@pytest.fixture
def hx1(made: Path, tmp_path: Path) -> Path:  # noqa: F811 (``made``: tests/test_fix55w.py's new user's registry)
    """A copy of tests/test_fix55w.py's new user's registry (hx1, its design document and stored excerpt)."""
    root = tmp_path / "mine"
    shutil.copytree(made, root, symlinks=True)
    return root


def _excerpt_moved_to_6_5(root: Path) -> None:
    """The new user's excerpt edited (6.4 → 6.5 TB/s, its sha256 pinned anew) and hx1's bandwidth with it, the
    document left saying 6.4: the excerpt no longer copies the document."""
    path = root / EXCERPT
    path.write_text(path.read_text(encoding="utf-8").replace("6.4 TB/s", "6.5 TB/s"), encoding="utf-8")
    _pin_excerpt(root)
    _bandwidth(root, "6.5", "assumed", REV2_65)


def test_a_document_not_utf8_is_still_compared_with_its_excerpt(hx1: Path) -> None:
    """One Latin-1 byte appended to ``notes/hx1-design.md`` (``caf\\xe9``) and the excerpt edited away from it:
    ``check`` said "all holds" (exit 0): a document that did not decode as UTF-8 was not compared. It is read with
    U+FFFD for such bytes, and the line says where the first is."""
    _excerpt_moved_to_6_5(hx1)
    with (hx1 / DOCUMENT).open("ab") as handle:
        handle.write(b"caf\xe9\n")
    done = _run(hx1, "check")
    assert done.returncode == 1, done.stdout[-2000:]
    assert (f"  {SOURCE}: source.excerpt: {EXCERPT} holds 1 line NOT FOUND in {DOCUMENT}, the document it copies "
            f"(source.path) ({DOCUMENT} is not UTF-8: its byte 0xe9 at offset 109, and any other such byte, read as "
            f"U+FFFD): '{REV2_65}': copy the lines from the document again (and pin the excerpt's sha256 anew), or "
            "restore the document") in _lines(done)


def test_a_document_past_1_mib_says_its_excerpt_is_not_compared(hx1: Path) -> None:
    """``notes/hx1-design.md`` padded past 1 MiB (1,170,106 bytes) and the excerpt edited away from it: ``check``
    said "all holds" with nothing of the comparison it skipped. It still passes (the document is past what
    passprice reads), and warns that the excerpt is not compared, naming both files and the size."""
    _excerpt_moved_to_6_5(hx1)
    with (hx1 / DOCUMENT).open("a", encoding="utf-8") as handle:
        handle.write("padding line\n" * 90_000)
    size = (hx1 / DOCUMENT).stat().st_size
    done = _run(hx1, "check")
    assert done.returncode == 0, done.stdout[-2000:]
    assert (f"  warning: {SOURCE}: source.excerpt: {EXCERPT} is not compared with {DOCUMENT}, the document it "
            f"copies (source.path): larger than 1,048,576 bytes, the most of a document passprice reads to compare "
            f"({size:,} bytes)") in done.stdout.splitlines()


# --- 5. a rate typeset with blanks around its slash read no figure ---------------------------------------------------


@pytest.mark.parametrize("span", ["GPU Memory Bandwidth 4.8 TB / s", "GPU Memory Bandwidth 4.8 TB /s",
                                  "GPU Memory Bandwidth 4.8 TB/ S", "GPU Memory Bandwidth 4.8 TB / second"])
def test_a_spaced_slash_is_read_as_a_rate(span: str) -> None:
    """5.2 TB/s under ``'GPU Memory Bandwidth 4.8 TB / s'``: the review asked nothing of the added fact
    (:func:`passprice.addedfacts.quotes_another` gave ``None``) and the quote rule found no other figure
    (``quote_holds_another`` gave ``[]``), where ``4.8 TB/s`` is asked. Read as ``4.8 TB/s``."""
    from passprice.addedfacts import quote_holds_another, quotes_another
    from passprice.facts import Fact, Provenance

    assert quote_holds_another(5.2, "TB/s", [span]) == ["4.8 TB/s"]
    assert quote_holds_another(4.8, "TB/s", [span]) == []
    fact = Fact(value=5.2e12, amount=5.2, unit="TB/s", provenance=Provenance.PUBLISHED,
                source="nvidia-h200-datasheet", locator=f"H200 SXM column: '{span}'")
    assert quotes_another(fact) == (f"its locator quotes 4.8 TB/s, not 5.2 TB/s: does nvidia-h200-datasheet: H200 "
                                    f"SXM column: '{span}' state 5.2 TB/s?")


def test_a_document_that_is_no_text_says_its_excerpt_is_not_compared(hx1: Path) -> None:
    """A registry document that is no text (a PDF's bytes: NUL bytes) whose excerpt is the text read from it: not
    compared (its lines are no copy of the bytes), and ``check`` warns so; it said nothing."""
    (hx1 / DOCUMENT).write_bytes(b"%PDF-1.7\n\x00\x01\xff\xfe binary stream\n")
    done = _run(hx1, "check")
    assert (f"  warning: {SOURCE}: source.excerpt: {EXCERPT} is not compared with {DOCUMENT}, the document it "
            "copies (source.path): not UTF-8 text (its byte 0xff at offset 11)") in done.stdout.splitlines()
    assert "NOT FOUND in notes/hx1-design.md" not in done.stdout
