"""A new user's findings (README only, a non-editable install, a registry ``passprice init --examples`` wrote, in its
own git repository), each rebuilt here in a temporary git registry:

1. ``audit LOCK`` said ``routing.hot_experts: checked (2 of 2 quoted spans found in the stored text)`` of quotes
   that are the table's title and the row's label alone, its ``58/128`` outside the quotes, and named no line: now
   ``places found, the figure not quoted`` and each quote's ``EXCERPT:LINE``. A quote of the page as it reads
   (``'58/128 (45%)'``, the excerpt holding Markdown ``58/128 (**45%**)``) stays NOT FOUND, saying how the file
   holds it.
2. ``reproduce`` of a 0-byte file (a failed ``git show REV:PATH > FILE``) said ``incomplete lock (truncated?)
   …; re-lock it``: now it says the file is empty; ``reproduce REV:PATH`` advised a ``git show`` of a revision that
   does not hold the file: now it says so, with the commits that changed it.
3. ``check``'s advice for a serving stack's fact below a lock's floor was ``passprice fact set``, which refuses
   stack facts: now it says to edit the stack's file (or re-fit it).
4. A ``registry`` source whose document is a file of the registry was ``not checked (… has no stored text)`` with
   nothing saying how to have it checked: now ``audit`` and ``check`` say ``add excerpt = "PATH"``.
5. ``check`` said ``all holds`` of a fact change that moved locked prices (and the first review failed on them):
   now its last line names them with their ``lock --update`` commands, exit 0 still; ``fact set`` names them too.
6. ``roofline`` printed no spread caveat for a paged serving's largest batch: now it does, as ``best`` does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

LOCK = "locks/qwen3-30b-a3b-h200.lock.toml"
ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"
CITE70 = "sources/excerpts/cite70-excerpt.txt"
CITE102 = "sources/excerpts/cite102-excerpt.txt"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASSPRICE_NO_CACHE": "1"}
    return subprocess.run(["passprice", *args], cwd=root, capture_output=True, text=True, env=env, timeout=300)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _line_number(root: Path, rel: str, needle: str) -> int:
    """The number (1 the first) of the first line of ``rel`` holding ``needle``."""
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``init --examples`` in a git repository of its own, committed."""
    where = tmp_path_factory.mktemp("fixw56")
    done = subprocess.run(["passprice", "init", "--examples", "mine"], cwd=where, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    root = where / "mine"
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


@pytest.fixture
def root(made: Path, tmp_path: Path) -> Path:
    """A copy of the registry (and its git history) to change."""
    copy = tmp_path / "mine"
    shutil.copytree(made, copy, symlinks=True)
    return copy


# --- 1. audit: the figure not quoted, each quote's line, the markup hint --------------------------------------------


def test_audit_says_places_found_the_figure_not_quoted_and_each_line(made: Path) -> None:
    done = _run(made, "audit", LOCK)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # before: "  routing.hot_experts: checked (2 of 2 quoted spans found in the stored text)", no line named
    at = lines.index("  routing.hot_experts: places found, the figure not quoted (2 of 2 quoted spans found in the "
                     "stored text; none states 0.453125, nor its derivation's experts 128 or hot 58)")
    title = _line_number(made, CITE70, "## The real result — Qwen3 routes near-uniform")
    row = _line_number(made, CITE70, "| narrow (single-domain Python) | ~8k | 58/128 (**45%**) |")
    assert (title, row) == (59, 62)
    assert lines[at + 1] == f"    at {CITE70}:{title}, {CITE70}:{row}"
    # 8 of 10 were "checked"; the one whose figure no quote states is counted apart
    assert ("quotes checked against a stored text: 7 of 10 facts' quotes checked against a stored text (1 with its "
            "places found, the figure not quoted)") in lines
    # a quote over a table row whose cells the copy puts a line each: its first line
    bandwidth = lines.index("  memory.bandwidth: checked (1 of 1 quoted span found in the stored text)")
    assert lines[bandwidth + 1] == f"    at {CITE102}:{_line_number(made, CITE102, 'GPU Memory Bandwidth')}"
    data = json.loads(_run(made, "audit", LOCK, "--json").stdout)
    check = next(f["quote_check"] for f in data["facts"] if f["path"] == "routing.hot_experts")
    assert (check["state"], check["figure_quoted"], check["quote_lines"]) == (
        "checked", False, [f"{CITE70}:59", f"{CITE70}:62"])
    assert data["quotes_checked"] == {"checked": 7, "not_found": 0, "facts": 10, "figure_not_quoted": 1}


def test_a_quote_without_the_excerpts_markup_says_how_the_file_holds_it(root: Path) -> None:
    path = root / ROUTING
    text = path.read_text(encoding="utf-8")
    assert "experts for 90% coverage 58/128 (45%)\"" in text
    path.write_text(text.replace("experts for 90% coverage 58/128 (45%)\"",
                                 "experts for 90% coverage '58/128 (45%)'\""), encoding="utf-8")
    done = _run(root, "check")
    assert done.returncode == 1
    line = ("  facts/routing/qwen3-30b-a3b-measured.toml: hot_experts: its quotes of "
            "gpu-container-handbook-routing-derisk are NOT FOUND in its stored excerpt "
            "sources/excerpts/cite70-excerpt.txt (2 of 3 quoted spans found in the stored text; not in it: "
            "'58/128 (45%)' (found with the excerpt's markup removed: quote it as the file holds it, "
            "'58/128 (**45%**)')): restore the quoted words there, or quote the words it holds")
    assert line in done.stdout.splitlines()
    # quoted as the file holds it: found, and the quote states the figure (58/128 is 0.453125): checked
    path.write_text(text.replace("experts for 90% coverage 58/128 (45%)\"",
                                 "experts for 90% coverage '58/128 (**45%**)'\""), encoding="utf-8")
    audit = _run(root, "audit", "qwen3-30b-a3b-h200")
    assert audit.returncode == 0, audit.stderr
    assert "  routing.hot_experts: checked (3 of 3 quoted spans found in the stored text)" in audit.stdout.splitlines()


# --- 2. reproduce: an empty file, a revision that does not hold the lock -------------------------------------------


def test_reproduce_of_an_empty_file_says_it_is_empty(root: Path) -> None:
    show = subprocess.run(["git", "show", "main~3:" + LOCK], cwd=root, capture_output=True)
    assert show.returncode != 0
    (root / "old.lock.toml").write_bytes(show.stdout)
    done = _run(root, "reproduce", "old.lock.toml")
    # before: "old.lock.toml: incomplete lock (truncated?): missing [card], …; re-lock it"
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "passprice: error: old.lock.toml: empty (0 bytes): no lock was written to it (a `git show REV:PATH > FILE` "
        "whose revision does not hold PATH leaves such a file: `git log --oneline -- PATH` lists the commits that "
        "changed it)\n")


