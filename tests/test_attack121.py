"""Hostile pull requests against the review and the audit (issue 13), each escape kept as its reproducer, built in the
test.

- (1) A source's stored excerpt (``source.excerpt``, the text ``audit`` checks each citing fact's quotes against) was
  a file no review compared: a pull request rewriting ``sources/excerpts/cite102-excerpt.txt`` so that the H200's
  ``'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'`` was no longer in it read "no changes to facts, registry, locks or the
  pricing model; 10 locks unaffected" (exit 0), and one re-pointing ``source.excerpt`` to such a copy "1 source
  record changed; no lock affected" (exit 0), nothing to verify, while ``audit`` on HEAD said NOT FOUND. Now each is
  a source whose document changed, to verify, under the 5 locked prices resting on it.
- (2) The package's data (``src/passprice/templates/facts.yml``, the review workflow ``init`` writes into every new
  registry) was neither read nor named by the review: a pull request rewriting it read "no changes to facts,
  registry, locks or the pricing model" (exit 0). Now named under "passprice's own code changed".
- (3) ``audit`` found a quoted figure inside a longer number: a locator quoting ``'4.8TB/s'`` of a stored text that
  says ``14.8TB/s`` was ``checked (2 of 2 quoted spans found in the stored text)``. Now a span opening or closing
  with a digit must open or close a number of the text.
- (4) A ``.gitattributes`` rule re-encoding a stored excerpt in a checkout (``working-tree-encoding``) was refused for
  the files the review reads but not for the excerpts and documents sources name, which audit reads in a checkout:
  "no changes" (exit 0); now refused as for a card. A ``source.excerpt`` or ``source.path`` holding a NUL
  (``"sources/a\\u0000b"``) was a ``ValueError: embedded null byte`` traceback out of ``diff``; now HEAD fails
  ``check`` on it (exit 2), as ``check`` itself says.
- (5) A locator whose only quote is blank (``' '``) was ``checked (1 of 1 quoted span found in the stored text)``: the
  empty string is in every text. A blank span quotes nothing now: ``not checked (its locator quotes nothing)``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke, repin_excerpt

EXCERPT = "sources/excerpts/cite102-excerpt.txt"
PAGE = "sources/nvidia-h200-product-page.toml"
#: The stored text's lines quoted by the H200's memory.bandwidth ('GPU Memory Bandwidth 4.8TB/s 4.8TB/s').
BANDWIDTH_LINES = ("33\t4.8TB/s\n34\t4.8TB/s\n", "33\t4.6TB/s\n34\t4.6TB/s\n")
RESTING = "1 source whose document changed, to verify (under 5 locked prices)"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def _registry(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    shutil.copytree(REPO / "schema", root / "schema")
    return root


def _committed(root: Path) -> None:
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")


def _rewrite_excerpt(root: Path) -> None:
    text = (root / EXCERPT).read_text(encoding="utf-8")
    assert text.count(BANDWIDTH_LINES[0]) == 1
    (root / EXCERPT).write_text(text.replace(*BANDWIDTH_LINES), encoding="utf-8")
    repin_excerpt(root, EXCERPT)  # pinned anew (tests/test_walk128.py: an edited excerpt under its old pin fails check)


def _repoint_excerpt(root: Path) -> None:
    text = (root / EXCERPT).read_text(encoding="utf-8")
    (root / "sources" / "excerpts" / "copy.txt").write_text(text.replace(*BANDWIDTH_LINES), encoding="utf-8")
    record = (root / PAGE).read_text(encoding="utf-8")
    assert f'excerpt = "{EXCERPT}"' in record
    (root / PAGE).write_text(record.replace(f'excerpt = "{EXCERPT}"', 'excerpt = "sources/excerpts/copy.txt"'),
                             encoding="utf-8")
    repin_excerpt(root, "sources/excerpts/copy.txt")


# --- (1) a stored excerpt rewritten or re-pointed --------------------------------------------------------------------


def _said_of_excerpt(stdout: str, changed: str) -> None:
    lines = stdout.splitlines()
    assert RESTING in lines[1], lines[1]
    assert "5 locks resting on a source whose document changed, to verify" in lines[1]
    said = [line for line in lines if line.startswith("  nvidia-h200-product-page: to verify: ")]
    assert len(said) == 1, stdout
    assert (f"the document source nvidia-h200-product-page names changed ({changed} (its stored excerpt: the lines "
            "quoted from the text read, which its citing facts' quotes are checked against)) (on HEAD, the quote of "
            "h200_sxm_141gb:memory.bandwidth from it is NOT FOUND in its stored excerpt, found in BASE's: `passprice "
            "audit --source nvidia-h200-product-page`): does it state each of h200_sxm_141gb:memory.capacity, "
            "h200_sxm_141gb:memory.bandwidth") in said[0]
    assert ("    h200_sxm_141gb:memory.bandwidth: 4.8 TB/s (published) at Specifications table, H200 SXM column (a "
            "row: its label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'"
            in lines)


@pytest.mark.parametrize("how", ["rewritten", "re-pointed"])
def test_1_a_stored_excerpt_changed_in_a_revision_is_to_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               how: str) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _registry(tmp_path)
    _committed(root)
    (_rewrite_excerpt if how == "rewritten" else _repoint_excerpt)(root)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the excerpt")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    # was exit 0: "no changes to facts, registry, locks or the pricing model; 10 locks unaffected" (rewritten) or
    # "no fact changed; 1 source record changed; no lock affected; 10 locks unaffected" (re-pointed); then exit 0,
    # "to verify": the quote the excerpt lost now fails the review (tests/test_budget140.py)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("❌ "), result.stdout[:200]
    assert "; 1 quote NOT FOUND in its stored text; " in result.stdout.splitlines()[1]
    _said_of_excerpt(result.stdout, f"{EXCERPT} rewritten" if how == "rewritten"
                     else f"excerpt: {EXCERPT} → sources/excerpts/copy.txt")
    # and audit on HEAD says the quote is not in the stored text
    audit = invoke("audit", "r1-qwen7b-h200", "--json", root=root)
    assert audit.exit_code == 0, audit.output
    checks = {f["path"]: f["quote_check"] for f in json.loads(audit.stdout)["facts"]}
    assert checks["memory.bandwidth"]["state"] == "NOT FOUND"
    assert checks["memory.bandwidth"]["missing"] == ["GPU Memory Bandwidth 4.8TB/s 4.8TB/s"]


def test_1_a_stored_excerpt_rewritten_between_folders_is_to_verify(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    base, head = _registry(tmp_path / "base"), _registry(tmp_path / "head")
    _rewrite_excerpt(head)
    result = invoke("diff", str(base), str(head), root=base)
    # was "no changes to facts, registry, locks or the pricing model"; then exit 0: its lost quote now fails it
    assert result.exit_code == 1, result.output
    _said_of_excerpt(result.stdout, f"{EXCERPT} rewritten")


def test_1_an_excerpt_unchanged_is_no_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _registry(tmp_path)
    _committed(root)
    (root / "sources" / "excerpts" / "unnamed.txt").write_text("a file no source names\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "an unnamed file")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == ("no changes to facts, registry, locks or the pricing model; 10 locks "
                                             "unaffected")


# --- (2) the package's data -----------------------------------------------------------------------------------------


def test_2_package_data_is_what_no_other_rule_compares() -> None:
    from passprice.sidecode import package_data

    assert package_data("templates/facts.yml")
    assert package_data("py.typed") and package_data("sub/notes.txt")
    for rel in ("review/verdict.py", "sub/x.py", "__pycache__/x.cpython-311.pyc", "x.so",
                "_data/schema/card.schema.json", "pricing_models.json"):
        assert not package_data(rel), rel


def test_2_the_review_names_the_package_s_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import pins

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _registry(tmp_path)
    # a checkout's package, as a side copied from the running one holds it (a wheel's _data and the JSON records left
    # out: a checkout has none of them there)
    shutil.copytree(pins.PACKAGE, root / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "*.json", "_data"))
    template = root / "src" / "passprice" / "templates" / "facts.yml"
    assert template.is_file()
    _committed(root)
    text = template.read_text(encoding="utf-8")
    template.write_text(text.replace("passprice check", "true # passprice check", 1), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the workflow init writes")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    # was exit 0: "no changes to facts, registry, locks or the pricing model; 10 locks unaffected"
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "no fact changed; no lock affected; 10 locks unaffected; passprice's own code changed (1 file)"
    assert "  src/passprice/templates/facts.yml (package data, installed with the code)" in lines


# --- (3) a quoted figure inside a longer number ----------------------------------------------------------------------


@pytest.mark.parametrize(("span", "held"), [
    ("4.8TB/s", False), ("14.8TB/s", True), ("141", False), ("1,141 GB", True), ("41 GB", False),
    ("Bandwidth 14.8", True), ("Bandwidth 14", False), ("64 GB High", True), ("141.5", True), ("GB;", True),
])
def test_3_a_quoted_number_is_a_whole_number_of_the_text(span: str, held: bool) -> None:
    from passprice.sources import StoredText

    flat = "GPU Memory Bandwidth 14.8TB/s 14.8TB/s; 1,141 GB; 141.5; Transistors64 GB High"
    assert StoredText("s", "e", text=flat, flat=flat).holds(span) is held


def test_3_audit_does_not_find_a_figure_inside_a_longer_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _registry(tmp_path)
    text = (root / EXCERPT).read_text(encoding="utf-8")
    (root / EXCERPT).write_text(text.replace(BANDWIDTH_LINES[0], "33\t14.8TB/s\n34\t14.8TB/s\n"), encoding="utf-8")
    repin_excerpt(root, EXCERPT)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    quoted = "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'"
    card_text = card.read_text(encoding="utf-8")
    assert card_text.count(quoted) == 1
    card.write_text(card_text.replace(quoted, "'GPU Memory Bandwidth', its H200 SXM cell '4.8TB/s'"), encoding="utf-8")
    result = invoke("audit", "r1-qwen7b-h200", "--json", root=root)
    assert result.exit_code == 0, result.output
    check = {f["path"]: f["quote_check"] for f in json.loads(result.stdout)["facts"]}["memory.bandwidth"]
    # was {"state": "checked", "found": 2, "why": "2 of 2 quoted spans found in the stored text"}
    assert (check["state"], check["found"], check["missing"]) == ("NOT FOUND", 1, ["4.8TB/s"])


# --- (4) what a checkout of HEAD holds of a stored excerpt; a path holding a NUL ------------------------------------


def test_4_a_rule_rewriting_a_stored_excerpt_in_a_checkout_is_refused(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # A checkout re-encodes the excerpt (UTF-16 here: audit there finds no quote of the H200's card; an encoding
    # mapping other characters to ASCII, as ISO646-KR's ₩ to a backslash, writes text the repository does not hold),
    # while the review read the committed bytes: it said "no changes to facts, registry, locks or the pricing model"
    # (exit 0).
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _registry(tmp_path)
    _committed(root)
    (root / ".gitattributes").write_text(f"{EXCERPT} working-tree-encoding=UTF-16\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a rule")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"passprice: error: {EXCERPT} at ")
    assert ("git rewrites it in a checkout (working-tree-encoding=UTF-16, a rule of .gitattributes at "
            in result.stderr)


@pytest.mark.parametrize("key", ["excerpt", "path"])
def test_4_a_document_path_holding_a_nul_is_check_s_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            key: str) -> None:
    # was "ValueError: embedded null byte" out of diff (git's argument list), exit 1
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _registry(tmp_path)
    _committed(root)
    record = (root / PAGE).read_text(encoding="utf-8")
    line = f'excerpt = "{EXCERPT}"'
    (root / PAGE).write_text(record.replace(line, f'{line}\npath = "sources/a\\u0000b"' if key == "path"
                                            else 'excerpt = "sources/a\\u0000b"'), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a NUL")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 2, result.output
    assert "HEAD fails passprice check" in result.stdout.splitlines()[1]
    assert (f"passprice: error: {PAGE} does not read on HEAD: source.{key}: 'sources/a\\x00b' is not "
            in result.stderr)


# --- (5) a blank quote -----------------------------------------------------------------------------------------------


def test_5_a_blank_quote_quotes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.sources import StoredText, quoted_spans

    assert quoted_spans("row: ' ', then 'GPU Memory'") == ["GPU Memory"]
    assert not StoredText("s", "e", text="a b", flat="a b").holds(" \n ")
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _registry(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    quoted = "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'"
    text = card.read_text(encoding="utf-8")
    assert text.count(quoted) == 1
    card.write_text(text.replace(quoted, "' '"), encoding="utf-8")
    result = invoke("audit", "r1-qwen7b-h200", "--json", root=root)
    assert result.exit_code == 0, result.output
    check = {f["path"]: f["quote_check"] for f in json.loads(result.stdout)["facts"]}["memory.bandwidth"]
    # was {"state": "checked", "why": "1 of 1 quoted span found in the stored text"}
    assert (check["state"], check["spans"], check["why"]) == ("not checked", 0, "its locator quotes nothing")
