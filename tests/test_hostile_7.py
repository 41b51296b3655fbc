"""Attack round 7 (issue 13) on the result memo, the compiled-validation gate, the sweep writer and the header reader:
each test builds the input that broke the landed main and asserts what passprice now does with it."""

from __future__ import annotations

import marshal
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.test_memo import entries, missed, recorded, run, world

from cli_helpers import REPO, bad, copy_root
from passprice import memo, schema

DATA = REPO / "tests" / "data"
__all__ = ["world"]  # the result memo's fixture, used here

# --- the validation gate: a pattern's "$" is the end of the text ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "line", "new", "says"),
    [
        (
            "facts/cards/h200_sxm_141gb.toml", 14, 'locator = "GPU Memory 141GB\\n"',
            "h200_sxm_141gb.toml: memory.capacity.locator: 'GPU Memory 141GB\\n' holds a control character",
        ),
        (
            "registry/servings/qwen35-27b-h100-every8.toml", 9, 'flush = "every:8\\n"',
            "qwen35-27b-h100-every8.toml: flush: 'every:8\\n'",
        ),
    ],
    ids=["one-line-text", "flush"],
)
def test_a_value_ending_in_a_newline_breaks_its_pattern(
    tmp_path: Path, path: str, line: int, new: str, says: str
) -> None:
    """``jsonschema`` searches a pattern with Python's ``re``, whose ``$`` also matches before a final newline: a
    locator, a cite or a flush rule ending in "\\n" passed the schema (``check`` exit 0, ``fact show`` printed a
    broken line), where ``jsonschema-rs`` (ECMA-262: ``$`` is the end) refused it."""
    root = copy_root(tmp_path)
    target = root / path
    lines = target.read_text(encoding="utf-8").splitlines()
    assert lines[line - 1].split("=")[0] == new.split("=")[0]
    lines[line - 1] = new
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    serving = "qwen35-27b-h100-every8" if "every8" in path else "r1-qwen7b-h200"
    bad("price", serving, "--no-lock", root=root, says=says)


def test_ecma_pattern_ends_at_the_end_of_the_text() -> None:
    one_line = re.compile(schema.ecma_pattern(schema.ONE_LINE))
    assert one_line.search("a cite") and not one_line.search("a cite\n")
    assert schema.ecma_pattern(r"^a\$[$]$") == r"^a\$[$]\Z"
    assert schema.ecma_pattern(r"[]$]$") == r"[]$]\Z"
    assert not re.search(schema.ecma_pattern("^sha256:[0-9a-f]{64}$"), "sha256:" + "0" * 64 + "\n")


# --- the result memo: no stale replay ---------------------------------------------------------------------------------


# A cache folder inside the root ("cache/memo" here until session 27) is refused since leftovers 27b
# (tests/test_leftovers_27b.py): nothing of the cache is kept in a registry any more.
@pytest.mark.parametrize("folder", [".git"])
def test_a_file_read_in_a_folder_the_stamp_does_not_walk_misses_when_replaced(
    world: dict[str, Any], folder: str
) -> None:
    """The world stamp walks the root's tree but not its ``.git`` nor the cache's own folders, and took every file
    under the root for walked: ``header .git/h.gguf.xz`` replayed the first header's output after the file was
    replaced by another header (and so did a header kept in a cache folder inside the root)."""
    if folder.startswith("cache"):
        env = {**world["env"], "PASSPRICE_CACHE_DIR": str(world["root"] / "cache")}
        world = {**world, "env": env, "cache": world["root"] / "cache"}
    place = world["root"] / folder
    place.mkdir(parents=True, exist_ok=True)
    header = place / "h.gguf.xz"
    shutil.copyfile(DATA / "gemma3-270m-q4_k_m.header.gguf.xz", header)
    # A first run makes the cache's folders (in the root, for a cache there): the next is kept and replays.
    assert run(world, "header", f"{folder}/h.gguf.xz").returncode == 0
    first = recorded(world, "header", f"{folder}/h.gguf.xz")
    assert b"gemma3" in first.stdout
    shutil.copyfile(DATA / "deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz", header)
    assert missed(world, "header", f"{folder}/h.gguf.xz")
    again = run(world, "header", f"{folder}/h.gguf.xz")
    assert again.returncode == 0 and b"qwen2" in again.stdout and b"gemma3" not in again.stdout


