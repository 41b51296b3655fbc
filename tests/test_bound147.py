"""A review's look-up bound (issue 13), each case kept as its reproducer, built in a copy (git where a review needs it).

1. The bound (:class:`passprice.sources.Lookups`) was 512 spans and 64 MiB of stored text: a pull request adding 63
   copies of a card (1,008 quoted spans, tests/test_hostile_55.py) or 100 files (900, tests/test_hostile_32.py)
   failed its review, its quotes "not checked". What bounds the time is the characters searched: each search is
   linear in them now whatever the span (:func:`passprice.sources._within` searches a text of at least
   :data:`passprice.sources.LINEAR_FROM` characters, where CPython's simple search compared a span of 6 to 99
   characters at every place of a shorter text full of its last character, 20 ns a character), and a look-up of a
   shipped excerpt counts 60,000 characters against 128 MiB: 2,236 spans of them, a review of 89 copies of a card
   (2,225 spans looked up) passes, 90 (2,250) fail, saying so.
2. A review's changed facts and its rewritten excerpts' checks each had a bound of their own (up to twice the
   bound a review); now one for the whole review: the changed facts' checks first, then the excerpts' with what
   they left. A rewritten excerpt's checks past it fail the review, naming the facts not looked up.
3. A lock file that does not read on HEAD was listed under its file and again under what HEAD fails ``check`` on;
   now once (the HEAD check's count keeps it, saying where it is listed).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke, repin_excerpt

H200 = "facts/cards/h200_sxm_141gb.toml"
EXCERPT = "sources/excerpts/cite102-excerpt.txt"
PAGE = "nvidia-h200-product-page"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git registry (priced by the running package), its first commit the checkout's."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


# --- (1) the bound: the characters searched ---------------------------------------------------------------------------


def test_1_the_bound_is_2_236_look_ups_of_a_shipped_excerpt() -> None:
    from passprice.registry import find_root
    from passprice.sources import LINEAR_FROM, QUOTES_MOST, SEARCHED_MOST, Lookups, read_sources, stored_text

    assert (LINEAR_FROM, SEARCHED_MOST) == (30_000, 134_217_728)
    assert QUOTES_MOST == 2_236 == 134_217_728 // 60_000
    assert (Lookups().spans, Lookups().chars) == (2_236, 134_217_728)
    root = find_root(REPO)
    records = read_sources(root)[0]
    texts = [stored_text(root, s) for s in records.values() if s.excerpt is not None]
    assert len(texts) >= 20  # 23 records name one of 13 files
    # every shipped excerpt's forms are under 30,000 characters (the largest file 19,590 bytes): 60,000 a look-up
    assert {t.searched_size() for t in texts if t.flat is not None} == {60_000}


def test_1_a_large_text_counts_its_forms() -> None:
    from passprice.sources import StoredText

    ones = "1 " * 450_000
    stored = StoredText("s", "e", text=ones, flat=ones.strip())
    # marked: 450,000 ones, 449,999 blanks and two marks a one; with the blanks taken out: 1,350,000
    assert stored.searched_size() == 1_799_999 + 1_350_000
    assert 134_217_728 // 3_149_999 == 42  # look-ups of it one command makes
    small = StoredText("s", "e", text="a" * 29_999, flat="a" * 29_999)
    assert small.searched_size() == 60_000  # each form counted at 30,000
    big = StoredText("s", "e", text="a" * 30_001, flat="a" * 30_001)
    assert big.searched_size() == 60_002


@pytest.mark.parametrize("span", ["a" * 97 + "ba", "a" * 98, "a" * 29_999, "a" * 30_000, "a\x01", "\x01a"])
def test_1_the_padded_search_finds_what_the_text_holds(span: str) -> None:
    # the pad (the barrier character) holds no span: a span found in the padded text is in the text itself
    from passprice.sources import StoredText

    stored = StoredText("s", "e", text="a" * 29_999, flat="a" * 29_999)
    assert stored.holds(span) is (span.replace("\x01", "") in "a" * 29_999 and len(span.strip("\x01")) <= 29_999)


def test_1_the_padded_search_agrees_with_the_plain_one_on_the_shipped_excerpts() -> None:
    from passprice.registry import find_root
    from passprice.sources import _searched, read_sources, stored_text

    root = find_root(REPO)
    chooser = random.Random(147)
    compared = 0
    for record in sorted(read_sources(root)[0].values(), key=lambda s: s.id):
        stored = stored_text(root, record)
        if stored.flat is None or len(stored.flat) < 40:
            continue
        marked, tight = _searched(stored.flat)
        for _ in range(60):
            at = chooser.randrange(len(stored.flat) - 30)
            span = stored.flat[at:at + chooser.randint(1, 30)]
            if chooser.random() < 0.3:
                span = span[:-1] + chooser.choice("xz1.")  # one perhaps not in it
            wanted, wanted_tight = _searched(" ".join(span.replace("\x01", " ").split()))
            plain = bool(wanted) and (wanted in marked or wanted_tight in tight)
            assert stored.holds(span) is plain, (record.id, span)
            compared += 1
    assert compared >= 1_000


def _copies(base: Path, head: Path, count: int) -> None:
    """HEAD's acme_x100 card (tests/test_leftovers_30b.py) and ``count - 1`` copies of it, each quoting 27 spans, 25
    of a shipped excerpt (the other two cite documents with no stored text: not looked up)."""
    text = (head / "facts" / "cards" / "acme_x100.toml").read_text(encoding="utf-8")
    for i in range(1, count):
        (head / "facts" / "cards" / f"acme_y{i:03d}.toml").write_text(
            text.replace('name = "Acme X100"', f'name = "Acme Y{i:03d}"', 1), encoding="utf-8")


def test_1_a_review_of_2_225_look_ups_passes_and_of_2_250_fails(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from test_leftovers_30b import _acme

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    base, head = _acme(tmp_path)
    _copies(base, head, 89)  # 89 × 25 = 2,225 look-ups, each of 60,000 characters: 133,500,000
    result = invoke("diff", str(base), str(head), "--format", "json", root=head)
    said = json.loads(result.stdout)
    assert result.exit_code == 0, (said["summary"], result.stderr)  # 63 copies failed before (64 MiB, 512 spans)
    assert said["quotes_unchecked"] == []
    checks = [c["quote_check"] for f in said["files"] for c in f.get("facts", []) if c.get("quote_check")]
    assert sum(c["spans"] for c in checks) == 89 * 27
    assert sum(c["found"] for c in checks) == 89 * 25 and {c["past"] for c in checks} == {0}
    _copies(base, head, 90)  # 2,250 look-ups: past the 2,236
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 1, result.output
    # 17 facts a card, 16 to verify; 14 of them quote a stored excerpt
    assert result.stdout.splitlines()[1] == (
        "1,530 facts added in 90 new files, 1,440 to verify in their sources (1,440 copied citations: each cites what "
        "another card's fact cites); 1,260 facts' quotes not checked (past "
        "the review's bound); 1 source added; no lock affected; 455 warnings of check on HEAD; 10 locks unaffected")
    # 455 warnings: 90 notes kept from acme_x100 (89 copies and the H200), 4 measured facts of each of the 91 cards
    # citing the same place as another card's, and the retrieved "unknown" line (tests/test_fix154.py)
    (reason,) = [line for line in result.stderr.splitlines() if "quotes not checked:" in line]
    assert reason.startswith("passprice: refused: quotes not checked: 2,250 quoted spans of 1,260 facts "
                             "(acme_x100:"), reason
    assert reason.endswith(" not looked up in their stored excerpts, the review's look-ups past their bound (2,236 "
                           "spans, 128 MiB of stored text; none is looked up then, whichever file sorts first): a "
                           "quote not checked may be NOT FOUND; split the change, or run `passprice audit --source "
                           "ID` on each source they cite"), reason


# --- (2) one bound for the whole review -------------------------------------------------------------------------------


def _found_spans(root: Path) -> list[str]:
    """Every run of whole words of a line of the H200 page's stored excerpt (each is found in it), shortest first."""
    spans = set()
    for line in (root / EXCERPT).read_text(encoding="utf-8").splitlines():
        m = re.match(r"\d+\t(.*)", line)
        if m:
            words = m.group(1).split()
            spans |= {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}
    return sorted((s for s in spans if "'" not in s and '"' not in s and "\\" not in s), key=lambda s: (len(s), s))


