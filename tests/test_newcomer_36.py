"""Findings of the 36th README-only walkthrough (issue 13, a researcher's): comparing how a mixture of experts
(``qwen3-30b-a3b``, ``deepseek-v3``, ``gpt-oss``) and a dense model price across the shipped cards, adding a card of
their own from a datasheet and a measured routing record, locking the price they would publish and citing it. Each
finding is kept as a reproducer: a drafting method with too few acceptance figures asked for a figure the command
line cannot give (``give one acceptance figure in [0, 1] per drafted token``); the audit of a lock, the text a paper
would quote, named neither the lock's digest nor its pricing model's, and no README line said what to cite;
``validate``'s ``error`` was "its relative error against the measurement", its sign unsaid; ``simulate`` counted a
routing's hot set as a share where ``price`` counts it in experts; ``speculate`` of a mixture of experts without a
routing record named no record that could price it; and the README listed no sweep column."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke
from passprice.locks import lock_document, read_lock
from passprice.registry import embedded_root
from passprice.serving import BadDraft

BEST_LOCK = "locks/r1-qwen7b-h200-best.lock.toml"


def _lock_table(path: str) -> dict[str, object]:
    table: dict[str, object] = tomllib.loads((REPO / path).read_text(encoding="utf-8"))["lock"]
    return table


# --- 1. a drafting method with fewer acceptance figures than the drafted tokens says what to do ----------------------


def test_1_a_draft_longer_than_its_methods_figures_names_the_method_its_file_and_the_fix() -> None:
    # Before: "BadDraft: bad draft: 2 drafted tokens with acceptance [0.85]: give one acceptance figure in [0, 1]
    # per drafted token" — no option gives one; deepseek-v3-mtp states acceptance.1 alone.
    result = invoke("price", "deepseek-v3-h200", "--draft-tokens", "2", "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data == {
        "refusal": "BadDraft",
        "detail": "2 drafted tokens with acceptance [0.85]",
        "message": "bad draft: 2 drafted tokens with acceptance [0.85]: drafting method deepseek-v3-mtp gives "
        "acceptance figures for 1 draft (facts/drafts/deepseek-v3-mtp.toml), so a longer draft would be priced on a "
        "guess: draft at most 1 token (--draft-tokens 1), or add acceptance.2 to that file, cited as every fact is",
    }
    text = invoke("price", "deepseek-v3-h200", "--draft-tokens", "2")
    assert text.exit_code == 1 and text.stdout == ""
    assert text.stderr == f"passprice: refused: BadDraft: {data['message']}\n"
    # the method's file states one figure, as the message says
    method = tomllib.loads((REPO / "facts/drafts/deepseek-v3-mtp.toml").read_text(encoding="utf-8"))
    assert sorted(method["acceptance"]) == ["1"] and method["acceptance"]["1"]["value"] == 0.85


def test_1_a_draft_of_three_figures_drafting_five_says_three_and_acceptance_4() -> None:
    result = invoke("price", "qwen35-27b-h200-mtp", "--draft-tokens", "5", "--no-lock", "--json")
    assert result.exit_code == 1, result.output
    message = json.loads(result.stdout)["message"]
    assert message.endswith(
        "drafting method qwen35-mtp gives acceptance figures for 3 drafts (facts/drafts/qwen35-mtp.toml), so a "
        "longer draft would be priced on a guess: draft at most 3 tokens (--draft-tokens 3), or add acceptance.4 to "
        "that file, cited as every fact is"
    )


def test_1_a_bad_draft_with_no_method_keeps_its_old_words() -> None:
    # an acceptance figure out of [0, 1], or a draft no registered method made: the figure is what to fix
    assert str(BadDraft("2 drafted tokens with acceptance [1.5, 0.5]")) == (
        "bad draft: 2 drafted tokens with acceptance [1.5, 0.5]: give one acceptance figure in [0, 1] per drafted "
        "token"
    )
    assert BadDraft("x").fields() == {"detail": "x"}


# --- 2. the audit of a lock names what identifies the price: the lock's digest and its pricing model's --------------


def test_2_the_audit_of_a_lock_names_its_digest_and_pricing_model_and_what_to_cite() -> None:
    table = _lock_table(BEST_LOCK)
    digest, model = table["digest"], table["pricing_model"]
    assert isinstance(digest, str) and re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert isinstance(model, str) and re.fullmatch(r"sha256:[0-9a-f]{64}", model)
    text = invoke("audit", BEST_LOCK)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    at = lines.index(f"lock          r1-qwen7b-h200-best: digest {digest}; pricing model {model}")
    assert lines[at + 1] == (
        "              to cite this price: the lock's name and digest, which cover every pinned fact, the "
        "checkpoint's content, the serving, the pricing model and the recorded price; `passprice reproduce "
        f"{BEST_LOCK}` re-prices it from them bit for bit"
    )
    markdown = invoke("audit", BEST_LOCK, "--format", "markdown").stdout
    assert (f"\n**lock** r1-qwen7b-h200-best: digest {digest}; pricing model {model} (to cite this price: the "
            "lock's name and digest, which cover every pinned fact") in markdown
    data = json.loads(invoke("audit", BEST_LOCK, "--json").stdout)
    assert (data["lock_digest"], data["pricing_model"]) == (digest, model)


def test_2_the_lock_digest_covers_the_price_and_every_pin_as_the_readme_says() -> None:
    # the digest is sha256 over everything the lock holds but itself: the recorded price is part of it
    lock = read_lock(embedded_root().locks / "r1-qwen7b-h200-best.lock.toml", embedded_root().schema)
    assert lock_document(lock)["lock"]["digest"] == lock.info.digest
    import attrs

    moved = attrs.evolve(lock, price={**lock.price, "tokens_per_s": 1.0})
    assert lock_document(moved)["lock"]["digest"] != lock.info.digest
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "**To cite a price** (a paper, a report), lock it and cite the lock's name and its `[lock] digest`" in readme


def test_2_the_audit_of_a_serving_has_no_lock_line() -> None:
    text = invoke("audit", "r1-qwen7b-h200").stdout
    assert not any(line.startswith("lock          ") for line in text.splitlines())
    data = json.loads(invoke("audit", "r1-qwen7b-h200", "--json").stdout)
    assert "lock_digest" not in data and "pricing_model" not in data


# --- 3. validate's error: its formula and sign ------------------------------------------------------------------------


def test_3_explain_error_gives_its_formula_and_sign_and_validate_computes_it_so() -> None:
    out = invoke("explain", "error").stdout
    assert ("`error` its relative error against the measurement: (expected − measured) / measured, positive where "
            "the stack expects more tokens/s than the run measured (164.8 against 145.55 tokens/s is +13.2 %); "
            "`calibrate`'s mean and max `|error|` are of the same figure, over the runs it fitted (`in sample`) or "
            "held out.") in out
    data = json.loads(invoke("validate", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    run = next(r for r in data["runs"] if r["id"] == "xd3.h100_pcie_80gb.8b-q4km.tg512")
    assert run["measured"] == 145.55 and round(run["expected"], 1) == 164.8
    assert abs(run["error"] - (run["expected"] - run["measured"]) / run["measured"]) < 1e-12
    assert round(100 * run["error"], 1) == 13.2
    # calibrate's in-sample mean |error| is validate's mean over the same 111 runs
    assert len(data["runs"]) == 111 and round(100 * data["mean_error"], 1) == 5.6


# --- 4. simulate counts the hot set in experts, as price does ---------------------------------------------------------


def test_4_simulate_counts_the_hot_set_in_experts_as_price_does() -> None:
    line = ("a hot set of 58 of 128 experts (45.31 %) takes 90 % of the routed token-slots, measured "
            "(qwen3-30b-a3b-measured)")
    sim = invoke("simulate", "qwen3-30b-a3b-h200", "--synthetic", "20", "--seed", "7", "--rate", "200")
    assert sim.exit_code == 0, sim.output
    assert f"\n  routing     {line}\n" in sim.stdout
    assert f"\n  routing       {line}\n" in invoke("price", "qwen3-30b-a3b-h200").stdout
    uniform = invoke("simulate", "gpt-oss-20b-h200", "--synthetic", "20", "--seed", "7", "--rate", "200")
    assert "\n  routing     uniform: every expert equally likely, assumed (uniform)\n" in uniform.stdout


# --- 5. speculate of a mixture of experts without a routing record names the records -------------------------------


def test_5_speculate_without_a_routing_record_is_refused_routed_naming_the_records(tmp_path: Path) -> None:
    # walk48: DeepSeek-V3's 403.5 GB fit no registered card, and weights no routing makes fit are refused NotResident
    # before Routed; this copy's MI300X holds 960 GB, so the refusal is Routed's.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "mi300x.toml"
    card.write_text(card.read_text(encoding="utf-8").replace("value = 192\n", "value = 960\n", 1), encoding="utf-8")
    args = ("speculate", "--checkpoint", "deepseek-v3-q4_k_m", "--card", "mi300x", "--draft", "deepseek-v3-mtp",
            "--tokens", "1")
    # Before: "every draft length is refused: Routed: … as an assumption)", no record named
    result = invoke(*args, root=root)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (
        "passprice: refused: Routed: a mixture of 256 experts: which experts a pass reads depends on how its rows "
        "route; name a routing record (facts/routing/NAME.toml) with --routing NAME or `routing = NAME` in the "
        "serving (facts/routing/uniform.toml states uniform routing as an assumption); registered here for 256 "
        "experts, 8 a token: uniform (assumed; any checkpoint)\n"
    )
    data = json.loads(invoke(*args, "--json", root=root).stdout)
    assert (data["refusal"], data["expert_count"], data["records"]) == (
        "Routed", 256, ["uniform (assumed; any checkpoint)"])
    # the same words price gives
    price = invoke("price", "--checkpoint", "deepseek-v3-q4_k_m", "--card", "mi300x", root=root)
    assert price.exit_code == 1 and price.stderr == result.stderr
    shipped = invoke("price", "--checkpoint", "deepseek-v3-q4_k_m", "--card", "mi300x")
    assert shipped.exit_code == 1 and shipped.stderr.startswith("passprice: refused: NotResident: ")


# --- 6. the README lists the sweep's columns as a sweep writes them ---------------------------------------------------


def test_6_the_readme_lists_every_sweep_column_in_order(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("with the\ncolumns `card`")
    said = readme[start:readme.index("a whole count,", start)]
    named = [n for n in re.findall(r"`([a-z_]+)`", said) if n not in ("null",)]
    out = tmp_path / "g.csv"
    result = invoke("sweep", "qwen3-30b-a3b-h200", "--cards", "h200_sxm_141gb,rtx_3080", "--batches", "1,2",
                    "--positions", "512", "-o", str(out))
    assert result.exit_code == 0, result.output
    rows = out.read_text(encoding="utf-8").splitlines()
    assert named == rows[0].split(",")
    assert len(named) == 22
    priced = rows[1].split(",")
    assert priced[3] == "qwen3-30b-a3b-measured" and ";" in priced[20] and priced[21] == ""
    refused = rows[3].split(",")  # rtx_3080 holds no batch of it
    assert refused[0] == "rtx_3080" and refused[21] == "NotResident" and refused[9:21] == [""] * 12
    data = json.loads(invoke("sweep", "qwen3-30b-a3b-h200", "--cards", "rtx_3080", "--batches", "1",
                             "--positions", "512", "--json").stdout)
    assert data[0]["weakest"] is None and data[0]["tokens_per_s"] is None and data[0]["refusal"] == "NotResident"
    dense = json.loads(invoke("sweep", "r1-qwen7b-h200", "--batches", "1", "--positions", "512", "--json").stdout)
    assert dense[0]["routing"] is None and dense[0]["weakest"] == "scale;on_chip.capacity"