def test_reproduce_of_a_revision_checks_that_it_holds_the_lock(root: Path) -> None:
    done = _run(root, "reproduce", f"main~3:{LOCK}")
    assert done.returncode == 2
    # before: "… write it out first, `git show 'main~3:locks/…' > old-….lock.toml` …" of a revision git lacks
    assert done.stderr == (f"passprice: error: lock 'main~3:{LOCK}': git has no revision 'main~3' here "
                           "(`git log --oneline` lists the commits)\n")
    _git(root, "rm", "-q", LOCK)
    _git(root, "commit", "-qm", "drop the lock")
    first = _git(root, "log", "--format=%h %cs", "--", LOCK).split("\n")
    done = _run(root, "reproduce", f"HEAD:{LOCK}")
    assert done.returncode == 2
    assert done.stderr == (f"passprice: error: lock 'HEAD:{LOCK}': revision HEAD does not hold {LOCK} (the last "
                           f"commits that changed it: {first[0]}, {first[1]}): `git show` would write no lock, and a "
                           "file it left would be empty\n")
    # a revision that holds it: the advice to write it out, as before
    held = _run(root, "reproduce", f"HEAD~1:{LOCK}")
    assert held.returncode == 2
    assert f"`git show 'HEAD~1:{LOCK}' > old-qwen3-30b-a3b-h200.lock.toml`" in held.stderr