# --- Ctrl-C at any moment: the UTF-8 re-exec and the first imports ---------------------------------------------------

_SITE_INTERRUPT = """
import os, signal, sys
if sys.flags.utf8_mode:  # the interpreter passprice.entry started again in UTF-8 mode, while its site.py runs
    os.kill(os.getpid(), signal.SIGINT)
"""


def test_ctrl_c_while_the_utf8_interpreter_starts_exits_130(tmp_path: Path) -> None:
    """Under an ASCII locale with UTF-8 mode off, passprice runs itself again in UTF-8 mode: a Ctrl-C during the
    second interpreter's start (its site.py, its first imports: 0.1 s and more) printed the interpreter's
    KeyboardInterrupt traceback. SIGINT is now blocked across the exec until passprice's handler is in place."""
    (tmp_path / "sitecustomize.py").write_text(_SITE_INTERRUPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "LC_", "PYTHON"))}
    env["PASSPRICE_CACHE_DIR"] = os.environ["PASSPRICE_CACHE_DIR"]  # the session's own cache (conftest.py)
    env.update(LC_ALL="POSIX", PYTHONUTF8="0", PYTHONPATH=str(tmp_path), PASSPRICE_NO_MEMO="1")
    code = "import sys; sys.argv[1:] = ['cards']; from passprice.entry import main; main()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env,
                          cwd=REPO)
    assert (done.returncode, done.stderr, done.stdout) == (130, "passprice: interrupted\n", "")


def test_the_ctrl_c_handler_is_in_place_before_enum_is_imported() -> None:
    """Importing :mod:`signal` imports enum, functools and collections (about 15 ms): the console script now sets
    its Ctrl-C handler through ``_signal`` before any of them, so that window no longer prints a traceback."""
    code = "import sys, passprice.entry; print(sorted({'signal', 'enum', 'functools'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert (done.returncode, done.stdout) == (0, "[]\n")


@pytest.mark.parametrize(
    "forged",
    [
        {"out": [(1, "text")]},  # a text where bytes belong
        {"out": [(9, b"x")]},  # a descriptor that is not standard output or error
        {"out": [(2**70, b"x")]},
        {"out": 5},
        {"out": None},
    ],
    ids=["text", "fd-9", "fd-2**70", "int", "none"],
)
def test_an_entry_of_another_shape_with_a_checksum_that_holds_is_a_miss(
    world: dict[str, Any], forged: dict[str, Any]
) -> None:
    """An entry is checked by its checksum, which says it is whole, not that it is of the shape passprice writes: one
    whose output was a text, a descriptor 9 or 2**70, or not a list printed a TypeError, KeyError or OverflowError
    traceback at replay (exit 1), or wrote to descriptor 9. It is a miss now, rebuilt by the run."""
    first = recorded(world, "cards")
    [path] = entries(world)
    body = path.read_bytes().partition(b"\n")[2]
    entry = marshal.loads(body)
    entry.update(forged)
    body = marshal.dumps(entry)
    path.write_bytes(memo._checksum(body) + b"\n" + body)
    again = run(world, "cards")
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, b""), again.stderr.decode()
    assert not missed(world, "cards")  # rebuilt: the next run replays


@pytest.mark.parametrize(
    ("key", "text", "shown"),
    [
        ("url", "https://a\\u001b[31mb", "'https://a\\x1b[31mb'"),
        ("url", "https://a\\u202eb", "'https://a\\u202eb'"),
        ("copies", "https://a\\u0007b", "'https://a\\x07b'"),
    ],
    ids=["url-ESC", "url-RLO", "copies-BEL"],
)
def test_an_address_with_a_control_character_is_refused(tmp_path: Path, key: str, text: str, shown: str) -> None:
    """A source's address was any ``https://`` text without whitespace: an escape sequence (ESC [31m) or a
    right-to-left override passed ``check`` and reached the terminal raw in ``audit --source``. It is refused as
    every one-line text of the schemas is."""
    root = copy_root(tmp_path)
    path = root / "sources" / "nvidia-h200-product-page.toml"
    lines = path.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{key} = "))
    lines[at] = f'{key} = "{text}"' if key == "url" else f'{key} = ["{text}"]'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    where = "source.url" if key == "url" else "source.copies.0"
    bad("audit", "--source", "nvidia-h200-product-page", root=root,
        says=f"nvidia-h200-product-page.toml: {where}: {shown}")


