"""Leftovers 29 (issue 13: texts and names). A serving file's ``position = -0.0`` (and a sweep file's ``positions =
[-0.0]``) was echoed as "-0" / "-0.0"; record dates of ``0001-01-01`` read; registry files named by absolute path
under an absolute ``--root``; ``compare --json`` printed no JSON when no card read; ``import x.gguf.`` wrote an entry
``x.gguf.``; roofline's ``card (title)`` label nested parentheses."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import copy_root, invoke

SERVING = "registry/servings/gemma3-270m-h100.toml"
SOURCE = "sources/ai-benchmarking-guide-fork-samuel-bohman.toml"
MEASUREMENTS = "registry/measurements/llamacpp-points.toml"


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    """Replace the first ``old`` line text in ``root/rel`` by ``new`` (the edit must apply)."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# --- 1. -0.0 in a serving or sweep file is 0 -------------------------------------------------------------------------


def test_a_negative_zero_position_in_a_serving_file_is_shown_as_0(tmp_path: Path) -> None:
    # Before: "0.75 × contexts at mean position -0 of a 4,096 limit" and "… share 0.75, position -0.0, limit 4096"
    # in the lock's drift line (price, best, check, max-batch), "position": -0.0 in servings --json.
    root = copy_root(tmp_path)
    _edit(root, SERVING, "position = 1024\n", "position = -0.0\n")
    drift = ("contexts: share 0.25, position 16384.0, limit 32768; share 0.75, position 1024.0, limit 4096 → share "
             "0.25, position 16384.0, limit 32768; share 0.75, position 0.0, limit 4096")
    for command in (("price",), ("best",), ("max-batch",)):
        result = invoke(*command, "gemma3-270m-h100", root=root)
        assert result.exit_code == 0, result.output
        assert "-0" not in result.output.replace("-0.", "")  # no "-0" and no "-0.0"
        assert "-0.0" not in result.output
        assert drift in result.output
    priced = invoke("price", "gemma3-270m-h100", root=root).stdout.splitlines()[1]
    assert priced.startswith("  0.75 × contexts at mean position 0 of a 4,096 limit; 0.25 × contexts at mean "
                             "position 16384 of a 32,768 limit · "), priced
    listed = invoke("servings", "--json", root=root)
    assert listed.exit_code == 0, listed.output
    contexts = json.loads(listed.stdout)["servings"]["gemma3-270m-h100"]["contexts"]
    assert [repr(c["position"]) for c in contexts] == ["0.0", "16384.0"]
    assert '"position": -0.0' not in listed.stdout
    checked = invoke("check", root=root)
    assert drift in checked.output and "-0.0" not in checked.output


def test_a_negative_zero_position_in_a_sweep_file_is_shown_as_0(tmp_path: Path) -> None:
    # Before: "its rows at position -0, 512 are not the locked serving's (position 2048)".
    root = copy_root(tmp_path)
    grid = tmp_path / "grid.toml"
    grid.write_text('servings = ["qwen3-30b-a3b-h200"]\nbatches = [1]\npositions = [-0.0, 512]\n', encoding="utf-8")
    result = invoke("sweep", "--file", str(grid), root=root)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].endswith(
        "its rows at position 0, 512 are not the locked serving's (position 2048)"), result.stderr
    rows = json.loads(invoke("sweep", "--file", str(grid), "--json", root=root).stdout)
    assert [r["position"] for r in rows] == [0, 512]
    assert "-0" not in result.output.replace("e-0", "")


# --- 2. a record date before any real record is refused by the schema ------------------------------------------------


def test_a_date_before_any_real_record_is_one_line_naming_file_and_key(tmp_path: Path) -> None:
    # Before: source date/retrieved and a run's date of 0001-01-01 read (check: 0 problems, exit 0).
    root = copy_root(tmp_path)
    _edit(root, SOURCE, 'date = "unknown"\n', 'date = "0001-01-01"\n')
    _edit(root, SOURCE, 'retrieved = "2026-12-01"\n', 'retrieved = "0001-01-01"\n')
    _edit(root, MEASUREMENTS, 'date = "2023-12-22"\n', 'date = "0001-01-01"\n')
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("passprice: error: ")]
    assert errors[:3] == [
        f"passprice: error: {MEASUREMENTS}: run.0.date: '0001-01-01' is not when the run was made or published "
        '(YYYY, YYYY-MM or YYYY-MM-DD, in 1990 or later), or "unknown"',
        f"passprice: error: {SOURCE}: source.date: '0001-01-01' is not when it was published (YYYY, YYYY-MM or "
        'YYYY-MM-DD, in 1900 or later), or "unknown"',
        f"passprice: error: {SOURCE}: source.retrieved: '0001-01-01' is not when the copy that was read was "
        'retrieved (YYYY-MM-DD, 1990-01-01 or later), or "unknown"',
    ], result.stderr


