"""What a price run afresh (``PASSPRICE_NO_MEMO=1``, the cache warm) no longer does at import (issue 16, round
afresh101): ``passprice.schema`` imports the C module ``_signal``, not :mod:`signal` (whose three enumerations
of every signal, handler and mask action no command needs from it: 1.9 M instructions), and three regular
expressions of the modules outside the pricing model are compiled when first used, not at import: the non-ASCII
run of :func:`passprice.errors.json_escaped`, the invisible characters past U+FFFF of the ``one-line`` format
(:func:`passprice.schema.one_line`) and a datasheet's ``TFLOPS`` (a schema problem's hint); together 4.0 M of a
price's 425.7 M instructions (callgrind, hash seed 0). Each is checked here by what the process holds at its end,
and each pattern by what it still answers once compiled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from passprice import errors, schema

REPO = Path(__file__).resolve().parent.parent

#: The patterns compiled when first used, as :func:`re.compile` is given them (the keys of ``re``'s own cache).
LAZY = {
    "errors._run": "[^\x00-\x7e][^\x00-\x1f]*",
    "schema._past_bmp_invisible": (
        "[\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e00ff\U000e01f0-\U000e0fff]"
    ),
    "schema._operations": r"([kMGTPE]?)(FLOPS|OPS|FLOP/s|OP/s)",
}

_RUN = """
import re, sys
sys.argv = ["passprice", *{args!r}]
from passprice import entry
import passprice.entry
def report():
    patterns = {{key[1] for key in re._cache}}
    lazy = {lazy!r}
    print("signal:", "signal" in sys.modules)
    print("compiled:", ",".join(sorted(name for name, p in lazy.items() if p in patterns)) or "-")
try:
    entry.main()
except SystemExit as e:
    assert e.code == 0, e.code
finally:
    report()
"""


def _run(args: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _RUN.format(args=args, lazy=LAZY)], capture_output=True, text=True,
                          timeout=120, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()[-2:]


def test_a_price_and_a_best_afresh_import_no_signal_and_compile_none_of_the_lazy_patterns(tmp_path: Path) -> None:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache"), "PASSPRICE_NO_MEMO": "1"}
    _run(["price", "r1-qwen7b-h200", "--json"], env)  # the first run fills the cache (and validates: may compile)
    assert _run(["price", "r1-qwen7b-h200", "--json"], env) == ["signal: False", "compiled: -"]
    assert _run(["best", "r1-qwen7b-h200", "--json"], env) == ["signal: False", "compiled: -"]


def test_the_lazy_patterns_answer_as_the_module_level_ones_did() -> None:
    # json_escaped's run: a character past printable ASCII up to the next C0 control, each written as it prints
    # or escaped (DEL -> \u007f, U+202E -> \u202e; é prints)
    assert errors.json_escaped("a\x7fé\u202e\nb") == "a\\u007fé\\u202e\nb"
    assert errors.json_escaped("plain") == "plain"
    assert errors._run().pattern == LAZY["errors._run"]
    # the one-line format: a tag character refused, an emoji and text kept
    assert schema.one_line("Table 1") and schema.one_line("\U0001f600 1") and schema.one_line(3)
    assert not schema.one_line("Table\U000e0031")
    assert schema._past_bmp_invisible().pattern == LAZY["schema._past_bmp_invisible"]
    # the TFLOPS hint: half the figure, in the prefix's MAC/s unit where one is allowed
    hint = schema._operations_hint("TFLOPS", ["MAC/s", "TMAC/s"])
    assert hint.startswith(": a datasheet's TFLOPS counts a multiply-add as two operations, so give half its "
                           "figure in TMAC/s"), hint
    assert schema._operations_hint("TFLOPS", ["B/s"]) == ""
    assert schema._operations().pattern == LAZY["schema._operations"]


def test_signals_held_holds_the_stopping_signals_as_numbers() -> None:
    # STOPPING is read off _signal (plain numbers, not signal.Signals members): SIGINT, SIGTERM, SIGHUP where defined
    import signal

    stopping = schema.STOPPING
    assert stopping == tuple(int(getattr(signal, n)) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
