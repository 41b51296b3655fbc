"""A new user's findings (README only, ``pip install .``) on issue 13's review and audit uses, each reproduced in a
registry started as the README starts one (``passprice init --examples``, committed in git).

1. ``fact set h200_sxm_141gb vector … --source nvidia-h200-datasheet`` (a quote checked against the product page's
   stored excerpt moved to a document with no stored text): the review said "derived → published (stronger)" and
   nothing of the quote no longer being checked, which ``audit`` says ("not checked (… nvidia-h200-datasheet has no
   stored text)"). The fact's line says so now, and it is to verify; and its question says how the quoted 67 TFLOPS
   reads as its 33.5 TMAC/s (two operations a multiply-add), which it left to the reader.
2. A card copied from ``h100_sxm5_80gb.toml`` with only its name and vendor changed: "17 facts added in 1 new
   file", its 80 GB still under the H100's product-page column, nothing to verify. Each added fact whose own
   citation is another card's fact's is asked now, counted once in the summary.
3. ``compare qwen3-30b-a3b-h200`` ranked the H200 at batch 605 with no word that 304 fit with every sequence at its
   last position, which ``best`` says: a ``spread`` table, and each ``--json`` row's ``spread``.
4. ``simulate … --synthetic 1000 --seed 2 --rate 200`` read "and 1 outputs"; ``speculate --tokens 0..3`` was refused
   without saying that row 0 (no drafting) is always shown.
5. ``price r1-qwen7b-h200 --stack llamacpp-cuda-2405`` showed "array 256.5 µs" priced at the card's vector rate (the
   stack's ``integer_matrices = "vector"``): the table names the rate.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import bad, invoke


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry as the README starts one: ``passprice init --examples``, then git init and a first commit."""
    root = tmp_path_factory.mktemp("fix166") / "mine"
    assert invoke("init", "--examples", str(root)).exit_code == 0
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "start")
    return root


