"""What session 11's README-only walkthrough tripped on, each kept as a test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO as REPO_ROOT
from cli_helpers import bad, copy_root, invoke


@pytest.mark.parametrize("memo_off", [False, True])
def test_a_lock_that_does_not_reproduce_keeps_its_status_when_the_reader_leaves_the_pipe(
    tmp_path: Path, memo_off: bool
) -> None:
    # `passprice reproduce locks/r1-qwen7b-h200.lock.toml 2>&1 | head -8` exited 0 on 3 of 4 tries with the lock's
    # checkpoint entry moved away (1 read in full): the report was printed before its verdict was recorded, and a
    # reader gone from the pipe ended the command with status 0, so CI with pipefail passed it.
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    entry.rename(tmp_path / entry.name)
    full = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert full.exit_code == 1, full.output
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache")}
    if memo_off:
        env["PASSPRICE_NO_MEMO"] = "1"
    for _ in range(2):  # the second run is the memo's to answer, when it may
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first byte
        try:
            done = subprocess.run(
                [sys.executable, "-c", "import sys; from passprice.entry import main; sys.exit(main())", "--root",
                 str(root), "reproduce", "locks/r1-qwen7b-h200.lock.toml"],
                stdout=write, stderr=write, env=env, timeout=120, check=False,
            )
        finally:
            os.close(write)
        assert done.returncode == 1, done


@pytest.mark.parametrize(
    ("word", "name"),
    [("TTFT", "TTFT"), ("makespan", "makespan"), ("static", "static batching"), ("continuous", "continuous batching"),
     ("drift", "drift"), ("speedup", "speedup"), ("prefix hits", "prefix hits"),
     ("waited for memory", "waited for memory"), ("limit/meas", "limit/meas"), ("emitted/pass", "emitted/pass"),
     ("holds on", "fixed"), ("× limit", "stack"), ("fixed", "fixed"), ("seed", "seed"),
     # walkthrough 2: the words of rests on, audit --stack, calibrate, simulate, diff and reproduce
     ("routing.hot_share", "routing"), ("hot set", "routing"), ("stack.share.read", "share.*"),
     ("overhead.layer", "fixed"), ("terms.serial", "terms.serial"), ("in sample", "held out"),
     ("leave one card out", "held out"), ("Mcycle", "MAC"), ("chunk", "chunk"), ("peak held", "peak held"),
     ("sequences a step", "peak held"), ("weakened", "weakened"), ("to verify", "weakened"),
     ("recorded", "price moved"), ("to re-pin", "price moved"), ("asks another question", "price moved"),
     ("content", "content"), ("reproduces exactly", "reproduces exactly"), ("first moved", "reproduces exactly")],
)
def test_every_word_simulate_speculate_validate_and_a_stack_print_is_explained(word: str, name: str) -> None:
    # The tour says `passprice explain` covers any word an output uses; these words of simulate, speculate,
    # validate, compare --stack and price --stack were refused ("is not a term passprice defines").
    result = invoke("explain", word)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{name}: ")


def test_the_words_are_the_ones_the_outputs_print() -> None:
    simulate = invoke("simulate", "r1-qwen7b-h200", "--synthetic", "50", "--seed", "7", "--rate", "200")
    assert simulate.exit_code == 0, simulate.output
    for label in ("TTFT p50", "makespan", "static", "continuous", "waited for memory", "prefix hits"):
        assert label in simulate.stdout
    speculate = invoke("speculate", "qwen35-27b-h200-mtp", "--tokens", "1..2")
    assert "speedup  emitted/pass" in speculate.stdout
    validate = invoke("validate", "--stack", "llamacpp-cuda-2405")
    assert "limit/meas" in validate.stdout


def test_a_renamed_checkpoint_entry_file_is_named_where_the_pinned_content_may_be(tmp_path: Path) -> None:
    # Renaming the lock's checkpoint entry file made reproduce say "no entry of the registry holds the pinned
    # content", while listing the renamed entry as registered: the renamed file does not read (its entry.name is no
    # more its file's name), which only `check` said.
    root = copy_root(tmp_path)
    folder = root / "registry" / "checkpoints"
    (folder / "deepseek-r1-distill-qwen-7b-q4_k_m.toml").rename(folder / "renamed-r1.toml")
    result = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    # walkthrough 21: said once, in one line naming the old name, the file and what to do (test_newcomer_21)
    assert result.stdout.splitlines()[1] == (  # its entry here, misnamed: not "is gone" (tests/test_fix146.py)
        "  cannot be reproduced here: the pinned checkpoint deepseek-r1-distill-qwen-7b-q4_k_m's entry is here, its "
        "file renamed and its [entry] name not, so it does not read (checkpoint, below: the file and what to do)")
    assert ("    checkpoint     deepseek-r1-distill-qwen-7b-q4_k_m: no entry of that name; "
            "registry/checkpoints/renamed-r1.toml still names its entry deepseek-r1-distill-qwen-7b-q4_k_m") in (
        result.stdout)


def test_the_fact_commands_on_a_routing_record_or_stack_say_to_edit_its_file(tmp_path: Path) -> None:
    # Walkthrough 2 (session 11): `fact set q3-guess hot_share …` said "card 'q3-guess': not found …; q3-guess is a
    # registered routing record, not a card" and nothing of what to do instead.
    args = ("--value", "0.8", "--unit", "1", "--provenance", "estimated", "--source", "uniform-routing-assumption",
            "--locator", "a guess for this test")
    routing = REPO_ROOT / "facts" / "routing" / "uniform.toml"
    assert bad("fact", "set", "uniform", "hot_share", *args) == [
        f"passprice: error: uniform: a routing record ({routing}), not a card: the fact commands edit cards and "
        "drafting methods (`passprice fact show uniform` reads its facts, and with --history when each changed); "
        "edit the record's file by hand (its facts are tables of value, unit, provenance, source and locator), then "
        "run passprice check"
    ]
    # Walkthrough 19: `fact show` reads a routing record's or a stack's facts (test_newcomer_19); walkthrough 21:
    # --history too (test_newcomer_21). `fact set` still refuses a stack, naming calibrate.
    stack = bad("fact", "set", "llamacpp-cuda-2405", "share.read", *args)
    assert stack[0].endswith("then run passprice check; passprice calibrate --stack rewrites a stack's fitted facts")


def test_calibrate_says_what_its_fit_cannot_tell(tmp_path: Path) -> None:
    # Walkthrough 2 (session 11): a stack with 2 runs on one card and one checkpoint fitted 8 facts, "in sample
    # 0.0 %", and wrote them as derived facts without a word.
    import json

    from passprice.calibrate import calibrate, calibration_cautions
    from passprice.registry import find_root

    lmdeploy = calibrate(find_root(REPO_ROOT), "lmdeploy-turbomind-2312")  # its runs measured one card
    assert {r.card for r in lmdeploy.fit.runs} == {"a100_sxm4_80gb"}
    assert calibration_cautions(lmdeploy) == [
        "every run is of one card: no held-out check was possible, so nothing says how these facts price another "
        "card; add runs of others before trusting them there"
    ]
    assert calibration_cautions(calibrate(find_root(REPO_ROOT), "llamacpp-cuda-2405")) == []  # 111 runs, 5 cards
    shown = invoke("calibrate", "--stack", "lmdeploy-turbomind-2312", "--dry-run")
    assert shown.exit_code == 0, shown.output
    said = calibration_cautions(lmdeploy)[0]
    assert shown.stderr == f"passprice: warning: calibrate lmdeploy-turbomind-2312: {said}\n"
    data = json.loads(invoke("calibrate", "--stack", "lmdeploy-turbomind-2312", "--dry-run", "--json").stdout)
    assert data["cautions"] == calibration_cautions(lmdeploy)
    # two of its runs, as the walkthrough's own stack had: fewer runs than the facts they fit
    import attrs

    kept = lmdeploy.fit.runs[:2]
    two = attrs.evolve(lmdeploy, fit=attrs.evolve(lmdeploy.fit, runs=kept), errors={r.id: 0.0 for r in kept})
    facts = len(lmdeploy.fit.fitted) + 1
    assert calibration_cautions(two)[0] == (  # slip52: said as the fit matching them (in-sample 0.0 %)
        f"2 runs fit {facts} facts (terms.serial included): the fit matches every run (in-sample error 0.0 %), as so "
        "few runs let it, so its in-sample error says nothing; measure more runs (other batches, positions, cards, "
        "checkpoints)"
    )


def test_simulate_says_when_the_trace_s_shared_prefixes_are_not_shared(tmp_path: Path) -> None:
    # Walkthrough 2 (session 11): a trace's prefix_id/prefix_tokens were ignored with a contiguous cache, the engine
    # line saying only "prefix caching off".
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"arrival_s": 0, "prompt_tokens": 300, "output_tokens": 8, "prefix_id": "s", '
                     '"prefix_tokens": 200}\n' * 2, encoding="utf-8")
    engines = {}
    for how in (("--contiguous",), ("--kv-page", "16", "--no-prefix-caching"), ("--kv-page", "16")):
        result = invoke("simulate", "r1-qwen7b-h200", "--trace", str(trace), *how)
        assert result.exit_code == 0, result.output
        engines[how[0] if len(how) < 3 else how[2]] = next(
            line for line in result.stdout.splitlines() if line.startswith("  engine"))
    assert engines["--contiguous"].endswith(
        "· prefix caching off (the trace's shared prefixes are prefilled and held by each request: a contiguous "
        "cache shares none; --kv-page N to share them)")
    assert engines["--no-prefix-caching"].endswith(
        "· prefix caching off (the trace's shared prefixes are prefilled and held by each request: "
        "--no-prefix-caching)")
    assert engines["--kv-page"].endswith("· prefix caching on")


def test_a_lock_is_not_written_on_a_citation_whose_source_record_does_not_validate(tmp_path: Path) -> None:
    # Walkthrough 2 (session 11): price, new-serving and lock took a routing record citing sources/my-notes.toml
    # with kind = "notes" and no url, date or publisher; only `check` refused it, after the lock was written.
    root = copy_root(tmp_path)
    (root / "sources" / "my-notes.toml").write_text('[source]\nkind = "notes"\ntitle = "my notes"\n',
                                                    encoding="utf-8")
    record = root / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace('source = "gpu-container-handbook-routing-derisk"', 'source = "my-notes"'),
                      encoding="utf-8")
    out = root / "locks" / "x.lock.toml"
    lines = bad("lock", "qwen3-30b-a3b-h200", "-o", str(out), root=root)
    assert not out.exists()
    # Session 13: refused where the routing record is read for pricing (price, new-serving and lock alike), one line
    # for the record naming the citing file and key, the record's file and every problem of it.
    assert len(lines) == 1
    assert lines[0].startswith(
        f"passprice: error: {record}: hot_experts.source: source 'my-notes' does not validate: "
        "sources/my-notes.toml: "  # relative to the registry, as check names it (left29b)
    )
    assert "source.read: missing (required)" in lines[0]
    assert "source.kind: 'notes' is not allowed here (one of 'datasheet', 'whitepaper', 'paper', " in lines[0]
    bad("price", "qwen3-30b-a3b-h200", root=root, says=f"{record}: hot_experts.source: source 'my-notes' does not")
