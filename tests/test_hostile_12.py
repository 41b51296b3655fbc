"""Attack round 12 (issue 13) on the code of the last rounds (sweep --jobs, new-serving, the pricing model's record,
diff's new checks): each test builds the input that broke it and asserts what passprice now does with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root

# --- a registry record written through a link to a file outside the registry ----------------------------------------

_GEMMA = Path(__file__).parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"


@pytest.mark.parametrize("what", ["serving", "lock", "checkpoint"])
def test_a_record_link_to_a_file_outside_the_registry_is_not_written_through(tmp_path: Path, what: str) -> None:
    """``new-serving NAME --force``, ``lock --name NAME --force`` and ``import --name NAME --force`` over a record that
    is a symbolic link to a file outside the registry wrote the record onto that file (any file the link names:
    a pull request may add such a link), which passprice then refused to read ("a symbolic link to …, outside the
    registry"). The link is refused before anything is written, in the line a read gives, and the file outside is
    left as it was."""
    root = copy_root(tmp_path)
    outside = tmp_path / "outside.toml"
    outside.write_text("kept = 1\n", encoding="utf-8")
    if what == "serving":
        link = root / "registry" / "servings" / "x.toml"
        args: tuple[str, ...] = ("new-serving", "x", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card",
                                 "h200_sxm_141gb", "--force")  # fmt: skip
    elif what == "lock":
        link = root / "locks" / "x.lock.toml"
        args = ("lock", "r1-qwen7b-h200", "--name", "x", "--force")
    else:
        link = root / "registry" / "checkpoints" / "x.toml"
        args = ("import", str(_GEMMA), "--name", "x", "--force")
    link.symlink_to(outside)
    bad(*args, root=root, says=f"{link}: a symbolic link to {outside}, outside the registry ({root}): a registry's "
        "files lie inside it (copy the file in, or link to one inside)")  # fmt: skip
    assert outside.read_text(encoding="utf-8") == "kept = 1\n" and link.is_symlink()
