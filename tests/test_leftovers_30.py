"""Issue 13's leftovers from session 29's closing note (task left30), each reproduced here first.

1. ``fact set``'s floor warning was uncapped: 1,000 locks below a new value printed 1,004 lines in 3.0 s.
2. A lock's ``[stack] fitted_vendors`` re-digested out of order (``["NVIDIA", "AMD"]``) read as relabelled vendors,
   exit 0 on ``check``, ``reproduce`` and ``price --lock``; now refused by name (the lock schema states the rule).
3. ``passprice init .`` at the top of a git repository holding its own README.md and .github/ refused (exit 2, ``mv``
   advice); now it adds what is missing (the registry, the workflow when absent) and says what it left alone.
4. ``lock -o ../link/../locks/x.lock.toml`` was "cannot write: No such file or directory" (exit 2) where the kernel
   resolves ``link/..`` to the folder above the link's target: the temporary file's name was folded by text
   (``os.path.abspath``). Decision: resolve as the kernel does; the lock is written where the name leads.
7. A lock made under ``llamacpp-cuda-2405`` re-digested to name the other registered stack (``[stack] name`` and
   ``price.stack`` agreeing) was drift: ``check`` exit 1, ``reproduce`` and ``audit`` exit 0, ``price --lock`` a
   StackLacks refusal (exit 1). A lock names the stack its price was made under: now refused by name, exit 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke
from test_hostile_49 import STACKED, _locked, _refused_everywhere, _rewritten

SET_REWRITE = ("fact", "set", "h200_sxm_141gb", "streams.rewrite", "--value", "0.8", "--unit", "1", "--source",
               "azure-ai-benchmarking-guide", "--locator", "BabelStream Mul share x 0.96 (an engineering estimate)",
               "--provenance", "estimated")


def _floor_line(file: str) -> str:
    return ("passprice: warning: facts/cards/h200_sxm_141gb.toml: streams.rewrite is estimated now, below the floor "
            "measured of lock qwen35-27b-h200-mtp: `passprice check` (the pre-commit hook) and the review fail it; "
            f"restore the fact, or loosen that floor on purpose (`passprice lock --update -o locks/{file} --force "
            "--require streams.rewrite=estimated`)")


def test_fact_set_names_five_locks_below_a_floor_then_counts_the_rest(tmp_path: Path) -> None:
    # Session 29: 1,000 copies of the one lock resting on the H200's streams.rewrite (at `measured`) gave 1,004
    # warning lines (1,001 floor lines) in 3.0 s. Now the first five by file name, then one line counting the rest.
    root = copy_root(tmp_path)
    lock = root / "locks" / "qwen35-27b-h200-mtp.lock.toml"
    for i in range(1, 1001):
        shutil.copyfile(lock, root / "locks" / f"copy{i:04}.lock.toml")
    out = invoke(*SET_REWRITE, root=root)
    assert out.exit_code == 0, out.output
    floors = [line for line in out.stderr.splitlines() if "below the floor" in line or "more lock" in line]
    assert floors == [*(_floor_line(f"copy{i:04}.lock.toml") for i in range(1, 6)),
                      "passprice: warning: facts/cards/h200_sxm_141gb.toml: and 996 more locks below their floors "
                      "for streams.rewrite (`passprice check` lists every one)"]
    # was 1,003: two notes on the entry, then 1,001 floor lines; and the locked prices the edit moves, the first five
    # named, the rest counted, as the floor lines are
    assert len(out.stderr.splitlines()) == 9
    (moves,) = [line for line in out.stderr.splitlines() if ": the edit moves " in line]
    assert moves.startswith("passprice: warning: facts/cards/h200_sxm_141gb.toml: streams.rewrite: the edit moves "
                            "1,001 locked prices (")
    assert (" and 996 more (`passprice check` lists every one)): a review fails it unless the change re-locks each: "
            in moves)
    assert moves.count("passprice lock --update") == 5 and moves.endswith(", …")


def test_fact_set_with_two_locks_below_a_floor_names_both(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    shutil.copyfile(root / "locks" / "qwen35-27b-h200-mtp.lock.toml", root / "locks" / "copy.lock.toml")
    out = invoke(*SET_REWRITE, root=root)
    assert out.exit_code == 0, out.output
    floors = [line for line in out.stderr.splitlines() if "floor" in line]
    assert floors == [_floor_line("copy.lock.toml"), _floor_line("qwen35-27b-h200-mtp.lock.toml")]


# --- 2. a lock's fitted_vendors out of order or empty -----------------------------------------------------------------

def test_2_fitted_vendors_out_of_order_is_refused_naming_file_and_key(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _rewritten(root / STACKED, lambda d: d["stack"].__setitem__("fitted_vendors", ["NVIDIA", "AMD"]))
    _refused_everywhere(root, STACKED, "stack.fitted_vendors: 'NVIDIA' before 'AMD' is not in order (the vendors are "
                        "sorted, each once, as passprice writes them): re-lock it, or restore the lock from the last "
                        "commit that holds it as written")


def test_2_fitted_vendors_twice_the_same_is_the_schema_s_refusal(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _rewritten(root / STACKED, lambda d: d["stack"].__setitem__("fitted_vendors", ["NVIDIA", "NVIDIA"]))
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert [line for line in checked.stderr.splitlines() if "fitted_vendors" in line] == [
        "passprice: error: locks/r1-stack.lock.toml: stack.fitted_vendors: 'NVIDIA' is listed more than once"
    ]


def test_2_the_lock_schema_states_the_rule() -> None:
    import json

    from passprice.registry import embedded_root

    lock_schema = json.loads((embedded_root().schema / "lock.schema.json").read_text(encoding="utf-8"))
    rule = lock_schema["properties"]["stack"]["properties"]["fitted_vendors"]
    assert rule["uniqueItems"] is True and "minItems" not in rule
    assert rule["description"].startswith("the vendors of the cards the stack was fitted on, sorted by code point, "
                                          "each once (a list out of order is refused by name")


def test_2_an_empty_fitted_vendors_is_a_lock_s_own_and_reads_as_relabelled(tmp_path: Path) -> None:
    # Empty is what a stack fitted on cards that give no vendor pins (stackreach.stack_vendors): kept valid; against
    # today's NVIDIA it is the relabelled pin slip 48 made it, which the review fails.
    root = _locked(tmp_path)
    _rewritten(root / STACKED, lambda d: d["stack"].__setitem__("fitted_vendors", []))
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    assert "    stack.llamacpp-cuda-2405.fitted_vendors: [(none) → NVIDIA] (the lock pinned the old)" in (
        checked.stdout.splitlines())


# --- 3. init . in a repository holding its own README.md and .github/ -----------------------------------------------

TOOLING = ("  schema/, .taplo.toml, .pre-commit-config.yaml, .github/workflows/facts.yml, .gitattributes, "
           "requirements.txt")
LEFT = "  left alone (already here; init replaces nothing, so its own are not written): "


def _repository(tmp_path: Path) -> Path:
    fork = tmp_path / "fork"
    (fork / ".github" / "ISSUE_TEMPLATE").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(fork)], check=True)
    (fork / "README.md").write_text("# our fork\n", encoding="utf-8")
    (fork / ".github" / "ISSUE_TEMPLATE" / "bug.md").write_text("ours\n", encoding="utf-8")
    return fork


def test_3_init_in_a_repository_adds_the_registry_and_the_workflow_and_keeps_its_readme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: exit 2, "already holds .github, README.md; init writes a registry into an empty folder … move them
    # aside (mv …/.github …/.github.mine; mv …/README.md …/README.md.mine)".
    fork = _repository(tmp_path)
    plain = tmp_path / "plain"
    assert invoke("init", str(plain)).exit_code == 0
    monkeypatch.chdir(fork)
    result = invoke("init", ".")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[10:12] == [TOOLING, LEFT + "README.md"]
    assert lines[-2] == "next: pre-commit install; passprice import MODEL.gguf --name NAME"
    assert lines[-1].startswith("then: commit the registry to the default branch before the first pull request")
    assert (fork / "README.md").read_text(encoding="utf-8") == "# our fork\n"
    assert (fork / ".github" / "ISSUE_TEMPLATE" / "bug.md").read_text(encoding="utf-8") == "ours\n"
    workflow = ".github/workflows/facts.yml"
    assert (fork / workflow).read_bytes() == (plain / workflow).read_bytes()
    assert sorted(p.name for p in fork.iterdir()) == sorted([".git", *(p.name for p in plain.iterdir())])
    assert not [p for p in tmp_path.iterdir() if p.name not in ("fork", "plain")]  # no staging folder left


def test_3_init_in_a_repository_leaves_its_own_workflow_of_that_name_alone(tmp_path: Path) -> None:
    fork = _repository(tmp_path)
    (fork / ".github" / "workflows").mkdir()
    (fork / ".github" / "workflows" / "facts.yml").write_text("name: ours\n", encoding="utf-8")
    result = invoke("init", str(fork), "--json")
    assert result.exit_code == 0, result.output
    said = json.loads(result.stdout)
    assert said["kept"] == [".github/workflows/facts.yml", "README.md"]
    assert ".github/workflows/facts.yml" not in said["files"] and "README.md" not in said["files"]
    assert (fork / ".github" / "workflows" / "facts.yml").read_text(encoding="utf-8") == "name: ours\n"
    assert (fork / "facts" / "cards").is_dir() and (fork / "requirements.txt").is_file()


def test_3_init_in_a_repository_still_refuses_a_record_folder_already_there(tmp_path: Path) -> None:
    fork = _repository(tmp_path)
    (fork / "facts").mkdir()
    result = invoke("init", str(fork))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"passprice: error: {fork}: already holds facts; init writes a registry into an empty folder (or one without "
        f"these), and replaces nothing: to add a registry beside them, move them aside (mv {fork}/facts "
        f"{fork}/facts.mine), run init again, then merge each back into what init wrote"]
    assert sorted(p.name for p in fork.iterdir()) == [".git", ".github", "README.md", "facts"]
    assert not (fork / ".github" / "workflows").exists()


# --- 4. lock -o through link/.. ---------------------------------------------------------------------------------------

def test_4_lock_o_through_a_link_and_dot_dot_writes_where_the_kernel_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_root(tmp_path)
    (root / "other" / "deep").mkdir(parents=True)
    (root / "link").symlink_to("other/deep")  # link/../.. is root (the kernel); by text it was root's parent
    (root / "work").mkdir()
    monkeypatch.chdir(root / "work")
    result = invoke("lock", "r1-qwen7b-h200", "--batch", "1", "-o", "../link/../../locks/x.lock.toml", root=root)
    assert result.exit_code == 0, result.output  # was 2: "…: cannot write: No such file or directory"
    assert result.stdout.splitlines()[-1].endswith(" -> ../link/../../locks/x.lock.toml")
    assert (root / "locks" / "x.lock.toml").is_file()
    assert [p.name for p in (root / "other").rglob("*")] == ["deep"] and not (tmp_path / "locks").exists()
    said = invoke("lock", "r1-qwen7b-h200", "--batch", "1", "-o", "../link/../../locks/y.lock.toml", "--json",
                  root=root)
    assert said.exit_code == 0, said.output
    assert json.loads(said.stdout)["absolute_path"] == str(root / "locks" / "y.lock.toml")
    checked = invoke("reproduce", str(root / "locks" / "x.lock.toml"), root=root)
    assert checked.exit_code == 0, checked.output


# --- 7. a lock re-digested to name another registered stack -----------------------------------------------------------

OTHER = "lmdeploy-turbomind-2312"


def _renamed(document: dict[str, Any]) -> None:
    document["stack"]["name"] = OTHER
    document["price"]["stack"] = OTHER


def test_7_a_lock_naming_another_registered_stack_is_refused_by_name(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _rewritten(root / STACKED, _renamed)
    said = (f"stack.name: '{OTHER}' is not the stack this lock's pins describe: its [stack] title, runtime and builds "
            "are those of registered stack 'llamacpp-cuda-2405' (a lock names the stack its price was made under); "
            "re-lock it, or restore the lock from the last commit that holds it as written")
    _refused_everywhere(root, STACKED, said)  # check was exit 1 (drift), reproduce exit 0, price --lock exit 1
    audited = invoke("audit", str(root / STACKED), root=root)
    assert audited.exit_code == 2 and audited.stderr.splitlines() == [
        f"passprice: error: {root / STACKED}: {said}"]  # was exit 0, "expected under stack lmdeploy-… (pinned)"


def test_7_a_stack_retitled_since_the_lock_is_still_drift_not_a_refusal(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = stack.read_text(encoding="utf-8")
    assert text.count('name = "llama.cpp, CUDA backend') == 1  # the [stack] table's title
    stack.write_text(text.replace('name = "llama.cpp, CUDA backend', 'name = "Retitled llama.cpp, CUDA backend'),
                     encoding="utf-8")
    checked = invoke("check", root=root)
    assert checked.exit_code != 2 and "is not the stack this lock's pins describe" not in checked.output
    assert invoke("reproduce", str(root / STACKED), root=root).exit_code == 0
