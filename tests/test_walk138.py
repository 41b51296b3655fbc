"""A new user's findings (README only, ``pip install .``) on the three uses, each reproduced here.

1. ``price r1-qwen7b-h200 --position 4096`` of a 4,096 limit was priced, reading and writing 4,097 × 57,344 B a
   sequence (a pass at position p writes row p: one past the limit), and a paged sweep at that position held 4,104
   positions a sequence (the half page added to pages exactly full). A position at its limit is refused
   (``BadContexts``), and a paged class holds at most the whole pages its limit needs.
2. A changed fact's quote NOT FOUND in its stored excerpt read "⚠️ … 1 to verify", exit 0: it is counted in the
   summary and fails the review.
3. ``audit --source``: "not checked (4 of 4 quoted spans found …; its locator quotes nothing)" now says the
   derivation's spans were checked and only the fact's own locator quotes nothing.
4. A hand-edited lock beside an invalid card: the review said "HEAD fails passprice check (1 problem)" where
   ``check`` said "2 problems", and ``check`` printed the locks it did not judge as "FAILS" under "3 of 9 locks FAIL".
5. A checkpoint entry renamed (file and ``[entry] name``): ``price`` said "copy … into registry/checkpoints", which
   registers it twice; ``reproduce``'s serving line said only "not compared (today's files do not read)".
6. ``reproduce`` of a lock whose pinned checkpoint is gone said "does NOT reproduce", as of a price that differs.
7. ``streams.read`` 0.9333 → 0.85 under its quote of Dot 4.48 TB/s (its derivation removed) was asked only whether
   the place states it: 4.48 / 4.8 TB/s is 0.9333, which the review now works out.
8. Outside a registry, an OutOfScope refusal named ``facts/routing/….toml`` bare, not "the built-in registry's …".
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

#: Bytes one cached position takes in r1-qwen7b (28 layers × 4 KV heads × 128 × K and V × 2 B) and in
#: qwen3-30b-a3b (48 layers × 4 × 128 × 2 × 2 B).
R1_POSITION = 28 * 4 * 128 * 2 * 2
QWEN3_POSITION = 48 * 4 * 128 * 2 * 2


def _price(*args: str) -> dict[str, object]:
    result = invoke("price", *args, "--json")
    assert result.exit_code == 0, result.output
    said: dict[str, object] = json.loads(result.stdout)
    return said


# --- (1) a position at its limit -------------------------------------------------------------------------------------


def test_1_a_position_at_its_limit_is_refused_by_name() -> None:
    assert R1_POSITION == 57_344
    result = invoke("price", "r1-qwen7b-h200", "--position", "4096")
    assert result.exit_code == 1, result.output  # was 0, 234.9 MB a sequence: 4,097 positions
    assert result.stderr.splitlines()[-1] == (
        "passprice: refused: BadContexts: bad context mix: position 4096 is not below its limit 4096: a pass at a "
        "position writes that position's row, and a sequence allowed 4096 positions holds rows 0 to 4095: raise "
        "--limit or lower --position")
    refused = json.loads(invoke("price", "r1-qwen7b-h200", "--position", "4096", "--json").stdout)
    assert refused["refusal"] == "BadContexts"
    # its last position reads 4,095 cached positions and writes its own: 4,096 in all, the limit
    assert _price("r1-qwen7b-h200", "--position", "4095")["sequence_bytes"] == 4096 * R1_POSITION


def test_1_a_paged_class_holds_at_most_the_pages_its_limit_needs() -> None:
    low = _price("qwen3-30b-a3b-h200", "--position", "2047")
    last = _price("qwen3-30b-a3b-h200", "--position", "4095")
    near = _price("qwen3-30b-a3b-h200", "--position", "4090")
    assert last["sequence_bytes"] == 4096 * QWEN3_POSITION
    # 64 sequences: 2,047 + 8 positions held at 2,047, 256 whole pages of 16 (4,096) at 4,095, not 4,103
    assert last["held_bytes"] - low["held_bytes"] == 64 * QWEN3_POSITION * (4096 - 2055)  # type: ignore[operator]
    assert near["held_bytes"] == last["held_bytes"]  # 4,090 + 8 past 4,096 too
    # the shipped lock's price is unchanged: position 2,048 of 4,096 holds 2,056 a sequence, as it did
    assert invoke("reproduce", "qwen3-30b-a3b-h200").exit_code == 0


def _sweep(*positions: int) -> dict[float, dict[str, str]]:
    result = invoke("sweep", "qwen3-30b-a3b-h200", "--positions", ",".join(map(str, positions)), "--batches", "64")
    assert result.exit_code == 0, result.output
    return {float(row["position"]): row for row in csv.DictReader(io.StringIO(result.stdout))}


def test_1_a_sweep_refuses_a_position_at_its_limit_and_holds_what_price_holds() -> None:
    held = _price("qwen3-30b-a3b-h200", "--position", "4095")["held_bytes"]
    exact = _sweep(4095, 4096)  # the exact path (64 positions or fewer)
    columns = _sweep(*range(0, 64 * 65, 64), 4095)  # the column path (more than 64 positions: 0 … 4,096)
    assert len(columns) > 64
    for rows in (exact, columns):
        assert rows[4096.0]["refusal"] == "BadContexts"  # was priced, 4,104 positions held a sequence
        assert float(rows[4095.0]["held_bytes"]) == held


def test_1_a_serving_file_at_its_limit_is_bad_input_naming_the_key(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / "registry/servings/r1-qwen7b-h200.toml"
    text = path.read_text(encoding="utf-8")
    assert "position = 2048" in text
    path.write_text(text.replace("position = 2048", "position = 4096", 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert ("registry/servings/r1-qwen7b-h200.toml: contexts.0.position: 4096 is not below the class's limit 4096: "
            "a pass at a position writes that position's row, and a sequence allowed 4096 positions holds rows 0 to "
            "4095") in result.stderr, result.stderr


# --- (2) a changed fact's quote NOT FOUND in its stored text ---------------------------------------------------------

CARD = "facts/cards/h200_sxm_141gb.toml"
QUOTE = "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry (no code of its own: priced by the running package), its first commit the checkout's."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def test_2_a_quote_not_found_is_counted_and_fails_the_review(repo: Path) -> None:
    card = repo / CARD
    card.write_text(card.read_text(encoding="utf-8").replace(QUOTE, "'GPU Memory Bandwidth 4.9TB/s 4.9TB/s'", 1),
                    encoding="utf-8")
    _git(repo, "commit", "-qam", "recite")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output  # was 0 once the locks were re-locked: "⚠️ … 1 to verify"
    lines = result.stdout.splitlines()
    assert lines[0].startswith("❌ passprice diff: ")
    assert lines[1].startswith("1 fact changed in 1 file, 1 to verify in its source; 1 quote NOT FOUND in its stored "
                               "text; "), lines[1]
    assert ("passprice: refused: 1 quote NOT FOUND in its stored text (h200_sxm_141gb:memory.bandwidth): the stored "
            "excerpt is the registry's record of the words read; correct the quote to the document's words, or add "
            "the lines it was read from to the source's stored excerpt and re-pin it (`passprice audit --source "
            "nvidia-h200-product-page` checks each)") in result.stderr.splitlines(), result.stderr
    said = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    assert said["exit_status"] == 1
    assert "1 quote NOT FOUND in its stored text" in said["summary"]
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout
    assert markdown.startswith("❌ **passprice diff**") and "1 quote NOT FOUND in its stored text" in markdown


# --- (3) a derivation's spans found, its own locator quoting nothing ------------------------------------------------


def test_3_audit_says_the_derivation_s_spans_were_checked_and_only_the_locator_quotes_nothing() -> None:
    result = invoke("audit", "--source", "azure-ai-benchmarking-guide")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # was: "not checked (4 of 4 quoted spans found in the stored text; its locator quotes nothing)"
    assert ("  b200:streams.rewrite: not checked (its derivation's figures checked: 4 of 4 quoted spans found in the "
            "stored text; only its own locator quotes nothing)") in lines
    assert "  sn40l:streams.rewrite: not checked (its locator quotes nothing)" in lines  # no derivation: as it was
    checks = {f"{f['record']}:{f['path']}": f["quote_check"]
              for f in json.loads(invoke("audit", "--source", "azure-ai-benchmarking-guide", "--json").stdout)["facts"]}
    assert checks["b200:streams.rewrite"]["state"] == "not checked"
    assert (checks["b200:streams.rewrite"]["spans"], checks["b200:streams.rewrite"]["found"]) == (4, 4)


# --- (4) one count of HEAD's problems ---------------------------------------------------------------------------------

H100 = "facts/cards/h100_sxm5_80gb.toml"
LOCK = "locks/r1-qwen7b-h200.lock.toml"


def _break_card_and_lock(root: Path) -> None:
    card = root / H100
    card.write_text(card.read_text(encoding="utf-8") + "\nbroken = \n", encoding="utf-8")
    lock = root / LOCK
    text = lock.read_text(encoding="utf-8")
    assert "tokens_per_s = 996.0966124437687" in text
    lock.write_text(text.replace("tokens_per_s = 996.0966124437687", "tokens_per_s = 1100.0", 1), encoding="utf-8")


def test_4_check_and_the_review_count_the_same_problems(repo: Path) -> None:
    _break_card_and_lock(repo)
    checked = invoke("check", root=repo)
    assert checked.exit_code == 2, checked.output
    lines = checked.stdout.splitlines()
    # was: "…, 10 locks): 2 problems (2 on stderr); 3 of 9 locks FAIL", each of the 3 then "FAILS"
    assert lines[0].endswith(", 10 locks): 2 problems (2 on stderr); 3 of 9 locks not judged (1 more lock file does "
                             "not read, on stderr)"), lines[0]
    assert "lock gemma3-270m-h100 (locks/gemma3-270m-h100.lock.toml, locks serving gemma3-270m-h100): not judged" \
        in lines
    assert not [line for line in lines if line.endswith("): FAILS")]
    assert len(checked.stderr.splitlines()) == 2
    _git(repo, "commit", "-qam", "broken")
    review = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert review.exit_code == 2, review.output
    said = review.stdout.splitlines()
    # was: "HEAD fails passprice check (1 problem)", the lock's problem not counted
    assert "HEAD fails passprice check (2 problems):" in said
    assert "; HEAD fails passprice check (2 problems); " in said[1], said[1]
    at = said.index("HEAD fails passprice check (2 problems):")
    assert said[at + 1].startswith(f"  {H100}: not valid TOML: ")
    # the lock's line is listed under its file, once (under both before, tests/test_bound147.py), and counted here
    assert said[at + 2] == f"  and 1 problem listed above, under the lock file that does not read ({LOCK})"
    assert sum(line.strip().startswith(f"{LOCK}: lock.digest: the lock's contents do not match its digest ")
               for line in said) == 1


# --- (5) a checkpoint entry renamed ---------------------------------------------------------------------------------

R1 = "deepseek-r1-distill-qwen-7b-q4_k_m"


def _rename_entry(root: Path) -> None:
    old = root / "registry/checkpoints" / f"{R1}.toml"
    text = old.read_text(encoding="utf-8")
    assert f'name = "{R1}"' in text
    (root / "registry/checkpoints/r1.toml").write_text(text.replace(f'name = "{R1}"', 'name = "r1"', 1),
                                                       encoding="utf-8")
    old.unlink()


def test_5_a_renamed_entry_is_named_not_copied_again(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _rename_entry(root)
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 2, result.output
    # was: "…; copy /…/registry/checkpoints/deepseek-…toml into registry/checkpoints to use it here"
    assert (f"{R1} is a checkpoint of the facts passprice ships, and this registry holds its header under another "
            "name: registry/checkpoints/r1.toml (the same header sha256; renamed?): name r1 here instead (copying "
            f"{R1} in would register the same checkpoint twice)") in result.stderr, result.stderr
    assert "into registry/checkpoints to use it here" not in result.stderr
    lines = invoke("reproduce", "r1-qwen7b-h200", root=root).stdout.splitlines()
    # was: "serving        not compared (today's files do not read)"
    assert (f"    serving        not compared: serving r1-qwen7b-h200 names checkpoint {R1}, which does not read "
            'today; entry r1 holds the pinned content: point the serving at it (checkpoint = "r1" in its file)') \
        in lines, lines


# --- (6) a pinned checkpoint gone ------------------------------------------------------------------------------------


def test_6_a_gone_checkpoint_cannot_be_reproduced_here(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "registry/checkpoints" / f"{R1}.toml").unlink()
    result = invoke("reproduce", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 1, result.output  # as before: the lock is not reproduced
    verdict = result.stdout.splitlines()[1]
    assert verdict.startswith(f"  cannot be reproduced here: the pinned checkpoint {R1} "), verdict  # was: does NOT
    assert "does NOT reproduce" not in result.stdout
    assert ("passprice: refused: lock r1-qwen7b-h200 cannot be reproduced here: no entry of this registry holds its "
            "pinned checkpoint, so no price is made to compare with the recorded one") in result.stderr.splitlines()


# --- (7) a ratio of a quoted figure to the card's bandwidth -----------------------------------------------------------

H200 = "facts/cards/h200_sxm_141gb.toml"
DOT = "row '| Dot   | 4.48              |' in TB/s"
READ = ('value = 0.9333\nunit = "1"\nprovenance = "measured"\nsource = "azure-ai-benchmarking-guide"\n'
        'locator = "Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6), HBM Bandwidth table '
        f'(BabelStream): {DOT}"\n')
DERIVATION = ('derivation.formula = "dot / bandwidth"\nderivation.digits = 4\n'
              'derivation.inputs.dot = { value = 4.48, unit = "TB/s", locator = "Azure_Results/ND_H200_v5_results.md, '
              f'HBM Bandwidth table (BabelStream): {DOT}" }}\n'
              'derivation.inputs.bandwidth = { fact = "memory.bandwidth", value = 4.8, unit = "TB/s" }\n')
SAID = ("the locator quotes 4.48 TB/s, which over the card's memory.bandwidth (4.8 TB/s) is 0.9333, the ratio its "
        "{named} names, not 0.85")


def _edit(root: Path, old: str, new: str) -> None:
    path = root / H200
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _to_verify(root: Path) -> str:
    facts = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=root).stdout)["files"][0]["facts"]
    (read,) = [f for f in facts if f["path"] == "streams.read"]
    said: str = read["to_verify"]
    return said


def test_7_a_ratio_moved_under_its_quoted_figure_is_worked_out(repo: Path) -> None:
    assert READ in (repo / H200).read_text(encoding="utf-8") and DERIVATION in (repo / H200).read_text("utf-8")
    _edit(repo, READ, READ.replace("0.9333", "0.85"))
    _edit(repo, DERIVATION, "")
    _git(repo, "commit", "-qam", "0.85, its derivation removed")
    said = _to_verify(repo)
    assert said.endswith("state it, measured?; " + SAID.format(named="derivation")), said  # was: the question alone
    text = invoke("diff", "HEAD~1", "HEAD", root=repo).stdout
    assert SAID.format(named="derivation") in text


def test_7_the_note_naming_the_ratio_is_enough(repo: Path) -> None:
    _edit(repo, DERIVATION, "")  # BASE: no derivation, the note names "measured rate / this file's memory.bandwidth"
    _git(repo, "commit", "-qam", "derivation removed")
    _edit(repo, READ, READ.replace("0.9333", "0.85"))
    _git(repo, "commit", "-qam", "0.85")
    said = _to_verify(repo)
    assert said == ("the value moved (0.9333 → 0.85) but its citation did not: " + SAID.format(named="note")
                    + ": azure-ai-benchmarking-guide: Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA "
                    "12.6), HBM Bandwidth table (BabelStream): row '| Dot   | 4.48              |' in TB/s"), said
    # was: "…but its citation did not: does azure-ai-benchmarking-guide: … say 0.85?"


def test_7_a_ratio_the_quote_gives_asks_nothing_more(repo: Path) -> None:
    _edit(repo, DERIVATION, "")
    _git(repo, "commit", "-qam", "derivation removed")
    _edit(repo, READ, READ.replace("0.9333", "0.9334"))  # 4.48 / 4.8 still, to 0.1 %
    _git(repo, "commit", "-qam", "0.9334")
    assert "over the card's memory.bandwidth" not in _to_verify(repo)


# --- (8) the built-in registry's file named so -----------------------------------------------------------------------


def test_8_out_of_scope_outside_a_registry_names_the_built_in_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from passprice.cli import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PASSPRICE_ROOT", raising=False)
    args = ["price", "--checkpoint", "qwen3-30b-a3b-q4_0", "--card", "h200_sxm_141gb", "--routing",
            "qwen3-30b-a3b-measured"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    # was: "(facts/routing/qwen3-30b-a3b-measured.toml: checkpoints)"
    assert ("applies to checkpoint qwen3-30b-a3b-q4_k_m only (the built-in registry's "
            "facts/routing/qwen3-30b-a3b-measured.toml: checkpoints), not 'qwen3-30b-a3b-q4_0'") in result.stderr
    said = json.loads(CliRunner().invoke(cli, [*args, "--json"]).stdout)
    assert said["refusal"] == "OutOfScope" and said["file"] == "facts/routing/qwen3-30b-a3b-measured.toml"
