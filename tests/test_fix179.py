"""A new user's findings (README only, ``pip install .``, an ``init --examples`` registry in git, branches as pull
requests) on issue 13's review, reproduce and audit uses, each reproduced here.

1. The quote check's limit to the file a locator names was bypassed by naming the file loosely: the H200's
   ``streams.read`` quoting the H100 file's row ``'| Dot   | 3.18              |'`` read ``checked`` of a locator
   spelling the H200's file ``Azure Results/…`` (a space for ``_``), in lower case, or in prose, and of one naming
   no file at all. A locator names a file read loosely, and one naming none of several is NOT FOUND where the
   span is under some of them but not all.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.sources import Source, stored_text_of

AZURE = "azure-ai-benchmarking-guide"
EXCERPT = "sources/excerpts/github-sources-excerpt.txt"
H100 = "Azure_Results/ND_H100_v5_results.md"
H200 = "Azure_Results/ND_H200_v5_results.md"
DOT_3_18 = "'| Dot   | 3.18              |'"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry, its first commit (on main) the checkout's registry."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _azure() -> Source:
    return Source(id=AZURE, title="t", kind="web", read="r", url="https://example.com", excerpt=EXCERPT)


# --- (1) a locator naming a file loosely, or naming none -----------------------------------------------------------


@pytest.mark.parametrize("locator", [
    "Azure Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6), HBM Bandwidth table (BabelStream): row",
    "azure_results/nd_h200_v5_results.md, HBM Bandwidth table: row",
    "AZURE-RESULTS/ND-H200-V5-RESULTS.MD, row",
    "ND H200 v5 results.md: row",
    "the ND H200 v5 results file, HBM Bandwidth table: row",
])
def test_1_a_file_named_loosely_is_that_file(locator: str) -> None:
    stored = stored_text_of(_azure(), (REPO / EXCERPT).read_bytes(), EXCERPT)
    assert stored.parts_named(f"{locator} {DOT_3_18}") == (H200,)


def test_1_what_names_no_file_names_none() -> None:
    stored = stored_text_of(_azure(), (REPO / EXCERPT).read_bytes(), EXCERPT)
    assert stored.parts_named("Azure_Results/ND_H200_v5_results.md.bak, row") == ()  # a longer name is not it
    assert stored.parts_named("ND_H200_v5_results2.md, row") == ()  # nor a longer file name
    assert stored.parts_named("HBM Bandwidth table (BabelStream): row '| Dot | 3.18 |'") == ()
    assert stored.parts_named("the H200's results") == ()


@pytest.mark.parametrize(("locator", "under"), [
    (f"{H200} (NVIDIA H200 141GB, CUDA 12.6), HBM Bandwidth table (BabelStream): row {DOT_3_18} in TB/s",
     f"under {H200}"),  # the exact path: as tests/test_fix154.py has it
    (f"Azure Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6), HBM Bandwidth table (BabelStream): row "
     f"{DOT_3_18} in TB/s", f"under {H200}"),  # was `checked`
    (f"azure_results/nd_h200_v5_results.md, HBM Bandwidth table (BabelStream): row {DOT_3_18} in TB/s",
     f"under {H200}"),  # was `checked`
    (f"the ND H200 v5 results file, HBM Bandwidth table (BabelStream): row {DOT_3_18} in TB/s",
     f"under {H200}"),  # was `checked`
    (f"HBM Bandwidth table (BabelStream): row {DOT_3_18} in TB/s",
     "its locator names none of the 3 files the stored excerpt holds"),  # was `checked`
])
def test_1_the_h100_row_quoted_for_the_h200_is_not_found(repo: Path, locator: str, under: str) -> None:
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.6625", "--unit", "1",
                    "--provenance", "measured", "--source", AZURE, "--locator", locator, root=repo)
    assert result.exit_code == 0, result.output
    audit = invoke("audit", "--source", AZURE, root=repo)
    assert audit.exit_code == 0, audit.output
    assert (f"  h200_sxm_141gb:streams.read: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
            f"{DOT_3_18} ({under}; found only under {H100}))") in audit.stdout.splitlines(), audit.stdout
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 1, review.output  # a NOT FOUND quote fails the review
    assert review.stdout.splitlines()[1].startswith(
        "1 fact changed in 1 file, 1 to verify in its source; 1 quote NOT FOUND in its stored text;"), review.stdout


def test_1_a_locator_naming_no_file_reads_as_before_where_the_file_does_not_matter(repo: Path) -> None:
    # the H200's own row under a locator naming no file: under the H200's file alone, still not placed: NOT FOUND
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9333", "--unit", "1",
                    "--provenance", "measured", "--source", AZURE, "--locator",
                    "HBM Bandwidth table: row '| Dot   | 4.48              |' in TB/s", root=repo)
    assert result.exit_code == 0, result.output
    audit = invoke("audit", "--source", AZURE, root=repo)
    assert ("  h200_sxm_141gb:streams.read: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
            "'| Dot   | 4.48              |' (its locator names none of the 3 files the stored excerpt holds; found "
            f"only under {H200}))") in audit.stdout.splitlines(), audit.stdout
    # a heading every file has: under all three, the file does not matter
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9333", "--unit", "1",
                    "--provenance", "measured", "--source", AZURE, "--locator", "the table '### HBM Bandwidth'",
                    root=repo)
    assert result.exit_code == 0, result.output
    audit = invoke("audit", "--source", AZURE, root=repo)
    assert "  h200_sxm_141gb:streams.read: checked (1 of 1 quoted span found in the stored text)" in (
        audit.stdout.splitlines()), audit.stdout


def test_1_the_shipped_ga102_quotes_of_two_copies_of_one_page_read_as_today() -> None:
    # cited without naming either copy of the Ampere tuning guide: each quote is under both, so `checked`
    audit = invoke("audit", "--source", "nvidia-ampere-tuning-guide")
    assert audit.exit_code == 0, audit.output
    for card in ("a40", "rtx_3080", "rtx_3090", "rtx_a6000"):
        assert f"  {card}:on_chip.capacity: checked (2 of 2 quoted spans found in the stored text)" in (
            audit.stdout.splitlines()), audit.stdout
    assert "NOT FOUND" not in audit.stdout


# --- (2) and (3) a lock and an audit under a stack whose fit does not follow ----------------------------------------

STACK = "llamacpp-cuda-2405"
LOCK = "r1-qwen7b-h200-llamacpp"
FIT = (f"stack {STACK}'s fit does not follow from today's registry (9 fitted facts mismatch: overhead.pass, "
       "overhead.layer, share.read, share.append, share.array, share.float, share.vector, share.scale, terms.serial; "
       "overhead.layer: re-fitted from its 111 runs (as registered today, on today's cards, checkpoints and routing "
       "records) it is 103.7 µs, not 96.63 µs: more than the 0.1 % its derivation allows")
REFIT = "overhead.layer: re-fitted from its 111 runs (as registered today, on today's cards, checkpoints and routing " \
        "records) it is 103.7 µs, not 96.63 µs"


def _edit_stack(root: Path) -> None:
    """The finding's edit: llama.cpp's F16 matrices on the tensor cores, 256 MiB reserved (512 before)."""
    path = root / f"facts/stacks/{STACK}.toml"
    text = path.read_text(encoding="utf-8")
    assert 'float_matrices = "vector"' in text and "[memory.reserved]\nvalue = 512\n" in text
    path.write_text(text.replace('float_matrices = "vector"', 'float_matrices = "tensor"')
                    .replace("[memory.reserved]\nvalue = 512\n", "[memory.reserved]\nvalue = 256\n"), encoding="utf-8")


def test_2_lock_update_under_a_stack_whose_fit_does_not_follow_is_refused(repo: Path) -> None:
    _edit_stack(repo)
    lock = repo / f"locks/{LOCK}.lock.toml"
    before = lock.read_bytes()
    result = invoke("lock", "--update", "-o", str(lock), root=repo)
    assert result.exit_code == 1, result.output  # was 0, the lock written, and `check` then failed 8 problems
    [line] = result.stderr.splitlines()
    assert line.startswith(f"passprice: refused: StaleFacts: lock {LOCK}: its price rests on derived facts that do "
                           f"not follow from their inputs, not a price to publish: {FIT}"), line
    assert line.endswith(f"run `passprice calibrate --stack {STACK}` (review the re-fit with `passprice calibrate "
                         f"--stack {STACK} --dry-run` first), then lock again; {lock} not written"), line
    assert lock.read_bytes() == before
    document = invoke("lock", "--update", "-o", str(lock), "--json", root=repo)
    assert document.exit_code == 1, document.output
    refusal = json.loads(document.stdout)
    assert refusal["refusal"] == "StaleFacts" and refusal["written"] is False
    assert [s["path"] for s in refusal["stale"]][:2] == ["stack.overhead.layer", "stack.share.read"], refusal["stale"]
    assert refusal["fix"] == [f"run `passprice calibrate --stack {STACK}` (review the re-fit with `passprice "
                              f"calibrate --stack {STACK} --dry-run` first)"]
    assert invoke("check", root=repo).exit_code == 1  # what the lock would have met


def test_2_a_lock_under_the_shipped_stack_is_written_as_today(repo: Path) -> None:
    lock = repo / f"locks/{LOCK}.lock.toml"
    result = invoke("lock", "--update", "-o", str(lock), root=repo)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"locked {LOCK} (price, locks serving r1-qwen7b-h200): 996.1 tokens/s at batch 1")


@pytest.mark.parametrize("target", [("r1-qwen7b-h200", "--stack", STACK), (LOCK,)])
def test_3_audit_marks_the_stale_fit(repo: Path, target: tuple[str, ...]) -> None:
    before = invoke("audit", *target, root=repo)
    assert before.exit_code == 0, before.output
    assert "STALE" not in before.stdout and "fit does not follow" not in before.stderr
    _edit_stack(repo)
    audit = invoke("audit", *target, root=repo)
    assert audit.exit_code == 0, audit.output
    lines = audit.stdout.splitlines()
    # was nothing: as `price --stack` warns of it, and the derivations marked STALE as a card's are
    [warning] = [w for w in audit.stderr.splitlines() if "fit " in w and "does not follow" in w]
    which = "" if len(target) > 1 else (f"(the facts of facts/stacks/{STACK}.toml today, which lock {LOCK} pinned as "
                                        "they are) ")
    assert warning.startswith(f"passprice: warning: stack {STACK}'s fit {which}does not follow from today's "
                              "registry (9 fitted facts mismatch, 8 the price rests on: overhead.pass, "
                              "overhead.layer, share.read, share.append, share.array, share.vector, share.scale, "
                              "terms.serial; "), warning  # not share.float, which the price does not read
    [stale] = [x for x in lines if x.startswith("STALE: ")]
    # one short line, the details under the facts marked STALE (tests/test_left182.py)
    assert stale.startswith("STALE: 6 derived facts the price rests on do not follow from today's inputs"), stale
    assert len(stale) < 300, stale
    marked = [x.split(":", 1)[0].strip() for x in lines if " — STALE: " in x]
    # the six the price rests on whose re-fit moved (overhead.pass 0 and share.array 1 re-fit the same)
    assert marked == ["stack.overhead.layer", "stack.terms.serial", "stack.share.read", "stack.share.append",
                      "stack.share.vector", "stack.share.scale"], marked
    data = json.loads(invoke("audit", *target, "--json", root=repo).stdout)
    assert [f["path"] for f in data["facts"] if f["stale"]] == marked, data["facts"]
    assert next(f["stale"] for f in data["facts"] if f["stale"]).startswith(REFIT)


# --- (4) a mixture of experts whose every token reads every expert ------------------------------------------------


def test_4_every_expert_read_needs_no_routing_and_rests_on_none(tmp_path: Path) -> None:
    from test_walk45 import moe_header

    header = str(moe_header(tmp_path / "h.gguf", 8))  # 8 experts, 8 a token
    bare = invoke("price", "--checkpoint", header, "--card", "h200_sxm_141gb", "--json")
    assert bare.exit_code == 0, bare.output  # was refused Routed, exit 1
    uniform = invoke("price", "--checkpoint", header, "--card", "h200_sxm_141gb", "--json", "--routing", "uniform")
    assert uniform.exit_code == 0, uniform.output
    a, b = json.loads(bare.stdout), json.loads(uniform.stdout)
    # the price uniform routing gave (D(t) = 8 for every t >= 1: every expert read whole), bit for bit
    assert a["tokens_per_s"] == b["tokens_per_s"] == 1032880.3479582472
    assert a["weight_bytes"] == b["weight_bytes"] == 2072336
    # no routing fact rested on (was: routing.hot_experts, routing.hot_share, assumed, the weakest)
    for priced in (a, b):
        assert priced["provenance"] == "estimated" and priced.get("routing") is None
        assert not [p for p in priced["rests_on"] if p.startswith("routing.")], priced["rests_on"]
    for batch, tokens in (("64", 1949946.9423301157), ("512", 1974293.0750513226)):  # as uniform routing priced them
        result = invoke("price", "--checkpoint", header, "--card", "h200_sxm_141gb", "--json", "--batch", batch)
        assert json.loads(result.stdout)["tokens_per_s"] == tokens
    audit = invoke("audit", "--checkpoint", header, "--card", "h200_sxm_141gb", "--routing", "uniform")
    assert audit.exit_code == 0, audit.output
    assert audit.stdout.splitlines()[1] == ("  1,032,880.3 tokens/s at batch 1, binds on memory; weakest provenance "
                                            "estimated (scale, on_chip.capacity)")  # was assumed (routing.…)
    assert "routing.hot_" not in audit.stdout


def test_4_a_mixture_reading_fewer_is_still_asked_its_routing(tmp_path: Path) -> None:
    from test_walk45 import moe_header

    header = str(moe_header(tmp_path / "h.gguf", 7))
    result = invoke("price", "--checkpoint", header, "--card", "h200_sxm_141gb")
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("passprice: refused: Routed: a mixture of 8 experts: "), result.stderr


# --- (5) a stack file that does not read on a side: its facts not compared ---------------------------------------


def test_5_the_summary_says_the_facts_were_not_compared(repo: Path) -> None:
    path = repo / f"facts/stacks/{STACK}.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('float_matrices = "vector"', 'float_matrices = "tensorz"')
                    .replace("[memory.reserved]\nvalue = 512\n", "[memory.reserved]\nvalue = 256\n"), encoding="utf-8")
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 2, review.output  # a file that does not read on HEAD
    lines = review.stdout.splitlines()
    # was "no fact changed; …" though memory.reserved went 512 -> 256 MiB
    assert lines[1] == ("facts not compared in 1 file (not reading on a side); 1 lock affected, 1 not judged; HEAD "
                        "fails passprice check (1 problem); 9 locks unaffected; 1 file does not read"), lines[1]
    assert "  facts not compared: the file does not read on a side" in lines


# --- (6) a corrected run whose note still states the old figure ----------------------------------------------------

RUN = "lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128"
RUNS = "registry/measurements/lmdeploy-turbomind-a100.toml"
ROW = "| 1     | 1   | 1             | 128           | "
NOTE_ASK = "; its note still states 100.02, the tokens/s it replaces: is the note this figure's?"


def _correct_run(root: Path, locator_too: bool) -> None:
    path = root / RUNS
    text = path.read_text(encoding="utf-8")
    at = text.index(f'id = "{RUN}"')
    head, rest = text[:at], text[at:]
    assert "tokens_per_s = 100.02\n" in rest and f"{ROW}100.02" in rest
    assert "(1 x 128 / 100.02)" in rest  # the run's note states the figure
    rest = rest.replace("tokens_per_s = 100.02\n", "tokens_per_s = 110.02\n", 1)
    if locator_too:
        rest = rest.replace(f"{ROW}100.02", f"{ROW}110.02", 1)
    path.write_text(head + rest, encoding="utf-8")


@pytest.mark.parametrize("locator_too", [True, False])
def test_6_a_run_whose_note_states_the_old_figure_is_asked(repo: Path, locator_too: bool) -> None:
    _correct_run(repo, locator_too)
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 1, review.output  # the stack fitted to it is stale: check fails
    [line] = [x for x in review.stdout.splitlines() if x.startswith(f"  {RUNS} (changed): 1 measured run to verify")]
    # was nothing of the note (then its price on HEAD, as an added run's: tests/test_rev54.py)
    assert line.endswith(f"{NOTE_ASK}; priced on HEAD: 110.02 tokens/s, limit 132.1 (1.2 × measured)"), line
    if not locator_too:
        assert (f"{RUN}'s tokens/s moved (100.02 → 110.02 tokens/s, +9.998 %) but its citation did not, and the "
                "locator quotes 100.02: ") in line, line


def test_6_a_note_stating_the_new_figure_is_not_asked(repo: Path) -> None:
    _correct_run(repo, True)
    path = repo / RUNS
    path.write_text(path.read_text(encoding="utf-8").replace("(1 x 128 / 100.02)", "(1 x 128 / 110.02)", 1),
                    encoding="utf-8")
    review = invoke("diff", "main", root=repo)
    [line] = [x for x in review.stdout.splitlines() if x.startswith(f"  {RUNS} (changed): 1 measured run to verify")]
    assert "its note still states" not in line, line
