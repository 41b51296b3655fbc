"""A sweep file's ``batches`` (session 36, arch43): a file takes a list (``[1, 8, 64]``) or a ``{ from, to, factor }``
range, not the command line's ``'1-4096*2'``; a value of a wrong type is refused naming the forms the key takes
(``schema/sweep.schema.json``'s ``errorMessage``, ``schema._forms``), where jsonschema's ``batches: '1-4096*2' is not
of type 'array'`` and ``batches.factor: 1.01 is not of type 'integer'`` named one form alone. A value of the right
form with a wrong bound or key keeps its own line alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice import schema

FORMS = json.loads((REPO / "schema" / "sweep.schema.json").read_text(encoding="utf-8"))["properties"]["batches"][
    "errorMessage"]


def test_the_forms_are_the_schemas_own_and_name_the_command_lines() -> None:
    assert FORMS.startswith("a list of batches, [1, 8, 64], or a range, { from = 1, to = 4096, factor = 2 } for 1, 2, "
                            "4 … 4096 (from, to and factor whole numbers of at least 1; ")
    assert FORMS.endswith("the command line's --batches '1-4096*2' is that range in a file, its '1,8,64' that list")


@pytest.mark.parametrize(("batches", "said"), [
    ("1-4096*2", "batches: '1-4096*2' is none of the forms it takes"),  # was "… is not of type 'array'"
    ("1,8,64", "batches: '1,8,64' is none of the forms it takes"),
    (8, "batches: 8 is none of the forms it takes"),
    (True, "batches: true is none of the forms it takes"),
    ({"from": 1, "to": 64, "factor": 1.01}, "batches.factor: 1.01 is not a whole number"),  # "not of type 'integer'"
    ({"from": 1, "to": "8"}, "batches.to: '8' is not a whole number"),
    ([1.5, 2], "batches.0: 1.5 is not a whole number"),
])  # fmt: skip
def test_a_batches_value_of_no_form_is_refused_naming_the_forms(batches: object, said: str) -> None:
    assert schema.problems({"servings": ["r1-qwen7b-h200"], "batches": batches}, "sweep") == [
        f"{said}; batches is {FORMS}"]


@pytest.mark.parametrize(("batches", "line"), [
    ([1, 2, 1], "batches: 1 is listed more than once"),
    ({"from": 1}, "batches.to: missing (required)"),
    ({"from": 0, "to": 8}, "batches.from: 0 is less than the minimum of 1"),
    ({"from": 1, "to": 8, "factor": 2.0},
     "batches.factor: 2.0 is not of type 'integer' (a whole number, written without a decimal point or exponent: 2)"),
])  # fmt: skip
def test_a_batches_value_of_the_right_form_keeps_its_own_line(batches: object, line: str) -> None:
    assert schema.problems({"servings": ["r1-qwen7b-h200"], "batches": batches}, "sweep") == [line]


def test_sweep_file_says_it_in_one_line_naming_file_and_key(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text('servings = ["r1-qwen7b-h200"]\nbatches = "1-4096*2"\n', encoding="utf-8")
    result = invoke("sweep", "--file", str(grid))
    assert result.exit_code == 2
    said = f"batches: '1-4096*2' is none of the forms it takes; batches is {FORMS}"
    assert result.stderr == f"passprice: error: {grid}: {said}\n"
    # the form the file takes prices
    grid.write_text('servings = ["r1-qwen7b-h200"]\ncards = ["h200_sxm_141gb"]\npositions = [512]\n'
                    'batches = { from = 1, to = 4, factor = 2 }\n', encoding="utf-8")
    rows = invoke("sweep", "--file", str(grid), "--format", "json")
    assert rows.exit_code == 0 and [r["batch"] for r in json.loads(rows.stdout)] == [1, 2, 4]
