"""What a new user found in the review, reproduce and audit uses (issue 13), each reproduced and kept, built in the
test.

- (1) ``fact show --history``: a version whose file does not read where the break lies outside the fact's own table
  (``broken = = `` appended to the end of the card) was left out, its fact read from its table alone, and the next
  version said ``value changed``; it is a version that does not read now, and the next one ``reads again``.
- (2) ``fact show --history`` of a card over its 256 KiB cap at HEAD, the work tree the same (``git status`` clean),
  listed a ``work tree  uncommitted changes`` entry (``commit: null``); none now. The cap's words were "the most a
  card or drafting method file may hold" there, "the most a card file may hold" in ``check`` and ``diff``: one now.
- (3) ``roofline CARD SERVING`` of a serving file whose ``contexts.1.limit`` (40,000) is past its model's context
  (32,768) was refused ``ContextBeyondModel … lower --limit`` (exit 1), an option nobody gave; it is the file's bad
  input now, as every other command says it (exit 2, the file and ``contexts.1.limit``).
- (4) In a clone under ``core.autocrlf=true``, ``check`` warned that all 11 ``schema/*.json`` "differ from this
  passprice's copy" (in CR alone): ``schema/*.json -text`` is one of ``gitread.BYTE_EXACT_RULES`` (the file init
  writes and this repository ships): a clone of an init registry and of this repository's records warns of nothing.
- (5) A clone made under ``core.autocrlf=true`` before the ``-text`` lines were committed (after ``* text=auto``)
  keeps CRLF excerpts; ``check`` told each to "remove that rule or setting … (or set -text on them)" though the rule
  now applies: it says the restore step alone, which works.
- (6) ``new-serving g5 gemma3-270m-h100 --limit 32768`` wrote ``position = 16384.0`` (the shipped files write
  ``16384``): a whole position is written as an integer. ``check`` of a link in ``locks/`` to a serving file said
  ``locks/bad.lock.toml: not a lock file (…; it is a serving file)``: it names the link and what it points to.
- (7) ``roofline``'s table divided its MAC/B by read-equivalent bytes but showed only the bytes moved: the
  read-equivalent bytes are a column of their own (``read-eq bytes``). ``roofline --plot``: each bind's shading
  ran half a batch past the last batch drawn, and with a largest batch of 1 the pass-time panel showed no point (a
  line of one batch draws no segment); the shading ends at the last batch and the pass time at the largest batch is
  marked.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

# --- (1) a version that does not read, the break away from the fact -------------------------------------------------


def _rewrite_history(tmp_path: Path) -> tuple[Path, list[str]]:
    """The H200 card's history: the checkout's card, A (``broken = = `` appended), B (A undone, ``streams.rewrite``
    set to 0.81); the registry and its commits, oldest first."""
    from test_history import CARD_FILE, git, registry

    root = registry(tmp_path)
    file = root / CARD_FILE
    good = file.read_text(encoding="utf-8")
    file.write_text(good + "broken = = \n", encoding="utf-8")
    git(root, "commit", "-qam", "A")
    start = good.index("[streams.rewrite]\nvalue = ")
    end = good.index("\n", start + len("[streams.rewrite]\n"))
    file.write_text(good[:start] + "[streams.rewrite]\nvalue = 0.81" + good[end:], encoding="utf-8")
    git(root, "commit", "-qam", "B")
    done = subprocess.run(["git", "log", "--reverse", "--format=%H"], cwd=root, capture_output=True, text=True,
                          check=True)
    return root, done.stdout.split()


def test_1_a_version_broken_away_from_the_fact_is_listed(tmp_path: Path) -> None:
    # before: 2 versions, B "0.81 (measured)   value changed", no entry for A, no "error" in --json
    from test_history import CARD

    root, commits = _rewrite_history(tmp_path)
    line = len((root / "facts/cards/h200_sxm_141gb.toml").read_text(encoding="utf-8").splitlines()) + 1
    text = invoke("fact", "show", CARD, "streams.rewrite", "--history", root=root)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == f"{CARD} streams.rewrite (facts/cards/{CARD}.toml): 3 versions"
    said = [line for line in lines if line.startswith("  ") and not line.startswith("  source")]
    assert said == [
        f"  0.81 (measured)   reads again: value changed since {commits[0][:12]}, the last version that reads",
        f"  does not read: facts/cards/{CARD}.toml at {commits[1][:12]}: does not read: Invalid value (at line "
        f"{line}, column 10)",
        "  0.8333 (measured)   new",
    ]
    result = invoke("fact", "show", CARD, "streams.rewrite", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    versions = json.loads(result.stdout)["versions"]
    assert [v["commit"] for v in versions] == commits[::-1]
    assert [v["error"] is None for v in versions] == [True, False, True]
    assert [v["changed"] for v in versions] == [["value"], [], ["new"]]


def test_1_a_version_changing_other_lines_only_is_still_left_out(tmp_path: Path) -> None:
    # the rest of the file read for its break does not list a commit that leaves the fact as it was
    from test_history import CARD, CARD_FILE, git, registry

    root = registry(tmp_path)
    file = root / CARD_FILE
    file.write_text(file.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
    git(root, "commit", "-qam", "comment")
    result = invoke("fact", "show", CARD, "streams.rewrite", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    assert [v["subject"] for v in json.loads(result.stdout)["versions"]] == ["the registry"]


# --- (2) a card over its cap at HEAD, the work tree the same ----------------------------------------------------------


def test_2_no_work_tree_entry_when_the_file_is_heads(tmp_path: Path) -> None:
    # before: "work tree  uncommitted changes" first, 3 versions, and "the most a card or drafting method file may hold"
    from test_history import git, registry

    root = registry(tmp_path)
    file = root / "facts/cards/mi300x.toml"
    file.write_text(file.read_text(encoding="utf-8") + "#" * 270_000 + "\n", encoding="utf-8")
    size = file.stat().st_size
    git(root, "commit", "-qam", "big")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
    status = subprocess.run(["git", "status", "--short"], cwd=root, capture_output=True, text=True, check=True)
    assert status.stdout == ""
    cap = (f"larger than 256 KiB, the most a card file may hold ({size:,} bytes; PASSPRICE_MAX_FILE_BYTES=BYTES "
           "raises the cap)")
    text = invoke("fact", "show", "mi300x", "memory.bandwidth", "--history", root=root)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == "mi300x memory.bandwidth (facts/cards/mi300x.toml): 2 versions"
    assert lines[2].startswith(f"{head.stdout[:12]}  ") and lines[2].endswith("  big")
    assert lines[3] == f"  does not read: facts/cards/mi300x.toml at {head.stdout[:12]}: {cap}"
    assert "uncommitted changes" not in text.stdout
    result = invoke("fact", "show", "mi300x", "memory.bandwidth", "--history", "--json", root=root)
    assert [v["commit"] is None for v in json.loads(result.stdout)["versions"]] == [False, False]
    check = invoke("check", root=root)  # the one wording: check's
    assert check.exit_code == 2 and f"facts/cards/mi300x.toml: {cap}" in check.output
    # a change to the work tree is still one
    with file.open("a", encoding="utf-8") as out:
        out.write("\n")
    again = invoke("fact", "show", "mi300x", "memory.bandwidth", "--history", "--json", root=root)
    first = json.loads(again.stdout)["versions"][0]
    assert first["commit"] is None and first["error"] == f"{file}: {cap.replace(f'{size:,}', f'{size + 1:,}')}"


# --- (3) roofline of a serving file whose limit is past the model -----------------------------------------------------

PAST = ("registry/servings/gemma3-270m-h100.toml: contexts.1.limit: 40,000 positions is past the context length of "
        "checkpoint gemma3-270m-q4_k_m, 32,768 positions: a model reads no position past its context; give each class "
        "a limit of at most 32,768")


def test_3_roofline_names_the_file_and_key(tmp_path: Path) -> None:
    # before: "passprice: refused: ContextBeyondModel: context limit 40000 is past the checkpoint's context length
    # 32768: lower --limit", exit 1
    root = copy_root(tmp_path)
    file = root / "registry/servings/gemma3-270m-h100.toml"
    text = file.read_text(encoding="utf-8")
    assert text.count("limit = 32768\n") == 1
    file.write_text(text.replace("limit = 32768\n", "limit = 40000\n"), encoding="utf-8")
    for command in (("roofline", "h100_sxm5_80gb", "gemma3-270m-h100"), ("price", "gemma3-270m-h100")):
        assert bad(*command, root=root) == [f"passprice: error: {PAST}"]
        assert bad(*command, "--json", root=root) == [f"passprice: error: {PAST}"]
    # the option's limit replaces the file's: priced, as price prices it
    result = invoke("roofline", "h100_sxm5_80gb", "gemma3-270m-h100", "--limit", "8192", "--json", root=root)
    assert result.exit_code == 0, result.output


# --- (4) an autocrlf clone's schema copy ------------------------------------------------------------------------------


def _git_clean(at: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=at, check=True,
                   capture_output=True)


def _autocrlf_clone(tmp_path: Path, source: Path) -> Path:
    """``source`` committed, then cloned under ``core.autocrlf=true`` (Git for Windows' default)."""
    _git_clean(source, "init", "-q")
    _git_clean(source, "add", "-A")
    _git_clean(source, "commit", "-q", "--no-verify", "-m", "start")
    clone = tmp_path / "clone"
    _git_clean(tmp_path, "-c", "core.autocrlf=true", "clone", "-q", str(source), str(clone))
    _git_clean(clone, "config", "core.autocrlf", "true")
    return clone


def _warnings(root: Path) -> list[str]:
    result = invoke("check", "--json", root=root)
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout)["warnings"])


