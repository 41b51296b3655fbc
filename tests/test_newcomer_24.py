"""Walkthrough 24 (README only, a new user): an ML platform engineer serving a mixture of experts (Qwen3-30B-A3B)
built its header with ``synth``, stated its own routing record citing a router log kept in the registry, recorded
the serving stack it measured (a stack file, five measured runs, ``calibrate``), locked the price under the stack,
changed a fact, reproduced the old lock, and reviewed a change of the routing record. Each test builds the
reproducer of one finding and asserts the exit status and the words (or the value).

Finding 1: the README wrote a stack of one's own as a ``[stack]`` table "and, if its runtime keeps memory for
itself, a ``memory.reserved`` fact"; a stack written so calibrated without a word, and then every price under it
was refused ``StackLacks: … no memory.reserved fact …``, advising to "add measured runs under this stack that
exercise it and run calibrate", which never fits it. The refusal now says to write it by hand (0 GiB if the
runtime keeps none), calibrate warns while it is missing, and the README says every price reads it.

Finding 2: ``price SERVING`` (no ``--stack``) of a serving whose lock was made under a stack, after one card fact
moved, listed all 13 of the lock's stack facts as "drifted since the lock: stack.… → gone": they were not read,
not removed. They are left out, and a line says the lock was made under the stack and how to price it so.

Finding 3: ``reproduce`` of a lock made under a stack showed a row ``expected  changed  changed  changed``: the
expected price's object compared whole, its recorded column reading "changed" too. Each figure of it that moved is
now a row of its own (``expected.pass_s``, ``expected.memory_s``).

Finding 4: the review of a change rewriting a registry document that a stack's ``memory.reserved`` and the measured
runs of its fit cite said under *Sources* "no fact cites it", and named no lock, though a lock rests on both. It
now names the stack's fact, the runs its fitted facts rest on, and the lock.

Finding 5 (text): ``check``'s re-fit mismatch said "a fact of a card or checkpoint its runs price changed" when a
routing record the runs name had; it names routing records too (tests/test_calibrate.py asserts the line).

Finding 6: calibrate replaced a hand-measured ``overhead.pass`` (measured) by its fit (derived) without a word; it
now warns, and the README says calibrate holds no fact fixed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

MOE = "qwen3-30b-a3b-q4_k_m"
ROUTING = "qwen3-30b-a3b-measured"
STACK = "vllm-w24"

STACK_FILE = """#:schema ../../schema/stack.schema.json
[stack]
name = "vLLM (our build), CUDA graphs, one H200"
integer_matrices = "array"
float_matrices = "tensor"
"""

RESERVED = """
[memory.reserved]
value = {value}
unit = "GiB"
provenance = "estimated"
source = "w24-bench"
locator = "vLLM decode benchmark: CUDA context and workspaces"
"""

SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "vLLM decode benchmark on H200"
kind = "registry"
publisher = "ML platform team"
path = "notes/w24-bench.md"
read = "tokens/s at fixed batch"
"""

#: Five measured runs (tokens/s) at batches 1 to 64, as the walkthrough measured them.
RUNS = {1: 395.3, 4: 1192.6, 16: 2940.4, 32: 4460.7, 64: 6641.7}


def _runs() -> str:
    text = '#:schema ../../schema/measurement.schema.json\n[source]\nname = "vLLM decode, H200"\nsource = "w24-bench"\n'
    for batch, tokens in RUNS.items():
        text += (
            f'\n[[run]]\nid = "w24.h200.b{batch}"\nstack = "{STACK}"\ncard = "h200_sxm_141gb"\ncheckpoint = "{MOE}"\n'
            f'routing = "{ROUTING}"\nbatch = {batch}\npositions = [1984, 2112]\ntokens_per_s = {tokens}\n'
            f'locator = "decode benchmark: batch {batch}: {tokens} tok/s"\n'
        )
    return text


