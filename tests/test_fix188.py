"""A new MoE/calibration user's findings (README only) on the reproduce, review and audit uses, each reproduced here.

1. ``audit`` of an old lock written out of git (``git show C:LOCK > old.lock.toml``), or put back at its own path
   (``git checkout C -- LOCK``), said "no commit here holds this lock file" and showed today's source record beside
   the lock's figures: the commit is now found by the lock's ``[lock] digest`` (``locks.lock_commit``), as
   ``reproduce`` finds it, and the sources compared there.
2. README said every shipped MoE serving keeps ``uniform`` routing; ``qwen3-30b-a3b-h200`` is on the measured record.
3. ``lock --require 'routing.*=measured'`` was "not a fact path" though README says the qwen3 lock requires it.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

QWEN = "qwen3-30b-a3b-h200"
QWEN_LOCK = f"locks/{QWEN}.lock.toml"
ROUTING_SOURCE = "sources/gpu-container-handbook-routing-derisk.toml"
OLD_URL = 'url = "https://mcp-tool-shop-org.github.io/gpu-container/handbook/derisk/"'
NEW_URL = 'url = "https://example.org/derisk-v2/"'
UNCOMPARED = ("  sources       the source records above are today's: a lock pins each fact's source id and locator, "
              "not the record, and no commit here holds this lock file to compare them with (a lock committed in "
              "a git registry is compared)")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, rel
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# --- (1) audit of a lock written out of git --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git registry: C, the checkout's; then a commit adding a comment to the qwen3 lock (its digest kept); then
    one moving the routing source's document (its url). Returned with C."""
    root = copy_root(tmp_path_factory.mktemp("moved"))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    first = _git(root, "rev-parse", "HEAD").strip()
    with (root / QWEN_LOCK).open("a", encoding="utf-8") as f:
        f.write("# kept\n")
    _git(root, "commit", "-qam", "a comment in the lock")
    _edit(root, ROUTING_SOURCE, OLD_URL, NEW_URL)
    _git(root, "commit", "-qam", "the routing document moved")
    return root, first


def _since_line(commit: str) -> str:
    return (f"  since lock    source gpu-container-handbook-routing-derisk: the lock was committed at {commit[:12]} "
            "(DATE) under another record than today's (url: https://mcp-tool-shop-org.github.io/gpu-container/"
            "handbook/derisk/ → https://example.org/derisk-v2/); the source shown is today's: verify the lock's "
            "figures against the document it was made under")


def _audit(root: Path, lock: Path) -> tuple[int, list[str], str]:
    result = invoke("audit", str(lock), root=root)
    return result.exit_code, result.stdout.splitlines(), result.stderr


def _dated(lines: list[str], commit: str) -> list[str]:
    date = _git_date(lines, commit)
    return [line.replace(f"({date})", "(DATE)") if date else line for line in lines]


def _git_date(lines: list[str], commit: str) -> str | None:
    for line in lines:
        marker = f"committed at {commit[:12]} ("
        if marker in line:
            return line.split(marker, 1)[1][:10]
    return None


def test_1_a_lock_written_out_of_git_is_compared_at_the_commit_its_digest_finds(moved: tuple[Path, str]) -> None:
    root, first = moved
    old = root.parent / "old.lock.toml"
    old.write_text(_git(root, "show", f"{first}:{QWEN_LOCK}"), encoding="utf-8")
    code, lines, stderr = _audit(root, old)
    assert code == 0
    assert UNCOMPARED not in lines
    assert _since_line(first) in _dated(lines, first)
    assert _git_date(lines, first) == _git(root, "log", "-1", "--format=%cs", first).strip()
    assert "passprice: warning: source gpu-container-handbook-routing-derisk: the lock was committed at " \
        f"{first[:12]} " in stderr


def test_1_a_lock_checked_out_of_an_old_commit_at_its_path_too(moved: tuple[Path, str]) -> None:
    root, first = moved
    _git(root, "checkout", first, "--", QWEN_LOCK)
    try:
        assert _git(root, "status", "--porcelain", "--", QWEN_LOCK).split() == ["M", QWEN_LOCK]
        code, lines, _ = _audit(root, root / QWEN_LOCK)
    finally:
        _git(root, "checkout", "HEAD", "--", QWEN_LOCK)
    assert code == 0
    assert UNCOMPARED not in lines
    assert _since_line(first) in _dated(lines, first)