@pytest.fixture
def _no_user_git_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.mark.usefixtures("_no_user_git_config")
def test_4_an_autocrlf_clone_of_an_init_registry_warns_of_nothing(tmp_path: Path) -> None:
    source = tmp_path / "mine"
    assert invoke("init", "--examples", str(source)).exit_code == 0
    assert "schema/*.json -text\n" in (source / ".gitattributes").read_text(encoding="utf-8")
    clone = _autocrlf_clone(tmp_path, source)
    assert b"\r\n" in (clone / "README.md").read_bytes()  # autocrlf applies to what no rule covers
    assert b"\r" not in (clone / "schema/card.schema.json").read_bytes()
    assert _warnings(clone) == _warnings(source)  # nothing the committed registry is not warned of


@pytest.mark.usefixtures("_no_user_git_config")
def test_4_without_the_rule_the_11_warnings_come_back(tmp_path: Path) -> None:
    # what a clone made before the fix saw, the rule taken out: one warning a schema file
    source = tmp_path / "mine"
    assert invoke("init", str(source)).exit_code == 0
    rules = source / ".gitattributes"
    rules.write_text(rules.read_text(encoding="utf-8").replace("schema/*.json -text\n", ""), encoding="utf-8")
    clone = _autocrlf_clone(tmp_path, source)
    said = [line for line in _warnings(clone) if line not in _warnings(source)]
    assert len(said) == 11 and all("differs from this passprice's copy" in line for line in said), said
    assert said[0].startswith("schema/card.schema.json: differs from this passprice's copy, which it validates "
                              "against (editors validate against this one): copy ")