@pytest.fixture
def mine(started: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`started` to change."""
    root = tmp_path / "mine"
    shutil.copytree(started, root, symlinks=True)
    return root


# --- (1) a quote moved off a stored excerpt ------------------------------------------------------------------------

DATASHEET_FP32 = "Technical Specifications table, H200 SXM column: 'FP32 67 TFLOPS'"


def test_1_the_review_says_the_quote_can_no_longer_be_checked(mine: Path) -> None:
    result = invoke("fact", "set", "h200_sxm_141gb", "vector", "--value", "33.5", "--unit", "TMAC/s",
                    "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator", DATASHEET_FP32,
                    root=mine)
    assert result.exit_code == 0, result.output
    audit = invoke("audit", "r1-qwen7b-h200", root=mine)
    assert audit.exit_code == 0, audit.output
    assert ("  vector: not checked (0 of 1 quoted span found in the stored text; nvidia-h200-datasheet has no stored "
            "text)") in audit.stdout.splitlines()
    review = invoke("diff", root=mine)
    assert review.exit_code == 0, review.output  # to verify, never failed
    lines = review.stdout.splitlines()
    assert lines[1] == ("1 fact changed in 1 file, 1 to verify in its source; 5 locks affected, 5 to re-pin (lock "
                        "--update) for check --frozen; 5 locks unaffected")
    # was "… derived → published (stronger)" alone
    assert lines[4] == ("  vector  33.5 TMAC/s → 33.5 TMAC/s  (provenance, citation changed, derivation removed)  "
                        "derived → published (stronger); its quote can no longer be checked: nvidia-h200-datasheet "
                        "has no stored text")
    assert lines[6].startswith(
        "          to verify: its quote can no longer be checked: nvidia-h200-datasheet has no stored text (its old "
        "citation's quotes were looked up in a stored excerpt): read the quoted words in the document itself; the "
        "provenance is stronger (derived → published): does nvidia-h200-datasheet: Technical Specifications table, "
        "H200 SXM column: 'FP32 67 TFLOPS' state 33.5 TMAC/s, published?"), lines[6]
    # 67 TFLOPS against 33.5 TMAC/s: the question was asked with the factor of two left to the reader
    assert lines[6].endswith("state it, published? (its locator's 67 TFLOPS is 33.5 TMAC/s, two operations a "
                             "multiply-add)"), lines[6]
    data = json.loads(invoke("diff", "--format", "json", root=mine).stdout)
    fact = data["files"][0]["facts"][0]
    assert fact["quote_no_longer_checked"] == ["nvidia-h200-datasheet has no stored text"]
    assert fact["quote_check"]["state"] == "not checked"
    assert fact["to_verify"].startswith("its quote can no longer be checked")


def test_1_a_quote_never_checked_is_not_said_to_be_no_longer(mine: Path) -> None:
    # array cites the datasheet before and after: its quote was never looked up in a stored text
    result = invoke("fact", "set", "h200_sxm_141gb", "array", "--value", "989.5", "--unit", "TMAC/s",
                    "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator",
                    "Technical Specifications table, H200 SXM column: 'INT8 Tensor Core 1,979 TOPS' (dense)",
                    root=mine)
    assert result.exit_code == 0, result.output
    review = invoke("diff", root=mine)
    assert review.exit_code == 0, review.output
    assert "can no longer be checked" not in review.stdout
    assert review.stdout.splitlines()[4].endswith("derived → published (stronger)")
    data = json.loads(invoke("diff", "--format", "json", root=mine).stdout)
    assert data["files"][0]["facts"][0]["quote_no_longer_checked"] == []


def test_1_a_quote_moved_to_another_stored_excerpt_is_still_checked(mine: Path) -> None:
    # the product page's own row, reworded: still looked up in its stored excerpt (found)
    result = invoke("fact", "set", "h200_sxm_141gb", "memory.capacity", "--value", "141", "--unit", "GB",
                    "--provenance", "published", "--source", "nvidia-h200-product-page", "--locator",
                    "Specifications table, H200 SXM column: 'GPU Memory 141GB 141GB'", root=mine)
    assert result.exit_code == 0, result.output
    data = json.loads(invoke("diff", "--format", "json", root=mine).stdout)
    fact = data["files"][0]["facts"][0]
    assert fact["quote_check"]["state"] == "checked"
    assert fact["quote_no_longer_checked"] == []


# --- (2) a card copied with its citations --------------------------------------------------------------------------


def _acme(root: Path) -> None:
    text = (root / "facts/cards/h100_sxm5_80gb.toml").read_text(encoding="utf-8")
    text = text.replace('name = "NVIDIA H100 SXM5 80GB"', 'name = "Acme X1"', 1).replace(
        'vendor = "NVIDIA"', 'vendor = "Acme"', 1)
    (root / "facts/cards/acme_x1.toml").write_text(text, encoding="utf-8")


def test_2_a_copied_citation_is_to_verify(mine: Path) -> None:
    _acme(mine)
    review = invoke("diff", root=mine)
    assert review.exit_code == 0, review.output
    lines = review.stdout.splitlines()
    # was "17 facts added in 1 new file; no lock affected; …"
    assert lines[1] == ("17 facts added in 1 new file, 16 to verify in their sources (16 copied citations: each cites "
                        "what another card's fact cites); no lock affected; 10 warnings of check on HEAD; 10 locks "
                        "unaffected")
    at = lines.index("  memory.capacity    – → 80 GB  (added)  published")
    assert lines[at + 2] == (
        "                     to verify: a copied citation: it cites what h100_sxm5_80gb's memory.capacity cites: "
        "does nvidia-h100-product-page: Product Specifications table, H100 SXM column (a row: its label, the H100 SXM "
        "figure, the H100 NVL figure): 'GPU Memory 80GB 94GB' state 80 GB of what acme_x1 describes?")
    # the assumed placeholder every real card cites is no copied figure
    at = lines.index("  host.capacity      – → 512 GiB  (added)  assumed")
    assert not lines[at + 2].lstrip().startswith("to verify:"), lines[at + 2]
    data = json.loads(invoke("diff", "--format", "json", root=mine).stdout)
    facts = {c["path"]: c for c in data["files"][0]["facts"]}
    assert facts["memory.capacity"]["copied_citation"] == "h100_sxm5_80gb's memory.capacity"
    assert facts["host.capacity"]["copied_citation"] is None
    assert sum(c["copied_citation"] is not None for c in facts.values()) == 16
    assert data["exit_status"] == 0


def test_2_a_card_citing_its_own_places_is_not_a_copy(mine: Path) -> None:
    # one fact of the copy re-cited to a place no other card cites: that fact is no copied citation
    _acme(mine)
    result = invoke("fact", "set", "acme_x1", "memory.capacity", "--value", "96", "--unit", "GB", "--provenance",
                    "estimated", "--source", "passprice-card-review", "--locator",
                    "Acme X1 design review: 6 stacks x 16 GB", root=mine)
    assert result.exit_code == 0, result.output
    data = json.loads(invoke("diff", "--format", "json", root=mine).stdout)
    facts = {c["path"]: c for c in data["files"][0]["facts"]}
    assert facts["memory.capacity"]["copied_citation"] is None
    assert facts["memory.bandwidth"]["copied_citation"] == "h100_sxm5_80gb's memory.bandwidth"


# --- (3) compare's spread ------------------------------------------------------------------------------------------


def test_3_compare_says_which_batches_fit_only_while_positions_stay_spread(started: Path) -> None:
    cards = "h200_sxm_141gb,mi300x,h100_sxm5_80gb"
    result = invoke("compare", "qwen3-30b-a3b-h200", "--cards", cards, root=started)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  spread "))
    assert lines[at:at + 6] == [
        "  spread        each batch is counted with every sequence at the mean position 2,048: it fits only while "
        "positions stay spread about it; were every sequence at its last position, 4,095, memory would hold fewer "
        "(`--position` prices that case):",
        "                card            batch  at the last position",
        "                --------------  -----  --------------------",
        "                mi300x            858                   430",
        "                h200_sxm_141gb    605                   304",  # best says 304 too
        "                h100_sxm5_80gb    304                   152",
    ]
    best = json.loads(invoke("best", "qwen3-30b-a3b-h200", "--json", root=started).stdout)
    rows = json.loads(invoke("compare", "qwen3-30b-a3b-h200", "--cards", cards, "--json", root=started).stdout)
    spread = {row["card"]: row["spread"] for row in rows["cards"]}
    assert spread["h200_sxm_141gb"] == best["spread"]
    assert spread["h200_sxm_141gb"]["last_max_batch"] == 304
    assert spread["h200_sxm_141gb"]["last_positions"] == [4095]
    # each card's memory less what is held once, over 402,653,184 B a sequence at 4,095 (its 256 whole pages)
    assert spread["mi300x"]["last_held_per_sequence"] == 402_653_184
    assert spread["mi300x"]["last_max_batch"] == 430
    assert spread["h100_sxm5_80gb"]["last_max_batch"] == 152
    for card, row in spread.items():  # what max-batch holds with every sequence at 4,095, as the spread line says
        most = json.loads(invoke("max-batch", "qwen3-30b-a3b-h200", "--card", card, "--position", "4095", "--json",
                                 root=started).stdout)
        assert most["max_batch"] == row["last_max_batch"], card


def test_3_a_contiguous_cache_has_no_spread(started: Path) -> None:
    result = invoke("compare", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb,mi300x", root=started)
    assert result.exit_code == 0, result.output
    assert not any(line.startswith("  spread") for line in result.stdout.splitlines())
    rows = json.loads(invoke("compare", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb", "--json",
                             root=started).stdout)
    assert rows["cards"][0]["spread"] is None


# --- (4) simulate's count, speculate's row 0 -----------------------------------------------------------------------


def test_4_one_output_cut_is_said_in_the_singular(started: Path) -> None:
    result = invoke("simulate", "r1-qwen7b-h200", "--synthetic", "1000", "--seed", "2", "--rate", "200",
                    root=started)
    assert result.exit_code == 0, result.output
    trace = next(line for line in result.stdout.splitlines() if line.startswith("  trace "))
    assert trace.endswith("cut to fit the limit of 4,096 positions: 88 prompts (to at most 2,048 tokens, half the "
                          "limit, leaving the rest for the output) and 1 output"), trace  # was "1 outputs"


def test_4_speculate_says_row_0_is_always_shown(started: Path) -> None:
    assert bad("speculate", "qwen35-27b-h200-mtp", "--tokens", "0..3", root=started) == [
        "passprice: error: --tokens: '0..3': draft lengths run from 1 to 64, low to high; row 0 (no drafting) is "
        "always shown: write 1..3"]
    assert bad("speculate", "qwen35-27b-h200-mtp", "--tokens", "0", root=started) == [
        "passprice: error: --tokens: '0': draft lengths run from 1 to 64, low to high; row 0 (no drafting) is always "
        "shown"]
    # another part refused says nothing of row 0
    assert bad("speculate", "qwen35-27b-h200-mtp", "--tokens", "70,0..3", root=started) == [
        "passprice: error: --tokens: '70': draft lengths run from 1 to 64, low to high"]


# --- (5) the array term priced at the vector rate ------------------------------------------------------------------


def test_5_the_array_term_names_the_rate_it_is_priced_at(started: Path) -> None:
    result = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", root=started)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("  pass "))
    # 8.592 GMAC / (33.5 TMAC/s, the H200's vector rate, × share.array 1) = 256.5 µs
    assert line == ("  pass          4.211 ms: fixed 2.706 ms, terms at the stack's shares memory 1.025 ms · array (at "
                    "the vector rate) 256.5 µs · vector 303.7 µs · scale 402 µs (binds on memory; pass = fixed + "
                    "memory + terms.serial 0.5 × the others)")
    data = json.loads(invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json",
                             root=started).stdout)
    assert data["expected"]["array_s"] == pytest.approx(256.5e-6, rel=1e-3)  # the key as it was
