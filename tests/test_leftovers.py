"""Leftovers of the attack rounds and the newcomer walkthrough (issue 13), each with its reproducer built in the test,
asserting the exit status and the error line: empty text in a lock, an empty environment variable, counts written
with a sign or a space, a trace with a byte-order mark, a registry folder that is a file, and the newcomer's
leftovers listed above their tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import click
import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice.locks import Lock, lock_text, read_lock

R1 = "r1-qwen7b-h200"
HEADER = REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
EMPTY = 'is empty (""): give the text, or leave the key out if it is optional'


# ---------------------------------------------------------------------------------------------------------------------
# (1) A lock's text fields took the empty string: a lock re-digested with `note = ""`, `title = ""` or an empty
# serving description was reproduced without a word. Each is refused by the lock schema (minLength), one line naming
# the file and the key; and so are the fields of the files a lock copies them from, so `lock` never writes one.


def _fact_note(lock: Lock) -> Lock:
    facts = dict(lock.facts)
    facts["memory.bandwidth"] = attrs.evolve(facts["memory.bandwidth"], note="")
    return attrs.evolve(lock, facts=facts)


def _fact_derivation_text(lock: Lock) -> Lock:
    facts = dict(lock.facts)
    facts["memory.bandwidth"] = attrs.evolve(facts["memory.bandwidth"], derivation="")
    return attrs.evolve(lock, facts=facts)


def _weakest(lock: Lock) -> Lock:
    price: dict[str, Any] = dict(lock.price)
    price["weakest"] = [""]
    return attrs.evolve(lock, price=price)


EMPTIED: list[tuple[Callable[[Lock], Lock], str]] = [
    (_fact_note, 'facts."memory.bandwidth".note'),
    (_fact_derivation_text, 'facts."memory.bandwidth".derivation'),
    (lambda lock: attrs.evolve(lock, card_pin=attrs.evolve(lock.card_pin, title="")), "card.title"),
    (lambda lock: attrs.evolve(lock, serving=attrs.evolve(lock.serving, description="")), "serving.description"),
    (_weakest, "price.weakest.0"),
]


@pytest.mark.parametrize(("empty", "key"), EMPTIED, ids=[key for _, key in EMPTIED])
def test_an_empty_text_in_a_lock_is_refused_naming_file_and_key(
    tmp_path: Path, empty: Callable[[Lock], Lock], key: str
) -> None:
    lock = read_lock(REPO / "locks" / f"{R1}.lock.toml")
    file = tmp_path / "bad.lock.toml"
    file.write_text(lock_text(empty(lock)), encoding="utf-8")  # every digest recomputed, as an attacker would
    [line] = bad("reproduce", str(file))
    assert line == f"passprice: error: {file}: {key}: {EMPTY}"


def test_an_empty_pricing_model_in_a_first_format_lock_is_refused(tmp_path: Path) -> None:
    lock = read_lock(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml")
    file = tmp_path / "bad.lock.toml"
    file.write_text(lock_text(attrs.evolve(lock, info=attrs.evolve(lock.info, pricing_model=""))), encoding="utf-8")
    [line] = bad("reproduce", str(file))
    assert line == f"passprice: error: {file}: lock.pricing_model: {EMPTY}"


def test_an_empty_note_in_a_card_is_refused_so_no_lock_pins_one(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    head, sep, tail = text.partition("[memory.bandwidth]\n")
    assert sep
    card.write_text(head + sep + 'note = ""\n' + tail, encoding="utf-8")
    out = tmp_path / "x.lock.toml"
    bad("lock", R1, "-o", str(out), root=root, says=f"{card}: memory.bandwidth.note: {EMPTY}")
    assert not out.exists()


# ---------------------------------------------------------------------------------------------------------------------
# (2) PASSPRICE_MAX_HEADER_BYTES set but empty was "'' is not a number of bytes": an empty variable is unset, as most
# tools read one; a bad value that is not empty stays one line naming the variable.


def test_an_empty_header_cap_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", "")
    result = invoke("header", str(HEADER), "--json")
    assert result.exit_code == 0, result.output
    assert '"architecture": "gemma3"' in result.stdout
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", " ")
    bad("header", str(HEADER), says="PASSPRICE_MAX_HEADER_BYTES: ' ' is not a number of bytes")


# ---------------------------------------------------------------------------------------------------------------------
# (3) Counts written ' 5', '+5' or '1_000' were read as 5 and 1,000 (Python's int and float take them) in options,
# lists and ranges; `--batches 5-1` said "not a range". Each is one line naming the option and the text, exit 2.


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("price", R1, "--batch", " 5"), "Invalid value for '--batch': ' 5' holds a space: write the number in digits "
         "alone (a whole number from"),
        (("price", R1, "--batch", "+5"), "Invalid value for '--batch': '+5' holds a '+' sign"),
        (("price", R1, "--limit", "4_096"), "Invalid value for '--limit': '4_096' holds an underscore"),
        (("price", R1, "--head-rows", "5 "), "Invalid value for '--head-rows': '5 ' holds a space"),
        (("price", R1, "--position", "+5"), "Invalid value for '--position': '+5' holds a '+' sign"),
        (("sweep", R1, "--batches", " 5"), "--batches: ' 5' holds a space: write numbers in digits alone, "
         "comma-separated (1,2,8 or 1-64 or 1-4096*2)"),
        (("sweep", R1, "--batches", "1,+5"), "--batches: '+5' holds a '+' sign"),
        (("sweep", R1, "--batches", "1-+64"), "--batches: '1-+64' holds a '+' sign"),
        (("sweep", R1, "--batches", "1, 2"), "--batches: ' 2' holds a space"),
        (("sweep", R1, "--batches", "5-1"), "--batches: '5-1' runs from high to low: write 1-5"),
        (("sweep", R1, "--batches", "64..1*2"), "--batches: '64-1*2' runs from high to low: write 1-64*2"),
        (("sweep", R1, "--batches", "1", "--positions", " 512"), "--positions: ' 512' holds a space"),
        (("sweep", R1, "--batches", "1", "--draft-tokens", "+1"), "--draft-tokens: '+1' holds a '+' sign"),
        (("kv", "gemma3-270m-q4_k_m", "--contexts", "4k, 32k"), "--contexts: ' 32k' holds a space: write sizes in "
         "digits alone"),
        (("speculate", "qwen35-27b-h200-mtp", "--tokens", "+2"), "--tokens: '+2' holds a '+' sign: write draft "
         "lengths"),
        (("speculate", "qwen35-27b-h200-mtp", "--tokens", "8..1"), "--tokens: '8..1' runs from high to low: write "
         "1..8"),
    ],
)
def test_a_count_with_a_space_sign_or_underscore_is_refused(args: tuple[str, ...], says: str) -> None:
    [line] = bad(*args)
    assert says in line


def test_counts_in_digits_alone_still_read() -> None:
    result = invoke("sweep", R1, "--batches", "0008,1-2", "--json")
    assert result.exit_code == 0, result.output
    assert [row["batch"] for row in json.loads(result.stdout)] == [8, 1, 2]


# ---------------------------------------------------------------------------------------------------------------------
# (4) A JSONL trace starting with a UTF-8 byte-order mark was accepted, as JSON allows a parser to (RFC 8259 §8.1),
# while a TOML file with one was refused: since session 24 one rule for every text file, refused (files.refuse_bom,
# tests/test_hostile_s24.py); one starting a later line (files joined together) is refused naming the line.

TRACE = (
    '{"arrival_s": 0, "prompt_tokens": 100, "output_tokens": 8}\n'
    '{"arrival_s": 0.5, "prompt_tokens": 200, "output_tokens": 4}\n'
)


def test_a_trace_starting_with_a_byte_order_mark_is_refused_as_a_toml_file_is(tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "marked.jsonl"
    plain.write_text(TRACE, encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + TRACE.encode())
    assert invoke("simulate", R1, "--trace", str(plain), "--json").exit_code == 0
    [line] = bad("simulate", R1, "--trace", str(marked), "--json")
    assert line == f"passprice: error: {marked}: starts with a byte-order mark (U+FEFF): save it as UTF-8 without BOM"


def test_a_byte_order_mark_past_the_first_line_is_refused_naming_the_line(tmp_path: Path) -> None:
    joined = tmp_path / "joined.jsonl"
    first, second = TRACE.splitlines(keepends=True)
    joined.write_bytes(first.encode() + b"\xef\xbb\xbf" + second.encode())
    [line] = bad("simulate", R1, "--trace", str(joined))
    assert line == (
        f"passprice: error: {joined}:2: starts with a byte-order mark (U+FEFF): files joined together? save each as "
        "UTF-8 without BOM"
    )


# ---------------------------------------------------------------------------------------------------------------------
# (6) `check` stopped at a registry folder replaced by a regular file (registry/servings, sources, …): one line and
# nothing else checked. Now that one line is on stderr (exit 2) and every other file and lock is still checked and
# shown, as for one bad card.

FOLDER_IS_A_FILE = "is a regular file, not a folder: the registry keeps its files of this kind in one"


@pytest.mark.parametrize(
    ("folder", "shown"),
    [
        ("registry/servings", "0 servings, 10 locks"),
        ("facts/cards", "0 cards, 2 drafts"),
        ("registry/checkpoints", "0 checkpoints"),
        ("sources", "0 sources, 17 servings, 10 locks"),
    ],
)
def test_check_names_a_folder_that_is_a_file_and_checks_the_rest(tmp_path: Path, folder: str, shown: str) -> None:
    root = copy_root(tmp_path)
    shutil.rmtree(root / folder)
    (root / folder).write_text("x\n", encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == f"passprice: error: {folder}: {FOLDER_IS_A_FILE}"
    assert all(line.startswith("passprice: error: ") for line in lines)
    assert shown in result.stdout.splitlines()[0]
    assert result.stdout.count("\nlock ") == 10  # every lock still judged and shown
    assert result.stdout.endswith("check FAILED\n")


# ---------------------------------------------------------------------------------------------------------------------
# (7) The newcomer's leftovers.

# `sweep --help` said "(issue 14)": the project's issue numbers mean nothing to a user. No help text and no schema
# description (an editor shows them) carries one.


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out += _commands(command, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


def test_no_help_text_or_schema_description_names_an_internal_issue() -> None:
    from passprice.cli import cli

    for command in _commands(cli):
        result = invoke(*command, "--help")
        assert result.exit_code == 0, (command, result.output)
        assert not re.search(r"\bissues?\s+\d", result.stdout, re.IGNORECASE), (command, result.stdout)
    for path in sorted((REPO / "schema").glob("*.schema.json")):
        assert not re.search(r"\bissues?\s+\d", path.read_text(encoding="utf-8"), re.IGNORECASE), path


# The `checkpoints` listing showed a sha256 while a lock pins a content digest, and nothing said why they differ.


def test_the_checkpoints_listing_says_which_digest_it_shows() -> None:
    result = invoke("checkpoints")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].endswith("  sha256")
    assert (
        "  sha256: of the header file as imported; a lock pins its content digest instead (of the metadata and tensor "
        "table priced: the same for any copy or name of the header)"
    ) in result.stdout.splitlines()  # then a line for each entry with a draft (MTP) block (walkthrough 10)


# `--batch 0` was refused as Empty (exit 1) while the option's range said 0 was allowed. --batch now takes what a
# serving file's batch takes (at least 1; a serving file with batch = 0 was already bad input, exit 2), and its help
# says so; a sweep's --batches may still list 0, whose row is refused as Empty.


def test_batch_0_is_out_of_the_options_range_as_in_a_serving_file() -> None:
    for command in ("price", "lock", "speculate"):
        [line] = bad(command, R1, "--batch", "0")
        assert "Invalid value for '--batch': 0 is out of range (a whole number from 1 to 4,294,967,295)" in line
    assert "Sequences per pass (at least 1)." in invoke("price", "--help").stdout
    # a sweep's batches are 1 and up too, said in the same words (exit 2; test_fix181.py: it was a row refused Empty)
    result = invoke("sweep", R1, "--batches", "0", "--json")
    assert result.exit_code == 2, result.output
    assert "--batches: '0': 0 is out of range (a whole number from 1 to 4,294,967,295)" in result.stderr


# `price --limit N` on a locked serving exits 0: not a bug. A lock's policy is its floors (the provenance a price may
# rest on), and they hold; a price of the serving changed by an option is a what-if the library flags as not the
# locked price (passprice.enforce), in the table and in --json, beside the recorded price.


def test_an_option_changing_a_locked_serving_is_priced_and_flagged_not_the_locked_price() -> None:
    result = invoke("price", R1, "--limit", "1024", "--json")
    assert result.exit_code == 0, result.output
    lock = json.loads(result.stdout)["lock"]
    # both price locks of the serving record the limit at batch 1 (the one made under llamacpp-cuda-2405 too, whose
    # limit a price without --stack is compared with: stacklock 29)
    assert [moved["lock"] for moved in lock["moved"]] == [R1, f"{R1}-llamacpp"]
    for moved in lock["moved"]:
        assert moved["recorded_batch"] == 1
        assert moved["serving"] == [
            "contexts: share 1.0, position 2048.0, limit 4096 → share 1.0, position 512.0, limit 1024"
        ]


# ---------------------------------------------------------------------------------------------------------------------
# (5) Ctrl-C near a command's end: in 4 of 40 runs of `price` interrupted near their end the process was killed by
# SIGINT (status -2: Python puts the default action back before it tears its modules down), and in 1 of 40 click said
# "Aborted!" with exit 1 (a KeyboardInterrupt raised after the command, in click's own code). Past a command's body
# Ctrl-C now ends the process at once with its line and 130, and the console script ends without the interpreter's
# teardown (os._exit from the last exit handler, as the memo's replay ends). Each reproducer sends SIGINT to the process
# itself at one of those moments; the window after Python restores the default action (its module teardown) has no
# hook to reproduce it from, and is not reached any more.

_SELF_INTERRUPTED = """
import atexit, os, signal, sys
from passprice import entry
from passprice.cli import app
moment = sys.argv[1]
interrupt = lambda: os.kill(os.getpid(), signal.SIGINT)
invoke = app._Group.invoke
def hooked(self, ctx):
    if moment == "close":  # as click closes the command's context, after the command
        ctx.call_on_close(interrupt)
    elif moment == "atexit":  # among the interpreter's exit handlers (a module registers one as it is imported)
        atexit.register(interrupt)
    return invoke(self, ctx)
