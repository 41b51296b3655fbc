"""Gaps an auditor found in the locks after issue 11, each reproduced on copies of the registry's real files and now
given its verdict, with its text and exit status asserted:

1. the pricing model's digest covers the code every recorded figure flows through (``report.cost_json`` too), so a
   review prices each side with its own code and blames the side whose code moved a price;
2. an edited checkpoint entry does not switch a serving's locks off (``CheckpointChanged``);
4. a review flags a deleted lock, and fails a deleted serving a lock names, as ``check`` does;
5. a price under a lock shows the recorded price beside today's when they differ, and what drifted;
6. ``audit SERVING`` shows the serving's locks' floors and margins; a price or audit resting on a stale derived fact
   says so.

One throwaway git repository (the registry's files and a copy of ``src/passprice``) serves the review tests; the
others work on a copied root through the command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.pins import pricing_model_digest, pricing_modules
from passprice.registry import Root
from passprice.review import diff, diff_markdown

R1 = "r1-qwen7b-h200"
R1_BEST = "r1-qwen7b-h200-best"
R1_STACK = "r1-qwen7b-h200-llamacpp"
H200 = "h200_sxm_141gb"
DEEPSEEK = "deepseek-r1-distill-qwen-7b-q4_k_m"
ENTRY = f"registry/checkpoints/{DEEPSEEK}.toml"
LOCKS = sorted(p.name.removesuffix(".lock.toml") for p in (REPO / "locks").glob("*.lock.toml"))


def run_json(*args: str, root: Path, code: int = 0) -> dict[str, Any]:
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == code, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git checkout of passprice as it is (registry files, locks, ``src/passprice``), committed on ``main``."""
    path = tmp_path_factory.mktemp("gaps") / "checkout"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "locks", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    shutil.copytree(REPO / "src" / "passprice", path / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "_data"))
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "passprice")
    return path