@pytest.mark.usefixtures("_no_user_git_config")
def test_4_an_autocrlf_clone_of_this_repositorys_records_warns_of_nothing(tmp_path: Path) -> None:
    source = copy_root(tmp_path / "repo")
    shutil.copytree(REPO / "schema", source / "schema")
    shutil.copyfile(REPO / ".gitattributes", source / ".gitattributes")
    clone = _autocrlf_clone(tmp_path, source)
    assert _warnings(clone) == _warnings(source)


# --- (5) the restore step alone once the -text rule applies ----------------------------------------------------------


@pytest.mark.usefixtures("_no_user_git_config")
def test_5_a_clone_from_before_the_rules_is_told_to_restore_only(tmp_path: Path) -> None:
    # before: "... and `git checkout` writes again while it applies; remove that rule or setting for passprice's
    # files (or set -text on them), the .gitattributes edit staged ..., then restore it (...)"
    source = tmp_path / "mine"
    source.mkdir()
    _git_clean(source, "init", "-q")
    (source / ".gitattributes").write_text("* text=auto\n", encoding="utf-8")
    assert invoke("init", str(source)).exit_code == 0
    assert (source / ".gitattributes").read_text(encoding="utf-8") == "* text=auto\n"  # the user's, left alone
    _git_clean(source, "add", "-A")
    _git_clean(source, "commit", "-q", "--no-verify", "-m", "start")
    clone = tmp_path / "clone"
    _git_clean(tmp_path, "-c", "core.autocrlf=true", "clone", "-q", str(source), str(clone))
    _git_clean(clone, "config", "core.autocrlf", "true")
    from passprice.gitread import gitattributes_text

    (source / ".gitattributes").write_text("* text=auto\n" + gitattributes_text(), encoding="utf-8")
    _git_clean(source, "commit", "-q", "--no-verify", "-am", "the rules")
    _git_clean(clone, "pull", "-q")
    result = invoke("check", root=clone)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 23 and all(line.startswith("passprice: error: sources/") for line in lines), lines
    assert not any("remove that rule" in line or "set -text" in line for line in lines), lines[0]
    excerpt = "sources/excerpts/cite74-excerpt.txt"
    [line] = [line for line in lines if f": {excerpt}'s sha256" in line]
    assert line.endswith(f"it is the pinned text with CRLF line ends, which an earlier checkout wrote before the "
                         f".gitattributes rule setting -text on it; restore it (`rm {excerpt} && git checkout -- "
                         f"{excerpt}`: git passes over a file its index calls unchanged)"), line
    (clone / excerpt).unlink()  # the step said, done
    _git_clean(clone, "checkout", "--", excerpt)
    again = invoke("check", root=clone)
    assert excerpt not in again.stderr and len(again.stderr.splitlines()) == 22


# --- (6) a whole position as an integer; a link in locks/ said to be one ----------------------------------------------


