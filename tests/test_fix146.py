"""A new user's findings (README only) on issue 13, each reproduced here.

1. ``.gitattributes`` ``sources/excerpts/*.txt text eol=crlf`` (or ``* text=auto eol=crlf``) was passed by ``check``
   and unnamed by the review; committed, a fresh checkout wrote CRLF bytes, the pins mismatched, and ``check``'s
   advice "restore it (git checkout -- …)" wrote the same CRLF bytes again. The rule is refused by name on the stored
   excerpts and documents (read byte for byte), and a pin mismatch that is line ends alone says what to remove first.
2. An entry's file renamed (``mv …/deepseek-r1-distill-qwen-7b-q4_k_m.toml …/r1.toml``, its ``[entry] name`` kept):
   ``reproduce``'s verdict said the pinned checkpoint "is gone", its refusal "no entry of this registry holds its
   pinned checkpoint", and its hint said to copy passprice's own entry in (registering it twice).
3. ``explain BadContexts`` said "a class's mean position is past its limit"; one at its limit is refused too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

EXCERPT = "sources/excerpts/cite102-excerpt.txt"
R1 = "deepseek-r1-distill-qwen-7b-q4_k_m"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry, its first commit the checkout's registry (no rules)."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _excerpts(root: Path) -> int:
    """How many stored excerpts the registry holds (each named by a record)."""
    return len(list((root / "sources/excerpts").glob("*.txt")))


def _refusal(more: int, where: str = "") -> str:
    at = f" {where}" if where else ""
    return (f"{EXCERPT} and {more} more files{at}: git writes their line ends as CRLF in a checkout (eol=crlf, a rule "
            f"of .gitattributes{at}), so a checkout's bytes are not the committed bytes a review reads "
            "(and `git checkout` writes them so again); remove the rule for passprice's files (or set -text on "
            "them)")


# --- (1) a line-end rule on the stored excerpts -----------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["sources/excerpts/*.txt text eol=crlf", "sources/excerpts/*.txt eol=crlf"])
def test_1_check_refuses_a_crlf_rule_on_the_excerpts(repo: Path, rule: str) -> None:
    assert _excerpts(repo) == 13
    (repo / ".gitattributes").write_text(f"{rule}\n", encoding="utf-8")
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output  # was 0, "all holds"
    assert f"passprice: error: {_refusal(12)}" in result.stderr.splitlines(), result.stderr


def test_1_check_refuses_a_crlf_rule_on_every_file_on_the_documents_too(repo: Path) -> None:
    (repo / ".gitattributes").write_text("* text=auto eol=crlf\n", encoding="utf-8")
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output  # was 0, "all holds"
    # the 13 excerpts and the 2 documents sources name that are no TOML file (facts/cards/README.md,
    # facts/stacks/README.md); the 3 TOML documents (a card, a draft, a routing record) read alike with CRLF
    assert ("passprice: error: facts/cards/README.md and 14 more files: git writes their line ends as CRLF in a "
            "checkout (eol=crlf, a rule of .gitattributes)") in result.stderr, result.stderr


@pytest.mark.parametrize("rule", ["sources/excerpts/*.txt text eol=lf", "sources/excerpts/*.txt -text eol=crlf",
                                  "sources/excerpts/*.txt binary", "* text=auto",
                                  "facts/cards/*.toml text eol=crlf"])
def test_1_a_rule_leaving_the_excerpts_bytes_is_no_problem(repo: Path, rule: str) -> None:
    # LF line ends stay LF; -text/binary convert nothing; a card's line ends are read alike by TOML
    (repo / ".gitattributes").write_text(f"{rule}\n", encoding="utf-8")
    result = invoke("check", root=repo)
    assert result.exit_code == 0, result.output


def test_1_the_review_refuses_a_committed_crlf_rule(repo: Path) -> None:
    (repo / ".gitattributes").write_text("sources/excerpts/*.txt text eol=crlf\n", encoding="utf-8")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "line ends")
    head = _git(repo, "rev-parse", "HEAD")[:12]
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 2, result.output  # was 0: no changes named
    assert f"passprice: error: {_refusal(12, f'at {head}')}" in result.stderr.splitlines(), result.stderr


def test_1_a_fresh_checkout_is_told_what_to_remove_before_restoring(repo: Path, tmp_path: Path) -> None:
    (repo / ".gitattributes").write_text("sources/excerpts/*.txt text eol=crlf\n", encoding="utf-8")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "line ends")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True)
    data = (clone / EXCERPT).read_bytes()
    assert b"\r\n" in data and data.replace(b"\r\n", b"\n") == (repo / EXCERPT).read_bytes()
    (clone / ".gitattributes").unlink()  # the rule removed in the work tree alone: git still checks out by the index's
    result = invoke("check", root=clone)
    assert result.exit_code == 2, result.output
    said = [line for line in result.stderr.splitlines() if f"source.excerpt: {EXCERPT}'s sha256" in line]
    assert said, result.stderr
    # was: "…; restore it (`git checkout -- …`), or …, pin it", which wrote the same CRLF bytes again
    assert ("it is the pinned text with CRLF line ends, which git's line-end conversion writes in a checkout (an "
            "eol=crlf or text rule of .gitattributes, or core.autocrlf) and `git checkout` writes again while it "
            "applies; remove that rule or setting for passprice's files (or set -text on them), the .gitattributes "
            f"edit staged (`git add .gitattributes`: a checkout reads the index's rules), then restore it (`rm "
            f"{EXCERPT} && git checkout -- {EXCERPT}`: git passes over a file its index calls unchanged)") in said[0], \
        said[0]
    assert "pin it: excerpt_sha256" not in said[0]
    _git(clone, "checkout", "--", "sources/excerpts")  # what the old advice said: the same bytes again
    assert (clone / EXCERPT).read_bytes() == data
    _git(clone, "add", ".gitattributes")  # the advice followed: the removal staged, then restored
    for path in (clone / "sources/excerpts").iterdir():
        path.unlink()
    _git(clone, "checkout", "--", "sources/excerpts")
    assert (clone / EXCERPT).read_bytes() == (repo / EXCERPT).read_bytes()
    assert invoke("check", root=clone).exit_code == 0


# --- (2) an entry's file renamed, its name kept -----------------------------------------------------------------------


def test_2_a_renamed_entry_file_is_not_called_gone(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "registry/checkpoints" / f"{R1}.toml").rename(root / "registry/checkpoints/r1.toml")
    result = invoke("reproduce", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    # was: "cannot be reproduced here: the pinned checkpoint … is gone (checkpoint, below)"
    assert lines[1] == (f"  cannot be reproduced here: the pinned checkpoint {R1}'s entry is here, its file renamed "
                        "and its [entry] name not, so it does not read (checkpoint, below: the file and what to do)"), \
        lines[1]
    assert any(line.strip().startswith(f"checkpoint     {R1}: no entry of that name; registry/checkpoints/r1.toml "
                                       "still names its entry") for line in lines), lines
    # was: "no entry of this registry holds its pinned checkpoint", then a hint to `cp` passprice's own entry in
    assert result.stderr.splitlines() == [
        "passprice: refused: lock r1-qwen7b-h200 cannot be reproduced here: the entry holding its pinned checkpoint, "
        "registry/checkpoints/r1.toml, does not read (its file's name is not its [entry] name), so no price is made "
        "to compare with the recorded one"], result.stderr
    said = json.loads(invoke("reproduce", "r1-qwen7b-h200", "--json", root=root).stdout)
    assert said["reproduction"] == lines[1].strip()


def test_2_an_entry_gone_is_still_gone(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "registry/checkpoints" / f"{R1}.toml").unlink()
    result = invoke("reproduce", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 1, result.output
    assert ("passprice: refused: lock r1-qwen7b-h200 cannot be reproduced here: no entry of this registry holds its "
            "pinned checkpoint, so no price is made to compare with the recorded one") in result.stderr.splitlines()
    assert "passprice: hint: passprice's own registry holds the checkpoint content" in result.stderr


# --- (3) BadContexts' glossary text -----------------------------------------------------------------------------------


def test_3_bad_contexts_says_a_position_at_its_limit_is_refused() -> None:
    result = invoke("explain", "BadContexts")
    assert result.exit_code == 0, result.output
    assert "past its limit" not in result.stdout  # was: "a class's mean position is past its limit"
    assert ("a class's mean position is not below its limit (at or past it: a pass at a position writes that "
            "position's row, so a sequence allowed N positions holds rows 0 to N-1; raise `--limit` or lower "
            "`--position`)") in result.stdout
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert "mean position is past its limit" not in readme
