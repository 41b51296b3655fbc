"""Every listing shows each file that reads and reports each that does not on stderr (exit 2): `passprice sources`
with one invalid sources/*.toml printed nothing on stdout, where cards, servings, checkpoints and check list the good
files."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

#: A listing, the folder of its records, a bad file to drop there, the line reporting it, a good record it lists.
LISTINGS = [
    ("cards", "facts/cards", "memory = 1\n", "broken.toml: memory: 1 is not of type 'object'", "h200_sxm_141gb"),
    ("servings", "registry/servings", "batch = 2\n", "broken.toml: card: missing (required)",
     "r1-qwen7b-h200"),
    ("checkpoints", "registry/checkpoints", "x = [\n", "broken.toml", "gemma3-270m-q4_k_m"),
    ("sources", "sources", 'title = "a document"\n', "broken.toml: source: missing (required)",
     "azure-ai-benchmarking-guide"),
]


@pytest.mark.parametrize(("command", "folder", "text", "says", "good"), LISTINGS, ids=[row[0] for row in LISTINGS])
def test_a_listing_shows_the_good_files_and_reports_the_bad(
    command: str, folder: str, text: str, says: str, good: str, tmp_path: Path
) -> None:
    root = copy_root(tmp_path)
    (root / folder / "broken.toml").write_text(text)
    for args in ((command,), (command, "--json")):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, result.output
        assert good in result.stdout
        lines = result.stderr.splitlines()
        assert lines and all(line.startswith("passprice: error: ") for line in lines), result.stderr
        # the file named as check names it, relative to the registry (it named the absolute path under --root)
        assert any(line.startswith(f"passprice: error: {folder}/broken.toml: ") and says in line for line in lines), (
            result.stderr)


def test_sources_lists_every_good_source_beside_a_bad_one(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    whole = invoke("sources", root=root)
    assert whole.exit_code == 0
    (root / "sources" / "broken.toml").write_text('title = "a document"\n')
    result = invoke("sources", root=root)
    # The same table, every good source with the same counts; the bad file on stderr alone.
    assert result.stdout == whole.stdout
    assert result.stderr.count("passprice: error: ") == len(result.stderr.splitlines()) >= 1