def test_1_a_lock_no_commit_holds_byte_for_byte_is_still_said_uncompared(moved: tuple[Path, str]) -> None:
    root, first = moved
    old = root.parent / "edited.lock.toml"
    old.write_text(_git(root, "show", f"{first}:{QWEN_LOCK}") + "# mine\n", encoding="utf-8")
    code, lines, _ = _audit(root, old)
    assert code == 0
    assert UNCOMPARED in lines
    assert not any(line.startswith("  since lock") for line in lines)


def test_1_a_lock_committed_at_its_path_keeps_its_last_commit(moved: tuple[Path, str]) -> None:
    from passprice.locks import lock_commit
    from passprice.registry import Root

    root, first = moved
    second = _git(root, "rev-parse", "HEAD~1").strip()
    held = lock_commit(Root(root), root / QWEN_LOCK)
    assert held is not None and held[1] == second
    old = root.parent / "old2.lock.toml"
    old.write_text(_git(root, "show", f"{first}:{QWEN_LOCK}"), encoding="utf-8")
    found = lock_commit(Root(root), old)
    assert found is not None and found[1] == first and len(found[1]) == 40
    assert lock_commit(Root(root, embedded=True), old) is None


# --- (2) the shipped MoE servings' routing --------------------------------------------------------------------------