app._Group.invoke = hooked
sys.argv = ["passprice", "cards"]
entry.main()
"""


@pytest.mark.parametrize(("moment", "status", "stderr"), [
    ("close", 130, "passprice: interrupted\n"),
    ("atexit", 130, "passprice: interrupted\n"),
])
def test_ctrl_c_after_the_command_exits_130_never_by_the_signal(moment: str, status: int, stderr: str) -> None:
    env = {**os.environ, "PASSPRICE_NO_MEMO": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _SELF_INTERRUPTED, moment], capture_output=True, text=True, env=env, timeout=60,
        cwd=REPO,
    )
    assert (done.returncode, done.stderr) == (status, stderr)
    assert done.stdout.startswith("card ")  # the listing itself was printed whole before


def test_an_empty_text_in_a_pinned_derivation_input_is_refused(tmp_path: Path) -> None:
    # The lock schema left a derivation's inputs untyped: an input's locator of "" was reproduced without a word.
    lock = read_lock(REPO / "locks" / "r1-qwen7b-mi300x-int8kv.lock.toml")
    facts = dict(lock.facts)
    derivation: Any = facts["array"].derivation
    inputs = list(derivation.inputs)
    [at] = [i for i, item in enumerate(inputs) if item.locator]
    inputs[at] = attrs.evolve(inputs[at], locator="")
    facts["array"] = attrs.evolve(facts["array"], derivation=attrs.evolve(derivation, inputs=tuple(inputs)))
    file = tmp_path / "bad.lock.toml"
    file.write_text(lock_text(attrs.evolve(lock, facts=facts)), encoding="utf-8")
    [line] = bad("reproduce", str(file))
    assert line == f"passprice: error: {file}: facts.array.derivation.inputs.{inputs[at].name}.locator: {EMPTY}"
