"""What a whole ``passprice --no-cache check`` costs in a checkout of passprice whose pricing-model code is hostile
and cheap in tokens (round digest89, issue 13: no input under 1 MB runs any command past 2 s).

Each case is a copy of this checkout's registry (``facts``, ``registry``, ``locks``, ``sources``) whose
``src/passprice`` holds a one-line ``pins.py`` and a ``locks.py`` of one form (``FORMS``) repeated as often as the
token cap allows (``--tokens``, counted as this checkout's ``pins._count_tokens`` counts them), and the same form
at the sizes session 43 measured (the old cap's 700,000 tokens as the old count made them, and 499,999 lines of
``a`` ended by ``\\r``: 999,998 bytes). For each case, this checkout's ``src`` and, with ``--base SRC``, another's
(main's, say, byte-compiled in a source tree of its own) run the command in turn, ``--runs`` times, alternated; a
case whose code is past the cap is refused unparsed and costs what a tiny module does. The yardstick ``python -c
pass`` is run in each round. CPU is user + system of the child (``os.wait4``), peak its maximum resident set.

Each side runs from its ``src`` as an editable install does (a source tree: the running package's own digest is
parsed, ``--no-cache``, unless this interpreter's site-packages holds an editable install's record of the same
bytes: since round fastcheck99 a ``pip install -e .`` of this checkout writes one, so this checkout's side takes its
digest from it until a module of the model is edited), or with ``--installed`` from a copy laid out as a wheel
installs it (``passprice/_data/schema``, no project file above it, its build's record of its own digest beside the
modules: ``pins.record``, which the running digest is then taken from by hashing the module files).

Run from a checkout: ``python benchmarks/digest89.py [--base /path/to/main/src] [--runs 3] [--only dense lines]``.
Nothing here is a test: CPU depends on the machine and how busy it is.
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

#: The forms: a head, a unit repeated and a tail (``tests/test_hostile_11.py``'s dense list, one name a line, ``a;``
#: statements, lines ended by ``\\r`` alone, and the costliest others found per token: lambdas, one-line ``if``
#: statements, subscripts, assignments, attributes, lines ended by a form feed and ``\\n``, f-strings of three fields).
FORMS: dict[str, tuple[bytes, bytes, bytes]] = {
    "dense": (b"x = [", b"a,", b"]\n"),
    "lines": (b"", b"a\n", b""),
    "semis": (b"", b"a;", b"\n"),
    "cr": (b"", b"a\r", b""),
    "lambda": (b"x = [", b"lambda:a,", b"]\n"),
    "ifs": (b"", b"if a:a\n", b""),
    "subs": (b"x = [", b"a[a],", b"]\n"),
    "assign": (b"", b"a=a\n", b""),
    "attr": (b"", b"a.a\n", b""),
    "ff": (b"", b"a\x0c\n", b""),
    "fields": (b"x = (", b"f'{a}{a}{a}' ", b")\n"),
}


def sized(form: str, tokens: int, count: object) -> bytes:
    """The module of ``form`` with as many units as ``count`` (a function of bytes) allows under ``tokens``."""
    head, unit, tail = FORMS[form]
    base = count(head + tail)  # type: ignore[operator]
    per = count(head + unit + tail) - base  # type: ignore[operator]
    return head + unit * ((tokens - base) // per) + tail


def registry_copy(root: Path, module: bytes) -> Path:
    """A copy of the checkout's registry at ``root`` as a checkout of passprice whose ``locks.py`` is ``module``."""
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(ROOT / folder, root / folder)
    package = root / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("LOCK_FORMAT = 2\n", encoding="utf-8")
    (package / "locks.py").write_bytes(module)
    return root


def child(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    """The CPU seconds (user + system) and peak memory (MiB) of one child, and the last line of its error output."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        err.seek(0)
        said = err.read().decode(errors="replace").strip().splitlines()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} in {cwd}: exit {code}: {said[-1:] }")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, said[-1] if said else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout's src folder to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, nargs="+",
                        help="the caps to size the forms at (default: this checkout's)")  # fmt: skip
    parser.add_argument("--only", nargs="+", choices=sorted(FORMS), default=list(FORMS))
    parser.add_argument("--installed", action="store_true", help="each side laid out as a wheel installs it")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    import re

    from passprice import pins

    old = re.compile(rb"\w+|[^\w\s]|\n")  # session 43's count, the old cap's

    def old_count(data: bytes) -> int:
        return len(old.findall(data))

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sides = {"this": ROOT / "src"}
        if args.base is not None:
            base = work / "base"
            shutil.copytree(args.base.resolve() / "passprice", base / "src" / "passprice",
                            ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
            (base / "pyproject.toml").write_text("", encoding="utf-8")  # a source tree: its record not trusted
            shutil.copytree(args.base.resolve().parent / "schema", base / "schema")
            sides = {"base": base / "src", **sides}
        if args.installed:
            for side, src in list(sides.items()):
                site = work / f"site-{side}"
                shutil.copytree(src / "passprice", site / "passprice", ignore=shutil.ignore_patterns("__pycache__"))
                shutil.copytree(src.parent / "schema", site / "passprice" / "_data" / "schema")
                script = ("import json, sys; sys.path.insert(0, sys.argv[1]); from passprice import pins; "
                          "pins.RECORD.write_text(json.dumps(pins.record()))")  # fmt: skip
                subprocess.run([py, "-I", "-B", "-c", script, str(site)], check=True)
                sides[side] = site
        for src in sides.values():
            compileall.compile_dir(src / "passprice", quiet=1)
        caps = args.tokens or [pins.MODEL_TOKENS]
        cases = [("none", b"x = 1\n")]
        for form in args.only:
            cases += [(f"{form} at {cap:,}", sized(form, cap, pins._count_tokens)) for cap in caps]
            cases.append((f"{form} at 700,000 (session 43's count)", sized(form, 700_000, old_count)))
        if "cr" in args.only:
            cases.append(("cr, 499,999 lines (999,998 bytes)", b"a\r" * 499_999))
        for label, module in cases:
            root = registry_copy(work / f"case{len(label)}-{abs(hash(label))}", module)
            cpu: dict[str, list[float]] = {side: [] for side in sides}
            peak: dict[str, int] = {}
            said: dict[str, str] = {}
            yardstick: list[float] = []
            for _ in range(args.runs):
                for side, src in sides.items():
                    env = dict(os.environ, PYTHONPATH=str(src), PASSPRICE_NO_MEMO="1",
                               PASSPRICE_CACHE_DIR=str(work / "cache"))  # fmt: skip
                    spent, mib, last = child([py, "-m", "passprice", "--no-cache", "check"], env, root)
                    cpu[side].append(spent)
                    peak[side] = max(peak.get(side, 0), mib)
                    said[side] = "not judged" if "not judged" in last else "judged"
                yardstick.append(child([py, "-c", "pass"], dict(os.environ), root)[0])
            shutil.rmtree(root)
            text = ", ".join(f"{side} {statistics.median(v) * 1000:,.0f} ms (peak {peak[side]} MiB, {said[side]})"
                             for side, v in cpu.items())  # fmt: skip
            print(f"{label} ({len(module):,} bytes, {pins._count_tokens(module):,} tokens): {text}; "
                  f"python -c pass {statistics.median(yardstick) * 1000:.0f} ms", flush=True)


if __name__ == "__main__":
    main()
