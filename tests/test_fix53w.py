"""A new user's findings adding a card by pull request (README only, a non-editable install, a registry
``passprice init --examples`` wrote): a card ``mi355x`` with its source and stored excerpt, a serving
``qwen3-30b-a3b-mi355x`` on it, locked; then a colleague's commit moving ``memory.bandwidth`` 8 → 8.2 TB/s under the
unchanged locator ``Specifications table: 'Peak Memory Bandwidth 8 TB/s'``. Each is rebuilt here in a temporary git
registry.

1. The value contradicted its own quote and ``check`` and ``audit`` passed it (``checked``); the review asked it, and
   passed once re-locked: now ``check`` fails it, ``audit`` says ``MISMATCH``, the review fails it.
2. The review said ``HEAD fails passprice check (1 problem)`` of a pin no side of the change holds, which ``check``
   does not check: it is the review's own rule (``head_check_review_rules``).
3. ``1 lock affected, 1 added pinning what no side holds, 1 added`` read as two locks added.
4. ``fact set --locator`` wrote a quote its stored excerpt lacks without a word.
5. A misspelled key read in JSON Schema's words, with no did-you-mean.
6. ``--unit TBps`` and ``TB/sec`` were refused without ``did you mean 'TB/s'?``.
7. ``check``'s one problem was on line 2 of 71, the end of its output reading ``check FAILED`` alone.
8. README's "A card of your own" showed no card file and no excerpt file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from passprice.addedfacts import quote_holds_another

CARD = "facts/cards/mi355x.toml"
SOURCE = "sources/amd-mi355x-datasheet.toml"
EXCERPT = "sources/excerpts/mi355x-excerpt.txt"
LOCK = "locks/qwen3-30b-a3b-mi355x.lock.toml"
QUOTE = "Specifications table: 'Peak Memory Bandwidth 8 TB/s'"
README = Path(__file__).resolve().parents[1] / "README.md"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASSPRICE_NO_CACHE": "1"}
    return subprocess.run(["passprice", *args], cwd=root, capture_output=True, text=True, env=env, timeout=300)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _pin_excerpt(root: Path, record: str, excerpt: str) -> None:
    digest = hashlib.sha256((root / excerpt).read_bytes()).hexdigest()
    path = root / record
    path.write_text(re.sub(r'(?m)^excerpt_sha256 = "[0-9a-f]{64}"$', f'excerpt_sha256 = "{digest}"',
                           path.read_text(encoding="utf-8")), encoding="utf-8")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new user's registry in git: the registry ``init --examples`` wrote; then the card ``mi355x`` (the
    MI300X's file copied, its bandwidth re-cited to its own datasheet and stored excerpt), its serving and lock; then
    the colleague's 8 → 8.2 TB/s under the same locator (the shares recomputed)."""
    where = tmp_path_factory.mktemp("fix53w")
    _ok(subprocess.run(["passprice", "init", "--examples", "mine"], cwd=where, capture_output=True, text=True,
                       timeout=300))
    root = where / "mine"
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    (root / EXCERPT).write_text(
        "# Lines of the AMD Instinct MI355X datasheet's specifications table, as read.\n"
        "== amd-mi355x-datasheet - https://www.amd.com/mi355x-datasheet.pdf ==\n"
        "Peak Memory Bandwidth 8 TB/s\nMemory Capacity 288 GB HBM3E\n", encoding="utf-8")
    (root / SOURCE).write_text(
        '#:schema ../schema/source.schema.json\n[source]\ntitle = "AMD Instinct MI355X datasheet"\nkind = "datasheet"\n'
        'publisher = "AMD"\ndate = "2025-06-12"\nurl = "https://www.amd.com/mi355x-datasheet.pdf"\n'
        'retrieved = "2026-12-01"\nread = "the PDF\'s Specifications table"\n'
        f'excerpt = "{EXCERPT}"\nexcerpt_sha256 = "{"0" * 64}"\n', encoding="utf-8")
    _pin_excerpt(root, SOURCE, EXCERPT)
    card = (root / "facts/cards/mi300x.toml").read_text(encoding="utf-8")
    card = card.replace('name = "AMD Instinct MI300X"', 'name = "AMD Instinct MI355X"')
    card, n = re.subn(r"\[memory.bandwidth\]\n(?:.*\n)*?\n", "[memory.bandwidth]\nvalue = 8\nunit = \"TB/s\"\n"
                      f"provenance = \"published\"\nsource = \"amd-mi355x-datasheet\"\nlocator = \"{QUOTE}\"\n\n", card,
                      count=1)
    assert n == 1
    (root / CARD).write_text(card, encoding="utf-8")
    serving = (root / "registry/servings/qwen3-30b-a3b-mi300x.toml").read_text(encoding="utf-8")
    (root / "registry/servings/qwen3-30b-a3b-mi355x.toml").write_text(
        serving.replace('card = "mi300x"', 'card = "mi355x"').replace("one MI300X", "one MI355X"), encoding="utf-8")
    _ok(_run(root, "fact", "recompute", "mi355x"))
    _ok(_run(root, "lock", "qwen3-30b-a3b-mi355x", "-o", LOCK))
    checked = _run(root, "check")
    _ok(checked)  # the card as added holds: its quote states its figure
    assert checked.stdout.splitlines()[0].endswith(": 0 problems"), checked.stdout
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "mi355x, its serving and lock")
    text = (root / CARD).read_text(encoding="utf-8")
    (root / CARD).write_text(text.replace('value = 8\nunit = "TB/s"', 'value = 8.2\nunit = "TB/s"', 1),
                             encoding="utf-8")
    _ok(_run(root, "fact", "recompute", "mi355x"))
    _git(root, "commit", "-qam", "mi355x: memory.bandwidth 8.2 TB/s")
    return root


