"""Attack round 17 (issue 13) on the code merged in session 9 (compare, sweep --max-tpot, audit --stack, the review's
unlocked servings, the header cache's "seen before", diff's card-copy sharing, lock's checkout and path rules): each
test builds the input that broke it and asserts what passprice now does with it (exit status and the error line)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke

# --- (a) compare --cards naming one card twice (its name and its file's path) -----------------------------------------


def test_compare_lists_a_card_named_by_its_name_and_by_its_path_once(tmp_path: Path) -> None:
    """``--cards /ROOT/facts/cards/h100_sxm5_80gb.toml,h100_sxm5_80gb`` gave two identical rows (and "2 of 2 cards"
    in the headroom line): the list was deduplicated by its strings. One row a card file now; a copy of the file
    under another name is another card, and keeps its row."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    copy = tmp_path / "h100copy.toml"
    copy.write_bytes(card.read_bytes())
    link = tmp_path / "h100link.toml"
    link.symlink_to(card)
    result = invoke("compare", "gemma3-270m-h100", "--cards", f"{card},h100_sxm5_80gb,{link},{copy}", "--json",
                    root=root)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [row["card"] for row in json.loads(result.stdout)["cards"]] == ["h100_sxm5_80gb", "h100copy"]
