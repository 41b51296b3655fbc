"""A new user's findings (README only, ``pip install .``) on the three uses, each reproduced here.

1. ``price r1-qwen7b-h200 --position 4096`` of a 4,096 limit was priced, reading and writing 4,097 × 57,344 B a
   sequence (a pass at position p writes row p: one past the limit), and a paged sweep at that position held 4,104
   positions a sequence (the half page added to pages exactly full). A position at its limit is refused
   (``BadContexts``), and a paged class holds at most the whole pages its limit needs.
2. A changed fact's quote NOT FOUND in its stored excerpt read "⚠️ … 1 to verify", exit 0: it is counted in the
   summary and fails the review.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

#: Bytes one cached position takes in r1-qwen7b (28 layers × 4 KV heads × 128 × K and V × 2 B) and in
#: qwen3-30b-a3b (48 layers × 4 × 128 × 2 × 2 B).
R1_POSITION = 28 * 4 * 128 * 2 * 2
QWEN3_POSITION = 48 * 4 * 128 * 2 * 2


def _price(*args: str) -> dict[str, object]:
    result = invoke("price", *args, "--json")
    assert result.exit_code == 0, result.output
    said: dict[str, object] = json.loads(result.stdout)
    return said


# --- (1) a position at its limit -------------------------------------------------------------------------------------


def test_1_a_position_at_its_limit_is_refused_by_name() -> None:
    assert R1_POSITION == 57_344
    result = invoke("price", "r1-qwen7b-h200", "--position", "4096")
    assert result.exit_code == 1, result.output  # was 0, 234.9 MB a sequence: 4,097 positions
    assert result.stderr.splitlines()[-1] == (
        "passprice: refused: BadContexts: bad context mix: position 4096 is not below its limit 4096: a pass at a "
        "position writes that position's row, and a sequence allowed 4096 positions holds rows 0 to 4095: raise "
        "--limit or lower --position")
    refused = json.loads(invoke("price", "r1-qwen7b-h200", "--position", "4096", "--json").stdout)
    assert refused["refusal"] == "BadContexts"
    # its last position reads 4,095 cached positions and writes its own: 4,096 in all, the limit
    assert _price("r1-qwen7b-h200", "--position", "4095")["sequence_bytes"] == 4096 * R1_POSITION


def test_1_a_paged_class_holds_at_most_the_pages_its_limit_needs() -> None:
    low = _price("qwen3-30b-a3b-h200", "--position", "2047")
    last = _price("qwen3-30b-a3b-h200", "--position", "4095")
    near = _price("qwen3-30b-a3b-h200", "--position", "4090")
    assert last["sequence_bytes"] == 4096 * QWEN3_POSITION
    # 64 sequences: 2,047 + 8 positions held at 2,047, 256 whole pages of 16 (4,096) at 4,095, not 4,103
    assert last["held_bytes"] - low["held_bytes"] == 64 * QWEN3_POSITION * (4096 - 2055)  # type: ignore[operator]
    assert near["held_bytes"] == last["held_bytes"]  # 4,090 + 8 past 4,096 too
    # the shipped lock's price is unchanged: position 2,048 of 4,096 holds 2,056 a sequence, as it did
    assert invoke("reproduce", "qwen3-30b-a3b-h200").exit_code == 0


def _sweep(*positions: int) -> dict[float, dict[str, str]]:
    result = invoke("sweep", "qwen3-30b-a3b-h200", "--positions", ",".join(map(str, positions)), "--batches", "64")
    assert result.exit_code == 0, result.output
    return {float(row["position"]): row for row in csv.DictReader(io.StringIO(result.stdout))}


def test_1_a_sweep_refuses_a_position_at_its_limit_and_holds_what_price_holds() -> None:
    held = _price("qwen3-30b-a3b-h200", "--position", "4095")["held_bytes"]
    exact = _sweep(4095, 4096)  # the exact path (64 positions or fewer)
    columns = _sweep(*range(0, 64 * 65, 64), 4095)  # the column path (more than 64 positions: 0 … 4,096)
    assert len(columns) > 64
    for rows in (exact, columns):
        assert rows[4096.0]["refusal"] == "BadContexts"  # was priced, 4,104 positions held a sequence
        assert float(rows[4095.0]["held_bytes"]) == held


def test_1_a_serving_file_at_its_limit_is_bad_input_naming_the_key(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / "registry/servings/r1-qwen7b-h200.toml"
    text = path.read_text(encoding="utf-8")
    assert "position = 2048" in text
    path.write_text(text.replace("position = 2048", "position = 4096", 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert ("registry/servings/r1-qwen7b-h200.toml: contexts.0.position: 4096 is not below the class's limit 4096: "
            "a pass at a position writes that position's row, and a sequence allowed 4096 positions holds rows 0 to "
            "4095") in result.stderr, result.stderr


# --- (2) a changed fact's quote NOT FOUND in its stored text ---------------------------------------------------------

CARD = "facts/cards/h200_sxm_141gb.toml"
QUOTE = "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry (no code of its own: priced by the running package), its first commit the checkout's."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def test_2_a_quote_not_found_is_counted_and_fails_the_review(repo: Path) -> None:
    card = repo / CARD
    card.write_text(card.read_text(encoding="utf-8").replace(QUOTE, "'GPU Memory Bandwidth 4.9TB/s 4.9TB/s'", 1),
                    encoding="utf-8")
    _git(repo, "commit", "-qam", "recite")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output  # was 0 once the locks were re-locked: "⚠️ … 1 to verify"
    lines = result.stdout.splitlines()
    assert lines[0].startswith("❌ passprice diff: ")
    assert lines[1].startswith("1 fact changed in 1 file, 1 to verify in its source; 1 quote NOT FOUND in its stored "
                               "text; "), lines[1]
    assert ("passprice: refused: 1 quote NOT FOUND in its stored text (h200_sxm_141gb:memory.bandwidth): the stored "
            "excerpt is the registry's record of the words read; correct the quote to the document's words, or add "
            "the lines it was read from to the source's stored excerpt and re-pin it (`passprice audit --source "
            "nvidia-h200-product-page` checks each)") in result.stderr.splitlines(), result.stderr
    said = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    assert said["exit_status"] == 1
    assert "1 quote NOT FOUND in its stored text" in said["summary"]
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout
    assert markdown.startswith("❌ **passprice diff**") and "1 quote NOT FOUND in its stored text" in markdown


# --- (3) a derivation's spans found, its own locator quoting nothing ------------------------------------------------


def test_3_audit_says_the_derivation_s_spans_were_checked_and_only_the_locator_quotes_nothing() -> None:
    result = invoke("audit", "--source", "azure-ai-benchmarking-guide")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # was: "not checked (4 of 4 quoted spans found in the stored text; its locator quotes nothing)"
    assert ("  b200:streams.rewrite: not checked (its derivation's figures checked: 4 of 4 quoted spans found in the "
            "stored text; only its own locator quotes nothing)") in lines
    assert "  sn40l:streams.rewrite: not checked (its locator quotes nothing)" in lines  # no derivation: as it was
    checks = {f"{f['record']}:{f['path']}": f["quote_check"]
              for f in json.loads(invoke("audit", "--source", "azure-ai-benchmarking-guide", "--json").stdout)["facts"]}
    assert checks["b200:streams.rewrite"]["state"] == "not checked"
    assert (checks["b200:streams.rewrite"]["spans"], checks["b200:streams.rewrite"]["found"]) == (4, 4)
