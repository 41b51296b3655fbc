"""Findings of the tenth README-only walkthrough (walk10's share; the lead's are in test_newcomer_10.py): commands
that said a lock "holds" of the same override one said was not the locked price, a work line that hid an F16
checkpoint's float matrix products, three weight sizes of one checkpoint, one error line for two wrong names, an
option an error did not name, a lock's reproduction that contradicted itself, a stack lock whose expected price was
never shown, and a sweep picture that called the best of its grid the best batch."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke

R1 = "r1-qwen7b-h200"
LOCKS = (f"under locks {R1} (locks/{R1}.lock.toml), {R1}-best (locks/{R1}-best.lock.toml), {R1}-llamacpp "
         f"(locks/{R1}-llamacpp.lock.toml): ")
CHANGED = ("serving differs from the locked one: contexts: share 1.0, position 2048.0, limit 4096 → share 1.0, "
           "position 512.0, limit 1024")


def test_every_command_says_the_same_of_an_override_the_locks_did_not_price() -> None:
    roofline = invoke("roofline", "h200_sxm_141gb", R1, "--limit", "1024")
    assert roofline.exit_code == 0, roofline.output
    assert roofline.stdout.endswith(
        f"  lock: {LOCKS}floors hold, but the prices shown are NOT the locked ones (below)\n"
        f"                {CHANGED}\n"
    ), roofline.stdout
    best = invoke("best", R1, "--limit", "1024")
    assert best.exit_code == 0, best.output
    assert (f"  lock          {LOCKS}floors hold, but the price is NOT the one {R1}-best records (below)\n"
            in best.stdout)
    assert best.stdout.endswith(f"                {CHANGED}\n"), best.stdout
    # the registered serving unchanged: price and best compare and say so; max-batch's figure is no price
    # the shipped stack lock records the same limit price (996.1 tokens/s) as the price lock
    assert invoke("price", R1).stdout.endswith(f"  lock          {LOCKS}floors hold, and the price is the one {R1} "
                                               f"and {R1}-llamacpp record\n")
    assert invoke("best", R1).stdout.endswith(f"  lock          {LOCKS}floors hold, and the price is the one {R1}-best "
                                              "records\n")
    assert invoke("max-batch", R1).stdout.endswith(
        f"  lock  {LOCKS}floors hold; the serving is the locked one, its prices not compared with the locked ones "
        f"(`passprice reproduce {R1}` compares them)\n")


def test_a_price_under_only_a_best_lock_says_there_is_no_price_lock_to_compare_with(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "locks" / f"{R1}.lock.toml").unlink()
    (root / "locks" / f"{R1}-llamacpp.lock.toml").unlink()  # the shipped stack lock is a price lock too
    result = invoke("price", R1, root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(
        f"  lock          under lock {R1}-best (locks/{R1}-best.lock.toml): floors hold; {R1}-best is no price lock "
        f"to compare the price with (`passprice reproduce {R1}-best` compares its own)\n"
    ), result.stdout


def test_a_sweep_at_other_positions_says_its_rows_there_are_not_the_locked_serving() -> None:
    result = invoke("sweep", R1, "--positions", "512,4096", "--batches", "1")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"passprice: {R1}: {LOCKS}floors hold; no row is the locked serving's, so its prices are not compared with "
        f"the locked ones (`passprice reproduce {R1}` compares them); its rows at position 512, 4096 are not the "
        "locked serving's (position 2048)\n"
        # the row at 4096 refused, said on stderr as a sweep says its refusals (tests/test_fix185.py)
        f"passprice: refused: BadContexts (1 of 2 rows, 1 priced) — {R1} on h200_sxm_141gb at position 4096, batch 1: "
        "bad context mix: position 4096 is not below its limit 4096: a pass at a position writes that position's row, "
        "and a sequence allowed 4096 positions holds rows 0 to 4095: raise --limit or lower --positions\n"
    )
    at_own = invoke("sweep", R1, "--positions", "2048", "--batches", "1")
    assert "its rows at position" not in at_own.stderr, at_own.stderr


def test_the_work_line_shows_the_float_matrix_macs_the_array_term_carries() -> None:
    # llama2-13b's matrices a token-row: 40 layers × (4 × 5120² attention + 3 × 5120 × 13824 FFN) + the 5120 × 32000
    # output head = 12,851,609,600 F16 MACs, riding the A100's tensor.f16 rate (the array term), none integer.
    macs = 40 * (4 * 5120 * 5120 + 3 * 5120 * 13824) + 5120 * 32000
    assert macs == 12_851_609_600
    result = invoke("price", "--checkpoint", "llama2-13b-f16", "--card", "a100_sxm4_80gb", "--limit", "2176",
                    "--position", "1152")
    assert result.exit_code == 0, result.output
    assert ("\n  work/pass     array 0 MAC integer + 12.85 GMAC float matrices (float_matrix_macs, on tensor.f16) · "
            "vector 486.5 MMAC · scale 0 cycle\n") in result.stdout
    best = invoke("best", "--checkpoint", "llama2-13b-f16", "--card", "a100_sxm4_80gb", "--limit", "2176",
                  "--position", "1152", "--stack", "lmdeploy-turbomind-2312")
    assert best.exit_code == 0, best.output
    assert round(33 * macs / 1e8) == 4241  # batch 33: 424.1 GMAC
    assert ("\n  work/pass     array 0 MAC integer + 424.1 GMAC float matrices (float_matrix_macs, on tensor.f16) · "
            "vector 16.05 GMAC · scale 0 cycle\n") in best.stdout
    # a quantized checkpoint's line is as it was: no float matrices ride
    q4 = invoke("price", R1)
    assert "\n  work/pass     array 8.592 GMAC · vector" in q4.stdout, q4.stdout


def test_each_weight_size_of_deepseek_v3_says_what_it_counts() -> None:
    # 411,026,998,272 bytes of tensors = 403,516,178,432 held without drafts (weights + embedding table) + the MTP
    # draft block's 7,510,819,840: one checkpoint, three figures, each now saying which it is.
    assert 403_516_178_432 + 7_510_819_840 == 411_026_998_272
    kv = invoke("kv", "deepseek-v3-q4_k_m")
    assert kv.exit_code == 0, kv.output
    lines = kv.stdout.splitlines()
    assert lines[1] == ("  held once: weights 403 GB (375.3 GiB) + embedding table 521.3 MB (497.1 MiB), without the "
                        "7.511 GB (6.995 GiB) draft (MTP) block, held only when drafting with it")
    assert any(line.startswith("sequences that fit beside the weights (403.5 GB held once, without the 7.511 GB draft "
                               "(MTP) block, held only when drafting with it): ") for line in lines)
    listed = invoke("checkpoints")
    assert ("\n  deepseek-v3-q4_k_m: 411 GB of tensors, with the 7.511 GB draft (MTP) block, held only when drafting "
            "with it; 403.5 GB without drafts (passprice kv's held once)\n") in listed.stdout
    priced = invoke("price", "deepseek-v3-h200")  # drafts one token with the MTP block: holds it
    assert priced.exit_code == 1
    assert priced.stderr == (
        "passprice: refused: NotResident: the card memory must hold 411,173,846,016 bytes but holds 141,000,000,000: "
        "the weights and embedding table alone take 411,026,998,272 bytes (with the 7,510,819,840-byte draft (MTP) "
        "block the serving drafts with), 2.92 times what it holds: no batch fits; a smaller type mix or a larger "
        "card (--host-memory holds sequences in host memory, never weights: passprice prices no weights held off "
        "the card)\n"
    )
    alone = invoke("price", "--checkpoint", "deepseek-v3-q4_k_m", "--card", "h200_sxm_141gb", "--routing", "uniform")
    assert alone.stderr.startswith("passprice: refused: NotResident: the card memory must hold 403,804,012,544 bytes "
                                   "but holds 141,000,000,000: the weights and embedding table alone take "
                                   "403,516,178,432 bytes (without the 7,510,819,840-byte draft (MTP) block, held only "
                                   "when drafting with it), 2.86 times what it holds: "), alone.stderr


def test_a_wrong_checkpoint_and_a_wrong_card_are_two_error_lines() -> None:
    result = invoke("price", "--checkpoint", "llama3-8b-q4km", "--card", "h200")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith(
        "passprice: error: checkpoint 'llama3-8b-q4km': not found in registry/checkpoints; did you "
        "mean llama3-8b-q4_k_m or llama3-8b-f16 or llama3-70b-q4_k_m? (registered: codellama-7b-f16, "), lines[0]
    # (llama3-8b-f16 second since tests/test_fix190.py: the most leading words shared first)
    assert lines[1].startswith(
        "passprice: error: card 'h200': not found in facts/cards; did you mean h200_sxm_141gb or b200? "
        "(registered: a100_pcie_80gb, "), lines[1]
    # one wrong name: its one line, as before
    one = invoke("price", "--checkpoint", "llama3-8b-q4_k_m", "--card", "h200")
    assert one.exit_code == 2 and len(one.stderr.splitlines()) == 1
    assert one.stderr.startswith("passprice: error: card 'h200': not found in "), one.stderr


def test_a_derived_fact_without_a_derivation_is_told_the_option(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    result = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "5", "--unit", "TB/s",
                    "--provenance", "derived", "--source", "nvidia-h200-datasheet", "--locator", "a test's figure",
                    root=root)
    assert result.exit_code == 2 and card.read_bytes() == before
    assert result.stderr == (
        f"passprice: error: {card}: memory.bandwidth.derivation: missing (required): a derived fact says how it is "
        "computed: give --derivation TABLE, e.g. for memory.bandwidth: '{formula = \"a * b\", inputs = {a = {value "
        "= 2, unit = \"1\", locator = \"...\"}, b = {fact = \"OTHER.KEY\"}}}' (its inputs' units giving the fact's; "
        "passprice explain derivation), or another --provenance\n"  # the example for the key set (test_fix190.py)
    )


def test_reproducing_a_first_format_lock_does_not_call_its_missing_digest_a_change(tmp_path: Path) -> None:
    from passprice.pins import pricing_model_digest

    root = copy_root(tmp_path)
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", root / "locks" / "old.lock.toml")
    result = invoke("reproduce", "old", root=root)
    assert result.exit_code == 0, result.output
    today = pricing_model_digest().removeprefix("sha256:")[:12]
    assert (f"\n    pricing model  none pinned (the lock predates pricing-model digests); today's is {today}\n"
            in result.stdout), result.stdout
    assert "pricing model changed (1 →" not in result.stdout and "changed (1 →" not in result.stdout


def test_a_lock_made_under_a_stack_shows_its_expected_price(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    out = root / "locks" / "st.lock.toml"
    made = invoke("lock", R1, "--stack", "llamacpp-cuda-2405", "-o", str(out), root=root)
    assert made.exit_code == 0, made.output
    expected = tomllib.loads(out.read_text(encoding="utf-8"))["price"]
    # 237.4 tokens/s is the recorded [price.expected], 0.2384 its ratio to the limit's 996.1
    assert round(expected["expected"]["tokens_per_s"], 1) == 237.4 and round(expected["ratio"], 4) == 0.2384
    assert round(expected["expected"]["tokens_per_s"] / expected["tokens_per_s"], 4) == 0.2384
    line = ("expected under stack llamacpp-cuda-2405: 237.4 tokens/s at batch 1, binds on memory, weakest estimated "
            "(0.2384 × the limit's 996.1)")
    assert made.stdout.splitlines()[1] == f"  {line}"
    shown = invoke("reproduce", "st", root=root)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[2] == f"  recorded {line}"
    assert "expected.tokens_per_s  237.44787516369843     237.44787516369843          237.44787516369843" in lines
    assert "expected.batch         1                      1                           1" in lines


def test_the_sweep_plot_labels_the_best_of_the_grids_batches_not_the_best_batch() -> None:
    import csv
    import io

    from passprice.plots import sweep_label, sweep_lines

    result = invoke("sweep", R1, "--batches", "1-4096*2")
    assert result.exit_code == 0, result.output
    (label, points), = sweep_lines(list(csv.DictReader(io.StringIO(result.stdout)))).items()
    # the grid's batches are powers of two, and 1,024 does not fit (max-batch 580): its fastest is 512
    assert sweep_label(label, points) == f"{label} (best of the grid's batches: 512, 33,093 tokens/s)"
    assert "batch 580 sequences" in invoke("best", R1).stdout  # best searches every batch
