"""Attack105 (issue 13): hostile input against session 44's merges, each escape's reproducer built in its test.

- (1) A source record's stored excerpt (``source.excerpt``, trace96) was printed by ``audit --source`` as "the text
  read, from the registry's top folder" whatever was there: in a registry made by ``passprice init`` (which copied
  the records, not the files) and in the installed package's (whose wheel carried ``sources/``, not ``tests/data/``)
  all 21 records named a file that was not there; a FIFO, a folder, a link out of the registry or nothing at all
  was named the same way, exit 0. Now ``init`` copies each excerpt a record names (byte-equal, at its path), the
  wheel carries them (``pyproject.toml``'s force-include), and ``audit --source`` says in the excerpt's line what is
  wrong with one that is not a regular file of the registry (:func:`passprice.registry.document_problem`, the test
  ``source.path`` gets), still exit 0: the rest of the audit holds.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

HANDBOOK = "gpu-container-handbook-routing-derisk"
EXCERPT = "tests/data/cite70-excerpt.txt"
FOUND = f"  stored excerpt: {EXCERPT} (the text read, from the registry's top folder)"


def _excerpt_line(root: Path, source: str = HANDBOOK) -> str:
    result = invoke("audit", "--source", source, root=root)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("  stored excerpt: ")]
    assert len(lines) == 1, result.output
    return lines[0]


def _named_excerpts() -> set[str]:
    out = set()
    for path in (REPO / "sources").glob("*.toml"):
        record = tomllib.loads(path.read_text(encoding="utf-8"))["source"]
        if "excerpt" in record:
            out.add(record["excerpt"])
    return out


# 1. A stored excerpt that is not there.


@pytest.mark.parametrize("kind", ["missing", "fifo", "folder", "link-out", "link-in"])
def test_1_audit_says_what_is_wrong_with_an_excerpt_that_is_not_a_file_of_the_registry(
    tmp_path: Path, kind: str
) -> None:
    root = copy_root(tmp_path)  # facts, registry, locks, sources: no tests/data, as a registry init made before
    data = root / "tests" / "data"
    if kind != "missing":
        data.mkdir(parents=True)
    target = root / EXCERPT
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "link-out":
        (tmp_path / "secret.txt").write_text("hunter2\n")
        target.symlink_to(tmp_path / "secret.txt")
    elif kind == "link-in":
        (data / "real.txt").write_text("== text\n")
        target.symlink_to("real.txt")
    problem = {
        "missing": f"{EXCERPT} is not a file of this registry: put the document there (source.excerpt is read from "
                   "the registry's top folder), or correct source.excerpt",
        "fifo": f"{EXCERPT} is a FIFO (named pipe), not a regular file of this registry",
        "folder": f"{EXCERPT} is a folder, not a regular file of this registry",
        "link-out": f"{EXCERPT} lies outside the registry (a document of this registry is a file inside its root)",
        "link-in": f"{EXCERPT} passes through a symbolic link ({EXCERPT}): a document of this registry is a file at "
                   "its own path (a review reads it through git at each revision, where a link holds only its "
                   "target's name): put the document itself there, or name its own path in source.excerpt",
    }[kind]
    # before: "  stored excerpt: tests/data/cite70-excerpt.txt (the text read, from the registry's top folder)"
    assert _excerpt_line(root) == f"  stored excerpt: {problem}"
    said = invoke("audit", "--source", HANDBOOK, "--json", root=root)
    assert said.exit_code == 0
    document = json.loads(said.output)
    assert document["source"]["excerpt"] == EXCERPT and document["excerpt_problem"] == problem


def test_1_audit_names_an_excerpt_that_is_there_as_before(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "tests" / "data").mkdir(parents=True)
    (root / EXCERPT).write_bytes((REPO / EXCERPT).read_bytes())
    assert _excerpt_line(root) == FOUND
    assert _excerpt_line(REPO) == FOUND
    assert json.loads(invoke("audit", "--source", HANDBOOK, "--json", root=root).output)["excerpt_problem"] is None


def test_1_init_copies_every_excerpt_a_record_names(tmp_path: Path) -> None:
    made = tmp_path / "mine"
    result = invoke("init", str(made))
    assert result.exit_code == 0, result.output
    named = _named_excerpts()
    assert len(named) == 12  # 21 records name 12 files
    copied = {str(p.relative_to(made)) for p in (made / "tests" / "data").iterdir()}
    assert copied == named
    for rel in named:
        assert (made / rel).read_bytes() == (REPO / rel).read_bytes(), rel
    # before: the line named a file the new registry did not hold
    assert _excerpt_line(made) == FOUND


def test_1_the_wheel_carries_every_excerpt_a_record_names() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    carried = project["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    for rel in _named_excerpts():
        assert carried.get(rel) == f"passprice/_data/{rel}", rel
    # the package's data folder mirrors the registry's top folder: an excerpt is read from there
    assert carried["sources"] == "passprice/_data/sources"
    assert all(re.fullmatch(r"tests/data/[a-z0-9-]+-excerpt\.txt", rel) for rel in _named_excerpts())
