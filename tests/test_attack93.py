"""Attack93 (issue 13): hostile input against what changed lately, each reproducer built in its test.

- (1) Three reads of a TOML file past the schema's loader used a bare ``tomllib.loads`` catching
  ``TOMLDecodeError`` alone: a lock beside the one written holding an integer of 5,000 digits (``ValueError``) or
  arrays nested 3,000 deep (``RecursionError``) made ``lock --name`` (``locking.require_unique_name``), ``lock
  --update`` and ``reproduce`` of a first-format lock (``locks.update_name_clash``) a traceback; an audit of a
  committed lock whose source record, at the lock's commit, nested 3,000 deep or held ``source`` as a string made
  ``audit LOCK`` a traceback (``RecursionError``; ``AttributeError: 'str' object has no attribute 'get'``). Each now
  reads through ``schema.toml_loads`` (every failure a ``TOMLDecodeError``), and such a file is passed over as one
  that does not parse was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

R1 = "r1-qwen7b-h200"

#: Bodies tomllib fails on with an exception other than ``TOMLDecodeError``.
HOSTILE = {"digits": "x = " + "1" * 5000, "nesting": "x = " + "[" * 3000 + "]" * 3000}


def _only(root: Path, name: str) -> None:
    """Leave ``root``'s lock ``name`` alone in ``locks/`` (``check`` judges every lock: CPU)."""
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{name}.lock.toml":
            other.unlink()


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_1a_lock_name_beside_a_lock_tomllib_fails_on(tmp_path: Path, kind: str) -> None:
    # before: ValueError (digits) / RecursionError (nesting) traceback, exit 1
    root = copy_root(tmp_path)
    _only(root, "gemma3-270m-h100")
    (root / "locks" / "evil.lock.toml").write_text(f'[lock]\nname = "zz93"\n{HOSTILE[kind]}\n')
    result = invoke("lock", "gemma3-270m-h100", "--name", "zz93", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("locked zz93 (price, locks serving gemma3-270m-h100): ")
    assert (root / "locks" / "zz93.lock.toml").is_file()


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_1b_a_first_format_update_beside_a_lock_tomllib_fails_on(tmp_path: Path, kind: str) -> None:
    # before: ValueError / RecursionError traceback from locks.update_name_clash, exit 1, in both commands
    root = copy_root(tmp_path)
    _only(root, R1)
    old = root / "locks" / "old.lock.toml"
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    (root / "locks" / "evil.lock.toml").write_text(f'[lock]\nname = "{R1}"\n{HOSTILE[kind]}\n')
    before = old.read_bytes()
    update = invoke("lock", "--update", "-o", str(old), root=root)
    assert update.exit_code == 2, update.output
    # the clash with the readable locks/r1-qwen7b-h200.lock.toml is still found; the unreadable file passed over
    assert update.stderr.startswith(f"passprice: error: {old}: lock.name: 'r1-qwen7b-h200' is also the name of "
                                    "locks/r1-qwen7b-h200.lock.toml: --update would write")
    assert old.read_bytes() == before
    again = invoke("reproduce", str(old), root=root)
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize(
    "record",
    [lambda text: text + "\nzz = " + "[" * 3000 + "]" * 3000 + "\n",  # RecursionError
     lambda text: text + "\nzz = " + "1" * 5000 + "\n",  # ValueError
     lambda text: 'source = "a string"\n'],  # AttributeError on .get
    ids=["nesting", "digits", "not-a-table"],
)
def test_1c_an_old_locks_source_record_that_did_not_read_at_its_commit(tmp_path: Path, record: object) -> None:
    from test_diff import commit_all, git

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    _only(path, "gemma3-270m-h100")
    git(path, "init", "-q", "-b", "main")
    source = path / "sources" / "nvidia-h100-datasheet.toml"
    good = source.read_text()
    source.write_text(record(good))  # type: ignore[operator]
    commit_all(path, "a hostile record")
    source.write_text(good)
    commit_all(path, "the record mended")
    result = invoke("audit", str(path / "locks" / "gemma3-270m-h100.lock.toml"), "--json", root=path)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    # a record that did not read at the lock's commit is passed over (as one added since is)
    assert out["sources_since_lock"] == [] and out["sources_compared"] is True
