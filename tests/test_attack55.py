"""Attack round 55 (issue 13): measured runs and stacks, routing records, drafting methods, sources and their
excerpts, the caches, ``reproduce`` and ``diff`` — what escaped, each with its reproducer built here and the exit
status and line asserted (before the fix: exit 0 and a price, or the line that was printed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, bad, copy_root, invoke

STACK_LOCK = "locks/r1-qwen7b-h200-llamacpp.lock.toml"  # priced at batch 1 under stack llamacpp-cuda-2405


def _repinned(root: Path, rel: str, **values: float) -> None:
    """The lock ``rel`` of ``root`` with the pinned facts ``values`` (path → value) replaced and every digest
    recomputed, as an attacker who knows the digest rule (or passprice's own writer) would write it."""
    from passprice.locks import lock_text, read_lock

    path = root / rel
    lock = read_lock(path)
    facts = dict(lock.facts)
    for key, value in values.items():
        facts[key] = attrs.evolve(facts[key], value=value, amount=value)
    path.write_text(lock_text(attrs.evolve(lock, facts=facts)), encoding="utf-8")


# --- 1. a lock's pinned stack range: a fraction was read as the whole number below it --------------------------------


@pytest.mark.parametrize(("path", "value"), [
    ("stack.range.rows.min", 1.5),
    ("stack.range.rows.max", 1.5),
    ("stack.range.position.max", 8192.5),
    ("stack.range.position.min", 0.25),
])  # fmt: skip
def test_a_fractional_pinned_range_is_refused(tmp_path: Path, path: str, value: float) -> None:
    """Re-digested with ``stack.range.rows.min = 1.5``, the lock of a batch-1 price under llamacpp-cuda-2405
    "reproduces exactly" (exit 0) and ``price --lock`` priced under it: the lock schema let a pinned range be any
    number where the stack schema demands a whole one, and :func:`passprice.stacks.held` read ``int(1.5)``, batch 1,
    so the batch below the pinned range was not refused. Refused as the stack file's own range is: exit 2, the key."""
    root = copy_root(tmp_path)
    _repinned(root, STACK_LOCK, **{path: value})
    line = (f'passprice: error: {root / STACK_LOCK}: facts."{path}".value: {value} is not of type \'integer\' (a '
            "whole number, written without a decimal point or exponent)")
    for args in (("reproduce", str(root / STACK_LOCK)), ("price", "r1-qwen7b-h200", "--lock", str(root / STACK_LOCK))):
        assert bad(*args, root=root) == [line]


def test_a_whole_pinned_range_still_reproduces(tmp_path: Path) -> None:
    """The same lock re-digested with its own values (the range 1 … 1 rows, 0 … 8,192 positions) reproduces."""
    root = copy_root(tmp_path)
    _repinned(root, STACK_LOCK, **{"stack.range.rows.min": 1, "stack.range.position.max": 8192})
    result = invoke("reproduce", str(root / STACK_LOCK), root=root)
    assert result.exit_code == 0, result.output
    assert "  reproduces exactly: 996.0966124437687 tokens/s at batch 1, binds on memory" in result.stdout


@pytest.mark.parametrize(("low", "high", "pins", "shown"), [
    ("stack.range.rows.min", "stack.range.rows.max", {"stack.range.rows.min": 5}, "5 is above stack.range.rows.max 1"),
    ("stack.range.position.min", "stack.range.position.max", {"stack.range.position.min": 10**9},
     "1000000000 is above stack.range.position.max 8192"),
])  # fmt: skip
def test_a_backwards_pinned_range_is_refused(
    tmp_path: Path, low: str, high: str, pins: dict[str, float], shown: str
) -> None:
    """Re-digested with ``stack.range.rows.min = 5`` above its ``max = 1`` (or a position range 10^9 … 8,192),
    ``reproduce`` said "its pinned inputs are refused (BeyondStack …)" and ``price --lock`` "LockForged", exit 1: a
    refusal of a price, where the lock itself is bad input, as a stack file with such a range is (exit 2). Refused
    when read: exit 2, the file, the key and both values."""
    root = copy_root(tmp_path)
    _repinned(root, STACK_LOCK, **pins)
    line = (f'passprice: error: {root / STACK_LOCK}: facts."{low}": {shown}: a range runs from its least to its '
            "largest value (edited by hand?): restore the lock from the last commit that holds it as written, or "
            "re-lock it")
    for args in (("reproduce", str(root / STACK_LOCK)), ("price", "r1-qwen7b-h200", "--lock", str(root / STACK_LOCK))):
        assert bad(*args, root=root) == [line]


# --- 2. diff: a hint naming the review's own temporary folder ------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def test_a_review_names_no_temporary_folder(tmp_path: Path) -> None:
    """A change removing card a40, whose measured runs stack llamacpp-cuda-2405 was fitted on: the review's lines on
    the stack's fit told the user to "copy …/facts/cards/a40.toml into /tmp/passprice-diff-273u_2af/facts/cards to use
    it here" (the JSON's ``locks[].unsound[].message``) and named ``/tmp/passprice-recomputed-jtois35z`` (its
    ``recomputed.error`` and the text's ``recomputed`` line): folders the review made for itself and removed, named
    anew at every run, so two runs of one review differed. Now the lines name the registry's own folders only, and
    two runs print the same bytes."""
    root = copy_root(tmp_path / "repo")
    shutil.copytree(REPO / "schema", root / "schema")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    _git(root, "rm", "-q", "facts/cards/a40.toml")
    _git(root, "commit", "-qm", "a40 removed")
    first = invoke("diff", "HEAD~1", "HEAD", "--json", root=root)
    assert first.exit_code == 2, first.output  # HEAD fails check: the stack's runs name a card it no longer has
    assert "passprice-diff-" not in first.stdout and "passprice-recomputed-" not in first.stdout
    lock = next(lock for lock in json.loads(first.stdout)["locks"] if lock["name"] == "r1-qwen7b-h200-llamacpp")
    said = ("registry/measurements/xiongjiedai-llama3-llamabench.toml: run.48.card: card 'a40': not found in "
            "facts/cards (registered: a100_pcie_80gb, a100_sxm4_80gb, b200, h100_pcie_80gb, h100_sxm5_80gb, "
            "h200_sxm_141gb, l40s, mi300x, rtx_3080, rtx_3090, rtx_4080, rtx_4090, rtx_6000_ada, rtx_a6000, sn40l, "
            "ws1_hypothetical); a card not registered is a file of your own: copy the closest registered card's file "
            "to facts/cards/a40.toml and set its facts (README, 'A card of your own')")
    assert lock["recomputed"]["error"] == f"not recomputed: {said}"
    assert lock["unsound"][0]["message"].endswith(f"their fit cannot be re-run: {said}")
    assert invoke("diff", "HEAD~1", "HEAD", "--json", root=root).stdout == first.stdout
    text = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert "/passprice-" not in text.stdout + text.stderr


def test_a_reviews_unsound_findings_name_no_temporary_folder(tmp_path: Path) -> None:
    """A change making ``facts/cards/a40.toml`` a folder: each lock resting on the stack fitted on a40's runs said
    its fit "cannot be re-run: run xd3.a40.8b-q4km.tg512 (xiongjiedai-llama3-llamabench):
    /tmp/passprice-diff-e9y5tzpr/facts/cards/a40.toml: is a folder, not a card file" (``locks[].unsound[].message``),
    the revision's temporary copy, where ``check``'s own line on HEAD already read ``facts/cards/a40.toml``."""
    root = copy_root(tmp_path / "repo")
    shutil.copytree(REPO / "schema", root / "schema")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    _git(root, "rm", "-q", "facts/cards/a40.toml")
    (root / "facts" / "cards" / "a40.toml").mkdir()
    (root / "facts" / "cards" / "a40.toml" / "f").write_text("x\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a40 a folder")
    result = invoke("diff", "HEAD~1", "HEAD", "--json", root=root)
    assert result.exit_code == 2, result.output
    assert "/passprice-" not in result.stdout + result.stderr
    lock = next(lock for lock in json.loads(result.stdout)["locks"] if lock["name"] == "r1-qwen7b-h200-llamacpp")
    assert lock["unsound"][0]["message"] == (
        "overhead.pass, overhead.layer, share.read, share.append, share.array, share.float, share.vector, share.scale, "
        "terms.serial: their fit cannot be re-run: run xd3.a40.8b-q4km.tg512 (xiongjiedai-llama3-llamabench): "
        "facts/cards/a40.toml: is a folder, not a card file")


# --- a stack's per-card table naming no registered card --------------------------------------------------------------


@pytest.mark.parametrize(("own", "hint"), [
    ("H100_SXM5_80GB", "; did you mean h100_sxm5_80gb?"),
    ("x" * 250, ""),
])  # fmt: skip
def test_a_stack_table_for_no_card_fails_check(tmp_path: Path, own: str, hint: str) -> None:
    """``[cards.H100_SXM5_80GB.share.read]`` in a stack file (a case slip for ``h100_sxm5_80gb``) passed ``check``
    (0 problems, exit 0) and was never applied to any price; a 300-character name was accepted too. Now a problem
    naming the file, the key and the card it may mean (exit 1), and a name past 250 characters is refused by the
    schema (exit 2)."""
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    table = (f"\n[cards.{own}.share.read]\nvalue = 0.8\nunit = \"1\"\nprovenance = \"estimated\"\n"
             'source = "passprice-stack-calibration"\nlocator = "a per-card read share"\n')
    stack.write_text(stack.read_text(encoding="utf-8") + table, encoding="utf-8")
    result = invoke("--no-cache", "check", root=root)
    assert result.exit_code == 1, result.output
    line = (f"  facts/stacks/llamacpp-cuda-2405.toml: cards.{own}: no card {own!r} in facts/cards, so this per-card "
            f"table is never applied: name it as a card's file is named, or remove it{hint}")
    assert line in result.stdout.splitlines(), result.output


def test_a_stack_table_name_past_250_characters_is_refused(tmp_path: Path) -> None:
    """A per-card table whose name is longer than any card file's name (250 characters beside ``.toml``) is bad
    input: exit 2, the file and the key."""
    root = copy_root(tmp_path)
    stack = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    own = "x" * 251
    table = (f"\n[cards.{own}.share.read]\nvalue = 0.8\nunit = \"1\"\nprovenance = \"estimated\"\n"
             'source = "passprice-stack-calibration"\nlocator = "a per-card read share"\n')
    stack.write_text(stack.read_text(encoding="utf-8") + table, encoding="utf-8")
    result = invoke("--no-cache", "check", root=root)
    assert result.exit_code == 2, result.output
    assert any("cards" in line and "is too long" in line for line in result.stderr.splitlines()), result.output


def test_audit_fact_of_a_stack_names_the_audit_that_reads_it(tmp_path: Path) -> None:
    """``audit --fact llamacpp-cuda-2405:share.read`` was refused with "the fact commands edit cards and drafting
    methods" (edit's line, of a command that edits nothing). Now: exit 2, what --fact reads and the audit that reads a
    stack's facts; ``--help`` names ``ROUTING:hot_share``, which --fact reads too."""
    root = copy_root(tmp_path)
    assert bad("audit", "--fact", "llamacpp-cuda-2405:share.read", root=root) == [
        "passprice: error: --fact llamacpp-cuda-2405:share.read: llamacpp-cuda-2405 is a serving stack "
        "(facts/stacks/llamacpp-cuda-2405.toml): --fact audits what rests on a card's, a drafting method's or a "
        "routing record's fact; a stack's facts and their sources are audited with a price made under it: passprice "
        "audit SERVING --stack llamacpp-cuda-2405"]
    helped = invoke("audit", "--help", root=root)
    assert "(CARD:PATH, METHOD:acceptance.N or ROUTING:hot_share)" in " ".join(helped.stdout.split())
