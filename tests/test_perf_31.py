"""Round 31 (issue 16: the review path's cold speed): a fit of the same numbers is solved once a process
(:data:`passprice.calibrate._FITS`: a cold one-fact ``diff`` fitted HEAD's stack for ``check`` and again in its
private copy, whose recomputed card no run reads), and the private copy's re-fitted stack and recomputed card are
written without tomlkit's parse (:mod:`passprice.plaintoml`: exactly the document, or tomlkit as before).

Behaviour only, no timing: the plain writer's text reads back as exactly the document (hand-written cases, text
checked), the kept fit is the fresh fit's doubles and each of its inputs edited gives a fresh solve, and the three
markdown reviews and ``check`` are the same bytes and exit status as with the memo off and tomlkit writing."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from passprice import calibrate, plaintoml
from passprice.edit import _recomputed_text
from passprice.measurements import load_runs
from passprice.registry import embedded_root
from passprice.stacks import load_stack, stack_path

HERE = Path(__file__).resolve().parent
STACK = "lmdeploy-turbomind-2312"


# --- the plain writer ----------------------------------------------------------------------------------------------


def test_a_small_document_is_written_as_by_hand() -> None:
    document = {"name": "a", "share": {"read": {"value": 0.5, "unit": "1"}}}
    assert plaintoml.dumps(document) == '"name" = "a"\n\n["share"]\n\n["share"."read"]\n"value" = 0.5\n"unit" = "1"\n'


def test_a_table_before_a_plain_value_is_written_inline_so_the_order_holds() -> None:
    document = {"t": {"x": {"y": 1}, "z": 2}}
    text = plaintoml.dumps(document)
    assert text == '["t"]\n"x" = {"y" = 1}\n"z" = 2\n'
    assert list(tomllib.loads(str(text))["t"]) == ["x", "z"]


@pytest.mark.parametrize(
    "value",
    ['say "hi"\\ there', "tab\there\nnew", "\x7f and \x00 and \x1f", "µs → ≈ 𝄞", "", "'single'", "#no comment"],
)
def test_strings_read_back_the_same(value: str) -> None:
    text = plaintoml.dumps({"s": value, "t": {"k": [value, {"in": value}]}})
    assert text is not None
    back = tomllib.loads(text)
    assert back["s"] == value and back["t"]["k"] == [value, {"in": value}]


def test_a_delete_character_is_escaped() -> None:
    assert plaintoml.dumps({"s": "a\x7fb"}) == '"s" = "a\\u007Fb"\n'


@pytest.mark.parametrize("value", [0.1, 1e-05, 1e16, -0.0, 5e-324, 1.7976931348623157e308, math.inf, -math.inf])
def test_floats_read_back_as_the_same_double(value: float) -> None:
    text = plaintoml.dumps({"f": value, "a": [value, 3, True]})
    assert text is not None
    back = tomllib.loads(text)
    assert math.copysign(1.0, back["f"]) == math.copysign(1.0, value) and back["f"] == value
    assert back["a"] == [value, 3, True] and type(back["a"][2]) is bool


def test_nan_and_empty_tables_and_arrays_of_tables() -> None:
    document: dict[str, Any] = {"n": math.nan, "e": [], "runs": [{"id": "a", "x": 1.5}, {"id": "b"}], "empty": {},
                                "deep": {"a": {"b": {}}}}
    text = plaintoml.dumps(document)
    assert text is not None
    back = tomllib.loads(text)
    assert math.isnan(back["n"]) and back["e"] == [] and back["runs"] == document["runs"]
    assert back["empty"] == {} and back["deep"] == {"a": {"b": {}}}
    assert list(back) == list(document)


@pytest.mark.parametrize("value", [__import__("datetime").date(2024, 1, 2), b"bytes", None, object(), np.int64(3)])
def test_what_it_cannot_write_exactly_is_none(value: object) -> None:
    assert plaintoml.dumps({"k": value}) is None
    assert plaintoml.dumps({"t": {"k": [value]}}) is None


def test_a_key_that_is_not_a_string_is_none() -> None:
    assert plaintoml.dumps({"t": {1: "x"}}) is None


def test_the_shipped_stacks_refit_text_is_tomlkits_document() -> None:
    """Both shipped stacks, calibrated: the plain text reads as exactly the document tomlkit's text reads as, keys
    in the same order at every level (the order the schema and the pricing see)."""
    root = embedded_root()
    for name in ("llamacpp-cuda-2405", STACK):
        entries = calibrate.derived_facts(calibrate.calibrate(root, name))
        path = stack_path(root, name)
        kept = calibrate.stack_text_with(path, entries)
        plain = calibrate.stack_text_with(path, entries, keep_layout=False)
        assert plain != kept  # not tomlkit's text: its layout and comments are not kept
        assert plaintoml.same(tomllib.loads(kept), tomllib.loads(plain))
        assert tomllib.loads(plain)["share"]["read"]["source"] == calibrate.CALIBRATION_SOURCE


def test_a_recomputed_cards_plain_text_is_tomlkits_data() -> None:
    card = embedded_root().path / "facts/cards/h200_sxm_141gb.toml"
    before = card.read_text(encoding="utf-8")
    data = tomllib.loads(before)
    entries = [("streams.read", {**data["streams"]["read"], "value": 0.123}),
               ("memory.bandwidth", {**data["memory"]["bandwidth"], "value": 4.9}),
               ("new.fact", {"value": 1.0, "unit": "1", "provenance": "assumed", "note": "n"})]
    kept = tomllib.loads(_recomputed_text(before, entries, True))
    plain = tomllib.loads(_recomputed_text(before, entries, False))
    assert kept == plain
    assert plain["streams"]["read"]["value"] == 0.123 and plain["memory"]["bandwidth"]["value"] == 4.9
    assert plain["new"]["fact"] == {"value": 1.0, "unit": "1", "provenance": "assumed", "note": "n"}


# --- the fit solved once a process ---------------------------------------------------------------------------------


def models() -> list[calibrate.RunModel]:
    root = embedded_root()
    stack = load_stack(root, STACK)
    return calibrate.model_runs(root, stack, load_runs(root, stack.name))


def fresh(ms: list[calibrate.RunModel], fitted: tuple[str, ...] | None = None) -> calibrate.Fit:
    """The fit solved with nothing kept (the memo emptied, then put back)."""
    kept = dict(calibrate._FITS)
    calibrate._FITS.clear()
    try:
        return calibrate.fit(ms, fitted)
    finally:
        calibrate._FITS.clear()
        calibrate._FITS.update(kept)


def test_a_kept_fit_is_the_fresh_fits_doubles() -> None:
    ms = models()
    first = calibrate.fit(ms)
    again = calibrate.fit(ms)
    solved = fresh(ms)
    assert again.values == first.values == solved.values and again.serial == first.serial == solved.serial
    assert again.values is not first.values  # a fresh dict: a caller's edit does not reach the kept one
    again.values["share.read"] = 0.0
    assert calibrate.fit(ms).values == solved.values
    assert again.runs == tuple(m.run for m in ms)


def _edited(ms: list[calibrate.RunModel], what: str) -> list[calibrate.RunModel]:
    m = ms[0]
    if what == "measured_s":
        one = attrs.evolve(m, measured_s=m.measured_s * 1.5)
    elif what == "layers":
        one = attrs.evolve(m, layers=m.layers + 1)
    else:
        components = m.components.copy()
        components[int(np.argmax(components))] *= 1.5
        one = attrs.evolve(m, components=components)
    return [one, *ms[1:]]


@pytest.mark.parametrize("what", ["measured_s", "layers", "components"])
def test_each_input_edited_is_fitted_afresh(what: str) -> None:
    ms = models()
    before = calibrate.fit(ms)
    edited = _edited(ms, what)
    now = calibrate.fit(edited)
    solved = fresh(edited)
    assert (now.values, now.serial) == (solved.values, solved.serial)
    assert (now.values, now.serial) != (before.values, before.serial)


def test_the_fitted_parameters_are_part_of_the_key() -> None:
    ms = models()
    whole = calibrate.fit(ms)
    fewer = tuple(p for p in whole.fitted if p != "overhead.layer")
    now = calibrate.fit(ms, fewer)
    assert now.fitted == fewer and "overhead.layer" not in now.values
    assert now.values == fresh(ms, fewer).values


def test_the_memo_holds_at_most_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibrate, "_FITS_KEPT", 2)
    monkeypatch.setattr(calibrate, "_FITS", {})
    ms = models()
    for what in ("measured_s", "layers", "components"):
        calibrate.fit(_edited(ms, what))
    assert len(calibrate._FITS) == 2  # the oldest (measured_s) let go
    assert calibrate._fit_key(calibrate._Runs.of(_edited(ms, "measured_s")), calibrate.exercised(ms)) \
        not in calibrate._FITS


# --- the review: the same bytes ------------------------------------------------------------------------------------

DRIVER = """
import runpy, sys
if {before!r}:
    import passprice.calibrate, passprice.plaintoml
    passprice.calibrate._FITS_KEPT = 0
    passprice.plaintoml.dumps = lambda document: None
