"""What ``check`` warns of on HEAD is shown by the review (session 13): a temporary file left by a killed write and a
source nothing cites made ``check`` print warnings, while ``diff`` (text, markdown, the pull-request comment, JSON)
said nothing of them. Shown as check shows them, in a section of their own, never a failure."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke
from test_slip_34 import renderings  # one in-process review rendered per format

LEFT = ".x.lock.toml.0123456789ab.tmp"


def _sides(tmp_path: Path) -> tuple[Path, Path]:
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    left = head / "locks" / LEFT
    left.write_text("x", encoding="utf-8")
    left.chmod(0o600)
    (head / "sources" / "my-notes.toml").write_text(
        '[source]\nkind = "web-page"\ntitle = "my notes"\nread = "read it all through"\npublisher = "Me and co"\n'
        'url = "unknown"\ndate = "unknown"\nretrieved = "unknown"\n', encoding="utf-8")
    return base, head


def test_the_review_shows_checks_warnings_on_head_and_passes(tmp_path: Path) -> None:
    base, head = _sides(tmp_path)
    warned = [line.removeprefix("  warning: ") for line in invoke("check", root=head).stdout.splitlines()
              if line.startswith("  warning: ")]
    # left32: check's standing line on the records that date no copy read (my-notes.toml among them) is not repeated
    # by a review alone (it says the same on every change: passprice sources lists them); beside other warnings it
    # is listed, so that the review's count and lines are check's (tests/test_fix154.py)
    undated = warned[-1]
    # 23 of the shipped records and my-notes (24 and 21 more before cite90 removed the A100 datasheet's record)
    assert undated.startswith('23 source records say retrieved = "unknown" (') and " and 20 more): " in undated
    assert len(warned) == 3
    assert warned[0] == "sources/my-notes.toml: cited by no fact: cite it, or remove it"
    assert warned[1].startswith(f"locks/{LEFT}: a temporary file passprice writes x.lock.toml through")

    status, (text, markdown, as_json) = renderings(REPO, "text", "markdown", "json", base=str(base), head=str(head))
    assert status == 0, text  # a warning, not a failure
    lines = text.splitlines()
    assert lines[1] == (
        "no fact changed; 1 source added; no lock affected; 3 warnings of check on HEAD; 10 locks unaffected"
    )
    at = lines.index("HEAD's passprice check warns (not a failure)")
    assert lines[at + 1: at + 4] == [f"  warning: {w}" for w in warned]

    md = markdown.splitlines()  # the same review as markdown: exit 0 too
    assert md[0].startswith("⚠️ **passprice diff**")
    at = md.index("#### Warnings of passprice check on HEAD (not a failure)")
    assert md[at + 2] == "- ⚠️ warning: sources/my-notes.toml: cited by no fact: cite it, or remove it"
    assert md[at + 3].startswith("- ⚠️ warning: locks/")

    out = json.loads(as_json)
    assert out["head_warnings"] == warned


def test_a_review_without_warnings_has_no_warning_section(tmp_path: Path) -> None:
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    status, (text, as_json) = renderings(REPO, "text", "json", base=str(base), head=str(head))  # one review
    assert status == 0
    assert "HEAD's passprice check warns (not a failure)" not in text
    assert json.loads(as_json)["head_warnings"] == []