def test_2_readme_names_every_shipped_moe_serving_off_uniform() -> None:
    routed = {}
    for path in sorted((REPO / "registry" / "servings").glob("*.toml")):
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        serving = table.get("serving", table)
        if "routing" in serving:
            routed[path.stem] = serving["routing"]
    assert len(routed) == 10
    off_uniform = {name: record for name, record in routed.items() if record != "uniform"}
    assert off_uniform == {QWEN: "qwen3-30b-a3b-measured"}
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("So the shipped MoE servings keep `uniform` (an assumption, and priced as one), all but "
            "`qwen3-30b-a3b-h200`, which prices on `qwen3-30b-a3b-measured`") in readme
    design = " ".join((REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8").split())
    assert "all but `qwen3-30b-a3b-h200`, priced on `qwen3-30b-a3b-measured`" in design
    result = invoke("price", QWEN)
    assert result.exit_code == 0
    assert "measured (qwen3-30b-a3b-measured)" in result.stdout


# --- (3) --require 'routing.*=PROV' ----------------------------------------------------------------------------------


def test_3_require_routing_glob_floors_both_routing_facts_as_the_shipped_lock(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    out = tmp_path / "q.lock.toml"
    result = invoke("lock", QWEN, "--require", "routing.*=measured", "-o", str(out), root=root)
    assert result.exit_code == 0, result.output
    made = tomllib.loads(out.read_text(encoding="utf-8"))["policy"]["paths"]
    shipped = tomllib.loads((REPO / QWEN_LOCK).read_text(encoding="utf-8"))["policy"]["paths"]
    assert {k: v for k, v in made.items() if k.startswith("routing.")} == {
        "routing.hot_experts": "measured", "routing.hot_share": "measured"}
    assert made == shipped


def test_3_an_unknown_path_names_a_routing_path_among_the_examples(tmp_path: Path) -> None:
    assert bad("lock", QWEN, "-o", str(tmp_path / "x.lock.toml"), "--require", "routing.hot=measured") == [
        "passprice: error: Invalid value for --require: 'routing.hot' is not a fact path (memory.bandwidth, "
        "streams.rewrite, array, host.read, draft.acceptance.1, routing.hot_share, routing.* for both routing facts "
        "…) (see 'cli lock --help')"]
    assert bad("lock", QWEN, "-o", str(tmp_path / "x.lock.toml"), "--require", "routing.*=great") == [
        "passprice: error: --require routing.*: 'great' is not a provenance (one of published, measured, derived, "
        "estimated, assumed)"]


# --- (6) a refusal's advice keeps the user's options -----------------------------------------------------------------


def test_6_the_best_lock_advice_repeats_the_user_s_output_and_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                      ) -> None:
    monkeypatch.chdir(tmp_path)
    args = ("lock", "gpt-oss-20b-h200", "--stack", "llamacpp-cuda-2405", "-o", "y.lock.toml", "--position", "4000",
            "--floor", "estimated", "--require", "routing.*=assumed", "--name", "mine")
    result = invoke(*args)
    assert result.exit_code == 1 and not (tmp_path / "y.lock.toml").exists()
    advice = ("passprice lock gpt-oss-20b-h200 --best --stack llamacpp-cuda-2405 --position 4000 -o y.lock.toml "
              "--name mine --floor estimated --require 'routing.*=assumed'")
    assert result.stderr.splitlines() == [
        "passprice: refused: BeyondStack: llamacpp-cuda-2405 was calibrated on batch 1 … 1; this price needs batch "
        "32; price at batch 1 (--batch 1, the largest its runs reach), price the limit (without --stack), or "
        f"calibrate the stack on runs at that batch; or lock its best price inside the stack's range: `{advice}`"]
    import shlex

    followed = invoke(*shlex.split(advice)[1:])
    assert followed.exit_code == 0, followed.output
    assert (tmp_path / "y.lock.toml").exists()
    made = tomllib.loads((tmp_path / "y.lock.toml").read_text(encoding="utf-8"))
    assert made["policy"]["floor"] == "estimated"
    assert made["policy"]["paths"]["routing.hot_share"] == "assumed"


# --- (7) a model's size in a locator is no quoted figure -------------------------------------------------------------


def test_7_a_model_size_glued_to_its_suffix_is_not_a_quoted_figure() -> None:
    from passprice.measurements import Run
    from passprice.review.changes import _quoted_figures
    from passprice.review.runs import _added_run_asks

    locator = "PR table: row '| llama 8B Q4_0 | 1 | tg128 | 168.2 |'"
    run = Run(id="r", stack="s", card="c", checkpoint="k", batch=1, first=128, last=256, tokens_per_s=190.0,
              source_id="src", locator=locator)
    assert _added_run_asks(run, [run]) == [
        f"its locator quotes 168.2, 1, not 190 tokens/s: does src: {locator} state 190 tokens/s?"]
    assert _quoted_figures("llama 70B, 1.5M, 32K context: 168.2") == {168.2}
    # units glued to their figure stay figures: 100MB (M then B), 4.8TB/s, 8 B/s
    assert _quoted_figures("'100MB', 'GPU Memory Bandwidth 4.8TB/s', '8B/s'") == {100.0, 4.8, 8.0}


# --- (9) explain alone, and a recorded figure named in words --------------------------------------------------------


def test_9_explain_alone_opens_with_its_own_line() -> None:
    from passprice import glossary

    for asked in (".locks[0].alone", "alone"):
        result = invoke("explain", asked)
        assert result.exit_code == 0
        assert result.stdout.splitlines()[0].startswith(
            "alone: review: what one changed fact alone does to a lock's price (the pins with only that fact as HEAD "
            "has it); explained under unaffected  (also: unaffected, does not read, ")
    assert invoke("explain", "unaffected").stdout.startswith(
        "unaffected: review: a lock the change does not touch, re-priced the same on both sides  (also: does not "
        "read, informational, not locked, informational, alone, ")
    assert glossary.headline(glossary.TERMS["unaffected"], ".locks[0].alone_grouped")[0] == "unaffected"


def test_9_a_stale_recorded_count_is_said_in_words() -> None:
    from passprice.review.impacts import _figure_named

    assert _figure_named("weight_bytes") == "weight_bytes, the weights' bytes a pass reads"
    assert _figure_named("expected.sequence_bytes") == "expected.sequence_bytes, each sequence's bytes a pass reads"
    assert _figure_named("memory_s") == "memory_s"


# --- (4) a price on a stale fit says so on its lock line ------------------------------------------------------------

RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


def test_4_a_price_on_a_stale_fit_says_it_on_stdout(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    text = (root / RUNS).read_text(encoding="utf-8")
    assert text.count("tokens_per_s = 145.55\n") == 1
    (root / RUNS).write_text(text.replace("tokens_per_s = 145.55\n", "tokens_per_s = 245.55\n"), encoding="utf-8")
    locks = ("under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best "
             "(locks/r1-qwen7b-h200-best.lock.toml), r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml)")
    fit = ("floors hold, but the price rests on stack llamacpp-cuda-2405's stale fit (9 fitted facts no longer follow "
           "from today's registry), as the one {} it: `lock --update` refuses it (StaleFacts) until `passprice "
           "calibrate --stack llamacpp-cuda-2405` re-fits it")
    span = ("  fitted span   its 111 fitted runs, as today's registry holds them, not as the stale fit read them, "
            "measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × measured); this price's 0.2384")
    price = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", root=root)
    assert price.exit_code == 0
    lines = price.stdout.splitlines()
    assert f"  lock          {locks}: {fit.format('r1-qwen7b-h200 and r1-qwen7b-h200-llamacpp record')}" in lines
    assert "and the price is the one" not in price.stdout
    assert any(line.startswith(span) for line in lines)
    best = invoke("best", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", root=root)
    assert best.exit_code == 0
    assert f"  lock          {locks}: {fit.format('r1-qwen7b-h200-best records')}" in best.stdout.splitlines()
    # the fit holding, the line is as before
    again = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert f"  lock          {locks}: floors hold, and the price is the one r1-qwen7b-h200 and r1-qwen7b-h200-" \
           "llamacpp record" in again.stdout.splitlines()
    assert "as today's registry holds them" not in again.stdout


# --- (5) calibrate warns of a run far from the others ---------------------------------------------------------------


def test_5_calibrate_names_a_run_far_from_the_others_span(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    text = (root / RUNS).read_text(encoding="utf-8")
    (root / RUNS).write_text(text.replace("tokens_per_s = 145.55\n", "tokens_per_s = 45.55\n"), encoding="utf-8")
    result = invoke("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "passprice: warning: calibrate llamacpp-cuda-2405: run xd3.h100_pcie_80gb.8b-q4km.tg512 measured 0.1116 × its "
        "limit (the limit 8.96 × measured), outside the 0.3425 … 0.8519 × (the limit 1.17 … 2.92 × measured) the "
        "other 110 runs measured: the fit rests on it; check its figure in its source"]
    shipped = invoke("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run")
    assert shipped.exit_code == 0 and "the fit rests on it" not in shipped.stderr


def test_5_a_run_is_far_only_past_a_quarter_beyond_the_others() -> None:
    from passprice.stackreach import runs_apart

    assert runs_apart({"a": 0.5, "b": 0.6, "c": 0.41}) == []  # 0.5 / 0.41 = 1.22: within a quarter
    assert [line.split(" measured")[0] for line in runs_apart({"a": 0.5, "b": 0.6, "c": 0.39})] == ["run c"]
    assert runs_apart({"a": 0.5, "b": 0.6}) == []
    assert runs_apart({"a": 0.5, "b": 0.6, "c": 0.8}) == [
        "run c measured 0.8 × its limit (the limit 1.25 × measured), outside the 0.5 … 0.6 × (the limit 1.67 … 2 × "
        "measured) the other 2 runs measured: the fit rests on it; check its figure in its source"]


# --- (8) a re-fit's shared old citation given once -------------------------------------------------------------------


def test_8_a_refit_gives_its_shared_old_citation_once(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    _git(root, "checkout", "-q", "-b", "refit")
    path = root / RUNS
    text = path.read_text(encoding="utf-8")
    start = text.index("\n[[run]]\n")
    block = text[start:text.index("\n[[run]]\n", start + 1)]
    assert 'id = "xd3.h100_pcie_80gb.8b-q4km.tg512"' in block
    added = block.replace('id = "xd3.h100_pcie_80gb.8b-q4km.tg512"', 'id = "new.h100_pcie_80gb.8b-q4km.tg512"')
    path.write_text(text.rstrip("\n") + "\n" + added.replace("tokens_per_s = 145.55", "tokens_per_s = 140.1")
                    .rstrip("\n") + "\n", encoding="utf-8")
    assert invoke("calibrate", "--stack", "llamacpp-cuda-2405", root=root).exit_code == 0
    _git(root, "commit", "-qam", "one run added, re-fitted")
    result = invoke("diff", "main", "--format", "markdown", root=root)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    cites = [line for line in lines if line.startswith("  - **cite")]
    assert cites[0].startswith("  - **cite (new)**: passprice-stack-calibration: the 112 runs of stack "
                               "llamacpp-cuda-2405 in registry/measurements/xiongjiedai-llama3-llamabench.toml")
    assert cites[1].startswith("  - **cite (was)**: passprice-stack-calibration: the 111 runs of stack "
                               "llamacpp-cuda-2405 in registry/measurements/xiongjiedai-llama3-llamabench.toml")
    assert len(cites) >= 6
    assert set(cites[2:]) == {"  - **cite (new and was)**: as `overhead.layer`'s"}
    assert sum("cite (was)" in line for line in lines) == 1
