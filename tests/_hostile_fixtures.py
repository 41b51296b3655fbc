"""What the hostile, memo and cache tests build once a process and copy per test: a test pays for the copy, never
for the build (suite47: each of them started passprice processes on an empty cache, so every test's first process
parsed every pricing module, fitted the stack and compiled the package afresh)."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: The cache's folders keyed by content alone (a module's compiled code, a parsed document, a built object), the
#: ones :func:`seed_cache` copies. Not ``memo/`` (the result memo's entries: what test_memo asks about) nor
#: ``stamps/`` (file status records, keyed by path).
WARM_FOLDERS = ("code", "documents", "objects")


@functools.cache
def _warm_cache() -> Path:
    """A cache folder filled by one fresh ``passprice check`` (its memo off) of a copy of this checkout's registry,
    in a process of its own (which writes the compiled code at its exit): made once a process, removed at its exit.
    ``check`` reads every file kind, digests the pricing model, fits the stack and prices every lock: a later
    ``check`` on a copy of it costs 1.1 s of CPU, not 3.3 s; ``price`` 0.5 s, not 1.0 s; ``cards`` 0.26 s, not 0.45 s
    (session 39, suite47)."""
    folder = Path(tempfile.mkdtemp(prefix="passprice-warm-cache-"))
    atexit.register(shutil.rmtree, folder, True)
    root = folder / "root"
    for part in ("facts", "registry", "locks", "sources"):
        shutil.copytree(REPO / part, root / part)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env.update(PASSPRICE_CACHE_DIR=str(folder / "cache"), PASSPRICE_NO_MEMO="1")
    done = subprocess.run([sys.executable, "-c", "from passprice.entry import main; main()", "check"], cwd=root,
                          env=env, capture_output=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    return folder / "cache"


def seed_cache(cache: Path) -> Path:
    """``cache`` (a cache folder not yet made) made holding a copy of :func:`_warm_cache`'s content-keyed folders
    (:data:`WARM_FOLDERS`): what a user's cache holds after any earlier ``check``. Which entries a run finds changes
    nothing it prints or refuses (tests/test_cache.py), only the work it does; ``cache``."""
    warm = _warm_cache()
    for folder in WARM_FOLDERS:
        shutil.copytree(warm / folder, cache / folder)
    return cache
