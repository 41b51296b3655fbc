"""Findings of the twenty-seventh walkthrough: the leftovers a README-only walkthrough found before it (its fixes
were lost with its machine), each kept as a reproducer, then what a new user following the README met."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke

ROUTING = Path("facts") / "routing" / "qwen3-30b-a3b-measured.toml"


def _move_hot_share(root: Path, to: str = "0.85") -> None:
    record = root / ROUTING
    text = record.read_text()
    assert "\nvalue = 0.9\n" in text
    record.write_text(text.replace("\nvalue = 0.9\n", f"\nvalue = {to}\n"))


def test_reproduce_of_a_moe_lock_shows_the_routing_figures_that_moved(tmp_path: Path) -> None:
    # Was one row "routing  changed  changed  changed": the record priced is an object, shown whole.
    root = copy_root(tmp_path)
    _move_hot_share(root)
    result = invoke("reproduce", "locks/qwen3-30b-a3b-h200.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "changed  " not in text.split("field ")[1]
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.startswith("routing.")}
    assert set(rows) == {"routing.distinct", "routing.bytes"}
    recorded, reproduced, today = (float(v) for v in rows["routing.distinct"])
    assert recorded == reproduced == 94.44409867634815
    # D(T) = Σ_e 1 − (1 − p_e)^T at T = 64 token-rows, hot set 58 of 128 experts taking 0.85 of 8 slots a token.
    hot, cold = 8 * 0.85 / 58, 8 * 0.15 / 70
    assert abs(today - (58 * (1 - (1 - hot) ** 64) + 70 * (1 - (1 - cold) ** 64))) < 1e-9
    assert "facts          1 drifted: routing.hot_share: 0.9 (measured) → 0.85 (measured)" in text
    data = json.loads(invoke("reproduce", "locks/qwen3-30b-a3b-h200.lock.toml", "--json", root=root).stdout)
    assert data["today"]["routing"]["distinct"] == today


def _stack_registry(tmp_path: Path) -> Path:
    """Walkthrough 24's registry: stack vllm-w24 calibrated on five runs of Qwen3-30B-A3B on the H200, serving
    w24-moe, and its lock made under the stack."""
    from test_newcomer_24 import MOE, ROUTING, STACK, _registry

    root = _registry(tmp_path)
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0
    made = invoke("new-serving", "w24-moe", "--checkpoint", MOE, "--card", "h200_sxm_141gb", "--batch", "64",
                  "--routing", ROUTING, "--description", "walkthrough 27", root=root)
    assert made.exit_code == 0, made.output
    lock = invoke("lock", "w24-moe", "--stack", STACK, "-o", str(root / "locks" / "w24-moe.lock.toml"), root=root)
    assert lock.exit_code == 0, lock.output
    return root


def test_diff_of_a_moved_run_names_every_stale_stack_fact_the_refit_and_the_move(tmp_path: Path) -> None:
    import shutil

    root = _stack_registry(tmp_path / "made")
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(root, base)
    shutil.copytree(root, head)
    runs = head / "registry" / "measurements" / "w24.toml"
    runs.write_text(runs.read_text().replace("6641.7", "6400.0"))  # the figure and the locator quoting it
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 1, result.output
    text = result.stdout
    # Was "rests on stale stack.overhead.pass: recompute it": one of eight facts fitted together, and a hint to
    # recompute what only a re-fit gives.
    assert ("  w24-moe (locks/w24-moe.lock.toml, card h200_sxm_141gb, price): rests on stack.overhead.pass, "
            "stack.overhead.layer, stack.share.read, stack.share.append, stack.share.array, stack.share.vector, "
            "stack.share.scale, stack.terms.serial, no longer the fit of stack vllm-w24's runs: re-fit them "
            "(`passprice calibrate --stack vllm-w24`)") in text
    # The run's move with numbers: 6,400 / 6,641.7 − 1 = −3.639 %.
    assert ("w24.h200.b64 cited anew (locator decode benchmark: batch 64: 6641.7 tok/s → decode benchmark: batch 64: "
            "6400.0 tok/s, tokens/s 6,641.7 → 6,400 (-3.639 %)): does w24-bench: ") in text
    assert "run w24.h200.b64: 6641.7 tokens/s when derived, 6400 tokens/s now (-3.639 %); re-fitted" in text
    data = json.loads(invoke("diff", str(base), str(head), "--format", "json", root=head).stdout)
    [lock] = [x for x in data["locks"] if x["name"] == "w24-moe"]
    assert [u["path"] for u in lock["unsound"]] == [
        "stack.overhead.pass", "stack.overhead.layer", "stack.share.read", "stack.share.append", "stack.share.array",
        "stack.share.vector", "stack.share.scale", "stack.terms.serial"]


def test_synth_from_a_bare_config_json_does_not_call_it_published(tmp_path: Path) -> None:
    from cli_helpers import REPO

    wrapped = json.loads((REPO / "examples" / "configs" / "llama-3.1-8b.json").read_text())
    bare = tmp_path / "config.json"
    bare.write_text(json.dumps(wrapped["config"]))  # the file as Hugging Face publishes it: no "source"
    root = copy_root(tmp_path)
    made = invoke("synth", str(bare), "--mix", "Q4_K_M", "--import", "bare-llama", root=root)
    assert made.exit_code == 0, made.output
    entry = (root / "registry" / "checkpoints" / "bare-llama.toml").read_text()
    assert "published configuration" not in entry
    assert (f"origin = \"Synthetic, header only: built by passprice synth from the configuration {bare} (model_type "
            "llama; a bare config.json: where it was published is not recorded); no weights exist.") in entry
    audit = invoke("audit", "--checkpoint", "bare-llama", "--card", "h200_sxm_141gb", "--batch", "1", root=root)
    assert audit.exit_code == 0, audit.output
    assert ("    a synthetic header: built from a configuration whose publication is not recorded, no published file "
            "of these bytes") in audit.stdout
    # The wrapped example names where it was published, and says so.
    wrapped_made = invoke("synth", str(REPO / "examples" / "configs" / "llama-3.1-8b.json"), "--mix", "Q4_K_M",
                          "--import", "wrapped-llama", root=root)
    assert wrapped_made.exit_code == 0, wrapped_made.output
    assert ("built by passprice synth from the published configuration "
            "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json (model_type llama); no weights"
            ) in (root / "registry" / "checkpoints" / "wrapped-llama.toml").read_text()


def test_beyond_stack_names_the_context_class_and_the_position_to_price_at() -> None:
    from cli_helpers import refused

    # gemma3-270m-h100: 0.75 of the batch at mean position 1,024 of 4,096 and 0.25 at 16,384 of 32,768; the
    # llama.cpp stack's runs read 0 … 8,192 cached positions. Was: "this price needs position 16,384" alone.
    out = refused("price", "gemma3-270m-h100", "--stack", "llamacpp-cuda-2405", "--batch", "1", name="BeyondStack")
    assert out["message"] == (
        "llamacpp-cuda-2405 was calibrated on cached positions 0 … 8,192; this price needs context class 2 of 2 (0.25 "
        "of the batch: mean position 16,384 of a 32,768 limit); price at position 8,192 (--position 8192, the "
        "largest its runs reach, every class at it), price the limit (without --stack), or calibrate the stack on "
        "runs at that context (measured runs near position 16,384, then passprice calibrate --stack "
        "llamacpp-cuda-2405)")
    assert (out["path"], out["low"], out["high"], out["needs"]) == ("range.position", 0, 8192, 16384)
    # The advice prices.
    inside = invoke("price", "gemma3-270m-h100", "--stack", "llamacpp-cuda-2405", "--batch", "1", "--position",
                    "8192", "--json")
    assert inside.exit_code == 0, inside.output
    assert json.loads(inside.stdout)["expected"]["tokens_per_s"] > 0


def test_the_review_names_a_routing_record_and_its_facts_as_a_lock_does(tmp_path: Path) -> None:
    import shutil

    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(copy_root(tmp_path / "made"), base)
    shutil.copytree(base, head)
    _move_hot_share(head)
    markdown = invoke("diff", str(base), str(head), "--format", "markdown", root=head).stdout
    # Was "| `qwen3-30b-a3b-measured` | `hot_share` |": a routing record read as a checkpoint's name, and a path no
    # lock or price uses.
    assert ("| `routing qwen3-30b-a3b-measured` | `routing.hot_share` | 0.9 | 0.85 | -5.556 % | measured | unchanged |"
            in markdown)
    assert ("- `routing qwen3-30b-a3b-measured` `routing.hot_share` (changed) in "
            "`facts/routing/qwen3-30b-a3b-measured.toml`") in markdown


def test_check_says_when_a_stale_fit_moved_for_more_than_its_runs(tmp_path: Path) -> None:
    root = _stack_registry(tmp_path)
    runs = root / "registry" / "measurements" / "w24.toml"
    runs.write_text(runs.read_text().replace("6641.7", "6400.0"))
    alone = invoke("check", root=root)
    assert alone.exit_code == 1
    [line] = dict.fromkeys(x for x in alone.stdout.splitlines() if "their fit's runs moved" in x)
    assert "as recorded" not in line  # the run alone moved the fit
    _move_hot_share(root)  # and the routing record the runs price
    both = invoke("check", root=root)
    [line] = dict.fromkeys(x for x in both.stdout.splitlines() if "their fit's runs moved" in x)
    assert "run w24.h200.b64: 6641.7 tokens/s when derived, 6400 tokens/s now (-3.639 %); re-fitted" in line
    assert ("; and with the runs as recorded the fit still gives overhead.pass 1982 µs, not 1950 µs; share.read "
            "0.8947, not 0.8564; share.append 0.7956, not 0.7446: a card, checkpoint or routing record "
            "(qwen3-30b-a3b-measured) its runs price changed too (or passprice's pricing code did) (run passprice "
            "calibrate --stack vllm-w24)") in line


def test_audit_says_a_fit_rests_on_its_runs_routing_and_the_source_audit_follows_it(tmp_path: Path) -> None:
    root = _stack_registry(tmp_path)
    audit = invoke("audit", "w24-moe", "--stack", "vllm-w24", root=root).stdout
    assert ("  registry/measurements/w24.toml: 5 runs on 1 card (h200_sxm_141gb), citing w24-bench; priced on routing "
            "record qwen3-30b-a3b-measured (measured)\n") in audit
    # The benchmark the stack was fitted to: a lock under the stack rests on its fitted facts, not memory.reserved
    # alone.
    bench = json.loads(invoke("audit", "--source", "w24-bench", "--json", root=root).stdout)
    [lock] = bench["locks"]
    assert lock["name"] == "w24-moe"
    assert {"stack.memory.reserved", "stack.share.read", "stack.overhead.pass"} <= set(lock["rests_on"])
    # The routing record's source: the stack's fit rests on it through the runs' routing.
    routed = invoke("audit", "--source", "gpu-container-handbook-routing-derisk", root=root).stdout
    assert "serving-stack facts fitted to its measured runs: 12" in routed
    assert ("  (vllm-w24's runs price routing record qwen3-30b-a3b-measured, whose facts cite it: the fit rests on "
            "them)") in routed
    # Runs priced on the uniform assumption: the derived fit says it rests on an assumption.
    runs = root / "registry" / "measurements" / "w24.toml"
    runs.write_text(runs.read_text().replace('routing = "qwen3-30b-a3b-measured"', 'routing = "uniform"'))
    assumed = invoke("audit", "w24-moe", "--stack", "vllm-w24", root=root).stdout
    assert ("citing w24-bench; priced on routing record uniform (assumed): the stack's fitted facts, derived, rest on "
            "this assumed routing as on the runs (a measured record of the runs' routing would replace it)") in assumed


def test_the_audit_names_the_header_file_an_entry_was_imported_from_and_what_identifies_it() -> None:
    import hashlib
    import lzma

    from cli_helpers import REPO

    text = invoke("audit", "r1-qwen7b-h200").stdout
    # The entry's source is a bare file name: said to be one, with what finds the file (its decompressed sha256).
    assert ("    header file: deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz, the name it was imported from (the "
            "entry keeps no folder: the header sha256 above, of its header bytes decompressed, identifies it)\n"
            ) in text
    data = (REPO / "tests" / "data" / "deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz").read_bytes()
    digest = hashlib.sha256(lzma.decompress(data)).hexdigest()
    assert f"    header sha256: {digest}\n" in text
    cited = json.loads(invoke("audit", "r1-qwen7b-h200", "--json").stdout)["checkpoint"]
    assert cited["header_file"] == "deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz"


def test_compare_of_a_mixture_of_experts_names_the_routing_every_row_rests_on() -> None:
    # Part 2's persona: an ML engineer choosing the H200 or the MI300X for Qwen3-30B-A3B within 30 ms a token.
    result = invoke("compare", "qwen3-30b-a3b-h200", "--cards", "h200_sxm_141gb,mi300x", "--max-tpot", "0.03")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2] == ("  routing a hot set of 58 of 128 experts (45.31 %) takes 90 % of the routed token-slots, "
                        "measured (qwen3-30b-a3b-measured): every row rests on it (--routing NAME prices another)")
    dense = invoke("compare", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb").stdout
    assert "  routing " not in dense


def test_two_moe_prices_checked_by_hand() -> None:
    # MI300X, uniform routing, batch 64: D = 128 (1 − (1 − 8/128)^64) = 125.94 experts a layer read; their bytes
    # 17,553,162,240 × D / 128, plus 822,597,632 B of the rest; memory = W / (5.3 TB/s × 0.7302) + 64 × 201,424,896 B
    # / (5.3 TB/s × 0.7717) = 4.675 + 3.152 = 7.827 ms: 8,176.7 tokens/s.
    mi = json.loads(invoke("price", "qwen3-30b-a3b-mi300x", "--json").stdout)
    distinct = 128 * (1 - (1 - 8 / 128) ** 64)
    weights = 822597632 + 17553162240 * distinct / 128
    assert abs(mi["routing"]["distinct"] - distinct) < 1e-9
    assert abs(mi["weight_bytes"] - weights) < 1e-3
    memory = weights / (5.3e12 * 0.7302) + 64 * 201424896 / (5.3e12 * 0.7717)
    assert abs(mi["tokens_per_s"] - 64 / memory) < 1e-6 and round(mi["tokens_per_s"], 1) == 8176.7
    # H200, measured skew, its best batch 605: p_hot = 8 × 0.9 / 58, p_cold = 8 × 0.1 / 70; the non-expert bytes
    # grow by one 1,152-byte embedding row a token-row (822,523,904 + 605 × 1,152); memory = W / (4.8 TB/s ×
    # 0.9333) + 605 × 201,424,896 B / (4.8 TB/s × 0.8646) = 4.100 + 29.364 = 33.46 ms: 18,079.3 tokens/s.
    h200 = json.loads(invoke("best", "qwen3-30b-a3b-h200", "--json").stdout)
    assert h200["batch"] == 605
    hot, cold = 8 * 0.9 / 58, 8 * 0.1 / 70
    distinct = 58 * (1 - (1 - hot) ** 605) + 70 * (1 - (1 - cold) ** 605)
    weights = 822523904 + 605 * 1152 + 17553162240 * distinct / 128
    assert abs(h200["weight_bytes"] - weights) < 1e-3
    memory = weights / (4.8e12 * 0.9333) + 605 * 201424896 / (4.8e12 * 0.8646)
    assert abs(h200["tokens_per_s"] - 605 / memory) < 1e-6 and round(h200["tokens_per_s"], 1) == 18079.3


def test_reproduce_of_a_stack_lock_marks_a_fit_the_routing_change_left_stale(tmp_path: Path) -> None:
    root = _stack_registry(tmp_path)
    clean = json.loads(invoke("reproduce", "locks/w24-moe.lock.toml", "--json", root=root).stdout)
    assert clean["stale_stack"] == []
    _move_hot_share(root)  # the routing record the stack's five runs price
    text = invoke("reproduce", "locks/w24-moe.lock.toml", root=root).stdout
    assert ("    stale          stack.overhead.pass, stack.share.read, stack.share.append no longer the fit of stack "
            "vllm-w24's runs (a run, or a card, checkpoint or routing record they price, changed): today's expected "
            "column rests on them as facts/stacks/vllm-w24.toml holds them today, and so does the pinned column (the "
            "lock pinned them as they are); re-fit with `passprice calibrate --stack vllm-w24`") in text
    data = json.loads(invoke("reproduce", "locks/w24-moe.lock.toml", "--json", root=root).stdout)
    assert data["stale_stack"] == ["stack.overhead.pass", "stack.share.read", "stack.share.append"]


def test_simulate_of_a_mixture_of_experts_names_its_routing() -> None:
    result = invoke("simulate", "qwen3-30b-a3b-h200", "--synthetic", "20", "--seed", "7", "--rate", "200")
    assert result.exit_code == 0, result.output
    # counted in experts as price shows it (walkthrough 36)
    assert ("  routing     a hot set of 58 of 128 experts (45.31 %) takes 90 % of the routed token-slots, measured "
            "(qwen3-30b-a3b-measured)\n") in result.stdout
    dense = invoke("simulate", "r1-qwen7b-h200", "--synthetic", "20", "--seed", "7", "--rate", "200")
    assert "  routing " not in dense.stdout


def test_routed_names_the_records_registered_for_its_experts() -> None:
    from cli_helpers import refused

    # Was: only "facts/routing/uniform.toml states uniform routing as an assumption", though the registry holds a
    # measured record written for this very checkpoint.
    out = refused("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "mi300x", "--batch", "8", name="Routed")
    assert out["records"] == ["qwen3-30b-a3b-measured (measured; for qwen3-30b-a3b-q4_k_m)",
                              "uniform (assumed; any checkpoint)"]
    result = invoke("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "mi300x", "--batch", "8")
    assert result.stderr.endswith("; registered here for 128 experts, 8 a token: qwen3-30b-a3b-measured (measured; for "
                                  "qwen3-30b-a3b-q4_k_m), uniform (assumed; any checkpoint)\n")
    # gpt-oss-20b has 32 experts: the 128-expert record is not offered.
    other = refused("price", "--checkpoint", "gpt-oss-20b-mxfp4", "--card", "mi300x", "--batch", "8", name="Routed")
    assert other["records"] == ["uniform (assumed; any checkpoint)"]


def test_explain_times_limit_is_the_stacks_ratio_not_speculates_speedup() -> None:
    # compare --stack's "× limit" column led `passprice explain "× limit"` to speculate's speedup.
    said = invoke("explain", "× limit").stdout
    assert said.startswith("stack: a serving runtime of a build range")
    assert ("A `× limit` column (compare --stack, speculate --stack) is the expected tokens/s over the card's "
            "limit: in compare, the limit at its own best batch, which may be larger than the stack's."
            ) in " ".join(said.split())


def test_the_readme_s_source_audit_is_what_the_command_prints() -> None:
    from cli_helpers import REPO

    # The README's block lacked the `note:` line the source record's caveat prints.
    readme = (REPO / "README.md").read_text()
    block = readme.split("$ passprice audit --source azure-ai-benchmarking-guide\n", 1)[1].split("\n```", 1)[0]
    assert invoke("audit", "--source", "azure-ai-benchmarking-guide").stdout.rstrip("\n") == block
