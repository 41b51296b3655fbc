"""Registries that work under Windows' default git (issue 13: the review, audit and reproduce uses).

``check`` and the review refuse, up front, a registry whose git writes CRLF into the files passprice reads byte for
byte (``core.autocrlf=true``, Git for Windows' default, no ``-text`` rule on them). Neither this repository nor a
registry ``passprice init`` made held such a rule, so both were refused there until the user wrote the lines.

1. One list (``gitread.BYTE_EXACT_RULES``): the refusal's example lines, the ``.gitattributes`` init writes (with and
   without ``--examples``) and the one this repository ships are the same.
2. init leaves a user's ``.gitattributes`` alone (at a repository's top) and says which lines it lacks.
3. A registry in a subfolder of its repository: the advice names ``sub/.gitattributes`` (its patterns are relative to
   its folder); the same lines in the top's file match nothing of ``sub/``.
4. End to end under ``core.autocrlf=true``: a fresh ``init --examples`` committed, ``check`` and ``diff HEAD~1
   HEAD`` pass; a clone of this repository's tree with its ``.gitattributes`` passes ``check``.
5. A ``.gitattributes`` of ``-text`` rules alone is read without running git (a run of git is one the result memo
   cannot keep: a warm ``check`` of this repository's registry took 456 ms of CPU with the file, 22 ms without;
   read by passprice, 25 ms: docs/PERFORMANCE.md).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.gitread import (
    BYTE_EXACT_RULES,
    _unset_text_lines,
    gitattributes_text,
    missing_rules,
    pattern_matches,
    plain_rules,
)
from test_left52 import _git

#: The advice's lines of a refusal, in order.
ADVISED = re.compile(r"`([^`]* -text)`")


@pytest.fixture(autouse=True)
def _no_user_git_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _started(at: Path, *options: str) -> Path:
    """``init`` into ``at`` (a fresh git repository there with ``core.autocrlf=true``), committed."""
    at.mkdir(parents=True)
    _git(at, "init", "-q")
    _git(at, "config", "core.autocrlf", "true")
    result = invoke("init", *options, str(at))
    assert result.exit_code == 0, result.output
    _git(at, "add", "-A")
    _git(at, "commit", "-q", "--no-verify", "-m", "start")
    return at


def _refusal(root: Path) -> str:
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    return line


# --- 1. one list -----------------------------------------------------------------------------------------------------


def test_1_the_file_init_writes_holds_the_rules_one_a_line() -> None:
    text = gitattributes_text()
    rules = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert rules == ["facts/cards/README.md -text", "facts/stacks/README.md -text", "schema/*.json -text",
                     "sources/excerpts/*.txt -text"]
    assert tuple(rules) == BYTE_EXACT_RULES and plain_rules(text.encode()) == [r.split()[0] for r in rules]
    assert missing_rules(text.encode()) == []


def test_1_this_repository_ships_the_same_file() -> None:
    assert (REPO / ".gitattributes").read_text(encoding="utf-8") == gitattributes_text()


@pytest.mark.parametrize("options", [(), ("--examples",)])
def test_1_init_writes_it_and_the_refusal_advises_the_same_lines(tmp_path: Path, options: tuple[str, ...]) -> None:
    root = _started(tmp_path / "mine", *options)
    assert (root / ".gitattributes").read_bytes() == gitattributes_text().encode()
    assert ".gitattributes" in json.loads(invoke("init", "--json", *options, str(tmp_path / "again")).stdout)["files"]
    assert invoke("check", root=root).exit_code == 0
    # The rules removed (a registry init made before): the refusal's lines are the same list.
    _git(root, "rm", "-q", ".gitattributes")
    _git(root, "commit", "-q", "--no-verify", "-m", "no rules")
    line = _refusal(root)
    assert "(core.autocrlf=true, a setting of .git/config, no .gitattributes rule)" in line, line
    assert " or set -text on passprice's files in .gitattributes (" in line, line
    assert tuple(ADVISED.findall(line)) == BYTE_EXACT_RULES


def test_1_a_document_the_rules_miss_gets_a_line_of_its_own() -> None:
    # a kind = "registry" source of the user's citing docs/notes.md: the list, then its own line, sorted
    assert _unset_text_lines(["sources/excerpts/a.txt", "docs/notes.md"]) == (
        "`docs/notes.md -text`, `facts/cards/README.md -text`, `facts/stacks/README.md -text`, "
        "`schema/*.json -text`, `sources/excerpts/*.txt -text`")
    assert _unset_text_lines(["facts/cards/README.md"]) == ", ".join(f"`{r}`" for r in BYTE_EXACT_RULES)
    assert _unset_text_lines(["a b/x.txt"]) == "`* -text`"  # a space a pattern would split at


# --- 2. a user's own .gitattributes ----------------------------------------------------------------------------------


def test_2_a_users_file_at_a_repository_top_is_left_alone_and_told_what_it_lacks(tmp_path: Path) -> None:
    top = tmp_path / "fork"
    top.mkdir()
    _git(top, "init", "-q")
    (top / ".gitattributes").write_text("*.png binary\nfacts/cards/README.md  -text\n", encoding="utf-8")
    result = invoke("init", str(top))
    assert result.exit_code == 0, result.output
    assert (top / ".gitattributes").read_text(encoding="utf-8") == "*.png binary\nfacts/cards/README.md  -text\n"
    assert "left alone (already here; init replaces nothing, so its own are not written): .gitattributes" in (
        result.stdout)
    assert f"passprice: warning: {top}/.gitattributes: left alone (yours), but it lacks facts/stacks/README.md " \
           "-text, schema/*.json -text, sources/excerpts/*.txt -text: add them (init writes them into a new " \
           "registry), or a checkout " \
           "under core.autocrlf true (Git for Windows' default) writes CRLF into the files passprice reads byte for " \
           "byte, and check and the review refuse it" in result.stderr.splitlines(), result.stderr


def test_2_a_users_file_holding_the_rules_draws_no_warning_and_json_says_null(tmp_path: Path) -> None:
    top = tmp_path / "fork"
    top.mkdir()
    _git(top, "init", "-q")
    (top / ".gitattributes").write_text("* text=auto\n" + gitattributes_text(), encoding="utf-8")
    result = invoke("init", "--json", str(top))
    assert result.exit_code == 0 and "warning" not in result.stderr, result.output
    out = json.loads(result.stdout)
    assert out["kept"] == [".gitattributes"] and out["attributes"] is None
    assert ".gitattributes" not in out["files"]


def test_2_outside_a_repository_top_an_existing_file_is_refused_as_any_other(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / ".gitattributes").write_text("x -text\n", encoding="utf-8")
    result = invoke("init", str(tmp_path / "mine"))
    assert result.exit_code == 2 and "already holds .gitattributes;" in result.stderr, result.output
    assert (tmp_path / "mine" / ".gitattributes").read_text(encoding="utf-8") == "x -text\n"


# --- 3. a registry in a subfolder ------------------------------------------------------------------------------------


def test_3_in_a_subfolder_the_advice_names_its_own_file(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "core.autocrlf", "true")
    assert invoke("init", "--examples", str(repo / "sub")).exit_code == 0
    sub = repo / "sub"
    assert (sub / ".gitattributes").read_bytes() == gitattributes_text().encode()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "start")
    assert invoke("check", root=sub).exit_code == 0
    (sub / "facts/cards/README.md").write_text("changed\n", encoding="utf-8")
    _git(repo, "commit", "-q", "--no-verify", "-am", "a change")
    assert invoke("diff", "HEAD~1", "HEAD", root=sub).exit_code == 0
    (sub / ".gitattributes").unlink()
    line = _refusal(sub)
    assert ("or set -text on passprice's files in the registry folder's .gitattributes, sub/.gitattributes from the "
            "repository's top, whose patterns are relative to sub/ (`facts/cards/README.md -text`, ") in line, line
    assert tuple(ADVISED.findall(line)) == BYTE_EXACT_RULES
    # The lines in the top's file match no path of sub/: still refused.
    (repo / ".gitattributes").write_text(gitattributes_text(), encoding="utf-8")
    assert _refusal(sub) == line
    (repo / ".gitattributes").unlink()
    # Where the advice says: check passes; committed, the review too.
    (sub / ".gitattributes").write_text("".join(f"{r}\n" for r in ADVISED.findall(line)), encoding="utf-8")
    assert invoke("check", root=sub).exit_code == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "the advice")
    assert invoke("diff", "HEAD~1", "HEAD", root=sub).exit_code == 0


def test_3_the_review_of_a_subfolder_names_it_too(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert invoke("init", "--examples", str(repo / "sub")).exit_code == 0
    (repo / "sub" / ".gitattributes").unlink()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "start")
    (repo / "sub/facts/cards/README.md").write_text("changed\n", encoding="utf-8")
    _git(repo, "commit", "-q", "--no-verify", "-am", "a change")
    _git(repo, "config", "core.autocrlf", "true")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo / "sub")
    assert result.exit_code == 2, result.output
    [line] = [x for x in result.stderr.splitlines() if "core.autocrlf=true" in x]
    assert "in the registry folder's .gitattributes, sub/.gitattributes from the repository's top" in line, line
    assert tuple(ADVISED.findall(line)) == BYTE_EXACT_RULES


# --- 4. end to end under core.autocrlf=true --------------------------------------------------------------------------


def test_4_a_fresh_registry_checks_and_reviews_under_autocrlf(tmp_path: Path) -> None:
    root = _started(tmp_path / "mine", "--examples")
    assert invoke("check", root=root).exit_code == 0  # was 2: the 15 files, no rule
    (root / "facts/cards/README.md").write_text("changed\n", encoding="utf-8")
    _git(root, "commit", "-q", "--no-verify", "-am", "a change")
    assert invoke("diff", "HEAD~1", "HEAD", root=root).exit_code == 0
    # a clone under the setting: TOML files CRLF (read alike), the files read byte for byte kept
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-c", "core.autocrlf=true", str(root), str(clone)], check=True,
                   capture_output=True)
    assert b"\r\n" in (clone / "requirements.txt").read_bytes()
    for path in [*(clone / "sources/excerpts").iterdir(), clone / "facts/cards/README.md"]:
        assert b"\r\n" not in path.read_bytes(), path
    assert invoke("check", root=clone).exit_code == 0


def test_4_a_clone_of_this_repositorys_tree_passes_check_under_autocrlf(tmp_path: Path) -> None:
    tree = copy_root(tmp_path)
    shutil.copy(REPO / ".gitattributes", tree / ".gitattributes")
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "--no-verify", "-m", "tree")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-c", "core.autocrlf=true", str(tree), str(clone)], check=True,
                   capture_output=True)
    assert b"\r\n" in (clone / "facts/cards/h200_sxm_141gb.toml").read_bytes()  # converted: TOML reads alike
    result = invoke("check", root=clone)
    assert result.exit_code == 0, result.output
    (clone / ".gitattributes").unlink()  # the yardstick: without the shipped rules, refused
    assert tuple(ADVISED.findall(_refusal(clone))) == BYTE_EXACT_RULES


# --- 5. -text rules alone are read without git -----------------------------------------------------------------------


def test_5_plain_rules_and_what_they_match() -> None:
    assert plain_rules(b"# a comment\n\n/sources/x/*.txt\t-text\r\nREADME.md -text\n") == ["/sources/x/*.txt",
                                                                                             "README.md"]
    for other in (b"x text\n", b"x -text eol=lf\n", b"x ident\n", b"**/x -text\n", b"x? -text\n", b"!x -text\n",
                  b"[attr]m -text\n", b'"x y" -text\n', b"\xef\xbb\xbfx -text\n", b"\xff -text\n"):
        assert plain_rules(other) is None, other
    assert pattern_matches("sources/excerpts/*.txt", "sources/excerpts/a.txt")
    assert not pattern_matches("sources/excerpts/*.txt", "sub/sources/excerpts/a.txt")  # anchored at its folder
    assert not pattern_matches("sources/*.txt", "sources/excerpts/a.txt")  # * stays within one name
    assert pattern_matches("README.md", "facts/cards/README.md")  # no slash: the last name, at any depth
    assert pattern_matches("/README.md", "README.md") and not pattern_matches("/README.md", "facts/README.md")


def _git_runs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    started: list[Any] = []
    real = subprocess.Popen

    class Counted(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **named: Any) -> None:
            if "git" in str(args[0]):
                started.append(args)
            super().__init__(args, *rest, **named)

    monkeypatch.setattr(subprocess, "Popen", Counted)
    return started


def test_5_check_runs_no_git_for_the_rules_init_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _started(tmp_path / "mine")
    runs = _git_runs(monkeypatch)
    assert invoke("check", root=root).exit_code == 0
    assert runs == []
    (root / ".gitattributes").write_text(gitattributes_text() + "*.toml ident\n", encoding="utf-8")
    result = invoke("check", root=root)  # a rule that rewrites: git asked, the rule named
    assert result.exit_code == 2 and "(ident, a rule of .gitattributes)" in result.stderr, result.output
    assert runs
