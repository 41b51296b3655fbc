"""What session 18's README-only walkthrough (a team registry's reviewer playing three pull requests) tripped on,
kept as a test."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import copy_root, invoke
from test_slip_34 import renderings  # one in-process review rendered per format

SERVING = "gemma3-270m-mi300x"
LOCK = f"locks/{SERVING}.lock.toml"


def test_an_added_lock_says_what_it_rests_on_in_the_review(tmp_path: Path) -> None:
    # Confused me: a colleague's pull request added a serving (gemma3-270m-q4_k_m on mi300x, batch 64) and its lock.
    # `passprice diff --format markdown` said only "- added `gemma3-270m-mi300x` (…): 224,149.0 tokens/s" and the
    # text "floors new → still holds": nothing said the new price rests on an *estimated* fact (the MI300X's
    # `scale`), which `passprice check` prints for the same lock ("the price's weakest provenance is estimated").
    # A reviewer could not tell from the comment whether to accept a lock on estimates. Now the added lock's line
    # names its batch, its bind and its weakest provenance with the facts at it, in both formats.
    base = copy_root(tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    made = invoke("new-serving", SERVING, "--checkpoint", "gemma3-270m-q4_k_m", "--card", "mi300x", "--batch", "64",
                  "--description", "Gemma 3 270M on one MI300X, batch 64", root=head)
    assert made.exit_code == 0, made.output
    locked = invoke("lock", SERVING, "-o", str(head / LOCK), root=head)
    assert locked.exit_code == 0, locked.output
    # 224,149.0 before session 39 (window55: a windowed layer reads window − 1 cached positions)
    assert locked.stdout.startswith(f"locked {SERVING} (price, locks serving {SERVING}): 224,337.8 tokens/s at "
                                    "batch 64, binds on memory, weakest estimated -> ")
    status, (markdown, text) = renderings(base, "markdown", "text", base=str(base), head=str(head))  # one review
    assert status == 0, markdown
    assert (f"- added `{SERVING}` (`{LOCK}`, price, locks serving `{SERVING}`): 224,337.8 tokens/s at batch 64, "
            "binds on memory, weakest provenance estimated (scale)") in markdown.splitlines()
    lines = text.splitlines()
    row = lines.index(f"  {SERVING} ({LOCK}, card mi300x, price): added")
    assert lines[row + 1 : row + 9] == [
        "    changed   –",
        "    floors    new → still holds",
        "    tokens/s  not priced → 224,337.8",
        "    recorded  224,337.8",
        "    pass      – → 285.3 µs",
        "    binds     – → memory",
        "    weakest   estimated (scale)",
        "",
    ]
    # check says the same of the same lock.
    check = invoke("check", root=head)
    assert check.exit_code == 0, check.output
    assert f"  floors: lock {SERVING} holds; the price's weakest provenance is estimated" in check.stdout.splitlines()
