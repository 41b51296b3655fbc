"""The pricing-model digest's cost (round digest77, issues 13 and 16): what ``passprice.pins`` spends writing the
syntax trees of the pricing modules as text, taking a cold digest, and what a whole ``--no-cache check`` of a
checkout whose pricing code is the dense form (``tests/test_hostile_11.py``) costs at the token cap.

Each figure is taken for this checkout's ``src`` and, with ``--base SRC``, for another checkout's ``src`` (main's,
say), each side run from the same interpreter with its ``src`` first on ``PYTHONPATH``, both byte-compiled first (as
``pip install`` does), the two sides alternated run by run:

(a) the tree text (``pins._tree_text``) of the running package's pricing modules, and of the dense form at the cap
    (``x = [a,a,…]``, 349,997 names: 699,998 tokens), in a fresh process (the first pass: what a cold ``check`` pays,
    the writers made included), CPU (``process_time``, the median of ``--runs``), and with ``--callgrind`` its
    instructions (the process less one that parses the same trees and writes nothing);
(b) a cold digest of the running package (``pins._digest``, an empty cache folder: every module read, parsed, written
    as text and kept), CPU and instructions likewise;
(c) ``passprice --no-cache check`` in a copy of the registry whose ``src/passprice/locks.py`` is the dense form at
    699,998 tokens: the whole process's CPU (``os.wait4``), peak memory, and with ``--callgrind`` its instructions;
(d) the same command with ``locks.py`` 499,999 lines of ``a`` (999,998 bytes): 499,999 tokens to the cap's count
    before session 43, which parsed them (a line break was no token, though a statement to the parser); 999,998
    since, refused unparsed.

Run from a checkout: ``python benchmarks/digest77.py [--base /path/to/main/src] [--runs 5] [--callgrind]
[--only a b c d]``. Nothing
here is a test: CPU depends on the machine and how busy it is; instructions do not.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The dense form's names at the cap: ``x = [`` + ``a,`` × N + ``]`` and its line break is 2N + 5 tokens, 699,999
#: for N = 349,997 (699,998 before session 43 counted line breaks).
DENSE_NAMES = 349_997

#: The lines form: ``a`` and a line break, 499,999 times (999,998 bytes: under issue 13's 1 MB).
LINES = 499_999

#: A child that parses the trees (untimed) and writes each as text once: ``WHAT`` is ``own`` (the running package's
#: pricing modules) or ``dense``; ``MODE`` ``none`` parses only (the instructions' yardstick).
WALK = """
import ast, gc, sys, time
from passprice import pins
what, mode, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
gc.disable()
if what == "own":
    trees = [ast.parse((pins.PACKAGE / f"{n}.py").read_bytes()) for n in names]
else:
    trees = [ast.parse(b"x = [" + b"a," * int(names[0]) + b"]\\n")]
start = time.process_time()
if mode == "text":
    for tree in trees:
        pins._tree_text(tree, set())
print(time.process_time() - start)
"""

#: A child taking the running package's digest with an empty cache folder (``PASSPRICE_CACHE_DIR``).
COLD = """
import sys, time
from passprice import pins
start = time.process_time()
if sys.argv[1] == "digest":
    pins._digest(str(pins.PACKAGE))
print(time.process_time() - start)
"""


def env_for(src: Path, cache: Path) -> dict[str, str]:
    """The environment of a child running the passprice of ``src``, with ``cache`` as its cache folder."""
    env = dict(os.environ, PYTHONPATH=str(src), PASSPRICE_CACHE_DIR=str(cache), PASSPRICE_NO_MEMO="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def child_cpu(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    """The CPU seconds (user + system, ``os.wait4``) and peak memory (MiB) of one child, and its standard output."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)}: exit {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, text


