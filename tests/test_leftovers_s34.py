"""Issue 13's small leftovers named in session 33's closing note (session 34, left37), each reproduced here first.

1. ``new-serving NAME`` where ``registry/servings/NAME.toml`` is a link into a loop of links named the point where
   ``os.path.realpath`` gave up (``x.toml``, or a file outside the registry), not the path the user asked for.
2. ``NotResident`` on a card whose ``memory.capacity`` is 1e-9 B said the card "holds 0": a byte figure below one
   byte is written with significant digits (``tables.byte_figure``, the one way a refusal writes bytes).
3. ``kv --contexts 1000000`` printed ``1000000`` where every other count has thousands separators.
4. The README's benchmark text said "127 runs" (and "All 144 runs", DESIGN "each of the 144 shipped runs") of the
   registry's 160 measured runs; ``benchmarks/stacks.py`` itself stopped at the first mixture of experts' run
   (``Routed``) and timed calibrate's kept fits on every repeat after the first.
5. A Ctrl-C during ``passprice --no-cache check`` was lost: exit 0, "all holds", nothing on stderr (2 of 60 Ctrl-Cs
   0.05-1.5 s in; 6 of 30 timed to land inside a compiled validation, 0 of 30 now). jsonschema-rs ran the signal's
   Python handler inside its own code and cleared the ``KeyboardInterrupt`` it raised; passprice now holds the
   stopping signals back around every call into it (``schema.signals_held``). A Ctrl-C as ``open_regular``'s
   ``os.fdopen`` returned closed the descriptor twice and exited 2 with "standard output: Bad file descriptor"
   (1 of 50).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, invoke
from passprice import files, schema
from passprice.errors import InputError
from passprice.kv import context_label
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.review.changes import _figure, _quoted_figures
from passprice.serving import NotResident, OnChipOverflow
from passprice.tables import byte_figure

CHECKPOINT = "codellama-7b-f16"
CARD = "a100_pcie_80gb"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's facts and registry (no locks), with a card of 1e-9 B of memory, ``tiny``."""
    made = tmp_path_factory.mktemp("s34") / "root"
    made.mkdir()
    for folder in ("facts", "registry", "sources"):
        shutil.copytree(REPO / folder, made / folder)
    text = (made / "facts" / "cards" / f"{CARD}.toml").read_text(encoding="utf-8")
    capacity = re.search(r'\[memory\.capacity\]\nvalue = [0-9.e+-]+\nunit = "[A-Za-z]+"', text)
    assert capacity is not None
    text = text.replace(capacity.group(0), '[memory.capacity]\nvalue = 1e-9\nunit = "B"')
    text = text.replace('name = "NVIDIA A100 80GB PCIe"', 'name = "A tiny test card"')
    (made / "facts" / "cards" / "tiny.toml").write_text(text, encoding="utf-8")
    return made


# 1. A link into a loop is named as the user gave it.


def test_1_new_serving_of_a_link_into_a_loop_names_the_serving_file(root: Path) -> None:
    servings = root / "registry" / "servings"
    (servings / "loop-a.toml").symlink_to("loop-x.toml")  # loop-a → loop-x → loop-y → loop-x
    (servings / "loop-x.toml").symlink_to("loop-y.toml")
    (servings / "loop-y.toml").symlink_to("loop-x.toml")
    outside = root / "elsewhere"  # loop-b → a link outside the registry that loops
    outside.mkdir()
    (outside / "p").symlink_to("q")
    (outside / "q").symlink_to("p")
    (servings / "loop-b.toml").symlink_to(outside / "p")
    try:
        for name in ("loop-a", "loop-b"):
            for force in ((), ("--force",)):
                result = invoke("new-serving", name, "--card", CARD, "--checkpoint", CHECKPOINT, *force, root=root)
                assert result.exit_code == 2, result.output
                # was "…/loop-x.toml: a loop of symbolic links" and "…/elsewhere/p: …"
                assert result.stderr == f"passprice: error: {servings / name}.toml: a loop of symbolic links\n"
                assert result.stdout == ""
    finally:
        for name in ("loop-a", "loop-b", "loop-x", "loop-y"):
            (servings / f"{name}.toml").unlink()


