"""What a price run afresh (``PASSPRICE_NO_MEMO=1``, the cache warm) no longer does (issue 16, round afresh101).

``passprice.schema`` imports the C module ``_signal``, not :mod:`signal` (whose three enumerations of every signal,
handler and mask action no command needs from it: 1.9 M instructions), and three regular expressions of the modules
outside the pricing model are compiled when first used, not at import: the non-ASCII run of
:func:`passprice.errors.json_escaped`, the invisible characters past U+FFFF of the ``one-line`` format
(:func:`passprice.schema.one_line`) and a datasheet's ``TFLOPS`` (a schema problem's hint); together 4.0 M of a
price's 425.7 M instructions (callgrind, hash seed 0). Six more of the pricing modules (a lock's digest as a name,
what may follow a ``[lock]`` table, a coding declaration, a file's naming keys, an entry's ``[entry]`` header and
the next table): 2.5 M. Each is checked here by what the process holds at its end, and each pattern by what it
still answers once compiled.

A lock under a stack checks that its named stack's ``[stack]`` texts are still the pinned ones
(:func:`passprice.locks.require_named_stack`): the three texts are now a built object of the stack file's bytes,
not read off its whole validated document (8 M instructions): an edit of the stack file is read, not the texts
kept of its bytes before.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_helpers import bad, invoke
from passprice import checkpoints, errors, locks, pins, schema, scopes
from test_hostile_49 import STACKED, _locked

REPO = Path(__file__).resolve().parent.parent

#: The patterns compiled when first used, as :func:`re.compile` is given them (the keys of ``re``'s own cache).
LAZY = {
    "errors._run": "[^\x00-\x7e][^\x00-\x1f]*",
    "schema._past_bmp_invisible": (
        "[\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e00ff\U000e01f0-\U000e0fff]"
    ),
    "schema._operations": r"([kMGTPE]?)(FLOPS|OPS|FLOP/s|OP/s)",
    "locks.digest_ref": r"^(?:sha256:)?[0-9a-fA-F]{8,64}$",
    "locks._table_end": r"(?:[ \t]*(?:#.*)?\n)*(?:[ \t]*\[|[ \t]*(?:#.*)?\Z)",
    "pins._coding": rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)",
    "scopes.naming": r"general\.(?!architecture$|alignment$).*",
    "checkpoints._entry_header": r"^[ \t]*\[[ \t]*entry[ \t]*\][ \t]*(?:#.*)?$",
    "checkpoints._next_table": r"^[ \t]*\[",
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
    # the pricing modules' six
    assert locks.digest_ref().match("sha256:2748F58f") and not locks.digest_ref().match("r1-qwen7b-h200")
    assert locks.lock_table_of(b'[lock]\nserving = "a"\n\n# end\n[price]\nx = 1\n') == {"serving": "a"}
    assert locks._table_end().pattern == LAZY["locks._table_end"]
    assert pins._coding().match(b"# -*- coding: latin-1 -*-")[1] == b"latin-1"
    assert scopes.naming().fullmatch("general.name") and not scopes.naming().fullmatch("general.architecture")
    assert checkpoints._entry_table('# c\n[entry]\norigin = "synthetic"\n\n[tensors]\nx = 1\n') == {
        "origin": "synthetic"}
    assert (checkpoints._entry_header().pattern, checkpoints._next_table().pattern) == (
        LAZY["checkpoints._entry_header"], LAZY["checkpoints._next_table"])


def test_signals_held_holds_the_stopping_signals_as_numbers() -> None:
    # STOPPING is read off _signal (plain numbers, not signal.Signals members): SIGINT, SIGTERM, SIGHUP where defined
    import signal

    stopping = schema.STOPPING
    assert stopping == tuple(int(getattr(signal, n)) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


def test_a_stack_edited_since_its_texts_were_kept_is_read_again(tmp_path: Path) -> None:
    # The lock r1-stack names llamacpp-cuda-2405. Priced once (the stack's texts kept under its bytes), then the
    # stack retitled and a copy of it, as it was, registered as copy-2405: the lock's pins now describe copy-2405,
    # and the lock is refused by name, on the first run after the edit and on the next (the edited bytes' texts
    # kept in turn). Texts kept of the old bytes would have let the lock through.
    root = _locked(tmp_path)
    assert invoke("price", "--lock", str(root / STACKED), root=root).exit_code == 0
    stacks = root / "facts" / "stacks"
    text = (stacks / "llamacpp-cuda-2405.toml").read_text(encoding="utf-8")
    (stacks / "copy-2405.toml").write_text(text, encoding="utf-8")
    assert text.count('name = "llama.cpp, CUDA backend') == 1  # the [stack] table's title
    (stacks / "llamacpp-cuda-2405.toml").write_text(
        text.replace('name = "llama.cpp, CUDA backend', 'name = "Retitled llama.cpp, CUDA backend'), encoding="utf-8")
    said = (f"passprice: error: {root / STACKED}: stack.name: 'llamacpp-cuda-2405' is not the stack this lock's pins "
            "describe: its [stack] title, runtime and builds are those of registered stack 'copy-2405' (a lock names "
            "the stack its price was made under); re-lock it, or restore the lock from the last commit that holds it "
            "as written")
    for _ in range(2):
        assert bad("price", "--lock", str(root / STACKED), root=root) == [said]
