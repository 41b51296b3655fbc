"""What session 37 left, each fixed with a test: ``audit --json`` carrying the stale-description notes the text audit
prints (walkthrough 49's routing record re-cited to another table row under its old title), …"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import invoke
from test_walk50 import _recited

READ = ("read names row 'narrow (single-domain Python)', which none of the facts above cites (they cite row "
        "'diverse (prose, code, math)'): does it still say how the source was read?")
TITLE = ("its title still says 'single-domain', 'Python' (of row 'narrow (single-domain Python)'), while its facts "
         "cite row 'diverse (prose, code, math)': does it still describe the record?")


@pytest.fixture(scope="module")
def recited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _recited(tmp_path_factory.mktemp("recited"))


def test_audit_json_and_text_carry_the_same_stale_descriptions(recited: Path) -> None:
    # Session 37: `audit` printed two "to verify" lines for walkthrough 49's re-cited routing record; `--json` had
    # neither. One list (audit.description_notes) now feeds the text, the markdown and --json.
    text = [x.strip() for x in invoke("audit", "qwen3-30b-a3b-h200", root=recited).output.splitlines()
            if x.strip().startswith("to verify: ")]
    assert text == [f"to verify: {READ}", f"to verify: {TITLE}"]
    data = json.loads(invoke("audit", "qwen3-30b-a3b-h200", "--json", root=recited).stdout)
    assert data["stale_descriptions"] == [
        {"record": "source", "id": "gpu-container-handbook-routing-derisk", "field": "read",
         "rows_named": ["narrow (single-domain Python)"], "rows_cited": ["diverse (prose, code, math)"], "note": READ},
        {"record": "routing", "id": "qwen3-30b-a3b-measured", "field": "title",
         "rows_named": ["narrow (single-domain Python)"], "rows_cited": ["diverse (prose, code, math)"],
         "note": TITLE},
    ]
    assert [f"to verify: {n['note']}" for n in data["stale_descriptions"]] == text  # the same findings, in order
    markdown = invoke("audit", "qwen3-30b-a3b-h200", "--format", "markdown", root=recited).output
    assert ("To verify:\n- ⚠️ source `gpu-container-handbook-routing-derisk`: " + READ) in markdown
    assert f"- ⚠️ routing record `qwen3-30b-a3b-measured`: {TITLE}" in markdown
    # the checkout's own record describes the row it cites: a stable, empty field
    assert json.loads(invoke("audit", "qwen3-30b-a3b-h200", "--json").stdout)["stale_descriptions"] == []


def test_check_says_a_reason_several_locks_share_once() -> None:
    # The case no registry file builds cheaply (check of a copy costs seconds; test_left42 checks one for real): a
    # reason opening with no file is named as today's files, and a lone lock's drift says "the same" of its floors.
    from passprice.check import CheckReport, LockStatus, unread_said

    why = "lock: serving: checkpoint: checkpoint 'l2q8': not found in registry/checkpoints"
    assert unread_said(why) == "today's files do not read"
    assert unread_said("facts/cards/a40.toml: memory.bandwidth: …") == "facts/cards/a40.toml does not read"

    def status(name: str, reason: str) -> LockStatus:
        return LockStatus(name, f"locks/{name}.lock.toml", True, (), False, f"today's files do not read: {reason}",
                          (), judged=False, unjudged=reason, reproduction="reproduces")

    report = CheckReport(3, (), (status("a", why), status("b", why), status("c", "x.toml: y")))
    lines = report.text(False).splitlines()
    assert lines[1] == f"locks not judged: 2 of 3 (a, b): today's files do not read: {why}"
    assert lines[2:8] == ["lock a (locks/a.lock.toml): not judged", "  reproduces", "  pricing model: same",
                          "  checkpoint: ", "  floors: not judged (today's files do not read, above)",
                          "  drift: not judged (the same)"]
    assert lines[-3:-1] == ["  floors: today's files do not read: x.toml: y", "  drift: not judged (the same)"]
    assert sum(why in line for line in lines) == 1


def test_a_csv_cell_keeps_a_paths_bytes_where_lines_for_people_escape_them(tmp_path: Path) -> None:
    # Session 37 left it open: the sweep's CSV wrote a checkpoint path holding U+202E raw. CSV is for programs and
    # keeps the bytes (README); the lines for people, which printed it raw too (price's title, sweep's --max-tpot
    # line), escape it as --json does.
    from cli_helpers import REPO

    header = tmp_path / "a\u202eb.gguf"
    header.write_bytes((REPO / "tests" / "data" / "qwen35-27b-like.header.gguf").read_bytes())
    out = tmp_path / "rows.csv"
    swept = invoke("sweep", "--checkpoint", str(header), "--cards", "h200_sxm_141gb", "--batches", "1,2",
                   "--positions", "512", "--max-tpot", "0.01", "-o", str(out))
    assert swept.exit_code == 0, swept.output
    cells = [line.split(",")[2] for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert cells == [str(header)] * 2  # the bytes, U+202E and all
    said = [line for line in swept.stderr.splitlines() if "best batch within TPOT" in line]
    assert len(said) == 1 and "\u202e" not in swept.stderr
    assert said[0].startswith(f"passprice: {tmp_path}/a\\u202eb.gguf on h200_sxm_141gb: best batch within TPOT")
    priced = invoke("price", "--checkpoint", str(header), "--card", "h200_sxm_141gb")
    assert priced.exit_code == 0 and "\u202e" not in priced.output
    assert priced.stdout.splitlines()[0] == f"{tmp_path}/a\\u202eb.gguf on h200_sxm_141gb (NVIDIA H200 SXM 141GB)"


def test_a_lock_cites_a_fact_re_cited_and_re_derived_both_ways() -> None:
    # tests/test_walk46.py reviews a real change (a bandwidth re-cited, its shares recomputed); here the other cases
    # of one fact, built from the H200 card's streams.read: derivation only, citation only, both, neither.
    from types import SimpleNamespace

    import attrs

    from cli_helpers import REPO
    from passprice.cards import load_card
    from passprice.derivations import Derivation
    from passprice.registry import Root
    from passprice.review.impacts import _lock_cite
    from passprice.review.rendering import _cites

    old = load_card(Root(REPO), "h200_sxm_141gb").facts()["streams.read"]
    assert isinstance(old.derivation, Derivation)
    inputs = tuple(attrs.evolve(i, amount=4.89) if i.fact else i for i in old.derivation.inputs)
    rederived = attrs.evolve(old, value=0.9162, amount=0.9162, derivation=attrs.evolve(old.derivation, inputs=inputs))
    recited = attrs.evolve(old, locator="p. 2, 'Dot 4.48'")
    both = attrs.evolve(rederived, locator="p. 2, 'Dot 4.48'")
    assert _lock_cite("streams.read", old, old) is None and _lock_cite("streams.read", None, old) is None
    said = {}
    for name, new in (("rederived", rederived), ("recited", recited), ("both", both)):
        cite = _lock_cite("streams.read", old, new)
        assert cite is not None
        said[name] = _cites(SimpleNamespace(cites=(cite,), fitted=(), routing_record=None))  # type: ignore[arg-type]
    formula = ("dot / bandwidth [dot 4.48 TB/s: azure-ai-benchmarking-guide, Azure_Results/ND_H200_v5_results.md, "
               "HBM Bandwidth table… '| Dot   | 4.48              |'…; bandwidth 4.89 TB/s: fact memory.bandwidth]")
    assert said == {"rederived": f"streams.read = {formula}",
                    "recited": "streams.read: azure-ai-benchmarking-guide, p. 2, 'Dot 4.48'",
                    "both": f"streams.read: azure-ai-benchmarking-guide, p. 2, 'Dot 4.48' = {formula}"}
