"""Every citation and note traceable by a user with the repository alone, offline (issue 13, the audit use; trace96).

1. Eleven notes named "the drafts" as a figure's origin, and no record or file a user had was "the drafts" (they lay
   outside the repository, ../shared/cardfacts/). They are kept, byte-equal, in docs/seed/cardfacts/, and each note
   names the card draft its figure comes from (test_1_*).
2. Source records' read and note, printed by ``audit`` and ``audit --source``, named work by session labels
   ("Checked (cite70) against", "not guessed (left31)", "cite83 cites it"): now the test file that checks it
   (test_2_*).
3. A source read only through a search tool's stored pages (gpu-container-handbook-routing-derisk) could not be
   followed offline, though the text read ships in sources/excerpts/cite70-excerpt.txt: a record names its stored
   excerpt (``excerpt``), there and holding every span its citing locators quote (test_3_*).
4. ``explain seed`` said serving.rs was "kept beside the project, not in this repository": a copy is in
   docs/seed/serving.rs.txt (test_4_*).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice.sources import QUOTED_SPAN

DRAFTS = REPO / "docs" / "seed" / "cardfacts"
# a quoted span, as tests/test_cite66.py reads one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with
# a session's label (cite70, left31, walk56 …) standing alone: not a file's name (tests/test_cite70.py,
# sources/excerpts/cite70-excerpt.txt)
_LABEL = re.compile(r"(?<![\w/.-])(?:cite|left|walk|attack|scale|slip|digest|trace|moe|newcomer|hostile)\d+[a-z]?"
                    r"(?![\w-])(?!\.py|\.txt)")


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(value, str):
        yield where, value


def _records() -> Iterator[tuple[Path, Any]]:
    for top in ("facts", "sources", "registry"):
        for path in sorted((REPO / top).rglob("*.toml")):
            yield path, tomllib.loads(path.read_text(encoding="utf-8"))


def _sources() -> dict[str, dict[str, Any]]:
    return {p.stem: tomllib.loads(p.read_text(encoding="utf-8"))["source"]
            for p in sorted((REPO / "sources").glob("*.toml"))}


def _norm(text: str) -> str:
    return " ".join(text.split())


def _cited(table: Any, source: str | None) -> Iterator[tuple[str, str]]:
    # (source, locator) of each table with a locator below ``table``; a derivation input without its own source
    # cites its fact's (as tests/test_cite66.py reads them)
    if isinstance(table, dict):
        own = table.get("source")
        source = own if isinstance(own, str) else source
        if isinstance(table.get("locator"), str) and source is not None:
            yield source, table["locator"]
        for v in table.values():
            yield from _cited(v, source)
    elif isinstance(table, list):
        for v in table:
            yield from _cited(v, source)


def _spans() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for top in ("facts", "registry"):
        for path in sorted((REPO / top).rglob("*.toml")):
            for source, locator in _cited(tomllib.loads(path.read_text(encoding="utf-8")), None):
                out.setdefault(source, set()).update(_norm(m.group(1)) for m in _QUOTED.finditer(locator))
    return out


def _excerpt_text(path: Path) -> str:
    # the text of an excerpt file: its '#' header left out, each line's '<number>\t' prefix too, runs of spaces and
    # line breaks read as one space (a span may run over a line break)
    lines = [re.sub(r"^\d+\t", "", line) for line in path.read_text(encoding="utf-8").splitlines()
             if not line.startswith("#")]
    return _norm(" ".join(lines))


# --- 1. "the drafts" ------------------------------------------------------------------------------------------------


def test_1_no_record_names_the_drafts_without_the_file() -> None:
    named: list[tuple[str, str]] = []
    for path, document in _records():
        for where, text in _strings(document, path.relative_to(REPO).as_posix()):
            assert "the drafts" not in text, where  # an origin no record or file of the repository is
            assert "../shared" not in text, where
            for m in re.finditer(r"card drafts? ", text):
                after = text[m.end():]
                assert "docs/seed/cardfacts/" in after[:60], (where, after[:80])  # the file, in the same clause
            named += [(where, f) for f in re.findall(r"docs/seed/cardfacts/([\w.-]+\.toml)", text)]
    assert len(named) == 10  # the H100, H200, B200 capacity notes; the Hopper whitepaper 4, Ampere, ROCm, MLPerf
    for where, file in named:
        assert (DRAFTS / file).is_file(), (where, file)


@pytest.mark.parametrize(("draft", "figure"), [
    ("h200_sxm_141gb.toml", "~143,771 MiB (~150.8e9 B)"),  # facts/cards/h200_sxm_141gb.toml memory.capacity
    ("h100_sxm5_80gb.toml", "nvidia-smi reports 81,559 MiB (85.5e9 B)"),  # …/h100_sxm5_80gb.toml
    ("mi300x.toml", "VGPR file 512 KiB/CU"),  # sources/amd-rocm-gpu-specs.toml read
    ("b200.toml", "closed/NVIDIA/systems/B200-SXM-180GBx1_TRT.json"),  # b200 note, the MLPerf v6.0 record's
    ("b200.toml", "1,440 GB per 8 GPUs"),
    ("h100_sxm5_80gb.toml", "16,896 FP32 cores, 50 MB L2"),  # the Hopper whitepaper's Table 3 figures
    ("a100_sxm_80gb.toml", "Table 1 (peak Tensor TOPS incl. INT4) and Table 3 (108 SMs"),  # the Ampere's
])
def test_1_each_draft_holds_the_figure_its_note_names(draft: str, figure: str) -> None:
    assert figure in (DRAFTS / draft).read_text(encoding="utf-8")


def test_1_the_card_review_says_where_the_drafts_are() -> None:
    text = (REPO / "facts" / "cards" / "README.md").read_text(encoding="utf-8")
    assert "`docs/seed/cardfacts/`" in _norm(text)
    assert sorted(p.name for p in DRAFTS.iterdir()) == [
        "README.md", "a100_sxm_80gb.toml", "b200.toml", "h100_sxm5_80gb.toml", "h200_sxm_141gb.toml", "mi300x.toml",
        "sn40l.toml"]


# --- 2. session labels ----------------------------------------------------------------------------------------------


def test_2_no_source_record_names_a_session_label() -> None:
    files = set()
    for sid, record in _sources().items():
        for key in ("read", "note"):
            text = record.get(key) or ""
            assert not _LABEL.findall(text), (sid, key, _LABEL.findall(text))
            files.update(re.findall(r"\btests/[\w/.-]+?\.(?:py|txt)\b", text))
    assert files  # each test file and excerpt named is there
    assert [f for f in sorted(files) if not (REPO / f).is_file()] == []


def test_2_no_card_note_names_a_session_label() -> None:
    # a fact's note (and a figure's), printed by audit under each fact; locators are left as they are (a quote's
    # surroundings: rtx_a6000's "before cite73" is in one). h100_pcie_80gb's 6 notes, another helper's file when this
    # test was written (cite90), were given the same wording at the merge.
    left: dict[str, int] = {}
    for path in sorted((REPO / "facts").rglob("*.toml")):
        for where, text in _strings(tomllib.loads(path.read_text(encoding="utf-8")), path.stem):
            if where.endswith(".note") and _LABEL.findall(text):
                left[path.stem] = left.get(path.stem, 0) + 1
    assert left == {}


def test_2_the_audit_of_a_source_reads_the_test_file() -> None:
    result = invoke("audit", "--source", "gpu-container-handbook-routing-derisk")
    assert result.exit_code == 0, result.output
    assert ("against the page's Markdown source" in result.output
            and "Checked (tests/test_cite70.py) against the page's Markdown source" in result.output)
    assert "Retrieved: unknown, not guessed (tests/test_leftovers_31.py): the page" in result.output
    assert not _LABEL.findall(result.output)


# --- 3. stored excerpts ---------------------------------------------------------------------------------------------


def test_3_each_excerpt_is_there_and_holds_every_span_quoted() -> None:
    spans = _spans()
    filled = {sid: r["excerpt"] for sid, r in _sources().items() if "excerpt" in r}
    # 19, and cite90's two records (sources/excerpts/cite90-excerpt.txt) at the merge; 22 with the H200 product page's
    # (sources/excerpts/cite102-excerpt.txt, tests/test_cite102.py); 23 with the SN40L Hot Chips deck's
    # (sources/excerpts/cite71-excerpt.txt, tests/test_walk117.py)
    assert len(filled) == 23
    for sid, f in filled.items():
        assert (REPO / f).is_file(), (sid, f)
        assert sid in (REPO / f).read_text(encoding="utf-8"), (sid, f)  # its section, or its name
        text = _excerpt_text(REPO / f)
        # a copy whose text runs words together (the SN40L deck's '638 TFLOPS(bf16)', its lines cut mid-word) holds
        # a span when it does with every space left out, as tests/test_cite71.py reads it
        bare = "".join(text.split())
        missing = [s for s in sorted(spans.get(sid, ())) if s not in text and "".join(s.split()) not in bare]
        assert missing == [], (sid, missing)


def test_3_every_record_with_a_stored_excerpt_names_it() -> None:
    # a record whose citing spans are all in an excerpt file with its section ('== ID …') names a file
    spans = _spans()
    records = _sources()
    texts = {p: (p.read_text(encoding="utf-8"), _excerpt_text(p))
             for p in [*(REPO / "sources" / "excerpts").glob("*.txt"), *(REPO / "tests" / "data").glob("*excerpt.txt")]}
    unnamed = []
    for sid, record in records.items():
        if "excerpt" in record or not spans.get(sid):
            continue
        for path, (raw, text) in texts.items():
            if f"== {sid} " in raw and all(s in text for s in spans[sid]):
                unnamed.append((sid, path.name))
    assert unnamed == []
    # named nowhere, and why: the excerpt holds part of what is quoted (the H100 product page holds the SXM column)
    partial = {sid: (sum(s in texts[REPO / "sources" / "excerpts" / f][1] for s in spans[sid]), len(spans[sid]))
               for sid, f in (("nvidia-h100-datasheet", "cite70-excerpt.txt"),
                              ("nvidia-h200-datasheet", "cite71-excerpt.txt"))}
    # (the H100 datasheet's: 4 of 10 distinct before cite90 moved its SXM-column quotes to the product page's record;
    # 0 of its 2 left, the H100 PCIe column's, on no NVIDIA text found. The H200 datasheet's: 4 of 8 before cite102
    # moved the 7 its product page prints to the page's record; 0 of the 1 left, the INT8 row's TOPS, which the page
    # prints TFLOPS: tests/test_cite102.py)
    # (the SN40L deck's record names cite71-excerpt.txt since tests/test_walk117.py: all 9 of its quotes are there,
    # 5 as quoted and 4 with the spaces the copy's run-together text lacks)
    assert partial == {"nvidia-h100-datasheet": (0, 2), "nvidia-h200-datasheet": (0, 1)}


def test_3_sources_and_audit_show_the_excerpt() -> None:
    result = invoke("audit", "--source", "gpu-container-handbook-routing-derisk")
    assert ("  stored excerpt: sources/excerpts/cite70-excerpt.txt (the lines quoted from the text read, "
            "from the registry's top folder)"
            in result.output.splitlines())
    result = invoke("audit", "--source", "nvidia-cuda-programming-guide", "--json")
    assert json.loads(result.output)["source"]["excerpt"] == "sources/excerpts/cite70-excerpt.txt"
    result = invoke("sources", "--json")
    listed = {s["id"]: s["excerpt"] for s in json.loads(result.output)["sources"]}
    assert listed["gpu-container-handbook-routing-derisk"] == "sources/excerpts/cite70-excerpt.txt"
    assert listed["passprice-card-review"] is None
    result = invoke("sources")
    assert ("  23 of 47 name a stored excerpt, the lines quoted from the text read (`passprice audit --source ID` "
            "shows its file)"
            in result.output.splitlines())
    result = invoke("audit", "--source", "passprice-card-review")
    assert "stored excerpt" not in result.output


# --- 4. the seed ----------------------------------------------------------------------------------------------------


def test_4_the_seed_is_in_the_repository() -> None:
    seed = REPO / "docs" / "seed" / "serving.rs.txt"
    data = seed.read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (
        44119, "96f9f66617f0584ba3fd20f366ff809865f3e8b1d846b37fa57af011102b29e8")
    assert hashlib.sha256(data).hexdigest() in (REPO / "docs" / "seed" / "README.md").read_text(encoding="utf-8")
    assert b"pub struct PassShape" in data or b"PassShape" in data
    result = invoke("explain", "seed")
    assert result.exit_code == 0
    assert "`docs/seed/serving.rs.txt`" in result.output and "not in this repository" not in result.output
    shared = REPO.parent.parent / "shared" / "seeds" / "serving.rs.txt"  # the original, where a checkout has it
    if shared.is_file():
        assert shared.read_bytes() == data


@pytest.mark.parametrize(("value", "says"), [
    ('["sources/excerpts/cite70-excerpt.txt"]', "source.excerpt"),  # one path, not a list
    ('"../outside.txt"', "source.excerpt"),  # no '..' part: a path from the registry's top folder
    ('"tests/../x.txt"', "source.excerpt"),
    ('"/etc/passwd"', "source.excerpt"),
    ('""', "source.excerpt"),
])
def test_3_a_bad_excerpt_value_is_one_error_line(tmp_path: Path, value: str, says: str) -> None:
    root = copy_root(tmp_path)
    record = root / "sources" / "gpu-container-handbook-routing-derisk.toml"
    text = record.read_text(encoding="utf-8")
    old = 'excerpt = "sources/excerpts/cite70-excerpt.txt"'
    assert text.count(old) == 1
    record.write_text(text.replace(old, f"excerpt = {value}"), encoding="utf-8")
    before = record.read_bytes()
    lines = bad("audit", "--source", "gpu-container-handbook-routing-derisk", root=root,
                says="gpu-container-handbook-routing-derisk.toml")
    assert len(lines) == 1 and says in lines[0], lines
    assert record.read_bytes() == before
