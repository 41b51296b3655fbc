"""Left54 (left52's leftovers): one number pattern for every reader of a locator's figures, and an audit's reads of
``COMMIT:PATH`` sized before they are read. Each item's failing input kept as a test, built here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

# --- 1. addedfacts reads a figure as the review does (textchange.NUMBER) --------------------------------------------


def test_1_addedfacts_reads_each_figure_as_the_review_does() -> None:
    # Before: addedfacts had its own number (a power of ten only as e, a sign and 1 to 3 digits; no figure after a
    # letter of any script): '1e-4000 GB/s' and 'x1e-400 GB/s' were read as 4000 GB/s and 400 GB/s (the power's
    # digits), '2E3GB' and '带宽4.8TB/s' as no figure, where the review (diff._quoted_figures) read none, none, 2000
    # and 4.8. Now both read each with textchange.NUMBER.
    from passprice.addedfacts import names_figure, other_figures, stated_with_unit, unreadable
    from passprice.review.changes import _quoted_figures

    def amounts(text: str) -> list[tuple[str, float, str]]:
        return [(shown, amount, unit) for shown, amount, _, _, unit in stated_with_unit(text)]

    assert amounts("1e-4000 GB/s") == []  # was [("4000 GB/s", 4000.0, "GB/s")]
    assert unreadable("1e-4000 GB/s") == ["1e-4000 GB/s"]  # was []: a number past a float, said so
    assert other_figures(4000, "GB/s", "1e-4000 GB/s") is None  # was [] (4000 GB/s read as the locator's own)
    assert _quoted_figures("1e-4000 GB/s") == set()
    assert amounts("x1e-400 GB/s") == []  # was [("400 GB/s", 400.0, "GB/s")]
    assert not names_figure("x1e-400 GB/s") and _quoted_figures("x1e-400 GB/s") == set()
    assert amounts("2E3GB") == [("2E3GB", 2000.0, "GB")]  # was []
    assert _quoted_figures("2E3GB") == {2000.0}
    assert amounts("带宽4.8TB/s") == [("4.8TB/s", 4.8, "TB/s")]  # was []
    assert other_figures(4.8, "TB/s", "带宽4.8TB/s") == [] and _quoted_figures("带宽4.8TB/s") == {4.8}
    # a name stays a name in both: ASCII letters, and a look-alike Cyrillic letter (read as its Latin twin)
    assert amounts("pp512 GB") == [] and _quoted_figures("pp512 GB") == set()
    assert amounts("Н100 GB") == [] and not names_figure("Н100 GB")
    assert amounts("4.8e12 B/s, 1,000e3 GB") == [("4800000000000 B/s", 4.8e12, "B/s"), ("1,000e3 GB", 1e6, "GB")]


# --- 2. a setting's number is the one pattern too -------------------------------------------------------------------


def test_2_a_settings_value_is_read_with_its_power_of_ten() -> None:
    # Before: diff._SETTING_VALUE wrote its own number, without a power of ten: n_ctx=2e3's setting ended at its 2
    # ((0, 7)), its e3 left as text after it. Now the setting is the name and the whole number (textchange.NUMBER).
    from passprice.review.changes import _quoted_figures, _setting_spans

    assert _setting_spans("n_ctx=2e3 tokens") == [(0, 9)]  # was [(0, 7)]
    assert _setting_spans("--lr 1e-4000 x") == [(0, 12)]  # was [(0, 6)]
    assert _setting_spans("n_ctx 1,024.5, 8") == [(0, 13)]  # unchanged: commas and a decimal part
    assert _quoted_figures("n_ctx=2E+3 at 4.8 tokens/s") == {4.8}  # the setting's number is no quoted figure


# --- 3. an audit's COMMIT:PATH reads are sized first ----------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    import os
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_3_read_named_refuses_a_blob_past_the_cap_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: read_named held `git cat-file --batch`'s whole output, each blob of any size, before looking at a size.
    # Now `--batch-check` sizes each first: past gitread.NAMED_BYTES, one line naming COMMIT:PATH and the size, and
    # no `--batch` runs.
    from passprice import gitread

    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "small.toml").write_bytes(b"a = 1\n")
    (tmp_path / "same.toml").write_bytes(b"a = 1\n")
    (tmp_path / "big.toml").write_bytes(b"#" * 101)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "e").write_bytes(b"")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "--no-verify", "-m", "one")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    monkeypatch.setattr(gitread, "NAMED_BYTES", 100)
    ran: list[list[str]] = []
    real = gitread.run_git

    def recorded(top: Path, args: list[str], *rest: object, **kwargs: object) -> bytes:
        ran.append(list(args))
        return real(top, args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitread, "run_git", recorded)
    names = [f"{commit}:small.toml", f"{commit}:same.toml", f"{commit}:gone", f"{commit}:d", f"{commit}:d/e"]
    assert gitread.read_named(tmp_path, names) == {f"{commit}:small.toml": b"a = 1\n",
                                                   f"{commit}:same.toml": b"a = 1\n", f"{commit}:d/e": b""}
    assert [args[:2] for args in ran] == [["cat-file", "--batch-check"], ["cat-file", "--batch"]]
    ran.clear()
    with pytest.raises(gitread.BlobTooLarge) as refused:
        gitread.read_named(tmp_path, [f"{commit}:small.toml", f"{commit}:big.toml"])
    assert str(refused.value) == (f"{commit}:big.toml: 101 bytes as committed, past the 100-byte cap on a file "
                                  "passprice reads from git (gitread.NAMED_BYTES; not read)")
    assert ran == [["cat-file", "--batch-check"]]  # nothing read


def test_3_an_audit_refuses_a_committed_record_past_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: `audit LOCK` of a committed lock read each cited source record and document at the lock's commit whole
    # (git cat-file --batch), however large. Now a record past the cap is refused: exit 2, one line naming
    # COMMIT:PATH and its size, as committed.
    from passprice import gitread

    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "a registry")
    commit = _git(root, "rev-parse", "HEAD")
    record = root / "sources" / "nvidia-h200-datasheet.toml"
    size = record.stat().st_size
    monkeypatch.setattr(gitread, "NAMED_BYTES", size - 1)
    lock = root / "locks" / "r1-qwen7b-h200.lock.toml"
    assert bad("audit", str(lock), root=root) == [
        f"passprice: error: {commit}:sources/nvidia-h200-datasheet.toml: {size:,} bytes as committed, past the "
        f"{size - 1:,}-byte cap on a file passprice reads from git (gitread.NAMED_BYTES; not read)"]
    monkeypatch.undo()  # within the cap (64 MiB), the same audit reads them and passes
    done = invoke("audit", str(lock), "--json", root=root)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["sources_since_lock"] == [] and json.loads(done.stdout)["sources_compared"]