def _string_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path to a string in ``node`` (a list's first two items stand for the rest)."""
    if isinstance(node, str):
        return [prefix]
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _string_paths(v, (*prefix, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node[:2]) for p in _string_paths(v, (*prefix, i))]
    return []


@pytest.mark.parametrize("kind", ["card", "serving", "lock", "source", "draft", "checkpoint"])
def test_both_validators_agree_on_every_text_ending_in_a_newline(kind: str) -> None:
    """Every text of a registry file of ``kind``, given a final newline: ``jsonschema-rs`` and ``jsonschema`` (as
    passprice builds it) give the same verdict either way (the differential test in test_schema_fast.py sees only
    a document the compiled validator finds valid and ``jsonschema`` does not)."""
    import copy

    from tests.test_schema_fast import _BASE, _slow

    folder = str(schema.schema_dir())
    fast = schema._fast_validator(kind, folder)
    base = _BASE[kind]
    paths = _string_paths(base)
    for path in paths[:: max(1, len(paths) // 24)]:  # about 24 a kind: jsonschema takes up to 0.1 s a document
        document = copy.deepcopy(base)
        parent: Any = document
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] += "\n"
        assert fast.is_valid(document) == (_slow(document, kind) == []), path


_BROKEN = "two\x1b[31m \u202eoperations\nand more"


def test_a_derivation_constant_holding_a_control_character_is_refused(tmp_path: Path) -> None:
    """A derivation input's ``constant`` had no one-line rule: ESC, a right-to-left override and a newline passed
    ``check`` (exit 0), and ``fact show`` printed the line broken in two, reordered and coloured."""
    root = copy_root(tmp_path)
    path = root / "facts" / "cards" / "a100_pcie_80gb.toml"
    text = path.read_text(encoding="utf-8")
    old = 'constant = "two operations, a multiply and an add, a multiply-add"'
    assert old in text
    path.write_text(text.replace(old, 'constant = "two\\u001b[31m \\u202eoperations\\nand more"', 1), encoding="utf-8")
    bad("fact", "show", "a100_pcie_80gb", "array", root=root, says=(
        "a100_pcie_80gb.toml: array.derivation.inputs.ops_per_mac.constant: 'two\\x1b[31m \\u202eoperations\\nand "
        "more' holds a control character"
    ))


def test_a_lock_pinning_a_derivation_text_holding_a_control_character_is_refused(tmp_path: Path) -> None:
    """A lock's pinned derivation was any object: a lock re-digested as an attacker who knows the digest rule would
    write it, its ``array`` derivation's constant holding ESC, U+202E and a newline, passed ``check`` and
    ``audit LOCK`` printed it raw, the line broken in two."""
    import attrs

    from passprice.locks import lock_text, read_lock

    root = copy_root(tmp_path)
    file = root / "locks" / "r1-qwen7b-h200.lock.toml"
    lock = read_lock(file)
    fact = lock.facts["array"]
    inputs = tuple(
        attrs.evolve(i, constant=_BROKEN) if i.name == "ops_per_mac" else i for i in fact.derivation.inputs
    )
    derivation = attrs.evolve(fact.derivation, inputs=inputs)
    facts = {**lock.facts, "array": attrs.evolve(fact, derivation=derivation)}
    forged = root / "forged.lock.toml"
    forged.write_text(lock_text(attrs.evolve(lock, facts=facts)), encoding="utf-8")
    bad("audit", str(forged), root=root, says=(
        "forged.lock.toml: facts.array.derivation.inputs.ops_per_mac.constant: 'two\\x1b[31m \\u202eoperations\\nand "
        "more' holds a control character"
    ))
