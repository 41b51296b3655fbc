"""A citation nobody can trace back is refused wherever a price is made (issue 13's gaps, session 13): a fact citing a
source record that does not validate stopped only ``lock`` and ``check``, while ``price``, ``new-serving``, ``best``,
``roofline`` and ``sweep`` priced on it; and a record's schema problems came one round at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

H200 = "h200_sxm_141gb"
DATASHEET = "nvidia-h200-product-page"  # the H200 memory facts' source (the datasheet's until cite102)


def _break_datasheet(root: Path) -> Path:
    """The H200 datasheet's record without its url and date (a valid kind): it no longer validates."""
    record = root / "sources" / f"{DATASHEET}.toml"
    lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
    record.write_text("".join(line for line in lines if not line.startswith(("url =", "date ="))), encoding="utf-8")
    return record


@pytest.mark.parametrize("args", [
    ("price", "r1-qwen7b-h200"),
    ("price", "r1-qwen7b-h200", "--json"),
    ("best", "r1-qwen7b-h200"),
    ("roofline", H200),
    ("sweep", "r1-qwen7b-h200", "--batches", "1"),
    ("new-serving", "x", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", H200),
])
def test_every_pricing_command_refuses_a_citation_whose_record_does_not_validate(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    root = copy_root(tmp_path)
    record = _break_datasheet(root)
    card = root / "facts" / "cards" / f"{H200}.toml"
    lines = bad(*args, root=root)
    # one line for the record, naming the card, the citing key, the record's file (relative to the registry, as
    # check names it: left29b) and every problem of it
    assert lines == [
        f"passprice: error: {card}: memory.capacity.source: source '{DATASHEET}' does not validate: "
        f"{record.relative_to(root)}: "
        "source.date: missing (required); source.url: missing (required)"
    ]
    assert not (root / "registry" / "servings" / "x.toml").exists()


def test_a_valid_record_set_kept_in_the_cache_does_not_answer_for_changed_bytes(tmp_path: Path) -> None:
    # The cited records pass as one cache entry keyed by their bytes: priced once (stored), then broken, refused.
    root = copy_root(tmp_path)
    assert invoke("price", "r1-qwen7b-h200", root=root).exit_code == 0
    _break_datasheet(root)
    bad("price", "r1-qwen7b-h200", root=root, says="does not validate")
    (root / "sources" / f"{DATASHEET}.toml").unlink()
    bad("price", "r1-qwen7b-h200", root=root, says=f"no source '{DATASHEET}'")


@pytest.mark.parametrize(("kind", "given", "says"), [
    # a kind that is none: what each kind would need, so the user who picks one has nothing left to fix
    ("registy", "", "; with kind 'registry' it needs path (missing here: path); with any other kind it needs url, "
                    "date and retrieved (missing here: url, date, retrieved)"),
    ("notes", 'url = "unknown"\n', "; with kind 'registry' it needs path (missing here: path); with any other kind "
                                   "it needs url, date and retrieved (missing here: date, retrieved)"),
])
def test_an_invalid_kind_says_what_every_kind_requires_in_the_same_run(
    tmp_path: Path, kind: str, given: str, says: str
) -> None:
    # Session 13: kind = "registy" (meaning registry) said "url, date, retrieved missing"; fixed to registry, the next
    # run said "path missing": one round a fix. Now the kind's line says both, and nothing else is listed.
    root = copy_root(tmp_path)
    record = root / "sources" / "my-notes.toml"
    record.write_text(f'[source]\nkind = "{kind}"\ntitle = "my notes"\nread = "read it all through"\n'
                      f'publisher = "Me and co"\n{given}', encoding="utf-8")
    allowed = ("'datasheet', 'whitepaper', 'paper', 'slides', 'abstract', 'documentation', 'web-page', 'blog-post', "
               "'benchmark-results', 'repository', 'pull-request', 'registry'")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    wanted = (f"passprice: error: sources/my-notes.toml: source.kind: '{kind}' is not allowed here (one of {allowed})"
              f"{says}")
    assert [line for line in result.stderr.splitlines() if "my-notes" in line] == [wanted]


def test_a_valid_kind_still_requires_its_own_keys(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    record = root / "sources" / "my-notes.toml"  # check names it from the root
    record.write_text('[source]\nkind = "registry"\ntitle = "my notes"\nread = "read it all through"\n'
                      'publisher = "Me and co"\n', encoding="utf-8")
    lines = [line for line in invoke("check", root=root).stderr.splitlines() if "my-notes" in line]
    assert lines == ["passprice: error: sources/my-notes.toml: source.path: missing (required)"]
    record.write_text('[source]\nkind = "paper"\ntitle = "my notes"\nread = "read it all through"\n'
                      'publisher = "Me and co"\nurl = "unknown"\n', encoding="utf-8")
    lines = [line for line in invoke("check", root=root).stderr.splitlines() if "my-notes" in line]
    assert lines == [
        f"passprice: error: sources/my-notes.toml: source.{key}: missing (required)" for key in ("date", "retrieved")
    ]
