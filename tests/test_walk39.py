"""Findings of the 39th README-only walkthrough (a platform engineer pricing a Qwen2.5-14B and a Llama GGUF of their
own on an H100 and an H200 in a registry of their own): a header `synth -o` wrote, then `import`ed, lost its
synthetic mark without a word; words the outputs print that `passprice explain` did not know (`weakest provenance`,
`card memory`, `re-pin`, `WEAKER`, the review's `BASE`/`HEAD`, …), and `limit` explained as the stack's limit
where a price prints a context's."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice import glossary
from passprice.cli import cli
from passprice.schema import _operations_hint

CONFIG = REPO / "examples" / "configs" / "llama-2-7b.json"


def _origin(root: Path, name: str) -> str:
    entry = tomllib.loads((root / "registry" / "checkpoints" / f"{name}.toml").read_text(encoding="utf-8"))
    return str(entry["entry"]["origin"])


def test_synth_to_a_file_says_how_to_import_it_marked_synthetic(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    header = tmp_path / "l2.gguf"
    made = invoke("synth", str(CONFIG), "--mix", "Q8_0", "-o", str(header), root=root)
    assert made.exit_code == 0, made.output
    assert made.stdout.splitlines()[2] == (
        f"  not imported: `passprice synth {CONFIG} --mix Q8_0 --import NAME` imports it with an origin that says it "
        "is synthetic; `passprice import` of the file cannot tell it from a real checkpoint's header (its entry "
        "would say so only with --origin)"
    )
    # what the line warns of: the file imported reads as a real one, the command it gives marks the entry synthetic
    assert invoke("import", str(header), "--name", "as-file", root=root).exit_code == 0
    assert not _origin(root, "as-file").startswith("Synthetic")
    assert invoke("synth", str(CONFIG), "--mix", "Q8_0", "--import", "as-synth", root=root).exit_code == 0
    assert _origin(root, "as-synth").startswith("Synthetic, header only")
    # imported in the same command: nothing to say
    both = invoke("synth", str(CONFIG), "-o", str(tmp_path / "b.gguf"), "--import", "both", root=root)
    assert both.exit_code == 0, both.output
    assert "not imported" not in both.stdout


def test_synth_hint_keeps_the_options_that_change_the_header(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    config = REPO / "examples" / "configs" / "deepseek-v3.json"
    made = invoke("synth", str(config), "--mla", "joined", "--no-mtp", "-o", str(tmp_path / "d.gguf"), root=root)
    assert made.exit_code == 0, made.output
    assert (f"`passprice synth {config} --mix Q4_K_M --mla joined --no-mtp --import NAME`" in made.stdout), made.stdout


@pytest.mark.parametrize(("word", "term"), [
    ("weakest provenance", "provenance"),  # compare's column
    ("card memory", "held"),  # price: "held 140.9 GB of 141 GB card memory", "(all in card memory)"
    ("all in card memory", "held"),
    ("embedding rows", "bytes/pass"),  # price: "4.372 GB of weights and embedding rows"
    ("re-pin", "price moved"),  # diff: "re-pin (passprice lock --update …)"
    ("WEAKER", "weakened"),  # diff: "published → estimated (WEAKER)"
    ("still follows", "derivation"),  # diff: "derived from it: streams.rewrite: still follows"
    ("extrapolated", "extrapolation"),  # price --stack's warning: "the fit is extrapolated here"
    ("extrapolation", "extrapolation"),
    ("synthetic", "origin"),  # audit: "a synthetic header: built from …"
    ("BASE", "review"),  # diff's first line: "merge base with master (…) → work tree"
    ("HEAD", "review"),
    ("work tree", "review"),
    ("merge base", "review"),
    ("locks affected", "review"),
    ("diff", "review"),
    ("limit", "limit"),  # a price's "of a 4,096 limit", and the card's limit
    ("× limit", "stack"),
    ("context limit", "context"),
    ("digest", "lock digest"),  # audit LOCK: "lock  NAME: digest sha256:…; pricing model sha256:…"
    ("lock digest", "lock digest"),
    ("by hand", "by hand"),  # audit: "by hand: tokens/s = batch × emitted_per_sequence / pass time = …"
    ("re-derived", "elasticity"),  # audit: "inputs of other rows' derivations: memory.bandwidth … +0.000 re-derived"
    ("inputs of other rows' derivations", "elasticity"),
])
def test_words_the_walkthrough_outputs_print_are_explained(word: str, term: str) -> None:
    assert glossary.lookup(word).name == term
    said = invoke("explain", word)
    assert said.exit_code == 0, said.output
    assert said.stdout.startswith(f"{term}: ")


def test_limit_names_both_limits_and_where_each_is_explained() -> None:
    said = invoke("explain", "limit").stdout
    assert "A context's `limit`" in said and "The card's limit" in said
    assert "passprice explain context" in said and "passprice explain stack" in said


def test_review_entry_gives_the_exit_status_ci_acts_on() -> None:
    long = glossary.TERMS["review"].long
    assert "It exits 1 when" in long and "2 when a file does not read on HEAD" in long
    assert "merge base with `main`" in long


def test_the_readme_glossary_holds_the_new_terms() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"- **limit**: {glossary.TERMS['limit'].long}\n" in readme
    assert f"- **review**: {glossary.TERMS['review'].long}\n" in readme


def test_fact_set_says_what_changed_when_the_figure_did_not(tmp_path: Path) -> None:
    # "streams.read: 0.9333 (measured) -> 0.9333 (measured)" of an edit that changed the note and the citation
    root = copy_root(tmp_path)
    common = ["fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9333", "--unit", "1", "--provenance",
              "measured", "--source", "azure-ai-benchmarking-guide"]
    cited = invoke(*common, "--locator", "Azure_Results/ND_H200_v5_results.md: Dot 4.48 TB/s", "--note",
                   "our note", root=root)
    assert cited.exit_code == 0, cited.output
    # left51: the derivation the edit dropped reads "removed", as the review's change column says it
    assert cited.stdout == ("facts/cards/h200_sxm_141gb.toml: streams.read: 0.9333 (measured) -> 0.9333 (measured) "
                            "(citation, note changed, derivation removed)\n")
    noted = invoke(*common, "--locator", "Azure_Results/ND_H200_v5_results.md: Dot 4.48 TB/s", "--note", "other",
                   root=root)
    assert noted.stdout.endswith("-> 0.9333 (measured) (note changed)\n"), noted.stdout
    same = invoke(*common, "--locator", "Azure_Results/ND_H200_v5_results.md: Dot 4.48 TB/s", "--note", "other",
                  root=root)
    assert same.stdout.endswith("-> 0.9333 (measured) (unchanged)\n"), same.stdout
    moved = invoke(*common[:5], "0.92", *common[6:], "--locator", "a place: 0.92", root=root)
    # left51: a moved figure's line names the parts it does not show too: the citation, and the note it dropped
    assert moved.stdout.startswith("facts/cards/h200_sxm_141gb.toml: streams.read: 0.9333 (measured) -> 0.92 "
                                   "(measured) (citation changed, note removed)\n"), moved.stdout


@pytest.mark.parametrize(("unit", "said"), [
    ("TFLOPS", "a datasheet's TFLOPS counts a multiply-add as two operations, so give half its figure in TMAC/s, or "
               "derive it from the quoted figure with an input of 2 FLOP/MAC (passprice explain derivation)"),
    ("TOPS", "a datasheet's TOPS counts a multiply-add as two operations, so give half its figure in TMAC/s, or "
             "derive it from the quoted figure with an input of 2 op/MAC (passprice explain derivation)"),
    ("GFLOP/s", "so give half its figure in GMAC/s"),
])
def test_a_rate_in_operations_where_multiply_adds_belong_says_how_to_write_it(unit: str, said: str) -> None:
    allowed = ["MAC/s", "GMAC/s", "TMAC/s", "PMAC/s"]
    assert said in _operations_hint(unit, allowed)
    assert _operations_hint(unit, ["B/s", "GB/s", "TB/s"]) == ""  # a bandwidth's unit: no such hint
    assert _operations_hint("TMAC", allowed) == ""


def test_fact_set_of_a_tflops_figure_gives_the_hint(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    before = (root / "facts" / "cards" / "h200_sxm_141gb.toml").read_bytes()
    lines = bad("fact", "set", "h200_sxm_141gb", "tensor.f8", "--value", "1979", "--unit", "TFLOPS", "--provenance",
                "published", "--source", "nvidia-h200-datasheet", "--locator", "FP8 Tensor Core 3,958 TFLOPS",
                root=root)
    assert lines == [
        f"passprice: error: {root}/facts/cards/h200_sxm_141gb.toml: tensor.f8.unit: 'TFLOPS' is not allowed here "
        "(one of 'MAC/s', 'GMAC/s', 'TMAC/s', 'PMAC/s'): a datasheet's TFLOPS counts a multiply-add as two "
        "operations, so give half its figure in TMAC/s, or derive it from the quoted figure with an input of 2 "
        "FLOP/MAC (passprice explain derivation)"
    ]
    assert (root / "facts" / "cards" / "h200_sxm_141gb.toml").read_bytes() == before


def test_import_of_a_model_configuration_points_to_synth(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    config = tmp_path / "config.json"
    config.write_bytes(b"\n  " + CONFIG.read_bytes())
    assert bad("import", str(config), "--name", "l2", root=root) == [
        f"passprice: error: {config}: byte 0: bad magic: a GGUF file starts with b'GGUF'; this file is JSON: a model "
        f"configuration (config.json) is built into a header-only checkpoint by `passprice synth {config} --import "
        "l2`"
    ]
    assert bad("import", str(config), root=root)[0].endswith(f"`passprice synth {config} --import NAME`")
    other = tmp_path / "x.gguf"
    other.write_bytes(b"not a header")
    assert bad("import", str(other), "--name", "x", root=root) == [
        f"passprice: error: {other}: byte 0: bad magic: a GGUF file starts with b'GGUF'"
    ]
    assert not (root / "registry" / "checkpoints" / "l2.toml").exists()


def test_diff_of_a_revision_that_names_nothing_lists_the_branches(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "master"], cwd=repo, check=True)
    for folder in ("facts", "registry"):  # a passprice root, empty
        (repo / folder).mkdir()
        (repo / folder / "README.md").write_text("empty\n", encoding="utf-8")
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], cwd=repo, check=True)
    subprocess.run([*git, "branch", "pr1"], cwd=repo, check=True)
    assert bad("diff", "main", "HEAD", root=repo) == [
        f"passprice: error: main: neither a folder nor a revision of the git checkout at {repo} (its branches: "
        "master, pr1)"
    ]
    # a revision expression names no branch: said as before
    assert bad("diff", "HEAD~5", root=repo) == [
        f"passprice: error: HEAD~5: neither a folder nor a revision of the git checkout at {repo}"
    ]


def test_the_audit_s_re_derived_figure_is_the_one_the_glossary_quotes() -> None:
    said = invoke("audit", "r1-qwen7b-h200")
    assert said.exit_code == 0, said.output
    row = "memory.bandwidth               4.8 TB/s  published   published  at floor      +1.000      +0.000"
    assert row in said.stdout
    assert "memory.bandwidth (of streams.read, streams.append) +0.000 re-derived" in said.stdout
    assert "(r1-qwen7b-h200's `memory.bandwidth`, +1.000 alone, is +0.000 re-derived;" in glossary.TERMS[
        "elasticity"].long


def test_check_says_why_a_lock_s_drift_was_not_judged(tmp_path: Path) -> None:
    # A teammate's registry held the lock's checkpoint under another name, and not its serving: every file read,
    # and check said "drift: not judged (today's files do not read)" without naming what did not.
    root = copy_root(tmp_path)
    assert invoke("synth", str(CONFIG), "--mix", "Q8_0", "--import", "l2q8", root=root).exit_code == 0
    made = invoke("new-serving", "mine", "--checkpoint", "l2q8", "--card", "h100_sxm5_80gb", "--batch", "8",
                  "--description", "a serving of our own", root=root)
    assert made.exit_code == 0, made.output
    assert invoke("lock", "mine", root=root).exit_code == 0
    (root / "registry" / "servings" / "mine.toml").unlink()
    entries = root / "registry" / "checkpoints"
    text = (entries / "l2q8.toml").read_text(encoding="utf-8").replace('name = "l2q8"', 'name = "ours"', 1)
    (entries / "ours.toml").write_text(text, encoding="utf-8")
    (entries / "l2q8.toml").unlink()
    checked = invoke("check", root=root)
    assert checked.exit_code == 1, checked.output
    lines = checked.stdout.splitlines()
    at = lines.index("lock mine (locks/mine.lock.toml, locks serving mine): FAILS")
    assert lines[at + 3].startswith("  checkpoint: l2q8: the pinned content "), lines[at + 3]
    assert lines[at + 3].endswith(" is now entry ours (renamed or moved)"), lines[at + 3]
    assert lines[at + 4] == ("  floors: serving mine, which the lock locks, is not registered; restore it or remove "
                             "the lock")
    assert lines[at + 5].startswith(
        "  drift: not judged (today's inputs do not read: lock: serving: checkpoint: checkpoint 'l2q8': not found in "
        "registry/checkpoints"), lines[at + 5]


def test_reproduce_names_the_header_file_the_lock_pins(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    header = tmp_path / "l2.gguf"
    assert invoke("synth", str(CONFIG), "--mix", "Q8_0", "-o", str(header), root=root).exit_code == 0
    assert invoke("import", str(header), "--name", "l2", root=root).exit_code == 0
    sha = tomllib.loads((root / "registry" / "checkpoints" / "l2.toml").read_text(encoding="utf-8"))["header"][
        "sha256"]
    assert invoke("lock", "--checkpoint", "l2", "--card", "h200_sxm_141gb", "--name", "ours", root=root).exit_code == 0
    (root / "registry" / "checkpoints" / "l2.toml").unlink()
    result = invoke("reproduce", "locks/ours.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("    checkpoint "))
    assert line.endswith(f": import the pinned header again (passprice import FILE --name l2; the lock pins the header "
                         f"l2.gguf, sha256 {sha[:12]}…), or re-lock through review"), line
    data = invoke("reproduce", "locks/ours.lock.toml", "--json", root=root).stdout
    assert set(json.loads(data)["checkpoint"]) == {"status", "ref", "pinned", "found", "today", "error", "unread",
                                                   "moved_to", "packaged"}  # packaged: null (walk107)


def test_best_s_headroom_line_names_the_command_that_prices_a_smaller_batch() -> None:
    # best's line said "a smaller --batch", an option best does not take
    best = invoke("best", "r1-qwen7b-h200")
    assert best.exit_code == 0, best.output
    assert ("  headroom      0.1 % of card memory left: passprice counts no runtime workspace, activations or "
            "fragmentation, so leave room (seek the best batch within a share of card memory with `--memory-use 0.9`, "
            "price a smaller batch with `passprice price … --batch N`, or give a smaller "
            "--limit) before serving this, or price it under a serving stack (--stack S), whose memory.reserved is "
            "what its runtime keeps") in best.stdout.splitlines()
    assert "--batch" not in {o for p in cli.commands["best"].params for o in getattr(p, "opts", [])}
    price = invoke("price", "r1-qwen7b-h200", "--batch", "580")
    assert "so leave room (a smaller --batch or --limit) before serving this" in price.stdout
