"""Walkthrough 40 (a mixture-of-experts user): what the MoE user read wrong or could not find — the float line
counting gpt-oss's expert biases as matrices, the header listing no experts a token, the glossary missing p_e and
the dense-checkpoint case of BadRouting, the review of a routing record's derived fact that does not follow (its
"recomputed" price was HEAD's, its advice a command that refuses routing records) — pinned by the figures they
print."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from cli_helpers import REPO, bad, copy_root, invoke
from passprice import glossary
from passprice.checkpoints import load_checkpoint
from passprice.registry import find_root
from passprice.report import float_matrices


def test_expert_biases_are_not_float_matrices() -> None:
    # gpt-oss-20b: 24 blocks, each an F32 router 2,880 × 32 (368,640 B) and three F32 expert biases (ffn_*_exps.bias,
    # [2,880, 32]), which the pricer adds, one row of each of a token's k experts: not matrices. The line read
    # "96 F32 (35.39 MB)", four times the routers alone.
    header = load_checkpoint(find_root(REPO), "gpt-oss-20b-mxfp4")
    assert float_matrices(header) == {"F32": (24, 24 * 2880 * 32 * 4)}
    text = invoke("price", "gpt-oss-20b-h200", "--routing", "uniform").stdout
    assert "  float         24 F32 (8.847 MB) matrices priced on the vector units" in text


def test_the_header_lists_the_experts_a_token_uses() -> None:
    out = invoke("header", "tests/data/qwen3next-80b-a3b-like.header.gguf").stdout.splitlines()
    rows = [line.split() for line in out if line.startswith("qwen3next.expert")]
    assert rows == [["qwen3next.expert_count", "512"], ["qwen3next.expert_used_count", "10"],
                    ["qwen3next.expert_feed_forward_length", "512"]]


def test_the_glossary_defines_p_e_and_the_dense_bad_routing() -> None:
    routing = glossary.lookup("p_e")
    assert routing.name == "routing" and glossary.lookup("token-slot").name == "routing"
    assert ("k · hot_share / (hot_experts · E) for each expert of the hot set, "
            "k · (1 − hot_share) / ((1 − hot_experts) · E) for each of the rest") in routing.long
    bad = glossary.lookup("BadRouting").long
    assert "or the checkpoint is dense (no `expert_count`): price a dense checkpoint without `--routing`" in bad


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)


def test_a_routing_record_s_derived_fact_is_recomputed_in_the_review(tmp_path: Path) -> None:
    repo = tmp_path / "registry"
    repo.mkdir()
    for folder in ("facts", "registry", "schema", "sources", "locks"):
        shutil.copytree(REPO / folder, repo / folder)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "registry")
    record = repo / "facts/routing/qwen3-30b-a3b-measured.toml"
    text = record.read_text(encoding="utf-8")
    assert text.count("value = 0.453125\n") == 1  # hot / experts = 58 / 128
    record.write_text(text.replace("value = 0.453125\n", "value = 0.35\n"), encoding="utf-8")
    out = invoke("diff", "main", root=repo)
    assert out.exit_code == 1, out.output
    lines = out.stdout.splitlines()
    assert "    tokens/s  10,354.4 → 10,966.8  (+5.914 %)  HEAD's price rests on derived facts that do not follow: " \
        "not a price to publish" in lines
    # Before: "recomputed  tokens/s 10,354.4 → 10,966.8 (+5.914 %)": HEAD's price, the record not recomputed.
    assert "    recomputed  tokens/s 10,354.4 → 10,354.4 (+0 %), as HEAD wrote it +5.914 %, once routing.hot_experts " \
        "(0.453125) follows from its inputs (recomputed as passprice would write them)" in lines
    # Before: "recompute them: `passprice fact recompute qwen3-30b-a3b-measured`", which refuses a routing record.
    assert "(write by hand what the derivation gives: hot_experts = 0.453125 in " \
        "facts/routing/qwen3-30b-a3b-measured.toml; passprice check names each input that moved)" in out.stderr
    assert "fact recompute" not in out.stderr


def test_new_serving_refuses_a_routing_no_price_of_it_could_take(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    # Before: written, and every price of it refused BadRouting.
    bad("new-serving", "dense-routed", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card",
        "h100_sxm5_80gb", "--routing", "uniform", root=root,
        says="registry/servings/dense-routed.toml: routing: 'uniform' names a routing record, but checkpoint "
             "'deepseek-r1-distill-qwen-7b-q4_k_m' is dense (no expert_count): every price of the serving would be "
             "refused BadRouting (nothing written): leave out --routing, or name the mixture of experts meant")
    measured = root / "facts/routing/qwen3-30b-a3b-measured.toml"
    text = measured.read_text(encoding="utf-8").replace('["qwen3-30b-a3b-q4_k_m"]', '["gpt-oss-20b-mxfp4"]')
    (root / "facts/routing/r128.toml").write_text(text, encoding="utf-8")
    bad("new-serving", "other-router", "--checkpoint", "gpt-oss-20b-mxfp4", "--card", "h100_sxm5_80gb",
        "--routing", "r128", root=root,
        says="registry/servings/other-router.toml: routing: 'r128' does not fit checkpoint 'gpt-oss-20b-mxfp4': r128 "
             "describes a router of 128 experts, the checkpoint has 32; every price of the serving would be refused "
             "BadRouting (nothing written)")
    assert not (root / "registry/servings/dense-routed.toml").exists()
    assert not (root / "registry/servings/other-router.toml").exists()


def test_new_serving_warns_of_a_mixture_of_experts_without_routing(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    made = invoke("new-serving", "moe", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h100_sxm5_80gb", root=root)
    assert made.exit_code == 0, made.output
    assert made.stderr == (
        "passprice: warning: qwen3-30b-a3b-q4_k_m is a mixture of 128 experts and the serving names no routing "
        "record: every price of it is refused Routed unless given --routing NAME: write it with --routing NAME "
        "(registered here for 128 experts, 8 a token: qwen3-30b-a3b-measured (measured; for "
        "qwen3-30b-a3b-q4_k_m), uniform "
        "(assumed; any checkpoint))\n")
    assert (root / "registry/servings/moe.toml").is_file()
    routed = invoke("new-serving", "moe2", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h100_sxm5_80gb",
                    "--routing", "uniform", root=root)
    assert routed.exit_code == 0 and routed.stderr == "", routed.output


def test_check_names_a_serving_file_whose_routing_no_price_could_take(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    serving = (root / "registry/servings/r1-qwen7b-h200.toml").read_text(encoding="utf-8")
    assert "\n[[contexts]]" in serving
    routed = serving.replace("\n[[contexts]]", '\nrouting = "uniform"\n\n[[contexts]]', 1)
    (root / "registry/servings/dense-routed.toml").write_text(routed, encoding="utf-8")
    out = invoke("check", root=root)
    assert out.exit_code == 1, out.output  # before: "all holds", exit 0
    assert ("  registry/servings/dense-routed.toml: routing: 'uniform' names a routing record, but checkpoint "
            "'deepseek-r1-distill-qwen-7b-q4_k_m' is dense (no expert_count): every price of the serving would be "
            "refused BadRouting") in out.stdout.splitlines(), out.output
