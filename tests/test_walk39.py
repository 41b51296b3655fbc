"""Findings of the 39th README-only walkthrough (a platform engineer pricing a Qwen2.5-14B and a Llama GGUF of their
own on an H100 and an H200 in a registry of their own): a header `synth -o` wrote, then `import`ed, lost its
synthetic mark without a word; words the outputs print that `passprice explain` did not know (`weakest provenance`,
`card memory`, `re-pin`, `WEAKER`, the review's `BASE`/`HEAD`, …), and `limit` explained as the stack's limit
where a price prints a context's."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import glossary

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
    ("extrapolated", "stack"),  # price --stack's warning: "the fit is extrapolated here"
    ("extrapolation", "stack"),
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