sys.argv = ["passprice", *sys.argv[1:]]
runpy.run_module("passprice", run_name="__main__")
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Round 30's repository: the shipped registry, ``base``, and one commit on it each changing one card fact (the
    H200's memory.bandwidth), one checkpoint entry's origin and one source record's read note."""
    sys.path.insert(0, str(HERE))
    from test_perf_29 import copy_registry, git

    path = copy_registry(tmp_path_factory.mktemp("perf31") / "registry")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "--no-verify", "-m", "base")
    made: dict[str, object] = {"path": path, "base": git(path, "rev-parse", "HEAD")}
    for name, rel, old, new in (
        ("fact", "facts/cards/h200_sxm_141gb.toml", "[memory.bandwidth]\nvalue = 4.8\n",
         "[memory.bandwidth]\nvalue = 4.9\n"),
        ("entry", "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml",
         'origin = "DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: ', 'origin = "DeepSeek-R1-Distill-Qwen-7B (Q4_K_M): '),
        ("source", "sources/nvidia-h200-datasheet.toml", 'read = "', 'read = "Read: '),
    ):
        git(path, "checkout", "-q", "-b", name, str(made["base"]))
        file = path / rel
        text = file.read_text(encoding="utf-8")
        assert text.count(old) == 1
        file.write_text(text.replace(old, new), encoding="utf-8")
        git(path, "commit", "-q", "--no-verify", "-am", name)
        made[name] = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "main")
    return made


