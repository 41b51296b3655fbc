"""Slip 47 (issue 13: can a change slip past a lock or a review?), each reproduced first in a scratch clone of this
checkout (a commit adding ``locks/r1-stack.lock.toml``, then the edit committed and reviewed as CI reviews it, ``diff
HEAD~1 HEAD``), then here in a copy of passprice's own registry (:func:`passprice.registry.embedded_root`).

1. A measured run's ``build``, ``test`` and ``date`` rewritten (its citation and tokens/s kept): the review read "no
   fact changed; 1 other file changed; no lock affected; 9 locks unaffected", r1-stack (made under the stack fitted
   from the run) among them, and ``check`` (``--frozen`` too), ``reproduce`` and ``price --lock`` said nothing (exit
   0). They name the run a stack is fitted from: each now asked to verify in its source as a changed locator is, the
   lock under the stack counted to verify; a changed ``note`` is listed, not asked (neither the fit nor a price reads
   it). No lock pins a run's identity (a lock pins the stack's fitted facts and each run's id and figure), so check,
   reproduce and price --lock still say nothing of it: the review is where it is asked.
2. A routing record resting on a measured run: no such link (a routing fact's derivation inputs are a fact of the
   record, a source's figure or a constant, never a run), so nothing to test beyond the schema refusing one.
3. A checkpoint entry's ``imported_by`` (the passprice version that wrote the entry): kept unpinned and unprinted by
   audit, as DESIGN.md (Locks, slip 47) says why; the review asks it as a claim, the locks priced from the entry
   counted to verify.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import REPO, invoke
from test_pin_27 import ENTRY, _copy
from test_slip_34 import renderings  # one in-process review rendered per format
from test_slip_46 import RUNS, _stack_locked

RUN = "xd3.h100_pcie_80gb.8b-q4km.tg512"
WHERE = ("xiongjiedai-gpu-benchmarks: LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: llama-bench table, row '| llama 8B "
         "Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 ± 0.80 |'")
KEPT = 'build = "e8496488 (2843)"\ntest = "tg512"\nnote = "± 0.80'


def _edited(root: Path, new: str, old: str = KEPT) -> None:
    path = root / RUNS
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def _review(base: Path, head: Path) -> tuple[list[str], dict[str, object], str]:
    # one review (``passprice diff BASE HEAD``) as text, JSON and markdown
    status, (text, as_json, markdown) = renderings(REPO, "text", "json", "markdown", base=str(base), head=str(head))
    assert status == 0, text
    review = json.JSONDecoder().raw_decode(as_json)[0]
    return text.splitlines(), review, markdown


def test_1_a_runs_build_test_and_date_rewritten_are_to_verify(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _edited(head, 'build = "deadbeef (2999)"\ntest = "tg128"\ndate = "2020-01-01"\nnote = "± 0.80')
    lines, review, markdown = _review(base, head)
    # before: "no fact changed; 1 other file changed; no lock affected; 9 locks unaffected", r1-stack among them
    assert lines[1] == ("no fact changed; 1 other file changed; 1 measured run to verify in its source; no lock "
                        "affected; 2 locks priced under a stack fitted from measured runs to verify; 9 locks "
                        "unaffected")
    asked = (f"1 measured run to verify in its source: {RUN}'s build, test and date changed (build e8496488 (2843) → "
             f"deadbeef (2999); test tg512 → tg128; date none → 2020-01-01) but its citation did not: does {WHERE} "
             "state 145.55 tokens/s for that build, test and date?")
    assert f"  {RUNS} (changed): {asked}" in lines
    assert review["runs_to_verify"] == {RUNS: 1}
    assert review["on_recited_runs"] == ["r1-qwen7b-h200-llamacpp", "r1-stack"]
    assert review["added_records"] == {RUNS: asked}  # type: ignore[comparison-overlap]
    assert ("⚠️ 2 locks priced under a stack fitted from measured runs to verify (other files above): "
            "`r1-qwen7b-h200-llamacpp`, `r1-stack`" in markdown.splitlines())
    assert "for that build, test and date?" in markdown
    # No lock pins a run's identity: check, reproduce and price --lock say nothing (DESIGN.md, Measured runs).
    assert invoke("check", "--frozen", root=head).exit_code == 0
    assert "deadbeef" not in invoke("reproduce", "locks/r1-stack.lock.toml", root=head).stdout


def test_1_a_runs_date_alone_and_beside_its_figure_is_asked(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _edited(head, 'build = "e8496488 (2843)"\ntest = "tg512"\ndate = "2024-05-09"\nnote = "± 0.80')
    lines, _, _ = _review(base, head)
    assert (f"  {RUNS} (changed): 1 measured run to verify in its source: {RUN}'s date changed (date none → "
            f"2024-05-09) but its citation did not: does {WHERE} state 145.55 tokens/s for that date?") in lines
    _edited(head, "tokens_per_s = 150.55\nlocator", old="tokens_per_s = 145.55\nlocator")
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output  # the stack's fit is stale on HEAD (check fails it, as before)
    lines = result.stdout.splitlines()
    # (then its quote's MISMATCH and its price on HEAD: tests/test_rev54.py)
    assert any(line.startswith(
        f"  {RUNS} (changed): 1 measured run to verify in its source: {RUN}'s tokens/s moved (145.55 → 150.55 "
        "tokens/s, +3.435 %; date none → 2024-05-09) but its citation did not, and the locator quotes 145.55: "
        f"{WHERE}; ❌ MISMATCH: ") for line in lines)


def test_1_a_runs_note_rewritten_is_listed_not_asked(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _edited(head, 'build = "e8496488 (2843)"\ntest = "tg512"\nnote = "± 0.10')
    lines, review, _ = _review(base, head)
    # before: the same summary, the file listed bare ("registry/measurements/…llamabench.toml (changed)")
    assert lines[1] == "no fact changed; 1 other file changed; no lock affected; 11 locks unaffected"
    listed = (f"1 run note changed (listed: neither the fit nor a price reads a note): {RUN}'s note changed: ± [0.80 "
              "→ 0.10] (llama-bench). Priced 15-20 % too …")
    assert f"  {RUNS} (changed): {listed}" in lines
    assert review["runs_to_verify"] == {}
    assert review["on_recited_runs"] == []
    assert review["added_records"] == {RUNS: listed}  # type: ignore[comparison-overlap]


def test_2_a_routing_fact_cannot_rest_on_a_measured_run(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = path.read_text(encoding="utf-8")
    old = 'derivation.inputs.hot = { value = 58, unit = "1", locator'
    assert text.count(old) == 1
    path.write_text(text.replace(old, 'derivation.inputs.hot = { value = 58, unit = "1", run = "r", locator'),
                    encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "passprice: error: facts/routing/qwen3-30b-a3b-measured.toml: hot_experts.derivation.inputs.hot: unknown key "
        "'run'; the keys here are constant, fact, locator, source, unit, value"]


def test_3_an_entrys_imported_by_is_asked_by_the_review_and_pinned_nowhere(tmp_path: Path) -> None:
    import shutil

    base = _copy(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    path = head / ENTRY
    text = path.read_text(encoding="utf-8")
    assert text.count('imported_by = "passprice 0.1.0"\n') == 1
    path.write_text(text.replace('imported_by = "passprice 0.1.0"\n', 'imported_by = "passprice 9.9"\n'),
                    encoding="utf-8")
    lines, review, _ = _review(base, head)
    assert lines[1] == ("no fact changed; 1 checkpoint entry changed; no lock affected; 4 locks priced from a "
                        "checkpoint entry whose claims changed, to verify; 6 locks unaffected")
    assert ("  claims changed, which the pricer does not read (re-import from the GGUF file to confirm them): "
            "entry.imported_by passprice 0.1.0 → passprice 9.9") in lines
    assert review["on_changed_claims"] == ["r1-qwen7b-h200", "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp",
                                          "r1-qwen7b-mi300x-int8kv"]  # left53: by name
    # not pinned (the tool that wrote the entry, not what it describes): check --frozen holds, audit shows nothing
    assert invoke("check", "--frozen", root=head).exit_code == 0
    audited = invoke("audit", "locks/r1-qwen7b-h200.lock.toml", root=head)
    assert audited.exit_code == 0, audited.output
    assert "imported" not in audited.stdout.replace("the name it was imported from", "")