def _junk(root: Path, count: int) -> None:
    """Each of the 8 locators of the H200 card citing its product page quotes the first ``count`` spans of
    :func:`_found_spans` (each found)."""
    quoted = " ".join(f"'{s}'" for s in _found_spans(root)[:count])
    card = root / H200
    text, n = re.subn(r'(?m)^(source = "nvidia-h200-product-page"\nlocator = ).*$',
                      lambda m: f'{m.group(1)}"{quoted}"', card.read_text(encoding="utf-8"))
    assert n == 8
    card.write_text(text, encoding="utf-8")


def _grow_excerpt(root: Path, letters: int) -> None:
    """The H200 page's excerpt with a line 69 of ``letters`` letters ``a`` after its last (68), re-pinned."""
    path = root / EXCERPT
    path.write_text(path.read_text(encoding="utf-8") + f"69\t{'a' * letters}\n", encoding="utf-8")
    repin_excerpt(root, EXCERPT)


def test_2_the_changed_facts_and_the_rewritten_excerpt_share_one_bound(repo: Path) -> None:
    from passprice.registry import Root
    from passprice.sources import read_sources, stored_text

    _junk(repo, 80)  # 649 spans of the page: 80 × 8, 9 quoted by their derivations' inputs
    _grow_excerpt(repo, 54_457)
    # its forms: 584 + 1 + 54,457 (marked) and 501 + 54,457 (blanks out): 110,000 characters a look-up
    assert stored_text(Root(repo), read_sources(Root(repo))[0][PAGE]).searched_size() == 110_000
    _git(repo, "commit", "-qam", "80 found quotes a locator, the excerpt rewritten")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    # the changed facts' checks: 649 × 110,000 = 71,390,000 of the 134,217,728, each found; the rewritten
    # excerpt's checks of the same facts, HEAD's and BASE's excerpt: 649 × (110,000 + 60,000) = 110,330,000, past
    # the 62,827,728 left (each bound its own, they were looked up: 110,330,000 under 134,217,728)
    assert result.exit_code == 1, result.output
    said = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    checks = {f"{f['name']}:{c['path']}": c.get("quote_check") for f in said["files"] for c in f.get("facts", [])}
    quoted = [c for c in checks.values() if c is not None]
    assert sum(c["found"] for c in quoted) == 649 and {c["past"] for c in quoted} == {0}
    (source,) = [s for s in said["sources_changed"] if s["id"] == PAGE]
    assert len(source["quotes_unchecked"]) == 8 and all(p.startswith("h200_sxm_141gb:") for p in
                                                        source["quotes_unchecked"])
    assert source["quotes_lost"] == []
    assert said["quotes_unchecked"] == source["quotes_unchecked"]
    assert "8 facts' quotes not checked (past the review's bound)" in str(said["summary"])
    (reason,) = [line for line in result.stderr.splitlines() if "quotes not checked:" in line]
    assert reason.startswith(
        "passprice: refused: quotes not checked: 649 quoted spans of 8 facts (h200_sxm_141gb:"), reason


