"""Attack round 19 (issue 13): the newest merged code under hostile input (sweep --jobs N -o FILE's shared writes,
the sweep's every-row-refused exit, check's stray-folder rule, fact set's slip bound, the review's pinned-citation
and own-code checks, simulate's column-wise JSON). Each test builds the input that broke passprice and asserts what
it does with it now (exit status and the line it says)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke
from passprice.registry import find_root

# --- (a) sweep: every row refused, batch 0 among the batches ----------------------------------------------------------


def test_a_grid_of_batch_0_and_batches_that_do_not_fit_says_nothing_priced() -> None:
    """DeepSeek-V3 does not fit an H200 at any batch; ``--batches 0,1,2`` probed batch 0 alone (refused as Empty,
    which a larger batch lifts), so the sweep wrote only refusals and exited 0 without a word. The probe now prices
    the smallest batch of sequences. (The command line refuses batch 0 since test_fix181.py, exit 2; a grid the
    library is given may still hold it.)"""
    from passprice.sweep import Grid, Sweeper, nothing_priced

    root = find_root(REPO)
    assert nothing_priced(Sweeper(root), Grid(("deepseek-v3-h200",), (0, 1, 2))) == {"NotResident": 1}
    result = invoke("sweep", "deepseek-v3-h200", "--batches", "1,2")
    assert result.exit_code == 1, result.output
    assert [row.rsplit(",", 1)[-1] for row in result.stdout.splitlines()[1:]] == ["NotResident", "NotResident"]
    assert result.stderr.splitlines()[-1].startswith(
        "passprice: refused: no row of the sweep has a price: every line is refused at its smallest batch, and at "
        "every larger one: NotResident (1 line) — deepseek-v3-h200 on h200_sxm_141gb at position 2048, batch 1: the "
        "card memory must hold 411,173,846,016 bytes but holds 141,000,000,000: "
    )


def test_a_grid_of_batch_0_alone_is_every_row_empty() -> None:
    """A grid of batch 0 alone is every row Empty (the library's probe says so); on the command line ``--batches 0``
    is out of range, as ``price --batch 0`` is (exit 2)."""
    from passprice.sweep import Grid, Sweeper, nothing_priced

    assert nothing_priced(Sweeper(find_root(REPO)), Grid(("gemma3-270m-h100",), (0,))) == {"Empty": 1}
    result = invoke("sweep", "gemma3-270m-h100", "--batches", "0", "--no-lock")
    assert result.exit_code == 2, result.output
    assert result.stderr == ("passprice: error: --batches: '0': 0 is out of range (a whole number from 1 to "
                             "4,294,967,295)\n")


def test_a_grid_where_batch_1_prices_is_no_refusal() -> None:
    """Batch 0 beside a batch that prices: no refusal of the whole grid (no false claim)."""
    from passprice.sweep import Grid, Sweeper, nothing_priced

    assert nothing_priced(Sweeper(find_root(REPO)), Grid(("gemma3-270m-h100",), (0, 1))) is None


# --- (c) check's stray-folder rule: a link to a folder ---------------------------------------------------------------


def test_a_linked_folder_of_locks_or_servings_is_a_stray_folder(tmp_path: Path) -> None:
    """``locks/old -> ARCHIVE`` (a folder of lock files) and ``registry/serving -> ELSEWHERE`` were passed over by the
    stray-folder rule (it followed no link), so ``check`` said all holds with a lock it never read. A link to a
    folder is a folder to the rule now: exit 2, one line each; links that reach a folder passprice reads are not."""
    root = copy_root(tmp_path)
    archive = tmp_path / "archive"
    archive.mkdir()
    shutil.copy(root / "locks" / "gemma3-270m-h100.lock.toml", archive)
    (root / "locks" / "old").symlink_to(archive)
    (root / "registry" / "serving").symlink_to(archive)
    (root / "locks" / "self").symlink_to(".")
    (root / "facts" / "cards" / "same").symlink_to("../cards")
    (root / "facts" / "cards" / "up").symlink_to("..")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert [line for line in result.stderr.splitlines() if "not a folder passprice reads" in line] == [
        "passprice: error: registry/serving: not a folder passprice reads: its 1 .toml file is "
        "neither checked nor priced (did you mean registry/servings?)",
        "passprice: error: locks/old: not a folder passprice reads: its 1 .toml file is neither "
        "checked nor priced (passprice reads locks/ itself, not the folders in it: move them to locks/)",
    ]
    for link in ("old",):
        (root / "locks" / link).unlink()
    (root / "registry" / "serving").unlink()
    assert invoke("check", root=root).exit_code == 0


# --- (e) the review's pinned-citation check: a historic lock renamed --------------------------------------------------


def test_a_drifted_lock_renamed_is_not_a_forged_pin(tmp_path: Path) -> None:
    """A lock made before a card's citation was reworded (its pin drifted: a historic price) and then renamed by
    ``git mv`` failed the review as "pinned by hand" (exit 1): the new path was not on BASE, and neither side's
    registry holds the old citation today. Its pins are those BASE's lock of the same card and checkpoint pinned:
    the review passes; a pin no BASE lock pinned still fails."""
    from test_diff import commit_all, git, make_lock_file

    serving = "r1-qwen7b-h200"
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, serving, serving)
    commit_all(path, "a lock")
    card = path / "facts" / "cards" / "h200_sxm_141gb.toml"
    old = ("locator = \"Specifications table, H200 SXM column (a row: its label, "
           "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"")
    text = card.read_text(encoding="utf-8")
    assert text.count(old) == 1
    card.write_text(text.replace(old, old[:-1] + ' (checked again)"'), encoding="utf-8")
    commit_all(path, "a locator reworded: the lock drifts")
    git(path, "checkout", "-q", "-b", "pr")
    git(path, "mv", f"locks/{serving}.lock.toml", "locks/renamed.lock.toml")
    commit_all(path, "rename the lock")
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 0, result.output
    assert "cannot be traced" not in result.output


# --- (a') -o FILE: a long name the file system takes ------------------------------------------------------------------


def test_an_output_name_of_250_bytes_is_written(tmp_path: Path) -> None:
    """A file name of 250 bytes (the file system takes 255) was refused: "cannot write: the name is longer than the
    file system allows", since the temporary file's name (``.NAME.<12 hex>.tmp``) was 268. The temporary name is
    cut to fit now: the file is written, nothing else is left."""
    out = tmp_path / ("a" * 245 + ".json")
    result = invoke("sweep", "gemma3-270m-h100", "--batches", "1,2", "--json", "--no-lock", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert [row["batch"] for row in json.loads(out.read_text(encoding="utf-8"))] == [1, 2]
    assert os.listdir(tmp_path) == [out.name]
    wide = tmp_path / ("é" * 125 + ".csv")  # 255 bytes in UTF-8
    result = invoke("sweep", "gemma3-270m-h100", "--batches", "1,2", "--no-lock", "-o", str(wide))
    assert result.exit_code == 0, result.output
    assert len(wide.read_text(encoding="utf-8").splitlines()) == 3
    assert sorted(os.listdir(tmp_path)) == sorted([out.name, wide.name])
    too_long = tmp_path / ("a" * 251 + ".json")
    result = invoke("sweep", "gemma3-270m-h100", "--batches", "1,2", "--no-lock", "-o", str(too_long))
    assert result.exit_code == 2, result.output
    assert result.stderr.endswith("(256 characters): the name is longer than the file system allows\n")


# --- (e') the review's own-code section: a module file whose name is not UTF-8 ----------------------------------------


def test_a_code_file_named_in_bytes_that_are_not_utf8_does_not_stop_the_side_s_prices(tmp_path: Path) -> None:
    """A file ``src/passprice/<0xff 0xfe> odd.py`` in HEAD's own code (no module imports it) stopped the pricing-model
    digest with a UnicodeEncodeError, in this process and in HEAD's own: "HEAD unreadable", every lock "not judged:
    its own code could not price it: UnicodeEncodeError …" and the review failed (exit 1). The name is keyed by its
    bytes now: the lock is priced the same, the file is named (escaped) among the code changed, exit 0."""
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    odd = path / "src" / "passprice" / os.fsdecode(b"\xff\xfe odd.py")
    odd.write_text("x = 1\n", encoding="utf-8")
    result = invoke("diff", "main", root=path)
    assert result.exit_code == 0, result.output
    assert "no lock affected; 1 lock unaffected; passprice's own code changed (1 file)" in result.stdout
    assert "  src/passprice/\\udcff\\udcfe odd.py\n" in result.stdout
