"""Session 9's walkthrough leftovers: a lock made under a stack priced under it by every command given it, a lock
made with options found again by the same command, one lock wording for sweep --max-tpot, compare --stack, a stack
lock's expected price in diff, BeyondStack's batch advice in audit, locator figures, the card-reach warning of lock
--stack, what moved in a capacity change, one byte unit style."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

R1 = "r1-qwen7b-h200"
STACK = "llamacpp-cuda-2405"
H200_REACH = (f"passprice: warning: stack {STACK} was fitted on runs on 11 cards (a100_pcie_80gb, a100_sxm4_80gb, a40, "
              "h100_pcie_80gb, l40s, rtx_3080, rtx_3090, rtx_4080, rtx_4090, rtx_6000_ada, rtx_a6000), not "
              "h200_sxm_141gb: its expected price here extrapolates across cards (with a card held out of the fit, "
              "its error was 6.9 % on average, 20.4 % at most)")
#: Walkthrough 19: R1 at batch 1 under the stack lies outside the span its runs measured (test_newcomer_19).
H200_SPAN = (f"passprice: warning: stack {STACK}'s expected price here is 0.2384 × the limit{{at}} (the limit 4.2 × "
             "expected), outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs measured: "
             "the fit is extrapolated here")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the registry with two more locks: ``s`` (R1 at batch 1 under the llama.cpp stack) and ``r1-1k``
    (R1 with --limit 1024: a lock of no registered serving)."""
    made = copy_root(tmp_path_factory.mktemp("leftovers18"))
    result = invoke("lock", R1, "--batch", "1", "--stack", STACK, "-o", str(made / "locks" / "s.lock.toml"),
                    root=made)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "locked s (price, locks no registered serving): 996.1 tokens/s at batch 1, binds on memory, weakest "
        f"estimated -> {made / 'locks' / 's.lock.toml'}",
        f"  expected under stack {STACK}: 237.4 tokens/s at batch 1, binds on memory, weakest estimated (0.2384 × "
        "the limit's 996.1)",
        # walkthrough 21: lock --stack says where its expected price lies against the stack's fitted span
        "  fitted span   its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × "
        "measured); this price's 0.2384 (the limit 4.2 × expected) lies outside: an extrapolation of the fit",
    ]
    # item 8: lock --stack warns of the cards its runs never measured, as price --stack does (and, walkthrough 21, of
    # a price outside the fitted span)
    assert result.stderr.splitlines() == [H200_REACH, H200_SPAN.format(at="")]
    result = invoke("lock", R1, "--limit", "1024", "-o", str(made / "locks" / "r1-1k.lock.toml"), root=made)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("locked r1-1k (price, locks no registered serving): 1,017.6 tokens/s at batch 1")
    return made


