"""Walkthrough 49 (issue 13, the three uses on mixtures of experts under a serving stack): what a new user serving
gpt-oss-20b and Qwen3-30B-A3B with llama.cpp on an H200 and an MI300X could not find in the README.

- "the cheapest card meeting a 30 ms TPOT bound": passprice prices time, never money, and `passprice explain price`
  (or `cheapest`, `cost`, `$/hour`) said the word was no term it defines; the glossary now says what a price is and
  how to rank `compare --max-tpot` rows by one's own $/hour.
- a price under a serving stack checked by hand: a mixture of experts' F32 routers are float matrices, priced at
  the card's vector rate × `share.float` and joined to the array term, which the README's by-hand (a dense model)
  never showed: gpt-oss-20b on the MI300X at batch 1, 242.358 tokens/s (242.357 before session 39's window rule),
  bit for bit from the README's operations.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from cli_helpers import REPO, invoke
from passprice import glossary
from passprice.review import rendering


@pytest.mark.parametrize("word", ["price", "prices", "cheapest", "cost", "$/hour", "money"])
def test_explain_price_says_it_is_time_not_money(word: str) -> None:
    term = glossary.lookup(word)
    assert term.name == "price"
    assert "never money" in term.long
    assert "$/hour / (0.0036 × tokens/s)" in term.long  # 1e6 tokens × ($/hour / 3600 s) / tokens/s
    assert "compare SERVING --max-tpot SECONDS" in term.long


def test_the_readme_says_compare_ranks_by_tokens_not_cost() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"- **price**: {glossary.TERMS['price'].long}" in readme
    assert "`passprice explain cheapest` says how to rank its rows by your own" in readme


def test_a_moe_price_under_llamacpp_by_hand() -> None:
    result = invoke("price", "gpt-oss-20b-mi300x", "--batch", "1", "--stack", "llamacpp-cuda-2405", "--json")
    assert result.exit_code == 0, result.output
    priced = json.loads(result.stdout)
    expected = priced["expected"]
    routers = 24 * 2880 * 32  # gpt-oss-20b: 24 layers, a 2,880-wide router over 32 experts, F32
    assert expected["float_matrix_macs"] == routers == 2_211_840
    # 12 windowed layers read 127 of their 128-position window (the row's own written besides: session 39), not 128:
    # 12 × (64 heads × (64 + 64) + 7.5 × 64) = 104,064 vector MACs fewer than session 38's 441,901,824.
    assert expected["vector_macs"] == priced["vector_macs"] - routers == 441_797_760
    # the README's operations, the facts as `facts mi300x` and `fact show llamacpp-cuda-2405` give them
    memory = 2_574_705_396 / (5.3e12 * 0.7302 * 0.9883) + 103_833_600 / (5.3e12 * 0.7717 * 0.7532)
    array = 7_209_861_120 / (81.7e12 * 1) + routers / (81.7e12 * 0.07171)
    vector = (444_009_600 - routers) / (81.7e12 * 0.04165)
    scale = 112_654_080 / (40.8576e12 * 0.002051)
    fixed = 24 * 96.63e-6
    assert (expected["memory_s"], expected["array_s"], expected["vector_s"], expected["scale_s"]) == (
        memory, array, vector, scale)
    assert expected["binds"] == "scale"
    pass_s = fixed + scale + 0.5 * (memory + array + vector)  # terms.serial 0.5 × the others
    assert expected["pass_s"] == pass_s == pytest.approx(4.126e-3, abs=5e-7)
    assert expected["tokens_per_s"] == 1 / pass_s == pytest.approx(242.358, abs=1e-3)  # 242.357 in session 38
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "the pass 2.319 + 1.344 + 0.5 × (0.7069 + 0.08863 + 0.1298) = 4.126 ms, 242.4 tokens/s" in readme


def _git(repo: Path, *args: str, date: str = "") -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_last_month_s_lock_is_reproduced_from_history(tmp_path: Path) -> None:
    """The README's recipe: the lock file as a registry held it on a day, re-priced from its pins; a day before the
    lock was written gives no commit, which the `${C:?…}` guard stops (an empty C reads today's lock)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert 'git show "${C:?no commit wrote the lock by that day}":locks/' in readme
    lock = "locks/qwen3-30b-a3b-h200.lock.toml"
    (tmp_path / "locks").mkdir()
    _git(tmp_path, "init", "-q")
    shutil.copyfile(REPO / lock, tmp_path / lock)
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "lock", date="2026-11-05T10:00:00+00:00")
    shutil.copyfile(REPO / "locks/r1-qwen7b-h200.lock.toml", tmp_path / lock)  # another lock there since
    _git(tmp_path, "commit", "-qam", "today", date="2026-12-05T10:00:00+00:00")
    assert _git(tmp_path, "log", "-1", "--until=2026-11-01", "--format=%H", "--", lock) == ""  # the guard's case
    commit = _git(tmp_path, "log", "-1", "--until=2026-11-30", "--format=%H", "--", lock)
    old = tmp_path / "old.lock.toml"
    old.write_text(_git(tmp_path, "show", f"{commit}:{lock}") + "\n", encoding="utf-8")
    assert old.read_bytes() == (REPO / lock).read_bytes()
    result = invoke("reproduce", str(old), "--json")
    assert result.exit_code == 0, result.output
    reproduced = json.loads(result.stdout)
    digest = tomllib.loads((REPO / lock).read_text(encoding="utf-8"))["lock"]["digest"]
    assert reproduced["lock_digest"] == digest
    assert reproduced["lock"] == "qwen3-30b-a3b-h200" and reproduced["equals"] is True


