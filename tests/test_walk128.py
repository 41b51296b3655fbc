"""A new user's findings (README only, ``pip install .``) on the review and audit uses, each reproduced here.

1. An edited stored excerpt (``sources/excerpts/*.txt``) changed what ``audit`` said while ``diff`` said "no changes
   …" (exit 0) and ``check`` passed. A source record now pins its excerpt's bytes (``excerpt_sha256``): ``check``
   reports an excerpt that no longer matches, and the review lists the rewritten excerpt as a change to each source
   naming it (to verify, with the figures citing it).
3. A re-citation whose new quote is not in the stored excerpt read only "its locator quotes 4.89TB/s, not 4.8 TB/s"
   in the review, where ``audit`` said NOT FOUND: the review now says audit's quote check (text, markdown, --json).
4. ``audit`` run outside a registry named "the built-in registry's sources/excerpts/…" without the file's absolute
   path, and ``--json``'s ``sources.ID`` had no ``"registry": "built-in"``, both of which the README promises.
5. ``diff`` of a BASE older than the list of pricing models failed "HEAD fails passprice check (162 problems)" on
   entries main's own re-locks had written; a review rule is now named as one (:meth:`Diff.check_line`).
7. stderr said "the change breaks lock r1-qwen7b-h200-llamacpp" where the row and summary said "refused".
8. "elasticity not measured: a changed fact is refused" where +1 % took a share past 1: the refusal is said.
9. audit called the excerpt "(the text read)": it holds only the lines quoted from it.
10. A truncated lock's TOML error named no line: "Unterminated string (at end of document)".
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke, repin_excerpt

EXCERPT = "sources/excerpts/cite102-excerpt.txt"
CARD = "facts/cards/h200_sxm_141gb.toml"
QUOTE = "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry (no code of its own: priced by the running package), its first commit the checkout's."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _commit(root: Path, message: str) -> None:
    _git(root, "commit", "-qam", message)


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, rel
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# --- (1) an edited stored excerpt -----------------------------------------------------------------------------------


def test_1_every_stored_excerpt_is_pinned_by_its_record() -> None:
    import hashlib

    from passprice.registry import Root
    from passprice.sources import load_sources

    named = {s.id: s for s in load_sources(Root(REPO)).values() if s.excerpt is not None}
    assert len(named) == 23
    for source in named.values():
        assert source.excerpt_sha256 == hashlib.sha256((REPO / source.excerpt).read_bytes()).hexdigest(), source.id


def test_1_check_reports_an_excerpt_its_record_no_longer_pins(repo: Path) -> None:
    import hashlib

    _edit(repo, EXCERPT, "33\t4.8TB/s", "33\t4.9TB/s")
    found = hashlib.sha256((repo / EXCERPT).read_bytes()).hexdigest()
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output
    # was: exit 0, "all holds"
    said = (f"sources/nvidia-h200-product-page.toml: source.excerpt: {EXCERPT}'s sha256 is {found[:12]}…, not the "
            "d00ac0058c14… the record pins (source.excerpt_sha256): the excerpt changed since it was pinned; restore "
            f"it (`git checkout -- {EXCERPT}`), or, if the new text is what was read, pin it: excerpt_sha256 = "
            f"\"{found}\"")
    assert f"passprice: error: {said}" in result.stderr.splitlines(), result.output
    # the audit says it beside the excerpt and checks no quote against bytes nobody pinned
    lines = invoke("audit", "r1-qwen7b-h200", root=repo).stdout.splitlines()
    assert ("  memory.bandwidth: not checked (0 of 1 quoted span found in the stored text; nvidia-h200-product-page's "
            f"stored excerpt is unusable: {EXCERPT}'s sha256 is {found[:12]}…, not the d00ac0058c14… the record pins "
            "(source.excerpt_sha256): the excerpt changed since it was pinned; restore it (`git checkout -- "
            f"{EXCERPT}`), or, if the new text is what was read, pin it: excerpt_sha256 = \"{found}\")") in lines
    repin_excerpt(repo, EXCERPT)
    # pinned anew, the quote it lost is check's problem, as it fails the review (tests/test_fix190.py)
    result = invoke("check", root=repo)
    assert result.exit_code == 1, result.output
    assert any(line.startswith("  facts/cards/h200_sxm_141gb.toml: memory.bandwidth: its quotes of "
                               "nvidia-h200-product-page are NOT FOUND in its stored excerpt ")
               for line in result.stdout.splitlines()), result.output


def test_1_the_review_lists_a_rewritten_excerpt_as_a_change_to_its_source(repo: Path) -> None:
    _edit(repo, EXCERPT, "33\t4.8TB/s", "33\t4.9TB/s")
    repin_excerpt(repo, EXCERPT)  # pinned anew: check and the review fail on the quote it lost
    _commit(repo, "excerpt")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output  # the quote it lost fails the review (tests/test_budget140.py)
    lines = result.stdout.splitlines()
    # was: "no changes to facts, registry, locks or the pricing model; 10 locks unaffected"
    assert lines[1].startswith("no fact changed; 1 quote NOT FOUND in its stored text; 1 source record changed; "
                               "1 source whose document changed, to verify (under 5 locked prices); "), lines[1]
    assert lines[lines.index("sources whose document changed") + 1].startswith(
        "  nvidia-h200-product-page: to verify: the document source nvidia-h200-product-page names changed (sources/"
        "excerpts/cite102-excerpt.txt rewritten (its stored excerpt: the lines quoted from the text read, which its "
        "citing facts' quotes are checked against)) (on HEAD, the quote of h200_sxm_141gb:memory.bandwidth from it is "
        "NOT FOUND in its stored excerpt, found in BASE's: `passprice audit --source nvidia-h200-product-page`): does "
        "it state each of h200_sxm_141gb:memory.capacity, h200_sxm_141gb:memory.bandwidth, ")
    changed = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["sources_changed"]
    assert [(s["id"], s["changed"], s["quotes_lost"]) for s in changed] == [(
        "nvidia-h200-product-page",
        ["sources/excerpts/cite102-excerpt.txt rewritten (its stored excerpt: the lines quoted from the text read, "
         "which its citing facts' quotes are checked against)"], ["h200_sxm_141gb:memory.bandwidth"])]


def test_1_an_excerpt_edited_with_its_pin_left_fails_the_review(repo: Path) -> None:
    _edit(repo, EXCERPT, "33\t4.8TB/s", "33\t4.9TB/s")
    _commit(repo, "excerpt, pin left")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 2, result.output  # a file HEAD brings in that check refuses, as check exits 2
    assert result.stderr.startswith("passprice: error: on HEAD: sources/nvidia-h200-product-page.toml: "
                                    f"source.excerpt: {EXCERPT}'s sha256 is ")


# --- (3) a re-citation quoting what the stored excerpt lacks --------------------------------------------------------


def test_3_the_review_says_what_audit_says_of_a_new_quote(repo: Path) -> None:
    _edit(repo, CARD, QUOTE, "'GPU Memory Bandwidth 4.89TB/s'")
    _commit(repo, "recite")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    said = ("its quotes are NOT FOUND in the stored excerpt of the document it cites, as audit checks them (0 of 1 "
            "quoted span found in the stored text; not in it: 'GPU Memory Bandwidth 4.89TB/s')")
    (line,) = [x for x in result.stdout.splitlines() if x.lstrip().startswith("to verify: the citation changed")]
    # was: "…: does nvidia-h200-product-page: … 'GPU Memory Bandwidth 4.89TB/s' state 4.8 TB/s, published?" alone
    assert line.endswith(f"state 4.8 TB/s, published?; {said}"), line
    audit = invoke("audit", "r1-qwen7b-h200", root=repo).stdout.splitlines()
    assert ("  memory.bandwidth: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
            "'GPU Memory Bandwidth 4.89TB/s')") in audit
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout
    assert said in markdown
    facts = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["files"][0]["facts"]
    assert [f["quote_check"] for f in facts] == [{
        "state": "NOT FOUND", "spans": 1, "found": 0, "missing": ["GPU Memory Bandwidth 4.89TB/s"], "unstored": [],
        "past": 0, "why": "0 of 1 quoted span found in the stored text; not in it: 'GPU Memory Bandwidth 4.89TB/s'"}]


def test_3_a_quote_the_excerpt_holds_adds_nothing_to_verify(repo: Path) -> None:
    # re-cited to the NVL cell's row as the excerpt prints it: found, so nothing is added
    _edit(repo, CARD, QUOTE, "'GPU Memory Bandwidth 4.8TB/s'")
    _commit(repo, "recite, found")
    facts = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)["files"][0]["facts"]
    assert [f["quote_check"]["state"] for f in facts] == ["checked"]
    assert "NOT FOUND" not in (facts[0]["to_verify"] or "")


# --- (4) the built-in registry's excerpt, outside any registry --------------------------------------------------------


def test_4_audit_outside_a_registry_gives_the_excerpts_file_and_registry(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from passprice.cli import cli
    from passprice.registry import embedded_root

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PASSPRICE_ROOT", raising=False)
    result = CliRunner().invoke(cli, ["audit", "r1-qwen7b-h200"])
    assert result.exit_code == 0, result.output
    file = embedded_root().path / EXCERPT
    assert file.is_file()
    assert ("    stored excerpt: the built-in registry's sources/excerpts/cite102-excerpt.txt (the lines quoted from "
            f"the text read; its file: {file})") in result.stdout.splitlines()
    sources = json.loads(CliRunner().invoke(cli, ["audit", "r1-qwen7b-h200", "--json"]).stdout)["sources"]
    assert sources["nvidia-h200-product-page"]["excerpt"] == EXCERPT
    assert {s["registry"] for s in sources.values()} == {"built-in"}  # was: no "registry" key


# --- (5) a review rule is named as one ------------------------------------------------------------------------------


def test_5_a_review_rule_is_not_called_a_check_problem(repo: Path) -> None:
    from passprice.registry import Root
    from passprice.review import diff

    _edit(repo, "registry/servings/r1-qwen7b-h200.toml", "batch = 1", "batch = 2")
    _commit(repo, "batch")
    d = diff(Root(repo), "HEAD~1", "HEAD")
    rule = "src/passprice/pricing_models.json: entry 010972cacab9… added (…): remove the entry"
    assert attrs.evolve(d, head_check=(rule,), review_rules=frozenset({rule})).check_line() == (
        "HEAD fails the review's rules (1 problem; passprice check does not check them)")
    both = attrs.evolve(d, head_check=("facts/cards/x.toml: bad", rule), review_rules=frozenset({rule}))
    assert both.check_line() == ("HEAD fails passprice check and the review's rules (2 problems: 1 of the review's "
                                 "rules, which passprice check does not check)")
    assert attrs.evolve(d, head_check=("facts/cards/x.toml: bad",)).check_line() == (
        "HEAD fails passprice check (1 problem)")


# --- (7) and (8) one word for a refused price; why an elasticity is not measured --------------------------------------


def test_7_a_lock_whose_price_head_refuses_is_said_refused(repo: Path) -> None:
    _edit(repo, "registry/servings/r1-qwen7b-h200.toml", "batch = 1", "batch = 2")
    _commit(repo, "batch")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output
    assert "1 refused on HEAD" in result.stdout.splitlines()[1]
    # was: "passprice: refused: the change breaks lock r1-qwen7b-h200-llamacpp; it moves …"
    assert result.stderr == (
        "passprice: refused: HEAD refuses the price of lock r1-qwen7b-h200-llamacpp (BeyondStack), its floors holding "
        "(the row under locks affected says why and what to fix); it moves the locked price of r1-qwen7b-h200 "
        "without re-locking (review the move, then `passprice lock --update -o locks/r1-qwen7b-h200.lock.toml`)\n")


def test_8_an_unmeasured_elasticity_says_the_refusals(repo: Path) -> None:
    _edit(repo, "registry/servings/qwen3-30b-a3b-h200.toml", 'routing = "qwen3-30b-a3b-measured"',
          'routing = "uniform"')
    _commit(repo, "uniform routing")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("    floors    held → BROKEN: ")]
    # uniform routing's hot_share is 1: 1.01 is past a share's bound, and 0.99 leaves slots to no hot expert
    # (was: "(elasticity not measured: a changed fact is refused)")
    assert line.endswith(
        "routing.hot_share is assumed, below the floor measured (elasticity not measured: 1 % higher it is refused: "
        "routing uniform does not fit this checkpoint: shares must be in (0, 1]: hot_experts 1, hot_share 1.01; 1 % "
        "lower it is refused: routing uniform does not fit this checkpoint: every expert is in the hot set "
        "(hot_experts 1) but it takes only 0.99 of the slots)"), line


# --- (9) what a stored excerpt holds ----------------------------------------------------------------------------------


def test_9_the_excerpt_is_said_to_hold_the_lines_quoted() -> None:
    lines = invoke("audit", "r1-qwen7b-h200").stdout.splitlines()
    # was: "(the text read, from the registry's top folder)"
    assert ("    stored excerpt: sources/excerpts/cite102-excerpt.txt (the lines quoted from the text read, from the "
            "registry's top folder)") in lines


# --- (10) a truncated lock's TOML error gives its line and column -----------------------------------------------------


def test_10_a_truncated_lock_names_the_line_it_ends_on(tmp_path: Path) -> None:
    lock = tmp_path / "trunc.lock.toml"
    lock.write_text('[lock]\nname = "r1', encoding="utf-8")  # cut inside a string: line 2 ends after 10 characters
    for command in ("audit", "reproduce"):
        result = invoke(command, os.fspath(lock))
        assert result.exit_code == 2, result.output
        # was: "not valid TOML: Unterminated string (at end of document)"
        assert result.stderr == (f"passprice: error: {lock}: not valid TOML: Unterminated string (at end of "
                                 "document: line 2, column 11)\n")
    lock.write_text('[lock]\nname = "r1"\n[serving\n', encoding="utf-8")  # an error tomllib places itself: as before
    assert invoke("audit", os.fspath(lock)).stderr == (
        f"passprice: error: {lock}: not valid TOML: Expected ']' at the end of a table declaration (at line 3, "
        "column 9)\n")


# --- (6) an old lock's quotes, against the excerpts it was made under -------------------------------------------------


def test_6_a_locks_quotes_are_checked_against_the_excerpt_committed_with_it(repo: Path) -> None:
    excerpt = "sources/excerpts/cite70-excerpt.txt"
    _edit(repo, excerpt, "## The real result — Qwen3", "## The real result - Qwen3")  # today's: a hyphen
    repin_excerpt(repo, excerpt)
    _commit(repo, "the heading's dash")
    lock = os.fspath(repo / "locks" / "qwen3-30b-a3b-h200.lock.toml")  # last written by the first commit
    lines = invoke("audit", lock, root=repo).stdout.splitlines()
    hot = [x for x in lines if x.startswith("  routing.hot_experts: ")]
    # was NOT FOUND against today's; its quotes found, none stating its figure (tests/test_fixw56.py)
    assert hot and hot[0].startswith("  routing.hot_experts: places found, the figure not quoted ("), hot
    assert ("  excerpts      quotes were checked against the stored excerpts as committed with the lock "
            f"({_head(repo, 1)[:12]}) where today's differ: gpu-container-handbook-routing-derisk; the others are "
            "today's, the same") in lines
    data = json.loads(invoke("audit", lock, "--json", root=repo).stdout)
    assert data["excerpts_at_lock"] == {"commit": _head(repo, 1), "replaced": ["gpu-container-handbook-routing-derisk"]}
    # a copy of it outside locks/ is found by its [lock] digest (tests/test_fix188.py), its excerpts the committed
    (repo / "copy.lock.toml").write_bytes(Path(lock).read_bytes())
    copied = json.loads(invoke("audit", os.fspath(repo / "copy.lock.toml"), "--json", root=repo).stdout)
    assert copied["excerpts_at_lock"] == {"commit": _head(repo, 1),
                                          "replaced": ["gpu-container-handbook-routing-derisk"]}
    # a lock file no commit holds as it is (a comment added): today's excerpts, said so
    (repo / "away.lock.toml").write_bytes(Path(lock).read_bytes() + b"# mailed\n")
    away = invoke("audit", os.fspath(repo / "away.lock.toml"), root=repo).stdout.splitlines()
    assert ("  excerpts      quotes were checked against today's registry's stored excerpts: no commit here holds "
            "this lock file to read those it was made under") in away
    # the lock as committed, its excerpts today's: nothing said
    assert not [x for x in invoke("audit", "locks/r1-qwen7b-h200.lock.toml").stdout.splitlines()
                if x.startswith("  excerpts ")]


def _head(repo: Path, back: int) -> str:
    return subprocess.run(["git", "rev-parse", f"HEAD~{back}"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_6_a_line_moved_to_another_page_since_the_lock_is_read_as_committed(repo: Path) -> None:
    # a new user's check of the fix: a line of the Hopper whitepaper's excerpt moved from p. 18 to p. 19 (its text
    # the same) left audit of a lock committed before reading today's excerpt ("scale: NOT FOUND … (on p. 18)"), no
    # excerpts line, `replaced: []`: the comparison saw only the text, not its pages
    excerpt = "sources/excerpts/cite71-excerpt.txt"
    line = "18\t    ●   128 FP32 CUDA Cores per SM, 16896 FP32 CUDA Cores per GPU"
    _edit(repo, excerpt, line, "19" + line[2:])
    repin_excerpt(repo, excerpt)
    _commit(repo, "a line to another page")
    lock = os.fspath(repo / "locks" / "r1-qwen7b-h200.lock.toml")  # last written by the first commit
    today = invoke("audit", "r1-qwen7b-h200", "--json", root=repo)
    checks = {f["path"]: f["quote_check"]["state"] for f in json.loads(today.stdout)["facts"]}
    assert checks["scale"] == "NOT FOUND"  # today's excerpt: the quote is no longer on p. 18
    data = json.loads(invoke("audit", lock, "--json", root=repo).stdout)
    assert data["excerpts_at_lock"]["replaced"] == ["nvidia-hopper-whitepaper"]
    assert {f["path"]: f["quote_check"]["state"] for f in data["facts"]}["scale"] == "checked"


def test_1_check_reports_a_pinned_excerpt_that_is_no_text(repo: Path) -> None:
    # a new user's check of the fix: an excerpt of b"\\xff\\xfe\\x00bad" pinned by its sha256 passed check (0 problems)
    # while audit called it unusable for all 8 facts citing it
    (repo / EXCERPT).write_bytes(b"\xff\xfe\x00bad")
    repin_excerpt(repo, EXCERPT)
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output
    assert ("sources/excerpts/cite102-excerpt.txt: not UTF-8 text (byte 0): no quote can be checked against it; "
            "store the lines quoted as UTF-8 text and pin them") in result.output


def test_1_an_excerpt_headed_for_another_source_is_no_text_of_this_one(repo: Path) -> None:
    # a new user's check of the fix: the product page's record re-pointed (and pinned) to a copy of its excerpt whose
    # one section was headed for the Hopper whitepaper: check said "all holds", audit --source "8 of 8 facts' quotes
    # checked" against another document's lines
    text = (repo / EXCERPT).read_text(encoding="utf-8")
    assert text.count("== nvidia-h200-product-page ") == 1
    (repo / "sources" / "excerpts" / "evil.txt").write_text(
        text.replace("== nvidia-h200-product-page ", "== nvidia-hopper-whitepaper "), encoding="utf-8")
    _edit(repo, "sources/nvidia-h200-product-page.toml", f'excerpt = "{EXCERPT}"',
          'excerpt = "sources/excerpts/evil.txt"')
    repin_excerpt(repo, "sources/excerpts/evil.txt")
    said = ("sources/excerpts/evil.txt: its sections are other sources' (nvidia-hopper-whitepaper), none headed "
            "nvidia-h200-product-page: no quote of nvidia-h200-product-page can be checked against it; add its section "
            "('== nvidia-h200-product-page PATH URL ==') or name its own excerpt")
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output
    assert said in result.output
    data = json.loads(invoke("audit", "--source", "nvidia-h200-product-page", "--json", root=repo).stdout)
    assert data["quotes_checked"]["checked"] == 0
    # a heading without an address only cuts a file (the xiongjiedai notebooks' '== LLaMA 2/… =='): the whole file
    from passprice.sources import foreign_sections

    assert foreign_sections("== LLaMA 2/Gaming GPUs/4090_v2.ipynb ==\n1\tx\n", "xiongjiedai-gpu-benchmarks") is None
    assert foreign_sections("1\tno sections\n", "any") is None


def test_4_audit_source_json_names_the_registry_of_its_excerpt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a new user's check of the fix: outside a registry only audit LOCK --json said "registry": "built-in"
    from click.testing import CliRunner

    from passprice.cli import cli

    own = copy_root(tmp_path / "own")
    mine = json.loads(invoke("audit", "--source", "nvidia-h200-product-page", "--json", root=own).stdout)
    assert (mine["source"]["excerpt"], mine["source"]["registry"]) == (EXCERPT, str(own))
    away = tmp_path / "away"
    away.mkdir()
    monkeypatch.chdir(away)
    monkeypatch.delenv("PASSPRICE_ROOT", raising=False)
    result = CliRunner().invoke(cli, ["audit", "--source", "nvidia-h200-product-page", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["source"]["excerpt"], data["source"]["registry"]) == (EXCERPT, "built-in")  # was: no "registry"


def test_1_a_rewritten_excerpt_names_the_citing_facts_whose_quotes_it_lost(repo: Path) -> None:
    # a new user's check of the fix: a line of the Hopper whitepaper's excerpt moved from p. 18 to p. 19 (re-pinned):
    # the review listed the source to verify, exit 0, and said nothing of the citing facts whose quotes HEAD's
    # excerpt no longer holds, which audit --source on HEAD found NOT FOUND
    excerpt = "sources/excerpts/cite71-excerpt.txt"
    line = "18\t    ●   128 FP32 CUDA Cores per SM, 16896 FP32 CUDA Cores per GPU"
    _edit(repo, excerpt, line, "19" + line[2:])
    repin_excerpt(repo, excerpt)
    _commit(repo, "a line to another page")
    audit = json.loads(invoke("audit", "--source", "nvidia-hopper-whitepaper", "--json", root=repo).stdout)
    lost = sorted(f"{f['record']}:{f['path']}" for f in audit["facts"] if f["quote_check"]["state"] == "NOT FOUND")
    assert lost
    result = invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo)
    changed = {s["id"]: s for s in json.loads(result.stdout)["sources_changed"]}
    assert sorted(changed["nvidia-hopper-whitepaper"]["quotes_lost"]) == lost
    assert ("NOT FOUND in its stored excerpt, found in BASE's: `passprice audit --source nvidia-hopper-whitepaper`"
            in changed["nvidia-hopper-whitepaper"]["to_verify"])
    # a source sharing the file whose own section did not change loses none (the SN40L's quotes of its slides that
    # neither side's excerpt holds are not the change's)
    assert changed.get("sambanova-sn40l-hot-chips-2024", {"quotes_lost": []})["quotes_lost"] == []


def test_2_a_copy_that_drops_spaces_is_checked_as_the_citation_tests_check_it() -> None:
    # the SN40L slides' copy drops spaces and cuts words over its pieces ('1.5 TB High Capacity M' / 'emory'):
    # audit --source said 5 of its 11 facts' quotes were NOT FOUND, which tests/test_cite71.py finds with every
    # blank taken out; the whole-number rule holds there too
    from passprice.sources import StoredText

    data = json.loads(invoke("audit", "--source", "sambanova-sn40l-hot-chips-2024", "--json").stdout)
    assert data["quotes_checked"] == {"checked": 8, "not_found": 0, "facts": 11}
    text = "Unit1.5 TB High Capacity M emory5nm 638 TFLOPS(bf16) 14.8TB/s"
    stored = StoredText("s", "e", text=text, flat=text)
    assert stored.holds("1.5 TB High Capacity Memory") and stored.holds("638 TFLOPS (bf16)")
    assert not stored.holds("4.8 TB/s") and not stored.holds("5 TB High")
