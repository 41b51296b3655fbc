"""``errors.json_escaped`` on 1 MB of JSON text outside ASCII (left44): the run-at-a-time escaper against the
character-at-a-time one it replaced (kept here as the reference, one regex callback a character), with
``json.dumps`` of the same document as the yardstick run in the same process. CPU seconds (``time.process_time``),
medians of 5. Run from a checkout: ``python benchmarks/json_escaped.py``. Nothing here is a test.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable
from functools import partial

from passprice.errors import _prints, json_escaped


def reference(text: str) -> str:
    """The escaper before left44: one callback a character outside ASCII."""
    if text.isascii() and "\x7f" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        c = m.group(0)
        if _prints(c):
            return c
        code = ord(c)
        if code > 0xFFFF:
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"

    return re.sub("[^\x00-\x7e]", one, text)


def cpu(run: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


SAMPLES = {
    # (name, a document of about 1 MB of JSON text)
    "cyrillic words": {"names": ["Привет мир, это тест " * 4] * 6_000},
    "CJK, no spaces": {"names": ["漢字仮名交じり文" * 40] * 1_000},
    "indented, short strings": [{"name": "h200_sхm", "note": "µs ≤ 20"} for _ in range(20_000)],
    "hostile: a bidi control a word": {"names": ["ev\u202eil Привет\u2028" * 10] * 6_000},
}

if __name__ == "__main__":
    for name, doc in SAMPLES.items():
        indent = 2 if isinstance(doc, list) else None
        text = json.dumps(doc, ensure_ascii=False, indent=indent)
        assert json_escaped(text) == reference(text)
        mb = len(text.encode("utf-8")) / 1e6
        ours, old = cpu(partial(json_escaped, text)), cpu(partial(reference, text))
        yard = cpu(partial(json.dumps, doc, ensure_ascii=False, indent=indent))
        print(f"{name}: {mb:.2f} MB: {old / mb:.3f} -> {ours / mb:.3f} s/MB ({old / ours:.1f} x); "
              f"json.dumps {yard / mb:.3f} s/MB; escaping / dumps {old / yard:.1f} -> {ours / yard:.2f}")
