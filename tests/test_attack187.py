"""Hostile input against the newest record kinds and lookups (issue 13): routing records, measurements and stack
files, sources and their stored excerpts, and the command line's lists; each escape found kept as its reproducer,
built in the test.

- (1) A stored excerpt holding two files whose names read alike once case-folded (``AZURE_RESULTS/…`` beside
  ``Azure_Results/…``; ``ß`` and ``SS`` fold together too): a locator naming the one exactly was read as naming both
  (:meth:`passprice.sources.StoredText.parts_named` reads names loosely), its quote looked for under the one sorting
  first, and a row of the other file read ``checked``. Now parts whose names fold together are told apart by the
  name as written alone.
- (2) ``calibrate`` of a stack whose runs all repeat one point (card, checkpoint, batch, positions), 200 of them,
  fitted 8 facts and said nothing of it: its caution counted runs, not the points they tell the fit apart, so one
  point said nothing where one run said "the fit matches every run … as so few runs let it". Now the caution counts
  points.
- (3) ``sweep --cards`` of 100,000 names (600 KB) looked each name up as a file of the working folder (1.5 s of
  CPU of the 1.9 s the refusal took), to compare it with an ``-o`` that was not given. Now nothing is looked up
  without an output, and a name not ending in ``.toml``, which names no file, never.
- (4) A routing record scoped to 1,001 checkpoints of 206 characters (212 KB, under a routing file's 256 KiB cap):
  the ``Routed`` refusal offering it printed one line of 208,423 characters, every name of its scope, and so did
  the ``OutOfScope`` refusal naming it. Now a line names five of them, each cut past 100 characters, and counts the
  rest (``passprice.scopes.scope_said``); ``--json``'s ``applies_to`` keeps every one.
- (5) A measurement file of 400 runs, each naming a card of its own that is not there (88 KB): ``check`` and
  ``validate`` printed 400 error lines (202 KB), where a file with more problems than a reader can use says the
  first 20 and counts the rest. Now each file's runs' lines are its first 20 and one counting the others
  (``passprice.measurements.first_run_problems``).
- (6) ``sources/excerpts/CITE70-excerpt.txt`` beside ``cite70-excerpt.txt``, one record naming each: ``check``
  said "all holds", though the two are one file on macOS and Windows (a checkout there holds one, and the other
  record's pinned sha256 fails). Now the folders of the excerpts and documents records name are held to the rule
  the record folders are (``passprice.check.documents_alike``).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.sources import Source, stored_text_of

AZURE = "azure-ai-benchmarking-guide"
EXCERPT = "sources/excerpts/github-sources-excerpt.txt"
H200 = "Azure_Results/ND_H200_v5_results.md"
FOLDED = "AZURE_RESULTS/ND_H200_V5_RESULTS.MD"  # sorts before H200: the part read from before
ROW = "| Dot   | 9.91              |"


def _line(output: str, head: str) -> str:
    found = [line.strip() for line in output.splitlines() if line.strip().startswith(head)]
    assert len(found) == 1, output
    return found[0]


def _with_folded_part(root: Path) -> None:
    """Add to the shared excerpt a section of a file whose name folds to the H200 results file's, holding ``ROW``;
    re-pin every record naming the excerpt (its sha256 read from the file, never written here)."""
    excerpt = root / EXCERPT
    old = hashlib.sha256(excerpt.read_bytes()).hexdigest()
    excerpt.write_bytes(excerpt.read_bytes() + (
        f"\n== {AZURE} {FOLDED} https://example.com/{FOLDED} ==\n\n{ROW}\n").encode())
    new = hashlib.sha256(excerpt.read_bytes()).hexdigest()
    pinned = 0
    for record in (root / "sources").glob("*.toml"):
        text = record.read_text(encoding="utf-8")
        if old in text:
            record.write_text(text.replace(old, new), encoding="utf-8")
            pinned += 1
    assert pinned >= 2, pinned  # the excerpt is shared


def test_1_a_part_whose_name_folds_with_the_named_one_is_not_read_from(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _with_folded_part(root)
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.6625", "--unit", "1",
                    "--provenance", "measured", "--source", AZURE, "--locator",
                    f"{H200}, HBM Bandwidth table: row '{ROW}'", root=root)
    assert result.exit_code == 0, result.output
    audit = invoke("audit", "--source", AZURE, root=root)
    assert audit.exit_code == 0, audit.output
    # Before: "h200_sxm_141gb:streams.read: checked (1 of 1 quoted span found in the stored text)".
    assert _line(audit.stdout, "h200_sxm_141gb:streams.read:") == (
        "h200_sxm_141gb:streams.read: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
        f"'{ROW}' (under {H200}; found only under {FOLDED}))")


def test_1_parts_that_fold_together_are_named_as_written() -> None:
    text = (REPO / EXCERPT).read_bytes() + f"\n== {AZURE} {FOLDED} https://example.com/x ==\n\n{ROW}\n".encode()
    stored = stored_text_of(Source(id=AZURE, title="t", kind="web", read="r", url="https://example.com",
                                   excerpt=EXCERPT), text, EXCERPT)
    assert stored.parts_named(f"{H200}: row") == (H200,)
    assert stored.parts_named(f"{FOLDED}: row") == (FOLDED,)
    assert stored.parts_named("azure_results/nd_h200_v5_results.md: row") == ()  # names neither as written
    assert stored.parts_named("Azure_Results/ND_H100_v5_results.md: row") == ("Azure_Results/ND_H100_v5_results.md",)
    sharp = stored_text_of(Source(id=AZURE, title="t", kind="web", read="r", url="https://example.com",
                                  excerpt=EXCERPT),
                           f"== {AZURE} docs/Straße.md https://example.com/a ==\n\na\n"
                           f"== {AZURE} docs/STRASSE.md https://example.com/b ==\n\nb\n".encode(), EXCERPT)
    assert sharp.parts_named("docs/Straße.md: row 'a'") == ("docs/Straße.md",)


# --- 2. calibrate's caution counts the points its runs stand at ------------------------------------------------------

RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


def test_2_runs_repeating_one_point_are_one_point_to_the_caution(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / RUNS
    text = path.read_text(encoding="utf-8")
    head, first = text.split("\n[[run]]\n")[:2]
    copies = "".join("\n[[run]]\n" + re.sub(r'(?m)^id = ".*"$', f'id = "same.{i}"', first, count=1)
                     for i in range(12))
    path.write_text(head + "\n" + copies, encoding="utf-8")
    result = invoke("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root)
    assert result.exit_code == 0, result.output
    # Before: only the hold-out caution (12 runs is more than the 8 facts fitted).
    assert result.stderr.splitlines()[0] == (
        "passprice: warning: calibrate llamacpp-cuda-2405: 12 runs at 1 point (a run at another's card, checkpoint, "
        "batch and positions tells the fit nothing new) fit 8 facts (terms.serial included): the fit matches every "
        "run (in-sample error 0.0 %), as so few runs let it, so its in-sample error says nothing; measure more runs "
        "(other batches, positions, cards, checkpoints)")


def test_2_the_shipped_stacks_say_as_before() -> None:
    from passprice.calibrate import calibrate, calibration_cautions, points
    from passprice.registry import find_root

    fitted = calibrate(find_root(REPO), "llamacpp-cuda-2405")
    assert points(fitted.fit.runs) == len(fitted.fit.runs) == 111
    assert calibration_cautions(fitted) == []


# --- 3. sweep --cards of 100,000 names looks up none of them as a file ------------------------------------------------


@pytest.mark.parametrize("output", [(), ("-o", "rows.csv")])
def test_3_many_card_names_are_not_looked_up_as_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        output: tuple[str, ...]) -> None:
    from passprice import files

    looked: list[Path] = []
    real = files.look

    def counted(path: Path, *rest: object, **named: object) -> object:
        looked.append(path)
        return real(path, *rest, **named)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "look", counted)
    monkeypatch.chdir(tmp_path)
    names = ",".join(f"c{i}" for i in range(100_000))
    result = invoke("sweep", "r1-qwen7b-h200", "--batches", "1", "--cards", names, *output)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (
        "passprice: error: sweep: 99,980 more serving and card names not looked up after 20 not found: correct these "
        "first")
    assert len(looked) < 1_000, len(looked)  # before: 100,000 and more, one a name (now about 400)
    assert not (tmp_path / "rows.csv").exists()


# --- 4. a routing record's scope of 1,001 names is said as five and a count ------------------------------------------

MEASURED = "facts/routing/qwen3-30b-a3b-measured.toml"
SERVING = "registry/servings/qwen3-30b-a3b-h200.toml"


def _wide_scope(tmp_path: Path) -> tuple[Path, list[str]]:
    import json

    root = copy_root(tmp_path)
    names = ["qwen3-30b-a3b-q4_k_m", *(f"n{i:04d}-" + "x" * 200 for i in range(1000))]
    record = root / MEASURED
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace('checkpoints = ["qwen3-30b-a3b-q4_k_m"]', f"checkpoints = {json.dumps(names)}"),
                      encoding="utf-8")
    assert 200_000 < record.stat().st_size < 256 * 1024
    serving = root / SERVING
    serving.write_text(serving.read_text(encoding="utf-8").replace('routing = "qwen3-30b-a3b-measured"\n', ""),
                       encoding="utf-8")
    return root, names


def _said(names: list[str]) -> str:
    return ", ".join([names[0], *(f"{n[:99]}…" for n in names[1:5])]) + " and 996 more"


def test_4_the_routed_refusal_names_five_of_the_scope(tmp_path: Path) -> None:
    root, names = _wide_scope(tmp_path)
    result = invoke("price", "qwen3-30b-a3b-h200", "--no-lock", root=root)
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert len(line) < 1_000, len(line)  # before: 208,423 characters
    assert line.endswith(f"registered here for 128 experts, 8 a token: qwen3-30b-a3b-measured (measured; for "
                         f"{_said(names)}), uniform (assumed; any checkpoint)"), line


def test_4_the_out_of_scope_refusal_names_five_and_json_every_one(tmp_path: Path) -> None:
    import json

    root, names = _wide_scope(tmp_path)
    args = ("price", "qwen3-30b-a3b-h200", "--checkpoint", "qwen3-30b-a3b-q4_0", "--routing", "qwen3-30b-a3b-measured",
            "--no-lock")
    result = invoke(*args, root=root)
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("passprice: refused: OutOfScope: routing record 'qwen3-30b-a3b-measured' applies to "
                           f"checkpoints {_said(names)} only ({MEASURED}: checkpoints), not 'qwen3-30b-a3b-q4_0'"), line
    assert len(line) < 2_000, len(line)
    document = json.loads(invoke(*args, "--json", root=root).stdout)
    assert document["applies_to"] == names


# --- 5. a measurement file's runs' problems: the first 20, the rest counted -----------------------------------------


def _unknown_cards(tmp_path: Path, runs: int) -> Path:
    root = copy_root(tmp_path)
    path = root / RUNS
    head, first = path.read_text(encoding="utf-8").split("\n[[run]]\n")[:2]
    one = re.sub(r'(?m)^note = .*$', "", first)
    out = []
    for i in range(runs):
        run = re.sub(r'(?m)^id = ".*"$', f'id = "r{i}"', one, count=1)
        out.append("\n[[run]]\n" + re.sub(r'(?m)^card = ".*"$', f'card = "nosuch{i}"', run, count=1))
    path.write_text(head + "\n" + "".join(out), encoding="utf-8")
    return root


def test_5_check_and_validate_list_20_of_a_files_runs_problems(tmp_path: Path) -> None:
    root = _unknown_cards(tmp_path, 400)
    counted = f"passprice: error: {RUNS}: and 380 more problems of its runs, not listed"
    for args in (("validate", "--stack", "llamacpp-cuda-2405"), ("check",)):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, result.output
        lines = result.stderr.splitlines()
        runs = [line for line in lines if line.startswith(f"passprice: error: {RUNS}: run.")]
        assert [line.split(": ")[3] for line in runs] == [f"run.{i}.card" for i in range(20)], args
        assert runs[0].startswith(f"passprice: error: {RUNS}: run.0.card: card 'nosuch0': not found in facts/cards")
        assert counted in lines, args  # before: 400 lines, one a run
    assert len(invoke("validate", "--stack", "llamacpp-cuda-2405", root=root).stderr.splitlines()) == 21


def test_5_twenty_are_listed_whole() -> None:
    from passprice.measurements import first_run_problems

    lines = [f"x.toml: run.{i}.card: no" for i in range(20)]
    assert first_run_problems({"x": lines}, "registry/measurements") == lines
    assert first_run_problems({"x": [*lines, "x.toml: run.20.card: no"]}, "registry/measurements") == [
        *lines, "registry/measurements/x.toml: and 1 more problems of its runs, not listed"]


# --- 6. stored excerpts whose names fold together ---------------------------------------------------------------------


def test_6_excerpts_whose_names_fold_together_fail_check(tmp_path: Path) -> None:
    import shutil
    import unicodedata

    root = copy_root(tmp_path)
    excerpts = root / "sources" / "excerpts"
    shutil.copy(excerpts / "cite70-excerpt.txt", excerpts / "CITE70-excerpt.txt")
    record = root / "sources" / "gpu-container-handbook-routing-derisk.toml"
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("sources/excerpts/cite70-excerpt.txt", "sources/excerpts/CITE70-excerpt.txt"),
                      encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output  # before: exit 0, "all holds"
    assert result.stderr.splitlines() == [
        "passprice: error: sources/excerpts: 'CITE70-excerpt.txt', 'cite70-excerpt.txt': names that differ only by "
        "case or Unicode normalization (they show alike, and are one file on macOS and Windows): rename all but one"]
    (excerpts / "CITE70-excerpt.txt").unlink()
    record.write_text(text, encoding="utf-8")
    name = unicodedata.normalize("NFD", "notes-é.txt")
    (excerpts / name).write_bytes(b"x")
    (excerpts / unicodedata.normalize("NFC", name)).write_bytes(b"y")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.splitlines()) == 1 and "names that differ only by case or Unicode normalization" in (
        result.stderr), result.stderr
