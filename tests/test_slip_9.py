"""Slip round 9: pull requests that moved what a locked price is, or made a citation untraceable, while ``passprice
diff`` exited 0 and ``passprice check`` passed. Each test builds the git history in a temporary folder and asserts
the review's exit status and its words.

- A lock kept under a hidden name (``locks/.x.lock.toml``) or as a symbolic link (``locks/x.lock.toml`` →
  ``../extra/x.lock.toml``, or ``locks`` → ``lockstore``) guards its serving in ``price`` and ``check``, which read
  hidden names and through links, but the review left it out: a change moving its price was "no lock affected",
  exit 0. A hidden name is now read as check reads it; a link is refused by name (round 14's rule, on main).
- A pull request adding ``src/passprice`` to a registry kept apart from its code (BASE has none), its
  ``reproduce.side_json`` pricing each lock's embedded serving instead of the registered one, was priced by that code:
  a serving change moving a locked price read "every locked price is re-priced the same", exit 0.
- Citations that led elsewhere with nothing to verify (exit 0, ✅ or no word): a source record re-pointed to another
  document (title and address rewritten, the id kept); the registry document a source names
  (``facts/cards/README.md``) rewritten; a derived fact's figure input moved 3958 → 7958 TOPS under a locator still
  quoting '3,958 TOPS', or turned into a constant.
- A source record renamed and the card re-cited to the new id: the locks' pinned facts (what ``audit LOCK`` shows)
  still cite the old id, which ``sources/`` no longer held ("not registered"), and both ``check`` and the review
  passed.
- A serving renamed (every field the same) with its locks removed and one re-made at ``--floor assumed``: the old locks
  read as "retired with their serving" and the new one as "added", exit 0, no floor shown loosened.
- A locator that names nothing (three spaces, ``...``) passed the schema's three-character minimum: on a derived fact
  and its figure input the review had nothing to ask (exit 0) and ``check`` passed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import repin_excerpt
from passprice.cli import cli
from test_diff import REPO, commit_all, git, make_lock_file

SERVING = "r1-qwen7b-h200"
SERVING_FILE = f"registry/servings/{SERVING}.toml"
MOVED = f"it moves the locked price of {SERVING} without re-locking"


def _base(path: Path) -> Path:
    """A registry (the shipped facts, checkpoints, servings and sources; no locks) committed on ``main``."""
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


def _move_the_price(path: Path) -> None:
    """Halve the serving's context position: its price moves (fewer KV-cache bytes a pass)."""
    serving = path / SERVING_FILE
    text = serving.read_text(encoding="utf-8")
    assert "position = 2048" in text
    serving.write_text(text.replace("position = 2048", "position = 1024"), encoding="utf-8")


