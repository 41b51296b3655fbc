"""A review's NOT FOUND that could be hidden (issue 13), each hole kept as its reproducer, built in a git copy.

1. One bound (:class:`passprice.sources.Lookups`: 512 spans, 64 MiB then; 2,236 and 128 MiB since
   tests/test_bound147.py) served a review's changed facts in file
   order, so a pull request spending it on found junk quotes of the H200 card (sorting first) left the RTX 4090's
   NOT FOUND quote "not checked … past the 512" and the review passed. Now the review counts what its checks would
   look up first and, past the bound, looks up none (whichever file sorts first) and fails, saying how many spans of
   how many facts were not checked and why; a rewritten excerpt's checks of its citing facts likewise.
2. A rewritten stored excerpt that lost a citing fact's quote (``quotes_lost``: NOT FOUND on HEAD, found on BASE)
   was "to verify", not counted in the ``N quotes NOT FOUND`` headline, exit 0. Now it is counted and fails the
   review, as a changed fact's NOT FOUND does: ``audit`` of HEAD says NOT FOUND of a price resting on it.
3. ``--format json``'s ``head_check`` listed ``check``'s file-review lines alone where the text counted the lock
   file that does not read too (tests/test_walk138.py): now it lists that lock's lines as well.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke, repin_excerpt

H200 = "facts/cards/h200_sxm_141gb.toml"
EXCERPT = "sources/excerpts/cite102-excerpt.txt"
RTX = "facts/cards/rtx_4090.toml"
RTX_QUOTE = "'1MiB / 24564MiB'"


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


def _edit(root: Path, path: str, old: str, new: str) -> None:
    text = (root / path).read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    (root / path).write_text(text.replace(old, new), encoding="utf-8")


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
    """Each locator of the H200 card citing its product page quotes the first ``count`` spans of
    :func:`_found_spans` (each found: a quote NOT FOUND would fail the review on its own)."""
    quoted = " ".join(f"'{s}'" for s in _found_spans(root)[:count])
    card = root / H200
    text, n = re.subn(r'(?m)^(source = "nvidia-h200-product-page"\nlocator = ).*$',
                      lambda m: f'{m.group(1)}"{quoted}"', card.read_text(encoding="utf-8"))
    assert n == 8
    card.write_text(text, encoding="utf-8")


def _review(root: Path) -> tuple[dict[str, object], object]:
    said = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=root).stdout)
    checks = {f"{f['name']}:{c['path']}": c.get("quote_check") for f in said["files"] for c in f.get("facts", [])}
    return said, checks


# --- (1) the bound spent on junk quotes ------------------------------------------------------------------------------


def _grown(root: Path) -> None:
    """BASE's H200 page excerpt with a line 69 of 120,000 letters ``a`` after its last, re-pinned and committed: its
    two forms 584 + 1 + 120,000 and 501 + 120,000 characters, 241,086 a look-up, where the 60,000 of a shipped
    excerpt's let 2,236 look-ups in under the review's 128 MiB (tests/test_bound147.py)."""
    path = root / EXCERPT
    path.write_text(path.read_text(encoding="utf-8") + f"69\t{'a' * 120_000}\n", encoding="utf-8")
    repin_excerpt(root, EXCERPT)
    _git(root, "commit", "-qam", "the excerpt grown")


def test_1_junk_quotes_past_the_bound_fail_the_review_and_hide_nothing(repo: Path) -> None:
    _grown(repo)
    # 80 spans × the 8 facts of the H200 card citing the page (649) and the RTX's 1: 649 × 241,086 + 60,000 =
    # 156,524,814 characters, past the 134,217,728 (128 MiB; the 512 spans were the bound before)
    _junk(repo, 80)
    _edit(repo, RTX, RTX_QUOTE, "'1MiB / 24565MiB'")  # NOT FOUND in its excerpt, a card sorting after the H200's
    _git(repo, "commit", "-qam", "junk quotes, then a wrong one")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output  # was 0: the RTX 4090's quote "not checked … past the 512"
    said, checks = _review(repo)
    assert said["exit_status"] == 1
    unchecked = said["quotes_unchecked"]
    assert isinstance(unchecked, list) and "rtx_4090:memory.capacity" in unchecked
    # none looked up, whichever file sorts first: every checked fact's spans are past the bound
    assert all(c["found"] == 0 and not c["missing"] for c in checks.values() if c is not None)
    # 80 spans × 8 facts, 9 quoted by their derivations' inputs citing the page, the RTX's 1: none looked up
    assert [c["past"] for c in checks.values() if c is not None] == [80, 80, 81, 81, 81, 82, 82, 82, 1]
    assert len(unchecked) == 9
    assert "facts' quotes not checked (past the review's bound)" in str(said["summary"])
    reason = [line for line in result.stderr.splitlines() if "quotes not checked:" in line]
    assert len(reason) == 1, result.stderr
    assert reason[0].startswith("passprice: refused: quotes not checked: 650 quoted spans of 9 facts "
                                "(h200_sxm_141gb:memory.capacity, "), reason[0]
    assert reason[0].endswith(", rtx_4090:memory.capacity) not looked up in their stored excerpts, the review's "
                              "look-ups past their bound (2,236 spans, 128 MiB of stored text; none is looked up then, "
                              "whichever file sorts first): a quote not checked may be NOT FOUND; split the change, "
                              "or run `passprice audit --source ID` on each source they cite"), reason[0]


def test_1_under_the_bound_the_late_fact_s_not_found_fails_the_review(repo: Path) -> None:
    _grown(repo)
    _junk(repo, 20)  # 169 spans of the page (160 and 9 inputs'): 40,743,534 characters, and the RTX's 60,000: all
    _edit(repo, RTX, RTX_QUOTE, "'1MiB / 24565MiB'")
    _git(repo, "commit", "-qam", "a few found quotes, then a wrong one")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output
    said, checks = _review(repo)
    assert said["quotes_unchecked"] == []
    rtx = checks["rtx_4090:memory.capacity"]
    assert isinstance(rtx, dict) and rtx["state"] == "NOT FOUND" and rtx["missing"] == ["1MiB / 24565MiB"]
    assert "1 quote NOT FOUND in its stored text" in str(said["summary"])


# --- (2) a rewritten excerpt's lost quotes ---------------------------------------------------------------------------


def test_2_a_quote_the_rewritten_excerpt_lost_is_counted_and_fails(repo: Path) -> None:
    _edit(repo, EXCERPT, "34\t4.8TB/s\n", "34\t4.9TB/s\n")  # the bandwidth row's NVL cell no longer 4.8TB/s
    repin_excerpt(repo, EXCERPT)
    _git(repo, "commit", "-qam", "excerpt rewritten")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output  # was 0: "to verify" alone
    said, _ = _review(repo)
    (source,) = [s for s in said["sources_changed"] if s["id"] == "nvidia-h200-product-page"]
    assert source["quotes_lost"] == ["h200_sxm_141gb:memory.bandwidth"]
    assert source["quotes_unchecked"] == []
    # its one span ('GPU Memory Bandwidth 4.8TB/s 4.8TB/s') counted in the headline
    assert "1 quote NOT FOUND in its stored text" in str(said["summary"]), said["summary"]
    assert ("passprice: refused: 1 fact's quotes NOT FOUND in a stored excerpt the change rewrote, found in BASE's "
            "(h200_sxm_141gb:memory.bandwidth (source nvidia-h200-product-page)): restore the lines they were read "
            "from to the excerpt and re-pin it, or correct the quotes (`passprice audit --source ID` checks each)"
            ) in result.stderr.splitlines(), result.stderr


# --- (3) --json's head_check counts the lock file that does not read ------------------------------------------------


def test_3_json_head_check_lists_what_the_text_counts(repo: Path) -> None:
    card = repo / "facts/cards/h100_sxm5_80gb.toml"
    card.write_text(card.read_text(encoding="utf-8") + "\nbroken = \n", encoding="utf-8")
    _edit(repo, "locks/r1-qwen7b-h200.lock.toml", "tokens_per_s = 996.0966124437687", "tokens_per_s = 1100.0")
    _git(repo, "commit", "-qam", "broken")
    text = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert "HEAD fails passprice check (2 problems):" in text.stdout.splitlines()
    said = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    head_check = said["head_check"]
    assert isinstance(head_check, list) and len(head_check) == 2, head_check  # was 1: the card's line alone
    assert head_check[0].startswith("facts/cards/h100_sxm5_80gb.toml: not valid TOML: ")
    assert head_check[1].startswith("locks/r1-qwen7b-h200.lock.toml: lock.digest: the lock's contents do not match ")
    assert said["head_check_left_out"] == 0
