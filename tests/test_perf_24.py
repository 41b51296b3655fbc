"""Issue 16, round 24: what the benchmark's sweep rows written to a file measure. A sweep's ``-o FILE --force``
replaces the file already there by a rename (the old text is never truncated in place: a reader holding it keeps
it), with the same bytes a fresh path gets; the benchmark's plain writer, the yardstick of those rows, does the
same file-system work (a temporary file beside the path, flushed, renamed over the file there) and nothing else;
and the benchmark's accounting of a run splits its CPU time into user and sys, which sum to it."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from click.testing import CliRunner

from passprice.cli import cli

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"

#: A small grid of the bench's shape: two servings, two cards, two positions, batches 1-40 (320 rows).
SWEEP = [
    "sweep",
    "r1-qwen7b-h200",
    "qwen3-30b-a3b-h200",
    "--cards",
    "h200_sxm_141gb,rtx_4090",
    "--positions",
    "256,4096",
    "--batches",
    "1-40",
    "--format",
    "json",
]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("passprice_bench_24", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sweep(out: Path, *extra: str) -> bytes:
    result = CliRunner().invoke(cli, [*SWEEP, "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out.read_bytes()


def test_a_sweep_replacing_a_file_writes_a_fresh_paths_bytes_by_a_rename(tmp_path: Path) -> None:
    fresh = _sweep(tmp_path / "fresh.json")
    assert fresh.startswith(b"[\n{") and fresh.endswith(b"}\n]\n")
    assert fresh.count(b"\n") == 320 + 2  # "[", one line a row, "]"
    target = tmp_path / "grid.json"
    target.write_bytes(b"yesterday's grid\n" * 1000)
    with target.open("rb") as held:  # a reader of the old file, open across the replacement
        before = os.fstat(held.fileno()).st_ino
        replaced = _sweep(target, "--force")
        assert held.read() == b"yesterday's grid\n" * 1000  # not truncated in place
    assert replaced == fresh
    assert target.stat().st_ino != before  # a new file renamed over the old one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.json", "grid.json"]  # no temporary file left


def test_one_and_two_processes_write_the_same_json_bytes(tmp_path: Path) -> None:
    one = _sweep(tmp_path / "one.json", "--jobs", "1")
    two = _sweep(tmp_path / "two.json", "--jobs", "2")
    assert hashlib.sha256(one).hexdigest() == hashlib.sha256(two).hexdigest()


def test_the_plain_writer_replaces_a_file_with_exactly_its_size_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    bench = _bench()
    path = tmp_path / "plain.json"
    path.write_bytes(b"old")
    inode = path.stat().st_ino
    size = 5 * (1 << 20) + 123  # two whole 2 MiB blocks, a short one, and a tail
    code = os.spawnv(os.P_WAIT, sys.executable, [sys.executable, "-c", bench.PLAIN_WRITE, str(path), str(size)])
    assert code == 0
    assert path.stat().st_size == size
    assert path.stat().st_ino != inode
    assert path.read_bytes() == b"x" * size
    assert [p.name for p in tmp_path.iterdir()] == ["plain.json"]


def test_a_walled_run_splits_its_cpu_time_into_user_and_sys() -> None:
    bench = _bench()
    run = bench.run_walled([sys.executable, "-c", "sum(range(200_000))"])
    assert run.cpu >= 0 and run.user >= 0 and run.sys >= 0 and run.wall > 0 and run.rss > 0
    assert abs(run.user + run.sys - run.cpu) < 1e-6
