"""Leftovers of session 24 (issue 13's umbrella: review, diff, audit, reproduce), each reproduced first.

1. ``price``/``best --stack S`` said nothing when S's fit no longer follows from its runs (``check`` and ``diff``
   found it): one warning line on stderr naming the stack and ``passprice calibrate --stack S``, ``--json``
   ``stack_fit``; the re-fit is cached by the bytes it reads, so an unchanged registry re-fits nothing.
2. A run added (to a new measurement file, or an existing one) citing a source record the same change adds says the
   change records nothing independent of itself, as a run re-cited to one does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import invoke
from test_diff import commit_all
from test_leftovers_s23 import _stack_locked
from test_newcomer_24 import STACK
from test_slip_34 import POINTS, branch, new_file, registry, review

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

FITTED = ["overhead.pass", "overhead.layer", "share.read", "share.append", "share.array", "share.vector",
          "share.scale", "terms.serial"]


@pytest.fixture(scope="module")
def stack_locked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with stack vllm-w24 calibrated on its five runs, serving w24-moe and its lock under the stack."""
    return _stack_locked(tmp_path_factory.mktemp("s24") / "made")


def _run_moved(root: Path) -> None:
    """The batch-64 run's figure 6641.7 -> 6900.0 tokens/s, the stack not re-fitted."""
    runs = root / "registry" / "measurements" / "w24.toml"
    text = runs.read_text()
    for old, new in (("tokens_per_s = 6641.7", "tokens_per_s = 6900.0"),
                     ("batch 64: 6641.7 tok/s", "batch 64: 6900.0 tok/s")):
        assert old in text
        text = text.replace(old, new)
    runs.write_text(text)


def test_1_a_price_under_a_stale_stack_fit_warns_with_the_fix(stack_locked: Path, tmp_path: Path) -> None:
    root = tmp_path / "r"
    shutil.copytree(stack_locked, root)
    for command in ("price", "best"):
        held = invoke(command, "w24-moe", "--stack", STACK, "--no-lock", "--json", root=root)
        assert held.exit_code == 0, held.output
        assert "fit does not follow" not in held.stderr
        assert json.loads(held.stdout)["stack_fit"] is None
    _run_moved(root)
    for command in ("price", "best"):
        result = invoke(command, "w24-moe", "--stack", STACK, "--no-lock", "--json", root=root)
        assert result.exit_code == 0, result.output
        [line] = [x for x in result.stderr.splitlines() if "fit does not follow" in x]
        assert line.startswith(f"passprice: warning: stack {STACK}'s fit does not follow from today's registry (8 "
                               f"fitted facts stale: {', '.join(FITTED)}; their fit's runs moved: run w24.h200.b64: "
                               "6641.7 tokens/s when derived, 6900 tokens/s now (+3.889 %); re-fitted from today's "
                               "runs: overhead.pass ")
        assert line.endswith(f"): this expected price rests on its facts as written; re-fit it with `passprice "
                             f"calibrate --stack {STACK}`")
        fit = json.loads(result.stdout)["stack_fit"]
        assert fit["stack"] == STACK and fit["facts"] == FITTED and fit["kinds"] == ["stale"]
        assert fit["command"] == f"passprice calibrate --stack {STACK}"
        assert [f["path"] for f in fit["findings"]] == ["overhead.pass"]
        text = invoke(command, "w24-moe", "--stack", STACK, "--no-lock", root=root)
        assert sum("fit does not follow" in x for x in text.stderr.splitlines()) == 1
    # re-fitted: the warning goes
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    again = invoke("price", "w24-moe", "--stack", STACK, "--no-lock", "--json", root=root)
    assert "fit does not follow" not in again.stderr and json.loads(again.stdout)["stack_fit"] is None


