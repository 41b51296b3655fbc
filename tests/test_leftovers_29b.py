"""Leftovers 29b (issue 13: paths and names). Under an absolute ``--root`` registry files were still named by absolute
path in ``registry.outside``'s line, not_found's renamed-file hints, a serving file's own problem lines, price's
"(ROOT/sources/ID.toml does not exist …)" and import / new-serving's "wrote" lines, where ``check`` names them
relative to the registry; ``lock --json``'s ``absolute_path`` kept ``..`` parts."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

SERVING = "registry/servings/gemma3-270m-h100.toml"


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    """Replace the first ``old`` text in ``root/rel`` by ``new`` (the edit must apply)."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _error(args: tuple[str, ...], root: Path) -> list[str]:
    """Run ``args`` under ``--root ROOT`` (absolute): exit 2, nothing on stdout, the stderr lines, none naming ROOT."""
    result = invoke(*args, root=root)
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert str(root) not in result.stderr, result.stderr
    return result.stderr.splitlines()


# --- 1. registry files named relative to the registry ----------------------------------------------------------------


def test_a_name_leading_out_of_its_folder_names_the_folder_and_target_relative_to_the_registry(tmp_path: Path) -> None:
    # Before: "a card name is a file of /…/root/facts/cards, and this one leads out of it (to /…/root/facts/drafts/
    # qwen35-mtp.toml, the drafting method qwen35-mtp)".
    root = copy_root(tmp_path)
    assert _error(("price", "gemma3-270m-h100", "--card", "../drafts/qwen35-mtp"), root) == [
        "passprice: error: ../drafts/qwen35-mtp: no such card file: a card name is a file of facts/cards, and this one "
        "leads out of it (to facts/drafts/qwen35-mtp.toml, the drafting method qwen35-mtp); to read a card file from "
        "elsewhere give its path, ending in .toml"]
    # a file outside the registry is still named by its path: no registry name says where it is
    outside = _error(("price", "gemma3-270m-h100", "--stack", "../../../x"), root)
    assert outside == [
        "passprice: error: ../../../x: no such stack file: a stack name is a file of facts/stacks, and this one leads "
        f"out of it (to {tmp_path / 'x.toml'}); to read a stack file from elsewhere give its path, ending in .toml"]


def test_a_renamed_entry_file_hint_names_the_file_relative_to_the_registry(tmp_path: Path) -> None:
    # Before: "…; /…/root/registry/checkpoints/g2.toml names its entry 'gemma3-270m-q4_k_m' (its file renamed, …)".
    root = copy_root(tmp_path)
    folder = root / "registry/checkpoints"
    (folder / "gemma3-270m-q4_k_m.toml").rename(folder / "g2.toml")
    [line] = _error(("header", "gemma3-270m-q4_k_m"), root)
    assert line.startswith(
        "passprice: error: checkpoint 'gemma3-270m-q4_k_m': not found in registry/checkpoints; registry/checkpoints/"
        "g2.toml names its entry 'gemma3-270m-q4_k_m' (its file renamed, its [entry] name not): rename the file back "
        "to gemma3-270m-q4_k_m.toml, or set its [entry] name to 'g2' and name the checkpoint so here (registered: "
    ), line


def test_a_serving_files_own_problem_names_it_relative_to_the_registry_in_price_and_compare(tmp_path: Path) -> None:
    # Before: "/…/root/registry/servings/gemma3-270m-h100.toml: card: card 'nope': not found in facts/cards (…)".
    root = copy_root(tmp_path)
    _edit(root, SERVING, 'card = "h100_sxm5_80gb"', 'card = "nope"')
    start = f"passprice: error: {SERVING}: card: card 'nope': not found in facts/cards (registered: a100_pcie_80gb, "
    for args in (("price", "gemma3-270m-h100"), ("compare", "gemma3-270m-h100"),
                 ("compare", "gemma3-270m-h100", "--cards", "a40")):
        [line] = _error(args, root)
        assert line.startswith(start), (args, line)
    checked = invoke("check", root=root)
    assert checked.exit_code == 2 and f"passprice: error: {SERVING}: card: card 'nope'" in checked.stderr


