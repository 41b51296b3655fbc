"""A new user's findings (README only, a registry ``passprice init`` wrote, in its own git repository): a
hypothetical card ``hx1`` whose ``assumed`` facts cite a registry-kind source ``sources/hx1-design.toml``, its
document ``notes/hx1-design.md`` and its stored excerpt ``sources/excerpts/hx1-design.txt``; a serving on it, locked.
Each is rebuilt here in a temporary git registry.

1. A value its own quote contradicts passed ``check`` and ``audit`` unless the fact was ``published`` or ``measured``
   (an assumed 6.5 TB/s under ``'Peak Memory Bandwidth 6 TB/s'``, an estimated 7 under 6.4 TB/s, a unit typo 6.4
   GB/s, a colleague's 6.4 → 7 re-locked): now every provenance is held to its own quotes, save an estimate or
   assumption whose note opens ``Basis:`` or ``Estimate:`` (its quotes are its estimate's inputs).
2. A registry document's stored excerpt edited away from the document passed ``check``: now it fails, naming both.
3. A NOT FOUND line cut its quote at 60 characters (``… 6.4 TB'``): now the whole quote is shown.
4. A failed ``check`` whose one problem was on stderr (a lock edited by hand) did not say it again before ``check
   FAILED``: the recap now repeats it on stdout.
5. ``audit``'s uniform ``routing.hot_share`` read ``refused`` both ways without why: each step's refusal is said.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest

CARD = "facts/cards/hx1.toml"
SOURCE = "sources/hx1-design.toml"
EXCERPT = "sources/excerpts/hx1-design.txt"
DOCUMENT = "notes/hx1-design.md"
LOCK = "locks/hx1s.lock.toml"
REV2 = "Peak Memory Bandwidth, revision 2 (faster HBM3E bins) 6.4 TB/s"
TOP = Path(__file__).resolve().parents[1]


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASSPRICE_NO_CACHE": "1"}
    return subprocess.run(["passprice", *args], cwd=root, capture_output=True, text=True, env=env, timeout=300)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _pin_excerpt(root: Path) -> None:
    digest = hashlib.sha256((root / EXCERPT).read_bytes()).hexdigest()
    path = root / SOURCE
    path.write_text(re.sub(r'(?m)^excerpt_sha256 = "[0-9a-f]{64}"$', f'excerpt_sha256 = "{digest}"',
                           path.read_text(encoding="utf-8")), encoding="utf-8")


def _bandwidth(root: Path, value: str, provenance: str, quote: str, note: str | None = None, after: str = "") -> None:
    """``memory.bandwidth`` of hx1 rewritten in its file (value in TB/s, its locator quoting ``quote``)."""
    path = root / CARD
    text = path.read_text(encoding="utf-8")
    entry = (f'[memory.bandwidth]\nvalue = {value}\nunit = "TB/s"\nprovenance = "{provenance}"\n'
             f'source = "hx1-design"\nlocator = "{DOCUMENT}: \'{quote}\'{after}"\n'
             + (f'note = "{note}"\n' if note is not None else ""))
    text = re.sub(r"(?s)\[memory\.bandwidth\]\n.*?\n\n", entry + "\n", text, count=1)
    path.write_text(text, encoding="utf-8")


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stdout.splitlines() if not line.startswith("  warning:")]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new user's registry, committed: ``init``'s files, then hx1 (WS1's file copied, its bandwidth 6.4 TB/s
    assumed under the design document's revision-2 line), its source, document and excerpt, a serving and its lock."""
    where = tmp_path_factory.mktemp("fix55w")
    _ok(subprocess.run(["passprice", "init", "mine"], cwd=where, capture_output=True, text=True, timeout=300))
    root = where / "mine"
    (root / "notes").mkdir()
    (root / DOCUMENT).write_text(f"# HX1 design\n\nPeak Memory Bandwidth 6 TB/s\n{REV2}\n", encoding="utf-8")
    (root / EXCERPT).write_text(f"# The HX1 design notes' lines, as read.\n1\t# HX1 design\n"
                                f"3\tPeak Memory Bandwidth 6 TB/s\n4\t{REV2}\n", encoding="utf-8")
    (root / SOURCE).write_text(
        '#:schema ../schema/source.schema.json\n[source]\ntitle = "HX1 design notes"\nkind = "registry"\n'
        f'publisher = "me"\npath = "{DOCUMENT}"\nread = "read by hand"\nexcerpt = "{EXCERPT}"\n'
        f'excerpt_sha256 = "{"0" * 64}"\n', encoding="utf-8")
    _pin_excerpt(root)
    text = (root / "facts/cards/ws1_hypothetical.toml").read_text(encoding="utf-8")
    text = text.replace("ws1-design", "hx1-design")
    text = re.sub(r'(?m)^name = .*$', 'name = "HX1 (hypothetical)"', text, count=1)
    text = re.sub(r'(?m)^note = "A card design.*$', 'note = "The HX1 design sketch."', text, count=1)
    (root / CARD).write_text(text, encoding="utf-8")
    _bandwidth(root, "6.4", "assumed", REV2)
    _ok(_run(root, "new-serving", "hx1s", "--checkpoint", "codellama-7b-q8_0", "--card", "hx1", "--batch", "8",
             "--description", "hx1 at batch 8"))
    _ok(_run(root, "lock", "hx1s"))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "hx1")
    _ok(_run(root, "check"))
    return root


