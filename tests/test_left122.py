"""Loose ends of the audit, review and reproduce uses (issue 13), each failing input built here.

1. ``audit --source ID`` listed the facts citing a source but checked none of their quotes, where ``audit LOCK`` and
   ``audit SERVING`` say "N of M facts' quotes checked against a stored text (K NOT FOUND)" (tests/test_left119.py):
   it now gives each citing fact's check of the spans its locators citing that source quote, text, markdown and
   ``--json`` (test_1_*).
2. The quote check looked for a span anywhere in the source's section of the stored excerpt, where
   tests/test_cite72.py looks for it on the page its locator names (``p. 19: '…'``): one reading now
   (:func:`passprice.sources.paged_spans`, :meth:`passprice.sources.StoredText.holds`), which both use; every
   shipped quote naming a page is on it (test_2_*).
3. A review's side carrying its own code was priced in this process whatever its ``_data`` (the registry a built
   package embeds) held, and ``diff`` warned "schema/… differs from this passprice's copy" of a side whose own code
   validates against that ``schema/`` (test_3_*).
4. ``fact set``, ``fact recompute`` and ``check`` printed the copied-measurement warnings (tests/test_walk117.py) on
   stderr alone: their ``--json`` now lists them, each with a stable ``code`` (test_4_*).
5. ``reproduce`` in a fresh registry that is no git work tree said its pinned checkpoint "is gone from this
   registry", an entry it may never have had (test_5_*).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_card, copy_root, invoke, repin_excerpt
from passprice.registry import Root
from passprice.sources import StoredText, load_source, paged_spans, stored_text

AMPERE = "nvidia-ampere-whitepaper"
EXCERPT = "sources/excerpts/cite72-excerpt.txt"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=root, check=True, capture_output=True)


# --- 1. audit --source checks each citing fact's quotes ------------------------------------------------------------


def test_1_audit_source_checks_the_quotes_of_each_fact_citing_it() -> None:
    result = invoke("audit", "--source", AMPERE)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index("quotes checked against a stored text: 14 of 14 facts' quotes checked against a stored text")
    # 7 spans, each quoted by the fact's locator and by its derivation inputs': counted once (35 of 35 before
    # tests/test_left131.py)
    assert lines[at + 1] == ("  a100_pcie_80gb:on_chip.capacity: checked (7 of 7 quoted spans found in the stored "
                             "text)")
    assert len([x for x in lines[at + 1:] if x.startswith("  a100_") and ": checked (" in x]) == 14
    # 44 distinct spans of the 14 facts (114 before tests/test_left131.py, as tests/test_cite72.py counts the quotes
    # of the locators citing the whitepaper: a span a fact and its derivation input both quote was counted twice)
    data = json.loads(invoke("audit", "--source", AMPERE, "--json").stdout)
    assert data["quotes_checked"] == {"checked": 14, "not_found": 0, "facts": 14}
    assert sum(f["quote_check"]["spans"] for f in data["facts"]) == 44
    assert data["facts"][0]["quote_check"] == {"state": "checked", "spans": 7, "found": 7, "missing": [],
                                               "unstored": [], "past": 0,
                                               "why": "7 of 7 quoted spans found in the stored text"}
    markdown = invoke("audit", "--source", AMPERE, "--format", "markdown").stdout
    assert ("Quotes checked against a stored text: 14 of 14 facts' quotes checked against a stored text\n"
            "- `a100_pcie_80gb:on_chip.capacity`: checked (7 of 7 quoted spans found in the stored text)") in markdown


def test_1_a_source_with_no_stored_text_is_not_checked() -> None:
    result = invoke("audit", "--source", "nvidia-h200-datasheet")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index("quotes checked against a stored text: 0 of 1 facts' quotes checked against a stored text")
    assert lines[at + 1] == ("  h200_sxm_141gb:array: not checked (0 of 1 quoted span found in the stored text; "
                             "nvidia-h200-datasheet has no stored text)")


def test_1_a_fact_citing_the_source_by_a_figure_is_checked_on_that_figure_alone() -> None:
    # ws1_hypothetical's stream shares cite the Azure guide through two figures of their derivations; their own
    # locators cite another document, whose spans are not this source's to check
    data = json.loads(invoke("audit", "--source", "azure-ai-benchmarking-guide", "--json").stdout)
    checks = {(f["record"], f["path"]): f["quote_check"] for f in data["facts"]}
    assert data["quotes_checked"] == {"checked": 21, "not_found": 0, "facts": 25}
    assert checks[("ws1_hypothetical", "streams.rewrite")]["state"] == "checked"
    assert checks[("sn40l", "streams.append")] == {"state": "not checked", "spans": 0, "found": 0, "missing": [],
                                                    "unstored": [], "past": 0,
                                                    "why": "its locator quotes nothing"}


# --- 2. a quote after a page is looked for on that page ------------------------------------------------------------


def test_2_paged_spans_reads_the_page_named_before_each_quote() -> None:
    assert paged_spans("p. 19: 'a b', Table 4 row 'c'; p. 36: 'd'") == [(19, "a b"), (19, "c"), (36, "d")]
    assert paged_spans("'x' (the heading), then p. 5: 'y'") == [(None, "x"), (5, "y")]
    assert paged_spans("pp. 36-37, 'z'") == [(None, "z")]  # a page range names no one page
    assert paged_spans("p. 1234567: 'q'") == [(None, "q")]  # seven digits: no page (int() never reads 10,000)
    assert paged_spans("Table 3 (no quote)") == []
    hostile = "p. 1 'a' " * 2_000  # 18,000 characters: the first 10,000 read, linear
    assert paged_spans(hostile) == [(1, "a")] * 1_111


def test_2_the_stored_text_numbers_its_pages() -> None:
    root = Root(REPO)
    stored = stored_text(root, load_source(root, AMPERE))
    assert stored.pages[1] == "V1.0 NVIDIA A100 Tensor Core GPU Architecture"
    line = "● 7 GPCs, 7 or 8 TPCs/GPC, 2 SMs/TPC, up to 16 SMs/GPC, 108 SMs"
    assert stored.holds(line) and stored.holds(line, 19) and not stored.holds(line, 20)
    assert not StoredText("x", None, text="1\ta", flat="a").holds("a", 1)  # no page numbered: not on it
    # a quote broken over two lines of one page is found on it
    assert stored.holds("includes the following units:", 19)


def test_2_a_quote_moved_to_another_page_is_not_found(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    excerpt = root / EXCERPT
    text = excerpt.read_text(encoding="utf-8")
    line = "19\t● 7 GPCs, 7 or 8 TPCs/GPC, 2 SMs/TPC, up to 16 SMs/GPC, 108 SMs\n"
    assert text.count(line) == 1
    excerpt.write_text(text.replace(line, "20" + line[2:]), encoding="utf-8")
    repin_excerpt(root, EXCERPT)  # pinned anew, as the record must (tests/test_walk128.py)
    # the section still holds the line: the check before this one found it there
    data = json.loads(invoke("audit", "--source", AMPERE, "--json", root=root).stdout)
    bad = {f"{f['record']}:{f['path']}": f["quote_check"] for f in data["facts"]
           if f["quote_check"]["state"] == "NOT FOUND"}
    assert data["quotes_checked"]["not_found"] == len(bad) > 0
    for check in bad.values():
        assert "7 GPCs, 7 or 8 TPCs/GPC, 2 SMs/TPC, up to 16 SMs/GPC, 108 SMs" in check["missing"][0]
        assert "(on p. 19)" in check["why"]
    shown = invoke("audit", "--source", AMPERE, root=root).stdout
    assert f"({len(bad)} NOT FOUND)" in shown


def test_2_the_shipped_locks_quotes_are_still_found() -> None:
    data = json.loads(invoke("audit", "qwen3-30b-a3b-h200", "--json").stdout)
    # routing.hot_experts' quotes (the table's title, the row's label) are found but state none of its figures:
    # counted apart since tests/test_fixw56.py
    assert data["quotes_checked"] == {"checked": 7, "not_found": 0, "facts": 10, "figure_not_quoted": 1}


# --- 3. a side's own code and data ---------------------------------------------------------------------------------

#: What a side copied from the running package leaves out (as tests/test_attack118.py copies one).
CHECKOUT_ONLY = shutil.ignore_patterns("__pycache__", "*.json", "_data")


def _repo(tmp_path: Path) -> Path:
    from passprice import pins

    root = copy_root(tmp_path / "repo")
    shutil.copytree(REPO / "schema", root / "schema")
    shutil.copytree(pins.PACKAGE, root / "src" / "passprice", ignore=CHECKOUT_ONLY)
    return root


def test_3_a_side_whose_embedded_registry_differs_is_priced_by_its_own_code(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import sidecode

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _repo(tmp_path)
    package = root / "src" / "passprice"
    assert sidecode.data_changes(package) == ()  # a checkout carries no _data: its registry is itself
    assert sidecode.code_of(package).running
    for sub in sidecode.DATA_FOLDERS:  # a built copy's embedded registry, the running package's
        shutil.copytree(sidecode.running_data() / sub, package / "_data" / sub)
    assert sidecode.data_changes(package) == ()
    assert sidecode.code_of(package).running
    entry = package / "_data" / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml"
    entry.write_bytes(entry.read_bytes() + b"\n# edited\n")
    (package / "_data" / "facts" / "cards" / "extra.toml").write_text("[card]\n", encoding="utf-8")
    assert sidecode.data_changes(package) == ("src/passprice/_data/facts/cards/extra.toml",
                                              "src/passprice/_data/registry/checkpoints/qwen3-30b-a3b-q4_k_m.toml")
    code = sidecode.code_of(package)
    assert not code.running  # priced in its own process, which reads its own _data
    assert code.describe("HEAD").endswith("in its own process")
    # a folder of it linked elsewhere (to / it would be walked whole) is not read, and counts as changed
    shutil.rmtree(package / "_data" / "locks")
    (package / "_data" / "locks").symlink_to("/")
    assert sidecode.data_changes(package) == (
        "src/passprice/_data/locks (a symbolic link: not read, counted as changed)",)


def test_3_the_review_does_not_warn_of_a_schema_copy_the_sides_own_code_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.registry import schema_copy_drift

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _repo(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    path = root / "schema" / "card.schema.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["properties"]["card"]["properties"]["note"]["maxLength"] = 100_000
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    _git(root, "commit", "-qam", "a longer card note")
    # check by this passprice warns: it validates against its own copy, not this one
    assert schema_copy_drift(Root(root))[0].startswith("schema/card.schema.json: differs from this passprice's copy")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 0, result.output
    # HEAD's own code validates against schema/ and prices it in its own process: the warning was wrong of it (the
    # line read "no lock affected; 1 warning of check on HEAD; 10 locks unaffected")
    assert "differs from this passprice's copy" not in result.output
    assert result.stdout.splitlines()[1] == ("no fact changed; 1 other file changed; no lock affected; 10 locks "
                                             "unaffected")


# --- 4. the copied-measurement warnings in --json ------------------------------------------------------------------


def test_4_fact_set_recompute_and_check_list_their_warnings_with_a_code(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    copy_card(root / "facts" / "cards" / "mi300x.toml", root / "facts" / "cards" / "mi325x.toml")
    done = invoke("fact", "set", "mi325x", "memory.bandwidth", "--value", "6", "--unit", "TB/s", "--provenance",
                  "published", "--source", "amd-rocm-gpu-specs", "--locator", "MI325X: 6 TB/s", "--json", root=root)
    assert done.exit_code == 0, done.output
    warned = json.loads(done.stdout)["warnings"]
    assert [w["code"] for w in warned] == ["stale"] * 3 + ["recompute"] + ["measured_elsewhere"] * 4 + ["caution"]
    # each the line stderr prints, in its order
    assert [f"passprice: warning: {w['text']}" for w in warned] == done.stderr.splitlines()
    assert warned[6]["text"].startswith("facts/cards/mi325x.toml: streams.read is measured but cites the same place "
                                        "as another card's measured fact (facts/cards/mi300x.toml: streams.read ")
    recomputed = invoke("fact", "recompute", "mi325x", "--json", root=root)
    assert recomputed.exit_code == 0, recomputed.output
    again = json.loads(recomputed.stdout)["warnings"]
    assert [w["code"] for w in again] == ["measured_elsewhere"] * 4
    assert [w["text"].split(": ")[1].split(" is measured")[0] for w in again] == [
        "host.stream", "streams.append", "streams.read", "streams.rewrite"]
    nothing = json.loads(invoke("fact", "recompute", "mi325x", "--json", root=root).stdout)
    assert nothing["recomputed"] == [] and nothing["warnings"] == []
    checked = invoke("check", "--json", root=root)
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    coded = report["coded_warnings"]
    assert [w["text"] for w in coded] == report["warnings"]
    measured = [w["text"] for w in coded if w["code"] == "measured_elsewhere"]
    assert len(measured) == 8  # both cards' four: which is the copy no file says
    assert {w["code"] for w in coded} == {"measured_elsewhere", "other"}


# --- 5. reproduce where git cannot tell --------------------------------------------------------------------------


def test_5_reproduce_in_a_registry_with_no_git_history_says_what_is_known(tmp_path: Path) -> None:
    from passprice.reproduce import not_here_words

    root = tmp_path / "mine"
    assert invoke("init", str(root)).exit_code == 0
    shutil.copy(REPO / "locks" / "qwen3-30b-a3b-h200.lock.toml", root / "locks")
    result = invoke("reproduce", "qwen3-30b-a3b-h200", root=root)
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[1].startswith(
        "  cannot be reproduced here: the pinned checkpoint qwen3-30b-a3b-q4_k_m is not in this registry (no git "
        "history here says whether it ever was); passprice's own registry holds it: cp ")
    assert "gone" not in result.stdout
    assert not_here_words(True) == "is not in this registry"
    assert not_here_words(False) == "is gone from this registry"
    # with git, as before: "not in" where it never was (tests/test_walk117.py test_3 has the "gone" half)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    known = invoke("reproduce", "qwen3-30b-a3b-h200", root=root)
    assert known.stdout.splitlines()[1].startswith(
        "  cannot be reproduced here: the pinned checkpoint qwen3-30b-a3b-q4_k_m is not in this registry; "
        "passprice's own ")
