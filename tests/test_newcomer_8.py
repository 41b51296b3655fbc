"""Findings of the eighth README-only walkthrough, each kept as a reproducer: a stack fitted on dense checkpoints
pricing a mixture of experts without a word, an audit whose citations could not be opened from it, a headline that
read as a pass over a failing check, a change of a millionth of a percent shown as -0.00 %, a serving file given to
``reproduce`` answered with eight schema errors, advice that led nowhere after a code change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice.checkpoints import load_checkpoint
from passprice.enforce import PriceMoved
from passprice.registry import Root
from passprice.stackreach import model_kind, model_reach
from passprice.stacks import load_stack

STACK = "llamacpp-cuda-2405"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_root(tmp_path_factory.mktemp("newcomer-8"))


def test_a_stack_fitted_on_dense_checkpoints_warns_on_a_mixture_of_experts() -> None:
    result = invoke("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "rtx_4090", "--routing", "uniform",
                    "--stack", STACK, "--no-lock")
    assert result.exit_code == 0, result.output
    # rtx_4090 is one of the stack's measured cards: the warnings are the kind of model and (walkthrough 19) the
    # price's ratio to the limit, outside the span the stack's runs measured.
    assert result.stderr == (
        f"passprice: warning: stack {STACK} was fitted on runs of dense checkpoints only, not a mixture of experts: "
        "its fixed costs and shares here are extrapolated from other kernels (with a checkpoint held out of the fit, "
        "its error was 12.6 % on average, 49.8 % at most, on the kinds it saw)\n"
        f"passprice: warning: stack {STACK}'s expected price here is 0.2943 × the limit (the limit 3.4 × expected), "
        "outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs measured: the fit is "
        "extrapolated here\n"
    )
    dense = invoke("price", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "rtx_4090",
                   "--stack", STACK, "--no-lock")
    assert dense.exit_code == 0 and dense.stderr == ""  # a dense model on a measured card: nothing to warn of


def test_model_kinds_read_off_headers() -> None:
    root = Root(REPO)
    assert model_kind(load_checkpoint(root, "qwen3-30b-a3b-q4_k_m")) == "mixture of experts"
    assert model_kind(load_checkpoint(root, "deepseek-r1-distill-qwen-7b-q4_k_m")) == "dense"
    reach = model_reach(root, load_stack(root, STACK), load_checkpoint(root, "qwen3-30b-a3b-q4_k_m"))
    assert reach.fitted == ("dense",) and not reach.measured


def test_the_audit_says_where_each_cited_document_is_and_how_it_was_read() -> None:
    text = invoke("audit", "r1-qwen7b-h200").stdout
    assert ("  azure-ai-benchmarking-guide — Azure AI Benchmarking Guide (Microsoft (Azure), 2024-09-27)\n"
            "    at: https://github.com/Azure/AI-benchmarking-guide at commit 8fd0c6e1bd0f\n"
            "    read: A stored snapshot of the repository at the commit given") in text
    out = json.loads(invoke("audit", "r1-qwen7b-h200", "--json").stdout)
    assert sorted(out["sources"]) == ["azure-ai-benchmarking-guide", "nvidia-h200-datasheet",
                                      "nvidia-h200-product-page", "nvidia-hopper-whitepaper"]  # the page since cite102
    assert out["sources"]["nvidia-h200-datasheet"]["read"].startswith("NVIDIA's PDF itself was not read")
    assert out["sources"]["nvidia-h200-datasheet"]["url"].startswith("https://nvdam.widen.net/")
    markdown = invoke("audit", "r1-qwen7b-h200", "--format", "markdown").stdout
    assert "\n\nSources:\n- `nvidia-h200-product-page`: https://www.nvidia.com/en-us/data-center/h200/" in markdown
    assert "\n- `nvidia-h200-datasheet`: https://nvdam.widen.net/" in markdown


def test_the_check_headline_counts_failing_locks(root: Path) -> None:
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert 'provenance = "measured"' in text
    card.write_text(text.replace('provenance = "measured"', 'provenance = "estimated"'), encoding="utf-8")
    try:
        result = invoke("check", root=root)
        assert result.exit_code == 1
        first = result.stdout.splitlines()[0]
        assert first.startswith("checked ") and first.endswith(": 0 problems; 5 of 10 locks FAIL"), first
    finally:
        card.write_text(text, encoding="utf-8")
    assert invoke("check", root=root).stdout.splitlines()[0].endswith(": 0 problems")


def test_a_tiny_change_is_not_shown_as_minus_zero() -> None:
    moved = PriceMoved("l", recorded=996.0966124437687, today=996.0966124437687 * (1 - 4.1e-8), recorded_batch=1,
                  today_batch=1, first="tokens_per_s")
    assert "(-4.1e-06 %, first moved: tokens_per_s)" in moved.lines()[0]
    same = PriceMoved("l", recorded=100.0, today=98.5, recorded_batch=1, today_batch=1, first="pass_s")
    assert "(-1.50 %, first moved: pass_s)" in same.lines()[0]


@pytest.mark.parametrize(("path", "kind"), [("registry/servings/r1-qwen7b-h200.toml", "a serving file"),
                                            ("facts/cards/h200_sxm_141gb.toml", "a card file")])
def test_reproduce_of_a_file_that_is_not_a_lock_says_so(path: str, kind: str) -> None:
    lines = bad("reproduce", str(REPO / path), says=f"not a lock file (no [lock] table; it is {kind})")
    assert len(lines) == 1


def test_reproduce_after_a_code_change_says_where_the_locks_code_is(tmp_path: Path) -> None:
    # A lock whose recorded price the running code does not give, with another pricing model recorded: a lock of
    # another code. Its recorded tokens/s edited and its pricing model changed, then the digest recomputed as
    # `lock` computes it, so only the reproduction can tell.
    import hashlib
    import tomllib

    from passprice.locks import _canonical, _sorted

    root = copy_root(tmp_path)
    path = root / "locks" / "r1-qwen7b-h200.lock.toml"
    text = path.read_text(encoding="utf-8")
    recorded = tomllib.loads(text)["lock"]["pricing_model"]
    # …a lock written by another code: one passprice really had (a digest it never had is LockModelForged, slip 55)
    older = "sha256:d82efb38ac4484db2f213716078153839f163d99696ae2274cf103681a94fc2e"
    text = text.replace(recorded, older)
    text = text.replace("tokens_per_s = 996.0966124437687", "tokens_per_s = 990.0")  # …that priced it otherwise
    body = _sorted(tomllib.loads(text))
    stated = body["lock"].pop("digest")
    path.write_text(text.replace(stated, "sha256:" + hashlib.sha256(_canonical(body).encode()).hexdigest()),
                    encoding="utf-8")
    result = invoke("reproduce", str(path), root=root)
    assert result.exit_code == 1, result.output
    # The copy holds no src/passprice, so its commits carry no code: the answer is the passprice its requirements.txt
    # named then (walkthrough 20); a checkout of passprice itself is sent to the commit's own code (test_newcomer_20).
    assert ("the lock's own price comes from the code that wrote it: the passprice this registry's requirements.txt "
            f"named at the commit that last changed the lock (`git show \"$(git log -1 --format=%H -- {path})\""
            ":requirements.txt`), installed in a virtual environment of its own") in result.stdout
    shutil.rmtree(root)


def test_simulate_takes_a_checkpoint_and_card_as_the_pricing_commands_do() -> None:
    args = ("--synthetic", "60", "--seed", "7", "--rate", "200", "--json", "--no-lock")
    by_name = invoke("simulate", "r1-qwen7b-h200", *args)
    given = invoke("simulate", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "h200_sxm_141gb", *args)
    assert by_name.exit_code == 0 and given.exit_code == 0, given.output
    a, b = json.loads(by_name.stdout), json.loads(given.stdout)
    assert a.pop("serving") == "r1-qwen7b-h200" and b.pop("serving") is None
    assert a.pop("title").startswith("simulate r1-qwen7b-h200: ") and b.pop("title") == (
        "simulate: deepseek-r1-distill-qwen-7b-q4_k_m on h200_sxm_141gb (NVIDIA H200 SXM 141GB)")
    a.pop("lock", None)
    b.pop("lock", None)
    assert a == b  # the same serving: the same run, figure for figure
    bad("simulate", "--synthetic", "20", says="give a SERVING, or both --checkpoint and --card")


def test_a_stacks_facts_are_counted_as_citing_their_sources(tmp_path: Path) -> None:
    # The batched stack's memory.reserved cites LMDeploy's benchmark document; `sources` counted 0 facts citing it
    # and `audit --source` listed none (the stacks' facts were not read), so the citation could not be traced back.
    out = json.loads(invoke("audit", "--source", "lmdeploy-a100-fp16-benchmark", "--json").stdout)
    assert [(f["kind"], f["record"], f["path"], f["lock_path"]) for f in out["facts"]] == [
        ("stack", "lmdeploy-turbomind-2312", "memory.reserved", "stack.memory.reserved")]
    listing = {s["id"]: s for s in json.loads(invoke("sources", "--json").stdout)["sources"]}
    assert listing["lmdeploy-a100-fp16-benchmark"]["facts"] == 1
    # A lock made under a stack rests on its fitted facts: withdrawing the calibration's source reaches it.
    root = copy_root(tmp_path)
    lock = root / "locks" / "r1-4090-stack.lock.toml"
    result = invoke("lock", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "rtx_4090",
                    "--stack", STACK, "-o", str(lock), root=root)
    assert result.exit_code == 0, result.output
    out = json.loads(invoke("audit", "--source", "passprice-stack-calibration", "--json", root=root).stdout)
    # and the shipped r1-qwen7b-h200-llamacpp, made under llamacpp-cuda-2405 (stacklock 29)
    assert [x["name"] for x in out["locks"]] == ["r1-4090-stack", "r1-qwen7b-h200-llamacpp"]
    assert out["locks"][0]["rests_on"] and all(p.startswith("stack.") for p in out["locks"][0]["rests_on"])


# --- the ninth walkthrough's findings (same session) -----------------------------------------------------------------


def test_a_sweep_on_other_cards_says_their_rows_are_under_no_lock() -> None:
    result = invoke("sweep", "r1-qwen7b-h200", "--batches", "1", "--cards", "b200,h200_sxm_141gb")
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith(
        ": floors hold; its rows on h200_sxm_141gb are the locked serving's, their prices not compared with the "
        "locked ones (`passprice reproduce r1-qwen7b-h200` compares them); its rows on b200 are under no lock (the "
        "locks lock h200_sxm_141gb)\n"), result.stderr
    own = invoke("sweep", "r1-qwen7b-h200", "--batches", "1")
    # its own card only: nothing to add
    assert own.stderr.endswith(".lock.toml): floors hold; the serving is the locked one, its prices not compared "
                               "with the locked ones (`passprice reproduce r1-qwen7b-h200` compares them)\n"), \
        own.stderr


def test_max_batch_and_sweep_under_a_stack_warn_of_an_unmeasured_card() -> None:
    line = ("passprice: warning: stack llamacpp-cuda-2405 was fitted on runs on 11 cards (a100_pcie_80gb, "
            "a100_sxm4_80gb, a40, h100_pcie_80gb, l40s, rtx_3080, rtx_3090, rtx_4080, rtx_4090, rtx_6000_ada, "
            "rtx_a6000), not h200_sxm_141gb: its expected price here extrapolates across cards (with a card held out "
            "of the fit, its error was 6.9 % on average, 20.4 % at most)\n")
    result = invoke("max-batch", "r1-qwen7b-h200", "--stack", STACK)
    # walkthrough 21: then the price outside the stack's fitted span (test_newcomer_21)
    assert result.exit_code == 0 and result.stderr.startswith(line), result.output
    assert result.stderr[len(line):].startswith("passprice: warning: stack llamacpp-cuda-2405's expected price here "
                                                "is 0.2384 × the limit"), result.stderr
    swept = invoke("sweep", "r1-qwen7b-h200", "--batches", "1", "--cards", "h200_sxm_141gb,b200,rtx_4090",
                   "--stack", STACK)
    assert swept.exit_code == 0, swept.output
    assert ("not h200_sxm_141gb, b200: its expected prices there extrapolate across cards (with a card held out of "
            "the fit") in swept.stderr


def test_review_advice_names_the_commands_to_paste(tmp_path: Path) -> None:
    from passprice.enforce import command_span

    assert command_span(["passprice", "fact", "recompute", "h200_sxm_141gb"]) == (
        "`passprice fact recompute h200_sxm_141gb`")
    assert command_span(["passprice", "lock", "--update", "-o", "locks/a`b$(id).lock.toml"]) == (
        "`` passprice lock --update -o 'locks/a`b$(id).lock.toml' ``")


def test_an_editors_lock_file_is_no_registry_file(tmp_path: Path) -> None:
    # Emacs links .#FILE to user@host.pid beside a file whose buffer is modified; read as a lock that does not read,
    # it stopped every price of the registry (attacker round 15), and check failed on it.
    root = copy_root(tmp_path)
    (root / "locks" / ".#r1-qwen7b-h200.lock.toml").symlink_to("someone@host.4242:1700000000")
    (root / "facts" / "cards" / ".#h200_sxm_141gb.toml").symlink_to("someone@host.4242:1700000000")
    result = invoke("price", "r1-qwen7b-h200", "--json", root=root)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["lock"]["locks"] == ["r1-qwen7b-h200", "r1-qwen7b-h200-best",
                                                          "r1-qwen7b-h200-llamacpp"]
    checked = invoke("check", root=root)
    assert checked.exit_code == 0 and checked.stdout.endswith("all holds\n"), checked.output
    from passprice.gitread import read_by_passprice

    assert not read_by_passprice("locks/.#r1-qwen7b-h200.lock.toml")
    assert read_by_passprice("locks/.r1.lock.toml")  # a hidden lock is still a lock (slip 9)