def test_best_sweep_roofline_and_max_batch_price_under_a_stack_locks_stack(root: Path) -> None:
    """``best``/``sweep``/``roofline``/``max-batch --lock L`` of a lock made under a stack printed the limit alone
    (only ``price --lock`` priced the stack's expected price); each prices under L's stack now."""
    result = invoke("best", "--lock", "s", root=root)
    assert result.exit_code == 0, result.output
    assert ("  expected      237.4 tokens/s at batch 1, its best where its facts hold (TPOT 4.211 ms per sequence): "
            "0.007122 × the limit's 33,339.2, best against best (the limit at its own best batch, 580)"
            ) in result.stdout.splitlines()
    # the span is judged against the limit at the expected price's own batch, 1, as each run's is
    assert result.stderr.splitlines() == [H200_REACH, H200_SPAN.format(at=" at batch 1")]
    result = invoke("sweep", R1, "--lock", "s", "--batches", "1,2", root=root)
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()
    assert rows[0].endswith(",stack,expected_tokens_per_s,expected_pass_s,expected_binds,expected_provenance,"
                            "expected_refusal")
    assert rows[1].endswith(f",{STACK},237.44787516369843,0.004211450615469152,memory,estimated,")
    assert rows[2].endswith(f",{STACK},,,,,BeyondStack")  # batch 2: outside the stack's measured range
    # --max-tpot caps the limit, not an expected price: said in one line, not silently the limit
    result = invoke("sweep", R1, "--lock", "s", "--batches", "1,2", "--max-tpot", "0.1", root=root)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        f"passprice: warning: lock s was made under stack {STACK}, but --max-tpot caps the limit's TPOT: these rows "
        f"are the card's limit, without {STACK}'s expected price"
    )
    assert ",stack," not in result.stdout.splitlines()[0]
    # roofline CARD --lock L without a serving: L's serving (it printed the ridges alone, ignoring the lock)
    result = invoke("roofline", "h200_sxm_141gb", "--lock", "s", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "deepseek-r1-distill-qwen-7b-q4_k_m: deepseek-r1-distill-qwen-7b-q4_k_m on NVIDIA H200 SXM 141GB" in lines
    assert ("  expected best batch 1 (237.4 tokens/s, binds on memory): 0.007122 × the limit's best (580, 33,339.2 "
            "tokens/s)") in lines
    assert lines[-1].startswith("  lock: under lock s (locks/s.lock.toml): floors hold")
    result = invoke("max-batch", "--lock", "s", root=root)
    assert result.exit_code == 0, result.output
    assert f"  under stack {STACK}: at most 578 (its runtime reserves 536.9 MB)" in result.stdout.splitlines()
    # and --stack given still wins; without a stack lock nothing changes
    result = invoke("best", R1, "--json", root=root)
    assert "expected" not in json.loads(result.stdout)


def test_a_lock_made_with_options_is_found_by_the_same_command(root: Path) -> None:
    """``lock R1 --limit 1024 -o locks/r1-1k.lock.toml`` ("locks no registered serving") was never found again:
    ``price R1 --limit 1024`` said NOT the one R1 records and did not name r1-1k. A lock of no registered serving
    whose pinned serving, card and checkpoint are the priced ones applies now, beside the serving's own."""
    result = invoke("price", R1, "--limit", "1024", root=root)
    assert result.exit_code == 0, result.output
    lock = [line for line in result.stdout.splitlines() if line.startswith("  lock ")]
    assert lock == [
        f"  lock          under locks {R1} (locks/{R1}.lock.toml), {R1}-best (locks/{R1}-best.lock.toml), "
        f"{R1}-llamacpp (locks/{R1}-llamacpp.lock.toml), r1-1k (locks/r1-1k.lock.toml): floors hold, but the price "
        f"is NOT the one {R1} and {R1}-llamacpp record; it is the one r1-1k records (below)"
    ]
    # the same serving from --checkpoint/--card: under r1-1k alone
    result = invoke("price", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "h200_sxm_141gb",
                    "--limit", "1024", "--position", "512", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        "  lock          under lock r1-1k (locks/r1-1k.lock.toml): floors hold, and the price is the one r1-1k records"
    )
    # another limit is not r1-1k's serving
    result = invoke("price", R1, "--limit", "2048", "--json", root=root)
    assert json.loads(result.stdout)["lock"]["locks"] == [R1, f"{R1}-best", f"{R1}-llamacpp"]


def test_sweep_max_tpot_says_the_serving_differs_as_best_does(root: Path) -> None:
    """``sweep --max-tpot`` said "the serving is the locked one" where ``best``/``roofline`` said the serving
    differs by max_tpot: one wording (Guard.line) for all. (Lock ``s``, made with ``--batch 1``, pins R1 as its
    file is: it applies to R1 too.)"""
    result = invoke("sweep", R1, "--max-tpot", "0.01", "--batches", "1,2", root=root)
    assert result.exit_code == 0, result.output
    said = result.stderr.splitlines()
    at = next(i for i, line in enumerate(said) if line.startswith(f"passprice: {R1}: under locks"))
    # moe42: then one line each lock made from R1 with other options, not applied (the fixture's locks made so)
    assert all(line.startswith("                not applied: ") for line in said[at + 2:])
    assert said[at:at + 2] == [
        f"passprice: {R1}: under locks {R1} (locks/{R1}.lock.toml), {R1}-best (locks/{R1}-best.lock.toml), "
        f"{R1}-llamacpp (locks/{R1}-llamacpp.lock.toml), s (locks/s.lock.toml): floors hold, but the prices shown are "
        "NOT the locked ones (below)",
        "                serving differs from the locked one: max_tpot: (none) → 0.01",
    ]
    result = invoke("roofline", "h200_sxm_141gb", R1, "--max-tpot", "0.01", root=root)
    lines = result.stdout.splitlines()
    assert " " * 16 + "serving differs from the locked one: max_tpot: (none) → 0.01" in lines
    # moe42: lock s pins R1 as registered, so with --max-tpot it is not applied, and says why
    assert lines[-1] == (" " * 16 + "not applied: s (locks/s.lock.toml) locks this serving as other options make it "
                         "(pinned → priced: max_tpot: (none) → 0.01): a lock applies only to the serving it pinned, "
                         "options and all")


def test_compare_prices_each_card_under_a_stack(root: Path) -> None:
    """``compare`` had no ``--stack``: each card is priced at the stack's best batch (as ``best --stack``), fastest
    by its expected tokens/s, with its ratio to the limit's best; a card the stack cannot price, or that the model
    does not fit, is refused by name; the cards its runs never measured are named in one warning."""
    result = invoke("compare", R1, "--cards", "h200_sxm_141gb,rtx_4090,a100_sxm4_80gb", "--stack", STACK,
                    root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (f"best batch under stack {STACK} on each card, fastest first: {R1}: "
                        "deepseek-r1-distill-qwen-7b-q4_k_m")
    assert lines[3].split() == ["card", "batch", "tokens/s", "×", "limit", "TPOT", "binds", "held", "weakest",
                                "provenance"]
    rows = [line.split()[:5] for line in lines[5:8]]
    assert rows == [["h200_sxm_141gb", "1", "237.4", "0.007122", "4.211"], ["a100_sxm4_80gb", "1", "143.3", "0.01094",
                    "6.978"], ["rtx_4090", "1", "130.7", "0.02302", "7.652"]]
    # walkthrough 21: and the cards whose expected best lies outside the stack's fitted span
    assert result.stderr.splitlines() == [
        H200_REACH,
        f"passprice: warning: stack {STACK}'s expected price lies outside the 0.3425 … 0.8519 × the limit its 111 "
        "fitted runs measured, for h200_sxm_141gb (0.2384 at batch 1): the fit is extrapolated there",
    ]
    data = json.loads(invoke("compare", R1, "--cards", "h200_sxm_141gb", "--stack", STACK, "--json",
                             root=root).stdout)
    row = data["cards"][0]
    assert (data["stack"], row["stack"], row["batch"], row["expected"]["batch"]) == (STACK, STACK, 580, 1)
    assert row["expected"]["tokens_per_s"] == pytest.approx(237.44787516369843, rel=1e-12)
    assert row["tpot_s"] == pytest.approx(0.004211450615469152, rel=1e-12)
    # a card the model does not fit: a refused row, by name
    result = invoke("compare", "--checkpoint", "llama3-70b-q4_k_m", "--limit", "512", "--position", "256",
                    "--stack", STACK, "--cards", "h100_sxm5_80gb,rtx_4090", root=root)
    assert result.exit_code == 0, result.output
    assert [line.split()[:3] for line in result.stdout.splitlines()[5:7]] == [
        ["h100_sxm5_80gb", "1", "41"], ["rtx_4090", "—", "—"]
    ]
    assert "refused: NotResident: the card memory must hold 42,680,303,616 bytes" in result.stdout
    # a stack that cannot price the serving anywhere: refused (exit 1) by name
    result = invoke("compare", R1, "--cards", "h200_sxm_141gb,mi300x", "--stack", "lmdeploy-turbomind-2312",
                    root=root)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("passprice: refused: no card of the 2 compared prices it: StackLacks: stack "
                                    "'lmdeploy-turbomind-2312' has no share.array fact")
    assert result.stderr.rstrip().endswith("(on h200_sxm_141gb; the others likewise)")


def _git(repo: Path, *args: str) -> None:
    import os
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module")
def reviewed(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository of the registry with lock ``s`` (made under the stack) and the MI300X lock; commit ``stack``
    moves the stack's ``overhead.layer`` and ``memory.reserved`` (whose locator says ``n_ctx 512``), commit
    ``capacity`` (on the first) the MI300X's memory.capacity."""
    import shutil

    repo = tmp_path_factory.mktemp("review") / "repo"
    repo.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(root / folder if (root / folder).exists() else Path(__file__).parent.parent / folder,
                        repo / folder)
    (repo / "locks").mkdir()
    for name in ("s", "r1-qwen7b-mi300x-int8kv"):
        shutil.copyfile(root / "locks" / f"{name}.lock.toml", repo / "locks" / f"{name}.lock.toml")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "base")
    stack = repo / "facts" / "stacks" / f"{STACK}.toml"
    _edit(stack, "value = 96.63\n", "value = 90\n")
    _edit(stack, "[memory.reserved]\nvalue = 512\n", "[memory.reserved]\nvalue = 600\n")
    _git(repo, "commit", "-q", "--no-verify", "-am", "stack")
    _git(repo, "checkout", "-q", "-b", "capacity", "main~1")
    _edit(repo / "facts" / "cards" / "mi300x.toml", "[memory.capacity]\nvalue = 192\n",
          "[memory.capacity]\nvalue = 200\n")
    _git(repo, "commit", "-q", "--no-verify", "-am", "capacity")
    return repo


def test_diff_shows_a_stack_locks_expected_price_and_no_setting_as_the_figure(reviewed: Path) -> None:
    """A change moving a stack lock's expected price showed the limit alone ("996.1 → 996.1 (+0 %)"); the expected
    tokens/s before → after, and what the lock records, are shown (text and markdown). And the ``to verify`` line
    of ``memory.reserved`` 512 → 600 MiB said "the locator quotes 512" of its locator's ``n_ctx 512``: a setting's
    number is not the figure a locator quotes."""
    result = invoke("diff", "main~1", "main", root=reviewed)
    assert result.exit_code == 1, result.output  # the locked expected price moved, the lock not updated
    lines = result.stdout.splitlines()
    # slip round 35: overhead.layer edited by hand (96.63 -> 90 us) is not what its fit gives; the lock rests on it
    at = lines.index("  s (locks/s.lock.toml, card h200_sxm_141gb, price): rests on stack.overhead.layer, no longer "
                     "the fit of stack llamacpp-cuda-2405's runs: re-fit it (`passprice calibrate --stack "
                     "llamacpp-cuda-2405`); price moved, lock not updated (expected.pass_s)")
    # walk53: each fact whose value moved under an unchanged citation is named on the lock's cites line
    assert lines[at + 2].startswith("    cites     stack.overhead.layer: value changed, citation unchanged: "
                                    "passprice-stack-calibration, the 111 runs of stack llamacpp-cuda-2405 ")
    assert "; stack.memory.reserved: value changed, citation unchanged: xiongjiedai-gpu-benchmarks, " in lines[at + 2]
    assert lines[at + 4: at + 9] == [
        "    tokens/s  996.1 → 996.1  (limit +0 %)",  # arch43: was "(+0 %)", read as the lock's move
        # left23: priced again with the stack re-fitted, the expected price does not move at all
        "    recomputed  tokens/s 996.1 → 996.1 (+0 %), as HEAD wrote it +0 %; expected 237.4 → 237.4 (+0 %), once "
        "stack.overhead.layer follows from its inputs (recomputed and the stack re-fitted as passprice would write "
        "them; the re-fit moves overhead.layer 90 µs → 96.63 µs)",
        # walkthrough 29: what each changed fact alone does to the recorded price
        "    alone     stack.overhead.layer: tokens/s unchanged (fixed_s 2.706 ms → 2.52 ms, -6.861 %), expected "
        "tokens/s +4.611 %; stack.memory.reserved: tokens/s unchanged, expected tokens/s unchanged  (each changed "
        "fact alone: the lock's pinned inputs with only it as HEAD has it)",
        "    recorded  996.1",
        f"    expected  237.4 → 248.4  (+4.611 %) under stack {STACK}, recorded 237.4  HEAD's expected price rests on "
        "stack facts that do not follow: not a price to publish",
    ]
    verify = next(line.strip() for line in lines if line.strip().startswith("to verify: the value moved (512 MiB"))
    assert verify.startswith("to verify: the value moved (512 MiB → 600 MiB) but its citation did not: does "
                             "xiongjiedai-gpu-benchmarks: ")
    # its note's "512 MiB in all" kept under 600 MiB is asked of too (walkthrough 41)
    assert verify.endswith(" say 600 MiB?; its note still states 512 MiB: is the note this figure's?")
    markdown = invoke("diff", "main~1", "main", "--format", "markdown", root=reviewed).stdout
    assert (f"- `s`: expected tokens/s 237.4 → 248.4  (+4.611 %) under stack {STACK}, recorded 237.4 ❌ (on stale "
            "stack facts)" in markdown.splitlines())


def test_quoted_figures_leave_settings_and_names_out() -> None:
    from passprice.review.changes import _quoted_figures

    assert _quoted_figures("'GPU Memory Bandwidth 4.8TB/s'") == {4.8}
    assert _quoted_figures("'INT8 Tensor Core 3,958 TOPS'") == {3958.0}
    # a model size (7B) is no quoted figure (tests/test_fix188.py)
    assert _quoted_figures("'VRAM scratch buffer: 70.50 MiB' (Llama 7B, n_ctx 512)") == {70.5}
    assert _quoted_figures("llama-bench pp512 tg128, build b2824, -c 4096, --ctx-size=8192, n_gpu_layers=99") == set()


def test_a_capacity_change_says_what_moved(reviewed: Path) -> None:
    """After an MI300X capacity change the review read "+0 %" and "❌ price moved, lock not updated
    (capacity_bytes)": it says the figure that moved, recorded → today, and that tokens/s did not."""
    review = ("price moved, lock not updated (capacity_bytes 192 GB → 200 GB (+4.167 %); tokens/s did not move)")
    result = invoke("diff", "main~1", "capacity", root=reviewed)
    assert result.exit_code == 1, result.output
    assert ("  r1-qwen7b-mi300x-int8kv (locks/r1-qwen7b-mi300x-int8kv.lock.toml, card mi300x, price): " + review
            in result.stdout.splitlines())
    markdown = invoke("diff", "main~1", "capacity", "--format", "markdown", root=reviewed).stdout
    assert (f"| `r1-qwen7b-mi300x-int8kv` | `memory.capacity` | held → still holds | 842.6 | 842.6 | 842.6 | +0 % | "
            f"memory | ❌ {review} |") in markdown.splitlines()


def test_audit_under_a_stack_beyond_its_batches_names_the_batch_to_price_at(root: Path) -> None:
    """``audit SERVING --stack S`` refused BeyondStack at batch 64 without suggesting ``--batch 1``: the refusal
    names the nearest batch the stack's runs reach (the llama.cpp stack's 1; LMDeploy's 64 past it)."""
    result = invoke("audit", R1, "--stack", STACK, "--batch", "64", root=root)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == (
        f"passprice: refused: BeyondStack: {STACK} was calibrated on batch 1 … 1; this price needs batch 64; price at "
        "batch 1 (--batch 1, the largest its runs reach), price the limit (without --stack), or calibrate the stack "
        "on runs at that batch"
    )
    result = invoke("audit", R1, "--stack", STACK, "--batch", "1", root=root)
    assert result.exit_code == 0, result.output
    # a drafted pass whose rows lie outside at every batch names no batch
    from passprice.stacks import BeyondStack, Held

    held = Held(STACK, (1, 1), (0.0, 8192.0))
    with pytest.raises(BeyondStack) as e:
        held.check_batch(1, 2)
    assert "price at batch" not in str(e.value)
    with pytest.raises(BeyondStack) as e:
        Held(STACK, (4, 12), (0.0, 8192.0)).check_batch(3, 1)
    assert "; price at batch 4 (--batch 4, the smallest its runs reach), " in str(e.value)


def test_audit_shows_a_binary_byte_figure_as_price_does(root: Path) -> None:
    """``audit`` printed ``115088 KiB`` where ``price`` prints ``117.9 MB``: the value as written, and beside it the
    figure in price's decimal units (115,088 × 1,024 B = 117.85 MB)."""
    price = invoke("price", R1, root=root).stdout
    assert "  on chip       36.86 kB of 117.9 MB (0.0 %)" in price.splitlines()
    text = invoke("audit", R1, root=root).stdout
    row = next(line for line in text.splitlines() if line.startswith("!  on_chip.capacity"))
    assert row.split("  estimated")[0].split(None, 2)[2].strip() == "115088 KiB (117.9 MB)"
    markdown = invoke("audit", R1, "--format", "markdown", root=root).stdout
    assert "| `on_chip.capacity` | 115088 KiB (117.9 MB) |" in markdown
    # decimal units are shown as written only
    assert "4.8 TB/s  published" in text and "(4.8 TB/s)" not in text
