"""An audit says when a stored excerpt is not a file, and whether each fact's quotes were checked (issue 13, audit).

1. ``audit LOCK`` / ``audit SERVING`` printed ``stored excerpt: PATH (the text read, …)`` for an excerpt file that was
   missing, a FIFO, a folder or a link, where ``audit --source`` and ``check`` say what is wrong with it: now all
   three say it with :func:`passprice.sources.excerpt_problem` (text, markdown; ``--json``'s
   ``sources.ID.excerpt_problem``).
2. A review pricing HEAD in its own process (a module outside the pricing digest changed) shows no per-fact "alone"
   breakdown; it now says why in one line (tests below, test_3_*).
3. The audit said nothing of whether a quote a fact's price rests on was checked against a stored text: the H200's
   ``array`` (INT8) cites the datasheet, whose PDF was never read; the MI300X's ``on_chip.capacity`` reads ``vgpr``
   from a ROCm table no text of which is stored. Now each fact gets a quote check (the citation tests' span
   pattern, :data:`passprice.sources.QUOTED_SPAN`, looked for in the source's stored excerpt) and the audit a count.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke, repin_excerpt
from passprice.sources import quoted_spans

LOCK = "qwen3-30b-a3b-h200"
HANDBOOK = "gpu-container-handbook-routing-derisk"
EXCERPT = "sources/excerpts/cite70-excerpt.txt"
NAMED = f"    stored excerpt: {EXCERPT} (the lines quoted from the text read, from the registry's top folder)"
# routing.hot_experts' quotes found, none stating its figure: counted apart since tests/test_fixw56.py
SUMMARY = ("quotes checked against a stored text: 7 of 10 facts' quotes checked against a stored text (1 with its "
           "places found, the figure not quoted)")
# one span, quoted by the fact's locator and its derivation input's: counted once (0 of 2 before tests/test_left131.py)
ARRAY = ("  array: not checked (0 of 1 quoted span found in the stored text; nvidia-h200-datasheet has no stored "
         "text)")


#: What a side copied from the running package leaves out: compiled files, the JSON records, and a wheel's ``_data``
#: (an installed package's copy of the registry and schemas; a checkout has none: its schemas are ``schema/``).
CHECKOUT_ONLY = shutil.ignore_patterns("__pycache__", "*.json", "_data")

def _audit(root: Path, *args: str) -> str:
    result = invoke("audit", LOCK, *args, root=root)
    assert result.exit_code == 0, result.output
    return result.output


# 1. The stored excerpt's problem, in audit LOCK.


@pytest.mark.parametrize("kind", ["missing", "fifo", "folder", "link-in"])
def test_1_audit_lock_says_what_is_wrong_with_a_stored_excerpt(tmp_path: Path, kind: str) -> None:
    root = copy_root(tmp_path)
    target = root / EXCERPT
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "link-in":
        (root / "sources" / "excerpts" / "real.txt").write_text("== text\n")
        target.symlink_to("real.txt")
    problem = {
        "missing": f"{EXCERPT} is not a file of this registry: put the document there (source.excerpt is read from "
                   "the registry's top folder), or correct source.excerpt",
        "fifo": f"{EXCERPT} is a FIFO (named pipe), not a regular file of this registry",
        "folder": f"{EXCERPT} is a folder, not a regular file of this registry",
        "link-in": f"{EXCERPT} passes through a symbolic link ({EXCERPT}): a document of this registry is a file at "
                   "its own path (a review reads it through git at each revision, where a link holds only its "
                   "target's name): put the document itself there, or name its own path in source.excerpt",
    }[kind]
    text = _audit(root)
    # before: the line ended at "(the text read, from the registry's top folder)" whatever was there
    assert [line for line in text.splitlines() if line.startswith(NAMED)] == [f"{NAMED}, but {problem}"]
    # the routing fact quoting the handbook is not checked, and says why
    assert (f"  routing.hot_experts: not checked (0 of 2 quoted spans found in the stored text; {HANDBOOK}'s stored "
            f"excerpt is unusable: {problem})") in text.splitlines()
    document = json.loads(_audit(root, "--json"))
    assert document["sources"][HANDBOOK]["excerpt_problem"] == problem
    assert document["sources"]["nvidia-h200-product-page"]["excerpt_problem"] is None
    assert ", but " in _audit(root, "--format", "markdown")
    # check says the same words of the same file
    checked = invoke("check", root=root)
    assert f"sources/{HANDBOOK}.toml: source.excerpt: {problem}" in checked.output


def test_1_an_excerpt_that_is_there_is_named_as_before() -> None:
    lines = _audit(REPO).splitlines()
    assert NAMED in lines
    assert not any(line.startswith("    stored excerpt: ") and ", but " in line for line in lines)
    assert all(s["excerpt_problem"] is None for s in json.loads(_audit(REPO, "--json"))["sources"].values())


# 3. Each fact's quotes, checked against its document's stored text.


def test_3_the_span_pattern_is_the_citation_tests() -> None:
    assert quoted_spans("p. 19: 'The A100 GPU includes 108 SMs', Table 4 row 'SMs 108'") == [
        "The A100 GPU includes 108 SMs", "SMs 108"]
    assert quoted_spans("the card's row, 'GPU Memory 80GB 94GB'") == ["GPU Memory 80GB 94GB"]
    assert quoted_spans("Table 3 (no quote)") == []


def test_3_the_h200_int8_row_is_said_unchecked_and_counted() -> None:
    lines = _audit(REPO).splitlines()
    assert SUMMARY in lines and ARRAY in lines
    assert "  memory.bandwidth: checked (1 of 1 quoted span found in the stored text)" in lines
    assert "  routing.hot_share: not checked (its locator quotes nothing)" in lines
    document = json.loads(_audit(REPO, "--json"))
    assert document["quotes_checked"] == {"checked": 7, "not_found": 0, "facts": 10, "figure_not_quoted": 1}
    array = next(f for f in document["facts"] if f["path"] == "array")
    assert array["quote_check"] == {"state": "not checked", "spans": 1, "found": 0, "missing": [],
                                    "unstored": ["nvidia-h200-datasheet"], "past": 0,
                                    "why": ARRAY.split("(", 1)[1][:-1]}
    markdown = _audit(REPO, "--format", "markdown")
    assert ("Quotes checked against a stored text: 7 of 10 facts' quotes checked against a stored text (1 with its "
            "places found, the figure not quoted)" in markdown)
    assert "- ⚠️ `routing.hot_experts`: places found, the figure not quoted (" in markdown
    assert "- ⚠️ `array`: not checked" in markdown


def test_3_the_mi300x_vgpr_read_from_an_unstored_table_leaves_its_fact_unchecked() -> None:
    result = invoke("audit", "r1-qwen7b-mi300x-int8kv", root=REPO)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    # its vector quotes 'Vector FP32' alone, 163.4 TFLOPS outside the quote (tests/test_fixw56.py)
    assert ("quotes checked against a stored text: 5 of 8 facts' quotes checked against a stored text (1 with its "
            "places found, the figure not quoted)") in lines
    assert ("  on_chip.capacity: not checked (5 of 5 quoted spans found in the stored text; the vgpr figure's "
            "locator (amd-rocm-gpu-specs) quotes nothing)") in lines


def test_3_a_quote_the_stored_text_lacks_is_not_found(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    excerpt = root / "sources" / "excerpts" / "cite102-excerpt.txt"
    excerpt.write_text(excerpt.read_text(encoding="utf-8").replace("4.8TB/s", "4.9TB/s"), encoding="utf-8")
    repin_excerpt(root, "sources/excerpts/cite102-excerpt.txt")  # re-pinned: else check's problem, not checked
    lines = _audit(root).splitlines()
    assert ("quotes checked against a stored text: 6 of 10 facts' quotes checked against a stored text "
            "(1 NOT FOUND, 1 with its places found, the figure not quoted)") in lines
    assert ("  memory.bandwidth: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
            "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s')") in lines
    document = json.loads(_audit(root, "--json"))
    assert document["quotes_checked"] == {"checked": 6, "not_found": 1, "facts": 10, "figure_not_quoted": 1}
    bandwidth = next(f for f in document["facts"] if f["path"] == "memory.bandwidth")["quote_check"]
    assert bandwidth["state"] == "NOT FOUND" and bandwidth["missing"] == ["GPU Memory Bandwidth 4.8TB/s 4.8TB/s"]


def test_3_an_excerpt_that_is_not_utf8_is_said_unusable_not_a_traceback(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    excerpt = root / EXCERPT
    size = excerpt.stat().st_size
    with excerpt.open("ab") as f:
        f.write(b"\xff\xfe")
    repin_excerpt(root, EXCERPT)
    lines = _audit(root).splitlines()
    # a regular file of the registry, pinned: its problem said where it is named, as check says it
    # (tests/test_walk128.py), and why no quote is checked against it
    unusable = (f"{EXCERPT}: not UTF-8 text (byte {size:,}): no quote can be checked against it; store the lines "
                "quoted as UTF-8 text and pin them")
    assert f"{NAMED}, but {unusable}" in lines
    assert (f"  routing.hot_experts: not checked (0 of 2 quoted spans found in the stored text; {HANDBOOK}'s stored "
            f"excerpt is unusable: {unusable})") in lines


# 2. A review pricing HEAD in its own process says why it gives no per-fact breakdown.

ABSENT = ("    alone     not shown: HEAD's code differs from the running code outside the pricing digest, so HEAD is "
          "priced in its own process, which prices each lock whole; `passprice reproduce LOCK` run with HEAD's own "
          "passprice prices each changed fact alone")


def _side(tmp_path: Path, name: str, head: bool, stray: bool) -> Path:

    from passprice import pins

    root = copy_root(tmp_path / name)
    shutil.copytree(REPO / "schema", root / "schema")
    package = root / "src" / "passprice"
    shutil.copytree(pins.PACKAGE, package, ignore=CHECKOUT_ONLY)
    if head:  # two facts of the H200 changed: the memory capacity and the read share
        card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
        text = card.read_text(encoding="utf-8")
        for old, new in (("[memory.capacity]\nvalue = 141", "[memory.capacity]\nvalue = 140"),
                         ("[streams.read]\nvalue = 0.9333", "[streams.read]\nvalue = 0.9")):
            assert old in text
            text = text.replace(old, new)
        card.write_text(text, encoding="utf-8")
    if stray:  # a module outside the pricing digest: HEAD is priced in its own process
        (package / "stray.py").write_text("X = 1\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("stray", [False, True])
def test_3_a_review_priced_in_heads_own_process_says_why_no_fact_is_priced_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stray: bool) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    base, head = _side(tmp_path, "base", False, False), _side(tmp_path, "head", True, stray)
    result = invoke("diff", str(base), str(head), root=base)
    assert result.exit_code == 1, result.output  # 5 prices moved unreviewed, either way
    r1 = result.stdout.split("\n  r1-qwen7b-h200 (locks/", 1)[1].split("\n  r1-qwen7b-h200-best ", 1)[0].splitlines()
    assert "    tokens/s  996.1 → 961.5  (-3.471 %)  HEAD's price rests on derived facts that do not follow: not a " \
           "price to publish" in r1
    alone = [line for line in r1 if line.startswith("    alone     ")]
    if stray:  # before: no alone line, and no word of why
        assert alone == [ABSENT]
        assert result.stdout.count(ABSENT) == 5
    else:
        assert alone == ["    alone     memory.capacity: tokens/s unchanged (capacity_bytes 141 GB → 140 GB, "
                         "-0.7092 %); streams.read: tokens/s -3.471 %  (each changed fact alone: the lock's "
                         "pinned inputs with only it as HEAD has it)"]
    document = json.loads(invoke("diff", str(base), str(head), "--json", root=base).stdout)
    locks = {lock["name"]: lock for lock in document["locks"]}
    said = locks["r1-qwen7b-h200"]
    assert said["alone_absent"] == (ABSENT.split("alone     ", 1)[1] if stray else None)
    assert (said["alone"] == []) == stray


def test_3_no_registered_lock_rests_on_a_quote_its_stored_text_lacks() -> None:
    # (checked, not found, facts) a lock; every fact not checked is one with no stored text or no quote
    counts = {}
    for path in sorted((REPO / "locks").glob("*.lock.toml")):
        name = path.name.removesuffix(".lock.toml")
        result = invoke("audit", name, "--json", root=REPO)
        assert result.exit_code == 0, result.output
        said = json.loads(result.stdout)["quotes_checked"]
        # a fact whose quotes are found, none stating its figure, counted apart since tests/test_fixw56.py: counted
        # with the checked here, as every quote is found
        counts[name] = (said["checked"] + said.get("figure_not_quoted", 0), said["not_found"], said["facts"])
    assert counts == {
        "gemma3-270m-h100": (8, 0, 8), "gpt-oss-120b-h100": (8, 0, 10), "qwen3-30b-a3b-h200": (8, 0, 10),
        "qwen35-27b-h100-every8": (9, 0, 10), "qwen35-27b-h200-mtp": (8, 0, 11), "qwen35-27b-ws1-trailing": (0, 0, 16),
        "r1-qwen7b-h200-best": (7, 0, 8), "r1-qwen7b-h200-llamacpp": (8, 0, 21), "r1-qwen7b-h200": (7, 0, 8),
        "r1-qwen7b-mi300x-int8kv": (6, 0, 8)}


def test_3_locators_quoting_hundreds_of_spans_are_looked_up_within_a_bound(tmp_path: Path) -> None:
    import re
    import resource

    root = copy_root(tmp_path)
    excerpt = root / "sources" / "excerpts" / "cite102-excerpt.txt"
    with excerpt.open("a", encoding="utf-8") as f:  # near the 1 MiB read: each look-up reads it all
        f.write("".join(f"{i}\t{'x' * 1000}\n" for i in range(1000)))
    repin_excerpt(root, "sources/excerpts/cite102-excerpt.txt")
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    quotes = " ".join(f"'q{i}'" for i in range(158))  # 158 spans the text lacks, in 995 of a locator's 1,000
    assert len(quotes) == 995
    text, n = re.subn(r'(?m)^locator = ".*"$', lambda _: f'locator = "{quotes}"', card.read_text(encoding="utf-8"))
    card.write_text(text, encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_SELF)
    result = invoke("audit", "r1-qwen7b-h200", root=root)
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert n == 17  # every locator of the card, its facts' and their inputs'
    summary = ("quotes checked against a stored text: 0 of 8 facts' quotes checked against a stored text (2 NOT "
               "FOUND)")
    checks = lines[lines.index(summary) + 1:lines.index(summary) + 9]
    # Each look-up in the 1 MB text counts its two searched forms, 2,002,088 characters, against the 128 MiB an
    # audit searches (64 MiB before, tests/test_bound147.py; tests/test_attack133.py: an audit --source quoting '11'
    # of an excerpt of 900,000 bytes of `1` lines ran past 300 s of CPU): 67 such look-ups (134,139,896), then none of
    # it; of the 77,832 characters left, one look-up of the Azure excerpt (60,000: a text under 30,000 a form is
    # counted at 30,000, as it is searched), then none (4 NOT FOUND before, 33 look-ups of the 1 MB text and the
    # Azure excerpt's at their own size).
    missed = "not in it: 'q0'; 'q1'; 'q2'"
    past = "past the 128 MiB of stored text an audit searches"
    assert checks[:2] == [
        f"  memory.bandwidth: NOT FOUND (0 of 158 quoted spans found in the stored text; {missed}; 64 more; 91 spans "
        f"{past})",
        f"  memory.capacity: not checked (0 of 158 quoted spans found in the stored text; 158 spans {past})"]
    assert checks[2:4] == [
        f"  streams.read: NOT FOUND (0 of 159 quoted spans found in the stored text; not in it: 'q0'; 158 spans "
        f"{past})",
        f"  streams.append: not checked (0 of 159 quoted spans found in the stored text; 159 spans {past})"]
    assert checks[5] == f"  vector: not checked (0 of 159 quoted spans found in the stored text; 159 spans {past})"
    # not a timing test: the look-ups are bounded (67 of about 2 M characters; unbounded, 2,236 of them)
    assert after.ru_utime - before.ru_utime < 60
