"""Walkthrough 59 (a new user's walk through the README): what the README says must be what passprice does. The
README's lock of a sweep row was refused where the tour runs it (at the checkout's top folder: its ``-o`` named a
file inside the registry but outside ``locks/``); ``diff --json``'s key table left out ``behind``; the MoE stack price
by hand gave its limit as 1,447.8 where ``price`` prints 1,447.9; the review walkthrough quoted ``fact set``'s line
without the parts it says changed; the JSON of a price left out ``best``'s ``memory_use`` and ``float_matrix_macs``;
``explain`` called four ``--json`` keys the README names no term and read ``.pricing_model.commit`` as a source's;
the README did not name the stored copy of the H200 datasheet's table. Every ``$ passprice`` transcript of the README
is held to what its command prints."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.registry import Root
from passprice.review import diff

README = (REPO / "README.md").read_text(encoding="utf-8")


def _inline_command(starts: str) -> list[str]:
    """The one inline ``passprice …`` command of the README (outside fenced blocks) that begins with ``starts``, its
    words as a shell splits them, a line break inside it read as a space."""
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    found = {re.sub(r"\s*\n\s*", " ", c) for c in re.findall(r"`(passprice [^`]+)`", prose)}
    matching = [c for c in found if c.startswith(starts)]
    assert len(matching) == 1, matching
    return shlex.split(matching[0])


def test_the_readme_lock_of_a_sweep_row_runs_at_the_top_folder(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the README's ``passprice lock --checkpoint qwen3-30b-a3b-q4_k_m … -o moe64.lock.toml``, run at the
    checkout's top folder as the tour says, exited 2: "moe64.lock.toml …: inside the registry, locks are read from
    locks/NAME.lock.toml only". Now it names ``locks/moe64.lock.toml`` and records the sweep row's tokens/s, which
    the README gives to the bit."""
    words = _inline_command("passprice lock --checkpoint qwen3-30b-a3b-q4_k_m")
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    result = invoke(*words[1:], root=root)
    assert result.exit_code == 0, result.output
    lock = tomllib.loads((root / "locks" / "moe64.lock.toml").read_text(encoding="utf-8"))
    assert lock["price"]["batch"] == 64
    assert lock["price"]["tokens_per_s"] == 10354.415517464427
    assert "`tokens_per_s`, 10354.415517464427, to the bit" in README


