"""Round 30 of hostile input (#13): a partial clone whose promisor remote names a program (git's lazy fetch of a
missing object ran it), a blob git cannot find (a traceback, a history one version short), ...

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import bad, invoke
from tests.test_hostile_29 import _git_registry, _program

# --- (1) git: a partial clone's lazy fetch ----------------------------------------------------------------------------


def test_a_partial_clones_missing_blob_runs_no_program_its_remote_names(tmp_path: Path) -> None:
    # Round 30: `extensions.partialClone = origin`, `remote.origin.url = ext::PROGRAM`, `protocol.ext.allow = always`
    # in the repository's config and a blob of BASE removed (a partial clone's, not fetched): `diff main HEAD` ran
    # PROGRAM (git's lazy fetch) and then ended in a traceback (`ls-tree -l` says the size is BAD); `fact show
    # --history` ran it twice and showed the older version as missing nothing (one version, "changed: new").
    from test_diff import commit_all, git

    path = _git_registry(tmp_path)
    card = path / "facts" / "cards" / "a40.toml"
    card.write_text(card.read_text(encoding="utf-8").replace("\nvalue = 46068\n", "\nvalue = 46000\n", 1),
                    encoding="utf-8")
    commit_all(path, "b")
    program, marker = _program(tmp_path)
    blob = git(path, "rev-parse", "main:facts/cards/a40.toml")
    base = git(path, "rev-parse", "main")[:12]
    (path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialClone", "origin"),
                       ("remote.origin.url", f"ext::{program} fetch"), ("remote.origin.promisor", "true"),
                       ("protocol.ext.allow", "always"), ("protocol.allow", "always")):
        git(path, "config", key, value)
    missing = f"{base}:facts/cards/a40.toml: object {blob} is missing from the repository"
    assert bad("diff", "main", "HEAD", root=path) == [f"passprice: error: {missing}"]
    result = invoke("fact", "show", "a40", "memory.capacity", "--history", root=path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "a40 memory.capacity (facts/cards/a40.toml): 2 versions"
    assert f"  does not read: {missing}" in lines
    assert not marker.exists(), marker.read_text(encoding="utf-8")


# --- (2) schema.whole_floats: many floats ---------------------------------------------------------------------------


def test_forty_thousand_floats_in_a_checkpoints_tensor_dims_are_each_named_once(tmp_path: Path) -> None:
    # Round 30: 20,000 tensors of `dims = [640.0, 256.0]` (a 2.1 MB checkpoint entry, under its 64 MiB cap): each
    # float found was kept by a `not in` test of the list of those found so far, quadratic: whole_floats alone took
    # 34 s of CPU (0.42 s now; `check` of the shipped registry 0.7 s in the same session).
    from tests.cli_helpers import copy_root

    from passprice import schema

    root = copy_root(tmp_path)
    path = root / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"
    row = '  { name = "x%d", type = "Q5_0", dims = [640.0, 256.0], offset = 178260480, shard = 0 },\n'
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("tensors = [\n", "tensors = [\n" + "".join(row % i for i in range(20000)), 1),
                    encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    head = "passprice: error: registry/checkpoints/gemma3-270m-q4_k_m.toml: header.tensors"
    # Attack round 44: an array past its schema bound inside a table is refused alone, before its rows are looked at;
    # since attack round 58 the entry's lines are counted before it is parsed at all.
    assert lines == ["passprice: error: registry/checkpoints/gemma3-270m-q4_k_m.toml: 20,293 lines, past the 8,192 a "
                     "checkpoint entry may hold (import writes one a tensor, shard and metadata key): not parsed"]
    # Within the bound (1,800 more rows), the whole floats: 20 named, the rest counted in one line (the lead, session
    # 15: 40,000 lines before).
    path.write_text(text.replace("tensors = [\n", "tensors = [\n" + "".join(row % i for i in range(1800)), 1),
                    encoding="utf-8")
    lines = invoke("check", root=root).stderr.splitlines()
    whole = "is not of type 'integer' (a whole number, written without a decimal point or exponent"
    assert f"{head}.9.dims.1: 256.0 {whole}: 256)" in lines
    assert ("passprice: error: registry/checkpoints/gemma3-270m-q4_k_m.toml: (and 3,580 more floats where a whole "
            "number goes: write each without a decimal point or exponent)") in lines
    assert len(lines) == len(set(lines))
    assert sum(" 256.0 " in line or " 640.0 " in line for line in lines) == 20
    path.write_text(text.replace("tensors = [\n", "tensors = [\n" + "".join(row % i for i in range(20000)), 1),
                    encoding="utf-8")
    import tomllib

    found = schema.whole_floats(tomllib.loads(path.read_text(encoding="utf-8")), "checkpoint")
    assert len(found) == 40000
    assert found[0] == (("header", "tensors", 0, "dims", 0), f"header.tensors.0.dims.0: 640.0 {whole}: 640)")


def test_a_sweep_files_batches_of_sixteen_thousand_whole_floats_are_each_named(tmp_path: Path) -> None:
    # Round 30: `batches = [1.0, 2.0, … 16384.0]` (137 KB, the most items the schema allows): 2.4 s of CPU, 1.0 s of
    # it jsonschema checking whole_floats' oneOf branch item by item and 1.3 s of system time writing the 16,384
    # lines one write (and one terminal check) each; 0.41 s now (the compiled validator asked first, one write).
    from tests.cli_helpers import REPO

    grid = tmp_path / "grid.toml"
    text = (REPO / "examples" / "grid.toml").read_text(encoding="utf-8")
    floats = ", ".join(f"{i}.0" for i in range(1, 16385))
    grid.write_text(text.replace("batches = { from = 1, to = 4096, factor = 2 }", f"batches = [{floats}]"),
                    encoding="utf-8")
    whole = "is not of type 'integer' (a whole number, written without a decimal point or exponent"
    lines = bad("sweep", "--file", str(grid))
    # The first 20 are named, the rest counted in one line (the lead, session 15: a 3,000-tensor entry printed 6,000)
    assert len(lines) == 21
    assert lines[0] == f"passprice: error: {grid}: batches.0: 1.0 {whole}: 1)"
    assert lines[19] == f"passprice: error: {grid}: batches.19: 20.0 {whole}: 20)"
    assert lines[-1] == (f"passprice: error: {grid}: (and 16,364 more floats where a whole number goes: write each "
                         "without a decimal point or exponent)")


# --- (3) names: a folder below the kind's folder ----------------------------------------------------------------------


def test_a_name_into_a_folder_below_the_kinds_folder_is_not_said_to_lead_out_of_it() -> None:
    # Round 30: `--card sub/a40` and `--card "\u2066../../facts/cards/a40"` (its first part a folder name) were said to
    # "lead out of" facts/cards, to a path inside it.
    # The folder and the file relative to the registry, as check names them (left29b: {REPO}/facts/cards)
    for ref, shown, to in (("sub/a40", "sub/a40", "sub/a40"),
                           ("\u2066../../facts/cards/a40", "\\u2066../../facts/cards/a40", "facts/cards/a40")):
        assert bad("price", "r1-qwen7b-h200", "--card", ref) == [
            f"passprice: error: {shown}: no such card file: a card name is a file of facts/cards, and this one "
            f"names a file in a folder below it (to facts/cards/{to}.toml); to read a card file from elsewhere give "
            "its path, ending in .toml"]
    assert bad("price", "r1-qwen7b-h200", "--card", "../drafts/x")[0].startswith(
        "passprice: error: ../drafts/x: no such card file: a card name is a file of facts/cards, and this one leads "
        "out of it (to ")
