"""Findings 3, 5 and 7 of the 106th README-only walkthrough (issue 13), each kept as a reproducer: a citation an
auditor could not follow from what passprice prints (``audit LOCK`` named no stored excerpt, the Hopper whitepaper's
text copy was in its ``read`` prose only, the MI300X ``on_chip.capacity`` locator quoted nothing), a value moved
under a locator still quoting the old figure that ``diff``'s text summary did not flag, and ``reproduce`` listing
per-fact moves where ``diff`` groups a fact with the facts derived from it."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

H200_LOCK = "locks/r1-qwen7b-h200.lock.toml"
HOPPER_COPY = ("https://github.com/bojieli/ai-infra-book/blob/e524afec5ca6a61b8a79d0f83566ac88ab66b15c/"
               "references/text/nvidia-h100.txt")


# --- 3. a citation a user can follow --------------------------------------------------------------------------------


def test_3_the_audit_of_a_lock_names_each_cited_sources_stored_excerpt() -> None:
    # Before: under "citations, by source" each document had at:, read:, retrieved: and copies: only; the stored
    # excerpt a locator's quote is checked against was printed by `audit --source ID` alone, one source a run.
    lines = invoke("audit", H200_LOCK).stdout.splitlines()
    at = lines.index("  nvidia-hopper-whitepaper — NVIDIA H100 Tensor Core GPU Architecture "
                     "(gtc22-whitepaper-hopper), revision V1.04 (NVIDIA, 2022)")  # the revision: test_trace112.py
    assert lines[at + 3:at + 6] == [
        "    retrieved: unknown",
        f"    copies: {HOPPER_COPY}",
        "    stored excerpt: sources/excerpts/cite71-excerpt.txt (the lines quoted from the text read, "
        "from the registry's top folder)",
    ]
    azure = lines.index("  azure-ai-benchmarking-guide — Azure AI Benchmarking Guide (Microsoft (Azure), 2024-09-27)")
    assert lines[azure + 3:azure + 5] == [
        "    retrieved: 2026-12-01",  # no copies: none listed, no line
        "    stored excerpt: sources/excerpts/github-sources-excerpt.txt (the lines quoted from the text read, "
        "from the registry's top "
        "folder)",
    ]
    sources = json.loads(invoke("audit", H200_LOCK, "--json").stdout)["sources"]
    assert sources["nvidia-hopper-whitepaper"]["excerpt"] == "sources/excerpts/cite71-excerpt.txt"
    assert sources["nvidia-hopper-whitepaper"]["copies"] == [HOPPER_COPY]
    assert sources["azure-ai-benchmarking-guide"]["excerpt"] == "sources/excerpts/github-sources-excerpt.txt"
    assert all("excerpt" in s for s in sources.values())  # null where none is stored
    markdown = invoke("audit", H200_LOCK, "--format", "markdown").stdout
    assert (f"(retrieved: unknown; copies: {HOPPER_COPY}; stored excerpt: sources/excerpts/cite71-excerpt.txt "
            "(the lines quoted from the text read, from the registry's top folder))") in markdown


#: Each record whose ``read`` named the copy actually read (a repository's file at a commit) only in prose, and the
#: ``copies`` address it now lists.
COPIES_FROM_READ = {
    "nvidia-hopper-whitepaper": HOPPER_COPY,
    "amd-cdna3-whitepaper": ("https://github.com/bojieli/ai-infra-book/blob/8653dd660d1e3f2de17ba0015731ad8677a83567/"
                             "references/text/amd-cdna3.txt"),
    "gpu-container-handbook-routing-derisk": (
        "https://github.com/mcp-tool-shop-org/gpu-container/blob/a063be92993decceeacaf06c0f1667b442804e50/"
        "site/src/content/docs/handbook/derisk.md"),
    "nvidia-ampere-whitepaper": ("https://github.com/fmars/papers/blob/a1260982447f121c7e7719321db06ad39c9633ab/"
                                 "nvidia-ampere-architecture-whitepaper.pdf"),
    "nvidia-cuda-programming-guide": ("https://github.com/yolunghiu/cuda-learn/blob/"
                                      "3b915612c1a4acb8ecb9030721726437626fd43d/CUDA_C_Programming_Guide.pdf"),
    "mlcommons-inference-results-v6.0": ("https://github.com/gbeezybez/inference_results_v6.0/tree/"
                                         "ab33b2144a9f822f69d24f78569f993d195ee7e5"),
}
#: Commits a record's ``read`` names that are no copy of its document: (record, commit) -> what they are.
NOT_COPIES = {
    ("alvarobartt-cuda-device-query", "8c65f4245f93ae48f10a46a585c83b9997d987c3"): "the record's repository, "
    "src/main.rs's last change before the commit read",
    ("lmdeploy-a100-fp16-benchmark", "ebe90bc943eeace841b33fa54fbf1726311b63db"): "the record's repository, where "
    "the figures were first published",
    ("mlcommons-inference-results-v6.0", "a0bfcfbb17566c9650603444330a470db780d42a"): "a file's blob id",
    ("mlcommons-inference-results-v6.0", "232fbf90fc"): "the fork's head, where the file is unchanged",
    ("nvidia-ada-tuning-guide", "c6857c6d7b6329c731c5e0a48c03d517a34d0990"): "another document (the CUDA guide's "
    "table) said to agree",
    ("nvidia-ampere-tuning-guide", "c6857c6d7b6329c731c5e0a48c03d517a34d0990"): "another document (the CUDA guide's "
    "table) said to agree",
    ("nvidia-h100-datasheet", "e524afec5c"): "the H100 product page's copy: a record of its own "
    "(nvidia-h100-product-page), not the datasheet",
    ("xytpai-nvbench", "d8461c4b9e51497b5a1c16855c52f41024786a76"): "the record's repository, where the column was "
    "first committed",
}


def _record(source: str) -> dict:  # type: ignore[type-arg]
    text = (REPO / "sources" / f"{source}.toml").read_text(encoding="utf-8")
    record: dict = tomllib.loads(text)["source"]  # type: ignore[type-arg]
    return record


def test_3_a_copy_named_in_read_is_in_copies() -> None:
    # Before: the Hopper whitepaper's `at:` was a resources.nvidia.com landing page and the text actually read
    # (bojieli/ai-infra-book at e524afec) appeared only in `read`'s prose; 5 more records did the same.
    for source, copy in COPIES_FROM_READ.items():
        record = _record(source)
        assert copy in record["copies"], source
        commit = re.search(r"/(?:blob|tree)/([0-9a-f]{40})", copy)
        assert commit is not None and commit.group(1)[:10] in record["read"], source
    # every commit any record's read names is its repository's commit read, in one of its copies, or said above
    unlisted = []
    for path in sorted((REPO / "sources").glob("*.toml")):
        record = tomllib.loads(path.read_text(encoding="utf-8"))["source"]
        places = [record.get("commit") or "", *record.get("copies", [])]
        for commit in re.findall(r"\b(?=[0-9a-f]*[a-f])[0-9a-f]{10,40}\b", record["read"]):
            if not any(p.startswith(commit) or f"/{commit}" in p for p in places) \
                    and (path.stem, commit) not in NOT_COPIES:
                unlisted.append((path.stem, commit))
    assert unlisted == []


def test_3_the_audit_prints_the_hopper_copy_under_the_whitepaper() -> None:
    out = json.loads(invoke("audit", "--source", "nvidia-hopper-whitepaper", "--json").stdout)
    assert out["source"]["copies"] == [HOPPER_COPY]
    assert out["source"]["excerpt"] == "sources/excerpts/cite71-excerpt.txt"


def test_3_the_mi300x_on_chip_capacity_locator_quotes_the_white_paper() -> None:
    # Before: '4 MB L2 per XCD x 8 XCDs; 256 MB Infinity Cache; LDS 64 KB per CU; 304 CUs (…)': no quote, no
    # section, nothing a reader could find in the paper. Now each figure its derivation reads is quoted as the stored
    # copy (sources/excerpts/cite68-excerpt.txt, bojieli/ai-infra-book's text of the PDF) prints it.
    card = tomllib.loads((REPO / "facts" / "cards" / "mi300x.toml").read_text(encoding="utf-8"))
    fact = card["on_chip"]["capacity"]
    spans = re.findall(r"(?:(?<=^)|(?<=[\s(\[:;,]))'(.+?)'(?=$|[\s),;:\].])", fact["locator"])
    assert spans == ["incorporates 8 accelerator complex dies (XCD)", "The 38 CUs all share a 4MB L2 cache",
                     "128 channels or 256MB of data", "The LDS in the AMD CDNA 3 compute units remain at 64KB",
                     "304 compute units (CUs)"]
    excerpt = (REPO / "sources" / "excerpts" / "cite68-excerpt.txt").read_text(encoding="utf-8")
    paper = " ".join(excerpt.split("== amd-cdna3-whitepaper ", 1)[1].split())
    assert [s for s in spans if s not in paper] == []
    # each input the white paper gives is one of the quoted figures, value and unit
    inputs = fact["derivation"]["inputs"]
    figures = {"xcds": "8 accelerator", "l2": "4MB L2", "infinity": "256MB of data", "lds": "at 64KB",
               "cus": "304 compute units"}
    for name, figure in figures.items():
        assert "source" not in inputs[name] and any(figure in s for s in spans), name
        number = re.search(r"\d+", figure)
        assert number is not None and number.group() == str(inputs[name]["value"]), name
    assert inputs["vgpr"]["source"] == "amd-rocm-gpu-specs" and "amd-rocm-gpu-specs" in fact["locator"]


# --- 5. and 7.: a value moved under a locator still quoting the old figure; reproduce's moves grouped as diff's -------

H200_CARD = REPO / "facts" / "cards" / "h200_sxm_141gb.toml"
#: The H200's memory.bandwidth citation as shipped (source id, locator): kept as it is, only its figure moved, so the
#: test holds whichever record the fact cites (its locator quotes 'GPU Memory Bandwidth 4.8TB/s').
CITED = (tomllib.loads(H200_CARD.read_text(encoding="utf-8"))["memory"]["bandwidth"]["source"],
         tomllib.loads(H200_CARD.read_text(encoding="utf-8"))["memory"]["bandwidth"]["locator"])


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """BASE (the shipped files) and HEAD: the H200's memory.bandwidth set to 5.2 TB/s under its locator quoting
    4.8TB/s, the stream shares derived from it recomputed, the lock re-locked."""
    base = copy_root(tmp_path_factory.mktemp("base"))
    head = tmp_path_factory.mktemp("head") / "root"
    shutil.copytree(base, head)
    edited = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "5.2", "--unit", "TB/s",
                    "--provenance", "published", "--source", CITED[0], "--locator", CITED[1], root=head)
    assert edited.exit_code == 0, edited.output
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=head).exit_code == 0
    for lock in sorted((head / "locks").glob("*.lock.toml")):
        relocked = invoke("lock", "--update", "-o", str(lock), root=head)
        assert relocked.exit_code == 0, relocked.output
    return base, head


def test_5_the_text_summary_flags_a_value_moved_under_a_locator_quoting_the_old_figure(
        moved: tuple[Path, Path]) -> None:
    # Before: exit 0, and the text's summary ("passprice diff: BASE → HEAD", then "4 facts changed in 1 file, 1 to
    # verify in its source; …") carried no ⚠️, where the markdown's began "⚠️ **passprice diff**". Since fix53w the
    # quote, found in the stored excerpt and stating 4.8TB/s, is a MISMATCH of the value 5.2 TB/s: the review fails
    # (❌, exit 1), on it alone (the shares recomputed, every lock re-locked), and says so in its summary.
    base, head = moved
    assert "'GPU Memory Bandwidth 4.8TB/s" in CITED[1]  # the old figure, quoted (its row's H200 SXM cell)
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        "passprice: refused: 1 fact's quotes state another figure than its own (h200_sxm_141gb:memory.bandwidth): the "
        "value and the words it cites disagree; quote the words of the document stating the value, or set the value "
        "they state\n")
    lines = result.stdout.splitlines()
    assert lines[0] == f"❌ passprice diff: {base} → {head}"
    assert lines[1].startswith("4 facts changed in 1 file, 1 to verify in its source; 1 fact's quotes state another "
                               "figure than its own; 5 locks affected, 5 re-locked; "), lines[1]
    assert ("to verify: the value moved (4.8 TB/s → 5.2 TB/s) but its citation did not, and the locator quotes 4.8: "
            f"{CITED[0]}: {CITED[1]}; its quotes, found in the stored excerpt of the document it cites, state another "
            "figure than its own") in result.stdout
    markdown = invoke("diff", str(base), str(head), "--format", "markdown", root=head).stdout
    assert markdown.startswith("❌ **passprice diff**")
    # JSON's summary stays the sentence; the mark is the outputs' for people
    summary = json.loads(invoke("diff", str(base), str(head), "--json", root=head).stdout)["summary"]
    assert summary == lines[1]


def test_5_a_diff_with_nothing_to_verify_carries_no_mark(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    result = invoke("diff", str(root), str(root), root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"passprice diff: {root} → {root}"  # ✅ goes unsaid in the text
    assert invoke("diff", str(root), str(root), "--format", "markdown", root=root).stdout.startswith("✅ ")


def test_7_reproduce_groups_a_fact_with_the_facts_derived_from_it_as_diff_does(moved: tuple[Path, Path]) -> None:
    # Before: reproduce of BASE's lock listed memory.bandwidth: tokens/s +8.333 %, streams.append -0.2344 % and
    # streams.read -7.492 % alone each, where diff said the one change moved it -0.0008405 %.
    base, head = moved
    out = invoke("reproduce", str(base / H200_LOCK), root=head).stdout.splitlines()
    at = out.index("  each drifted fact alone (the pinned inputs with only it as today's, or it with the facts "
                   "derived from it):")
    assert out[at + 1:] == ["    memory.bandwidth with the 2 facts derived from it (streams.append, streams.read): "
                            "tokens/s -0.0008405 %"]
    assert "  first term that moved with today's inputs: memory_s; tokens/s -0.0008405 %" in out
    data = json.loads(invoke("reproduce", str(base / H200_LOCK), "--json", root=head).stdout)
    assert [(g["inputs"], g["derived"], g["first_moved"]) for g in data["facts_grouped"]] == [
        (["memory.bandwidth"], ["streams.append", "streams.read"], "tokens_per_s")]
    assert [a["path"] for a in data["facts_alone"]] == ["memory.bandwidth", "streams.append", "streams.read"]
    # diff words the same group's move the same way (one grouping: passprice.reproduce.grouped_moves)
    review = invoke("diff", str(base), str(head), root=head).stdout
    assert ("    alone     memory.bandwidth with the 2 facts derived from it (streams.read, streams.append): tokens/s "
            "-0.0008405 %") in review