@pytest.fixture
def mine(made: Path, tmp_path: Path) -> Path:
    """A copy of the committed registry for one test to edit."""
    root = tmp_path / "mine"
    shutil.copytree(made, root, symlinks=True)
    return root


def _mismatch(value: str, quote: str, states: str) -> str:
    return (f"  {CARD}: memory.bandwidth: its quote of hx1-design '{quote}' states {states}, not its value {value}: "
            "the value and the words it cites disagree; quote the words of the document stating the value, or set "
            "the value they state")


def test_1_an_assumed_value_against_its_quote_fails_check_and_audit_says_mismatch(mine: Path) -> None:
    _bandwidth(mine, "6.5", "assumed", "Peak Memory Bandwidth 6 TB/s")
    done = _run(mine, "check")
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    lines = _lines(done)
    assert lines[0].endswith(": 1 problem")
    assert lines[1] == _mismatch("6.5 TB/s", "Peak Memory Bandwidth 6 TB/s", "6 TB/s")
    assert lines[-1] == "check FAILED"
    audit = _run(mine, "audit", "--source", "hx1-design")
    _ok(audit)
    assert ("  hx1:memory.bandwidth: MISMATCH (1 of 1 quoted span found in the stored text; its quote of hx1-design "
            "'Peak Memory Bandwidth 6 TB/s' states 6 TB/s, not its value 6.5 TB/s)") in audit.stdout.splitlines()


def test_1_an_estimate_against_its_quote_fails_check(mine: Path) -> None:
    _bandwidth(mine, "7", "estimated", REV2)
    done = _run(mine, "check")
    assert done.returncode == 1
    assert _lines(done)[1] == _mismatch("7 TB/s", REV2, "6.4 TB/s")


def test_1_an_estimate_whose_note_says_its_quotes_are_its_basis_passes(mine: Path) -> None:
    # An estimate quoting what it rests on says so: its note opens Basis: or Estimate: (the shipped stack's
    # memory.reserved, 512 MiB from quoted buffers of 70.50 to 148.19 MiB, as below)
    _bandwidth(mine, "7", "estimated", REV2, note="Basis: revision 2's 6.4 TB/s, with faster bins expected")
    done = _run(mine, "check")
    assert done.returncode == 0, done.stdout[-2000:]
    assert not [line for line in done.stdout.splitlines() if "its quote of" in line]
    # ... an assumption too; but a note not opening so is no such word
    _bandwidth(mine, "7", "assumed", REV2, note="Revision 2's 6.4 TB/s, with faster bins expected")
    assert _run(mine, "check").returncode == 1
    # ... and a locator working the figure out of its quote says it too (the review's reading of a basis)
    _bandwidth(mine, "6.08", "estimated", REV2, after=" less 5 %")
    _ok(_run(mine, "check"))


def test_1_a_unit_typo_is_a_mismatch(mine: Path) -> None:
    done = _run(mine, "fact", "set", "hx1", "memory.bandwidth", "--value", "6.4", "--unit", "GB/s", "--provenance",
                "assumed", "--source", "hx1-design", "--locator", f"{DOCUMENT}: '{REV2}'")
    _ok(done)
    assert (f"passprice: warning: {CARD}: memory.bandwidth: its quote of hx1-design '{REV2}' states 6.4 TB/s "
            "(6400 GB/s), not its value 6.4 GB/s: the value and the words it cites disagree; quote the words of the "
            "document stating the value, or set the value they state") in done.stderr.splitlines()
    check = _run(mine, "check")
    assert check.returncode == 1
    assert _lines(check)[1] == _mismatch("6.4 GB/s", REV2, "6.4 TB/s (6400 GB/s)")


def test_1_the_review_fails_a_value_moved_under_its_quote_and_re_locked(mine: Path) -> None:
    _bandwidth(mine, "7", "assumed", REV2)
    _ok(_run(mine, "lock", "--update", "hx1s"))
    done = _run(mine, "diff", "HEAD")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("❌ passprice diff: HEAD (")
    assert "1 fact's quotes state another figure than its own" in lines[1]
    assert ("passprice: refused: 1 fact's quotes state another figure than its own (hx1:memory.bandwidth): the "
            "value and the words it cites disagree; quote the words of the document stating the value, or set the "
            "value they state") in done.stderr.splitlines()


