"""Changes that slipped past the locks through the newest rules (issue 13): each escape kept as its reproducer,
built in the test.

- (1) ``check`` looks up every fact's quotes in its source's stored excerpt, but read only cards, drafting methods
  and routing records: a serving stack's fact quoting a stored excerpt (``llamacpp-cuda-2405``'s
  ``memory.reserved``, ``'VRAM scratch buffer: 70.50 MiB'``) whose line was edited (``700.50``) and the excerpt's
  ``excerpt_sha256`` re-pinned read "all holds", where ``audit --source`` said NOT FOUND and the review failed. Now
  a stack's facts are looked up too, named by their key in the stack file.
- (2) No command looked up a measured run's quote (the run a stack is fitted to): its excerpt's row edited
  (``145.55 ± 0.80`` to ``155.55``, the run's ``tokens_per_s`` left) and re-pinned read "all holds" in ``check``
  and nothing in ``audit --source``. Now ``check`` looks each run's quotes up as it does a fact's, naming the
  measurement file, the run's key and id.
- (3) ``audit LOCK`` took a lock file's commit from ``git log -1 -- PATH`` where ``git status`` said nothing of
  ``PATH``, reading the path as a pattern: a lock kept as ``l*.lock.toml`` was compared at the last commit touching
  any file under ``locks/`` (another lock archived after the source record moved: the move went unsaid); and
  ``git status`` says nothing of an ignored file either, so a lock put back at an ignored path a commit once held was
  compared at the commit deleting it. Now the path is read literally and must be tracked; any other lock file is
  found by its digest.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from cli_helpers import copy_root, invoke, repin_excerpt

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
    return [line.strip() for line in output.splitlines() if "NOT FOUND" in line]


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
        "text; not in it: '| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B |' (under LLaMA 3/Professional "
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
