"""CPU of a review of one rewritten 900 KB stored excerpt that 40 source records name (issue 13's 2 s bound).

Builds, in a temporary folder, a git copy of the checkout's facts, registry, locks, sources and schema whose BASE
holds ``sources/excerpts/shared.txt`` as 450,000 ``1`` lines and 40 records naming and pinning it, and whose HEAD
rewrites its last line to ``2`` and re-pins them (tests/test_attack133.py builds it smaller); and the same without
the 40 records ("no records"). Then runs ``passprice diff HEAD~1 HEAD`` in each, a fresh cache folder a run, and
prints user + sys CPU of each process (``os.wait4``) beside ``python -c pass``'s. docs/PERFORMANCE.md has the
figures (round excerptfast148). Usage: ``python benchmarks/excerpt_review.py [--runs N] [--passprice PATH]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def build(root: Path, records: int) -> None:
    """The tree at ``root``: BASE and HEAD commits, ``records`` records naming the rewritten excerpt."""
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)

    def write(data: bytes) -> None:
        (root / "sources" / "excerpts" / "shared.txt").write_bytes(data)
        for i in range(records):
            (root / "sources" / f"shared-{i}.toml").write_text(
                f'[source]\ntitle = "A shared page"\nkind = "web-page"\npublisher = "Example"\n'
                f'date = "2026-01-01"\nurl = "https://example.com/{i}"\nretrieved = "2026-01-01"\nread = "the page"\n'
                f'excerpt = "sources/excerpts/shared.txt"\nexcerpt_sha256 = "{hashlib.sha256(data).hexdigest()}"\n',
                encoding="utf-8")

    write(b"1\n" * 450_000)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    write(b"1\n" * 449_999 + b"2\n")
    _git(root, "commit", "-qam", "the excerpt rewritten")


def cpu(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    """User + sys CPU seconds of the process ``args`` run in ``cwd``, its output discarded."""
    process = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Build both trees and print each run's CPU."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--passprice", default=shutil.which("passprice") or "passprice")
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as folder:
        trees = {"40 records": Path(folder) / "records", "no records": Path(folder) / "none"}
        for name, root in trees.items():
            build(root, 40 if name == "40 records" else 0)
        for run in range(options.runs):
            for name, root in trees.items():
                cache = Path(folder) / "cache"
                shutil.rmtree(cache, ignore_errors=True)
                seconds = cpu([options.passprice, "diff", "HEAD~1", "HEAD"], root,
                              {**env, "PASSPRICE_CACHE_DIR": str(cache)})
                print(f"run {run + 1}: diff, {name}, fresh cache: {seconds:.2f} s CPU")
            print(f"run {run + 1}: python -c pass: {cpu([sys.executable, '-c', 'pass'], REPO, env):.2f} s CPU")


if __name__ == "__main__":
    main()
