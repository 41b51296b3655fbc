"""Leftovers 28c (issue 13): a misspelled key that named no valid key, a derived fact without a derivation told only
"missing (required)", a source id not found that listed every registered id on each line, `lock` naming the lock it
wrote absolute or relative by the form of the command, `diff A..B` called "neither a folder nor a revision", and
`validate` naming a bad file ROOT/registry/… where check and the listings name it registry/…."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

H200 = "facts/cards/h200_sxm_141gb.toml"


def _edit(root: Path, rel: str, old: str, new: str, count: int = 1) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _check_errors(root: Path) -> list[str]:
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    return [line for line in result.stderr.splitlines() if line.startswith("passprice: error: ")]


# --- 1. a misspelled key names the valid keys, or the closest --------------------------------------------------------


def test_a_misspelled_fact_name_names_the_keys_its_table_may_hold(tmp_path: Path) -> None:
    # Before: "on_chip: Additional properties are not allowed ('bw' was unexpected)", no valid name said.
    root = copy_root(tmp_path)
    _edit(root, H200, "[on_chip.bandwidth]\n", "[on_chip.bw]\n")
    assert _check_errors(root) == [
        f"passprice: error: {H200}: on_chip.bandwidth: missing (required)",
        f"passprice: error: {H200}: on_chip: unknown key 'bw'; the keys here are bandwidth, capacity",
    ]


def test_a_near_miss_is_told_the_closest_names(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit(root, H200, "[memory.bandwidth]\n", "[memory.bandwith]\n")
    # one fault, one line: "memory.bandwidth: missing (required)" folded into it (tests/test_fix53w.py)
    assert _check_errors(root) == [
        f"passprice: error: {H200}: memory: unknown key 'bandwith'; did you mean 'bandwidth'?"]
    # two at once: each its closest name
    _edit(root, H200, "[memory.capacity]\n", "[memory.capacty]\n")
    assert _check_errors(root) == [
        f"passprice: error: {H200}: memory: unknown keys 'capacty', 'bandwith'; did you mean 'capacity' for "
        "'capacty', 'bandwidth' for 'bandwith'?"
    ]


# --- 2. a derived fact without a derivation says why it needs one ----------------------------------------------------


def test_a_derived_fact_without_a_derivation_says_it_must_carry_one(tmp_path: Path) -> None:
    # Before: "memory.bandwidth.derivation: missing (required)", and nothing of why.
    root = copy_root(tmp_path)
    # (the H200's memory facts cite its product page since cite102)
    _edit(root, H200, 'provenance = "published"\nsource = "nvidia-h200-product-page"\nlocator = "Specifications '
          "table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth",
          'provenance = "derived"\nsource = "nvidia-h200-product-page"\nlocator = "Specifications table, H200 SXM '
          "column (a row: its label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth")
    line = (f"passprice: error: {H200}: memory.bandwidth.derivation: missing (required): a fact whose provenance is "
            '"derived" must carry a derivation (the formula and inputs it is computed from: README.md, section Facts; '
            "passprice explain derivation), or give it another provenance")
    assert _check_errors(root) == [line]
    price = invoke("price", "r1-qwen7b-h200", root=root)
    assert price.exit_code == 2 and price.stdout == ""
    assert price.stderr.splitlines() == [line.replace(H200, str(root / H200))]


def test_the_readme_section_the_line_points_to_says_a_derived_fact_carries_one() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    facts = readme[readme.index("\n## Facts\n"):]
    facts = facts[: facts.index("\n## ", 1)]
    assert "`derivation` (required for a `derived` fact)" in facts


# --- 3. a source id not found names at most 3 ids --------------------------------------------------------------------


def test_a_source_not_found_names_the_close_ones_and_counts_the_rest(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    ids = sorted(p.stem for p in (root / "sources").glob("*.toml"))
    assert len(ids) >= 30
    # memory.capacity and memory.bandwidth (citing the H200 datasheet until cite102, its product page since)
    _edit(root, H200, 'source = "nvidia-h200-product-page"', 'source = "nvidia-h200-datasheett"', 2)
    _edit(root, H200, 'source = "nvidia-hopper-whitepaper"\nlocator = "Table 3, H100 SXM5 column (the H100',
          'source = "zzz"\nlocator = "Table 3, H100 SXM5 column (the H100')
    lines = _check_errors(root)
    sources = "sources"  # inside a line too, relative to the registry since session 29 (left29; was absolute)
    write = "does not exist: write it (a [source] table, schema/source.schema.json), or cite one of the"
    assert lines[0] == (
        f"passprice: error: {H200}: memory.capacity.source: no source 'nvidia-h200-datasheett'; did you mean "
        f"nvidia-h200-datasheet or nvidia-h200-product-page or nvidia-h100-datasheet? "  # most leading words first
        f"({sources}/nvidia-h200-datasheett.toml {write} {len(ids)} registered (passprice sources lists them))"
    )
    # walk95: no id is close to zzz, so none is named (it listed the three "closest" whatever their likeness)
    assert lines[2] == (
        f"passprice: error: {H200}: on_chip.capacity.source: no source 'zzz' ({sources}/zzz.toml {write} {len(ids)} "
        "registered (passprice sources lists them))"
    )
    # before: each line about 900 characters (every id listed), once a fact
    assert all(len(line) - len(str(root)) < 400 for line in lines), [len(line) for line in lines]
    assert not any("amd-cdna3-whitepaper" in line for line in lines)


# --- 4. lock names the lock it wrote by one rule ---------------------------------------------------------------------


def test_lock_names_its_default_path_relative_to_the_working_folder(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: `lock SERVING` printed `-> /…/locks/NAME.lock.toml`, `lock --update -o locks/NAME.lock.toml`
    # `-> locks/NAME.lock.toml`.
    root = copy_root(tmp_path)
    # 11,733.7 before session 39 (window55: a windowed layer reads window − 1 cached positions)
    head = "locked {} (price, locks serving gemma3-270m-h100): 11,734.4 tokens/s at batch 1, binds on memory, weakest "
    monkeypatch.chdir(root)
    made = invoke("lock", "gemma3-270m-h100", "--name", "g", root=root)
    assert made.exit_code == 0, made.output
    assert made.stdout.splitlines()[0] == head.format("g") + "estimated -> locks/g.lock.toml"
    again = invoke("lock", "--update", "-o", "locks/g.lock.toml", root=root)
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines()[0] == head.format("g") + "estimated -> locks/g.lock.toml"
    monkeypatch.chdir(root / "locks")
    third = invoke("lock", "gemma3-270m-h100", "--name", "h", root=root)
    assert third.exit_code == 0, third.output
    assert third.stdout.splitlines()[0] == head.format("h") + "estimated -> h.lock.toml"
    # -o as typed, whatever the working folder
    fourth = invoke("lock", "--update", "-o", str(root / "locks" / "h.lock.toml"), root=root)
    assert fourth.stdout.splitlines()[0] == head.format("h") + f"estimated -> {root / 'locks' / 'h.lock.toml'}"


# --- 5. diff A..B is a range: give two revisions ---------------------------------------------------------------------


def _repository(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    steps = (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"], ["commit", "-q", "--allow-empty", "-m", "two"])
    for args in steps:
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return root


def test_diff_of_a_range_says_to_give_its_two_revisions(tmp_path: Path) -> None:
    # Before: "HEAD~1..HEAD: neither a folder nor a revision of the git checkout at …", exit 2.
    root = _repository(tmp_path)
    two = invoke("diff", "HEAD~1..HEAD", root=root)
    assert two.exit_code == 2 and two.stdout == ""
    assert two.stderr == ("passprice: error: HEAD~1..HEAD: a range of revisions, which diff does not read: give its "
                          "two revisions as two arguments: passprice diff HEAD~1 HEAD\n")
    three = invoke("diff", "HEAD~1...HEAD", root=root)
    assert three.exit_code == 2 and three.stderr == (
        "passprice: error: HEAD~1...HEAD: a range of revisions, which diff does not read: give its two revisions as "
        "two arguments: passprice diff HEAD~1 HEAD (git's A...B starts from the commit both share: passprice diff "
        "$(git merge-base HEAD~1 HEAD) HEAD)\n"
    )
    open_end = invoke("diff", "HEAD~1..", root=root)  # git reads a left-out end as HEAD
    assert open_end.exit_code == 2 and open_end.stderr.endswith(": passprice diff HEAD~1 HEAD\n")
    # a "range" whose ends name no commit is no range: said as before
    nothing = invoke("diff", "nope..HEAD", root=root)
    assert nothing.exit_code == 2 and "nope..HEAD: neither a folder nor a revision" in nothing.stderr
    # the two revisions as two arguments: compared (exit 0: nothing differs)
    assert invoke("diff", "HEAD~1", "HEAD", root=root).exit_code == 0


# --- 6. validate names a bad measurement file as check does ----------------------------------------------------------


def test_validate_names_a_bad_measurement_file_relative_to_the_registry(tmp_path: Path) -> None:
    # Before: "passprice: error: ROOT/registry/measurements/llamacpp-points.toml: …" under --root ROOT.
    root = copy_root(tmp_path)
    rel = "registry/measurements/llamacpp-points.toml"
    path = root / rel
    path.write_text("bogus = 1\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    line = f"passprice: error: {rel}: (top level): unknown key 'bogus'; the keys here are run, source"
    result = invoke("validate", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [line]
    assert line in _check_errors(root)  # as check names it
