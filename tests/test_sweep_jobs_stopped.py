"""A sweep worker stopped by the user (``kill -STOP PID``, a debugger attached) holds the sweep until it is continued
(session 13, decided and documented in README, "A large sweep uses the idle CPUs"): the process waits for it as for
a slow worker and never takes its run over — a stopped process cannot be told from a slow one without guessing at a
timeout. Continued, the sweep ends with the one-process bytes; Ctrl-C still ends it at once, 130, no file and no
worker left (a stopped worker is killed and reaped)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from passprice.registry import find_root

REPO = Path(__file__).resolve().parent.parent
ROOT = find_root(REPO)
ARGS = ["gemma3-270m-h100", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "--cards", "h200_sxm_141gb,sn40l,rtx_3080",
        "--positions", "0,2048", "--batches", "1,2,7,64"]

#: Run in the sweep's process before passprice starts (a sitecustomize): each worker stops itself once it has taken
#: its first block (a worker stopped before it takes one holds nothing: the other processes take every block), the
#: sweep waits until it has, notes its pid, and after a second either it is continued (SIGCONT) or Ctrl-C is pressed
#: (SIGINT to the process group, as a terminal sends it).
_SITE = """
import os, signal, threading
import passprice.sweepjobs as jobs
start, made, parent = jobs._start, jobs._held_text, os.getpid()
def stopping(*args, **kwargs):
    if os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGSTOP)
    return made(*args, **kwargs)
jobs._held_text = stopping
def stopped(*args, **kwargs):
    worker = start(*args, **kwargs)
    os.waitpid(worker.pid, os.WUNTRACED)
    with open(os.environ["WORKERS"], "a") as f:
        f.write(f"{worker.pid}\\n")
    then = os.environ["THEN"]
    def later():
        if then == "cont":
            os.kill(worker.pid, signal.SIGCONT)
        else:
            os.killpg(0, signal.SIGINT)
    threading.Timer(1.0, later).start()
    return worker
jobs._start = stopped
"""


def _sweep(tmp_path: Path, then: str, out: Path, jobs: str = "2") -> tuple[subprocess.CompletedProcess[str], float]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "PYTHONPATH"))}
    env["PASSPRICE_CACHE_DIR"] = os.environ["PASSPRICE_CACHE_DIR"]  # the session's own cache (conftest.py)
    env.update(PYTHONPATH=str(site), WORKERS=str(tmp_path / "workers"), THEN=then, PASSPRICE_NO_MEMO="1")
    code = "from passprice.entry import main; main()"
    args = ["--root", str(ROOT.path), "sweep", *ARGS, "--jobs", jobs, "-o", str(out)]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=env,
                          cwd=REPO, start_new_session=True)  # its own process group: the SIGINT reaches it alone
    return done, time.monotonic() - started


def test_a_stopped_worker_holds_the_sweep_until_continued_then_the_bytes_are_one_process_s(tmp_path: Path) -> None:
    done, took = _sweep(tmp_path, "cont", tmp_path / "grid.csv")
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "workers").read_text().split()) == 1  # one worker forked, and stopped
    assert took >= 1.0  # waited for the stopped worker: its run was not taken over
    one, _ = _sweep(tmp_path, "cont", tmp_path / "one.csv", jobs="1")
    assert one.returncode == 0
    assert (tmp_path / "grid.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()


def test_ctrl_c_ends_a_sweep_held_by_a_stopped_worker(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    done, _ = _sweep(tmp_path, "int", out / "grid.csv")
    assert (done.returncode, done.stderr, done.stdout) == (130, "passprice: interrupted\n", "")
    assert list(out.iterdir()) == []
    pids = [int(line) for line in (tmp_path / "workers").read_text().split()]
    assert len(pids) == 1
    with pytest.raises(ProcessLookupError):  # killed while stopped, and reaped
        os.kill(pids[0], 0)
