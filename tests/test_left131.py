"""The review and audit leftovers of issue 13 (the last closing note's list), each reproduced here.

a. On an excerpt numbering the copy's lines, not the document's pages, a locator naming ``p. 30`` read NOT FOUND for
   a quote the excerpt holds: an excerpt now says which of its sections number pages (a header line ``# Numbers are
   pages`` or ``# Numbers are pages: ID …``), and a page a locator names is applied to those alone.
b. A change moving a fact's value that also edits the stored excerpt its quote is checked against, and re-pins it,
   read "checked" against text the same change wrote: the review says so, and asks it.
c. A record naming an excerpt it does not pin (no ``excerpt_sha256``) got no word from ``check`` or the review.
d. An edit in one ``== ID … ==`` section of an excerpt several records name listed every one of them as changed.
e. A span quoted by a fact's locator and by its derivation input's was counted twice ("2 of 2 quoted spans").
f. The lock audit's excerpts at the lock's commit repeated the git calls of the sources' comparison.
g. ``.gitattributes`` ``export-ignore``/``export-subst`` changes went unnamed by the review, and ``check`` on a work
   tree passed a rewrite rule on an excerpt that the review refuses.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke, repin_excerpt

CARD = "facts/cards/h200_sxm_141gb.toml"
EXCERPT = "sources/excerpts/cite102-excerpt.txt"
QUOTE = "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry, its first commit the checkout's registry."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _edit(root: Path, rel: str, old: str, new: str, count: int = 1) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, (rel, old)
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _checks(root: Path, source: str) -> dict[str, dict[str, object]]:
    data = json.loads(invoke("audit", "--source", source, "--json", root=root).stdout)
    return {f"{f['record']}:{f['path']}": f["quote_check"] for f in data["facts"]}


# --- (a) a page named on an excerpt numbering lines ------------------------------------------------------------------


def test_a_a_page_named_on_an_excerpt_numbering_lines_is_no_line(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    # the H200 product page's excerpt numbers the copy's lines (its row is on lines 31-33): a locator naming p. 30
    _edit(root, CARD, QUOTE, f"p. 30: {QUOTE}")
    check = _checks(root, "nvidia-h200-product-page")["h200_sxm_141gb:memory.bandwidth"]
    # was: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: '…' (on p. 30))
    assert (check["state"], check["why"]) == ("checked", "1 of 1 quoted span found in the stored text")
    lines = invoke("audit", "r1-qwen7b-h200", root=root).stdout.splitlines()
    assert "  memory.bandwidth: checked (1 of 1 quoted span found in the stored text)" in lines


def test_a_a_page_named_on_a_paged_excerpt_is_still_that_page(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    # the Hopper whitepaper's section is declared paged: its quote of p. 18 named as p. 30 is not on p. 30
    card = root / "facts/cards/h100_sxm5_80gb.toml"
    text = card.read_text(encoding="utf-8")
    assert "p. 18: 'The H100 SXM5 GPU has 132 SMs'" in text
    card.write_text(text.replace("p. 18: 'The H100 SXM5 GPU has 132 SMs'", "p. 30: 'The H100 SXM5 GPU has 132 SMs'"),
                    encoding="utf-8")
    bad = {k: v for k, v in _checks(root, "nvidia-hopper-whitepaper").items() if v["state"] == "NOT FOUND"}
    assert sorted(bad) == ["h100_sxm5_80gb:on_chip.bandwidth", "h100_sxm5_80gb:on_chip.capacity"]
    assert all("'The H100 SXM5 GPU has 132 SMs' (on p. 30)" in str(v["why"]) for v in bad.values())


def test_a_the_excerpt_says_which_sections_number_pages() -> None:
    from passprice.registry import Root
    from passprice.sources import StoredText, load_sources, stored_text

    root = Root(REPO)
    paged = sorted(s.id for s in load_sources(root).values() if s.excerpt is not None and stored_text(root, s).paged)
    # the four copies whose numbers are a PDF's pages (each excerpt's header says PAGE); every other numbers lines
    assert paged == ["nvidia-a100-80gb-datasheet-zh", "nvidia-ampere-whitepaper", "nvidia-cuda-programming-guide",
                     "nvidia-hopper-whitepaper"]
    text = "# Numbers are pages: a\n== a x https://a ==\n5\tone\n== b y https://b ==\n5\ttwo\n"
    from passprice.sources import Source, stored_text_of

    def of(sid: str, data: str) -> StoredText:
        record = Source(id=sid, title="t", kind="web-page", read="a copy", excerpt="e.txt")
        return stored_text_of(record, data.encode(), "e.txt")

    assert of("a", text).paged and of("a", text).holds("one", 5) and not of("a", text).holds("one", 6)
    assert not of("b", text).paged and of("b", text).holds("two", 6)  # a line number, not a page: the whole text
    whole = "# Numbers are pages\n3\tthree\n"
    assert of("z", whole).paged and not of("z", whole).holds("three", 4)
    assert not of("z", "# numbers are pages, said in prose\n3\tthree\n").paged


# --- (e) a span quoted by a fact and by its derivation's input -----------------------------------------------------


def test_e_a_span_quoted_twice_is_counted_once(tmp_path: Path) -> None:
    checks = _checks(REPO, "azure-ai-benchmarking-guide")
    # the fact's locator and its dot input both quote the row '| Dot   | 4.48 |': one span (was "2 of 2")
    assert checks["h200_sxm_141gb:streams.read"] == {
        "state": "checked", "spans": 1, "found": 1, "missing": [], "unstored": [], "past": 0,
        "why": "1 of 1 quoted span found in the stored text"}
    # missing from the stored text, it is one span not found, named once
    root = copy_root(tmp_path)
    _edit(root, CARD, "'| Dot   | 4.48              |'", "'| Dot   | 4.49              |'", count=2)
    check = _checks(root, "azure-ai-benchmarking-guide")["h200_sxm_141gb:streams.read"]
    assert (check["state"], check["spans"], check["missing"]) == ("NOT FOUND", 1, ["| Dot   | 4.49              |"])
    assert str(check["why"]).startswith("0 of 1 quoted span found in the stored text; not in it: ")


# --- (c) a stored excerpt its record does not pin ---------------------------------------------------------------------


def _unpin(root: Path, record: str) -> None:
    path = root / "sources" / f"{record}.toml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("excerpt_sha256 = ")]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept), encoding="utf-8")


def test_c_check_warns_of_an_unpinned_excerpt_with_the_sha256_to_pin(repo: Path) -> None:
    import hashlib

    _unpin(repo, "nvidia-h200-product-page")
    digest = hashlib.sha256((repo / EXCERPT).read_bytes()).hexdigest()
    result = invoke("check", root=repo)
    assert result.exit_code == 0, result.output  # a pin is optional: a warning, never a failure
    said = (f"sources/nvidia-h200-product-page.toml: source.excerpt: {EXCERPT} is not pinned (the record has no "
            "excerpt_sha256): an edit of it would change what audit checks the quotes against and no check would see "
            f"it; pin it: excerpt_sha256 = \"{digest}\"")
    # was: nothing said
    assert f"  warning: {said}" in result.stdout.splitlines(), result.stdout
    coded = json.loads(invoke("check", "--json", root=repo).stdout)["coded_warnings"]
    assert {"code": "unpinned_excerpt", "text": said} in coded


def test_c_the_review_names_an_excerpt_the_change_leaves_unpinned(repo: Path) -> None:
    # the pin removed
    _unpin(repo, "nvidia-h200-product-page")
    _git(repo, "commit", "-qam", "unpin")
    changed = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["sources_changed"]
    # was: sources_changed [] (the record's pin is no document field)
    assert [(s["id"], s["changed"]) for s in changed] == [("nvidia-h200-product-page", [
        f"{EXCERPT}'s pin removed (excerpt_sha256: d00ac0058c14… → (none)); not pinned: the record has no "
        "excerpt_sha256, so a later edit of the excerpt changes what audit checks its quotes against unseen by check "
        "and by a review: pin it (the warning passprice check gives names the sha256)"])]
    # a record re-pointed to a new excerpt it does not pin
    (repo / "sources/excerpts/new.txt").write_bytes((repo / EXCERPT).read_bytes())
    _edit(repo, "sources/nvidia-h200-product-page.toml", f'excerpt = "{EXCERPT}"',
          'excerpt = "sources/excerpts/new.txt"')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "re-point, unpinned")
    text = invoke("diff", "HEAD~1", "HEAD", root=repo).stdout
    assert (f"the document source nvidia-h200-product-page names changed (excerpt: {EXCERPT} → sources/excerpts/new.txt"
            " (its stored excerpt: the lines quoted from the text read, which its citing facts' quotes are checked "
            "against); not pinned: the record has no excerpt_sha256") in text


# --- (d) an edit in one section of a shared excerpt -------------------------------------------------------------------


def test_d_an_edit_in_one_section_lists_only_its_source(repo: Path) -> None:
    excerpt = "sources/excerpts/cite71-excerpt.txt"
    named = sorted(p.stem for p in (repo / "sources").glob("*.toml")
                   if f'excerpt = "{excerpt}"' in p.read_text(encoding="utf-8"))
    assert named == ["nvidia-hopper-whitepaper", "sambanova-sn40l-hot-chips-2024"]
    line = "18\t    ●   128 FP32 CUDA Cores per SM, 16896 FP32 CUDA Cores per GPU"
    _edit(repo, excerpt, line, "19" + line[2:])  # the Hopper whitepaper's section alone
    repin_excerpt(repo, excerpt)
    _git(repo, "commit", "-qam", "a line of the whitepaper's section to another page")
    changed = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["sources_changed"]
    # was: both records listed, the SN40L's "rewritten" with no quote of it lost
    assert [s["id"] for s in changed] == ["nvidia-hopper-whitepaper"]
    # an edit of the SN40L slides' section lists the slides alone
    _edit(repo, excerpt, "Cerulean SN40L RDU", "Cerulean  SN40L RDU")
    repin_excerpt(repo, excerpt)
    _git(repo, "commit", "-qam", "a blank in the slides' section")
    changed = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["sources_changed"]
    assert [s["id"] for s in changed] == ["sambanova-sn40l-hot-chips-2024"]
    # an edit of the header (the '#' lines before the first section) is no section's: neither is listed
    _edit(repo, excerpt, "# The slides are the text", "# The slides are the very text")
    repin_excerpt(repo, excerpt)
    _git(repo, "commit", "-qam", "the header's words")
    assert json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["sources_changed"] == []


# --- (b) a quote checked against an excerpt the same change edited ----------------------------------------------------


def test_b_a_quote_found_in_an_excerpt_the_change_edited_is_asked(repo: Path) -> None:
    # the value moved, the locator quotes the new figure, the excerpt edited to print it, and re-pinned: check holds
    _edit(repo, CARD, "value = 141\n", "value = 144\n")
    _edit(repo, CARD, "'GPU Memory 141GB 141GB'", "'GPU Memory 144GB 141GB'")
    _edit(repo, EXCERPT, "30\t141GB", "30\t144GB")
    repin_excerpt(repo, EXCERPT)
    assert invoke("check", root=repo).exit_code == 0
    _git(repo, "commit", "-qam", "bandwidth 4.9, its excerpt edited to say so")
    data = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    (fact,) = [c for f in data["files"] for c in f["facts"] if c["path"] == "memory.capacity"]
    # was: quote_check "checked", nothing in to_verify about where the words came from
    assert fact["quote_check"]["state"] == "checked"
    assert fact["quote_excerpts_edited"] == ["nvidia-h200-product-page"]
    said = ("its quotes were checked against an excerpt this change edited (checked: 1 of 1 quoted span found in the "
            "stored text; the stored excerpt of nvidia-h200-product-page): the check shows only that the change wrote "
            "both; read the quoted words in the document itself")
    assert said in fact["to_verify"]
    text = invoke("diff", "HEAD~1", "HEAD", root=repo).stdout
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout
    assert said in text and said in markdown
    # a fact whose quotes this change did not edit the excerpt of is said as before
    assert all(c["quote_excerpts_edited"] == [] for f in data["files"] for c in f["facts"]
               if c["path"] != "memory.capacity")


# --- (f) the lock audit's git calls ----------------------------------------------------------------------------------


def test_f_an_old_locks_sources_and_excerpts_are_read_with_one_lookup(repo: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import passprice.gitread

    excerpt = "sources/excerpts/cite70-excerpt.txt"
    _edit(repo, excerpt, "## The real result — Qwen3", "## The real result - Qwen3")  # today's: a hyphen
    repin_excerpt(repo, excerpt)
    _git(repo, "commit", "-qam", "the heading's dash")
    calls: list[list[str]] = []
    real = passprice.gitread.run_git

    def counted(top: Path, args: list[str], *rest: object, **kw: object) -> bytes:
        calls.append(list(args))
        return real(top, args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(passprice.gitread, "run_git", counted)
    data = json.loads(invoke("audit", str(repo / "locks" / "qwen3-30b-a3b-h200.lock.toml"), "--json",
                             root=repo).stdout)
    assert data["excerpts_at_lock"]["replaced"] == ["gpu-container-handbook-routing-derisk"]  # as committed with it
    # rev-parse, ls-files (status until tests/test_left54b.py: it did not see a lock git's index marks
    # assume-unchanged), log once, then one cat-file --batch-check and one --batch for records and excerpts
    # together (was 10: the excerpts' own rev-parse, status, log and two cat-file)
    assert [c[0] for c in calls] == ["rev-parse", "ls-files", "log", "cat-file", "cat-file"]


# --- (g) a rewrite rule on a stored excerpt, in a work tree ---------------------------------------------------------


def test_g_check_refuses_a_rewrite_rule_on_a_stored_excerpt(repo: Path) -> None:
    (repo / ".gitattributes").write_text(f"{EXCERPT} working-tree-encoding=UTF-16\n", encoding="utf-8")
    result = invoke("check", root=repo)
    # was: exit 0, "all holds" (the rule's file looked at for the records alone), where the review refuses it
    assert result.exit_code == 2, result.output
    assert (f"passprice: error: {EXCERPT}: git rewrites it in a checkout (working-tree-encoding=UTF-16, a rule of "
            ".gitattributes), so what a review reads from git is not what check and price read in a checkout; remove "
            "the rule for passprice's files") in result.stderr.splitlines(), result.stderr
    # a rule that rewrites nothing passprice reads (an excerpt no record names) is no problem
    (repo / ".gitattributes").write_text("sources/excerpts/none.txt working-tree-encoding=UTF-16\n", encoding="utf-8")
    assert invoke("check", root=repo).exit_code == 0


def test_g_the_review_names_an_export_rule_on_registry_files(repo: Path) -> None:
    (repo / ".gitattributes").write_text(f"{EXCERPT} export-ignore\nfacts/cards/h200_sxm_141gb.toml export-subst\n",
                                         encoding="utf-8")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "export rules")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # was: "no changes to facts, registry, locks or the pricing model; 10 locks unaffected"
    assert "2 export rules of .gitattributes on registry files changed" in lines[1]
    at = lines.index(next(x for x in lines if x.startswith("export rules changed: ")))
    head = _git(repo, "rev-parse", "HEAD")[:12]
    assert lines[at + 1: at + 3] == [
        f"  facts/cards/h200_sxm_141gb.toml: export-subst (a rule of .gitattributes at {head}; not at BASE)",
        f"  {EXCERPT}: export-ignore (a rule of .gitattributes at {head}; not at BASE)"]
    data = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    assert len(data["export_rules"]) == 2
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout
    assert "#### Export rules" in markdown
    # a change leaving the rules as they were names none
    _edit(repo, "sources/nvidia-h200-product-page.toml", "[source]", "[source]", count=1)
    _git(repo, "commit", "-qm", "nothing", "--allow-empty")
    assert json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["export_rules"] == []