def run(cwd: Path, tmp: Path, before: bool, *args: str) -> tuple[int, str, str]:
    """``passprice --no-cache ARGS`` in a process of its own (cold), the memo bypassed; ``before``: the fit memo off
    and tomlkit writing the private copy (round 30's code path): exit status, stdout, stderr."""
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp / "unused"), "PASSPRICE_NO_MEMO": "1"}
    env.pop("PASSPRICE_MAX_FIT_RUNS", None)
    code = DRIVER.format(before=before)
    done = subprocess.run([sys.executable, "-c", code, "--no-cache", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("change", ["fact", "entry", "source"])
def test_a_markdown_review_is_the_same_bytes_as_before(repo: dict[str, object], tmp_path: Path, change: str) -> None:
    path, base, head = Path(str(repo["path"])), str(repo["base"]), str(repo[change])
    args = ("diff", base, head, "--format", "markdown")
    now = run(path, tmp_path, False, *args)
    assert now == run(path, tmp_path, True, *args)
    status, out, err = now
    if change == "fact":
        assert status == 1, err
        assert "4.8 TB/s → 4.9 TB/s" in out
        assert "not recomputed" not in out  # the copy was recomputed and re-fitted
    else:
        assert (status, err) == (0, ""), err


def test_check_is_the_same_bytes_as_before(repo: dict[str, object], tmp_path: Path) -> None:
    path = Path(str(repo["path"]))
    now = run(path, tmp_path, False, "check")
    assert now == run(path, tmp_path, True, "check")
    # 104, and moe43's measurement file and source record, and moe44's checkpoint qwen3-30b-a3b-q4_0
    assert now[1].startswith("checked 107 files (")


@pytest.mark.parametrize(
    ("rel", "old", "new"),
    [("registry/measurements/lmdeploy-turbomind-a100.toml", "tokens_per_s = 100.02\n", "tokens_per_s = 100.03\n"),
     ("facts/cards/a100_sxm4_80gb.toml", "[memory.bandwidth]\nvalue = 2039\n", "[memory.bandwidth]\nvalue = 1039\n")],
    ids=["a measured run", "a card its runs name"],
)
def test_a_file_edited_within_the_same_second_is_fitted_afresh_in_the_same_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rel: str, old: str, new: str
) -> None:
    """The memo holds numbers, not files: a run's figure or a card it prices edited in place (its size and
    modification time kept) between two calibrates of one process gives the fit of the edited registry, the same
    doubles as a process that never saw the first."""
    sys.path.insert(0, str(HERE))
    from passprice.registry import Root
    from test_perf_29 import copy_registry, edit_in_place

    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    monkeypatch.delenv("PASSPRICE_MAX_FIT_RUNS", raising=False)
    root = Root(copy_registry(tmp_path / "registry"))
    first = calibrate.calibrate(root, STACK)
    edit_in_place(root.path / rel, old, new)
    root = Root(root.path)
    again = calibrate.calibrate(root, STACK)
    monkeypatch.setattr(calibrate, "_FITS", {})
    solved = calibrate.calibrate(root, STACK)
    assert (again.fit.values, again.fit.serial) == (solved.fit.values, solved.fit.serial)
    assert again.fit.values != first.fit.values
    assert again.by_card.errors == solved.by_card.errors and again.by_checkpoint.errors == solved.by_checkpoint.errors