def test_every_top_level_key_of_diff_json_is_in_the_readme_table(tmp_path: Path) -> None:
    """Before: ``diff --json`` gave ``behind`` (the locks out of date already on BASE, left51) and the README's table
    of its top-level keys named every key but that one. Both lists now hold the same keys (58 since walk82)."""
    start = README.index("its top-level keys (each a list of lock")
    table = README[start:README.index("A change to the pricing code is reviewed the same way", start)]
    named = {key for row in table.splitlines() if row.startswith("| `")
             for key in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    for folder in ("facts", "registry"):  # the least a registry is: the keys are every review's, the review cheap
        (tmp_path / folder).mkdir()
    keys = set(diff(Root(tmp_path), str(tmp_path), str(tmp_path)).to_json())
    assert keys - named == set()
    assert named - keys == set()
    # 57 before walkthrough 82's rerouted_stacks, 59 with head_check_review_rules (tests/test_walk128.py), 61 with
    # export_rules (tests/test_left131.py) and quotes_unchecked (tests/test_budget140.py), 63 with runs_mismatched and
    # quotes_against_removed (tests/test_rev54.py), 64 with contradicted (tests/test_review_contradicted.py)
    assert "behind" in keys and len(keys) == 64


def test_the_readme_gives_the_moe_stack_price_s_limit_as_price_prints_it() -> None:
    """Before: "0.1674 × the limit's 1,447.8"; the limit is 1,447.858… tokens/s, which ``price`` prints 1,447.9."""
    result = invoke("price", "gpt-oss-20b-mi300x", "--batch", "1", "--stack", "llamacpp-cuda-2405")
    assert result.exit_code == 0, result.output
    said = "0.1674 × the limit's 1,447.9"
    assert said in result.stdout
    assert f"{said}\n(`tests/test_walk49.py`)" in README
    priced = json.loads(invoke("price", "gpt-oss-20b-mi300x", "--batch", "1", "--stack", "llamacpp-cuda-2405",
                               "--json").stdout)
    assert priced["tokens_per_s"] == pytest.approx(1447.858, abs=1e-3)


def test_the_review_walkthrough_quotes_fact_set_s_line_whole(tmp_path: Path) -> None:
    """Before: the README quoted ``fact set``'s line as ending "-> 0.8 (estimated)"; it goes on to say what changed
    besides the value and provenance, "(citation, note changed, derivation removed)"."""
    start = README.index("git switch -qc h200-rewrite-estimate")
    words = shlex.split(README[start:README.index("git commit", start)].split("\n", 1)[1].replace("\\\n", " "))
    assert words[:3] == ["passprice", "fact", "set"]
    root = copy_root(tmp_path)
    result = invoke(*words[1:], root=root)
    assert result.exit_code == 0, result.output
    line = "facts/cards/h200_sxm_141gb.toml: streams.rewrite: 0.8333 (measured) -> 0.8 (estimated) (citation, note " \
           "changed, derivation removed)"
    assert result.stdout.splitlines() == [line]
    quoted = README[README.index("`fact set` prints `", start):].split("`")[3]
    assert re.sub(r"\s*\n", " ", quoted) == line


def test_the_json_of_a_price_has_the_keys_the_readme_lists_in_its_order() -> None:
    """Before: ``best --json`` gave ``memory_use`` (walkthrough 39's headroom) and a price of F16 matrices on a
    card's tensor rate ``float_matrix_macs``, neither in the README's list of a price's keys. Both are there now, in
    the place the object holds them."""
    start = README.index("`passprice price --json` prints one object whose keys")
    said = README[start:README.index("`tokens_per_s`,", start)]
    seed = [k for k in re.findall(r"`([a-z_]+)`", said) if k != "float_matrix_macs"]
    assert seed[0] == "card" and seed[-1] == "provenance" and len(seed) == 25
    assert "`provenance` (then `float_matrix_macs`, only where F16 or BF16 matrices ride a card's `tensor.*` rate)" \
        in README
    assert "then `memory_use` (from `best` alone, under a\nstack or not" in README
    best = json.loads(invoke("best", "r1-qwen7b-h200", "--json").stdout)
    assert list(best) == [*seed, "tokens_per_s", "tpot_s", "rests_on", "weakest", "memory_use", "spread", "stale",
                          "lock"]
    assert best["memory_use"] is None
    capped = json.loads(invoke("best", "r1-qwen7b-h200", "--memory-use", "0.9", "--json").stdout)
    assert (capped["memory_use"], capped["batch"]) == (0.9, 520)  # the README's 520 sequences at 89.9 %
    f16 = json.loads(invoke("price", "--checkpoint", "llama2-13b-f16", "--card", "a100_sxm4_80gb", "--json").stdout)
    assert list(f16) == [*seed, "float_matrix_macs", "tokens_per_s", "tpot_s", "rests_on", "weakest", "stale",
                         "lock"]
    assert f16["float_matrix_macs"] > 0


def test_the_json_keys_the_readme_names_are_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README promises ``passprice explain`` answers a ``--json`` key by its path as jq writes it. Before, four
    keys the README names said "not a term passprice defines": ``.lock.not_applied`` (a price's lock object),
    ``.records_out_of_scope`` (a ``Routed`` refusal), ``.best_instead`` (``lock --stack`` refused ``BeyondStack``)
    and ``.stack_fit.pinned_apart``; and ``.pricing_model.commit`` was explained as a source's commit. Each is now
    explained by the term that says it, and is what the command gives."""
    said = {".lock.not_applied": "lock", ".records_out_of_scope": "Routed", ".best_instead": "BeyondStack",
            ".stack_fit.pinned_apart": "stack"}
    for path, term in said.items():
        assert f"`{path.rpartition('.')[2]}`" in README
        result = invoke("explain", path)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"{term}: "), result.stdout
    # `reproduce --json`'s `pricing_model.commit` ({"hash", "date"}: the commit whose code wrote the lock) was read
    # by its last key, `commit`, and explained as a source's "at commit"; a path's longest tail a term names is
    # looked up first now, the last key after it
    assert '(`--json`: `pricing_model.commit`, `{"hash": "f1cfb7415ecb", "date": "2026-12-03"}`' in README
    for path in (".pricing_model.commit", ".pricing_model.commit.hash", ".pricing_model.commit.date"):
        assert invoke("explain", path).stdout.startswith("reproduces exactly: "), path
    assert invoke("explain", ".rests_on.streams.read").stdout.startswith("streams.read: ")
    assert invoke("explain", ".calibration[0].card_facts.unread").stdout.startswith("stack: ")  # its last key
    routed = invoke("price", "--checkpoint", "qwen3-30b-a3b-q4_0", "--card", "h200_sxm_141gb", "--json")
    assert routed.exit_code == 1
    assert json.loads(routed.stdout)["records_out_of_scope"] == [
        "qwen3-30b-a3b-measured (measured; for qwen3-30b-a3b-q4_k_m)"]
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    made = invoke("lock", "qwen3-30b-a3b-mi300x", "--best", "--routing", "qwen3-30b-a3b-measured", "-o",
                  "locks/q3m-best.lock.toml", root=root)
    assert made.exit_code == 0, made.output
    best = json.loads(invoke("best", "qwen3-30b-a3b-mi300x", "--json", root=root).stdout)
    assert best["lock"]["not_applied"] == [{"lock": "q3m-best", "path": "locks/q3m-best.lock.toml",
                                            "serving": ["routing: qwen3-30b-a3b-measured → uniform"]}]


def _transcripts() -> list[Any]:
    """Each ``$ passprice …`` block of the README: its command (a line ending in ``\\`` joined to the next), and
    the lines shown under it, up to the block's end."""
    lines = README.splitlines()
    out: list[Any] = []
    for i, line in enumerate(lines):
        if not line.startswith("$ passprice "):
            continue
        command, j = line[2:], i + 1
        while command.endswith("\\"):
            command, j = command[:-1] + " " + lines[j].strip(), j + 1
        shown = []
        while not lines[j].startswith("```"):
            shown.append(lines[j])
            j += 1
        out.append(pytest.param(command, shlex.split(command), shown, id=command))
    return out


def _in_order(shown: list[str], printed: list[str]) -> list[str]:
    """The lines of ``shown`` not found in ``printed`` in their order: a line ``…`` stands for any lines, and a line
    ending in ``…`` for any line it begins."""
    missing, at = [], 0
    for want in shown:
        if want.strip() == "…":
            continue
        match = (lambda got, w=want: got.startswith(w[:-1])) if want.endswith("…") else (lambda got, w=want: got == w)
        found = next((k for k in range(at, len(printed)) if match(printed[k])), None)
        if found is None:
            missing.append(want)
        else:
            at = found + 1
    return missing


@pytest.mark.parametrize(("command", "words", "shown"), _transcripts())
def test_every_readme_transcript_is_what_the_command_prints(command: str, words: list[str], shown: list[str]) -> None:
    """The README's 14 ``$ passprice …`` blocks, each run in-process: what it shows is what the command prints,
    line for line where the block is whole, in order where it elides with ``…``; a refusal's line is stderr's (the
    block of ``price … --batch 578``). A ``| cut -d, -fLIST`` after a CSV sweep is applied to its rows here."""
    cut: list[int] = []
    if "|" in words:
        pipe = words.index("|")
        assert words[pipe + 1:pipe + 3] == ["cut", "-d,"] and words[pipe + 3].startswith("-f"), command
        cut = [int(n) - 1 for n in words[pipe + 3][2:].split(",")]
        words = words[:pipe]
    result = invoke(*words[1:])
    assert result.exit_code in (0, 1), result.output
    printed = (result.stdout if result.exit_code == 0 else result.stderr).splitlines()
    if cut:
        printed = [",".join(row.split(",")[n] for n in cut) for row in printed]
    if any(line.strip() == "…" or line.endswith("…") for line in shown):
        assert _in_order(shown, printed) == [], command
    else:
        assert printed == shown, command


def test_the_readme_names_where_the_h200_datasheet_s_quote_can_be_checked() -> None:
    """Before: the README sent an auditor of `memory.bandwidth` to "the secondary copies it names" (the source's
    `read:` names none) and listed the excerpts of the Azure files, the handbook page and the H100 product page, not
    the stored text copy of the H200 datasheet's table the quote can be checked in. It names it now, and the copy holds
    the quote's two cells, as the card's locator quotes them."""
    # walk82: the copy is of NVIDIA's H200 product page (the excerpt's own header says so), not of the datasheet.
    # cite102: the page is cited, its row quoted cell after cell (tests/test_cite102.py)
    prose = " ".join(README.split())
    # (the list of every excerpt file and what it holds since tests/test_walk117.py)
    assert "`cite102-excerpt.txt`, the H200 product page's specifications table" in prose
    assert "`'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'` (label, H200 SXM, H200 NVL)" in prose
    text = (REPO / "sources" / "excerpts" / "cite71-excerpt.txt").read_text(encoding="utf-8")
    block = text.split("\n== nvidia-h200-datasheet ", 1)[1].split("\n== ", 1)[0].splitlines()
    cells = [line.split("\t", 1)[1] for line in block[1:]]
    at = cells.index("GPU Memory Bandwidth")
    assert cells[at + 1] == "4.8TB/s" and cells[:3] == ["Specifications", "NVIDIA H200 GPU", "H200 SXM¹"]
    assert "\n== nvidia-hopper-whitepaper " in text
    card = tomllib.loads((REPO / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8"))
    assert card["memory"]["bandwidth"]["locator"].endswith("'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'")
