"""A new user's findings comparing prices with serving stacks (README only, a non-editable install, a registry
``passprice init --examples`` wrote), each rebuilt here in a copy of such a registry.

1. A measured run entered 10x wrong (its quote a llama-bench row, no unit) passed ``check``: a run's figure is now
   held to the figures its found quote states, rounded as the run writes it (``sources.run_quote_states``).
2. ``price --stack vllm`` said "not found" with no word of how to add a stack.
3. ``validate --stack S`` pooled the runs the stack was fitted on with one it never saw in one mean error.
4. README showed no measurement file, and its prose put ``source`` in each run: a whole example, which validates.
5. ``tokens_per_s = "98.42 tok/s"`` read "is not of type 'number'".
6. ``reproduce`` said 9 drifted facts whose values were the pinned ones on one line of 1,344 characters; README's
   "drift" (a locked price that moved) was not ``explain drift``'s (a pinned fact held otherwise).
7. ``audit --source passprice-stack-calibration`` showed a stack lock's limit, not the expected price its stack facts
   carry.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from passprice.sources import run_quote_states

README = Path(__file__).resolve().parents[1] / "README.md"
MINE = "registry/measurements/my-runs.toml"
RUN = "mine.h100_pcie_80gb.8b-q4km.tg512"
ROW = ("| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 "
       "± 0.80 |")


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASSPRICE_NO_CACHE": "1"}
    return subprocess.run(["passprice", *args], cwd=root, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The registry ``init --examples`` writes, as the new user had it."""
    where = tmp_path_factory.mktemp("fix54w")
    done = subprocess.run(["passprice", "init", "--examples", "reg"], cwd=where, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return where / "reg"


@pytest.fixture
def root(made: Path, tmp_path: Path) -> Path:
    """A copy of :func:`made` to change."""
    return Path(shutil.copytree(made, tmp_path / "reg", symlinks=True))


def _example() -> str:
    """README's example measurement file (the section on measured runs)."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"```toml\n(#:schema \.\./\.\./schema/measurement\.schema\.json\n.*?)```", text, re.DOTALL)
    assert found is not None
    return found.group(1)


# --- (1) a run's figure held to its quote ---------------------------------------------------------------------------


def test_1_the_rule_rounds_as_the_run_writes_its_figure() -> None:
    row = ["| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 98.42 ± 0.31 |"]
    assert run_quote_states(98.42, row) is None
    assert run_quote_states(98.4, row) is None  # 98.42 rounded as 98.4 is written
    assert run_quote_states(98, row) is None
    # the model's size (8B) and the test's name (tg128) are no figures of the row
    # the row's mean with its spread is its figure: not its size in GiB, nor its ngl 99
    assert run_quote_states(984.2, row) == ["98.42 ± 0.31"]
    assert run_quote_states(9.842, row) == ["98.42 ± 0.31"]
    assert run_quote_states(98.5, row) == ["98.42 ± 0.31"]  # 98.42 rounds to 98.4
    assert run_quote_states(99, row) == ["98.42 ± 0.31"]
    assert run_quote_states(4.58, row) == ["98.42 ± 0.31"]
    # a row without a spread: every number it states (the model's size 8B and the test's name tg128 are none)
    bare = ["| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 98.42 |"]
    assert run_quote_states(98.42, bare) is None
    assert run_quote_states(984.2, bare) == ["4.58", "8.03", "99", "98.42"]
    # a quote writing tokens/s: those figures alone (the 1023 runs and 7.40 ms are not the run's figure)
    line = ["eval time =    7573.66 ms /  1023 runs   (    7.40 ms per token,   135.07 tokens per second)"]
    assert run_quote_states(135.07, line) is None
    assert run_quote_states(1023, line) == ["135.07"]
    assert run_quote_states(1350.7, line) == ["135.07"]
    assert run_quote_states(98, ["no number here"]) == []


def test_1_check_fails_a_run_entered_10x_its_quote(root: Path) -> None:
    text = _example().replace("tokens_per_s = 145.55", "tokens_per_s = 1455.5")
    assert "tokens_per_s = 1455.5" in text
    (root / MINE).write_text(text, encoding="utf-8")
    done = _run(root, "check")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    line = (f"  {MINE}: run.0 ({RUN}): its quote of xiongjiedai-gpu-benchmarks '{ROW}' states 145.55 ± 0.80, "
            "not its 1,455.5 tokens/s: the value and the words it cites disagree; quote the words of "
            "the document stating the value, or set the value they state")
    assert line in done.stdout.splitlines()
    assert "checked 128 files (17 cards, 2 drafts, 2 routings, 2 stacks, 21 checkpoints, 10 measurements, " \
           "47 sources, 17 servings, 10 locks): 1 problem" in done.stdout
    (root / MINE).write_text(text.replace("1455.5", "14.555"), encoding="utf-8")
    done = _run(root, "check")
    assert done.returncode == 1 and "± 0.80, not its 14.555 tokens/s: the value" in done.stdout
    # 145.5 is the row's 145.55 as the run rounds it: no problem (only the warning that the fit has not seen it)
    (root / MINE).write_text(text.replace("1455.5", "145.5"), encoding="utf-8")
    done = _run(root, "check")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "its quote of" not in done.stdout


def test_1_no_shipped_run_trips_it(made: Path) -> None:
    done = _run(made, "check")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "its quote of" not in done.stdout and done.stdout.splitlines()[-1] == "all holds"


# --- (2) a stack not registered: how to add one ---------------------------------------------------------------------


def test_2_an_unknown_stack_says_which_file_to_copy_where(made: Path) -> None:
    done = _run(made, "price", "r1-qwen7b-h200", "--stack", "vllm")
    assert done.returncode == 2
    # before: "… not found in facts/stacks (registered: llamacpp-cuda-2405, lmdeploy-turbomind-2312)" alone
    assert done.stderr == (
        "passprice: error: stack 'vllm': not found in facts/stacks (registered: llamacpp-cuda-2405, "
        "lmdeploy-turbomind-2312); a stack not registered is a file of your own: copy the closest registered "
        "stack's file to facts/stacks/vllm.toml, add your measured runs of it (registry/measurements/, stack = "
        "\"vllm\"), and passprice calibrate --stack vllm fits its facts to them (README, 'Serving stacks')\n")


# --- (3) validate: in-sample and out-of-sample apart ----------------------------------------------------------------


def test_3_validate_says_the_fitted_runs_apart_from_those_the_fit_never_saw(root: Path) -> None:
    (root / MINE).write_text(_example(), encoding="utf-8")
    done = _run(root, "validate", "--stack", "llamacpp-cuda-2405")
    assert done.returncode == 0, done.stderr
    # before: "  expected price: mean |error| 5.6 %, max 18.0 % over 112 runs"
    assert ("  expected price: mean |error| 5.6 %, max 18.0 % over 111 runs in its stack's fit (in-sample); "
            "mean |error| 13.2 %, max 13.2 % over 1 run not in its stack's fit (out-of-sample)"
            in done.stdout.splitlines())
    data = json.loads(_run(root, "validate", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    assert (data["in_fit"]["runs"], data["not_in_fit"]["runs"]) == (111, 1)
    mine = next(r for r in data["runs"] if r["id"] == RUN)
    assert mine["in_fit"] is False and data["not_in_fit"]["mean_error"] == abs(mine["error"])
    assert round(100 * mine["error"], 1) == 13.2  # 164.8 expected against 145.55 measured
    assert round(100 * data["in_fit"]["mean_error"], 1) == 5.6
    assert all(r["in_fit"] for r in data["runs"] if r["id"] != RUN)


# --- (4) README's example measurement file validates ---------------------------------------------------------------


def test_4_the_readmes_example_measurement_file_validates(root: Path) -> None:
    text = _example()
    parsed = tomllib.loads(text)
    assert parsed["source"]["source"] == "xiongjiedai-gpu-benchmarks"  # the file's source, not each run's
    assert [sorted(run) for run in parsed["run"]] == [["batch", "card", "checkpoint", "id", "locator", "positions",
                                                        "stack", "test", "tokens_per_s"]]
    (root / MINE).write_text(text, encoding="utf-8")
    done = _run(root, "validate", "--stack", "llamacpp-cuda-2405")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith(RUN))
    assert row.split() == [RUN, "1", "0-512", "145.55", "408", "2.8", "memory", "164.8", "+13.2", "%", "memory"]
    done = _run(root, "check")
    assert done.returncode == 0, done.stdout[-3000:]
    assert (f"  warning: facts/stacks/llamacpp-cuda-2405.toml: 1 measured run of stack llamacpp-cuda-2405 is not in "
            f"its fit ({RUN}): run passprice calibrate --stack llamacpp-cuda-2405") in done.stdout.splitlines()
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "tokens/s, source and locator" not in readme
    assert "its `[source]` table names the registered record, `source = ID`, that every run cites" in readme


# --- (5) a tokens/s written with its unit ---------------------------------------------------------------------------


def test_5_a_figure_written_with_its_unit_says_it_is_tokens_per_second(root: Path) -> None:
    (root / MINE).write_text(_example().replace("tokens_per_s = 145.55", 'tokens_per_s = "98.42 tok/s"'),
                             encoding="utf-8")
    done = _run(root, "validate")
    assert done.returncode == 2
    # before: "run.0.tokens_per_s: '98.42 tok/s' is not of type 'number'"
    assert done.stderr.splitlines()[-1] == (f"passprice: error: {MINE}: run.0.tokens_per_s: '98.42 tok/s' is not a "
                                            "number (tokens per second; write 98.42)")
    (root / MINE).write_text(_example().replace("tokens_per_s = 145.55", 'tokens_per_s = "fast"'), encoding="utf-8")
    done = _run(root, "validate")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (f"passprice: error: {MINE}: run.0.tokens_per_s: 'fast' is not a number "
                                            "(tokens per second)")


# --- (6) drift, briefly; README's drift is explain drift's ----------------------------------------------------------


def test_6_reproduce_says_each_drifted_fact_briefly_and_counts_the_rest(root: Path) -> None:
    card = root / "facts/cards/h200_sxm_141gb.toml"
    lines = card.read_text(encoding="utf-8").splitlines(keepends=True)
    # the note of each fact (not the card's own) reworded: the values stay the pinned ones
    edited = [re.sub(r'^note = "(.*)"$', r'note = "\1 Reviewed again."', line) if i > 8 and i < 160 else line
              for i, line in enumerate(lines)]
    card.write_text("".join(edited), encoding="utf-8")
    done = _run(root, "reproduce", "locks/r1-qwen7b-h200.lock.toml")
    assert done.returncode == 0, done.stderr
    facts = next(line for line in done.stdout.splitlines() if line.startswith("    facts  "))
    assert facts == (
        "    facts          6 drifted, every value as pinned: array: 989.5 TMAC/s (note changed); memory.capacity: "
        "141 GB (note changed); on_chip.capacity: 115088 KiB (note changed); scale: 33.5 Tcycle/s (note changed); "
        "streams.append: 0.8646 (note changed); and 1 more (reproduce --json's facts_drifted lists each) (of those "
        "the price reads); no drift in 5 pinned facts changed today that it does not read: host.capacity (note "
        "changed), host.read (note changed), host.stream (note changed), on_chip.bandwidth (note changed), "
        "streams.rewrite (note changed)")
    data = json.loads(_run(root, "reproduce", "locks/r1-qwen7b-h200.lock.toml", "--json").stdout)
    assert len(data["facts_drifted"]) == 6  # every one listed there
    assert "    array, memory.capacity, on_chip.capacity, scale, streams.append, streams.read: tokens/s unchanged " \
           "(each its note alone changed: the figure and provenance are the pinned ones)" in done.stdout


def test_6_readmes_drift_is_explain_drifts(made: Path) -> None:
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "a locked price that moved while its floors hold is drift" not in readme
    assert ("a pinned fact that today's files hold otherwise while the floors hold and the recorded price reproduces "
            "from the lock's pins is drift, reported and passed, whether or not the price moved") in readme
    said = _run(made, "explain", "drift").stdout
    assert "a pinned fact that today's file holds otherwise (value, unit, provenance or citation) has *drifted*" in said


# --- (7) audit --source of a stack lock: its expected price ---------------------------------------------------------


def test_7_audit_source_shows_a_stack_locks_expected_price(made: Path) -> None:
    lock = tomllib.loads((made / "locks/r1-qwen7b-h200-llamacpp.lock.toml").read_text(encoding="utf-8"))
    expected, limit = lock["price"]["expected"]["tokens_per_s"], lock["price"]["tokens_per_s"]
    assert (round(expected, 1), round(limit, 1)) == (237.4, 996.1)
    done = _run(made, "audit", "--source", "passprice-stack-calibration")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("r1-qwen7b-h200-llamacpp "))
    # before: "r1-qwen7b-h200-llamacpp  stack.overhead.layer and 11 more stack facts     996.1  estimated → …"
    assert "  stack.overhead.layer and 11 more stack facts  237.4 expected (limit 996.1)  estimated → assumed" in row
    data = json.loads(_run(made, "audit", "--source", "passprice-stack-calibration", "--json").stdout)
    (impact,) = data["locks"]
    assert (impact["expected_tokens_per_s"], impact["tokens_per_s"]) == (expected, limit)
    # a limit's lock: null, its limit shown as before
    data = json.loads(_run(made, "audit", "--source", "azure-ai-benchmarking-guide", "--json").stdout)
    plain = next(i for i in data["locks"] if i["name"] == "r1-qwen7b-h200")
    assert plain["expected_tokens_per_s"] is None and round(plain["tokens_per_s"], 1) == 996.1