def test_1_where_a_write_lands_is_named_by_the_link_for_a_loop(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("x")
    (tmp_path / "x").symlink_to("y")
    (tmp_path / "y").symlink_to("x")
    with pytest.raises(InputError, match=f"^{re.escape(str(tmp_path / 'a'))}: a loop of symbolic links$"):
        files.target(tmp_path / "a")
    # a link to a file lands on the file; a link to nothing, on where it points (the write creates it)
    (tmp_path / "f").write_text("")
    (tmp_path / "to-f").symlink_to("f")
    (tmp_path / "to-none").symlink_to("none")
    assert files.target(tmp_path / "to-f") == tmp_path / "f"
    assert files.target(tmp_path / "to-none") == tmp_path / "none"


# 2. A byte figure below one byte is not rounded to 0.


def test_2_byte_figures() -> None:
    assert byte_figure(15_625_109_504.0) == "15,625,109,504"
    assert byte_figure(1.0) == "1"
    assert byte_figure(1.4) == "1"
    assert byte_figure(0.0) == "0"
    assert byte_figure(1e-9) == "1e-09"
    assert byte_figure(0.5) == "0.5"
    assert byte_figure(0.123456) == "0.1235"
    assert byte_figure(-0.25) == "-0.25"
    assert byte_figure(float("inf")) == "inf"


def test_2_refusals_say_what_a_tiny_memory_holds() -> None:
    assert str(NotResident(2_000.0, 1e-9)) == (
        "the card memory must hold 2,000 bytes but holds 1e-09: lower the batch or the context limit, page the KV "
        "cache (--kv-page), or let sequences use host memory (--host-memory)")
    assert str(NotResident(2_000.0, 5e-10, weights=1_000.0).under_use(0.5, 1e-9)).startswith(
        "the card memory must hold 2,000 bytes but holds 5e-10 (memory use 0.5 of its 1e-09): the weights and "
        "embedding table alone take 1,000 bytes, 2e+12 times what it holds: no batch fits")
    # how many fit, beside what is held once, a sequence's bytes below one (was "0 bytes a sequence")
    assert str(NotResident(100.0, 10.0, weights=4.0, per_sequence=0.25)).startswith(
        "the card memory must hold 100 bytes but holds 10: at most 24 sequences fit beside the 4 bytes held once, "
        "0.25 bytes a sequence (passprice max-batch): ")
    assert str(OnChipOverflow(3.0, 2.5e-7)).startswith(
        "the batch's token-rows take 3 bytes on chip but the card holds 2.5e-07: ")


def test_2_price_on_a_card_of_a_billionth_of_a_byte(root: Path) -> None:
    result = invoke("price", "--card", "tiny", "--checkpoint", CHECKPOINT, "--no-lock", root=root)
    assert result.exit_code == 1, result.output
    # was "… bytes but holds 0: …"
    assert result.stderr.startswith("passprice: refused: NotResident: the card memory must hold 15,625,109,504 bytes "
                                    "but holds 1e-09: the weights and embedding table alone take 13,477,625,856 "
                                    "bytes, 1.35e+19 times what it holds: no batch fits")


# 3. A context that is no whole number of K has separators, as every count beside it.


def test_3_a_context_written_out_has_separators() -> None:
    assert [context_label(n) for n in (1_000_000, 5_000, 999, 4_096, 1_048_576)] == [
        "1,000,000", "5,000", "999", "4K", "1M"]


def test_3_kv_shows_a_million_positions_with_separators() -> None:
    result = invoke("kv", "gemma3-270m-q4_k_m", "--contexts", "5000,1000000", "--cards", "h100_sxm5_80gb")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(line.startswith("5,000 ") for line in lines), result.stdout
    refused = [line for line in lines if "refused (ContextBeyondModel)" in line]
    assert [line.split()[0] for line in refused] == ["1,000,000"], result.stdout  # was "1000000"
    assert re.search(r"^card +memory +5,000$", result.stdout, re.M), result.stdout
    assert "1000000" not in result.stdout


# 4. The README's counts of measured runs are today's.


def test_4_the_readme_and_design_count_every_measured_run() -> None:
    runs = load_runs(Root(REPO))
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    design = " ".join((REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8").split())
    said = {  # each the count of every shipped run (the limit's bound on each: test_calibrate)
        "the yardstick": re.findall(r"the yardstick, ([0-9,]+) limits", readme),
        "validate of all": re.findall(r"`validate` of all ([0-9,]+) runs", readme),
        "all below their limit": re.findall(r"All ([0-9,]+) runs are below their limit", readme),
        "each shipped run quotes its own": re.findall(r"each of the ([0-9,]+) shipped runs quotes its own", design),
    }
    assert said == {what: [f"{len(runs):,}"] for what in said}, (len(runs), said)
    # and each does: its locator quotes its tokens/s (what the review asks of an added run, diff._added_run_asks)
    assert [r.id for r in runs if _figure(r.tokens_per_s) not in _quoted_figures(r.locator)] == []


# 5. A Ctrl-C is never lost in jsonschema-rs, nor turned into a double close.


#: The child :func:`test_5_a_ctrl_c_during_the_compiled_validator_is_raised_after_it` runs: a compiled validator
#: that does what jsonschema-rs did with a signal that came while it ran (its handler's ``KeyboardInterrupt`` cleared,
#: the verdict returned), noting whether SIGINT was held back meanwhile; the SIGINT it sends is its own process's.
_SWALLOWING = """
import gc, signal, sys, threading
from passprice import schema

held = []

class Swallowing:
    def is_valid(self, document):
        held.append(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ()))
        try:
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # this thread's: held, it waits
            for _ in range(1_000):  # the interpreter runs a handler of a signal let through within these
                pass
        except KeyboardInterrupt:
            pass
        return True

signal.signal(signal.SIGINT, signal.default_int_handler)
schema._fast_validator = lambda kind, folder: Swallowing()
before = signal.pthread_sigmask(signal.SIG_BLOCK, ())
gc.disable()  # no collection, so no finalizer or gc callback, between the signal's delivery and its handler
try:
    schema._surely_valid({}, "card", sys.argv[1])
    said = "no KeyboardInterrupt"  # was: True, the Ctrl-C gone
except KeyboardInterrupt:
    said = "KeyboardInterrupt"
gc.enable()
print(said, held, signal.pthread_sigmask(signal.SIG_BLOCK, ()) == before)
"""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks on this platform")
def test_5_a_ctrl_c_during_the_compiled_validator_is_raised_after_it() -> None:
    # Run in a process of its own (left98): its SIGINT, sent to the test process, was raised wherever Python next
    # ran code there, once inside hypothesis's gc callback (a collection as the mask was restored): "Exception
    # ignored in: <function gc_cumulative_time.<locals>.gc_callback>", KeyboardInterrupt, a warning of the whole run.
    done = subprocess.run([sys.executable, "-c", _SWALLOWING, str(REPO / "schema")], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "KeyboardInterrupt [True] True\n", "")


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks on this platform")
def test_5_signals_held_restores_the_mask_it_found() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    with schema.signals_held():
        inside = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    assert set(schema.STOPPING) <= inside
    assert signal.pthread_sigmask(signal.SIG_BLOCK, ()) == before


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks on this platform")
def test_5_a_ctrl_c_as_the_signals_are_held_leaves_none_held(monkeypatch: pytest.MonkeyPatch) -> None:
    # the function signals_held calls: _signal's (schema does not import signal, whose enumerations a price does not
    # need: afresh101), which signal.pthread_sigmask wraps
    real = schema.signal.pthread_sigmask

    def raising(how: int, mask: Any) -> Any:  # the signal came just before the block: raised as the call returns
        was = real(how, mask)
        if how == signal.SIG_BLOCK and mask:
            raise KeyboardInterrupt
        return was

    before = real(signal.SIG_BLOCK, ())
    monkeypatch.setattr(schema.signal, "pthread_sigmask", raising)
    with pytest.raises(KeyboardInterrupt), schema.signals_held():
        pass
    after = real(signal.SIG_BLOCK, ())
    real(signal.SIG_SETMASK, before)
    assert after == before  # was: SIGINT, SIGTERM and SIGHUP held for good


def test_5_a_ctrl_c_as_a_file_object_is_made_stays_a_ctrl_c(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f.toml").write_text("x = 1\n")
    real = os.fdopen

    def interrupted(fd: int, *args: Any, **kwargs: Any) -> Any:
        real(fd, *args, **kwargs)  # made, then dropped as the interrupt unwinds: it closes fd
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", interrupted)
    with pytest.raises(KeyboardInterrupt):  # was OSError(EBADF): "standard output: Bad file descriptor", exit 2
        files.open_regular(tmp_path / "f.toml")
