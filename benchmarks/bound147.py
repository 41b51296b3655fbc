"""What bounds the CPU of a command's quote look-ups (:class:`passprice.sources.Lookups`; docs/PERFORMANCE.md, the
look-up bound): CPU a look-up and a million characters searched, for three sets of look-ups, each timed in a child of
its own (user + sys from ``os.wait4``) beside ``python -c pass`` as the yardstick:

- ``shipped``: every span the checkout's cards quote, looked up in the stored excerpt its locator cites (on the page
  it names), the set repeated to ``--spans`` look-ups: an honest pull request's;
- ``ones``: ``'11'`` (and 1,000 other spans) in a 900,000-byte excerpt of ``1`` lines (tests/test_attack133.py);
- ``many_a``: a span of 98 ``a`` then ``b`` in a 900,000-byte excerpt of ``a`` (the slowest linear search found);
- ``simple``: a span of 97 ``a`` then ``ba`` in an excerpt of 14,000 ``a`` (under CPython's 30,000 characters, where
  its simple search compares the span at every place: :data:`passprice.sources.LINEAR_FROM`).

Each set is timed as the look-ups are made (``--linear-from`` 30,000, the text padded) and, with ``--linear-from 0``,
as they were (unpadded). Printed: CPU of the child less the yardstick's, a look-up, and a million characters counted
against :data:`passprice.sources.SEARCHED_MOST` (:meth:`passprice.sources.StoredText.searched_size`), and the load.

``--review``: the whole review a hostile pull request under 1 MB asks, in a git copy of the checkout (facts,
registry, locks, sources, schema): BASE stores the H200 product page's excerpt as one line of 900,000 ``a``, and HEAD
quotes 8 spans of 98 ``a`` and a last letter in each of the H200 card's 8 locators citing it (73 look-ups with its
derivation inputs' quotes, 1,800,000 characters each: 131.4 M, under the 128 MiB), every one NOT FOUND, each search
of the whole text; timed as ``passprice diff HEAD~1 HEAD`` (the ``passprice`` beside this ``python``), beside a review
of HEAD~1 changing one locator to quote one span the same way, and ``python -c pass``.

Run from a checkout: ``python benchmarks/bound147.py [--spans 2000] [--runs 3]`` or ``python benchmarks/bound147.py
--review``. Nothing here is a test: CPU depends on the machine and how busy it is.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

CHILD = r"""
import sys, tomllib
from pathlib import Path
from passprice import sources
from passprice.registry import find_root
from passprice.sources import StoredText, paged_spans, read_sources, stored_text

case, count, linear = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sources.LINEAR_FROM = linear
looks = []
if case == "shipped":
    root = find_root(Path.cwd())
    records = read_sources(root)[0]
    texts = {sid: stored_text(root, s) for sid, s in records.items()}

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("source"), str) and isinstance(node.get("locator"), str):
                yield node["source"], node["locator"]
            for v in node.values():
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)

    for card in sorted(Path("facts/cards").glob("*.toml")):
        for sid, locator in walk(tomllib.loads(card.read_text(encoding="utf-8"))):
            t = texts.get(sid)
            if t is not None and t.flat is not None:
                looks += [(t, page, span) for page, span in paged_spans(locator)]
else:
    if case == "ones":
        text, spans = "1\n" * 450_000, ["11", *(f"x{i}" for i in range(1000))]
    elif case == "many_a":
        text, spans = "a" * 900_000, ["a" * 98 + "b"]
    else:
        text, spans = "a" * 14_000, ["a" * 97 + "ba"]
    t = StoredText("s", "e", text=text, flat=" ".join(text.split()))
    looks = [(t, None, s) for s in spans]
