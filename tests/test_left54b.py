"""Issue 13 leftovers: bad input gets one clear line, and a lock or citation nobody can trace is a broken product.

1. ``audit --source SRC`` looks up the quotes of the measured runs citing SRC (check and the review did; the audit
   listed the source's facts alone): a run's quoted row edited in a copy of the excerpt is named NOT FOUND.
2. A lock git's index marks ``assume-unchanged`` or ``skip-worktree`` looked clean to ``git status``, so an edited
   lock was taken as committed at its path: it is not now, and the audit says why in one line.
3. ``locks.lock_commit``'s look-up at the lock's path (``git log -1``) is bound by ``HISTORY_SEARCH_S``, as the
   history's search is, and a git stopped there is said (``its commit not searched: …``).
4. A number list's part past 40 characters (``--draft-tokens 111…(5,000 digits),2``) is named by its length
   (``a 5,000-digit number``), not echoed whole; short parts are echoed as typed.
5. ``lineage.lock_impacts`` matches a lock to the registry's card by the file its serving named, not by the card
   name the lock recorded: a lock priced on another folder's ``h200_sxm_141gb.toml`` rests on no registry card.
6. A size in MiB under a quote in MB: the same amount is its own figure (``_size_alike``), another is a MISMATCH.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

QWEN = "qwen3-30b-a3b-h200"
QWEN_LOCK = f"locks/{QWEN}.lock.toml"
LONG = "1" * 5000


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


# --- (1) audit --source looks up the runs' quotes ---------------------------------------------------------------------


def test_1_audit_source_names_a_run_whose_quoted_row_the_excerpt_lost(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    excerpt = root / "sources/excerpts/xiongjiedai-aa72e0e-excerpt.txt"
    text = excerpt.read_text(encoding="utf-8")
    assert text.count("131.44 tokens per second") == 1
    excerpt.write_text(text.replace("131.44 tokens per second", "131.45 tokens per second"), encoding="utf-8")
    record = root / "sources/xiongjiedai-gpu-benchmarks.toml"
    digest = hashlib.sha256(excerpt.read_bytes()).hexdigest()
    record.write_text(re.sub(r'(?m)^excerpt_sha256 = ".*"$', f'excerpt_sha256 = "{digest}"',
                             record.read_text(encoding="utf-8")), encoding="utf-8")
    result = invoke("audit", "--source", "xiongjiedai-gpu-benchmarks", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert ("quotes checked against a stored text: 127 of 128 facts' quotes checked against a stored text "
            "(1 NOT FOUND)") in lines
    assert ("  registry/measurements/llamacpp-points.toml: run.0 (xd2.h100_pcie_80gb.l2-7b-q4_0.main): NOT FOUND "
            "(2 of 3 quoted spans found in the stored text; not in it: 'llama_print_timings:        eval time =    "
            "7783.09 ms /  1023 runs   (    7.61 ms per token,   131.44 tokens per second)' (under LLaMA "
            "2/Professional GPUs/H100_PCIe_v2.ipynb))") in lines
    # a run whose quote the excerpt still holds is found, in the same words as a fact's
    assert ("  registry/measurements/xiongjiedai-llama3-llamabench.toml: run.0 (xd3.h100_pcie_80gb.8b-q4km.tg512): "
            "checked (1 of 1 quoted span found in the stored text)") in lines
    data = invoke("audit", "--source", "xiongjiedai-gpu-benchmarks", "--json", root=root)
    import json

    document = json.loads(data.stdout)
    runs = {r["run"]: r["state"] for r in document["run_quote_checks"]}
    assert runs["registry/measurements/llamacpp-points.toml: run.0 (xd2.h100_pcie_80gb.l2-7b-q4_0.main)"] == \
        "NOT FOUND"
    assert document["quotes_checked"] == {"checked": 127, "not_found": 1, "facts": 128}
    assert len(document["facts"]) == 12  # the facts citing it, each with its own check, runs apart


# --- (2) and (3) the lock's commit at its path --------------------------------------------------------------------


@pytest.fixture()
def committed(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


@pytest.mark.parametrize(("flag", "tag", "named"), [("--assume-unchanged", "h", "assume-unchanged"),
                                                    ("--skip-worktree", "S", "skip-worktree")])
def test_2_an_index_flag_makes_a_lock_not_clean(committed: Path, flag: str, tag: str, named: str) -> None:
    from passprice.locks import lock_commit
    from passprice.registry import Root

    root = committed
    head = _git(root, "rev-parse", "HEAD").strip()
    _git(root, "update-index", flag, QWEN_LOCK)
    assert _git(root, "ls-files", "-v", "--", QWEN_LOCK).split() == [tag, QWEN_LOCK]
    why = (f"{root / QWEN_LOCK}: git's index marks it {named} (git ls-files -v: {tag}): git status does not look at "
           "it, so it is not taken as committed at its path (its commit is found by its [lock] digest and bytes)")
    notes: list[str] = []
    held = lock_commit(Root(root), root / QWEN_LOCK, notes)
    assert held is not None and held[1] == head  # unedited: its bytes are the commit's, found by its digest
    assert notes == [why]
    with (root / QWEN_LOCK).open("a", encoding="utf-8") as f:
        f.write("# mine\n")
    assert _git(root, "status", "--porcelain", "--", QWEN_LOCK) == ""  # git says nothing of the edit
    notes = []
    assert lock_commit(Root(root), root / QWEN_LOCK, notes) is None  # was HEAD, the edit trusted
    assert notes == [why]
    result = invoke("audit", str(root / QWEN_LOCK), root=root)
    assert result.exit_code == 0
    assert (f"passprice: warning: {root / QWEN_LOCK}: git's index marks it {named} (git ls-files -v: {tag}): git "
            "status does not look at it, so it is not taken as committed at its path (its commit is found by its "
            "[lock] digest and bytes)") in result.stderr.splitlines()
    assert any(line.startswith("  sources       the source records above are today's:")
               for line in result.stdout.splitlines())


def test_2_an_unflagged_lock_keeps_its_path_commit_without_a_word(committed: Path) -> None:
    from passprice.locks import index_flag, lock_commit
    from passprice.registry import Root

    notes: list[str] = []
    held = lock_commit(Root(committed), committed / QWEN_LOCK, notes)
    assert held is not None and held[1] == _git(committed, "rev-parse", "HEAD").strip()
    assert notes == []
    assert index_flag(committed, f":(literal){QWEN_LOCK}") is None
    assert index_flag(committed, ":(literal)locks/none.lock.toml") is None
    _git(committed, "update-index", "--skip-worktree", QWEN_LOCK)
    _git(committed, "update-index", "--assume-unchanged", QWEN_LOCK)
    assert index_flag(committed, f":(literal){QWEN_LOCK}") == \
        "git's index marks it assume-unchanged and skip-worktree (git ls-files -v: s)"


def test_2_a_change_staged_and_not_committed_is_not_the_commit_s_file(committed: Path) -> None:
    """The one ``ls-files`` that replaced ``status`` compares the file with the index; the index's blob is compared
    with the one the path's last commit wrote, so a staged edit (``status``: ``M ``) is not taken for the commit's."""
    from passprice.locks import index_state, lock_commit
    from passprice.registry import Root

    with (committed / QWEN_LOCK).open("a", encoding="utf-8") as f:
        f.write("# staged\n")
    _git(committed, "add", QWEN_LOCK)
    assert _git(committed, "status", "--porcelain", "--", QWEN_LOCK) == f"M  {QWEN_LOCK}\n"
    blob = _git(committed, "rev-parse", f":{QWEN_LOCK}").strip()
    assert index_state(committed, f":(literal){QWEN_LOCK}") == (blob, None)
    notes: list[str] = []
    assert lock_commit(Root(committed), committed / QWEN_LOCK, notes) is None
    assert notes == []
    _git(committed, "commit", "-qm", "the staged edit")
    held = lock_commit(Root(committed), committed / QWEN_LOCK, notes)
    assert held is not None and held[1] == _git(committed, "rev-parse", "HEAD").strip()
    (committed / QWEN_LOCK).unlink()  # removed from the work tree: not as the index holds it
    assert index_state(committed, f":(literal){QWEN_LOCK}") == (None, None)


def test_3_the_path_lookup_is_bound_by_the_history_cap(committed: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``git log`` that keeps talking (so git's quiet bound never stops it) ran to git's 60 s; now to
    ``HISTORY_SEARCH_S`` (here 2 s), and the audit's notes say which git was stopped."""
    import time

    from passprice import locks
    from passprice.registry import Root

    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "git"
    script.write_text(f'#!/bin/sh\nfor a in "$@"; do if [ "$a" = log ]; then\n'
                      f'  i=0; while [ $i -lt 300 ]; do echo x; sleep 0.1; i=$((i+1)); done; exit 0\n'
                      f'fi; done\nexec {real} "$@"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(locks, "HISTORY_SEARCH_S", 2.0)
    notes: list[str] = []
    started = time.monotonic()
    assert locks.lock_commit(Root(committed), committed / QWEN_LOCK, notes) is None
    assert time.monotonic() - started < 15
    assert len(notes) == 1
    assert notes[0] == (f"{committed / QWEN_LOCK}: its commit not searched: git log: took longer than 2.0 s "
                        "(locks.HISTORY_SEARCH_S, the look-up at its path in all)")
    assert locks.HISTORY_SEARCH_S == 2.0


# --- (4) a long number named by its length -------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "line"), [
    (("sweep", "--draft-tokens", f"{LONG},2"),
     "passprice: error: --draft-tokens: a 5,000-digit number is out of range (a whole number from 0 to 64)"),
    (("sweep", "--positions", f"{LONG},2"),
     "passprice: error: --positions: a 5,000-digit number is out of range (each must be a finite number at least 0)"),
    (("sweep", "--batches", LONG),
     "passprice: error: --batches: a 5,000-digit number is out of range (a whole number from 1 to 4,294,967,295)"),
    (("sweep", "--batches", f"{LONG}-2"),  # was a traceback (int() of 5,000 digits in parse_batches)
     "passprice: error: --batches: '[a 5,000-digit number]-2' is not a number, a range A-B, or a doubling range "
     "A-B*2"),
    (("speculate", "--tokens", f"{LONG},2"),
     "passprice: error: --tokens: a 5,000-digit number: draft lengths run from 1 to 64, low to high"),
    (("speculate", "--tokens", f"1-{LONG}"),
     "passprice: error: --tokens: '1-[a 5,000-digit number]': draft lengths run from 1 to 64, low to high"),
    (("sweep", "--draft-tokens", "123456789012345678901234567890123456789012345,2"),
     "passprice: error: --draft-tokens: a 45-digit number is out of range (a whole number from 0 to 64)"),
    # short parts echoed as typed
    (("sweep", "--draft-tokens", "99"),
     "passprice: error: --draft-tokens: '99': 99 is out of range (a whole number from 0 to 64)"),
    (("sweep", "--draft-tokens", "1x1"),
     "passprice: error: --draft-tokens: '1x1' is not a number, a range A-B, or a doubling range A-B*2"),
])
def test_4_a_long_number_is_named_by_its_length(args: tuple[str, ...], line: str) -> None:
    assert bad(*args) == [line]


