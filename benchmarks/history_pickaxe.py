"""Time of the history search's pickaxe (:func:`passprice.gitread.pickaxe`, what ``git log -S TEXT -- locks/`` finds)
against git's own ``git log -S`` on hostile histories built here, small on disk (git packs them in a few hundred KB):

- ``huge``: a 256 MiB lock of zeros, changed in 6 commits (``git log -S`` inflates and searches every version whole;
  the pickaxe reads none over ``PICKAXE_BLOB_BYTES``);
- ``versions``: a lock of 4 MiB less 4 KiB changed in 70 commits (71 distinct versions, 284 MiB; the pickaxe reads
  each once, up to ``PICKAXE_TOTAL_BYTES``).

The text sought ends as the blobs' bytes do (``0``): the search of git, and CPython's, skips least then.

Run from a checkout: ``python benchmarks/history_pickaxe.py [--keep FOLDER]``. Wall and CPU seconds (this process's
and its children's, git included) of each. Nothing here is a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from passprice import gitread

_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.invalid"}
TEXT = 'digest = "sha256:' + "ab" * 7 + "00"  # ends as the blobs' bytes do: git's search skips least


def git(folder: Path, *args: str) -> None:
    """``git ARGS`` in ``folder``, checked."""
    subprocess.run(["git", *args], cwd=folder, env=_ENV, check=True, capture_output=True)


def history(folder: Path, size: int, changes: int) -> Path:
    """A repository at ``folder`` whose ``locks/big.lock.toml`` (``size`` bytes of zeros) is committed and then
    changed (a line appended) in ``changes`` commits, packed."""
    (folder / "locks").mkdir(parents=True)
    big = folder / "locks" / "big.lock.toml"
    git(folder, "init", "-q")
    with open(big, "wb") as out:
        for at in range(0, size, 1 << 20):
            out.write(b"0" * min(1 << 20, size - at))
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "big")
    for n in range(changes):
        with open(big, "ab") as out:
            out.write(f"x{n}\n".encode())
        git(folder, "commit", "-q", "-am", f"c{n}")
    git(folder, "gc", "-q")
    return folder


def cpu() -> float:
    """User + system CPU seconds of this process and its reaped children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(what: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds ``what`` took."""
    wall, used = time.monotonic(), cpu()
    what()
    return time.monotonic() - wall, cpu() - used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build the histories in this folder (kept), not a temporary one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        for name, size, changes in (("huge", 256 << 20, 6), ("versions", (4 << 20) - 4096, 70)):
            folder = base / name
            if not (folder / ".git").exists():
                history(folder, size, changes)
            ours = timed(lambda f=folder: gitread.pickaxe(f, TEXT, "locks/", timeout=600))
            theirs = timed(lambda f=folder: subprocess.run(["git", "log", "--format=%H", "-S", TEXT, "--", "locks/"],
                                                           cwd=f, check=True, capture_output=True))
            print(f"{name}: gitread.pickaxe {ours[0]:.2f} s wall, {ours[1]:.2f} s CPU; git log -S {theirs[0]:.2f} s "
                  f"wall, {theirs[1]:.2f} s CPU")


if __name__ == "__main__":
    main()
