"""Two gaps walkthrough 51 found, each fixed with a test: a review of a serving re-pointed to another routing record
names the records and the new one's citations on the lock's row (it read ``changed`` of ``serving`` alone, ``cites``
empty), and ``reproduce``'s drift line says a fact's source changed (``864 GB/s (published) → 900 GB/s (published)``
said nothing of the new datasheet)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import invoke

LOCK = "locks/qwen3-30b-a3b-h200.lock.toml"
OLD, NEW = "qwen3-30b-a3b-measured", "qwen3-30b-a3b-team-chat"
TEAM = "team-imatrix-routing-2026-03"
SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "Team measurement: Qwen3-30B-A3B expert selection counts on our chat traffic"
kind = "benchmark-results"
publisher = "our serving team"
date = "2026-03-02"
url = "https://example.invalid/wiki/routing-2026-03"
retrieved = "2026-03-02"
read = "the wiki page's table 'experts for 90% coverage', median over layers"
"""


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's ``init --examples`` with one lock kept (Qwen3-30B-A3B on the H200), committed; then a commit
    re-pointing its serving to a routing record of the team's own traffic (40 of 128 experts, another source), the
    lock not re-locked: walkthrough 51's PR2 on the examples."""
    root = tmp_path_factory.mktemp("walk52") / "reg"
    assert invoke("init", "--examples", str(root)).exit_code == 0
    # Only what the one lock reads (the review checks all of HEAD's files, stack fits 1.2 s of them): its serving,
    # card, checkpoint and routing records.
    keep = {"locks": "qwen3-30b-a3b-h200.lock.toml", "registry/servings": "qwen3-30b-a3b-h200.toml",
            "facts/cards": "h200_sxm_141gb.toml", "registry/checkpoints": "qwen3-30b-a3b-q4_k_m.toml",
            "facts/stacks": "", "registry/measurements": "", "facts/drafts": ""}
    for folder, name in keep.items():
        for file in (root / folder).glob("*.toml"):
            if file.name != name:
                file.unlink()
    for source in ("qwen35-mtp-review", "ws1-design"):  # their documents are files removed above
        (root / "sources" / f"{source}.toml").unlink()
    shutil.rmtree(root / ".github", ignore_errors=True)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "examples, one lock")
    measured = (root / "facts/routing" / f"{OLD}.toml").read_text(encoding="utf-8")
    team = (measured.replace('source = "gpu-container-handbook-routing-derisk"', f'source = "{TEAM}"')
            .replace("value = 0.453125\n", "value = 0.3125\n").replace("value = 58,", "value = 40,")
            .replace("row 'narrow (single-domain Python)', ~8k tokens: experts for 90% coverage 58/128 (45%)",
                     "row 'chat': 40 of 128"))
    assert team.count(TEAM) == 2 and "0.3125" in team
    (root / "facts/routing" / f"{NEW}.toml").write_text(team, encoding="utf-8")
    (root / "sources" / f"{TEAM}.toml").write_text(SOURCE, encoding="utf-8")
    serving = root / "registry/servings/qwen3-30b-a3b-h200.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace(f'routing = "{OLD}"', f'routing = "{NEW}"'),
                       encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "the serving priced on the team's routing record")
    return root


def test_a_serving_re_pointed_to_another_routing_record_names_both_and_the_new_citations(repo: Path) -> None:
    # Walkthrough 51: the row read `changed: []`, `cites: []` (diff read the lock's own record, BASE's, which the
    # change left as it was), so nothing said the price now rests on another record's facts and citations. One
    # review (the library's, as `passprice diff` makes it), rendered in the three formats.
    from passprice.registry import Root
    from passprice.review import diff, render

    review = diff(Root(repo), "HEAD~1", "HEAD")
    data = json.loads(render(review, "json"))
    (row,) = [lock for lock in data["locks"] if lock["path"] == LOCK]
    assert row["rerouted"] == {"base": OLD, "head": NEW}
    assert row["routing_record"] == NEW
    assert row["changed"] == ["routing.hot_experts", "routing.hot_share"]  # hot_share: 0.9 both, re-cited
    assert [(c["path"], c["source"], c["recited"]) for c in row["cites"]] == [
        ("routing.hot_experts", TEAM, True), ("routing.hot_share", TEAM, True)]
    assert row["cites"][0]["locator"].endswith("row 'chat': 40 of 128")
    assert [(i["name"], i["value"]) for i in row["cites"][0]["derivation"]["inputs"]] == [("hot", 40),
                                                                                         ("experts", 128)]
    changed = f"routing record {OLD} → {NEW}, routing.hot_experts ({NEW}), routing.hot_share ({NEW}), serving"
    text = render(review, "text").splitlines()
    at = next(i for i, line in enumerate(text) if line.startswith("  qwen3-30b-a3b-h200 (locks/"))
    assert text[at + 1] == f"    changed   {changed}"
    assert text[at + 2].startswith(f"    cites     routing.hot_experts ({NEW}): {TEAM}, ")
    assert f"; routing.hot_share ({NEW}): {TEAM}, " in text[at + 2]
    markdown = render(review, "markdown")
    assert f"`routing record {OLD} → {NEW}`" in markdown
    assert ("its changed facts now cite (as HEAD cites them; whole in the Facts section): "
            f"routing.hot_experts ({NEW}): {TEAM}, ") in markdown


def test_a_drifted_fact_citing_another_source_says_so(repo: Path, tmp_path: Path) -> None:
    # Walkthrough 51: `memory.bandwidth: 864 GB/s (published) → 900 GB/s (published)`, the datasheet it now cites
    # (another revision) unsaid. Here the H200's capacity re-cited to a second record of its product page (its
    # source since cite102) and moved 141 → 140 GB.
    root = tmp_path / "reg"
    shutil.copytree(repo, root, ignore=shutil.ignore_patterns(".git"))
    card = root / "facts/cards/h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    was = ('[memory.capacity]\nvalue = 141\nunit = "GB"\nprovenance = "published"\n'
           'source = "nvidia-h200-product-page"\n')
    assert text.count(was) == 1
    card.write_text(text.replace(was, was.replace("141", "140").replace('page"', 'page-rev2"')),
                    encoding="utf-8")
    shutil.copy(root / "sources/nvidia-h200-product-page.toml", root / "sources/nvidia-h200-product-page-rev2.toml")
    lines = invoke("reproduce", LOCK, root=root).output.splitlines()
    (facts,) = [line for line in lines if line.lstrip().startswith("facts ")]
    assert ("memory.capacity: 141 GB (published) → 140 GB (published), source nvidia-h200-product-page → "
            "nvidia-h200-product-page-rev2") in facts
    data = json.loads(invoke("reproduce", LOCK, "--json", root=root).stdout)
    (drift,) = [d for d in data["facts_drifted"] if d["path"] == "memory.capacity"]
    assert drift["source_changed"] == {"pinned": "nvidia-h200-product-page", "today": "nvidia-h200-product-page-rev2"}
    # the serving's routing re-pointed (the fixture's commit): its facts drifted from the new record, as cited
    (hot,) = [d for d in data["facts_drifted"] if d["path"] == "routing.hot_experts"]
    assert hot["source_changed"] == {"pinned": "gpu-container-handbook-routing-derisk", "today": TEAM}