@pytest.fixture
def branch(repo: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A branch of ``repo`` off ``main`` for one test, checked out; ``main`` is checked out again afterwards."""
    git(repo, "checkout", "-q", "-b", request.node.name[:40], "main")
    try:
        yield repo
    finally:
        git(repo, "reset", "-q", "--hard")
        git(repo, "clean", "-q", "-f", "-d")
        git(repo, "checkout", "-q", "main")


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def passprice_with(code: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``passprice ARGS`` run with the code in ``code/src`` (another revision's), in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(code / "src")}
    return subprocess.run([sys.executable, "-c", "from passprice.cli import main; main()", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


# --- 1. the digest covers every module a recorded figure flows through ------------------------------------------------


def test_1_the_digest_starts_from_the_function_that_makes_a_recorded_price() -> None:
    modules = pricing_modules()
    # locks.priced makes every recorded price; report.cost_json builds its object; stacks its expected price;
    # reproduce.side_json prices a review's side.
    for name in ("locks", "report", "stacks", "reproduce", "serving", "servings", "cost", "decode"):
        assert name in modules, name
    for name in ("cli", "tables", "files", "errors", "schema", "glossary", "diff", "sidecode"):
        assert name not in modules, name


def test_1_a_changed_cost_json_is_blamed_on_the_side_whose_code_moved_it(branch: Path) -> None:
    report_py = branch / "src" / "passprice" / "report.py"
    text = report_py.read_text(encoding="utf-8")
    old = '    out["tokens_per_s"] = cost.tokens_per_s\n'
    assert text.count(old) == 1
    report_py.write_text(text.replace(old, '    out["tokens_per_s"] = cost.tokens_per_s * 1.02\n'), encoding="utf-8")
    head = commit(branch, "report: tokens/s 2 % higher")
    assert pricing_model_digest(report_py.parent) != pricing_model_digest()

    # From main's code (the running code here): HEAD is priced by HEAD's own code, and moves every lock.
    d = diff(Root(branch), "main", head)
    assert d.model_changed and d.head_code is not None and not d.head_code.running
    assert d.exit_status == 1
    assert sorted(lock.name for lock in d.stale) == LOCKS
    for lock in d.stale:
        assert lock.unreviewed and lock.inputs == ("pricing model",), lock.name
        assert lock.review() == "price moved, lock not updated (tokens_per_s)"
    assert f"{len(LOCKS)} prices moved unreviewed" in diff_markdown(d).splitlines()[0]
    assert "out of date already on BASE" not in diff_markdown(d)

    # From the branch's code: BASE is priced by BASE's own code, so BASE is not blamed.
    done = passprice_with(branch, "diff", "main", head, cwd=branch)
    assert done.returncode == 1, done.stderr
    assert "already out of date on BASE" not in done.stderr and "out of date already on BASE" not in done.stdout
    assert done.stderr.startswith("passprice: refused: it moves the locked prices of ")
    assert f"{len(LOCKS)} prices moved unreviewed" in done.stdout.splitlines()[1]


# --- 2. an edited checkpoint entry does not switch a serving's locks off ------------------------------------------


def edit_entry(root: Path) -> None:
    entry = root / ENTRY
    text = entry.read_text(encoding="utf-8")
    old = '{ name = "output.weight", type = "Q6_K"'
    assert text.count(old) == 1
    entry.write_text(text.replace(old, '{ name = "output.weight", type = "Q4_K"'), encoding="utf-8")


def test_2_a_changed_checkpoint_refuses_under_the_serving_s_locks(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    edit_entry(root)
    result = invoke("fact", "set", H200, "memory.bandwidth", "--value", "4.8", "--unit", "TB/s", "--provenance",
                    "estimated", "--source", "nvidia-h200-datasheet", "--locator", "a test's estimate", root=root)
    assert result.exit_code == 0, result.output
    message = (
        f"lock {R1} pinned checkpoint {DEEPSEEK} with content 169f62b972aa…, and the entry now holds other content "
        "(8beb681fdb0f…): its content changed since the lock (an edited tensor table or metadata), so the lock's "
        f"floors and price are not this checkpoint's; review the change and re-lock (`passprice lock --update -o "
        f"locks/{R1}.lock.toml`, through review), or price without the lock (--no-lock)"
    )
    for args in (("price", R1), ("best", R1), ("price", "--lock", R1), ("max-batch", R1),
                 ("sweep", R1, "--batches", "1")):
        result = invoke(*args, root=root)
        assert result.exit_code == 1, (args, result.output)
        assert result.stdout == "" and result.stderr == f"passprice: refused: CheckpointChanged: {message}\n", args
    out = run_json("best", R1, root=root, code=1)
    assert out == {
        "refusal": "CheckpointChanged",
        "lock": R1,
        "checkpoint": DEEPSEEK,
        "pinned": "sha256:169f62b972aacb444d1ad4162fa145fad6d0f8de16fb2261fe73146b796baff4",
        "today": "sha256:8beb681fdb0f0b07c44abe1d2ff28e9dc7a71ede841c1ad23488c6ab4aca8470",
        "message": message,
    }
    # --no-lock opts out, as it says; an option that prices another card steps outside the locks, as before.
    assert invoke("price", R1, "--no-lock", root=root).exit_code == 0
    note = run_json("price", R1, "--card", "mi300x", root=root)["lock"]["note"]
    assert note.endswith("are of card h200_sxm_141gb")


def test_2_a_serving_edited_to_another_card_refuses_under_its_locks(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / f"{R1}.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace(f'card = "{H200}"', 'card = "mi300x"'))
    out = run_json("price", R1, root=root, code=1)
    assert out == {
        "refusal": "ServingChanged",
        "lock": R1,
        "serving": R1,
        "what": "card",
        "locked": H200,
        "priced": "mi300x",
        "message": f"lock {R1} locks serving {R1} on card {H200}, and the serving now names card mi300x: the serving "
        "changed since the lock, so the lock's floors and price are not this serving's; review the change and "
        f"re-lock (`passprice lock --update -o locks/{R1}.lock.toml`, through review), or price without the lock "
        "(--no-lock)",
    }


# --- 4. a review flags a deleted lock, and fails a deleted serving a lock names ----------------------------------


def test_4_deleting_a_serving_s_locks_drops_its_floors_and_fails_the_review(branch: Path) -> None:
    # all three: since stacklock 29 the serving's lock made under llamacpp-cuda-2405 floors the card facts the two
    # limit locks floor (and its stack's), so deleting the two alone drops no floor
    for name in (R1, R1_BEST, R1_STACK):
        (branch / "locks" / f"{name}.lock.toml").unlink()
    head = commit(branch, "delete the three r1 locks")
    d = diff(Root(branch), "main", head)
    assert sorted(lock.name for lock in d.removed) == [R1, R1_BEST, R1_STACK] == sorted(
        lock.name for lock in d.dropping)
    assert d.exit_status == 1
    markdown = diff_markdown(d)
    first = markdown.splitlines()[0]
    assert first.startswith("❌ **passprice diff**") and first.endswith(
        "no fact changed; 3 locks affected, 3 removed, 3 dropping floors; 7 locks unaffected"
    )
    section = markdown.split("#### Locks removed\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # by name (left53: registry.lock_order; the lock files' paths sorted put R1 last): R1, R1_BEST, R1_STACK
    assert section[18].startswith(f"- ❌ removed `{R1_STACK}` (`locks/{R1_STACK}.lock.toml`, price lock of serving "
                                  f"`{R1}`, recorded 996.1 tokens/s): its removal drops 21 floors of serving `{R1}`")
    assert section[0] == (
        f"- ❌ removed `{R1}` (`locks/{R1}.lock.toml`, price lock of serving `{R1}`, recorded 996.1 tokens/s): its "
        f"removal drops 8 floors of serving `{R1}`, which is still registered; keep a lock of the serving, or remove "
        "the serving with it"
    )
    assert section[1:9] == [
        f"  - floor on `{path}` dropped: {was} → none (no lock of the serving left floors it)"
        for path, was in (("array", "derived"), ("memory.bandwidth", "published"), ("memory.capacity", "published"),
                          ("on_chip.capacity", "estimated"), ("scale", "estimated"), ("streams.append", "measured"),
                          ("streams.read", "measured"), ("vector", "derived"))
    ]
    assert section[9].startswith(f"- ❌ removed `{R1_BEST}` (`locks/{R1_BEST}.lock.toml`, best lock of serving")
    assert len(section) == 40
    # what `passprice diff` prints on stderr, exit 1 (cli.diff_command: "passprice: refused: " + these, joined by
    # "; "), read off this review instead of a second one in a subprocess (session 33)
    assert d.refusal_reasons() == [
        f"it removes lock {R1}, dropping floors serving {R1} is priced under",
        f"it removes lock {R1_BEST}, dropping floors serving {R1} is priced under",
        f"it removes lock {R1_STACK}, dropping floors serving {R1} is priced under",
    ]


def test_4_a_lock_removed_with_its_serving_or_kept_by_another_is_flagged_not_failed(branch: Path) -> None:
    (branch / "locks" / f"{R1_BEST}.lock.toml").unlink()  # the price lock of r1 keeps the same floors
    (branch / "locks" / "r1-qwen7b-mi300x-int8kv.lock.toml").unlink()
    (branch / "registry" / "servings" / "r1-qwen7b-mi300x-int8kv.toml").unlink()
    head = commit(branch, "retire the MI300X serving with its lock; drop the best lock of r1")
    d = diff(Root(branch), "main", head)
    assert d.exit_status == 0 and d.dropping == ()
    markdown = diff_markdown(d)
    assert markdown.startswith("⚠️ **passprice diff**")
    assert (f"- ⚠️ removed `{R1_BEST}` (`locks/{R1_BEST}.lock.toml`, best lock of serving `{R1}`, recorded "
            "33,339.2 tokens/s)") in markdown
    assert f": no floor dropped, every floor it set is kept by {R1}" in markdown
    assert ("- ⚠️ removed `r1-qwen7b-mi300x-int8kv` (`locks/r1-qwen7b-mi300x-int8kv.lock.toml`, price lock of serving "
            "`r1-qwen7b-mi300x-int8kv`, recorded ") in markdown
    assert ": no floor dropped, serving r1-qwen7b-mi300x-int8kv is deleted with it" in markdown


def test_4_deleting_a_locked_serving_fails_the_review_as_check_does(branch: Path) -> None:
    (branch / "registry" / "servings" / f"{R1}.toml").unlink()
    result = invoke("check", root=branch)
    assert result.exit_code == 1
    assert (f"serving {R1}, which the lock locks, is not registered; restore it or remove the lock") in result.stdout
    head = commit(branch, "delete the r1 serving, keep its locks")
    d = diff(Root(branch), "main", head)
    assert d.exit_status == 1
    assert sorted(lock.name for lock in d.broken) == [R1, R1_BEST, R1_STACK]
    for lock in d.broken:
        assert lock.floors() == (
            f"BROKEN: serving {R1}, which the lock locks, is not registered on HEAD; restore it or remove the lock"
        )
        assert lock.review() == "its serving is deleted"
    assert diff_markdown(d).startswith("❌ **passprice diff**")
    # `passprice diff`'s stderr line, exit 1, read off this review (no second one in a subprocess; session 33)
    assert d.refusal_reasons() == [f"it deletes serving {R1}, which locks {R1}, {R1_BEST}, {R1_STACK} lock"]


# --- 5. a price under a lock that is not the locked price says so -------------------------------------------------


def set_bandwidth(root: Path, value: str, provenance: str = "published") -> None:
    result = invoke("fact", "set", H200, "memory.bandwidth", "--value", value, "--unit", "TB/s", "--provenance",
                    provenance, "--source", "nvidia-h200-product-page", "--locator", "a test's figure", root=root)
    assert result.exit_code == 0, result.output


def test_5_a_moved_price_is_shown_beside_the_recorded_one_with_what_drifted(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    head = "  lock          under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best (locks/" \
        "r1-qwen7b-h200-best.lock.toml), r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml): "
    assert invoke("price", R1, root=root).stdout.endswith(
        f"\n{head}floors hold, and the price is the one r1-qwen7b-h200 and r1-qwen7b-h200-llamacpp record\n")
    assert run_json("price", R1, root=root)["lock"]["moved"] == []

    # A serving change moves the price; the floors still hold, and the lock line says this is not the locked price.
    serving = root / "registry" / "servings" / f"{R1}.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace("position = 2048", "position = 3072"))
    result = invoke("price", R1, root=root)
    assert result.exit_code == 0
    assert result.stdout.endswith(
        f"\n{head}floors hold, but the price is NOT the one {R1} and {R1_STACK} record (below)\n"
        f"                recorded 996.1 tokens/s at batch 1 by lock {R1}; today 982.3 tokens/s at batch 1 (-1.39 %, "
        "first moved: sequence_bytes) — not the locked price\n"
        "                serving differs from the locked one: contexts: share 1.0, position 2048.0, limit 4096 → share "
        "1.0, position 3072.0, limit 4096\n"
        # the stack lock records the same limit, so moves with it; its stack facts are not read without --stack
        f"                recorded 996.1 tokens/s at batch 1 by lock {R1_STACK}; today 982.3 tokens/s at batch 1 "
        "(-1.39 %, first moved: sequence_bytes) — not the locked price\n"
        "                serving differs from the locked one: contexts: share 1.0, position 2048.0, limit 4096 → share "
        "1.0, position 3072.0, limit 4096\n"
        f"                lock {R1_STACK} was made under stack llamacpp-cuda-2405: this is the card's limit, its stack "
        "facts not read (none is judged here); `--stack llamacpp-cuda-2405` prices the expected price it locks\n"
    )
    # A fact change that keeps the floors (published → published) likewise, in text and JSON, for best too.
    serving.write_text(serving.read_text(encoding="utf-8").replace("position = 3072", "position = 2048"))
    set_bandwidth(root, "4.75")
    out = run_json("price", R1, root=root)
    assert out["tokens_per_s"] == pytest.approx(996.0966124437687 * 4.75 / 4.8, rel=1e-12)
    differences = [m.pop("differences") for m in out["lock"]["moved"]]  # the same drift as {field, locked, now}
    assert [[(d["field"], d["locked"]["value"], d["now"]["value"]) for d in x] for x in differences] == [
        [("memory.bandwidth", 4.8, 4.75)]] * 2
    assert out["lock"]["moved"] == [{
        "lock": lock,
        "recorded_tokens_per_s": 996.0966124437687,
        "tokens_per_s": out["tokens_per_s"],
        "recorded_batch": 1,
        "batch": 1,
        "first_moved": "memory_s",
        "drifted": ["memory.bandwidth: 4.8 TB/s (published) → 4.75 TB/s (published)"],
        "serving": [],
    } for lock in (R1, R1_STACK)]
    best = run_json("best", R1, root=root)["lock"]["moved"]
    assert [m["lock"] for m in best] == [R1_BEST] and best[0]["drifted"] == out["lock"]["moved"][0]["drifted"]
    lines = invoke("best", R1, root=root).stdout.splitlines()
    assert lines[-3].endswith(f"floors hold, but the price is NOT the one {R1_BEST} records (below)")
    assert lines[-1] == "                drifted since the lock: memory.bandwidth: 4.8 TB/s (published) → 4.75 TB/s " \
        "(published)"


# --- 6. audit SERVING shows its locks' floors; a stale derived fact is named ---------------------------------------


def test_6_audit_of_a_serving_shows_the_floors_of_its_locks(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    out = run_json("audit", R1, root=root)
    assert out["title"] == (
        f"audit of {R1} (today's facts): {DEEPSEEK} on {H200}, floors of locks {R1}, {R1_BEST}, {R1_STACK}"
    )
    floors = {f["path"]: (f["floor"], f["margin"]) for f in out["facts"]}
    assert floors == {
        "memory.bandwidth": ("published", 0), "memory.capacity": ("published", 0), "streams.read": ("measured", 0),
        "streams.append": ("measured", 0), "array": ("derived", 0), "vector": ("derived", 0),
        "scale": ("estimated", 0), "on_chip.capacity": ("estimated", 0),
    }
    text = invoke("audit", R1, root=root).stdout.splitlines()
    # left32: and the re-derived elasticity of a fact other rows derive from
    assert text[3].split() == ["fact", "value", "provenance", "floor", "margin", "elasticity", "re-derived"]
    assert text[5].split() == ["*", "memory.bandwidth", "4.8", "TB/s", "published", "published", "at", "floor",
                               "+1.000", "+0.000"]
    # A weaker fact (below the locks' floor) shows its margin below the floor.
    set_bandwidth(root, "4.8", "estimated")
    row = {f["path"]: f for f in run_json("audit", R1, root=root)["facts"]}["memory.bandwidth"]
    assert (row["floor"], row["margin"]) == ("published", -3)
    # Another card by option: no lock of the serving applies, so no floors.
    out = run_json("audit", R1, "--card", "mi300x", root=root)
    assert all(f["floor"] is None for f in out["facts"]) and "floors of" not in out["title"]


def test_6_a_price_and_an_audit_resting_on_a_stale_derived_fact_say_so(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    assert run_json("price", R1, root=root)["stale"] == []
    set_bandwidth(root, "5.2")
    line = (
        "streams.read, streams.append are stale derived facts: input memory.bandwidth 4.8 TB/s when derived, 5.2 TB/s "
        "now — priced on their written values (streams.read 0.9333, recomputed 0.8615; streams.append 0.8646, "
        "recomputed 0.7981); `passprice check` names each"
    )
    text = invoke("price", R1, root=root).stdout
    assert f"\n  stale         {line}\n" in text
    out = run_json("price", R1, root=root)
    assert [(s["path"], s["kind"], s["expected"], s["value"]) for s in out["stale"]] == [
        ("streams.read", "stale", "0.8615", "0.9333"), ("streams.append", "stale", "0.7981", "0.8646")
    ]
    audit = invoke("audit", R1, root=root).stdout
    assert f"\nSTALE: {line}\n" in audit
    derivation = next(x for x in audit.splitlines() if x.startswith("  streams.read: dot / bandwidth"))
    assert derivation.endswith(
        "bandwidth = the fact memory.bandwidth, 4.8 TB/s when derived — STALE: streams.read is stale: its input "
        "bandwidth = memory.bandwidth: 4.8 TB/s when derived, 5.2 TB/s now; recomputed from today's inputs it is "
        "0.8615, not 0.9333"
    )
    rows = {f["path"]: f for f in run_json("audit", R1, root=root)["facts"]}
    assert rows["streams.read"]["stale"].startswith("streams.read is stale: its input bandwidth = memory.bandwidth")
    assert rows["memory.bandwidth"]["stale"] is None
    markdown = invoke("audit", R1, "--format", "markdown", root=root).stdout
    # the last line of the audit's own comment; the notes of the cited documents and the checkpoint follow it
    # (walkthrough 25)
    assert any(x.startswith(
        "⚠️ **stale**: streams.read, streams.append are stale derived facts: input memory.bandwidth 4.8 TB/s when "
        "derived, 5.2 TB/s now"
    ) for x in markdown.splitlines())


# --- 7. a second auditor's findings: what a review let through ----------------------------------------------------

STACK = "llamacpp-cuda-2405"
RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


def _edit_run(root: Path, old: str, new: str) -> None:
    path = root / RUNS
    text = path.read_text(encoding="utf-8")
    assert text.count(f"tokens_per_s = {old}\n") == 1
    path.write_text(text.replace(f"tokens_per_s = {old}\n", f"tokens_per_s = {new}\n"), encoding="utf-8")


def test_7_a_refit_that_moves_a_stack_lock_s_expected_price_fails_the_review(branch: Path) -> None:
    """A lock made under a serving stack records the expected price beside the limit; a measured run edited and the
    stack re-fitted moved it 237.4 → 261.5 tokens/s while the limit stayed 996.1, and the review said "records
    HEAD's price" with exit 0 and the price under the lock "holds"."""
    locked = invoke("lock", R1, "--stack", STACK, "-o", str(branch / "locks/r1-stack.lock.toml"), root=branch)
    assert locked.exit_code == 0, locked.output
    base = commit(branch, "lock r1 under the stack")
    _edit_run(branch, "145.55", "245.55")
    refit = invoke("calibrate", "--stack", STACK, root=branch)
    assert refit.exit_code == 0, refit.output
    head = commit(branch, "a run edited, the stack re-fitted")
    d = diff(Root(branch), base, head)
    lock = {x.name: x for x in d.locks}["r1-stack"]
    assert lock.moved is not None and lock.moved.startswith("expected.") and lock.stale == lock.moved
    assert lock.unreviewed and d.exit_status == 1
    assert lock.before.tokens_per_s == lock.after.tokens_per_s  # the limit did not move
    priced = run_json("price", R1, "--stack", STACK, root=branch)
    moved = next(m for m in priced["lock"]["moved"] if m["lock"] == "r1-stack")
    assert round(moved["recorded_tokens_per_s"], 1) == 237.4 and round(moved["tokens_per_s"], 1) == 261.5
    assert moved["first_moved"].startswith("expected.")


def test_7_a_checkpoint_edit_that_leaves_the_price_fails_the_review(branch: Path) -> None:
    """The locks pin the checkpoint's content, not only its price: renaming the model in its entry moves no figure,
    but price refuses CheckpointChanged and check fails the lock; the review said "records HEAD's price", exit 0."""
    entry = branch / ENTRY
    text = entry.read_text(encoding="utf-8")
    assert text.count('value = "DeepSeek R1 Distill Qwen 7B"') == 1
    entry.write_text(text.replace('value = "DeepSeek R1 Distill Qwen 7B"', 'value = "Renamed"'), encoding="utf-8")
    head = commit(branch, "the model renamed in its entry")
    d = diff(Root(branch), "main", head)
    r1 = {x.name: x for x in d.locks}[R1]
    assert r1.checkpoint_changed and r1 in d.broken and not r1.moved
    assert r1.review() == "its checkpoint's content changed from the pinned one: re-lock it through review"
    assert d.exit_status == 1


def test_7_a_review_fails_where_check_fails_on_head(branch: Path) -> None:
    """A measured run edited without re-fitting leaves the stack's fitted facts stale (check fails with 9 of them);
    an added checkpoint entry whose name is not its file's does not read (check exits 2). The review passed both
    with exit 0 ("no lock affected"; "added")."""
    _edit_run(branch, "145.55", "245.55")
    head = commit(branch, "a run edited, no re-fit")
    d = diff(Root(branch), "main", head)
    assert d.exit_status == 1 and d.check_beyond and all("llamacpp-cuda-2405.toml" in p for p in d.check_beyond)
    assert len(d.check_beyond) == 1 and "HEAD fails passprice check (1 problem); 9 locks unaffected" in d.summary()
    # `passprice diff` exits 1 refusing it ("passprice: refused: HEAD fails passprice check …"): read off this review
    assert any(r.startswith("HEAD fails passprice check") for r in d.refusal_reasons()), d.refusal_reasons()
    git(branch, "reset", "-q", "--hard", "main")
    text = (branch / "registry/checkpoints/gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")
    assert text.count('name = "gemma3-270m-q4_k_m"') == 1
    (branch / "registry/checkpoints/aaa.toml").write_text(
        text.replace('name = "gemma3-270m-q4_k_m"', 'name = "x"'), encoding="utf-8")
    head = commit(branch, "an entry named for another file")
    d = diff(Root(branch), "main", head)
    assert d.exit_status == 2 and any("aaa.toml" in p and "entry.name" in p for p in d.head_unreadable)
    # `passprice diff` exits 2, a "passprice: error: " line each of these: read off this review (session 33)
    assert any(line.startswith("on HEAD: registry/checkpoints/aaa.toml") for line in d.head_error_lines())


def test_a_serving_field_that_changed_since_the_lock_is_shown_as_its_file_writes_it(tmp_path: Path) -> None:
    """The newcomer walkthrough read `host_memory: False → True` (Python's words) where the serving file says
    `host_memory = true`."""
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "r1-qwen7b-h200.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace("host_memory = false", "host_memory = true"),
                       encoding="utf-8")
    result = invoke("reproduce", "r1-qwen7b-h200", root=root)
    assert "    serving        host_memory: false → true\n" in result.stdout
