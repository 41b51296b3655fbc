"""What session 11's README-only walkthrough tripped on, each kept as a test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke


@pytest.mark.parametrize("memo_off", [False, True])
def test_a_lock_that_does_not_reproduce_keeps_its_status_when_the_reader_leaves_the_pipe(
    tmp_path: Path, memo_off: bool
) -> None:
    # `passprice reproduce locks/r1-qwen7b-h200.lock.toml 2>&1 | head -8` exited 0 on 3 of 4 tries with the lock's
    # checkpoint entry moved away (1 read in full): the report was printed before its verdict was recorded, and a
    # reader gone from the pipe ended the command with status 0, so CI with pipefail passed it.
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    entry.rename(tmp_path / entry.name)
    full = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert full.exit_code == 1, full.output
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache")}
    if memo_off:
        env["PASSPRICE_NO_MEMO"] = "1"
    for _ in range(2):  # the second run is the memo's to answer, when it may
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first byte
        try:
            done = subprocess.run(
                [sys.executable, "-c", "import sys; from passprice.entry import main; sys.exit(main())", "--root",
                 str(root), "reproduce", "locks/r1-qwen7b-h200.lock.toml"],
                stdout=write, stderr=write, env=env, timeout=120, check=False,
            )
        finally:
            os.close(write)
        assert done.returncode == 1, done