def test_the_date_bounds_hold_at_their_first_day_and_refuse_the_day_before(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    for retrieved, date, run, ok in (("1990-01-01", "1900", "1990", True), ("1989-12-31", "1899-12", "1989-12-31",
                                                                             False)):
        case = tmp_path / retrieved
        case.mkdir()
        copy = copy_root(case)
        _edit(copy, SOURCE, 'date = "unknown"\n', f'date = "{date}"\n')
        _edit(copy, SOURCE, 'retrieved = "2026-12-01"\n', f'retrieved = "{retrieved}"\n')
        _edit(copy, MEASUREMENTS, 'date = "2023-12-22"\n', f'date = "{run}"\n')
        result = invoke("validate", root=copy) if ok else invoke("check", root=copy)
        if ok:
            assert result.exit_code == 0, result.output
            assert invoke("sources", root=copy).exit_code == 0
        else:
            assert result.exit_code == 2
            errors = [line for line in result.stderr.splitlines() if line.startswith("passprice: error: ")]
            assert [re.sub(r": '.*", "", line) for line in errors[:3]] == [
                f"passprice: error: {MEASUREMENTS}: run.0.date", f"passprice: error: {SOURCE}: source.date",
                f"passprice: error: {SOURCE}: source.retrieved"]
    assert root.is_dir()


# --- 3. registry files named relative to the registry under an absolute --root ---------------------------------------


def test_calibrate_with_no_runs_names_the_measurements_folder_relative_to_the_registry(tmp_path: Path) -> None:
    # Before: "calibrate: no measured runs of stack 'lmdeploy-turbomind-2312' in /…/root/registry/measurements".
    root = copy_root(tmp_path)
    (root / "registry/measurements/lmdeploy-turbomind-a100.toml").unlink()
    for extra in ((), ("--json",)):
        result = invoke("calibrate", "--stack", "lmdeploy-turbomind-2312", "--dry-run", *extra, root=root)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [
            "passprice: error: calibrate: no measured runs of stack 'lmdeploy-turbomind-2312' in registry/measurements"]


def test_an_unregistered_name_is_not_found_in_the_registry_relative_folder(tmp_path: Path) -> None:
    # Before: "serving 'nosuch': not found in /…/root/registry/servings (registered: …)" under an absolute --root.
    root = copy_root(tmp_path)
    for args, start in (
        (("compare", "nosuch"), "passprice: error: serving 'nosuch': not found in registry/servings (registered: "),
        (("price", "nosuch"), "passprice: error: serving 'nosuch': not found in registry/servings (registered: "),
        (("facts", "nosuch"), "passprice: error: card 'nosuch': not found in facts/cards (registered: "),
        (("calibrate", "--stack", "nosuch"),
         "passprice: error: stack 'nosuch': not found in facts/stacks (registered: llamacpp-cuda-2405, "),
    ):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(start), result.stderr
        assert str(root) not in result.stderr


def test_check_names_a_cited_source_record_relative_to_the_registry_inside_its_line(tmp_path: Path) -> None:
    # Before: "facts/cards/mi300x.toml: streams.read.source: source '…' does not validate: /…/root/sources/….toml: …".
    root = copy_root(tmp_path)
    _edit(root, SOURCE, 'retrieved = "2026-12-01"\n', 'retrieved = "2027"\n')
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    retrieved = (f"{SOURCE}: source.retrieved: '2027' is not when the copy that was read was retrieved (YYYY-MM-DD, "
                 '1990-01-01 or later), or "unknown"')
    assert result.stderr.splitlines() == [
        f"passprice: error: {retrieved}",
        "passprice: error: facts/cards/mi300x.toml: streams.read.source: source 'ai-benchmarking-guide-fork-samuel-"
        f"bohman' does not validate: {retrieved}",
    ]
    assert str(root) not in result.output


# --- 4. --json is one JSON document whenever a command shows what reads ----------------------------------------------


def _bogus_all(root: Path, folder: str) -> int:
    """Put a key no schema allows at the top of every file of ``root/folder``: none reads; how many."""
    files = sorted((root / folder).glob("*.toml"))
    for path in files:
        path.write_text("bogus = 1\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    return len(files)


def _one_document(args: tuple[str, ...], root: Path) -> dict[str, object]:
    """Run ``args`` (with --json): exit 2, one JSON document on stdout whose ``problems`` are the stderr lines."""
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == 2, result.output
    out = json.loads(result.stdout)
    assert isinstance(out, dict)
    assert [f"passprice: error: {p}" for p in out["problems"]] == result.stderr.splitlines(), result.stderr
    return out


def test_compare_json_when_no_card_reads_prints_one_document_with_the_problems(tmp_path: Path) -> None:
    # Before: exit 2, 17 error lines on stderr and nothing on stdout.
    root = copy_root(tmp_path)
    count = _bogus_all(root, "facts/cards")
    out = _one_document(("compare", "gemma3-270m-h100", "--cards", "all"), root)
    assert (out["serving"], out["cards"], len(out["problems"])) == ("gemma3-270m-h100", [], count)  # type: ignore
    assert out["problems"][0] == (  # type: ignore[index]
        "facts/cards/a100_pcie_80gb.toml: (top level): unknown key 'bogus'; "
        "the keys here are array, card, host, memory, on_chip, scale, streams, tensor, vector"
    ), out["problems"]
    text = invoke("compare", "gemma3-270m-h100", "--cards", "all", root=root)
    assert (text.exit_code, text.stdout) == (2, "")


def test_validate_json_names_the_files_it_left_out(tmp_path: Path) -> None:
    # Before: the three measurement files that did not read were named on stderr only; the JSON held no "problems".
    root = copy_root(tmp_path)
    count = _bogus_all(root, "registry/measurements")
    out = _one_document(("validate",), root)
    assert (out["runs"], len(out["problems"])) == ([], count)  # type: ignore[arg-type]
    assert out["problems"][0].startswith(  # type: ignore[index]
        "registry/measurements/llamacpp-points.toml: (top level): unknown key 'bogus'")
    good = json.loads(invoke("validate", "--json", root=copy_root(tmp_path / "good")).stdout)
    # 144, the 6 MoE runs of moe43 and moe44, moe45's 10, moe46's 16, moe48's 19
    assert good["problems"] == [] and len(good["runs"]) == 195


def test_every_listing_prints_one_document_when_nothing_reads(tmp_path: Path) -> None:
    # The rule held already (listed for the record): cards, servings, checkpoints, sources, check.
    root = copy_root(tmp_path)
    for args, folder, key in ((("cards",), "facts/cards", "cards"), (("servings",), "registry/servings", "servings"),
                              (("checkpoints",), "registry/checkpoints", "checkpoints"),
                              (("sources",), "sources", "sources")):
        case = copy_root(tmp_path / key)
        count = _bogus_all(case, folder)
        out = _one_document(args, case)
        assert not out[key] and len(out["problems"]) >= count  # type: ignore[arg-type]
    assert root.is_dir()


# --- 5. import's entry name never ends in a dot or a space ------------------------------------------------------------


def test_import_of_a_file_name_ending_in_a_dot_names_the_entry_without_it(tmp_path: Path) -> None:
    # Before: "imported x.gguf. as x.gguf.: …/registry/checkpoints/x.gguf..toml", exit 0.
    import shutil

    from cli_helpers import REPO
    from passprice.checkpoints import entry_name

    assert [entry_name(n) for n in ("x.gguf.", "x.gguf ", "x..gguf", "x.header.gguf.xz.", "m-00001-of-00002.gguf.")] \
        == ["x", "x", "x", "x", "m"]
    root = copy_root(tmp_path)
    header = tmp_path / "x.gguf."
    shutil.copyfile(REPO / "tests/data/qwen35-27b-like.header.gguf", header)
    result = invoke("import", str(header), root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"imported {header} as x: registry/checkpoints/x.toml ("), result.stdout
    assert sorted(p.name for p in (root / "registry/checkpoints").glob("x*")) == ["x.toml"]
    assert invoke("header", "x", root=root).exit_code == 0  # what import writes reads back
    named = invoke("import", str(header), "--name", "y.", root=root)
    assert (named.exit_code, named.stdout) == (2, "")
    assert named.stderr.splitlines() == [
        "passprice: error: checkpoint name 'y.': ends in '.', which Windows drops from a file's name: give the name "
        "without it ('y')"]
    assert not (root / "registry/checkpoints/y..toml").exists()


# --- 6. roofline's card line: the title after a dash, never nested in parentheses ------------------------------------


def test_roofline_shows_a_card_title_holding_parentheses_after_a_dash(tmp_path: Path) -> None:
    # Before: "a40 (Acme A40 (rev. 2)): memory 696 GB/s × streams.read 1 = 696 GB/s on one long read".
    from cli_helpers import retitled
    from passprice.tables import titled

    root = copy_root(tmp_path)
    card = root / "facts/cards/a40.toml"
    card.write_text(retitled(card.read_text(encoding="utf-8"), "Acme A40 (rev. 2)"), encoding="utf-8")
    result = invoke("roofline", "a40", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        "a40 — Acme A40 (rev. 2): memory 696 GB/s × streams.read 1 = 696 GB/s on one long read")
    assert titled("a40", "Acme A40 (rev. 2)") == "a40 — Acme A40 (rev. 2)"
    shipped = invoke("roofline", "a40")  # a title without parentheses reads the same way
    assert shipped.stdout.splitlines()[0].startswith("a40 — NVIDIA A40: memory 696 GB/s")
