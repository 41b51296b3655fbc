"""Issue 13: each kind of registry file has its own size cap, checked before the file is parsed (the standard
library's ``tomllib`` costs up to about 1.1 s of CPU a MB of hostile but valid TOML): 256 KiB for a card, stack,
routing record, drafting method, source, measurement, serving, lock or sweep file; a checkpoint entry keeps
:data:`passprice.schema.MAX_TOML_BYTES`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.cli_helpers import bad, copy_root, invoke

from passprice import schema
from passprice.errors import InputError

R1 = "r1-qwen7b-h200"
CARD = "h200_sxm_141gb"


def _pad(path: Path, size: int) -> int:
    """Append comment lines to the file at ``path`` until it holds ``size`` bytes (still valid TOML, still the same
    document); its size."""
    text = path.read_text(encoding="utf-8")
    line = "# " + "x" * 97 + "\n"
    text += line * ((size - len(text.encode("utf-8"))) // len(line) + 1)
    path.write_text(text, encoding="utf-8")
    return path.stat().st_size


def _line(path: Path, size: int, kind: str = "card") -> str:
    return (f"{path}: larger than 256 KiB, the most a {kind} file may hold ({size:,} bytes; "
            "PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)")


def test_the_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    assert schema.MAX_FILE_BYTES == 262_144
    assert schema.kind_cap("card") == schema.kind_cap("stack") == schema.kind_cap("lock") == 262_144
    # A checkpoint entry: 8 MiB under the header reader's default cap (attack round 57), 64 MiB once it is raised.
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    assert schema.kind_cap("checkpoint") == 8 << 20
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(256 << 20))
    assert schema.kind_cap("checkpoint") == 64 << 20


@pytest.mark.parametrize("command", [("check",), ("price", R1, "--no-lock"), ("facts", CARD)])
def test_a_300_kb_valid_card_is_refused_before_it_is_parsed(tmp_path: Path, command: tuple[str, ...]) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{CARD}.toml"
    size = _pad(card, 300_000)
    assert 300_000 <= size <= 300_100  # 300,100 where the card is a whole number of 100-byte lines short (13,600 B)
    result = invoke(*command, root=root)
    assert result.exit_code == 2
    wanted = _line(card, size).replace(str(root) + "/", "")  # check names a file from the registry's root
    lines = result.stderr.splitlines()
    assert any(line.startswith("passprice: error: ") and line.endswith(wanted) for line in lines), result.stderr


def test_the_cap_is_raised_by_its_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{CARD}.toml"
    _pad(card, 300_000)
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "400000")
    assert invoke("facts", CARD, root=root).exit_code == 0
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "lots")
    bad("facts", CARD, root=root, says="PASSPRICE_MAX_FILE_BYTES: 'lots' is not a number of bytes (a whole number "
        "from 1 to 67108864)")


def test_a_300_kb_card_is_refused_by_diff(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "--no-verify", "-m", "base")
    card = root / "facts" / "cards" / f"{CARD}.toml"
    size = _pad(card, 300_000)
    git("commit", "-q", "--no-verify", "-am", "big")
    result = invoke("diff", "HEAD~1", root=root)
    assert result.exit_code == 2, result.output
    assert "larger than 256 KiB, the most a card file may hold (" + f"{size:,} bytes" in result.stderr, result.stderr


def test_a_300_kb_checkpoint_entry_is_still_read(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    entries = sorted((root / "registry" / "checkpoints").glob("*.toml"))
    entry = entries[0]
    before = invoke("facts", "--help", root=root)
    assert before.exit_code == 0
    size = _pad(entry, 300_000)
    assert size > schema.MAX_FILE_BYTES
    document = schema.load(entry, "checkpoint", root / "schema" if (root / "schema").is_dir() else None)
    assert "checkpoint" in document or document
    with pytest.raises(InputError, match=r"larger than 256 KiB, the most a stack file may hold \(300,"):
        schema.load(entry, "stack")
    assert invoke("check", root=root).exit_code == 0


def test_a_300_kb_version_in_a_facts_history_is_not_parsed() -> None:
    from passprice import history

    text = b'[memory.capacity]\nvalue = 1\n' + b"# " + b"x" * 300_000 + b"\n"
    with pytest.raises(InputError) as caught:
        history._fact_in(text, "memory.capacity", "abc123:facts/cards/x.toml")
    assert str(caught.value) == (
        f"abc123:facts/cards/x.toml: larger than 256 KiB, the most a card file may hold "
        f"({len(text):,} bytes; PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)"
    )
