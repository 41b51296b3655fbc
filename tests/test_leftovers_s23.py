"""Leftovers of session 23 (issues 13 and 16): what earlier sessions' notes left open.

1. ``passprice diff`` of a change moving a fact that derived facts (or a stack's fit) rest on, without recomputing
   them: the lock's move was shown only as priced on the stale derived values (the H200's bandwidth 4.8 -> 4.89 TB/s:
   +1.875 %, where the recomputed stream shares give +0.008243 %). The lock is now priced a second time on HEAD with
   the derived facts recomputed and the stack re-fitted (``recomputed``, ``recomputed_relative_change``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, invoke
from passprice.tables import markdown_code, markdown_table, markdown_text
from test_diff import commit_all, git
from test_newcomer_24 import MOE, ROUTING, STACK, _registry
from test_slip_34 import renderings  # one in-process review rendered per format

H200 = "facts/cards/h200_sxm_141gb.toml"


@pytest.fixture(scope="module")
def bandwidth_moved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's registry committed on ``main``, then the H200's memory.bandwidth raised 4.8 -> 4.89 TB/s in
    the work tree, its stream shares (derived from it) left as they were."""
    path = tmp_path_factory.mktemp("s23") / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    card = path / H200
    text = card.read_text(encoding="utf-8")
    old = "[memory.bandwidth]\nvalue = 4.8\n"
    assert old in text
    card.write_text(text.replace(old, "[memory.bandwidth]\nvalue = 4.89\n"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def moved_review(bandwidth_moved: Path) -> dict[str, Any]:
    """``passprice diff`` of :func:`bandwidth_moved` (BASE and HEAD as the command defaults them: ``main`` and the
    work tree), made once for the two tests that read it: its exit ``status``, ``json`` (parsed), ``text`` and
    ``markdown``, and the H200's card bytes before it (``card``)."""
    card = (bandwidth_moved / H200).read_bytes()
    status, (as_json, text, markdown) = renderings(bandwidth_moved, "json", "text", "markdown", base=None, head=None)
    return {"status": status, "json": json.loads(as_json), "text": text, "markdown": markdown, "card": card}


def test_1_a_lock_on_stale_shares_is_priced_again_on_recomputed_ones(
    bandwidth_moved: Path, moved_review: dict[str, Any]
) -> None:
    path = bandwidth_moved
    assert moved_review["status"] == 1  # the stale shares still fail the review, as check fails them
    locks = {x["name"]: x for x in moved_review["json"]["locks"]}
    r1 = locks["r1-qwen7b-h200"]
    assert r1["relative_change"] == pytest.approx(4.89 / 4.8 - 1, rel=1e-9)  # +1.875 % on the stale shares
    # Recomputed: read 4.48 TB/s / 4.89 = 0.9162, append 4.15 / 4.89 = 0.8487 (4 digits); the memory-bound pass reads
    # at bandwidth x share, so tokens/s moves by 4.89 x 0.9162 / (4.8 x 0.9333) - 1 on the read-bound terms.
    assert r1["recomputed_relative_change"] == pytest.approx(8.2426e-05, rel=1e-3)
    assert r1["recomputed"]["tokens_per_s"] == pytest.approx(996.1787170959766, rel=1e-12)
    assert r1["recomputed_expected_relative_change"] is None  # no stack
    assert [(u["path"], u["expected"]) for u in r1["unsound"]] == [("streams.read", "0.9162"),
                                                                  ("streams.append", "0.8487")]
    # every lock resting on the stale shares gets one; the others none
    assert {n for n, x in locks.items() if x["recomputed"] is not None} == {
        "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200-best", "r1-qwen7b-h200", "r1-qwen7b-h200-llamacpp"}
    # the lock made under the llamacpp stack records the same limit, so its limit is recomputed to the same figure; its
    # expected price moves less than the limit (+1.99e-05 against +8.24e-05): the stack's fixed costs do not move
    stack = locks["r1-qwen7b-h200-llamacpp"]
    assert stack["recomputed"]["tokens_per_s"] == r1["recomputed"]["tokens_per_s"]
    assert 0 < stack["recomputed_expected_relative_change"] < r1["recomputed_relative_change"]
    assert (path / H200).read_bytes() == moved_review["card"]  # the work tree's card is not recomputed in place
    text = moved_review["text"]
    assert ("    recomputed  tokens/s 996.1 → 996.2 (+0.008243 %), as HEAD wrote it +1.875 %, once streams.read "
            "(0.9162), streams.append (0.8487) follow from their inputs (recomputed as passprice would write them)\n"
            ) in text
    markdown = moved_review["markdown"]
    assert ("- `r1-qwen7b-h200`: recomputed tokens/s 996.1 → 996.2 (+0.008243 %), as HEAD wrote it +1.875 %, once "
            "streams.read (0.9162), streams.append (0.8487) follow from their inputs") in markdown


def _stack_locked(path: Path) -> Path:
    """A registry with stack vllm-w24 calibrated, serving w24-moe (the mixture of experts, batch 64) and its lock under
    the stack."""
    root = _registry(path)
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    made = invoke("new-serving", "w24-moe", "--checkpoint", MOE, "--card", "h200_sxm_141gb", "--batch", "64",
                  "--routing", ROUTING, "--description", "s23", root=root)
    assert made.exit_code == 0, made.output
    lock = invoke("lock", "w24-moe", "--stack", STACK, "-o", str(root / "locks" / "w24-moe.lock.toml"), root=root)
    assert lock.exit_code == 0, lock.output
    return root


def _moved_routing(text: str) -> str:
    """The routing record with its hot set 58 -> 65 of 128 (slip round 35's change)."""
    for old, new in (("value = 0.453125", "value = 0.5078125"), ("value = 58,", "value = 65,"),
                     ("coverage 58/128 (45%)", "coverage 65/128 (51%)"),
                     ("coverage, 58 of 128", "coverage, 65 of 128")):
        assert old in text
        text = text.replace(old, new)
    return text


def test_1_a_lock_under_a_stack_whose_fit_does_not_follow_is_priced_again_re_fitted(tmp_path: Path) -> None:
    root = _stack_locked(tmp_path / "made")
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(root, base)
    shutil.copytree(root, head)
    routing = head / "facts" / "routing" / f"{ROUTING}.toml"
    routing.write_text(_moved_routing(routing.read_text()))
    stack_before = (head / "facts" / "stacks" / f"{STACK}.toml").read_bytes()
    _, (text, as_json) = renderings(head, "text", "json", base=str(base), head=str(head))  # one review
    assert ("    recomputed  tokens/s 10,354.4 → 10,069.4 (-2.752 %), as HEAD wrote it -2.752 %; expected 6,589.8 → "
            "6,609.2 (+0.2939 %), once stack.overhead.pass, stack.share.read, stack.share.append follow from their "
            "inputs (recomputed and the stack re-fitted as passprice would write them; the re-fit moves overhead.pass "
            "1950 µs → 1988 µs, share.read 0.8564 → 0.912, share.append 0.7446 → 0.7517)\n") in text
    out = json.loads(as_json)
    [moe] = [x for x in out["locks"] if x["name"] == "w24-moe"]
    assert moe["relative_change"] == pytest.approx(-0.027524642527911758, rel=1e-9)  # the limit: no stack fact
    # On the stale fit the expected price moved 6,589.8 -> 6,454.1 (-2.06 %); re-fitted to the same runs (the hot set
    # read in the runs' prices too), +0.2939 %: what HEAD's expected price is once `calibrate --stack` is run.
    assert moe["after"]["expected"]["tokens_per_s"] == pytest.approx(6454.066765028163, rel=1e-9)
    assert moe["recomputed"]["expected"]["tokens_per_s"] == pytest.approx(6609.185492736845, rel=1e-9)
    assert moe["recomputed_expected_relative_change"] == pytest.approx(0.002938812297019311, rel=1e-6)
    assert moe["recomputed_relative_change"] == pytest.approx(moe["relative_change"], rel=1e-12)  # the limit alike
    assert (head / "facts" / "stacks" / f"{STACK}.toml").read_bytes() == stack_before  # HEAD's stack as it was
    # The same figure as re-fitting HEAD by hand and pricing it there.
    assert invoke("calibrate", "--stack", STACK, root=head).exit_code == 0
    priced = invoke("price", "w24-moe", "--stack", STACK, "--no-lock", "--json", root=head)
    assert json.loads(priced.stdout)["expected"]["tokens_per_s"] == moe["recomputed"]["expected"]["tokens_per_s"]
    again = json.loads(invoke("diff", str(base), str(head), "--format", "json", root=head).stdout)
    [moe] = [x for x in again["locks"] if x["name"] == "w24-moe"]
    assert moe["unsound"] == [] and moe["recomputed"] is None  # re-fitted: nothing left to price again


# 2. Markdown: a value holding a line break or another control character never breaks a table row or a line.


def test_2_every_markdown_table_cell_is_kept_on_its_row() -> None:
    # Before: markdown_table escaped "|" and "\n" only; "\r" (a row's end to some renderers), a vertical tab or an
    # escape sequence in a cell built without markdown_text reached the comment as they were.
    table = markdown_table(["a", "b\nc"], [["nl\nx", "cr\ry\x0bz\x1b[31m|w"]])
    assert table == ("| a | b c |\n| --- | --- |\n| nl x | cr\ufffdy\ufffdz\ufffd[31m\\|w |")
    assert markdown_text("nl\nx\x07") == "nl x\ufffd" and markdown_code("nl\nx") == "`nl x`"


def test_2_a_lock_file_named_with_a_newline_keeps_the_review_on_its_lines(bandwidth_moved: Path) -> None:
    path = bandwidth_moved
    odd = path / "locks" / "nl\nx.lock.toml"
    odd.write_bytes((path / "locks" / "r1-qwen7b-h200.lock.toml").read_bytes())
    try:
        result = invoke("diff", "--format", "markdown", root=path)
    finally:
        odd.unlink()
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert not any(line == "x.lock.toml`" or line.startswith("x.lock") for line in lines)
    assert "- added `r1-qwen7b-h200` (`locks/nl x.lock.toml`, price" in result.stdout
    [err] = result.stderr.splitlines()  # the refusal is one line, the name quoted as the shell would need it
    assert "passprice lock --update -o 'locks/nl\\nx.lock.toml'" in err
    table = [line for line in lines if line.startswith("| `")]
    assert table and all(line.endswith("|") for line in table)


# 3. price --json: a lock's differences as {field, locked, now}, not only as lines of text.


def test_3_price_json_gives_the_locks_differences_structure(bandwidth_moved: Path) -> None:
    path = bandwidth_moved
    serving = path / "registry" / "servings" / "r1-qwen7b-h200.toml"
    text = serving.read_text(encoding="utf-8")
    assert "\nbatch = 1\n" in text
    serving.write_text(text.replace("\nbatch = 1\n", "\nbatch = 2\n"), encoding="utf-8")
    try:
        result = invoke("price", "r1-qwen7b-h200", "--json", root=path)
    finally:
        serving.write_text(text, encoding="utf-8")
    assert result.exit_code == 0, result.output
    # the serving's plain lock and the one made under the llamacpp stack (it records the same limit) both moved
    moved, under_stack = json.loads(result.stdout)["lock"]["moved"]
    assert (moved["lock"], under_stack["lock"]) == ("r1-qwen7b-h200", "r1-qwen7b-h200-llamacpp")
    assert under_stack["differences"] == moved["differences"]
    # the lines of text stay, for people
    assert moved["drifted"] == ["memory.bandwidth: 4.8 TB/s (published) → 4.89 TB/s (published)"]
    assert moved["serving"] == ["batch: 1 → 2"]
    bandwidth, batch = moved["differences"]
    assert bandwidth["field"] == "memory.bandwidth"
    assert {k: bandwidth["locked"][k] for k in ("value", "unit", "base_value", "provenance")} == {
        "value": 4.8, "unit": "TB/s", "base_value": 4.8e12, "provenance": "published"}
    assert {k: bandwidth["now"][k] for k in ("value", "unit", "base_value", "provenance")} == {
        "value": 4.89, "unit": "TB/s", "base_value": 4.89e12, "provenance": "published"}
    assert bandwidth["locked"]["digest"] != bandwidth["now"]["digest"]
    assert batch == {"field": "serving.batch", "locked": 1, "now": 2}


# 5. A full disk on standard error (2>/dev/full) or on both: exit 2, never a traceback, never a lost failure.

_FULL_CHILD = (
    "import sys, traceback\n"
    "log = open(sys.argv.pop(1), 'w')\n"
    "def hook(*a):\n"
    "    log.write('TRACEBACK ' + ''.join(traceback.format_exception(*a))); log.flush()\n"
    "sys.excepthook = hook\n"
    "sys.unraisablehook = lambda u: (log.write(f'UNRAISABLE {u.exc_value!r}'), log.flush())\n"
    "from passprice.cli import main; sys.argv[0] = 'passprice'; main()\n"
)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(("args", "status", "full_status"), [
    (["cards"], 0, 0),  # nothing for standard error: nothing lost
    (["price", "nosuch"], 2, 2),  # bad input stays 2
    (["price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h200_sxm_141gb", "--batch", "100000000"], 1, 2),
    (["init", "--examples", "sub"], 0, 2),  # its warning (inside a git checkout) cannot be written
    (["diff"], 1, 2),  # a failing review's refusal line: still a failure, never 0
])
def test_5_a_full_disk_on_standard_error_is_exit_2_and_no_traceback(
    bandwidth_moved: Path, tmp_path: Path, args: list[str], status: int, full_status: int
) -> None:
    import subprocess
    import sys

    log = tmp_path / "hooks.log"
    for stderr_full in (False, True):
        shutil.rmtree(bandwidth_moved / "sub", ignore_errors=True)
        with open("/dev/full", "w") as full, open(tmp_path / "err", "w") as err:
            result = subprocess.run(
                [sys.executable, "-c", _FULL_CHILD, str(log), "--root", str(bandwidth_moved), *args],
                stdout=subprocess.DEVNULL, stderr=full if stderr_full else err, cwd=bandwidth_moved, timeout=120)
        shutil.rmtree(bandwidth_moved / "sub", ignore_errors=True)
        assert log.read_text() == ""  # no exception reached the interpreter's hooks
        assert result.returncode == (full_status if stderr_full else status), args
        if not stderr_full:
            lines = (tmp_path / "err").read_text().splitlines()
            assert all(line.startswith("passprice: ") for line in lines) and (status == 0) == (
                not lines or args[0] == "init")
    # both full: 2, whatever the command's own status
    with open("/dev/full", "w") as full:
        both = subprocess.run([sys.executable, "-c", _FULL_CHILD, str(log), "--root", str(bandwidth_moved), *args],
                              stdout=full, stderr=full, cwd=bandwidth_moved, timeout=120)
    shutil.rmtree(bandwidth_moved / "sub", ignore_errors=True)
    assert log.read_text() == "" and both.returncode == 2


# 4. A derivation input that cancels out of its formula (the H200's scale = lanes * (vector / (lanes * lane_rate))).

LANES = ('derivation.inputs.lanes = { value = 16896, unit = "1", locator = "Table 3, H100 SXM5 column: 16,896 FP32 '
         "cores (p. 18: '128 FP32 CUDA Cores per SM, 16896 FP32 CUDA Cores per GPU')\" }")


def test_4_derivation_powers_cancel_only_as_factors() -> None:
    from passprice.derivations import Derivation

    def inputs(**values: float) -> dict[str, dict[str, object]]:
        return {name: {"value": v, "unit": "1"} for name, v in values.items()}

    def of(formula: str, **values: float) -> tuple[tuple[str, tuple[int, ...]], ...]:
        return Derivation.from_entry({"formula": formula, "inputs": inputs(**values)}).cancelled()

    assert of("lanes * (vector / (lanes * rate))", lanes=16896, vector=3, rate=1) == (("lanes", (1, -1)),)
    assert of("a * a / (a * a)", a=2) == (("a", (1, 1, -1, -1)),)
    assert of("min(a, b) / a", a=2, b=3) == ()  # a min: no power to cancel
    assert of("(a + b) / a", a=2, b=3) == ()
    assert of("a / b", a=2, b=3) == () and of("a * a", a=2) == ()


def test_4_audit_and_review_say_an_input_cancels(tmp_path: Path) -> None:
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    out = json.loads(invoke("audit", "r1-qwen7b-h200", "--json", root=path).stdout)
    assert [(f["path"], f["cancelled"]) for f in out["facts"] if f["cancelled"]] == [
        ("scale", [{"input": "lanes", "powers": [1, -1]}])]
    text = invoke("audit", "r1-qwen7b-h200", root=path).stdout
    [line] = [x for x in text.splitlines() if x.startswith("  scale: lanes * ")]
    assert line.endswith(" — lanes cancels (+1, −1): its figure does not move scale")
    markdown = invoke("audit", "r1-qwen7b-h200", "--format", "markdown", root=path).stdout
    assert "— lanes cancels (+1, −1): its figure does not move scale" in markdown
    # The review of lanes 16896 -> 20000: scale stays 33.5 Tcycle/s; it said "derivation changed", +0 %, and no why.
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    card = path / H200
    text = card.read_text(encoding="utf-8")
    assert LANES in text
    card.write_text(text.replace(LANES, LANES.replace("value = 16896", "value = 20000")), encoding="utf-8")
    _, (review, as_json) = renderings(path, "text", "json", base=None, head=None)  # one review
    [line] = [x for x in review.splitlines() if x.strip().startswith("derivation: ") and "lanes = [16896 → 20000]" in x]
    assert line.endswith(" — lanes cancels (+1, −1): its figure does not move scale")
    facts = [c for f in json.loads(as_json)["files"] for c in f["facts"]]
    assert [(c["path"], c["cancelled"]) for c in facts] == [("scale", [{"input": "lanes", "powers": [1, -1]}])]


# Then: reproduce --json's serving_changed (free text) as {field, locked, now}.


def test_reproduce_json_gives_serving_changes_structure(bandwidth_moved: Path) -> None:
    path = bandwidth_moved
    serving = path / "registry" / "servings" / "r1-qwen7b-h200.toml"
    text = serving.read_text(encoding="utf-8")
    serving.write_text(text.replace("\nbatch = 1\n", "\nbatch = 2\n").replace('flush = "every-pass"',
                                                                             'flush = "every:4"'), encoding="utf-8")
    try:
        out = json.loads(invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", "--json", root=path).stdout)
        serving.unlink()
        gone = json.loads(invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", "--json", root=path).stdout)
    finally:
        serving.write_text(text, encoding="utf-8")
    assert out["serving_changed"] == ["batch: 1 → 2", "flush: every-pass → every:4"]
    assert out["serving_differences"] == [{"field": "serving.batch", "locked": 1, "now": 2},
                                          {"field": "serving.flush", "locked": "every-pass", "now": "every:4"}]
    assert gone["serving_differences"] == [{"field": "registered", "locked": "r1-qwen7b-h200", "now": None}]
    assert gone["serving_changed"][0].startswith("serving r1-qwen7b-h200 is no longer registered")


# Then: the review's servings no lock pins, on stale shares, are priced again recomputed too.


def test_unlocked_servings_on_stale_shares_are_priced_again_recomputed(moved_review: dict[str, Any]) -> None:
    out = moved_review["json"]
    moves = {m["serving"]: m for m in out["unlocked"]}
    gpt = moves["gpt-oss-20b-h200"]
    assert gpt["relative_change"] == pytest.approx(0.01875, rel=1e-9)
    assert gpt["recomputed_relative_change"] == pytest.approx(6.775e-05, rel=1e-3)
    assert all(m["recomputed"] is not None for m in moves.values() if m["unsound"])
    text = moved_review["text"]
    # 9,603.7 → 9,604.4 before session 39 (window55: a windowed layer reads window − 1 cached positions)
    assert ("    recomputed  tokens/s 9,604.3 → 9,604.9 (+0.006775 %), as HEAD wrote it +1.875 %, once streams.read, "
            "streams.append follow from their inputs (recomputed as passprice would write them)\n") in text


# Then: a stack's fit made stale by its runs (a measured figure moved, the stack not re-fitted).


def test_a_lock_on_a_stack_whose_runs_moved_is_priced_again_re_fitted(tmp_path: Path) -> None:
    root = _stack_locked(tmp_path / "made")
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(root, base)
    shutil.copytree(root, head)
    runs = head / "registry" / "measurements" / "w24.toml"
    text = runs.read_text()
    for old, new in (("tokens_per_s = 6641.7", "tokens_per_s = 6900.0"), ("batch 64: 6641.7 tok/s",
                                                                           "batch 64: 6900.0 tok/s")):
        assert old in text
        text = text.replace(old, new)
    runs.write_text(text)
    out = json.loads(invoke("diff", str(base), str(head), "--format", "json", root=head).stdout)
    [moe] = [x for x in out["locks"] if x["name"] == "w24-moe"]
    # every fitted fact of the stack is named stale (walkthrough 27: the review named 1 of 8)
    fitted = ["overhead.pass", "overhead.layer", "share.read", "share.append", "share.array", "share.vector",
              "share.scale", "terms.serial"]
    # (session 24: each with its re-fitted value, test_leftovers_s24)
    assert [(u["path"], u["kind"]) for u in moe["unsound"]] == [(f"stack.{name}", "stale") for name in fitted]
    assert "re-fitted from today's runs: overhead.pass 1911 µs" in moe["unsound"][0]["message"]
    # walkthrough 82: the review's own `unsound` names them too, as the stack's file does (it read [] beside
    # `resting_on_unsound` ["w24-moe"], so a program reading `unsound` saw no fact that does not follow)
    assert out["unsound"] == [f"{STACK}:{name}" for name in fitted] and out["resting_on_unsound"] == ["w24-moe"]
    # the stale fit: the expected price did not move (no fact it reads moved); re-fitted to the moved run, +3.382 %
    assert moe["after"]["expected"]["tokens_per_s"] == moe["before"]["expected"]["tokens_per_s"]
    assert moe["recomputed_expected_relative_change"] == pytest.approx(0.03381708405994921, rel=1e-6)
    assert invoke("calibrate", "--stack", STACK, root=head).exit_code == 0
    priced = json.loads(invoke("price", "w24-moe", "--stack", STACK, "--no-lock", "--json", root=head).stdout)
    assert priced["expected"]["tokens_per_s"] == moe["recomputed"]["expected"]["tokens_per_s"]
