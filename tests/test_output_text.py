"""Text output a person reads: counts with thousands separators (the FlatCurve refusal printed "6.32657e+07"), a
header's strings escaped when a character would not print (`header --metadata` wrote a raw NUL), and one-line texts
(a locator, a note, a cite) refusing a line or paragraph separator and bidi controls as they refuse a newline."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter

from cli_helpers import REPO, bad, copy_root, invoke
from hostile import _flat  # the flat-curve header of issue 13's reproducers

H200 = "h200_sxm_141gb"


def test_flat_curve_refusal_counts_with_separators(tmp_path: Path) -> None:
    path = tmp_path / "flat.gguf"
    path.write_bytes(_flat())
    result = invoke("best", "--checkpoint", str(path), "--card", H200, "--json")
    assert result.exit_code == 1, result.output
    refusal = json.loads(result.stdout)
    assert refusal["refusal"] == "FlatCurve"
    shown = re.search(r"levels off \(toward ([0-9,]+)\) within a relative 1e-12 over so many of the batches up to "
                      r"([0-9,]+) that", result.stderr)
    assert shown is not None, result.stderr
    assert shown.group(1) == f"{round(refusal['tokens_per_s']):,}" and shown.group(2) == f"{refusal['top']:,}"
    assert "e+" not in result.stderr


def _strange_header(path: Path) -> Path:
    w = GGUFWriter(path, "llama")
    w.add_string("general.name", "nul\x00 esc\x1b[31m red")
    w.add_string("odd.separators", "line\u2028para\u2029end")
    w.add_string("odd.bidi", "abc\u202edcba\u2066x\u2069")
    w.add_array("odd.list", ["ok", "tab\there"])
    w.add_float32("odd.nan", math.nan)
    w.add_tensor("weird\x07name", np.zeros((4,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_header_text_escapes_what_would_not_print(tmp_path: Path) -> None:
    path = _strange_header(tmp_path / "strange.gguf")
    result = invoke("header", str(path), "--metadata", "--tensors")
    assert result.exit_code == 0, result.output
    out = result.stdout
    # No control character, separator or bidi control reaches the terminal (a newline ends each line, as ever).
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]", out)
    rows = {cells[0]: cells[1:] for line in out.splitlines() if len(cells := re.split(r"\s{2,}", line)) == 3}
    assert rows["general.name"] == ["string", "'nul\\x00 esc\\x1b[31m red'"]
    assert rows["odd.separators"] == ["string", "'line\\u2028para\\u2029end'"]
    assert rows["odd.bidi"] == ["string", "'abc\\u202edcba\\u2066x\\u2069'"]
    assert rows["odd.list"] == ["array[string]", "['ok', 'tab\\there']"]
    assert rows["odd.nan"] == ["float32", "nan"]
    tensors = {cells[0]: cells[1:] for line in out.splitlines() if len(cells := re.split(r"\s{2,}", line)) == 4}
    assert tensors["'weird\\x07name'"] == ["F32", "4", "16"]
    # A string that prints is shown as it is, unquoted.
    assert rows["general.architecture"] == ["string", "llama"]


@pytest.mark.parametrize(
    "text",
    ["a table\u2028with a line separator", "para\u2029graph", "Table 1 \u202eright to left", "isolate \u2066x\u2069",
     "C1 \x85 next line"],
    ids=["U+2028", "U+2029", "U+202E", "U+2066", "U+0085"],
)
@pytest.mark.parametrize("option", ["--locator", "--note"])
def test_fact_set_refuses_separators_and_bidi_controls(text: str, option: str, tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts/cards/h200_sxm_141gb.toml"
    before = card.read_bytes()
    args = ["fact", "set", H200, "streams.read", "--value", "0.9", "--unit", "1", "--provenance", "estimated",
            "--source", "nvidia-h200-datasheet", "--locator", "Table 1"]
    args += [option, text] if option == "--note" else []
    if option == "--locator":
        args[-1] = text
    key = "locator" if option == "--locator" else "note"
    bad(*args, root=root, says=f"streams.read.{key}: {text!r} holds a control character, a line separator, a "
        "bidi control or an invisible character (a newline, a tab, U+2028, U+202E, U+200B …): write it on one line")
    assert card.read_bytes() == before


@pytest.mark.parametrize(
    ("rel", "old", "new", "key"),
    [
        # A card's note, a routing record's locator and a stack's note: each a one-line text now.
        ("facts/cards/h200_sxm_141gb.toml", 'locator = "', 'locator = "\u2028', "locator"),
        ("facts/routing/uniform.toml", 'locator = "', 'locator = "\\n', "locator"),
        ("facts/stacks/llamacpp-cuda-2405.toml", 'locator = "', 'locator = "\u202e', "locator"),
        # The names, titles and descriptions a table or a PR comment prints (a card's name heads every price).
        ("facts/cards/h200_sxm_141gb.toml", 'name = "NVIDIA', 'name = "\u202eNVIDIA', "card.name"),
        ("facts/cards/h200_sxm_141gb.toml", 'vendor = "', 'vendor = "\\n', "card.vendor"),
        ("sources/nvidia-h200-datasheet.toml", 'title = "', 'title = "\u2028', "source.title"),
        ("registry/servings/r1-qwen7b-h200.toml", 'description = "', 'description = "\\u001b[2J', "description"),
    ],
    ids=["card", "routing", "stack", "card-name", "card-vendor", "source-title", "serving-description"],
)
def test_check_refuses_them_in_files(rel: str, old: str, new: str, key: str, tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert re.search(rf"{re.escape(rel)}: \S*{key}: .* holds a control character, a line separator, a bidi "
                     "control or an invisible character", result.stderr), result.stderr


def test_the_checked_in_files_are_one_line_texts() -> None:
    assert invoke("--no-cache", "check", root=REPO).exit_code == 0


def _patterns(node: object) -> list[str]:
    """Every ``pattern`` a JSON Schema states, at any depth."""
    if isinstance(node, dict):
        own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return own + [p for value in node.values() for p in _patterns(value)]
    if isinstance(node, list):
        return [p for value in node for p in _patterns(value)]
    return []


def _properties_named(node: object, key: str) -> list[dict[str, object]]:
    """Every schema a ``properties`` table gives for ``key``, at any depth."""
    if isinstance(node, dict):
        props = node.get("properties")
        own = [props[key]] if isinstance(props, dict) and isinstance(props.get(key), dict) else []
        return own + [n for value in node.values() for n in _properties_named(value, key)]
    if isinstance(node, list):
        return [n for value in node for n in _properties_named(value, key)]
    return []


def test_every_schema_states_the_one_line_pattern_of_schema_py() -> None:
    # The schema files are written by hand; the one-line error text (schema._explain) is chosen by comparing the
    # failed pattern with schema.ONE_LINE, so a file holding an older or edited copy would print jsonschema's raw
    # message (and let a U+2028 through). Each control-character pattern must be ONE_LINE, character for character.
    from passprice.schema import ONE_LINE

    schemas = sorted((REPO / "schema").glob("*.json"))
    found = {p.name: _patterns(json.loads(p.read_text(encoding="utf-8"))) for p in schemas}
    stale = [(name, p) for name, pats in found.items() for p in pats if p.startswith("^[^\\x00") and p != ONE_LINE]
    assert stale == []
    assert sum(p == ONE_LINE for pats in found.values() for p in pats) >= 50
    # Every free text a person reads (outside a checkpoint entry, whose strings are a header's data, escaped where
    # shown) is a one-line text: a locator, a cite, a note, a title, a description, a card's name, vendor and variant.
    for path in schemas:
        if path.name == "checkpoint.schema.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        for key in ("note", "locator", "cite", "title", "description", "vendor", "variant"):
            for node in _properties_named(doc, key):
                if node.get("type") == "string":
                    assert node.get("pattern") == ONE_LINE, (path.name, key)
    assert re.fullmatch(ONE_LINE, "Table 1, row \u201cH200\u201d \u2014 4.8 TB/s")  # typographic quotes and dashes pass