def _stack_lock(changed: tuple[str, ...], batch: int, after: float) -> SimpleNamespace:
    def side(tokens: float) -> SimpleNamespace:
        return SimpleNamespace(price={
            "stack": "llamacpp-cuda-2405", "routing": {"used": 8, "tokens": 605},
            "expected": {"tokens_per_s": tokens, "batch": batch, "rows_per_sequence": 1}})
    return SimpleNamespace(before=side(177.7740829202033), after=side(after), changed=changed,
                           recorded={"expected": {"tokens_per_s": 177.7740829202033}})


def test_a_stack_lock_s_expected_price_unmoved_by_routing_says_why() -> None:
    """A best lock under llamacpp-cuda-2405 (fitted at batch 1): the routing record's change moved the limit's best
    (batch 605, -0.003585 %) and left the expected price at batch 1 where it was, which read `177.8 → 177.8 (+0 %)`
    with no reason."""
    line = rendering._expected_shift(_stack_lock(("routing.hot_experts",), 1, 177.7740829202033))
    assert line == ("177.8 → 177.8  (+0 %) under stack llamacpp-cuda-2405, recorded 177.8; unmoved by "
                    "routing.hot_experts: 1 token-row a pass reads its 8 experts a layer whatever the routing")
    for lock in (_stack_lock(("routing.hot_experts",), 2, 177.7740829202033),  # 2 token-rows: the routing counts
                 _stack_lock(("memory.bandwidth",), 1, 177.7740829202033),  # no routing fact changed
                 _stack_lock(("routing.hot_share",), 1, 180.0)):  # it moved: nothing to explain
        assert "unmoved" not in (rendering._expected_shift(lock) or "")


def test_compare_under_a_stack_says_its_range_chose_the_batch() -> None:
    """Every row of `compare gpt-oss-20b-h200 --stack llamacpp-cuda-2405` reads batch 1 (4.533 ms on the H200, where
    the limit's best is 1,239 sequences at 33.57 ms): the stack was measured at batch 1 only, which the table did not
    say, so "the batch with the lowest TPOT" and "the batch the stack holds on" read alike."""
    out = invoke("compare", "gpt-oss-20b-h200", "--cards", "h200_sxm_141gb", "--stack", "llamacpp-cuda-2405")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    row = next(line for line in lines if line.startswith("h200_sxm_141gb "))
    assert row.split()[1:3] == ["1", "220.6"]
    assert ("  holds on      batch 1 … 1, cached positions 0 … 8,192 (range.*: where the stack's runs were measured): "
            "each card's best batch is sought within it") in lines