def test_price_names_a_missing_source_record_as_check_does(tmp_path: Path) -> None:
    # Before: price said "(/…/root/sources/nvidia-h100-datasheet.toml does not exist: write it …)" where check said
    # "(sources/nvidia-h100-datasheet.toml does not exist: …)".
    root = copy_root(tmp_path)
    # the H100 SXM card's memory facts cite NVIDIA's H100 product page since cite90 (the H100 datasheet until then)
    (root / "sources/nvidia-h100-product-page.toml").unlink()
    result = invoke("price", "gemma3-270m-h100", root=root)
    assert (result.exit_code, result.stdout) == (2, "")
    card = root / "facts/cards/h100_sxm5_80gb.toml"  # a line's own file, as every error line under --root names it
    first = result.stderr.splitlines()[0]
    assert first == (
        f"passprice: error: {card}: memory.capacity.source: no source 'nvidia-h100-product-page'; did you mean "
        "nvidia-h100-datasheet or nvidia-h200-product-page or nvidia-hgx-platform-page? (sources/"
        "nvidia-h100-product-page.toml "
        "does not exist: write it (a [source] table, schema/source.schema.json), or cite one of the 46 registered "
        "(passprice sources lists them))"), first
    assert f"{root}/sources" not in result.stderr
    checked = invoke("check", root=root)
    assert "(sources/nvidia-h100-product-page.toml does not exist: write it" in checked.stderr


def test_import_and_new_serving_name_what_they_wrote_relative_to_the_registry(tmp_path: Path) -> None:
    # Before: "imported H as y: /…/root/registry/checkpoints/y.toml (…)" and "wrote /…/root/registry/servings/s.toml:
    # …" where lock prints "-> locks/…"; --json keeps the absolute path (machine-usable).
    root = copy_root(tmp_path)
    header = tmp_path / "y.gguf"
    shutil.copyfile(REPO / "tests/data/qwen35-27b-like.header.gguf", header)
    imported = invoke("import", str(header), root=root)
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.startswith(f"imported {header} as y: registry/checkpoints/y.toml (866 tensors, sha256 "), \
        imported.stdout
    wrote = invoke("new-serving", "s", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "a40", "--batch", "2",
                   "--description", "s", root=root)
    assert wrote.exit_code == 0, wrote.output
    assert wrote.stdout.startswith("wrote registry/servings/s.toml: gemma3-270m-q4_k_m on a40, batch 2, "), wrote.stdout
    as_json = invoke("new-serving", "t", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "a40", "--description", "t",
                     "--json", root=root)
    assert json.loads(as_json.stdout)["path"] == str(root / "registry/servings/t.toml")


# --- 2. lock --json's absolute_path without .. -----------------------------------------------------------------------


def test_lock_json_absolute_path_folds_dot_dot_and_keeps_the_links_given(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: -o ../x/../root/locks/a.lock.toml gave "absolute_path": "/…/root/../x/../root/locks/a.lock.toml".
    root = copy_root(tmp_path)
    (tmp_path / "x").mkdir()
    os.symlink(root / "locks", tmp_path / "link")
    monkeypatch.chdir(root)
    for output, absolute in (
        ("../x/../root/locks/a.lock.toml", root / "locks/a.lock.toml"),
        ("./locks/./b.lock.toml", root / "locks/b.lock.toml"),
        ("../link/c.lock.toml", tmp_path / "link/c.lock.toml"),  # the link the user named is kept
    ):
        result = invoke("lock", "gemma3-270m-h100", "--name", Path(output).stem.split(".")[0], "-o", output, "--json",
                        root=root)
        assert result.exit_code == 0, (output, result.output)
        out = json.loads(result.stdout)
        assert (out["path"], out["absolute_path"]) == (str(Path(output)), str(absolute)), output  # path: as typed
        assert Path(out["absolute_path"]).is_file()
    # link/.. is the folder above the link's target, as the system reads it (os.path.normpath would say
    # tmp_path/locks, which does not exist); lock itself cannot write through it (found, left: see the report)
    from passprice.locking import absolute_path

    assert absolute_path(Path("../link/../locks/d.lock.toml")) == str(root / "locks/d.lock.toml")
    assert os.path.normpath(tmp_path / "link/../locks/d.lock.toml") == str(tmp_path / "locks/d.lock.toml")


# --- 3. a shallow clone's hint only where the revision could lie beyond its boundary ---------------------------------


def _git(repo: Path, *args: str) -> str:
    import subprocess

    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          check=True, capture_output=True)  # fmt: skip
    return done.stdout.decode().strip()