def test_1_the_shipped_registry_quotes_hold_and_its_one_basis_estimate_says_so() -> None:
    # Counted before the rule: of every shipped fact (all provenances), the rule without its Basis:/Estimate: word
    # flags one, the llama.cpp stack's memory.reserved, an estimate quoting the buffers it rests on; its note opens
    # "Estimate:", so it holds as shipped, and the shipped check has no quote problem.
    from passprice.lineage import load_records, quote_problems
    from passprice.registry import find_root
    from passprice.sources import figures_quoted, quotes_basis, read_sources, stored_texts

    root = find_root(TOP)
    assert quote_problems(root) == []
    records = load_records(root, stacks=True)[0]
    sources = read_sources(root)[0]
    facts = [(f"{r.file.name}: {p}", f) for r in records for p, f in r.facts.items()]
    texts = stored_texts(root, sources, [s for s, v in sources.items() if v.excerpt is not None])
    based = [name for name, f in facts if quotes_basis(f) and figures_quoted(attrs.evolve(f, note=None), texts)]
    assert based == ["llamacpp-cuda-2405.toml: memory.reserved"]


def test_2_an_excerpt_edited_away_from_its_document_fails_check_naming_both(mine: Path) -> None:
    path = mine / EXCERPT
    path.write_text(path.read_text(encoding="utf-8").replace("6.4 TB/s", "6.5 TB/s"), encoding="utf-8")
    _pin_excerpt(mine)
    done = _run(mine, "check")
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    lines = _lines(done)
    assert lines[0].endswith(": 2 problems"), lines[:3]
    excerpt_line = (f"  {SOURCE}: source.excerpt: {EXCERPT} holds 1 line NOT FOUND in {DOCUMENT}, the document it "
                    "copies (source.path): 'Peak Memory Bandwidth, revision 2 (faster HBM3E bins) 6.5 TB/s': copy "
                    "the lines from the document again (and pin the excerpt's sha256 anew), or restore the document")
    assert excerpt_line in lines
    # 3. the quote NOT FOUND is shown whole, its "/s" too
    assert (f"  {CARD}: memory.bandwidth: its quotes of hx1-design are NOT FOUND in its stored excerpt {EXCERPT} (0 "
            f"of 1 quoted span found in the stored text; not in it: '{REV2}'): restore the quoted words there, or "
            "quote the words it holds") in lines
    review = _run(mine, "diff", "HEAD")
    assert review.returncode == 1
    assert excerpt_line.strip() in review.stdout


def test_2_the_document_edited_under_its_excerpt_fails_check_too(mine: Path) -> None:
    path = mine / DOCUMENT
    path.write_text(path.read_text(encoding="utf-8").replace("6 TB/s", "6.2 TB/s"), encoding="utf-8")
    done = _run(mine, "check")
    assert done.returncode == 1
    assert (f"  {SOURCE}: source.excerpt: {EXCERPT} holds 1 line NOT FOUND in {DOCUMENT}, the document it copies "
            "(source.path): 'Peak Memory Bandwidth 6 TB/s': copy the lines from the document again (and pin the "
            "excerpt's sha256 anew), or restore the document") in _lines(done)
    # blanks are read as a quote's are: a line re-wrapped in the document is still there
    path.write_text("# HX1   design\n\nPeak Memory\nBandwidth 6 TB/s\n" + REV2 + "\n", encoding="utf-8")
    _ok(_run(mine, "check"))


def test_3_a_long_quote_not_found_is_shown_whole() -> None:
    from passprice.sources import _whole

    assert _whole(REV2) == repr(REV2)
    assert _whole("x" * 301) == repr("x" * 300) + "…"


def test_4_a_failed_check_says_its_stderr_problem_again_before_its_last_line(mine: Path) -> None:
    path = mine / LOCK
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"(?m)^tokens_per_s = .*$", "tokens_per_s = 2900.0", text, count=1), encoding="utf-8")
    done = _run(mine, "check")
    assert done.returncode == 2
    said = [line for line in done.stderr.splitlines() if "lock.digest" in line]
    assert len(said) == 1 and said[0].startswith(f"passprice: error: {LOCK}: lock.digest: the lock's contents do "
                                                 "not match its digest sha256:")
    tail = done.stdout.splitlines()[-3:]
    assert tail[0] == "problems, as listed at the top (1, 1 of them on stderr):"
    assert tail[1] == "  " + said[0].removeprefix("passprice: error: ")
    assert tail[2] == "check FAILED"


def test_5_audit_says_why_each_step_of_uniform_hot_share_is_refused() -> None:
    done = _run(TOP, "audit", "gpt-oss-20b-h200")
    _ok(done)
    lines = done.stdout.splitlines()
    at = lines.index("  refused: not measured, since 1 % higher and 1 % lower are both refused: routing.hot_share "
                     "(BadRouting); the price itself is not refused and rests on the fact as written")
    assert lines[at + 1] == (
        "  routing.hot_share: 1 % higher refused: routing uniform does not fit this checkpoint: shares must be in "
        "(0, 1]: hot_experts 1, hot_share 1.01; 1 % lower refused: routing uniform does not fit this checkpoint: "
        "every expert is in the hot set (hot_experts 1) but it takes only 0.99 of the slots, so while hot_experts "
        "is 1 no value of hot_share but 1 is a routing (the routing is uniform whatever hot_share says): "
        "routing.hot_experts' row measures the skew")
    # the fact refused one way is measured the other, as before
    assert ("  (−1 %): measured with the fact 1 % lower, since 1 % higher is refused: routing.hot_experts "
            "(BadRouting)") in lines
