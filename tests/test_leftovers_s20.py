"""Session 20's leftovers (issues 13 and 16): each test builds its reproducer and asserts the words, the value and
the exit status.

1. The markdown review escaped ``check``'s lines whole, so the passprice command a line quotes
   (```passprice calibrate --stack S --dry-run```) read as ``\\`passprice calibrate …\\``` with its backslashes; it
   is a code span now, and the rest of the line (names, user text) stays escaped.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import REPO, invoke
from passprice.tables import markdown_prose
from test_diff import commit_all, git

STACK_FILE = "facts/stacks/llamacpp-cuda-2405.toml"


def _registry(path: Path) -> Path:
    """A git registry (the checkout's facts, registry, locks, sources and schema) on branch ``pr`` off ``main``."""
    path.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "the checkout's registry")
    git(path, "checkout", "-q", "-b", "pr")
    return path


def test_a_command_in_a_check_line_is_code_in_the_markdown_review(tmp_path: Path) -> None:
    path = _registry(tmp_path / "registry")
    stack = path / STACK_FILE
    text = stack.read_text(encoding="utf-8")
    stack.write_text(text.replace("[overhead.pass]\nvalue = 0.0\n", "[overhead.pass]\nvalue = 5.0\n"), encoding="utf-8")
    commit_all(path, "a fitted fact edited by hand")
    result = invoke("diff", "main", "--format", "markdown", root=path)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "#### ❌ HEAD fails passprice check (1 problem)" in lines
    line = next(x for x in lines if x.startswith(f"- {STACK_FILE}: overhead.pass: re-fitted"))
    assert line.endswith("review the re-fit with `passprice calibrate --stack llamacpp-cuda-2405 --dry-run`, then "
                         "run it without --dry-run)")
    assert "\\`" not in line  # was: \`passprice calibrate --stack llamacpp-cuda-2405 --dry-run\`


def test_only_passprice_commands_are_code_and_the_rest_stays_escaped() -> None:
    hostile = "`rm -rf` <img src=x> @octocat [a](b) `passprice fact recompute 'a`b <b>'`; see `passprice check`."
    assert markdown_prose(hostile) == (
        "\\`rm -rf\\` &lt;img src=x&gt; @&#8203;octocat \\[a\\](b) ``passprice fact recompute 'a`b <b>'``; see "
        "`passprice check`."
    )
    assert markdown_prose("no `passprice` close") == "no `passprice` close"
    assert markdown_prose("`passprice\nx` as `passprice_x`") == "`passprice x` as \\`passprice_x\\`"
