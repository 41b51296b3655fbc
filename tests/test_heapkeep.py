"""A long sweep fixes glibc's mmap and trim thresholds (passprice.heapkeep), so the memory it frees between groups of
rows is kept for the next group, not faulted in afresh: called with what values, where, and what a sweep writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passprice import heapkeep
from passprice.cli import cli


class _Libc:
    """A stand-in C library recording its ``mallopt`` calls and answering ``answer``."""

    def __init__(self, answer: int = 1) -> None:
        self.calls: list[tuple[int, int]] = []
        self.answer = answer

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return self.answer


def test_both_thresholds_are_fixed() -> None:
    libc = _Libc()
    assert heapkeep.keep_freed(libc) is True
    # glibc's malloc.h: M_MMAP_THRESHOLD -3 (32 MiB, its largest), M_TRIM_THRESHOLD -1 (256 MiB).
    assert libc.calls == [(-3, 32 * 2**20), (-1, 256 * 2**20)]


def test_a_refusal_or_no_mallopt_says_false() -> None:
    assert heapkeep.keep_freed(_Libc(answer=0)) is False
    assert heapkeep.keep_freed(object()) is False


def test_nothing_is_done_without_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_glibc(name: str) -> str:
        raise ValueError(name)

    monkeypatch.setattr(os, "confstr", no_glibc)
    assert heapkeep.keep_freed() is False


@pytest.mark.skipif(not heapkeep._glibc(), reason="glibc only")
def test_this_process_takes_them() -> None:
    assert heapkeep.keep_freed() is True


@pytest.mark.parametrize(("batches", "called"), [("1-65535", False), ("1-65536", True)])
def test_a_sweep_of_65536_rows_or_more_keeps_its_freed_memory(
    batches: str, called: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(heapkeep, "keep_freed", lambda: calls.append(1) or True)
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(cli, ["sweep", "r1-qwen7b-h200", "--batches", batches, "--positions", "512", "-o",
                                      str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert calls == ([1] if called else [])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + int(batches.split("-")[1])
    assert lines[1].startswith("h200_sxm_141gb,r1-qwen7b-h200,")
