"""Walkthrough 22 (README only, a new user): an ML platform engineer pricing a mixture of experts, reproducing a
lock after a fact moved, auditing a citation and reviewing a pull request that adds a measured run. Each test builds
the reproducer of one finding and asserts the exit status and the words (or the value).

Finding 1: a measured run of a mixture of experts could not be priced at all: a measurement file's run had no way to
name a routing record (``schema/measurement.schema.json`` allowed none), so ``validate`` refused it ``Routed``
with advice about ``--routing NAME`` or a serving's ``routing = NAME``, neither of which a run has. A run now takes
``routing = NAME``, priced as a serving's is (held to the record's scope), and the refusal says to add it.

Finding 2: ``check`` named each stale derived fact but not the command that writes them (``fact recompute``).

Finding 3: the review of a pull request adding a measurement file listed it as an "other file changed", nothing
more: not its runs, nor whether a measured figure lies under its card's limit (a reviewer's first question).

Finding 4: a card file renamed in a registry of one's own left its servings told to copy the shipped card in.

Finding 5: ``compare --stack``'s ``× limit`` column and its ``fitted span`` line divide by different limits, unsaid.

Finding 6: a stack fitted on NVIDIA cards (llama.cpp's CUDA backend) priced an AMD card with no word of the vendor.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from test_slip_34 import renderings  # one in-process review rendered per format

RUN = """#:schema ../../schema/measurement.schema.json
[source]
name = "Our llama.cpp run of Qwen3-30B-A3B on one H200"
source = "xiongjiedai-gpu-benchmarks"

[[run]]
id = "w22.h200_sxm_141gb.qwen3moe.tg128"
stack = "llamacpp-cuda-2507"
card = "h200_sxm_141gb"
checkpoint = "qwen3-30b-a3b-q4_k_m"
{routing}batch = 1
positions = [0, 128]
tokens_per_s = 160.5
locator = "a walkthrough's made-up figure"
"""


def _root(tmp_path: Path, routing: str | None) -> Path:
    root = copy_root(tmp_path)
    line = f'routing = "{routing}"\n' if routing is not None else ""
    (root / "registry" / "measurements" / "w22-qwen3moe.toml").write_text(RUN.format(routing=line))
    return root


def _row(root: Path) -> dict[str, object]:
    result = invoke("validate", "--json", root=root)
    assert result.exit_code == 0, result.output
    rows = [r for r in json.loads(result.stdout)["runs"] if r["id"] == "w22.h200_sxm_141gb.qwen3moe.tg128"]
    assert len(rows) == 1
    return rows[0]


def test_a_measured_run_of_a_mixture_of_experts_without_routing_is_told_to_name_one(tmp_path: Path) -> None:
    row = _row(_root(tmp_path, None))
    assert row["limit"] is None
    why = str(row["why"])
    assert why.startswith("refused (Routed): a mixture of 128 experts")
    assert "the run names none: add `routing = NAME` to it" in why
    assert "registry/measurements/w22-qwen3moe.toml: run.0.routing" in why
    assert "--routing" not in why  # an option no measured run has


def test_a_measured_run_naming_its_routing_record_is_priced_as_the_serving_would_be(tmp_path: Path) -> None:
    root = _root(tmp_path, "qwen3-30b-a3b-measured")
    row = _row(root)
    # the run's serving: batch 1, one context from 0 to 128 positions (mean 64, limit 128), on the measured skew
    price = invoke("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h200_sxm_141gb", "--batch", "1",
                   "--limit", "128", "--position", "64", "--routing", "qwen3-30b-a3b-measured", "--json", root=root)
    assert price.exit_code == 0, price.output
    limit = json.loads(price.stdout)["tokens_per_s"]
    assert row["limit"] == limit
    assert row["why"] == "stack not registered"
    assert row["limit_ratio"] == limit / 160.5
    check = invoke("check", root=root)
    assert check.exit_code == 0, check.output


def test_a_measured_run_naming_a_routing_record_that_is_not_there_fails_check(tmp_path: Path) -> None:
    root = _root(tmp_path, "nope")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert (
        "passprice: error: registry/measurements/w22-qwen3moe.toml: run.0.routing: routing record 'nope': not found"
        in result.stderr
    ), result.stderr


def test_a_measured_run_naming_another_models_routing_record_is_refused_by_its_key(tmp_path: Path) -> None:
    root = _root(tmp_path, "qwen3-30b-a3b-measured")
    path = root / "registry" / "measurements" / "w22-qwen3moe.toml"
    path.write_text(path.read_text().replace('"qwen3-30b-a3b-q4_k_m"', '"gpt-oss-20b-mxfp4"'))
    result = invoke("validate", root=root)
    assert result.exit_code == 2, result.output
    assert (
        "registry/measurements/w22-qwen3moe.toml: run.0.routing: routing record 'qwen3-30b-a3b-measured' applies to "
        "checkpoint qwen3-30b-a3b-q4_k_m only" in result.stderr
    ), result.stderr


def test_check_names_the_command_that_recomputes_stale_derived_facts(tmp_path: Path) -> None:
    """Finding 2: after a corrected bandwidth, ``check`` named each stale share and its recomputed value, then
    "check FAILED", without the command that writes them (``fact set`` and ``reproduce`` named it)."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text()
    old = '[memory.bandwidth]\nvalue = 4.8\n'
    assert old in text
    card.write_text(text.replace(old, '[memory.bandwidth]\nvalue = 4.89\n'))
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    lines = lines[:next(i for i, line in enumerate(lines) if line.startswith("problems, as listed at the top"))]
    stale = [i for i, line in enumerate(lines) if "h200_sxm_141gb.toml: streams." in line and " is stale: " in line]
    assert len(stale) == 3, result.stdout
    # the bandwidth moved under its quote of '4.8TB/s' is a problem of its own (MISMATCH), between them and the hint
    assert "h200_sxm_141gb.toml: memory.bandwidth: its quote of nvidia-h200-product-page" in lines[stale[-1] + 1]
    assert "not its value 4.89 TB/s" in lines[stale[-1] + 1]
    assert lines[stale[-1] + 2] == "  to write them from today's inputs: `passprice fact recompute h200_sxm_141gb`"
    assert result.stdout.count("passprice fact recompute") == 1
    recomputed = invoke("fact", "recompute", "h200_sxm_141gb", root=root)
    assert recomputed.exit_code == 0, recomputed.output
    assert "fact recompute" not in invoke("check", root=root).stdout


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)