def test_1_the_fit_check_is_kept_in_the_cache(stack_locked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import calibrate
    from passprice.registry import find_root
    from passprice.stackreach import fit_check

    root = find_root(str(stack_locked))
    first = fit_check(root, STACK)
    assert first.findings == ()
    calls = []
    monkeypatch.setattr(calibrate, "verify_stack", lambda *a, **k: calls.append(a) or [])
    assert fit_check(root, STACK) == first and calls == []  # the same bytes: nothing re-fitted
    assert fit_check(root, "../../outside").findings == ()  # a name leading out of facts/stacks


# 2. A run added (to a new measurement file or an existing one) citing a source the same change adds.

FRESH = """#:schema ../schema/source.schema.json
[source]
title = "A new benchmark post"
kind = "benchmark-results"
publisher = "Someone"
date = "2025"
url = "https://example.com/new-bench"
retrieved = "2025-01-01"
read = "Read in full."
"""

FRESH_NOTE = ("its source fresh-bench is added by this same change: the registry records nothing of it from before, "
              "so the change records nothing independent of itself for 135.07 tokens/s: read the document itself")


def test_2_runs_of_a_new_file_under_a_new_source_record_nothing(registry: Path) -> None:
    # Before: the new file's run was priced and nothing asked ("1 other file changed"), where the same run re-cited
    # in an existing file read "… records nothing independent of itself …".
    path = branch(registry, "s24-fresh-new-file")
    (path / "sources" / "fresh-bench.toml").write_text(FRESH, encoding="utf-8")
    new_file(path, ('source = "xiongjiedai-gpu-benchmarks"', 'source = "fresh-bench"'))
    commit_all(path, "a new measurement file under a new source")
    status, text, out = review(path)
    assert status == 0, text
    assert out["runs_to_verify"] == {"registry/measurements/new-points.toml": 1}
    assert f"1 measured run to verify in its source: xd2.h100_pcie_80gb.l2-7b-q4_0.main9 added: {FRESH_NOTE}" in text
    # a run added to an existing file under it says the same
    path = branch(registry, "s24-fresh-old-file")
    (path / "sources" / "fresh-bench.toml").write_text(FRESH, encoding="utf-8")
    points = path / POINTS
    text = points.read_text()
    run = text[text.index("[[run]]"):].split("\n\n")[0].replace('.main"', '.main9"', 1)
    points.write_text(text + "\n" + run.replace('source = "xiongjiedai-gpu-benchmarks"', 'source = "fresh-bench"')
                      + "\n")
    commit_all(path, "a run added under a new source")
    status, text, out = review(path)
    assert out["runs_to_verify"] == {POINTS: 1}, text
    assert f"xd2.h100_pcie_80gb.l2-7b-q4_0.main9 added: {FRESH_NOTE}" in text
    # under a source the registry held, nothing of the kind
    path = branch(registry, "s24-old-source")
    new_file(path)
    commit_all(path, "a new measurement file under the old source")
    status, text, out = review(path)
    assert "records nothing independent" not in text and out["runs_to_verify"] == {}


# 3. A source changed under a routing record a stack's fit prices: the review follows the fitted facts through it.


def test_3_a_source_under_a_routing_record_names_the_stack_and_locks_fitted_through_it(
        stack_locked: Path, tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(stack_locked, base)
    shutil.copytree(stack_locked, head)
    source = head / "sources" / "gpu-container-handbook-routing-derisk.toml"
    text = source.read_text()
    old = 'url = "https://mcp-tool-shop-org.github.io/gpu-container/handbook/derisk/"'
    assert old in text
    source.write_text(text.replace(old, 'url = "https://example.com/another-handbook/"'))
    out = json.loads(invoke("diff", str(base), str(head), "--format", "json", root=head).stdout)
    [change] = out["sources_changed"]
    assert change["id"] == "gpu-container-handbook-routing-derisk"
    assert change["citing"] == ["qwen3-30b-a3b-measured:hot_experts", "qwen3-30b-a3b-measured:hot_share"]
    # Before: fitted {} and the lock under the stack left out (audit --source followed the runs' routing record).
    assert change["fitted"] == {STACK: 12}  # the 8 fitted facts and the 4 range.* facts read off the runs
    assert change["fitted_through"] == [{"stack": STACK, "routing": "qwen3-30b-a3b-measured"}]
    assert change["locks"] == ["qwen3-30b-a3b-h200", "w24-moe"]
    assert change["to_verify"] == (
        "the document source gpu-container-handbook-routing-derisk names changed (url: "
        "https://mcp-tool-shop-org.github.io/gpu-container/handbook/derisk/ → https://example.com/another-handbook/): "
        "does it state each of qwen3-30b-a3b-measured:hot_experts, qwen3-30b-a3b-measured:hot_share, which cite it, "
        f"and the measured runs of stack {STACK} (12 fitted facts rest on them, priced on routing record "
        "qwen3-30b-a3b-measured, which cites it)? The locked prices of qwen3-30b-a3b-h200, w24-moe rest on them (a "
        "lock pins the id, not the document).")
    audit = json.loads(invoke("audit", "--source", "gpu-container-handbook-routing-derisk", "--json",
                              root=head).stdout)
    assert STACK in json.dumps(audit)  # the same stack as audit --source names


# 4. A Routed refusal offers the routing records whose checkpoints scope holds the refused checkpoint.


def test_4_routed_offers_only_records_whose_scope_holds_the_checkpoint(tmp_path: Path) -> None:
    from cli_helpers import REPO, refused

    config = str(REPO / "examples" / "configs" / "qwen3-30b-a3b.json")
    other = tmp_path / "my-qwen3-q8.gguf"  # another 128-expert model: the measured record's scope does not hold it
    assert invoke("synth", config, "--mix", "Q8_0", "-o", str(other)).exit_code == 0
    args = ("price", "--checkpoint", str(other), "--card", "mi300x", "--batch", "8")
    # Before: records ["qwen3-30b-a3b-measured (…)", "uniform (…)"], the first refused OutOfScope when named.
    out = refused(*args, name="Routed")
    assert out["records"] == ["uniform (assumed; any checkpoint)"]
    assert out["records_out_of_scope"] == ["qwen3-30b-a3b-measured (measured; for qwen3-30b-a3b-q4_k_m)"]
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.stderr.endswith("; registered here for 128 experts, 8 a token: uniform (assumed; any "
        "checkpoint); not for "
                                  "this checkpoint (its scope): qwen3-30b-a3b-measured (measured; for "
                                  "qwen3-30b-a3b-q4_k_m)\n")
    assert invoke(*args, "--routing", "qwen3-30b-a3b-measured").stderr.startswith("passprice: refused: OutOfScope")
    # the same model's own copy (same content) is in the record's scope: offered as before
    mine = tmp_path / "my-qwen3.gguf"
    assert invoke("synth", config, "--mix", "Q4_K_M", "-o", str(mine)).exit_code == 0
    own = refused("price", "--checkpoint", str(mine), "--card", "mi300x", "--batch", "8", name="Routed")
    assert own["records"] == ["qwen3-30b-a3b-measured (measured; for qwen3-30b-a3b-q4_k_m)",
                              "uniform (assumed; any checkpoint)"]
    assert "records_out_of_scope" not in own


# 5. import's default origin: the file as found (its path in the registry, else its name) and the sha256.


def test_5_import_records_what_identifies_the_file(tmp_path: Path) -> None:
    import tomllib

    from cli_helpers import copy_root

    root = copy_root(tmp_path / "r")
    header = Path(__file__).resolve().parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    outside = tmp_path / "downloads" / "model.gguf.xz"
    outside.parent.mkdir()
    shutil.copyfile(header, outside)
    inside = root / "models" / "gemma" / "model.gguf.xz"
    inside.parent.mkdir(parents=True)
    shutil.copyfile(header, inside)
    sha = json.loads(invoke("import", str(outside), "--name", "g-out", "--json", root=root).stdout)["sha256"]
    made = json.loads(invoke("import", str(inside), "--name", "g-in", "--json", root=root).stdout)
    entries = {n: tomllib.loads((root / "registry" / "checkpoints" / f"{n}.toml").read_text())["entry"]
               for n in ("g-out", "g-in")}
    # Before: origin "model.gguf.xz" for both, which file it was said nowhere but the sha256 in [header].
    assert entries["g-out"]["origin"] == (
        f"model.gguf.xz (a file outside this registry; no --origin given: the header's sha256 {sha} identifies it, say "
        "where it came from with --origin)")
    assert entries["g-in"]["origin"] == (
        f"models/gemma/model.gguf.xz in this registry (no --origin given: the header's sha256 {sha} identifies it, "
        "say where it came from with --origin)")
    assert str(tmp_path) not in json.dumps(entries)  # no folder of the importer's machine
    assert entries["g-out"]["source"] == entries["g-in"]["source"] == "model.gguf.xz"
    assert made["source"] == "model.gguf.xz" and made["origin"] == entries["g-in"]["origin"]
    given = json.loads(invoke("import", str(outside), "--name", "g-given", "--origin", "hf:google/gemma-3-270m",
                              "--json", root=root).stdout)
    assert given["origin"] == "hf:google/gemma-3-270m"


# 6. Markdown review cells render passprice's commands as code spans, not as escaped backticks.


def test_6_a_review_cell_shows_its_command_as_code(stack_locked: Path, tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(stack_locked, base)
    shutil.copytree(stack_locked, head)
    _run_moved(head)
    markdown = invoke("diff", str(base), str(head), "--format", "markdown", root=head).stdout
    [row] = [x for x in markdown.splitlines() if x.startswith("| `w24-moe` |")]
    # Before: "re-fit them (\`passprice calibrate --stack vllm-w24\`)", backslashes shown on the page.
    assert row.endswith(f"no longer the fit of stack {STACK}'s runs: re-fit them (`passprice calibrate --stack "
                        f"{STACK}`); records HEAD's price |")
    assert "\\`" not in markdown


def test_6_a_cell_stays_safe_with_its_code_spans() -> None:
    from passprice.tables import markdown_prose, markdown_table

    cell = markdown_prose("a | <b>x</b> @octocat `passprice fact recompute 'a|b <i>'`; `rm -rf` and\nz")
    table = markdown_table(["h"], [[cell]])
    # the pipe escaped (GitHub reads "\|" as "|" inside a code span of a table cell too), the line kept, HTML and a
    # mention outside the span neutralised, a backtick span that is no passprice command still escaped text
    assert table.splitlines()[2] == (
        "| a \\| &lt;b&gt;x&lt;/b&gt; @&#8203;octocat `passprice fact recompute 'a\\|b <i>'`; \\`rm -rf\\` and z |")


# 7. A stale stack fit's findings carry their re-fitted values; the recomputed line says what the re-fit moved.


def test_7_a_stale_fit_is_named_with_its_refitted_values(stack_locked: Path, tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(stack_locked, base)
    shutil.copytree(stack_locked, head)
    _run_moved(head)
    out = json.loads(invoke("diff", str(base), str(head), "--format", "json", root=head).stdout)
    [moe] = [x for x in out["locks"] if x["name"] == "w24-moe"]
    # Before: every expected None. The re-fit to the moved run (calibrate --stack as passprice writes it):
    assert [(u["path"], u["kind"], u["expected"]) for u in moe["unsound"]] == [
        ("stack.overhead.pass", "stale", "1911 µs"), ("stack.overhead.layer", "stale", "0 µs"),
        ("stack.share.read", "stale", "0.7931"), ("stack.share.append", "stale", "0.8613"),
        ("stack.share.array", "stale", "1"), ("stack.share.vector", "stale", "1"), ("stack.share.scale", "stale", "1"),
        ("stack.terms.serial", "stale", "0")]
    assert moe["refitted"] == ["overhead.pass 1950 µs → 1911 µs", "share.read 0.8564 → 0.7931",
                               "share.append 0.7446 → 0.8613"]
    assert invoke("calibrate", "--stack", STACK, root=head).exit_code == 0  # the same values, written by hand
    written = (head / "facts" / "stacks" / f"{STACK}.toml").read_text()
    assert "[share.read]\nvalue = 0.7931\n" in written and "[overhead.pass]\nvalue = 1911.0\n" in written


def test_7_a_card_change_that_refits_a_stack_says_what_the_refit_moved(stack_locked: Path, tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(stack_locked, base)
    shutil.copytree(stack_locked, head)
    card = head / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text()
    assert "[memory.bandwidth]\nvalue = 4.8\n" in text
    card.write_text(text.replace("[memory.bandwidth]\nvalue = 4.8\n", "[memory.bandwidth]\nvalue = 4.89\n"))
    lines = invoke("diff", str(base), str(head), root=head).stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  w24-moe "))
    [line] = [x for x in lines[at:] if x.startswith("    recomputed ")][:1]
    # Before: "… (recomputed and the stack re-fitted as passprice would write them)": nothing said of what moved.
    assert line == (
        "    recomputed  tokens/s 10,354.4 → 10,354.9 (+0.00496 %), as HEAD wrote it +1.875 %; expected 6,589.8 → "
        "6,589.9 (+0.001926 %), once streams.read (0.9162), streams.append (0.8487), stack.share.read, "
        "stack.share.append follow from their inputs (recomputed and the stack re-fitted as passprice would write "
        "them; the re-fit moves overhead.pass 1950 µs → 0 µs, overhead.layer 0 µs → 40.62 µs, share.read 0.8564 → "
        "0.8563)")


# 8. reproduce --json: serving_differences holds each serving_changed line, structured, whatever today's files do.


def test_8_serving_differences_pair_the_text_lines_when_todays_files_do_not_read(
        stack_locked: Path, tmp_path: Path) -> None:
    from cli_helpers import copy_root

    root = copy_root(tmp_path / "gone")
    (root / "registry" / "servings" / "r1-qwen7b-h200.toml").unlink()
    (root / "registry" / "checkpoints" / "deepseek-r1-distill-qwen-7b-q4_k_m.toml").unlink()
    out = json.loads(invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", "--json", root=root).stdout)
    # a copy with no git history: nothing shows the serving was registered (tests/test_walk117.py)
    assert out["serving_changed"] == ["serving r1-qwen7b-h200 is not registered here (priced as the lock embeds it)"]
    # Before: [] (today's checkpoint does not read), where the text line said the serving is gone.
    assert out["serving_differences"] == [{"field": "registered", "locked": "r1-qwen7b-h200", "now": None}]
    # A lock under a stack that no longer reads: the serving's changes were dropped (text and structure).
    made = tmp_path / "stack"
    shutil.copytree(stack_locked, made)
    serving = made / "registry" / "servings" / "w24-moe.toml"
    serving.write_text(serving.read_text().replace("\nbatch = 64\n", "\nbatch = 32\n"))
    (made / "facts" / "stacks" / f"{STACK}.toml").write_text("not toml [")
    out = json.loads(invoke("reproduce", "locks/w24-moe.lock.toml", "--json", root=made).stdout)
    assert out["serving_changed"] == ["batch: 64 → 32"]
    assert out["serving_differences"] == [{"field": "serving.batch", "locked": 64, "now": 32}]
    assert len(out["serving_changed"]) == len(out["serving_differences"])


# 9. audit of an old lock says which of its sources' records changed since the lock was committed.


def test_9_an_old_locks_audit_says_its_source_record_changed_since(tmp_path: Path) -> None:
    from cli_helpers import REPO
    from test_diff import git

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    args = ("audit", str(path / "locks" / "r1-qwen7b-h200.lock.toml"))
    held = invoke(*args, "--json", root=path)
    assert held.exit_code == 0, held.output
    assert json.loads(held.stdout)["sources_since_lock"] == []
    source = path / "sources" / "nvidia-h200-datasheet.toml"
    old = 'url = "https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446"'
    assert old in source.read_text()
    source.write_text(source.read_text().replace(old, 'url = "https://example.com/h200-2026.pdf"'))
    commit_all(path, "the datasheet's address moved")
    commit = git(path, "log", "-1", "--format=%H", "--", "locks/r1-qwen7b-h200.lock.toml").strip()
    out = json.loads(invoke(*args, "--json", root=path).stdout)
    # Before: the audit listed today's record of nvidia-h200-datasheet as the lock's, saying nothing.
    [since] = out["sources_since_lock"]
    assert since["id"] == "nvidia-h200-datasheet" and since["commit"] == commit
    assert since["changed"] == ["url: https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446 "
                                "→ https://example.com/h200-2026.pdf"]
    text = invoke(*args, root=path)
    line = (f"source nvidia-h200-datasheet: the lock was committed at {commit[:12]} ({since['when'][:10]}) under "
            "another record than today's (url: https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-"
            "3002446 → https://example.com/h200-2026.pdf); the source shown is today's: verify the lock's figures "
            "against the document it was made under")
    assert f"  since lock    {line}\n" in text.stdout
    assert f"passprice: warning: {line}\n" in text.stderr
    # a serving's audit (today's facts) and a lock re-committed since say nothing of the kind
    assert "sources_since_lock" not in json.loads(invoke("audit", "r1-qwen7b-h200", "--json", root=path).stdout)
    lock = path / "locks" / "r1-qwen7b-h200.lock.toml"
    lock.write_text(lock.read_text() + "\n")
    commit_all(path, "the lock re-committed")
    assert json.loads(invoke(*args, "--json", root=path).stdout)["sources_since_lock"] == []


# 10. A sweep row names the routing record it was priced on, in CSV as in JSON.


def test_10_sweep_rows_carry_their_routing_in_csv_and_json(tmp_path: Path) -> None:
    import csv

    args = ("sweep", "qwen3-30b-a3b-h200", "r1-qwen7b-h200", "--batches", "1,8")
    text = invoke(*args).stdout
    rows = list(csv.DictReader(text.splitlines()))
    # Before: no routing column in either format.
    assert text.splitlines()[0].startswith("card,serving,checkpoint,routing,draft_tokens,")
    assert [(r["serving"], r["routing"], r["batch"]) for r in rows] == [
        ("qwen3-30b-a3b-h200", "qwen3-30b-a3b-measured", "1"), ("qwen3-30b-a3b-h200", "qwen3-30b-a3b-measured", "8"),
        ("r1-qwen7b-h200", "", "1"), ("r1-qwen7b-h200", "", "8")]
    data = json.loads(invoke(*args, "--json").stdout)
    assert [(r["serving"], r["routing"]) for r in data] == [
        ("qwen3-30b-a3b-h200", "qwen3-30b-a3b-measured")] * 2 + [("r1-qwen7b-h200", None)] * 2
    assert list(data[0])[:5] == ["card", "serving", "checkpoint", "routing", "draft_tokens"]
    # the same facts in both: each CSV row's cells are its JSON row's
    assert [r["tokens_per_s"] for r in rows] == [repr(r["tokens_per_s"]) for r in data]
    # -o FILE (the byte writer) carries the same column
    out = tmp_path / "u.csv"
    assert invoke("sweep", "qwen3-30b-a3b-h200", "--batches", "1", "-o", str(out)).exit_code == 0
    [row] = csv.DictReader(out.read_text().splitlines())
    assert row["routing"] == "qwen3-30b-a3b-measured"
