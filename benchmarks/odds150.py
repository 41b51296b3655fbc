"""The cost of the two shape rules a served cache entry meets since tests/test_odds150.py (issue 13; docs/DESIGN.md's
cache section, what is left): a drafting method's figures against its file's (``drafts.all_figures``) and a
document's optional top-level keys against its file's (``schema._absent_absent``). Warm commands
(``PASSPRICE_NO_MEMO=1``, each side's cache folder filled by the same command) run by main's installation, by this
branch's with the rules, and by this branch's with the rules answering at once, and ``python -c pass``; their
instructions under callgrind (``PYTHONHASHSEED=0``, each command run three times before under that seed).

    python benchmarks/odds150.py --main MAIN_VENV:MAIN_TREE --branch VENV:TREE [--command "price r1-qwen7b-h200"]

main's figure includes the rest of the branch (``check`` reads git's ``core.autocrlf``/``core.eol`` too); the rules'
own cost is the branch against itself with them off.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_RUN = """
import sys
mode = sys.argv[1]
sys.argv = ["passprice", *sys.argv[2:]]
from passprice import drafts, schema  # imported by both sides: what the patch needs costs neither
if mode == "off":
    drafts.all_figures = lambda method, data: True
    schema._absent_absent = lambda document, kind, folder, data: True
from passprice.cli import main
main()
"""


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PASSPRICE_NO_CACHE")}
    env.update(PASSPRICE_CACHE_DIR=str(cache), PASSPRICE_NO_MEMO="1", PYTHONHASHSEED="0")
    return env


def _instructions(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command], cwd=cwd,
                          env=env, capture_output=True, text=True)
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1]) / 1e6
    raise RuntimeError(done.stderr[-500:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--main", required=True, help="VENV:TREE")
    parser.add_argument("--branch", required=True, help="VENV:TREE")
    parser.add_argument("--command", action="append", help="a command's words, one string (default: price, check)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="odds150-"))
    sides = []
    for name, given, mode in (("main", args.main, "on"), ("on", args.branch, "on"), ("off", args.branch, "off")):
        venv, tree = given.split(":")
        sides.append((name, [str(Path(venv) / "bin" / "python"), "-c", _RUN, mode], Path(tree), work / name))
    commands = [c.split() for c in args.command] if args.command else [["price", "r1-qwen7b-h200"], ["check"]]
    base = _instructions([sys.executable, "-c", "pass"], work, _env(work / "none"))
    for words in commands:
        counts = {}
        for name, launch, tree, cache in sides:
            for _ in range(3):
                subprocess.run([*launch, *words], cwd=tree, env=_env(cache), capture_output=True)
            counts[name] = _instructions([*launch, *words], tree, _env(cache))
        print(f"{' '.join(words)}: instructions main {counts['main']:.1f}, rules off {counts['off']:.1f}, on "
              f"{counts['on']:.1f} M (on/off {counts['on'] / counts['off']:.4f}, on/main "
              f"{counts['on'] / counts['main']:.4f}); python -c pass {base:.1f} M", flush=True)
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