# --- 3. check's advice for a serving stack's fact below a floor ----------------------------------------------------


def test_a_stack_facts_floor_advice_is_to_edit_its_file(root: Path) -> None:
    path = root / "facts/stacks/llamacpp-cuda-2405.toml"
    text = path.read_text(encoding="utf-8")
    head = '[memory.reserved]\nvalue = 512\nunit = "MiB"\nprovenance = "estimated"'
    assert head in text
    path.write_text(text.replace(head, head.replace("estimated", "assumed")), encoding="utf-8")
    done = _run(root, "check")
    assert done.returncode == 1
    line = next(x for x in done.stdout.splitlines() if x.startswith("  floors: lock r1-qwen7b-h200-llamacpp "))
    # before: "… two ways out: strengthen the fact's provenance (passprice fact set with a stronger --provenance and
    # its --source), …", and fact set refuses a stack's fact
    assert line == (
        "  floors: lock r1-qwen7b-h200-llamacpp refuses this price: stack.memory.reserved is assumed, below the floor "
        "estimated (the price's weakest provenance is assumed, carried by stack.memory.reserved); two ways out: "
        "strengthen the fact's provenance (a serving stack's fact: edit its stack's file under facts/stacks/ by "
        "hand, or re-run passprice calibrate --stack S for a fitted one), or loosen the lock's floor for it on "
        "purpose through review (`passprice lock --update -o locks/r1-qwen7b-h200-llamacpp.lock.toml --force "
        "--require stack.memory.reserved=assumed`)")
    refused = _run(root, "fact", "set", "llamacpp-cuda-2405", "memory.reserved", "--value", "512", "--unit", "MiB",
                   "--provenance", "estimated", "--source", "xiongjiedai-gpu-benchmarks", "--locator", "x")
    assert refused.returncode == 2 and "edit the record's file by hand" in refused.stderr


# --- 4 and 5. a registry document with no excerpt; check and fact set name the locked prices moved ----------------


def _our_babelstream(root: Path) -> None:
    (root / "notes").mkdir()
    (root / "notes/h200-babelstream.md").write_text(
        "# H200 BabelStream, our run\n\n| Function | MB/s |\n| Copy | 4401000 |\n| Dot | 4480123 |\n", encoding="utf-8")
    (root / "sources/our-h200-babelstream.toml").write_text(
        '#:schema ../schema/source.schema.json\n[source]\ntitle = "Our H200 BabelStream run"\nkind = "registry"\n'
        'publisher = "us"\npath = "notes/h200-babelstream.md"\nread = "Our own run\'s output, kept in notes/."\n',
        encoding="utf-8")