def _diff(path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", str(path), "diff", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("kept", ["link", "hidden", "folder"])
def test_a_lock_kept_as_a_link_or_under_a_hidden_name_is_reviewed(tmp_path: Path, kept: str) -> None:
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    written = path / "locks" / f"{SERVING}.lock.toml"
    if kept == "link":
        (path / "extra").mkdir()
        written.rename(path / "extra" / "r1.lock.toml")
        written.symlink_to("../extra/r1.lock.toml")
    elif kept == "hidden":
        written.rename(path / "locks" / ".r1.lock.toml")
    else:  # the whole folder kept as a link
        (path / "locks").rename(path / "lockstore")
        (path / "locks").symlink_to("lockstore")
    commit_all(path, "a lock")
    checked = CliRunner().invoke(cli, ["--root", str(path), "check"])
    assert checked.exit_code == 0 and f"lock {SERVING} (locks/" in checked.stdout  # check reads it
    git(path, "checkout", "-q", "-b", "pr")
    _move_the_price(path)
    commit_all(path, "move the price")

    status, out, err = _diff(path, "main", "HEAD")
    if kept == "hidden":
        assert status == 1, out
        assert f"passprice: refused: {MOVED}" in err
        assert f"{SERVING} (locks/.r1.lock.toml" in out and (
            "price moved, lock not updated (sequence_bytes, each sequence's bytes a pass reads)") in out
        return
    # A link is refused by name (round 14's rule): the review never passes over what check and price read through it.
    link = f"locks/{SERVING}.lock.toml" if kept == "link" else "locks"
    tail = "passprice diff compares the files themselves (commit the file, or the folder's files, in place of the link)"
    assert status == 2, out
    assert f"{link}: a symbolic link at " in err and tail in err
    status, out, err = _diff(path, "main")  # against the work tree too (BASE holds the link already)
    assert status == 2 and f"passprice: error: {link}: a symbolic link" in err and tail in err, err


def test_a_link_out_of_the_registry_is_refused_by_the_review(tmp_path: Path) -> None:
    path = _base(tmp_path / "registry")
    commit_all(path, "facts")
    make_lock_file(path, SERVING, SERVING)
    outside = tmp_path / "outside.lock.toml"
    (path / "locks" / f"{SERVING}.lock.toml").rename(outside)
    (path / "locks" / "x.lock.toml").symlink_to(outside)
    commit_all(path, "a lock out of the registry")
    status, out, err = _diff(path, "main~1", "HEAD")
    assert status == 2 and "locks/x.lock.toml: a symbolic link at " in err, out
    status, out, err = _diff(path, "main~1")  # the work tree holds the link
    assert status == 2 and "passprice: error: locks/x.lock.toml: a symbolic link; " in err, out
    checked = CliRunner().invoke(cli, ["--root", str(path), "check"])
    assert checked.exit_code == 2 and f"a symbolic link to {outside}, outside the registry" in checked.stderr


def test_code_a_pull_request_brings_into_a_registry_kept_apart_does_not_price_its_review(tmp_path: Path) -> None:
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a registry kept apart from its code")
    git(path, "checkout", "-q", "-b", "pr")
    shutil.copytree(REPO / "src" / "passprice", path / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json"))
    module = path / "src" / "passprice" / "reproduce.py"
    text = module.read_text(encoding="utf-8")
    embedded = '            spec = rooted_spec(spec_from_document(request["spec"], "lock: serving"), root)'
    registered = (
        '            if name is not None and not out["gone"]:\n                spec = load_spec(root, name)\n'
        f'            else:\n    {embedded}'
    )
    assert registered in text
    module.write_text(text.replace(registered, embedded), encoding="utf-8")  # each lock's own serving, not today's
    _move_the_price(path)
    commit_all(path, "bring a pricer along; move the price")

    status, out, err = _diff(path, "main", "HEAD")
    assert status == 1, out
    assert f"passprice: refused: {MOVED}" in err
    assert "every locked price is re-priced the same" not in out
    assert "priced with HEAD: this passprice's code (" in out
    assert ("not the src/passprice HEAD brings (" in out and "which BASE lacks: a registry kept apart from its code "
            "is checked with the passprice it installs, so its locks are reviewed with that") in out


ARRAY_INPUT = ('derivation.inputs.sparse = { value = 3958, unit = "TOPS", locator = "Technical Specifications table, '
               "H200 SXM column: 'INT8 Tensor Core 3,958 TOPS' (with sparsity)\" }")


def test_citations_that_lead_elsewhere_are_to_verify(tmp_path: Path) -> None:
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    source = path / "sources" / "nvidia-h200-datasheet.toml"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace('url = "https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-'
                                   '3002446"', 'url = "https://example.com/another-document.pdf"'), encoding="utf-8")
    with (path / "facts" / "cards" / "README.md").open("a", encoding="utf-8") as review:
        review.write("\nReview decision: every real card's pinned host memory is 64 GiB.\n")
    card = path / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count(ARRAY_INPUT) == 1 and text.count("[array]\nvalue = 989.5\n") == 1
    card.write_text(text.replace(ARRAY_INPUT, ARRAY_INPUT.replace("3958,", "7958,"))
                    .replace("[array]\nvalue = 989.5\n", "[array]\nvalue = 1989.5\n"), encoding="utf-8")
    make_lock_file(path, SERVING, SERVING)  # re-locked: array_s moved
    commit_all(path, "re-point a source, rewrite the card review, raise array with its input, re-lock")

    status, out, err = _diff(path, "main", "HEAD")
    assert status == 0, out + err  # nothing is failed: each is asked
    summary = out.splitlines()[1]
    assert summary.startswith("1 fact changed in 1 file, 1 to verify in its source; 1 source record changed; 2 sources "
                              "whose document changed, to verify (under 1 locked price); 1 lock affected, 1 re-locked"
                              ), summary  # slip 27: the locked prices resting on a re-pointed source are named
    assert ("to verify: its input sparse moved (3958 TOPS → 7958 TOPS) but its citation did not, and the locator "
            "quotes 3958: nvidia-h200-datasheet: Technical Specifications table, H200 SXM column: 'INT8 Tensor Core "
            "3,958 TOPS' (with sparsity)") in out
    assert ("  nvidia-h200-datasheet: to verify: the document source nvidia-h200-datasheet names changed (url: "
            "https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446 → "
            "https://example.com/another-document.pdf): does it state h200_sxm_141gb:array, which cites it?") in out
    # (its one fact since cite102 moved memory.capacity and 7 more to the H200 product page: tests/test_cite102.py)
    assert ("  passprice-card-review: to verify: the document source passprice-card-review names changed "
            "(facts/cards/README.md rewritten): does it state each of ") in out
    status, markdown, _ = _diff(path, "main", "HEAD", "--format", "markdown")
    assert status == 0 and markdown.startswith("⚠️ **passprice diff**")
    assert "#### Sources" in markdown and "- ⚠️ `passprice-card-review` **to verify**: the document source" in markdown
    # The work tree reads the registry document where it lies: the same question.
    git(path, "reset", "-q", "--soft", "main")
    status, out, _ = _diff(path, "main")
    assert status == 0 and "passprice-card-review: to verify: the document source" in out


def test_a_figure_input_turned_into_a_constant_is_to_verify() -> None:
    from passprice.facts import Fact
    from passprice.review import FactChange

    def array(sparse: dict[str, object]) -> Fact:
        return Fact.from_entry({"value": 989.5, "unit": "TMAC/s", "provenance": "derived",
                                "source": "nvidia-h200-datasheet", "locator": "INT8 Tensor Core 3,958 TOPS",
                                "derivation": {"formula": "sparse / two", "inputs": {
                                    "sparse": sparse, "two": {"value": 4, "unit": "op/MAC", "constant": "2 x 2"}}}},
                               "card.toml: array")

    figure = array({"value": 3958, "unit": "TOPS", "locator": "INT8 Tensor Core 3,958 TOPS"})
    guess = array({"value": 3958, "unit": "TOPS", "constant": "what we think"})
    assert FactChange("array", "array", figure, guess).to_verify == (
        "its input sparse was a figure of nvidia-h200-datasheet: INT8 Tensor Core 3,958 TOPS, now a constant ('what "
        "we think', 3958 TOPS): is it one, or an assumption?")
    cited = array({"value": 3958, "unit": "TOPS", "locator": "Table 2, INT8 row"})
    assert FactChange("array", "array", figure, cited).to_verify == (
        "its input sparse is cited anew: does nvidia-h200-datasheet: Table 2, INT8 row state 3958 TOPS?")
    assert FactChange("array", "array", figure, figure).to_verify is None


def test_a_lock_whose_pinned_citation_leads_to_no_source_fails_check_and_the_review(tmp_path: Path) -> None:
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    # the H200 product page's record, which the lock's memory, vector and host facts cite since cite102 (the
    # datasheet's until then; tests/test_cite102.py)
    git(path, "mv", "sources/nvidia-h200-product-page.toml", "sources/nvidia-h200-pp.toml")
    card = path / "facts" / "cards" / "h200_sxm_141gb.toml"
    card.write_text(card.read_text(encoding="utf-8").replace('"nvidia-h200-product-page"', '"nvidia-h200-pp"'),
                    encoding="utf-8")
    # and its stored excerpt's section, headed by the record's id (an excerpt whose sections are all other sources'
    # is no text of the record naming it: tests/test_walk128.py), pinned anew
    excerpt = "sources/excerpts/cite102-excerpt.txt"
    text = (path / excerpt).read_text(encoding="utf-8")
    (path / excerpt).write_text(text.replace("== nvidia-h200-product-page ", "== nvidia-h200-pp "), encoding="utf-8")
    repin_excerpt(path, excerpt)
    commit_all(path, "rename the H200 product page's record")
    problem = (f"locks/{SERVING}.lock.toml: facts.host.read.source, facts.host.write.source, "
               "facts.memory.bandwidth.source, facts.memory.capacity.source, facts.vector.source: pins a citation of "
               "source 'nvidia-h200-product-page', which sources/ no longer holds: the locked price cannot be traced "
               "to its documents (restore sources/nvidia-h200-product-page.toml, or re-lock on today's citations: "
               f"passprice lock --update -o locks/{SERVING}.lock.toml)")
    checked = CliRunner().invoke(cli, ["--root", str(path), "check"])
    assert checked.exit_code == 1 and f"  {problem}\n" in checked.stdout, checked.output
    status, out, err = _diff(path, "main", "HEAD")
    assert status == 1, out
    assert f"passprice: refused: HEAD fails passprice check (1 problem); first: {problem}" in err
    # Re-locked on today's citations, both pass.
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "re-lock")
    assert CliRunner().invoke(cli, ["--root", str(path), "check"]).exit_code == 0
    status, out, err = _diff(path, "main", "HEAD")
    assert status == 0, out + err


