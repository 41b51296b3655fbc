"""A checkpoint entry's claims in the review (session 17): what an entry says of the GGUF file it was imported from
(``[entry]`` source, origin, imported_by; ``[header]`` sha256 and each shard's file and sha256) is not read by the
pricer, so a hand edit of one left the entry's content digest as it was and the review said only "the entry was
rewritten, what the pricer reads was not". An auditor tracing a price to the file it was read from lost the trail
without a word; the review now names each changed claim with its value before and after."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice import schema
from passprice.review.changes import checkpoint_claims
from test_diff import commit_all, git
from test_slip_34 import renderings  # one in-process review rendered per format

ENTRY = REPO / "registry" / "checkpoints" / "codellama-7b-f16.toml"
SHA = "7598e1bb60f9277a81f6d269eaf9e898e2052dc62e344f7e89cc6df6886221c3"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's registry committed on ``main`` of a throwaway repository."""
    path = tmp_path_factory.mktemp("claims") / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    return path


def branch(path: Path, name: str) -> Path:
    git(path, "checkout", "-q", "-f", "main")
    git(path, "clean", "-qfdx")
    git(path, "checkout", "-q", "-b", name)
    return path


def test_the_claims_of_the_shipped_codellama_entry() -> None:
    """Read off the shipped entry: one shard, its file and the header's sha256 (the whole header's and the shard's
    alike, one file)."""
    claims = checkpoint_claims(schema.load(ENTRY, "checkpoint"))
    assert claims["entry.source"] == "codellama-7b-f16.header.gguf"
    assert claims["header.sha256"] == SHA
    assert claims["header.shards.1.file"] == "codellama-7b-f16.header.gguf"
    assert claims["header.shards.1.sha256"] == SHA
    assert claims["entry.imported_by"] == "passprice 0.1.0"
    assert claims["entry.origin"].startswith("Synthetic, header only: built by passprice synth")
    assert "header.shards.2.file" not in claims


def test_a_header_sha256_rewritten_by_hand_is_named_in_the_review(registry: Path) -> None:
    path = branch(registry, "sha")
    entry = path / "registry" / "checkpoints" / ENTRY.name
    text = entry.read_text(encoding="utf-8")
    forged = text.replace(f'sha256 = "{SHA}"', f'sha256 = "0{SHA[1:]}"')
    assert forged.count(f"0{SHA[1:]}") == 2
    entry.write_text(forged, encoding="utf-8")
    commit_all(path, "a header digest rewritten")
    status, (text, markdown, as_json) = renderings(path, "text", "markdown", "json")  # one review, three formats
    assert status == 0, text
    lines = text.splitlines()
    at = lines.index("registry/checkpoints/codellama-7b-f16.toml (checkpoint codellama-7b-f16): changed")
    assert lines[at + 1] == (
        "  claims changed, which the pricer does not read (re-import from the GGUF file to confirm them): "
        "header.sha256 7598e1bb60f9… → 0598e1bb60f9…, header.shards.1.sha256 7598e1bb60f9… → 0598e1bb60f9…"
    )
    assert lines[at + 2].startswith("  content   unchanged (")
    assert ("- `registry/checkpoints/codellama-7b-f16.toml`: claims changed, which the pricer does not read "
            "(re-import from the GGUF file to confirm them): header.sha256 7598e1bb60f9… → 0598e1bb60f9…") in markdown
    data = json.loads(as_json)
    [changed] = [f for f in data["files"] if f["path"].endswith(ENTRY.name)]
    assert changed["meta"] == ["header.sha256", "header.shards.1.sha256"]


def test_an_origin_rewritten_is_named_and_a_layout_edit_is_not(registry: Path) -> None:
    path = branch(registry, "origin")
    entry = path / "registry" / "checkpoints" / ENTRY.name
    text = entry.read_text(encoding="utf-8")
    entry.write_text(text.replace('origin = "Synthetic, header only:', 'origin = "Downloaded, header only:')
                     .replace("# tensor table (dims in GGUF order)", "# the tensor table (dims in GGUF order)"),
                     encoding="utf-8")
    commit_all(path, "origin reworded")
    lines = invoke("diff", "main", "HEAD", root=path).stdout.splitlines()
    [claim] = [line for line in lines if "claims changed" in line]
    assert claim.endswith(": entry.origin [Synthetic → Downloaded], header only: built by …")
    branch(path, "comment-only")
    entry.write_text(text.replace("# tensor table (dims in GGUF order)", "# the tensor table (dims in GGUF order)"),
                     encoding="utf-8")
    commit_all(path, "a comment reworded")
    out = invoke("diff", "main", "HEAD", root=path).stdout
    assert "claims changed" not in out
    assert "the entry was rewritten, what the pricer reads was not" in out