def instructions(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """The instructions (millions) of one child, counted by valgrind's callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                          env=env, cwd=cwd, capture_output=True, text=True)  # fmt: skip
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1]) / 1e6
    raise RuntimeError(f"no instruction count: {done.stderr[-400:]}")


def registry_copy(work: Path, name: str, module: bytes) -> Path:
    """A copy of the checkout's registry as a checkout of passprice whose ``locks.py`` is ``module``."""
    root = work / name
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(ROOT / folder, root / folder)
    package = root / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("LOCK_FORMAT = 2\n", encoding="utf-8")
    (package / "locks.py").write_bytes(module)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout's src folder to compare with")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true", help="also count instructions (valgrind)")
    parser.add_argument("--only", nargs="+", choices="abcd", default=list("abcd"), help="only these parts")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from passprice import pins

    names = ",".join(pins.pricing_modules())
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sides = {"this": ROOT / "src"}
        if args.base is not None:
            # A copy, byte-compiled here (the other checkout is left as it is), in a source tree of its own as the
            # checkout's is (``pyproject.toml`` above it: a build's record there is not trusted, pins._recorded).
            base = work / "base"
            shutil.copytree(args.base.resolve() / "passprice", base / "src" / "passprice",
                            ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
            (base / "pyproject.toml").write_text("", encoding="utf-8")
            shutil.copytree(args.base.resolve().parent / "schema", base / "schema")  # where a source tree's are
            sides = {"base": base / "src", **sides}
        for src in sides.values():
            compileall.compile_dir(src / "passprice", quiet=1)
        dense = registry_copy(work, "dense", b"x = [" + b"a," * DENSE_NAMES + b"]\n")
        lines = registry_copy(work, "lines", b"a\n" * LINES)
        cases = [
            ("(a) tree text, own pricing modules, first pass", [py, "-c", WALK, "own", "text", names],
             [py, "-c", WALK, "own", "none", names], work),
            ("(a) tree text, dense form at 699,998 tokens", [py, "-c", WALK, "dense", "text", str(DENSE_NAMES)],
             [py, "-c", WALK, "dense", "none", str(DENSE_NAMES)], work),
            ("(b) cold digest of the running package", [py, "-c", COLD, "digest"], [py, "-c", COLD, "none"], work),
            ("(c) --no-cache check, dense form at 699,998 tokens", [py, "-m", "passprice", "--no-cache", "check"],
             None, dense),
            ("(d) --no-cache check, 499,999 lines of a (999,998 bytes)", [py, "-m", "passprice", "--no-cache",
             "check"], None, lines),
        ]  # fmt: skip
        for label, command, yardstick, cwd in cases:
            if label[1] not in args.only:
                continue
            cpu: dict[str, list[float]] = {side: [] for side in sides}
            peak: dict[str, int] = {}
            for _ in range(args.runs):
                for side, src in sides.items():
                    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
                    spent, mib, said = child_cpu(command, env_for(src, cache), cwd)
                    # A child timing its own part prints it; a whole command is timed whole.
                    cpu[side].append(float(said) if yardstick is not None else spent)
                    peak[side] = max(peak.get(side, 0), mib)
                    shutil.rmtree(cache)
            said = ", ".join(f"{side} {statistics.median(v) * 1000:,.0f} ms (peak {peak[side]} MiB)"
                             for side, v in cpu.items())  # fmt: skip
            if len(sides) == 2:
                pairs = [b / a for a, b in zip(cpu["base"], cpu["this"], strict=True)]
                said += f"; this/base pair by pair median {statistics.median(pairs):.3f}"
            print(f"{label}: CPU {said}", flush=True)
            if args.callgrind and shutil.which("valgrind"):
                counts = []
                for side, src in sides.items():
                    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
                    whole = instructions(command, env_for(src, cache), cwd)
                    shutil.rmtree(cache)
                    if yardstick is not None:
                        cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
                        whole -= instructions(yardstick, env_for(src, cache), cwd)
                        shutil.rmtree(cache)
                    counts.append(f"{side} {whole:,.0f} M")
                print(f"{label}: instructions {', '.join(counts)}", flush=True)


if __name__ == "__main__":
    main()
