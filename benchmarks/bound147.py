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

Run from a checkout: ``python benchmarks/bound147.py [--spans 2000] [--linear-from 30000]``. Nothing here is a
test: CPU depends on the machine and how busy it is.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

CHILD = r"""
import sys, tomllib
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
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