def test_a_shallow_clone_is_hinted_only_for_a_revision_that_could_be_beyond_its_boundary(tmp_path: Path) -> None:
    # Before: `diff main` in a depth-1 clone with no branch main (local or remote) said "main: neither a folder nor
    # a revision of the git checkout … (this is a shallow clone: older commits are not here; git fetch --unshallow)":
    # no fetch of history makes a branch that does not exist.
    origin = copy_root(tmp_path / "o")
    _git(origin, "init", "-q", "-b", "trunk")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "one")
    first = _git(origin, "rev-parse", "HEAD")
    _git(origin, "commit", "-q", "--allow-empty", "-m", "two")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    hint = " (this is a shallow clone: older commits are not here; git fetch --unshallow)"
    for revision, hinted in (("main", False), ("origin/main", False), ("v1.0", False), ("nosuch~1", False),
                             ("HEAD~1", True), ("trunk^", True), (first, True), (first[:7], True)):
        result = invoke("diff", revision, root=clone)
        assert (result.exit_code, result.stdout) == (2, ""), result.output
        [line] = result.stderr.splitlines()
        assert line.startswith(f"passprice: error: {revision}: neither a folder nor a revision of the git checkout "
                               f"at {clone}"), line
        assert (hint in line) == hinted, (revision, line)


# --- 4. a fact of -0.0 is 0 ------------------------------------------------------------------------------------------


def test_a_negative_zero_fact_is_read_as_0_and_never_echoed_as_minus_0(tmp_path: Path) -> None:
    # Before: a drafting method's acceptance.1 = -0.0 was echoed "0.85 when derived, -0 now" (check, price's stale
    # line) and "draft.acceptance.1: 0.85 (estimated) → -0 (estimated)" (the lock's drift line), -0.0 in --json.
    from passprice.facts import Fact

    root = copy_root(tmp_path)
    _edit(root, "facts/drafts/qwen35-mtp.toml", "[acceptance.1]\nvalue = 0.85", "[acceptance.1]\nvalue = -0.0")
    checked = invoke("check", root=root)
    assert ("  facts/drafts/qwen35-mtp.toml: acceptance.2 is stale: its input first = acceptance.1: 0.85 when "
            "derived, 0 now; recomputed from today's inputs it is -0.1, not 0.75") in checked.output.splitlines()
    assert "    draft.acceptance.1: 0.85 (estimated) → 0 (estimated)" in checked.output.splitlines()
    priced = invoke("price", "qwen35-27b-h200-mtp", root=root)
    assert "input acceptance.1 0.85 when derived, 0 now — priced on its written value" in priced.output
    assert "draft.acceptance.1: 0.85 (estimated) → 0 (estimated)" in priced.output
    for result in (checked, priced):
        assert "-0 " not in result.output and "-0.0" not in result.output and "→ -0" not in result.output
    entry = {"value": -0.0, "unit": "1", "provenance": "estimated", "source": "x", "locator": "y"}
    fact = Fact.from_entry(entry, "f: share")  # a stack's terms.serial or share, a card's fact: one reader
    assert (repr(fact.value), repr(fact.amount), fact.to_entry()["value"]) == ("0.0", "0.0", 0.0)
    assert str(fact.to_entry()["value"]) == "0.0"