def _registry(path: Path, reserved: bool = True) -> Path:
    root = copy_root(path)
    (root / "notes").mkdir()
    (root / "notes" / "w24-bench.md").write_text("# vLLM decode benchmark\nbatch 1: 395.3 tok/s …\n")
    (root / "sources" / "w24-bench.toml").write_text(SOURCE)
    (root / "registry" / "measurements" / "w24.toml").write_text(_runs())
    stack = STACK_FILE + (RESERVED.format(value=2) if reserved else "")
    (root / "facts" / "stacks" / f"{STACK}.toml").write_text(stack)
    return root


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with the stack calibrated, a serving of the mixture of experts and a lock of it under the stack."""
    root = _registry(tmp_path_factory.mktemp("w24"))
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    made = invoke("new-serving", "w24-moe", "--checkpoint", MOE, "--card", "h200_sxm_141gb", "--batch", "64",
                  "--routing", ROUTING, "--description", "walkthrough 24", root=root)
    assert made.exit_code == 0, made.output
    lock = invoke("lock", "w24-moe", "--stack", STACK, "-o", str(root / "locks" / "w24-moe.lock.toml"), root=root)
    assert lock.exit_code == 0, lock.output
    return root


def test_a_stack_without_memory_reserved_is_told_to_write_it_by_hand(tmp_path: Path) -> None:
    root = _registry(tmp_path, reserved=False)
    fit = invoke("calibrate", "--stack", STACK, "--dry-run", root=root)
    assert fit.exit_code == 0, fit.output
    assert (f"passprice: warning: calibrate {STACK}: stack {STACK} has no memory.reserved fact, which every price "
            f"under it reads and calibrate does not fit: write it in facts/stacks/{STACK}.toml by hand (0 GiB with "
            "its citation if the runtime keeps none), else every price under the stack is refused StackLacks"
            ) in fit.stderr
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    args = ("price", "--checkpoint", MOE, "--card", "h200_sxm_141gb", "--batch", "64", "--routing", ROUTING,
            "--stack", STACK)
    result = invoke(*args, root=root)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (
        f"passprice: refused: StackLacks: stack '{STACK}' has no memory.reserved fact, and this serving needs one "
        f"(the runtime's own memory sits beside the serving's): add it to facts/stacks/{STACK}.toml by hand (a "
        "measured or estimated value with its citation; `passprice calibrate` does not fit it, and every price under "
        "a stack reads it: 0 GiB if the runtime keeps none); or price the limit (without --stack)\n"
    )
    # as the refusal says: 0 GiB, cited, and the price is made (nothing reserved)
    with (root / "facts" / "stacks" / f"{STACK}.toml").open("a") as f:
        f.write(RESERVED.format(value=0))
    fit = invoke("calibrate", "--stack", STACK, "--dry-run", root=root)
    assert "memory.reserved" not in fit.stderr
    result = invoke(*args, root=root)
    assert result.exit_code == 0, result.output
    assert "(0 B reserved)" in result.stdout
    # another fact a stack lacks still points at the runs and calibrate (test_speculate: share.rewrite)


def test_the_limit_of_a_stack_locked_serving_names_no_stack_fact_gone(locked: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(locked, root)
    moved = invoke("fact", "set", "h200_sxm_141gb", "streams.append", "--value", "0.85", "--unit", "1",
                   "--provenance", "measured", "--source", "azure-ai-benchmarking-guide", "--locator",
                   "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table (BabelStream): Triad 4.08 TB/s",
                   root=root)
    assert moved.exit_code == 0, moved.output
    result = invoke("price", "w24-moe", root=root)
    assert result.exit_code == 0, result.output
    assert "→ gone" not in result.stdout and "drifted since the lock: stack." not in result.stdout
    assert "drifted since the lock: streams.append: 0.8646 (measured) → 0.85 (measured)" in result.stdout
    assert (f"lock w24-moe was made under stack {STACK}: this is the card's limit, its stack facts not read (none "
            f"is judged here); `--stack {STACK}` prices the expected price it locks") in result.stdout
    [move] = json.loads(invoke("price", "w24-moe", "--json", root=root).stdout)["lock"]["moved"]
    assert move["drifted"] == ["streams.append: 0.8646 (measured) → 0.85 (measured)"]
    # by hand: only the per-sequence bytes' share moved, 0.8646 -> 0.85, at 4.8 TB/s, batch 64
    priced = json.loads(invoke("price", "w24-moe", "--json", "--no-lock", root=root).stdout)
    memory = priced["weight_bytes"] / (4.8e12 * 0.9333) + 64 * priced["sequence_bytes"] / (4.8e12 * 0.85)
    assert priced["memory_s"] == pytest.approx(memory, rel=1e-12)
    assert priced["tokens_per_s"] == pytest.approx(64 / memory, rel=1e-12)
    # under the stack, its facts are judged as before: only the card's fact drifted
    stacked = invoke("price", "w24-moe", "--stack", STACK, root=root)
    assert "under stack" in stacked.stdout and "made under stack" not in stacked.stdout
    # finding 3: reproduce shows the expected price's figures that moved, each by name, never the object as "changed"
    rep = invoke("reproduce", str(root / "locks" / "w24-moe.lock.toml"), root=root)
    assert rep.exit_code == 0, rep.output
    rows = {line.split()[0]: line.split()[1:] for line in rep.stdout.splitlines() if line.startswith("expected")}
    assert "expected" not in rows and "changed" not in rep.stdout.split("field", 1)[1].split("first term")[0]
    assert {"expected.tokens_per_s", "expected.batch", "expected.pass_s", "expected.memory_s"} <= set(rows)
    recorded, reproduced, today = (float(v) for v in rows["expected.pass_s"])
    assert recorded == reproduced != today


def test_a_registry_document_a_stack_cites_is_reviewed_with_what_rests_on_it(locked: Path, tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(locked, base)
    shutil.copytree(locked, head)
    (head / "notes" / "w24-bench.md").write_text("# vLLM decode benchmark, re-run\nbatch 1: 401 tok/s …\n")
    result = invoke("diff", str(base), str(head), "--format", "json", root=head)
    assert result.exit_code == 0, result.output
    [source] = json.loads(result.stdout)["sources_changed"]
    assert source["id"] == "w24-bench"
    assert source["citing"] == [f"{STACK}:memory.reserved"]
    assert source["fitted"] == {STACK: 12}
    assert source["locks"] == ["w24-moe"]
    assert source["to_verify"] == (
        "the document source w24-bench names changed (notes/w24-bench.md rewritten): does it state "
        f"{STACK}:memory.reserved, which cites it, and the measured runs of stack {STACK} (12 fitted facts rest on "
        "them)? The locked price of w24-moe rests on them (a lock pins the id, not the document)."
    )


def test_calibrate_says_when_it_replaces_a_figure_measured_by_hand(tmp_path: Path) -> None:
    """Finding 6: a per-pass overhead measured with a profiler, written as ``overhead.pass`` 2 ms (measured), was
    replaced by the fit's 2000 µs (derived) without a word: calibrate holds no fact fixed. It now warns."""
    root = _registry(tmp_path)
    with (root / "facts" / "stacks" / f"{STACK}.toml").open("a") as f:
        f.write('\n[overhead.pass]\nvalue = 2.0\nunit = "ms"\nprovenance = "measured"\nsource = "w24-bench"\n'
                'locator = "per-pass overhead (nsys): 2.0 ms"\n')
    fit = invoke("calibrate", "--stack", STACK, "--dry-run", root=root)
    assert fit.exit_code == 0, fit.output
    assert (f"passprice: warning: calibrate {STACK}: overhead.pass is 2 ms (measured) in facts/stacks/{STACK}.toml: "
            "calibrate fits every overhead and share its runs exercise and holds none fixed, so it replaces it with "
            "the fit (derived, a weaker provenance)") in fit.stderr
    assert "share.read is" not in fit.stderr  # a fact the stack did not have is no replacement
