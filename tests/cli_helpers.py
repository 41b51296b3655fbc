"""Running passprice's command line in tests: in-process (click's runner), asserting no Python traceback escapes,
and the three outcomes a command may have — a result, a named refusal (exit 1), bad input (exit 2, one
``passprice: error:`` line per problem)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from passprice.cli import cli

REPO = Path(__file__).resolve().parent.parent


def invoke(*args: str, root: Path = REPO) -> Result:
    """``passprice --root ROOT ARGS…`` in-process; any Python exception other than an exit fails the test."""
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback for {args}: {result.exception!r}\n{result.output}"
    )
    return result


def bad(*args: str, root: Path = REPO, says: str | Sequence[str] = ()) -> list[str]:
    """Run a command that must fail as bad input: exit 2, nothing on stdout, only ``passprice: error:`` lines on
    stderr (one per problem, no usage block), containing each of ``says`` in order; the lines."""
    result = invoke(*args, root=root)
    assert result.exit_code == 2, f"exit {result.exit_code} for {args}:\n{result.output}"
    assert result.stdout == "", result.stdout
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("passprice: error: ") for line in lines), result.stderr
    wanted = [says] if isinstance(says, str) else list(says)
    assert len(lines) >= len(wanted), result.stderr
    for line, want in zip(lines, wanted, strict=False):
        assert want in line, f"{want!r} not in {line!r}"
    return lines


def refused(*args: str, root: Path = REPO, name: str) -> dict[str, Any]:
    """Run a pricing command the model must refuse by ``name``: exit 1, ``{"refusal": NAME, …}`` on stdout, one
    ``passprice: refused:`` line on stderr."""
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == 1, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    assert out["refusal"] == name, out
    assert result.stderr.startswith("passprice: refused: ") and len(result.stderr.splitlines()) == 1
    return out


def copy_root(tmp_path: Path) -> Path:
    """A private copy of the checkout's facts, registry and locks, to break and to write into."""
    root = tmp_path / "root"
    root.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(REPO / folder, root / folder)
    return root
