"""The README's statements doc52 found false, kept true: the lock-on-a-day recipe names a day this repository's
history has a lock on (its `--until=2026-11-30` found no commit, so the `${C:?…}` guard stopped it: the first commit
of `locks/qwen3-30b-a3b-h200.lock.toml` is of 2026-12-01), and what that lock's reproduction prints; `simulate
--json` gives each request's record with no option (the README named a `--requests` option no command has)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.cli import cli

README = (REPO / "README.md").read_text(encoding="utf-8")
LOCK = "locks/qwen3-30b-a3b-h200.lock.toml"


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_the_lock_on_a_day_recipe_finds_a_lock_and_reproduces_it(tmp_path: Path) -> None:
    probe = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], capture_output=True,
                           text=True)
    if probe.returncode != 0 or probe.stdout.strip() != "false":
        pytest.skip("not a git checkout with its whole history")
    day = re.search(r"C=\$\(git log -1 --until=(\S+) --format=%H -- " + re.escape(LOCK) + r"\)", README)
    assert day is not None and day[1] == "2026-12-02T23:59:59Z"  # a day alone is read at the time of day now
    commit = _git("log", "-1", f"--until={day[1]}", "--format=%H", "--", LOCK)
    assert commit.startswith("a0187f68f28a")  # was '' at 2026-11-30: the guard's refusal, not a lock
    old = tmp_path / "old.lock.toml"
    old.write_text(_git("show", f"{commit}:{LOCK}") + "\n", encoding="utf-8")
    result = invoke("reproduce", str(old))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "reproduces: the pricing model changed since the lock; every recorded field reproduces" in out
    assert "lock digest sha256:c8ac5b1d" in out and "`sha256:c8ac5b1d…` for this one, written at a0187f68f28a" in README
    # cite70: the routing record's locator now quotes the handbook's heading verbatim (an em dash), a 4th drift
    # cite71: the H100 whitepaper's locators quote its text (on_chip.capacity, scale), a 5th drift
    # left52: each part that changed named ("(citation or note changed; derivation changed)" before)
    # left60 (session 43): the H200's memory.capacity note changed, a 6th drift
    # cite102: the H200's memory and rate facts cite its product page: array (note), memory.bandwidth and
    # memory.capacity (source), vector (citation, source), 9 drifts
    # fix54w: each briefly (the value once where it is the pinned one), the first 5, the rest counted
    drifted = "facts          9 drifted, every value as pinned: array: 989.5 TMAC/s (note changed); " \
              "memory.bandwidth: 4.8 TB/s (citation changed), source nvidia-h200-datasheet → " \
              "nvidia-h200-product-page; memory.capacity: 141 GB (citation, note changed), source " \
              "nvidia-h200-datasheet → nvidia-h200-product-page; on_chip.capacity: 115088 KiB (citation, " \
              "derivation changed); routing.hot_experts: 0.453125 (citation changed); and 4 more (reproduce " \
              "--json's facts_drifted lists each) (of those the price reads)"
    assert drifted in out
    assert "tokens/s unchanged" in out and "10354.415517464427" in out


def test_simulate_json_gives_each_request_s_record_without_an_option() -> None:
    assert "`--requests`" not in README and "`records` (always, under `--json`) gives a row per request" in README
    assert "--requests" not in {o for p in cli.commands["simulate"].params for o in getattr(p, "opts", [])}
    result = invoke("simulate", "r1-qwen7b-h200", "--synthetic", "3", "--json")
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)["policies"]["continuous"]["records"]
    assert [r["index"] for r in records] == [0, 1, 2] and {r["line"] for r in records} == {None}


#: Outputs test_glossary_outputs does not collect from, whose words had no entry before doc52: `provenance →
#: withdrawn`, `record` and `cites it as` (audit --source), `why` (audit --fact), `+ draft KV if drafting` (kv of an
#: MTP checkpoint), `shape`, `type` and `tensors` (header; checkpoints' column is the same word), `description`
#: (servings).
MORE = (
    ("audit", "--source", "gpu-container-handbook-routing-derisk"),
    ("audit", "--fact", "h200_sxm_141gb:memory.bandwidth"),
    ("kv", "deepseek-v3-q4_k_m", "--contexts", "4k"),
    ("header", str(REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz")),
    ("servings",),
)


def test_every_word_these_outputs_print_is_defined() -> None:
    from test_glossary_outputs import _undefined, headers, labels, words

    found: set[str] = set()
    for args in MORE:
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
        found |= {w for phrase in headers(result.stdout) + labels(result.stdout) for w in words(phrase)}
    assert {"provenance → withdrawn", "record", "cites it as", "+ draft KV if drafting", "why", "shape",
            "type", "tensors", "description"} <= found
    assert _undefined(found) == []