def test_6_new_serving_writes_a_whole_position_as_an_integer(tmp_path: Path) -> None:
    # before: "position = 16384.0"
    root = copy_root(tmp_path)
    result = invoke("new-serving", "g5", "gemma3-270m-h100", "--limit", "32768", root=root)
    assert result.exit_code == 0, result.output
    text = (root / "registry/servings/g5.toml").read_text(encoding="utf-8")
    assert "\n[[contexts]]\nshare = 1.0\nposition = 16384\nlimit = 32768\n" in text, text
    odd = invoke("new-serving", "g6", "gemma3-270m-h100", "--limit", "32768", "--position", "100.5", root=root)
    assert odd.exit_code == 0, odd.output
    assert "\nposition = 100.5\n" in (root / "registry/servings/g6.toml").read_text(encoding="utf-8")
    assert invoke("price", "g5", root=root).exit_code == 0


def test_6_a_link_in_locks_to_a_serving_file_is_said_to_be_a_link(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "locks/bad.lock.toml").symlink_to("../registry/servings/gemma3-270m-h100.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "passprice: error: locks/bad.lock.toml -> ../registry/servings/gemma3-270m-h100.toml: not a lock file (no "
        "[lock] table; it is a symbolic link to a serving file): a lock is locks/NAME.lock.toml, written by "
        "`passprice lock SERVING`"]


# --- (7) the roofline's picture: shading within the batches drawn, a point for one batch -----------------------------


def _drawn(monkeypatch: pytest.MonkeyPatch, line: object) -> tuple[list[tuple[float, float]], list[tuple[object, ...]]]:
    """The spans shaded and the marked points plotted when ``line`` is rendered."""
    pytest.importorskip("matplotlib")
    from matplotlib.axes import Axes

    from passprice.roofline import render

    spans: list[tuple[float, float]] = []
    marks: list[tuple[object, ...]] = []
    span, plot = Axes.axvspan, Axes.plot

    def spanned(ax: Axes, left: float, right: float, *args: object, **options: object) -> object:
        spans.append((left, right))
        return span(ax, left, right, *args, **options)

    def plotted(ax: Axes, *args: object, **options: object) -> object:
        if "marker" in options:
            marks.append((ax.get_ylabel() or "?", *args))
        return plot(ax, *args, **options)

    monkeypatch.setattr(Axes, "axvspan", spanned)
    monkeypatch.setattr(Axes, "plot", plotted)
    render(line, "svg")  # type: ignore[arg-type]
    return spans, marks


def test_7_the_shading_ends_at_the_last_batch_and_one_batch_is_a_point(monkeypatch: pytest.MonkeyPatch) -> None:
    import attrs

    from passprice.registry import Root
    from passprice.roofline import Region, roofline
    from passprice.servings import load_spec, resolve

    root = Root(REPO)
    r = resolve(root, load_spec(root, "gemma3-270m-h100"))
    line = roofline(r.header, r.card, r.serving, "t")
    last = line.points[-1].batch
    spans, _ = _drawn(monkeypatch, line)
    assert spans and max(right for _, right in spans) == last  # before: last + 0.5
    one = attrs.evolve(line, points=line.points[:1], regions=(Region(line.regions[0].binds, 1, 1),), max_batch=1,
                       best=line.points[0], changes=())
    spans, marks = _drawn(monkeypatch, one)
    assert spans == [(0.5, 1), (0.5, 1)]  # one a panel
    # before: no point on the pass-time panel (its line of one batch draws nothing)
    assert ("pass time (ms)", [1], [line.points[0].pass_s * 1e3]) in marks, marks


def test_7_the_table_shows_the_bytes_its_intensities_divide_by() -> None:
    # before: "batch  bytes moved  array MAC/B …", the MAC/B per read-equivalent byte, which no column gave
    from passprice.tables import si

    text = invoke("roofline", "h100_sxm5_80gb", "gemma3-270m-h100")
    said = invoke("roofline", "h100_sxm5_80gb", "gemma3-270m-h100", "--json")
    assert text.exit_code == said.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    header = next(line for line in lines if line.startswith("batch  "))
    assert header.split("  ")[:3] == ["batch", "bytes moved", "read-eq bytes"]
    point = json.loads(said.stdout)["points"][0]
    assert point["batch"] == 1 and point["read_equivalent_bytes"] != point["bytes_moved"]
    row = lines[lines.index(header) + 2].split()
    assert row[:5] == ["1", *si(point["bytes_moved"], "B").split(), *si(point["read_equivalent_bytes"], "B").split()]
    # the division by hand: MAC/B x read-eq bytes, the array's MACs, is the same per byte moved x bytes moved
    macs = point["array_macs_per_byte"] * point["read_equivalent_bytes"]
    assert macs == pytest.approx(point["array_macs_per_byte_moved"] * point["bytes_moved"], rel=1e-9)