def test_a_registry_document_without_an_excerpt_says_how_to_check_it(root: Path) -> None:
    _our_babelstream(root)
    relocks = ["qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200", "r1-qwen7b-h200-best",
               "r1-qwen7b-h200-llamacpp"]
    done = _run(root, "fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9334", "--unit", "1",
                "--provenance", "measured", "--source", "our-h200-babelstream", "--locator",
                "row '| Dot | 4480123 |' in MB/s, over memory.bandwidth")
    assert done.returncode == 0, done.stderr
    commands = ", ".join(f"`passprice lock --update -o locks/{name}.lock.toml`" for name in relocks)
    # 5: the edit moves 5 locked prices (0.9333 -> 0.9334), said with the commands that re-lock them
    assert (f"passprice: warning: facts/cards/h200_sxm_141gb.toml: streams.read: the edit moves 5 locked prices "
            f"({', '.join(relocks)}): a review fails it unless the change re-locks each: {commands}"
            ) in done.stderr.splitlines()
    audit = _run(root, "audit", "qwen3-30b-a3b-h200")
    assert audit.returncode == 0, audit.stderr
    # before: "  streams.read: not checked (0 of 1 quoted span found in the stored text; our-h200-babelstream has no
    # stored text)"
    assert ("  streams.read: not checked (0 of 1 quoted span found in the stored text; our-h200-babelstream has no "
            "stored text; its document notes/h200-babelstream.md is in this registry: add excerpt = "
            "\"notes/h200-babelstream.md\" to sources/our-h200-babelstream.toml to check its quotes against it)"
            ) in audit.stdout.splitlines()
    check = _run(root, "check")
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr
    lines = check.stdout.splitlines()
    assert ("  warning: sources/our-h200-babelstream.toml: its document notes/h200-babelstream.md is in this registry "
            "but the record names no excerpt, so the quotes citing it are never checked "
            "(facts/cards/h200_sxm_141gb.toml: streams.read); add excerpt = \"notes/h200-babelstream.md\" to the "
            "record (and pin it: check then gives its excerpt_sha256)") in lines
    # 5: before, the last line read "all holds" (exit 0), and the first review failed on these 5 locks
    assert lines[-1] == (f"all holds; 5 locked prices moved ({', '.join(relocks)}): the work tree prices them "
                         f"otherwise than their locks record; a review fails such a change unless it re-locks each: "
                         f"{commands}")
    data = json.loads(_run(root, "check", "--json").stdout)
    assert (data["ok"], data["prices_moved"]) == (True, relocks)
    assert _run(root, "check", "--frozen").returncode == 1  # --frozen fails the drift, as before
    # the excerpt named as the README says: its quote is looked up, found on line 5; the share 0.9334 is no figure
    # the row states (it is 4480123 MB/s over the card's bandwidth, and the fact has no derivation saying so)
    with (root / "sources/our-h200-babelstream.toml").open("a", encoding="utf-8") as f:
        f.write('excerpt = "notes/h200-babelstream.md"\n')
    audit = _run(root, "audit", "qwen3-30b-a3b-h200")
    lines = audit.stdout.splitlines()
    at = lines.index("  streams.read: places found, the figure not quoted (1 of 1 quoted span found in the stored "
                     "text; none states 0.9334)")
    assert lines[at + 1] == "    at notes/h200-babelstream.md:5"


def test_check_without_a_moved_price_still_says_all_holds(made: Path) -> None:
    done = _run(made, "check")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "all holds"
    assert json.loads(_run(made, "check", "--json").stdout)["prices_moved"] == []


# --- 6. roofline's spread line ------------------------------------------------------------------------------------


def test_roofline_prints_the_spread_caveat(made: Path) -> None:
    done = _run(made, "roofline", "h200_sxm_141gb", "qwen3-30b-a3b-h200")
    assert done.returncode == 0, done.stderr
    spread = ("  spread: 605 sequences counted each at the mean position 2,048 (202.1 MB a sequence, the paged cache's "
              "position + half a page): they fit only while their positions stay spread about it; were every sequence "
              "at its last position, 4,095 of its 4,096 limit (402.7 MB a sequence: its limit's whole pages), memory "
              "would hold 304 (`--position 4095`)")
    assert spread in done.stdout.splitlines()  # before: no spread line; best's own says the same
    best = _run(made, "best", "qwen3-30b-a3b-h200")
    assert re.sub(r"^  spread +", "  spread: ", next(x for x in best.stdout.splitlines()
                                                    if x.startswith("  spread "))) == spread
    data = json.loads(_run(made, "roofline", "h200_sxm_141gb", "qwen3-30b-a3b-h200", "--json").stdout)
    assert (data["spread"]["mean_position"], data["spread"]["last_max_batch"]) == (2048, 304)