def test_the_review_of_an_added_measurement_file_prices_its_runs(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    text = RUN.format(routing='routing = "qwen3-30b-a3b-measured"\n')
    # a second run, on the dense 7B, measured above its limit (1,024.1 tokens/s at positions 0 to 128)
    text += text[text.index("[[run]]"):].replace("w22.h200_sxm_141gb.qwen3moe.tg128", "w22.r1.fast").replace(
        'checkpoint = "qwen3-30b-a3b-q4_k_m"\nrouting = "qwen3-30b-a3b-measured"\n',
        'checkpoint = "deepseek-r1-distill-qwen-7b-q4_k_m"\n').replace("160.5", "5000")
    (root / "registry" / "measurements" / "w22-runs.toml").write_text(text)
    said = re.compile(
        r"  registry/measurements/w22-runs\.toml \(added\): 2 measured runs \(stack llamacpp-cuda-2507 \(not "
        r"registered: priced as the limit only\); card h200_sxm_141gb; checkpoints deepseek-r1-distill-qwen-7b-q4_k_m, "
        r"qwen3-30b-a3b-q4_k_m\): w22\.h200_sxm_141gb\.qwen3moe\.tg128 160\.5 tokens/s, limit ([0-9,.]+) "
        r"\(([0-9.]+) × measured\); w22\.r1\.fast 5,000 tokens/s, limit ([0-9,.]+) \(([0-9.]+) × measured\), ABOVE "
        r"its limit: check it in its source"
        # slip round 34: its runs are asked as added runs too (these locators quote no figure)
        r"; 2 measured runs to verify in their sources: w22\.h200_sxm_141gb\.qwen3moe\.tg128 added: its locator "
        r"quotes no figure: .*"
    )
    status, (text, markdown, as_json) = renderings(root, "text", "markdown", "json", head=None)  # `diff main`
    assert status == 0, text
    lines = [m for m in map(said.fullmatch, text.splitlines()) if m is not None]
    assert len(lines) == 1, text
    moe, moe_ratio, dense, dense_ratio = lines[0].groups()
    assert float(moe.replace(",", "")) / 160.5 == pytest.approx(float(moe_ratio), rel=1e-2)  # the limit bounds it
    assert float(dense.replace(",", "")) / 5000 == pytest.approx(float(dense_ratio), rel=1e-2)
    assert float(moe_ratio) > 1 and float(dense_ratio) < 1  # 5,000 tokens/s is past the 7B's limit on one H200
    assert "Other files changed: `registry/measurements/w22-runs.toml` (added): 2 measured runs (stack " in markdown
    assert "ABOVE its limit: check it in its source" in markdown
    data = json.loads(as_json)
    described = data["added_records"]["registry/measurements/w22-runs.toml"]
    assert lines[0].group(0) == f"  registry/measurements/w22-runs.toml (added): {described}"


def test_a_serving_naming_a_card_whose_file_was_renamed_is_told_which_file_it_is(tmp_path: Path) -> None:
    """Finding 4: in a registry of one's own, the H200's file renamed (``h200.toml``, its facts edited since) left the
    serving naming ``h200_sxm_141gb`` told it was "a card of the facts passprice ships: copy it in", over the
    registry's own card; the checkpoint's case was fixed in walkthrough 21."""
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    (cards / "h200_sxm_141gb.toml").rename(cards / "h200.toml")
    lines = bad("price", "r1-qwen7b-h200", "--no-lock", root=root)
    assert len(lines) == 1
    assert ("card 'h200_sxm_141gb': not found in facts/cards; facts/cards/h200.toml is 'NVIDIA H200 SXM 141GB' too, "
            "the card passprice ships as h200_sxm_141gb (its file renamed?): rename it back to h200_sxm_141gb.toml, or "
            "name the card h200 here (registered: ") in lines[0]
    assert "copy" not in lines[0]
    # another card of the same name elsewhere in the registry is no answer: a card missing outright keeps its hint
    (cards / "h200.toml").unlink()
    lines = bad("price", "r1-qwen7b-h200", "--no-lock", root=root)
    assert "is a card of the facts passprice ships, not of this registry" in lines[0]


def test_compare_under_a_stack_says_which_limit_its_fitted_span_ratio_divides_by() -> None:
    """Finding 5: ``compare --stack`` showed ``× limit`` 0.002 for the H200 (over the limit's best batch, 580) and,
    two lines down, the same card at 0.2384 × the limit outside the fitted span (at the expected best's batch, 1),
    with nothing to say the two divide by different limits."""
    out = invoke("compare", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb", "--stack", "llamacpp-cuda-2405")
    assert out.exit_code == 0, out.output
    row = next(line for line in out.stdout.splitlines() if line.startswith("h200_sxm_141gb "))
    column = float(row.split()[3])
    assert column == pytest.approx(237.4 / 33339.2, rel=1e-3)  # expected best at batch 1 over the limit's best
    assert out.stdout.rstrip().endswith(
        "outside it (an extrapolation of the fit): h200_sxm_141gb 0.2384 (expected over the limit at the expected "
        "best's batch; the × limit column divides by the limit's own best batch)"
    )


def test_a_stack_fitted_on_one_vendors_cards_says_so_on_another_vendors_card() -> None:
    """Finding 6: llama.cpp's CUDA-backend stack, fitted on 11 NVIDIA cards, priced Qwen3-30B-A3B on the AMD MI300X
    with the same warning as on an NVIDIA card it never measured: extrapolated across cards, 6.9 % on average."""
    out = invoke("price", "qwen3-30b-a3b-h200", "--card", "mi300x", "--batch", "1", "--stack", "llamacpp-cuda-2405",
                 "--no-lock")  # fmt: skip
    assert out.exit_code == 0, out.output
    card_line = next(line for line in out.stderr.splitlines() if "extrapolates across cards" in line)
    assert card_line.endswith(
        "20.4 % at most); and every card its runs measured has vendor NVIDIA, mi300x has vendor AMD: the stack's "
        "kernels never ran on such a card as measured, so its facts may not describe the runtime there at all"
    )
    # an NVIDIA card it never measured keeps the plain line; compare names the AMD card among several
    same = invoke("price", "qwen3-30b-a3b-h200", "--batch", "1", "--stack", "llamacpp-cuda-2405", "--no-lock")
    assert "never ran on such a card" not in same.stderr and "extrapolates across cards" in same.stderr
    many = invoke("compare", "qwen3-30b-a3b-h200", "--cards", "h200_sxm_141gb,mi300x,rtx_4090", "--stack",
                  "llamacpp-cuda-2405")  # fmt: skip
    assert "every card its runs measured has vendor NVIDIA, mi300x has vendor AMD: " in many.stderr
