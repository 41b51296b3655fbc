"""``entrytext.loads`` gives the document ``tomllib.loads`` gives (the same keys in the same order, values and types),
and raises what it raises: on every shipped checkpoint entry (each tensor table read apart, counted), and on entries
whose tensor table or surroundings are mutated (hypothesis, a fixed small budget)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passprice import entrytext

ENTRIES = sorted((Path(__file__).resolve().parent.parent / "registry" / "checkpoints").glob("*.toml"))
GEMMA = next(p for p in ENTRIES if p.name == "gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")


def _outcome(load: object, text: str) -> tuple[str, str]:
    """What ``load(text)`` gives: its document as JSON text (key order and int/float kept apart), or its error."""
    try:
        return "document", json.dumps(load(text))  # type: ignore[operator]
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("path", ENTRIES, ids=lambda p: p.stem)
def test_every_shipped_entry_reads_as_tomllib_reads_it_with_its_table_apart(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    before = entrytext.READ_APART
    document = entrytext.loads(text)
    assert entrytext.READ_APART - before == 1
    assert json.dumps(document) == json.dumps(tomllib.loads(text))
    assert len(document["header"]["tensors"]) > 200


def test_the_gemma_entry_tensor_lines_are_read_as_written() -> None:
    """Figures read off the shipped gemma3-270m entry: its 236 tensors, the first two as written."""
    tensors = entrytext.loads(GEMMA)["header"]["tensors"]
    assert len(tensors) == 236
    assert tensors[0] == {"name": "output_norm.weight", "type": "F32", "dims": [640], "offset": 0, "shard": 0}
    assert tensors[1] == {"name": "token_embd.weight", "type": "Q8_0", "dims": [640, 262144], "offset": 2560,
                          "shard": 0}  # fmt: skip


_LINES = GEMMA.split("\n")
_TABLE = [i for i, line in enumerate(_LINES) if line.startswith("  { name = ")]
_EDITS = st.sampled_from([
    lambda s: s.replace('name = "', 'name = "\\u00e9', 1),  # an escape
    lambda s: s.replace('name = "', 'name = "\t', 1),  # a tab (TOML allows it)
    lambda s: s.replace('name = "', 'name = "\x01', 1),  # a control character (TOML does not)
    lambda s: s.replace("offset = ", "offset = 0", 1),  # a leading zero
    lambda s: s.replace("offset = ", "offset = 1_0", 1),  # an underscore
    lambda s: s.replace("offset = ", "offset = 123456789012345678901", 1),  # past 20 digits
    lambda s: s.replace(", shard = 0", "", 1),  # a key left out
    lambda s: s.replace(" },", ", extra = 1 },", 1),  # a key added
    lambda s: s.replace(" },", " }", 1),  # no comma
    lambda s: s + " # a comment",
    lambda s: s + "\r",  # CRLF
    lambda s: s.replace("dims = [", "dims = [ ", 1),
    lambda s: s.replace("dims = [", "dims = [-", 1),
    lambda s: s.replace(", offset", ",, offset", 1),
    lambda s: "]",  # the table closed early
    lambda s: "",  # a blank line
    lambda s: s.replace('"', "'", 2),  # a literal string
    lambda s: s + '\ntensors = [\n  "x",',  # a second table opened
    lambda s: s.replace('name = "', f'name = "{entrytext._PLACEHOLDER}', 1),  # the placeholder's own text
])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(_TABLE), _EDITS), min_size=1, max_size=3))
def test_a_mutated_table_reads_as_tomllib_reads_it(edits: list[tuple[int, object]]) -> None:
    lines = list(_LINES)
    for index, edit in edits:
        lines[index] = edit(lines[index])  # type: ignore[operator]
    text = "\n".join(lines)
    assert _outcome(entrytext.loads, text) == _outcome(tomllib.loads, text)


@pytest.mark.parametrize("text", [
    "",
    "tensors = [\n]\n",
    '[header]\ntensors = [\n  { name = "a", type = "F32", dims = [], offset = 0, shard = 0 },\n]\n',
    '[other]\ntensors = [\n  { name = "a", type = "F32", dims = [1], offset = 0, shard = 0 },\n]\n',
    'x = """\ntensors = [\n  { name = "a", type = "F32", dims = [1], offset = 0, shard = 0 },\n]\n"""\n',
    '[header]\ntensors = [\n  { name = "a", type = "F32", dims = [1], offset = 0, shard = 0 },\n]\n[header]\n',
    '[header]\ntensors = [\n  { name = "a", type = "F32", dims = [1], offset = 0, shard = 0 },\n',
])
def test_edge_texts_read_as_tomllib_reads_them(text: str) -> None:
    """An empty table, a table of another table, a table inside a multi-line string (the placeholder would land in
    the string), a table header given twice, a table never closed."""
    assert _outcome(entrytext.loads, text) == _outcome(tomllib.loads, text)