def test_a_locator_that_names_nothing_does_not_read(tmp_path: Path) -> None:
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    card = path / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    place = "Technical Specifications table, H200 SXM column: 'INT8 Tensor Core 3,958 TOPS' (with sparsity)"
    array = f'locator = "{place}"\n'
    assert text.count(array) == 1 and text.count(ARRAY_INPUT) == 1
    card.write_text(text.replace(array, 'locator = "   "\n').replace(
        ARRAY_INPUT, ARRAY_INPUT.replace(f'locator = "{place}"', 'locator = "..."')), encoding="utf-8")
    commit_all(path, "locators naming nothing")
    names = ("is not a place in the source named by a word or a figure (a locator of spaces or punctuation alone "
             "names nothing)")
    status, out, err = _diff(path, "main", "HEAD")
    assert status == 2, out
    card_file = "facts/cards/h200_sxm_141gb.toml"
    assert (f"passprice: error: {card_file} does not read on HEAD: "
            f"array.derivation.inputs.sparse.locator: '...' {names}") in err
    checked = CliRunner().invoke(cli, ["--root", str(path), "check"])
    assert checked.exit_code == 2
    assert f"passprice: error: facts/cards/h200_sxm_141gb.toml: array.locator: '   ' {names}\n" in checked.stderr


def test_a_serving_renamed_and_relocked_with_weaker_floors_drops_them(tmp_path: Path) -> None:
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    git(path, "mv", SERVING_FILE, "registry/servings/r1-v2.toml")
    git(path, "rm", "-q", f"locks/{SERVING}.lock.toml")
    (path / "locks").mkdir(exist_ok=True)
    relocked = CliRunner().invoke(cli, ["--root", str(path), "lock", "r1-v2", "--floor", "assumed", "-o",
                                        str(path / "locks" / "r1-v2.lock.toml")])
    assert relocked.exit_code == 0, relocked.output
    commit_all(path, "rename the serving; re-lock it at the assumed floor")
    status, out, err = _diff(path, "main", "HEAD")
    assert status == 1, out
    assert (f"passprice: refused: it removes lock {SERVING}, dropping floors serving {SERVING} is priced under") in err
    assert (f"its removal drops 8 floors of serving {SERVING}: serving {SERVING} is r1-v2 on HEAD (the same serving, "
            "renamed); lock it there at the floors it had") in out
    assert "    dropped   floor on memory.bandwidth: published → assumed (the strictest floor left)" in out
