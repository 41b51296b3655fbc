"""Changes that slipped past the locks through the newest rules (issue 13): each escape kept as its reproducer,
built in the test.

- (1) ``check`` looks up every fact's quotes in its source's stored excerpt, but read only cards, drafting methods
  and routing records: a serving stack's fact quoting a stored excerpt (``llamacpp-cuda-2405``'s
  ``memory.reserved``, ``'VRAM scratch buffer: 70.50 MiB'``) whose line was edited (``700.50``) and the excerpt's
  ``excerpt_sha256`` re-pinned read "all holds", where ``audit --source`` said NOT FOUND and the review failed. Now
  a stack's facts are looked up too, named by their key in the stack file.
- (2) No command looked up a measured run's quote (the run a stack is fitted to): its excerpt's row edited
  (``145.55 ± 0.80`` to ``155.55``, the run's ``tokens_per_s`` left) and re-pinned read "all holds" in ``check``
  and nothing in ``audit --source``; the review named the source "to verify" alone (exit 0). Now ``check`` looks
  each run's quotes up as it does a fact's, naming the measurement file, the run's key and id, and the review looks
  up a rewritten excerpt's runs' quotes with its citing facts' (NOT FOUND on HEAD and found on BASE fails it).
- (3) ``audit LOCK`` took a lock file's commit from ``git log -1 -- PATH`` where ``git status`` said nothing of
  ``PATH``, reading the path as a pattern: a lock kept as ``l*.lock.toml`` was compared at the last commit touching
  any file under ``locks/`` (another lock archived after the source record moved: the move went unsaid); and
  ``git status`` says nothing of an ignored file either, so a lock put back at an ignored path a commit once held was
  compared at the commit deleting it. Now the path is read literally and must be tracked; any other lock file is
  found by its digest.
- (4) ``check``'s quote look-ups share audit's bound (128 MiB of stored text, 2,236 spans), and past it a fact's
  quotes were skipped without a word: a card sorting first whose four facts quote 160 spans of a 1 MB excerpt spent
  it, and the H100 product page's excerpt line ``3.35TB/s`` edited to ``3.0TB/s`` and re-pinned read "all holds"
  while ``audit --source`` said NOT FOUND. Now quotes left past the bound are a problem naming the first three facts
  and counting them.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import subprocess
from pathlib import Path

from cli_helpers import copy_root, invoke, repin_excerpt, retitled

SOURCE = "xiongjiedai-gpu-benchmarks"
EXCERPT = "sources/excerpts/xiongjiedai-aa72e0e-excerpt.txt"


def _edit_excerpt(root: Path, old: str, new: str) -> None:
    """Replace ``old`` (once in the excerpt) by ``new`` and pin the excerpt anew, as a hand edit would."""
    path = root / EXCERPT
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    repin_excerpt(root, EXCERPT)


def _problems(output: str) -> list[str]:
    """The NOT FOUND lines of a ``check``, each once (a check that fails says its problems again at its end)."""
    return list(dict.fromkeys(line.strip() for line in output.splitlines() if "NOT FOUND" in line))


def test_shipped_registry_has_no_quote_problem() -> None:
    result = invoke("check")
    assert result.exit_code == 0, result.output
    assert _problems(result.output) == []


def test_1_a_stack_facts_quote_lost_from_its_excerpt_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit_excerpt(root, "VRAM scratch buffer: 70.50 MiB", "VRAM scratch buffer: 700.50 MiB")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    assert _problems(result.output) == [
        f"facts/stacks/llamacpp-cuda-2405.toml: memory.reserved: its quotes of {SOURCE} are NOT FOUND in its stored "
        f"excerpt {EXCERPT} (3 of 4 quoted spans found in the stored text; not in it: 'VRAM scratch buffer: 70.50 "
        "MiB' (under LLaMA 2/Professional GPUs/H100_PCIe_v2.ipynb)): restore the quoted words there, or quote the "
        "words it holds"]
    assert result.output.rstrip().endswith("check FAILED")
    # audit said so before; it still does
    audit = invoke("audit", "--source", SOURCE, root=root)
    assert "llamacpp-cuda-2405:memory.reserved: NOT FOUND (3 of 4 quoted spans found in the stored text" in (
        audit.output)


def test_2_a_measured_runs_quote_lost_from_its_excerpt_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _edit_excerpt(root, "|    145.55 ± 0.80 |", "|    155.55 ± 0.80 |")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    assert _problems(result.output) == [
        "registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0 (xd3.h100_pcie_80gb.8b-q4km.tg512): its "
        f"quotes of {SOURCE} are NOT FOUND in its stored excerpt {EXCERPT} (0 of 1 quoted span found in the stored "
        "text; not in it: '| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         "
        "tg512 |    145.55 ± 0.80 |' (under LLaMA 3/Professional "
        "GPUs/H100_PCIe_v3.ipynb)): restore the quoted words there, or quote the words it holds"]


def test_2_a_runs_value_and_quote_moved_past_its_excerpt_fails_check(tmp_path: Path) -> None:
    # the run's figure and its quote moved together, the excerpt left: its quote is no longer the source's words
    root = copy_root(tmp_path)
    path = root / "registry/measurements/xiongjiedai-llama3-llamabench.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count("tokens_per_s = 145.55\n") == 1 and text.count("|    145.55 ± 0.80 |'") == 1
    path.write_text(text.replace("tokens_per_s = 145.55\n", "tokens_per_s = 155.55\n")
                    .replace("|    145.55 ± 0.80 |'", "|    155.55 ± 0.80 |'"), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    assert [p[:120] for p in _problems(result.output)] == [
        "registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0 (xd3.h100_pcie_80gb.8b-q4km.tg512): its "
        "quotes of xiongj"]


# --- (3) audit LOCK's commit, found by the lock file's path ---------------------------------------------------------

H200_SOURCE = "sources/nvidia-h200-product-page.toml"
R1_LOCK = "locks/r1-qwen7b-h200.lock.toml"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _registry(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _redate(root: Path) -> None:
    """Move the source record the r1 lock's H200 facts cite (its retrieved date): what audit's since-lock line says."""
    path = root / H200_SOURCE
    text = path.read_text(encoding="utf-8")
    assert text.count('retrieved = "2026-09-07"\n') == 1
    path.write_text(text.replace('retrieved = "2026-09-07"\n', 'retrieved = "2026-10-01"\n'), encoding="utf-8")


def _since(root: Path, lock: str) -> list[str]:
    result = invoke("audit", lock, root=root)
    assert result.exit_code == 0, result.output
    return [line.strip().split(" (", 1)[0] for line in result.stdout.splitlines()
            if line.strip().startswith("since lock")]


def _since_at(commit: str) -> list[str]:
    return [f"since lock    source nvidia-h200-product-page: the lock was committed at {commit[:12]}"]


def test_3_a_lock_file_named_like_a_pattern_is_compared_at_its_own_commit(tmp_path: Path) -> None:
    # 'l*.lock.toml' read as a pattern matched every file under locks/: the last commit touching any of them (an
    # archived copy of another lock, after the source moved) was taken for the lock's, and the move went unsaid
    root = _registry(tmp_path)
    (root / "l*.lock.toml").write_bytes((root / R1_LOCK).read_bytes())
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the lock kept under a name of its own")
    kept = _git(root, "rev-parse", "HEAD").strip()
    _redate(root)
    _git(root, "commit", "-qam", "the H200 page retrieved again")
    (root / "lz.lock.toml").write_bytes((root / "locks/gemma3-270m-h100.lock.toml").read_bytes())
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "another lock archived")
    with contextlib.chdir(root):
        assert _since(root, "l*.lock.toml") == _since_at(kept)


def test_3_an_ignored_lock_at_a_path_once_committed_is_found_by_its_digest(tmp_path: Path) -> None:
    # git status says nothing of an ignored file: the path's last commit (the one deleting it, where the source had
    # already moved) was taken for the lock's
    root = _registry(tmp_path)
    first = _git(root, "log", "-1", "--format=%H").strip()
    archived = "locks/archived.lock.toml"
    (root / archived).write_bytes((root / R1_LOCK).read_bytes())
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "archived")
    _git(root, "rm", "-q", archived)
    (root / ".gitignore").write_text(f"{archived}\n", encoding="utf-8")
    _redate(root)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "archive dropped; the H200 page retrieved again")
    (root / archived).write_bytes((root / R1_LOCK).read_bytes())
    assert _git(root, "status", "--porcelain", "--", archived) == ""
    with contextlib.chdir(root):
        assert _since(root, archived) == _since_at(first)  # the first commit writing its digest: the r1 lock's


# --- (4) check's quote look-ups past their bound -------------------------------------------------------------------


def _spending_card(root: Path) -> None:
    """A source record whose stored excerpt is 1,000,000 bytes (pinned) and a card sorting first whose four facts
    quote 40 of its spans each: 160 look-ups of 2 MB counted each, past the 128 MiB check looks up."""
    lines = "".join(f"line {i} figure {i}.5 units\n" for i in range(60_000)).encode()[:1_000_000]
    (root / "sources/excerpts/big-excerpt.txt").write_bytes(lines)
    record = (root / "sources/nvidia-h100-product-page.toml").read_text(encoding="utf-8")
    record = re.sub(r'(?m)^excerpt = ".*"$', 'excerpt = "sources/excerpts/big-excerpt.txt"', record)
    record = re.sub(r'(?m)^excerpt_sha256 = ".*"$', f'excerpt_sha256 = "{hashlib.sha256(lines).hexdigest()}"', record)
    (root / "sources/aaa-big.toml").write_text(record, encoding="utf-8")
    out, table, k = [], None, 0
    for line in retitled((root / "facts/cards/a100_pcie_80gb.toml").read_text(encoding="utf-8"), "A0").split("\n"):
        if line.startswith("["):
            table = line if line in ("[memory.bandwidth]", "[memory.capacity]", "[on_chip.bandwidth]",
                                     "[streams.read]") else None
        if table and line.startswith("source = "):
            line = 'source = "aaa-big"'
        if table and line.startswith("locator = "):
            line = "locator = \"rows " + ", ".join(f"'figure {i}.5'" for i in range(k * 40 + 1, k * 40 + 41)) + '"'
            k += 1
        out.append(line)
    assert k == 4
    (root / "facts/cards/a0.toml").write_text("\n".join(out), encoding="utf-8")


def test_4_quotes_past_checks_bound_are_a_problem_not_skipped(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _spending_card(root)
    path = root / "sources/excerpts/cite90-excerpt.txt"
    text = path.read_text(encoding="utf-8")
    assert text.count("\n32\t3.35TB/s\n") == 1
    path.write_text(text.replace("\n32\t3.35TB/s\n", "\n32\t3.0TB/s\n"), encoding="utf-8")
    repin_excerpt(root, "sources/excerpts/cite90-excerpt.txt")
    # audit says what the H100's edited line lost
    audit = invoke("audit", "--source", "nvidia-h100-product-page", root=root)
    assert "h100_pcie_80gb:streams.read: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: 'GPU " \
        "Memory Bandwidth 3.35TB/s 3.9TB/s')" in audit.output
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output  # read "all holds"
    said = list(dict.fromkeys(line.strip() for line in result.output.splitlines() if "not looked up" in line))
    assert len(said) == 1, result.output
    assert said[0].startswith(
        "facts/cards/a0.toml: memory.bandwidth (aaa-big); facts/cards/a0.toml: on_chip.capacity "
        "(nvidia-ampere-whitepaper); facts/cards/a0.toml: on_chip.bandwidth (aaa-big), and ")
    assert ": quotes not looked up in their stored excerpts, past the 128 MiB of stored text and 2,236 quoted spans " \
        "check looks up in all (" in said[0]
    assert said[0].endswith(" facts' quotes left): a quote its excerpt lacks would go unsaid; quote fewer spans of "
                            "the largest stored excerpts")


def test_2_the_review_fails_a_runs_quote_its_rewritten_excerpt_lost(tmp_path: Path) -> None:
    # the review named the source "to verify" alone (exit 0) where check now fails: it looks the runs up too
    root = _registry(tmp_path)
    _edit_excerpt(root, "|    145.55 ± 0.80 |", "|    155.55 ± 0.80 |")
    with contextlib.chdir(root):
        result = invoke("diff", root=root)
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[1].startswith("no fact changed; 1 quote NOT FOUND in its stored text; ")
    assert result.stderr.strip() == (
        "passprice: refused: 1 fact's quotes NOT FOUND in a stored excerpt the change rewrote, found in BASE's "
        "(registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0 (xd3.h100_pcie_80gb.8b-q4km.tg512) "
        f"(source {SOURCE})): restore the lines they were read from to the excerpt and re-pin it, or correct the "
        "quotes (`passprice audit --source ID` checks each)")
