"""A new user's findings starting a registry of their own (README only), on the review and audit uses, each
reproduced in a registry ``passprice init --examples`` writes in a temporary folder.

1. ``check`` (so the pre-commit hook) passed a fact whose quoted words its stored excerpt no longer held (the
   excerpt's line edited, its ``excerpt_sha256`` re-pinned), while ``audit`` said NOT FOUND and the review failed:
   ``check`` now makes the same quote look-up (``sources.quote_check``) and reports each NOT FOUND as a problem.
2. A ``measured`` fact citing a source of kind ``datasheet`` passed everything: ``check`` warns.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

L40S = "facts/cards/l40s.toml"
DATASHEET = "sources/nvidia-l40s-datasheet.toml"
EXCERPT = "sources/excerpts/cite73-excerpt.txt"


def _run(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASSPRICE_NO_CACHE": "1"}
    return subprocess.run(["passprice", *args], cwd=cwd or root, capture_output=True, text=True, env=env,
                          timeout=120)


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _repin(root: Path, record: str, excerpt: str) -> None:
    digest = hashlib.sha256((root / excerpt).read_bytes()).hexdigest()
    path = root / record
    text = re.sub(r'(?m)^excerpt_sha256 = "[0-9a-f]{64}"$', f'excerpt_sha256 = "{digest}"',
                  path.read_text(encoding="utf-8"))
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry ``passprice init --examples`` wrote (never outside a temporary folder)."""
    where = tmp_path_factory.mktemp("init")
    done = subprocess.run(["passprice", "init", "--examples", "mine"], cwd=where, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return where / "mine"


@pytest.fixture
def root(made: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`made`, to break."""
    copy = tmp_path / "mine"
    shutil.copytree(made, copy, symlinks=True)
    return copy


# --- (1) check looks quotes up as audit and the review do --------------------------------------------------------


def test_check_reports_a_quote_its_excerpt_lost(root: Path) -> None:
    _edit(root, EXCERPT, "Memory Bandwidth 864GB/s", "Memory Bandwidth 860GB/s")
    _repin(root, DATASHEET, EXCERPT)
    done = _run(root, "check")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(": 1 problem"), lines[0]
    assert ("  facts/cards/l40s.toml: memory.bandwidth: its quotes of nvidia-l40s-datasheet are NOT FOUND in its "
            "stored excerpt sources/excerpts/cite73-excerpt.txt (0 of 1 quoted span found in the stored text; not in "
            "it: 'Memory Bandwidth 864GB/s'): restore the quoted words there, or quote the words it holds") in lines
    assert lines[-1] == "check FAILED"
    # the same look-up audit --source makes
    audit = _run(root, "audit", "--source", DATASHEET)
    assert ("  l40s:memory.bandwidth: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
            "'Memory Bandwidth 864GB/s')") in audit.stdout.splitlines(), audit.stdout


def test_check_of_the_made_registry_holds(made: Path) -> None:
    done = _run(made, "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "all holds"
    assert "NOT FOUND" not in done.stdout


# --- (2) a measured fact citing a datasheet ----------------------------------------------------------------------


def test_measured_citing_a_datasheet_is_warned(root: Path) -> None:
    _edit(root, L40S, 'unit = "GB/s"\nprovenance = "published"\nsource = "nvidia-l40s-datasheet"',
          'unit = "GB/s"\nprovenance = "measured"\nsource = "nvidia-l40s-datasheet"')
    done = _run(root, "check")
    assert done.returncode == 0, done.stdout + done.stderr
    warned = [line for line in done.stdout.splitlines() if "a datasheet" in line]
    assert warned == ["  warning: facts/cards/l40s.toml: memory.bandwidth: measured, citing nvidia-l40s-datasheet, a "
                      "datasheet: measured needs a public reproducible measurement; cite one, or say estimated or "
                      "published"], done.stdout


# --- (3) a relative path from a subfolder of the registry --------------------------------------------------------


def test_audit_source_reads_a_path_against_the_root_from_a_subfolder(root: Path) -> None:
    below = root / "facts" / "cards"
    done = _run(root, "audit", "--source", DATASHEET, cwd=below)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "audit of source nvidia-l40s-datasheet"
    # a card file named as from the root, too
    card = _run(root, "facts", L40S, cwd=below)
    assert card.returncode == 0, card.stderr
    # named in neither place: both said
    gone = _run(root, "audit", "--source", "sources/nvidia-l4-datasheet.toml", cwd=below)
    assert gone.returncode == 2
    assert gone.stderr == ("passprice: error: sources/nvidia-l4-datasheet.toml: no such source file (looked for from "
                           f"the working folder and from the registry's root, {root.resolve()})\n")
    assert gone.stdout == ""


# --- (4) a hand-edited lock: the command to paste ----------------------------------------------------------------

LOCK = "locks/r1-qwen7b-h200.lock.toml"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _hand_edit_lock(root: Path) -> None:
    path = root / LOCK
    text = path.read_text(encoding="utf-8")
    found = re.search(r"(?m)^tokens_per_s = (\S+)$", text)
    assert found is not None
    path.write_text(text.replace(found.group(0), "tokens_per_s = 1000.0", 1), encoding="utf-8")


def _way(root: Path) -> str:
    done = _run(root, "reproduce", LOCK)
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip()
    assert line.startswith(f"passprice: error: {LOCK}: lock.digest: the lock's contents do not match its digest "), line
    return line.split("a lock is written by passprice only; ", 1)[1]


def test_a_hand_edited_lock_names_the_commit_to_restore_it_from(root: Path) -> None:
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    _hand_edit_lock(root)
    tail = (f", then change it with `passprice lock --update -o {LOCK}` (it keeps the lock's kind and policy; "
            "`--force --require PATH=PROVENANCE` loosens a floor, which the review shows)")
    assert _way(root) == (f"restore it from the last commit that holds it as written (`git checkout HEAD -- {LOCK}`)"
                          + tail)
    first = _git(root, "rev-parse", "HEAD").strip()
    _git(root, "commit", "-qam", "the edit committed")  # HEAD's bytes no longer read: the commit before
    assert _way(root) == (f"restore it from the last commit that holds it as written (`git checkout {first[:12]} -- "
                          f"{LOCK}`)" + tail)


def test_a_hand_edited_lock_out_of_git_says_no_commit_holds_it(root: Path) -> None:
    _hand_edit_lock(root)
    assert _way(root) == ("no commit here holds it as written: restore it from a copy of it as written, then change "
                          f"it with `passprice lock --update -o {LOCK}` (it keeps the lock's kind and policy; "
                          "`--force --require PATH=PROVENANCE` loosens a floor, which the review shows); or write it "
                          f"anew, `passprice lock SERVING --force -o {LOCK}`")


# --- (5) a unit typo of case only --------------------------------------------------------------------------------


def test_a_unit_of_the_wrong_case_is_told_its_spelling(root: Path) -> None:
    _edit(root, L40S, 'value = 864\nunit = "GB/s"', 'value = 864\nunit = "GB/S"')
    done = _run(root, "facts", "l40s")
    assert done.returncode == 2
    assert done.stderr == ("passprice: error: facts/cards/l40s.toml: memory.bandwidth.unit: 'GB/S' is not allowed here "
                           "(one of 'B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s', 'PB/s', 'KiB/s', 'MiB/s', 'GiB/s', "
                           "'TiB/s'); did you mean 'GB/s'?\n")


# --- (6) reproduce: a pinned fact the price does not read, changed -----------------------------------------------


def test_a_changed_fact_the_price_does_not_read_says_what_changed(root: Path) -> None:
    _edit(root, "facts/cards/h200_sxm_141gb.toml", 'locator = "Azure_Results/ND_H200_v5_results.md, HBM Bandwidth '
          "table (BabelStream): row '| Mul ", 'locator = "Azure_Results (re-read)/ND_H200_v5_results.md, HBM Bandwidth '
          "table (BabelStream): row '| Mul ")
    done = _run(root, "reproduce", LOCK)
    assert done.returncode == 0, done.stderr
    facts = [line for line in done.stdout.splitlines() if line.startswith("    facts  ")]
    assert facts == ["    facts          unchanged (of those the price reads); no drift in 1 pinned fact changed today "
                     "that it does not read: streams.rewrite (citation changed)"]


# --- (7) a dimensionless fact in the review's list of what a changed source states --------------------------------


def test_a_dimensionless_fact_is_its_bare_value_in_a_changed_sources_places() -> None:
    from passprice.facts import Fact
    from passprice.lineage import Citing, FactRef
    from passprice.sourcechange import cited_places

    share = Fact.from_entry({"value": 1, "unit": "1", "provenance": "estimated", "source": "team-notes",
                             "locator": "notes.md: 'one pass'"}, "test")
    rate = Fact.from_entry({"value": 4.8, "unit": "TB/s", "provenance": "published", "source": "team-notes",
                            "locator": "notes.md: '4.8TB/s'"}, "test")
    places = cited_places([Citing(FactRef("card", "mine", "draft.share"), share, ("source",)),
                           Citing(FactRef("card", "mine", "memory.bandwidth"), rate, ("source",))], "team-notes")
    assert places == ("mine:draft.share: 1 (estimated) at notes.md: 'one pass'",
                      "mine:memory.bandwidth: 4.8 TB/s (published) at notes.md: '4.8TB/s'")


# --- (9) fact set --provenance derived without --derivation: the example for the key set --------------------------


def test_a_derived_fact_without_derivation_gets_an_example_for_its_key(root: Path) -> None:
    done = _run(root, "fact", "set", "h200_sxm_141gb", "vector", "--value", "33.5", "--unit", "TMAC/s",
                "--provenance", "derived", "--source", "passprice-card-review", "--locator", "by hand")
    assert done.returncode == 2
    assert done.stderr == (
        "passprice: error: facts/cards/h200_sxm_141gb.toml: vector.derivation: missing (required): a derived fact says "
        "how it is computed: give --derivation TABLE, e.g. for vector: '{formula = \"a * b\", inputs = {a = {value = "
        "2, unit = \"1\", locator = \"...\"}, b = {fact = \"OTHER.KEY\"}}}' (its inputs' units giving the fact's; "
        "passprice explain derivation), or another --provenance\n")
    shares = _run(root, "fact", "set", "h200_sxm_141gb", "streams.append", "--value", "0.8", "--unit", "1",
                  "--provenance", "derived", "--source", "passprice-card-review", "--locator", "by hand")
    assert "e.g. for streams.append: '{formula = \"dot / bandwidth\", digits = 4, " in shares.stderr


# --- (10) did you mean: the name sharing the longest prefix of whole words first ----------------------------------


def test_did_you_mean_puts_the_name_sharing_most_leading_words_first(root: Path) -> None:
    shutil.copy(root / DATASHEET, root / "sources" / "nvidia-l4-datasheet.toml")
    done = _run(root, "audit", "--source", "nvidia-l4-spec-sheet")
    assert done.returncode == 2
    assert done.stderr.startswith("passprice: error: source 'nvidia-l4-spec-sheet': not found in sources; did you mean "
                                  "nvidia-l4-datasheet or nvidia-l40s-datasheet or nvidia-a40-datasheet? "), done.stderr


def test_shared_words_count_whole_words_from_the_start() -> None:
    from passprice.registry import _shared_words

    assert _shared_words("nvidia-l4-spec-sheet", "nvidia-l4-datasheet") == 2
    assert _shared_words("nvidia-l4-spec-sheet", "nvidia-l40s-datasheet") == 1
    assert _shared_words("H200_SXM", "h200_sxm_141gb") == 2
    assert _shared_words("a40", "nvidia-a40-datasheet") == 0


def test_in_git_check_looks_up_every_quote_committed_or_not(root: Path) -> None:
    # check runs no git (its result replays from the memo while the files it read are as they were): an excerpt
    # edited, staged or committed, is looked up the same
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    _edit(root, EXCERPT, "Memory Bandwidth 864GB/s", "Memory Bandwidth 860GB/s")
    _repin(root, DATASHEET, EXCERPT)
    for step in ("edited", "staged", "committed"):
        if step == "staged":
            _git(root, "add", "-A")
        elif step == "committed":
            _git(root, "commit", "-qm", "the excerpt edited")
        done = _run(root, "check")
        assert done.returncode == 1, (step, done.stdout)
        # listed at the top, and said again before "check FAILED" (tests/test_fix53w.py)
        assert sum("are NOT FOUND in its stored excerpt" in line for line in done.stdout.splitlines()) == 2, step
