"""Citations an auditor could not trace (issue 12's gaps): a stream share borrowed from another card cites the source
of the borrowed figure, names the card it was measured on and derives from the figure, so ``audit --source`` finds
it and correcting the figure on the measuring card flags every borrower; the datasheets the GDDR cards' bandwidths
cite have their addresses and say how they were read, and a figure read in no copy of a datasheet is not
``published``."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from cli_helpers import REPO, copy_root, invoke
from passprice.registry import Root
from passprice.sources import load_sources

GDDR = ("a40", "l40s", "rtx_3080", "rtx_3090", "rtx_4080", "rtx_6000_ada", "rtx_a6000")
PCIE = {"h100_pcie_80gb": "H100 SXM5", "a100_pcie_80gb": "A100 SXM4"}


def card(root: Path, name: str) -> dict[str, Any]:
    return tomllib.loads((root / "facts" / "cards" / f"{name}.toml").read_text(encoding="utf-8"))


def fact(document: dict[str, Any], path: str) -> dict[str, Any]:
    table: Any = document
    for part in path.split("."):
        table = table[part]
    return dict(table)


def test_borrowed_shares_cite_the_figure_they_borrow_and_the_card_it_was_measured_on() -> None:
    for name in GDDR:
        for path in ("streams.rewrite", "streams.append"):
            f = fact(card(REPO, name), path)
            assert (f["provenance"], f["source"], f["value"]) == ("estimated", "xytpai-nvbench", 0.9145), (name, path)
            assert "RTX4090 column: float 4 921.850 GB/s, measured on a GeForce RTX 4090 (not on the" in f["locator"]
            assert f["note"].startswith("Borrowed, not measured on this card: the GeForce RTX 4090's measured "
                                        "read-and-write share")
            assert f["derivation"]["formula"] == "copy / peak"
            measured = fact(card(REPO, "rtx_4090"), path)
            assert f["derivation"]["inputs"]["copy"] == measured["derivation"]["inputs"]["copy"]
    for name, sibling in PCIE.items():
        measured = card(REPO, name.replace("_pcie_", "_sxm5_" if name.startswith("h100") else "_sxm4_"))
        for path, figure in (("streams.read", "dot"), ("streams.rewrite", "mul"), ("streams.append", "triad")):
            f = fact(card(REPO, name), path)
            assert (f["provenance"], f["source"]) == ("estimated", "azure-ai-benchmarking-guide"), (name, path)
            assert f", measured on the {sibling} (Azure ND " in f["locator"] and "not on the" in f["locator"]
            assert f["note"].startswith(f"Borrowed, not measured on this card: the {sibling}'s measured share")
            assert f["value"] == fact(measured, path)["value"]
            assert f["derivation"]["inputs"][figure] == fact(measured, path)["derivation"]["inputs"][figure]
    # No fact cites the card review for a figure it borrowed.
    for path in (REPO / "facts" / "cards").glob("*.toml"):
        assert "borrow the RTX 4090" not in path.read_text() and "borrows the H100 SXM5" not in path.read_text()


def test_audit_source_finds_every_borrower() -> None:
    result = invoke("audit", "--source", "xytpai-nvbench", "--json")
    assert result.exit_code == 0, result.output
    citing = sorted((f["record"], f["path"], f["provenance"]) for f in json.loads(result.stdout)["facts"])
    assert citing == sorted(
        [(n, p, "estimated") for n in GDDR for p in ("streams.rewrite", "streams.append")]
        + [("rtx_4090", p, "measured") for p in ("streams.rewrite", "streams.append")]
    )
    azure = json.loads(invoke("audit", "--source", "azure-ai-benchmarking-guide", "--json").stdout)["facts"]
    assert {(f["record"], f["path"]) for f in azure} >= {
        (n, p) for n in PCIE for p in ("streams.read", "streams.rewrite", "streams.append")
    }


def test_correcting_the_figure_on_the_measuring_card_flags_every_borrower(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    assert invoke("check", root=root).exit_code == 0
    path = root / "facts" / "cards" / "rtx_4090.toml"
    text = path.read_text(encoding="utf-8")
    old = 'derivation.inputs.copy = { value = 921.85, unit = "GB/s"'
    assert text.count(old) == 2
    path.write_text(text.replace(old, 'derivation.inputs.copy = { value = 900, unit = "GB/s"')
                    .replace("value = 0.9145\n", "value = 0.8929\n"), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 1
    problems = list(dict.fromkeys(line.strip() for line in result.stdout.splitlines()
                                  if line.strip().startswith("figure copy")))
    assert len(problems) == 1
    line = problems[0]
    assert line == (
        "figure copy of source xytpai-nvbench (README.md, '1. global_memory_bandwidth' table, RTX4090 column: float 4 "
        "921.850) is quoted with 2 values: 921.85 GB/s in "
        + ", ".join(f"facts/cards/{name}.toml (streams.rewrite, streams.append)" for name in GDDR)
        + "; 900 GB/s in facts/cards/rtx_4090.toml (streams.rewrite, streams.append); the facts derived from the copy "
        "that differs from the source are stale: quote it as the source gives it"
    )


def test_the_datasheets_are_located_and_say_how_they_were_read() -> None:
    sources = load_sources(Root(REPO))
    for source_id in ("nvidia-a40-datasheet", "nvidia-l40s-datasheet", "nvidia-rtx-a6000-datasheet",
                      "nvidia-rtx-6000-ada-datasheet"):
        assert sources[source_id].url not in (None, "unknown"), source_id
    for source_id, name in (("nvidia-a40-datasheet", "a40"), ("nvidia-l40s-datasheet", "l40s"),
                            ("nvidia-rtx-a6000-datasheet", "rtx_a6000")):
        record = tomllib.loads((REPO / "sources" / f"{source_id}.toml").read_text(encoding="utf-8"))["source"]
        assert record["copies"] and "was not opened" in record["read"]
        f = fact(card(REPO, name), "memory.bandwidth")
        assert (f["provenance"], f["source"]) == ("published", source_id) and "cop" in f["locator"]
    # No copy of the RTX 6000 Ada datasheet's table was read: its bandwidth is derived from the article read.
    f = fact(card(REPO, "rtx_6000_ada"), "memory.bandwidth")
    assert (f["provenance"], f["source"], f["value"]) == ("derived", "grafikkarten-rtx-6000-ada", 960)
    assert f["derivation"]["formula"] == "bus * rate / bits"
    nvbench = tomllib.loads((REPO / "sources" / "xytpai-nvbench.toml").read_text(encoding="utf-8"))["source"]
    assert nvbench["commit"] == "59ca77f88ca451094c06ee645e41386dea639a3e" and len(nvbench["sha256"]) == 64