base = len(looks)
looks = (looks * (count // max(base, 1) + 1))[:count]
chars = sum(t.searched_size(p) for t, p, _ in looks)
found = sum(t.holds(s, p) for t, p, s in looks)
print(base, len(looks), chars, found)
"""


def _cpu(argv: list[str]) -> tuple[float, str]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime, out


def _review(runs: int) -> None:
    """``--review``: see the module's docstring."""
    import hashlib
    import re
    import shutil
    import tempfile
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    passprice = str(Path(sys.executable).parent / "passprice")
    excerpt = "sources/excerpts/cite102-excerpt.txt"
    card = "facts/cards/h200_sxm_141gb.toml"

    def git(root: Path, *argv: str) -> None:
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *argv], cwd=root, check=True,
                       capture_output=True)

    def quoting(root: Path, per: int, locators: int) -> None:
        path = root / card
        count = iter(range(10_000))

        def spans(m: re.Match[str]) -> str:
            if next(count) >= locators:
                return m.group(0)
            return m.group(1) + '"' + " ".join(f"'{'a' * 98}{chr(98 + k)}'" for k in range(per)) + '"'

        path.write_text(re.sub(r'(?m)^(source = "nvidia-h200-product-page"\nlocator = ).*$', spans,
                               path.read_text(encoding="utf-8")), encoding="utf-8")

    with tempfile.TemporaryDirectory() as tmp:
        roots = []
        for name, per, locators in (("hostile", 8, 8), ("one span", 1, 1)):
            root = Path(tmp) / name.replace(" ", "_")
            for folder in ("facts", "registry", "locks", "sources", "schema"):
                shutil.copytree(repo / folder, root / folder)
            data = ("1\t" + "a" * 900_000 + "\n").encode()
            (root / excerpt).write_bytes(data)
            for record in (root / "sources").glob("*.toml"):
                text = record.read_text(encoding="utf-8")
                if f'excerpt = "{excerpt}"' in text:
                    record.write_text(re.sub(r'(?m)^excerpt_sha256 = "[0-9a-f]{64}"$',
                                             f'excerpt_sha256 = "{hashlib.sha256(data).hexdigest()}"', text),
                                      encoding="utf-8")
            git(root, "init", "-q", "-b", "main")
            git(root, "add", "-A")
            git(root, "commit", "-qm", "base: the page's excerpt 900,000 a")
            quoting(root, per, locators)
            git(root, "commit", "-qam", "head")
            roots.append((name, root))
        print(f"load {os.getloadavg()[0]:.1f}")
        for _ in range(runs):
            for name, root in roots:
                env = {**os.environ, "PASSPRICE_CACHE_DIR": str(root.parent / f"cache_{root.name}")}
                _children_cpu()  # what was spent before: not the review's
                proc = subprocess.Popen([passprice, "--root", str(root), "diff", "HEAD~1", "HEAD"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                out, err = proc.communicate()
                cpu = _children_cpu()
                said = out.splitlines()[1] if len(out.splitlines()) > 1 else err.strip()
                print(f"{name:9} exit {proc.returncode}  CPU {cpu:6.2f} s  {said[:150]}")
                yard, _ = _cpu([sys.executable, "-c", "pass"])
                print(f"          python -c pass {yard:.3f} s")
        print(f"load {os.getloadavg()[0]:.1f}")


_SPENT = [0.0]


def _children_cpu() -> float:
    """CPU (user + sys) of the children waited for since the last call."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    spent, _SPENT[0] = total - _SPENT[0], total
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--review", action="store_true")
    args = parser.parse_args()
    if args.review:
        _review(args.runs)
        return
    print(f"load {os.getloadavg()[0]:.1f}")
    for case in ("shipped", "ones", "many_a", "simple"):
        for linear in (30_000, 0):
            best = None
            for _ in range(args.runs):
                yard, _ = _cpu([sys.executable, "-c", "pass"])
                import_only, _ = _cpu([sys.executable, "-c", CHILD, case, "0", str(linear)])
                cpu, out = _cpu([sys.executable, "-c", CHILD, case, str(args.spans), str(linear)])
                spent = cpu - import_only
                if best is None or spent < best[0]:
                    best = (spent, yard, out)
            assert best is not None
            spent, yard, out = best
            base, looks, chars, found = (int(x) for x in out.split())
            print(f"{case:8} linear_from={linear:6} distinct={base:5} look-ups={looks:5} found={found:5} "
                  f"chars={chars / 1e6:8.1f} M  look-ups' CPU {spent:6.3f} s ({spent / looks * 1e6:7.1f} us a look-up, "
                  f"{spent / chars * 1e9 * 1e6 / 1e6:5.2f} ns a char)  python -c pass {yard:.3f} s")
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
