"""Hostile input against today's main (issue 13), each escape found kept as its reproducer, built in the test.

- (1) ``fact show --history`` read a git submodule entry (a gitlink, mode 160000) at a card's path as a version of
  the card: git takes any object id there, and one naming another card's blob (``git update-index --cacheinfo
  160000,BLOB,facts/cards/h100_pcie_80gb.toml``) showed the H100 SXM's 3.35 TB/s as the H100 PCIe's
  ``memory.bandwidth`` at that commit, exit 0; a gitlink naming a commit was said to be "missing from the
  repository". Now the version does not read, and says it is a submodule, as ``diff`` says of one.
- (2) ``fact show --history`` of a card committed past its cap and unchanged in the work tree ran ``git
  hash-object`` on the work tree's file to tell whether it was an uncommitted change: a 300 MB card ran past git's
  quiet bound and the history was refused (exit 2) as "git hash-object: said nothing for 1.0 s … something holds
  it". A file past its kind's cap is now compared by size with the committed blob, never hashed.
- (3) A measured run at ``positions = [512, 512]`` (first not past last, so schema-valid) in a stack that no fit
  reads passed ``check`` (0 problems, exit 0) and was a refused row of ``validate``, exit 0, though no such run can be
  priced (one context class at the mean, 512, with a limit of the last, 512: ``BadContexts``). Now the file is refused
  as it is read, naming ``run.0.positions``, exit 2, by every command that reads it.
- (4) A commit whose tree names a tree object under a file's mode at a card's path (``git update-index --cacheinfo
  100644,TREE,PATH``, which git takes unchecked) was read by ``diff`` as the card: the tree's bytes, ``byte 29: not
  UTF-8 text`` (2.45 s of CPU where the refusal takes 1.3 s); ``fact show --history`` said the object was "missing
  from the repository". Now no object but a blob is read as a file's content, and both say what the object is.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

PCIE = "facts/cards/h100_pcie_80gb.toml"
SXM = "facts/cards/h100_sxm5_80gb.toml"


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True, text=True)
    return done.stdout.strip()


def _repository(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    return root


def test_a_gitlink_at_a_cards_path_is_no_version_of_the_card(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    other = _git(root, "rev-parse", f"HEAD:{SXM}")  # the H100 SXM card's blob: 3.35 TB/s
    _git(root, "rm", "-q", "--cached", PCIE)
    _git(root, "update-index", "--add", "--cacheinfo", f"160000,{other},{PCIE}")
    _git(root, "commit", "-q", "--no-verify", "-m", "a gitlink naming another card's blob")
    linked = _git(root, "rev-parse", "HEAD")
    _git(root, "rm", "-q", "--cached", PCIE)
    _git(root, "add", PCIE)  # the work tree's card, as it was
    _git(root, "commit", "-q", "--no-verify", "-m", "back")
    result = invoke("fact", "show", "h100_pcie_80gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    # Before: "3.35 TB/s (published)   value, citation changed, note removed" under the gitlink's commit.
    assert "3.35 TB/s" not in result.stdout, result.stdout
    assert (f"  does not read: {PCIE}: a git submodule at {linked[:12]}; passprice reads no submodules (keep the files "
            f"in this repository: git rm --cached {PCIE}, then add the folder's files and commit)") in result.stdout
    assert "reads again: as at " in result.stdout  # the card's own 2 TB/s, unchanged since the first commit
    assert result.stdout.count("2 TB/s (published)") == 2


def test_a_card_past_its_cap_unchanged_since_its_commit_is_not_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import gitread

    root = _repository(tmp_path)
    card = root / PCIE
    big = card.read_text(encoding="utf-8") + "# " + "x" * 300_000 + "\n"  # past a card's 256 KiB
    card.write_text(big, encoding="utf-8")
    _git(root, "commit", "-q", "--no-verify", "-am", "padded")
    size = len(big.encode("utf-8"))
    asked: list[list[str]] = []
    run_git = gitread.run_git

    def watched(cwd: Path, args: list[str], *rest: object, **options: object) -> bytes:
        asked.append(list(args))
        return run_git(cwd, args, *rest, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(gitread, "run_git", watched)
    monkeypatch.setattr("passprice.history._run_git", watched)
    result = invoke("fact", "show", "h100_pcie_80gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    assert not [a for a in asked if a[:1] == ["hash-object"]], asked  # 300 MB took past git's quiet bound, exit 2
    assert "uncommitted changes" not in result.stdout, result.stdout
    assert f"({size:,} bytes; PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)" in result.stdout
    card.write_text(big + "#\n", encoding="utf-8")  # another size: an uncommitted change, said so
    result = invoke("fact", "show", "h100_pcie_80gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    assert "uncommitted changes" in result.stdout
    assert f"({size + 2:,} bytes; PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)" in result.stdout


POINTS = "registry/measurements/llamacpp-points.toml"


def test_a_run_whose_first_position_is_its_last_is_a_bad_file(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    runs = root / POINTS
    text = runs.read_text(encoding="utf-8")
    assert text.count("positions = [256, 512]") >= 1 and 'stack = "llamacpp-cuda-2312"' in text  # no registered fit
    runs.write_text(text.replace("positions = [256, 512]", "positions = [512, 512]", 1), encoding="utf-8")
    said = (f"passprice: error: {POINTS}: run.0.positions: first 512 is not below last 512: a run is priced at the "
            "mean of its positions with a limit of the last, so the first must be below the last: correct the run's "
            "positions")
    for args in (("check",), ("validate",), ("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run")):
        result = invoke(*args, root=root)
        # Before: check "0 problems", exit 0; validate a row "refused (BadContexts): …", exit 0.
        assert result.exit_code == 2, (args, result.output)
        assert said in result.stderr.splitlines(), (args, result.stderr)
        assert "Traceback" not in result.output


def test_a_tree_under_a_files_mode_is_no_version_of_the_file(tmp_path: Path) -> None:
    from passprice import gitread

    root = _repository(tmp_path)
    base = _git(root, "rev-parse", "HEAD")
    tree = _git(root, "rev-parse", "HEAD:facts/drafts")
    _git(root, "rm", "-q", "--cached", PCIE)
    _git(root, "update-index", "--add", "--cacheinfo", f"100644,{tree},{PCIE}")
    _git(root, "commit", "-q", "--no-verify", "-m", "a tree under a file's mode")
    forged = _git(root, "rev-parse", "HEAD")
    said = (f"{forged[:12]}:{PCIE}: object {tree} is a tree, not a file's content (a tree entry of a file's mode "
            "names it, which git fsck reports): commit the file itself")
    result = invoke("diff", base, forged, root=root)
    # Before: "… does not read on HEAD: facts/cards/h100_pcie_80gb.toml: byte 29: not UTF-8 text".
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"passprice: error: {said}"], result.stderr
    _git(root, "rm", "-q", "--cached", PCIE)
    _git(root, "add", PCIE)
    _git(root, "commit", "-q", "--no-verify", "-m", "back")
    result = invoke("fact", "show", "h100_pcie_80gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    assert f"  does not read: {said}" in result.stdout.splitlines(), result.stdout  # before: "is missing from …"
    assert gitread.read_blobs(root, {tree: 1}) == {}  # a tree's bytes are no file's