def test_4_shown_part() -> None:
    from passprice.bounds import shown_part
    from passprice.errors import InputError
    from passprice.sweep import parse_numbers

    assert shown_part("1" * 40) == repr("1" * 40)
    assert shown_part("1" * 41) == "a 41-digit number"
    assert shown_part("-" + "1" * 41) == "minus a 41-digit number"
    assert shown_part("x" * 100) == f"{'x' * 30!r}… (100 characters)"
    with pytest.raises(InputError) as e:
        parse_numbers(LONG, int, "batches", least=1)  # no upper bound: past the digits int() reads
    assert str(e.value) == "batches: a 5,000-digit number has more than the 4,300 digits a number is read to"
    assert parse_numbers("0" * 45 + "7", int, "x", most=64) == (7,)  # leading zeros: the number they write


# --- (5) a lock's card by file ------------------------------------------------------------------------------------


def test_5_a_lock_on_another_folders_card_of_the_same_name_rests_on_no_registry_card(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    other = root / "other"
    other.mkdir()
    (other / "h200_sxm_141gb.toml").write_bytes((root / "facts/cards/h200_sxm_141gb.toml").read_bytes())
    locked = invoke("lock", QWEN, "--card", str(other / "h200_sxm_141gb.toml"), "--name", "other-h200", "-o",
                    str(root / "locks/other-h200.lock.toml"), root=root)
    assert locked.exit_code == 0, locked.output
    text = (root / "locks/other-h200.lock.toml").read_text(encoding="utf-8")
    assert '[card]\nname = "h200_sxm_141gb"' in text  # the name it records is the registry card's
    result = invoke("audit", "--fact", "h200_sxm_141gb:memory.bandwidth", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "locks resting on them: 5; withdrawn (the facts above assumed), 5 break" in lines  # was 6: other-h200
    assert not any(line.startswith("other-h200 ") for line in lines)
    assert any(line.startswith(f"{QWEN} ") for line in lines)
    # the lock on the registry's own card by its name is matched as before; the library call without a root too
    from passprice.lineage import FactRef, lock_impacts, registered_locks
    from passprice.registry import Root

    locks, problems = registered_locks(Root(root))
    assert problems == []
    demoted = {FactRef("card", "h200_sxm_141gb", "memory.bandwidth")}
    by_file = {i.name for i in lock_impacts(locks, demoted, root=Root(root))[0]}
    by_name = {i.name for i in lock_impacts(locks, demoted)[0]}
    assert by_name - by_file == {"other-h200"}
    assert QWEN in by_file


# --- (6) a size in MiB under a quote in MB ------------------------------------------------------------------------


def test_6_a_binary_capacity_quoted_in_mb_is_read_as_mib() -> None:
    from passprice.addedfacts import quote_holds_another

    assert quote_holds_another(64, "MiB", ["L2 cache 64 MB"]) == []
    assert quote_holds_another(70, "MiB", ["L2 cache 64 MB"]) == ["64 MB (61.0352 MiB)"]
    assert quote_holds_another(64, "KiB", ["64 KB per SM"]) == []
    # GB is not: a memory's 64 GiB under '64 GB' is another figure (every card records capacity in decimal GB)
    assert quote_holds_another(64, "GiB", ["64 GB"]) == ["64 GB (59.6046 GiB)"]


def test_6_the_mismatch_is_the_review_s_state() -> None:
    from passprice.facts import Fact, Provenance
    from passprice.sources import MISMATCH, StoredText, quote_check

    text = "Specifications\nL2 cache 64 MB\n"
    stored = {"doc": StoredText("sources/excerpts/doc.txt", None, text=text, flat=text)}

    def fact(value: float) -> Fact:
        return Fact(value=value, amount=value, unit="MiB", provenance=Provenance.PUBLISHED, source="doc",
                    locator="Specifications: 'L2 cache 64 MB'")

    assert quote_check("on_chip.capacity", fact(64), stored).state == "checked"
    held = quote_check("on_chip.capacity", fact(70), stored)
    assert held.state == MISMATCH
