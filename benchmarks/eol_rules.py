"""What reading the ``.gitattributes`` passprice ships costs ``check`` (docs/PERFORMANCE.md, tests/test_eol_rules.py).

A git copy of this checkout's registry (``facts/``, ``registry/``, ``locks/``, ``sources/``, ``schema/``, one
commit), and ``passprice check`` run in it with and without the shipped ``.gitattributes`` at its root, by this
checkout's code and, given ``--base-src``, another's (``git archive main src schema | tar -x -C /tmp/main``: its
``src``, the schemas beside it): CPU (user + sys of the process and the git it starts) warm (the result memo filled
by the same command) and afresh (``PASSPRICE_NO_MEMO=1``, the cache folder warm), every state once a round, with
``python -c pass`` as the yardstick.

    python benchmarks/eol_rules.py --rounds 7 --base-src /tmp/main/src
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cpu_ms(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """CPU milliseconds (user + sys, children included) of running ``cmd``, and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base-src", help="another checkout's src folder, timed beside this one's")
    args = parser.parse_args()
    codes = {"this": str(REPO / "src")}
    if args.base_src:
        codes = {"base": args.base_src, **codes}
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base_env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b",
                    GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    rules = (REPO / ".gitattributes").read_bytes()
    with tempfile.TemporaryDirectory(prefix="eol-rules-") as scratch:
        root = Path(scratch) / "registry"
        root.mkdir()
        for folder in ("facts", "registry", "locks", "sources", "schema"):
            shutil.copytree(REPO / folder, root / folder)
        subprocess.run(["git", "init", "-q"], cwd=root, env=base_env, check=True)
        subprocess.run(["git", "add", "-A"], cwd=root, env=base_env, check=True)
        subprocess.run(["git", "commit", "-qm", "registry"], cwd=root, env=base_env, check=True)

        def place(held: bool) -> None:
            (root / ".gitattributes").write_bytes(rules) if held else (root / ".gitattributes").unlink(missing_ok=True)

        states = [(code, held) for code in codes for held in (False, True)]

        def env(code: str, held: bool, memo: bool) -> dict[str, str]:
            out = {**base_env, "PYTHONPATH": codes[code], "PASSPRICE_CACHE_DIR": f"{scratch}/cache-{code}-{held}"}
            return out if memo else {**out, "PASSPRICE_NO_MEMO": "1"}

        check = [sys.executable, "-m", "passprice", "check"]
        for state in states:  # each cache folder and memo filled
            place(state[1])
            for _ in range(2):
                cpu_ms(check, env(*state, True), root)
        warm: dict[tuple[str, bool], list[float]] = {s: [] for s in states}
        afresh: dict[tuple[str, bool], list[float]] = {s: [] for s in states}
        passes = []
        for _ in range(args.rounds):
            passes.append(cpu_ms([sys.executable, "-c", "pass"], base_env, root)[0])
            for state in states:
                place(state[1])
                took, status = cpu_ms(check, env(*state, True), root)
                again, status_afresh = cpu_ms(check, env(*state, False), root)
                if status or status_afresh:
                    raise SystemExit(f"check exited {status}/{status_afresh} in state {state}")
                warm[state].append(took)
                afresh[state].append(again)
    median = statistics.median
    print(f"{args.rounds} rounds, load {os.getloadavg()[0]:.1f}; python -c pass: median {median(passes):.1f} ms "
          f"(min {min(passes):.1f})")
    for state in states:
        print(f"{state[0]:5} code, .gitattributes {'held' if state[1] else 'none'}: warm median "
              f"{median(warm[state]):6.1f} ms (min {min(warm[state]):6.1f}), afresh median "
              f"{median(afresh[state]):6.1f} ms (min {min(afresh[state]):6.1f})")


if __name__ == "__main__":
    main()