def test_2_a_rewritten_excerpt_s_checks_past_the_bound_fail_the_review(repo: Path) -> None:
    _junk(repo, 80)  # 649 spans of the page, BASE's: found in BASE's excerpt, 60,000 a look-up
    _git(repo, "commit", "-qam", "80 found quotes a locator")
    _grow_excerpt(repo, 200_000)  # 201,086 + 200,501 (see above): 401,087 characters a look-up of HEAD's
    _git(repo, "commit", "-qam", "the excerpt rewritten")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    # no fact changed: the excerpt's checks alone, 649 × (401,087 + 60,000) = 299,245,463, past the 134,217,728
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[1].startswith(
        "no fact changed; 8 facts' quotes not checked (past the review's bound); 1 source record changed; 1 source "
        "whose document changed, to verify"), result.stdout.splitlines()[1]
    (reason,) = [line for line in result.stderr.splitlines() if "quotes not checked:" in line]
    assert reason == (
        "passprice: refused: quotes not checked: 649 quoted spans of 8 facts (h200_sxm_141gb:memory.capacity, "
        "h200_sxm_141gb:memory.bandwidth, h200_sxm_141gb:vector, h200_sxm_141gb:host.read, h200_sxm_141gb:host.write, "
        "h200_sxm_141gb:tensor.f16, h200_sxm_141gb:tensor.bf16, h200_sxm_141gb:tensor.f8) not looked up in their "
        "stored excerpts, the review's look-ups past their bound (2,236 spans, 128 MiB of stored text; none is looked "
        "up then, whichever file sorts first): a quote not checked may be NOT FOUND; split the change, or run "
        "`passprice audit --source ID` on each source "
        "they cite"), reason
    said = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    assert said["exit_status"] == 1
    (source,) = [s for s in said["sources_changed"] if s["id"] == PAGE]
    assert len(source["quotes_unchecked"]) == 8 and source["quotes_lost"] == []


# --- (3) a lock file that does not read, listed once ------------------------------------------------------------------


NOT_A_LOCK = ("not a lock file (no [lock] table; it is some other file): a lock is locks/NAME.lock.toml, written by "
              "`passprice lock SERVING`")


def test_3_a_lock_file_that_does_not_read_is_listed_once(repo: Path) -> None:
    for i in range(5):
        (repo / "locks" / f"u{i}.lock.toml").write_text(f"x = {i}\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "five files that are no locks")
    text = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert text.exit_code == 2, text.output
    lines = text.stdout.splitlines()
    # was 10: under each file, and again under HEAD's check
    assert [line.strip() for line in lines if NOT_A_LOCK in line] == [
        f"locks/u{i}.lock.toml: {NOT_A_LOCK}" for i in range(5)]
    at = lines.index("HEAD fails passprice check (5 problems):")  # each still counted
    assert lines[at + 1] == ("  5 problems listed above, under the lock files that do not read (locks/u0.lock.toml, "
                             "locks/u1.lock.toml, locks/u2.lock.toml and 2 more)")
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout
    assert sum(NOT_A_LOCK.replace("[", "\\[").replace("]", "\\]") in line for line in markdown.splitlines()) == 5
    assert ("- 5 problems listed below (Files that do not read), under the lock files that do not read "
            "(locks/u0.lock.toml, locks/u1.lock.toml, locks/u2.lock.toml and 2 more)") in markdown.splitlines()
    said = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    assert said["head_check"] == [f"locks/u{i}.lock.toml: {NOT_A_LOCK}" for i in range(5)]  # --json lists each
