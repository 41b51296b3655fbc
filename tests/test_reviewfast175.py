"""A cold one-fact review makes what BASE, HEAD and its private copy of HEAD share once (issue 16; issue 13's review
use): the same bytes give one validated document whatever temporary folder holds them (:func:`passprice.schema.load`),
a checkpoint's content is digested once whatever side's entry it came from (:func:`passprice.pins.checkpoint_digest`)
and an entry's bytes are hashed once (:func:`passprice.checkpoints._kept_entry`). What the review says is byte for
byte what it says without that reuse, in markdown and ``--json``; a file changed between BASE and HEAD is still
validated on each side, and a file that does not validate is refused on HEAD under its own name."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, invoke
from passprice import pins, schema, snapshot

H200 = "facts/cards/h200_sxm_141gb.toml"
STACK = "facts/stacks/llamacpp-cuda-2405.toml"
SOURCE = "sources/nvidia-h200-datasheet.toml"
#: The memo keys this round made content-keyed (or made at all): without them, each side's folder is its own.
REUSED = ("document", "checkpoint-digest", "entry-digest")


def _sides(tmp_path: Path) -> tuple[Path, Path]:
    """BASE and HEAD: copies of the shipped registry, HEAD's H200 bandwidth 4.8 -> 4.9 TB/s (the README's review)."""
    base, head = tmp_path / "base", tmp_path / "head"
    for side in (base, head):
        for name in ("facts", "registry", "locks", "sources"):
            shutil.copytree(REPO / name, side / name)
    card = head / H200
    text = card.read_text(encoding="utf-8")
    assert "[memory.bandwidth]\nvalue = 4.8\n" in text
    card.write_text(text.replace("[memory.bandwidth]\nvalue = 4.8\n", "[memory.bandwidth]\nvalue = 4.9\n", 1),
                    encoding="utf-8")
    return base, head


def _no_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ask of :data:`REUSED` made afresh, as before this round (a folder's file its own)."""
    made = snapshot.made

    def fresh(key: Hashable, make: Callable[[], Any]) -> Any:
        if isinstance(key, tuple) and key and key[0] in REUSED:
            return make()
        return made(key, make)

    monkeypatch.setattr(snapshot, "made", fresh)


def _validated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, Any]]:
    """Record each document :func:`passprice.schema.validate` validates: (kind, file name, the document)."""
    seen: list[tuple[str, str, Any]] = []
    validate = schema.validate

    def counting(document: Any, kind: str, where: str, *args: Any, **kwargs: Any) -> Any:
        seen.append((kind, Path(where).name, document))
        return validate(document, kind, where, *args, **kwargs)

    monkeypatch.setattr(schema, "validate", counting)
    return seen


def _documents(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bytes]]:
    """Record each document :func:`passprice.schema.load` makes (not served again in the snapshot): its kind and the
    file's bytes, as it asks the cache of validated files (:func:`passprice.cache.validated`) for it."""
    from passprice import cache

    asked: list[tuple[str, bytes]] = []
    validated = cache.validated

    def counting(kind: str, schema_path: Path, data: bytes, *args: Any, **kwargs: Any) -> Any:
        asked.append((kind, data))
        return validated(kind, schema_path, data, *args, **kwargs)

    monkeypatch.setattr(cache, "validated", counting)
    return asked


def _digests(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each checkpoint content digest computed (not served again)."""
    out: list[str] = []
    digest = pins._checkpoint_digest

    def counting(header: Any) -> str:
        out.append(digest(header))
        return out[-1]

    monkeypatch.setattr(pins, "_checkpoint_digest", counting)
    return out


def _review(base: Path, head: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, *more: str) -> tuple[int, str, str]:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(cache))  # cold: a folder of its own each review
    result = invoke("diff", str(base), str(head), *more, root=head)
    return result.exit_code, result.stdout, result.stderr


def test_the_review_validates_shared_bytes_once_and_says_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The markdown review of the one-fact change: the changed card validated for BASE's bytes and for HEAD's; the
    document of an unchanged source record, drafting method and routing record made once in the snapshot (three to
    five times before), the stack's once there and once by the private copy's re-fit; each checkpoint content
    digested once; the output, exit status and standard error those of the review without the reuse."""
    base, head = _sides(tmp_path)
    unchanged = {kind: (head / rel).read_bytes() for kind, rel in (("stack", STACK), ("source", SOURCE),
                                                                   ("draft", "facts/drafts/qwen35-mtp.toml"),
                                                                   ("routing", "facts/routing/uniform.toml"))}
    with monkeypatch.context() as m:
        seen = _validated(m)
        asked = _documents(m)
        digests = _digests(m)
        reused = _review(base, head, tmp_path / "cache-reused", m, "--format", "markdown")
    bandwidths = sorted(d["memory"]["bandwidth"]["value"] for k, n, d in seen if (k, n) == ("card", Path(H200).name))
    assert bandwidths[0] == 4.8 and bandwidths[-1] == 4.9, bandwidths  # the changed file: each side's bytes
    assert digests and len(digests) == len(set(digests)), digests  # one computation a content
    with monkeypatch.context() as m:
        _no_reuse(m)
        asked_before = _documents(m)
        digests_before = _digests(m)
        before = _review(base, head, tmp_path / "cache-before", m, "--format", "markdown")
    # what the reuse saves: the stack's document made in BASE, HEAD and the private copy, each source record's twice
    counts = {kind: (asked.count((kind, data)), asked_before.count((kind, data))) for kind, data in unchanged.items()}
    # Each document made once in the review's snapshot; the stack's once more by the private copy's re-fit, which
    # writes its files with no snapshot open (passprice.snapshot.suspended), and reads the stack again only when the
    # re-fit rewrote it (diff._refit). Without the reuse, 3 to 10 times.
    assert counts == {"stack": (2, 10), "source": (1, 3), "draft": (1, 5), "routing": (1, 5)}, counts
    assert len(digests_before) > len(digests)
    assert reused == before
    assert reused[0] == 1 and "h200_sxm_141gb:streams.read (stale)" in reused[2]
    assert "| `h200_sxm_141gb` | `memory.bandwidth` | 4.8 TB/s | 4.9 TB/s | +2.083 % |" in reused[1]


def test_the_json_review_is_the_same_without_the_reuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--json``: the same document, exit status and standard error with and without the reuse."""
    base, head = _sides(tmp_path)
    reused = _review(base, head, tmp_path / "cache-reused", monkeypatch, "--json")
    with monkeypatch.context() as m:
        _no_reuse(m)
        before = _review(base, head, tmp_path / "cache-before", m, "--json")
    assert reused == before
    assert reused[0] == 1 and '"memory.bandwidth"' in reused[1]


def test_a_file_that_does_not_validate_on_both_sides_is_refused_on_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same bad bytes on BASE and HEAD: a refusal is never kept, so HEAD's check refuses the file under HEAD's
    name (exit 2 with reuse as without), never passes it for BASE's having been read first."""
    base, head = _sides(tmp_path)
    for side in (base, head):
        record = side / SOURCE
        record.write_text(record.read_text(encoding="utf-8") + "unknown_key = 1\n", encoding="utf-8")
    reused = _review(base, head, tmp_path / "cache-reused", monkeypatch, "--format", "markdown")
    with monkeypatch.context() as m:
        _no_reuse(m)
        before = _review(base, head, tmp_path / "cache-before", m, "--format", "markdown")
    assert reused == before
    assert reused[0] == 2, reused
    assert SOURCE in reused[1] + reused[2] and "unknown_key" in reused[1] + reused[2]