@pytest.fixture
def root(made: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`made`, to change."""
    copy = tmp_path / "mine"
    shutil.copytree(made, copy, symlinks=True)
    return copy


MISMATCH_CHECK = ("facts/cards/mi355x.toml: memory.bandwidth: its quote of amd-mi355x-datasheet 'Peak Memory Bandwidth "
                  "8 TB/s' states 8 TB/s, not its value 8.2 TB/s: the value and the words it cites disagree; quote the "
                  "words of the document stating the value, or set the value they state")


# --- (1) the figure a quote holds is part of the look-up -----------------------------------------------------------


def test_the_rule_reads_units_as_passprice_converts_them() -> None:
    span = ["Peak Memory Bandwidth 8 TB/s"]
    assert quote_holds_another(8.2, "TB/s", span) == ["8 TB/s"]
    assert quote_holds_another(8200, "GB/s", span) == ["8 TB/s (8000 GB/s)"]
    assert quote_holds_another(8000, "GB/s", span) == []  # the same figure in another unit
    assert quote_holds_another(8, "TB/s", span) == []
    # another dimension, a bare number equal to the value, several numbers one of which is its own, a share
    assert quote_holds_another(288, "GB", span) == []
    assert quote_holds_another(8.2, "TB/s", ["Peak Memory Bandwidth 8.2", "8 TB/s"]) == []
    assert quote_holds_another(8.2, "TB/s", ["8 TB/s or 8.2 TB/s"]) == []
    assert quote_holds_another(0.9, "1", ["90% of 8 TB/s"]) == []
    # no span's number reads the next span's word
    assert quote_holds_another(8.2, "TB/s", ["Bandwidth 8", "TB/s peak"]) == []


def test_check_and_audit_fail_a_value_its_quote_contradicts(made: Path) -> None:
    done = _run(made, "check")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(": 1 problem"), lines[0]
    assert lines[1] == f"  {MISMATCH_CHECK}"
    audit = _run(made, "audit", "qwen3-30b-a3b-mi355x")
    _ok(audit)
    # before: "memory.bandwidth: checked (1 of 1 quoted span found in the stored text)"
    assert ("  memory.bandwidth: MISMATCH (1 of 1 quoted span found in the stored text; its quote of "
            "amd-mi355x-datasheet 'Peak Memory Bandwidth 8 TB/s' states 8 TB/s, not its value 8.2 TB/s)"
            ) in audit.stdout.splitlines(), audit.stdout
    # (its vector, copied from the MI300X's card, quotes 'Vector FP32' alone, 163.4 TFLOPS outside the quote: counted
    # apart since tests/test_fixw56.py)
    assert ("quotes checked against a stored text: 4 of 10 facts' quotes checked against a stored text (1 MISMATCH, "
            "1 with its places found, the figure not quoted)") in audit.stdout.splitlines()
    source = _run(made, "audit", "--source", SOURCE, "--json")
    _ok(source)
    check = json.loads(source.stdout)["facts"][0]["quote_check"]
    assert check["state"] == "MISMATCH" and check["found"] == 1 and check["missing"] == []


def test_the_review_fails_it_re_locked_too(root: Path) -> None:
    done = _run(root, "diff", "HEAD~1", "HEAD")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "; 1 fact's quotes state another figure than its own; " in lines[1], lines[1]
    asked = next(line for line in lines if line.strip().startswith("to verify: the value moved"))
    assert asked.strip() == (
        "to verify: the value moved (8 TB/s → 8.2 TB/s) but its citation did not, and the locator quotes 8: "
        f"amd-mi355x-datasheet: {QUOTE}; its quotes, found in the stored excerpt of the document it cites, state "
        "another figure than its own, as audit and check read them (1 of 1 quoted span found in the stored text; "
        "its quote of amd-mi355x-datasheet 'Peak Memory Bandwidth 8 TB/s' states 8 TB/s, not its value 8.2 TB/s)")
    # re-locked: before, the review passed (exit 0)
    _ok(_run(root, "lock", "--update", "-o", LOCK))
    _git(root, "commit", "-qam", "re-locked")
    again = _run(root, "diff", "HEAD~2", "HEAD")
    assert again.returncode == 1, again.stdout
    assert "1 fact's quotes state another figure than its own" in again.stdout.splitlines()[1]
    assert ("1 fact's quotes state another figure than its own (mi355x:memory.bandwidth): the value and the words it "
            "cites disagree; quote the words of the document stating the value, or set the value they state"
            ) in again.stderr


# --- (2) and (3): a pin no side holds, the review's own rule; the added lock counted once ---------------------------


def test_a_pin_no_side_holds_is_the_reviews_rule_and_the_lock_counted_once(made: Path) -> None:
    done = _run(made, "diff", "HEAD~2", "HEAD", "--format", "json")
    assert done.returncode == 1
    review = json.loads(done.stdout)
    pins = [line for line in review["head_check"] if "a fact no side of the change holds" in line]
    assert len(pins) == 4 and pins[0].startswith(f"{LOCK}: facts.memory.bandwidth: pins 8 TB/s (published) ")
    # before: [] (README: the review's own rules are listed there)
    assert review["head_check_review_rules"] == pins
    summary = review["summary"]
    # before: "1 lock affected, 1 added pinning what no side holds, 1 added; HEAD fails passprice check (4 problems)"
    assert ("; 1 lock affected, 1 added (pinning what no side holds); HEAD fails the review's rules (4 problems; "
            "passprice check does not check them); ") in summary, summary
    text = _run(made, "diff", "HEAD~2", "HEAD").stdout.splitlines()
    assert "HEAD fails the review's rules (4 problems; passprice check does not check them):" in text
    assert ("  qwen3-30b-a3b-mi355x (locks/qwen3-30b-a3b-mi355x.lock.toml, card mi355x, price): it pins what no side "
            "of the change holds (locked before a later commit of the change edited a fact it pins, or edited by "
            "hand): see HEAD fails the review's rules") in text


# --- (4) fact set warns of a quote the stored excerpt lacks --------------------------------------------------------


def test_fact_set_warns_of_a_quote_its_excerpt_lacks(root: Path) -> None:
    done = _run(root, "fact", "set", "mi355x", "memory.bandwidth", "--value", "8.2", "--unit", "TB/s",
                "--provenance", "published", "--source", "amd-mi355x-datasheet", "--locator",
                "Specifications table: 'Peak Memory Bandwidth 8.2 TB/s'")
    _ok(done)  # written: the excerpt may be about to be updated
    line = ("facts/cards/mi355x.toml: memory.bandwidth: its quotes of amd-mi355x-datasheet are NOT FOUND in its stored "
            "excerpt sources/excerpts/mi355x-excerpt.txt (0 of 1 quoted span found in the stored text; not in it: "
            "'Peak Memory Bandwidth 8.2 TB/s'): restore the quoted words there, or quote the words it holds")
    assert f"passprice: warning: {line}" in done.stderr.splitlines(), done.stderr
    assert "'Peak Memory Bandwidth 8.2 TB/s'" in (root / CARD).read_text(encoding="utf-8")
    assert f"  {line}" in _run(root, "check").stdout.splitlines()  # check's own line
    # --json lists it with its code
    again = _run(root, "fact", "set", "mi355x", "memory.bandwidth", "--value", "8.2", "--unit", "TB/s",
                 "--provenance", "published", "--source", "amd-mi355x-datasheet", "--locator",
                 "Specifications table: 'Peak Memory Bandwidth 8.20 TB/s'", "--json")
    _ok(again)
    assert [w["code"] for w in json.loads(again.stdout)["warnings"]] == ["quote"]


# --- (5) a misspelled key ------------------------------------------------------------------------------------------


def test_a_misspelled_key_is_named_with_the_key_meant(root: Path) -> None:
    card = root / CARD
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace('unit = "GB"\nprovenance = "published"', 'unit = "GB"\nprovenace = "published"', 1),
                    encoding="utf-8")
    done = _run(root, "facts", "mi355x")
    assert done.returncode == 2
    # before: "memory.capacity.provenance: missing (required)" and "memory.capacity: Unevaluated properties are not
    # allowed ('provenace' was unexpected)"
    assert done.stderr == ("passprice: error: facts/cards/mi355x.toml: memory.capacity: unknown key 'provenace'; did "
                           "you mean 'provenance'?\n")
    source = root / SOURCE
    source.write_text(source.read_text(encoding="utf-8").replace("title = ", "titel = ", 1), encoding="utf-8")
    card.write_text(text, encoding="utf-8")
    done = _run(root, "audit", "--source", SOURCE)
    assert done.returncode == 2
    assert done.stderr == ("passprice: error: sources/amd-mi355x-datasheet.toml: source: unknown key 'titel'; did you "
                           "mean 'title'?\n")


# --- (6) a rate a second written another way ---------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["TBps", "TB/sec", "TB per second", "tb/s"])
def test_a_unit_a_second_written_another_way_is_told_its_spelling(root: Path, unit: str) -> None:
    done = _run(root, "fact", "set", "mi355x", "memory.bandwidth", "--value", "8", "--unit", unit, "--provenance",
                "published", "--source", "amd-mi355x-datasheet", "--locator", QUOTE)
    assert done.returncode == 2
    assert done.stderr == (f"passprice: error: facts/cards/mi355x.toml: memory.bandwidth.unit: {unit!r} is not allowed "
                           "here (one of 'B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s', 'PB/s', 'KiB/s', 'MiB/s', 'GiB/s', "
                           "'TiB/s'); did you mean 'TB/s'?\n")


# --- (7) check says its problems again at its end ----------------------------------------------------------------


def test_check_says_its_problems_again_before_it_fails(made: Path) -> None:
    lines = _run(made, "check").stdout.splitlines()
    assert len(lines) > 60
    assert lines[-3:] == ["problems, as listed at the top (1):", f"  {MISMATCH_CHECK}", "check FAILED"]


# --- (8) README's example card and excerpt -----------------------------------------------------------------------


def _block(opening: str) -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"```\w+\n(" + re.escape(opening) + r".*?)```", text, re.DOTALL)
    assert found is not None, opening
    return found.group(1)


def test_the_readmes_example_card_and_excerpt_hold(root: Path) -> None:
    card = _block("#:schema ../../schema/card.schema.json\n[card]\nname = \"Acme X1\"")
    excerpt = _block("# Lines of the Acme X1 datasheet")
    source = _block("#:schema ../schema/source.schema.json\n[source]\ntitle = \"Acme X1")
    tomllib.loads(card)
    (root / "sources/excerpts/acme-x1.txt").write_text(excerpt, encoding="utf-8")
    digest = hashlib.sha256(excerpt.encode()).hexdigest()
    (root / "sources/acme-x1-datasheet.toml").write_text(
        source + f'excerpt = "sources/excerpts/acme-x1.txt"\nexcerpt_sha256 = "{digest}"\n', encoding="utf-8")
    (root / "facts/cards/acme_x1.toml").write_text(card, encoding="utf-8")
    facts = _run(root, "facts", "acme_x1")
    _ok(facts)
    audit = _run(root, "audit", "--source", "sources/acme-x1-datasheet.toml")
    _ok(audit)
    checks = [line for line in audit.stdout.splitlines() if line.startswith("  acme_x1:")]
    checked = [line for line in checks if ": checked (" in line]
    assert len(checked) == 5, audit.stdout  # every quoting fact's quotes found, each stating its figure
    assert not any("NOT FOUND" in line or "MISMATCH" in line for line in checks), checks
    done = _run(root, "check")
    assert not any("acme_x1" in line or "acme-x1" in line for line in done.stdout.splitlines()
                   if not line.startswith("  warning:")), done.stdout
