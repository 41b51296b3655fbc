"""What a new user found on the merged main (README only): each case rebuilt here, with the exit status and the exact
lines the command gives now."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.sources import Source, stored_text_of

R1 = "r1-qwen7b-h200"


def _line(output: str, head: str) -> str:
    found = [line.strip() for line in output.splitlines() if line.strip().startswith(head)]
    assert len(found) == 1, output
    return found[0]


# --- 1. host why at a fixed batch: the memory-use cap does not bind ------------------------------------------------

FASTER = ("host why      4 sequences in host memory though card memory has room for 284 more: the pass is faster so, "
          "the host link reading their KV cache beside card memory's stream (memory and host terms overlap); the "
          "price now rests on host.* facts (its weakest may be host.capacity): --no-host-memory keeps every sequence "
          "in card memory")


def test_1_fixed_batch_ignores_the_cap_in_host_why() -> None:
    """``price --host-memory --memory-use 0.2 --batch 300`` said a 28.2 GB cap (20 % of 141 GB) held no more while
    74.2 GB was held: a fixed batch ignores the cap, so the line gives the true reason, as without --memory-use."""
    for extra in (("--memory-use", "0.2"), ("--memory-use", "0.5"), ()):
        priced = invoke("price", R1, "--host-memory", "--batch", "300", *extra, "--no-lock")
        assert priced.exit_code == 0, priced.output
        assert _line(priced.stdout, "host why") == FASTER
        assert _line(priced.stdout, "held ") == "held          74.2 GB of 141 GB card memory (52.6 %)"


def test_1_no_host_memory_advised_only_when_the_batch_fits() -> None:
    """At batch 700, 120 sequences are in host memory and --no-host-memory is refused (NotResident: 580 fit, the
    580 in card memory plus none in the 91.89 MB left at 234.9 MB a sequence): the line says so."""
    priced = invoke("price", R1, "--host-memory", "--batch", "700", "--no-lock")
    assert priced.exit_code == 0, priced.output
    assert _line(priced.stdout, "host why") == (
        "host why      120 sequences in host memory: card memory holds no more (91.89 MB left, 234.9 MB a sequence); "
        "the price now rests on host.* facts (its weakest may be host.capacity): card memory holds 580 sequences of "
        "this serving, so --no-host-memory keeps every sequence there only with a batch of at most 580")
    refused = invoke("price", R1, "--batch", "581", "--no-lock")
    assert refused.exit_code == 1 and "at most 580 sequences fit" in refused.output
    assert invoke("price", R1, "--batch", "580", "--no-lock").exit_code == 0


def test_1_best_under_the_cap_still_names_it() -> None:
    """best searches under --memory-use: there the cap binds and the line names it."""
    found = invoke("best", R1, "--host-memory", "--memory-use", "0.8", "--no-lock")
    assert found.exit_code == 0, found.output
    assert _line(found.stdout, "host why").startswith(
        "host why      6 sequences in host memory: the memory-use cap, 80 % of card memory (112.8 GB of 141 GB")


# --- 2. a locator naming several files reads from the first it names -----------------------------------------------

AZURE = "azure-ai-benchmarking-guide"
EXCERPT = "sources/excerpts/github-sources-excerpt.txt"
H100 = "Azure_Results/ND_H100_v5_results.md"
H200 = "Azure_Results/ND_H200_v5_results.md"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git registry, its first commit (on main) the checkout's registry."""
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _audit_line(repo: Path, locator: str, value: str) -> str:
    result = invoke("fact", "set", "h200_sxm_141gb", "streams.read", "--value", value, "--unit", "1",
                    "--provenance", "measured", "--source", AZURE, "--locator", locator, root=repo)
    assert result.exit_code == 0, result.output
    audit = invoke("audit", "--source", AZURE, root=repo)
    assert audit.exit_code == 0, audit.output
    return _line(audit.stdout, "h200_sxm_141gb:streams.read:")


@pytest.mark.parametrize("locator", [
    f"{H200} (as in ND_H100_v5_results.md), HBM Bandwidth table: row '| Dot   | 3.18              |'",
    f"{H200} (not the ND_H100_v5_results.md file), HBM Bandwidth table: row '| Dot   | 3.18              |'",
])
def test_2_the_h100_row_under_a_locator_naming_the_h200_first_is_not_found(repo: Path, locator: str) -> None:
    """Both spellings read ``checked`` of the H100's row (found under the second file named); without the
    parenthesis they are NOT FOUND. The first file named is the one read from."""
    assert _audit_line(repo, locator, "0.6625") == (
        "h200_sxm_141gb:streams.read: NOT FOUND (0 of 1 quoted span found in the stored text; not in it: "
        f"'| Dot   | 3.18              |' (under {H200}; found only under {H100}))")
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 1, review.output  # a NOT FOUND quote fails the review


@pytest.mark.parametrize("locator", [
    f"{H200} (as in ND_H100_v5_results.md), HBM Bandwidth table: row '| Dot   | 4.48              |'",
    f"{H200} (not the ND_H100_v5_results.md file), HBM Bandwidth table: row '| Dot   | 4.48              |'",
])
def test_2_the_h200_row_under_the_same_locators_is_checked(repo: Path, locator: str) -> None:
    assert _audit_line(repo, locator, "0.9333") == (
        "h200_sxm_141gb:streams.read: checked (1 of 1 quoted span found in the stored text)")


def test_2_parts_named_in_the_locators_order() -> None:
    stored = stored_text_of(Source(id=AZURE, title="t", kind="web", read="r", url="https://example.com",
                                   excerpt=EXCERPT), (REPO / EXCERPT).read_bytes(), EXCERPT)
    assert stored.parts_named(f"{H200} (as in ND_H100_v5_results.md): row") == (H200, H100)
    assert stored.parts_named(f"{H100} and {H200}: row") == (H100, H200)


def test_2_the_shipped_b200_host_stream_reads_as_today() -> None:
    """The B200's ``host.stream`` names both Hopper files and quotes a row of each; its inputs name each row's
    file, so each row is read from its input's file: checked, as before."""
    audit = invoke("audit", "--source", AZURE)
    assert audit.exit_code == 0, audit.output
    assert _line(audit.stdout, "b200:host.stream:") == (
        "b200:host.stream: checked (2 of 2 quoted spans found in the stored text)")


# --- 3. a file's host_memory is bad input on its own card alone ----------------------------------------------------

R1_FILE = REPO / "registry" / "servings" / "r1-qwen7b-h200.toml"


def _serving(tmp_path: Path, name: str, **swap: str) -> str:
    text = R1_FILE.read_text()
    for old, new in swap.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _host_file(tmp_path: Path, card: str) -> str:
    return _serving(tmp_path, f"host-{card}.toml", **{'card = "h200_sxm_141gb"': f'card = "{card}"',
                                                     "host_memory = false": "host_memory = true"})


def test_3_compare_refuses_a_linkless_card_per_row(tmp_path: Path) -> None:
    """``compare host.toml`` (on the SN40L, ``host_memory = true``) exited 2 naming the A100 PCIe: each card with no
    host link is a NoHostLink row, as ``compare --host-memory`` gives."""
    host = _host_file(tmp_path, "sn40l")
    assert invoke("price", host, "--no-lock").exit_code == 0
    compared = invoke("compare", host)
    assert compared.exit_code == 0, compared.output
    assert ("a100_pcie_80gb        —         —         —  —            —  refused: NoHostLink: card 'a100_pcie_80gb' "
            "has no host link (host.* facts): price it without --host-memory") in compared.stdout.splitlines()


def test_3_sweep_of_other_cards_refuses_per_row(tmp_path: Path) -> None:
    """``sweep host2.toml --cards mi300x,rtx_3090`` (host2 on the RTX 4090, no link) exited 2 naming rtx_4090, a
    card not swept: the RTX 3090's rows are NoHostLink refusals; sweeping the file's own card is bad input."""
    host2 = _host_file(tmp_path, "rtx_4090")
    swept = invoke("sweep", host2, "--cards", "mi300x,rtx_3090", "--batches", "1", "--no-lock")
    assert swept.exit_code == 0, swept.output
    rows = [line.split(",") for line in swept.stdout.splitlines()[1:]]
    assert [(r[0], r[-1]) for r in rows] == [("mi300x", ""), ("rtx_3090", "NoHostLink")]
    said = (f"passprice: error: {host2}: host_memory: card rtx_4090 has no host link (no host.* facts), so no "
            "sequence can be held in host memory: remove host_memory (or set it false), or name a card with a host "
            "link")
    for args in (("sweep", host2, "--cards", "mi300x,rtx_4090", "--batches", "1"), ("price", host2),
                 ("price", host2, "--card", "rtx_4090")):
        refused = invoke(*args, "--no-lock")
        assert refused.exit_code == 2, refused.output
        assert refused.stderr.strip() == said
    other = invoke("price", host2, "--card", "rtx_3090", "--no-lock")
    assert other.exit_code == 1 and "refused: NoHostLink: card 'rtx_3090'" in other.stderr


# --- 4. a file's draft is its keys' whatever the card -------------------------------------------------------------

MTP_FILE = REPO / "registry" / "servings" / "qwen35-27b-h200-mtp.toml"


def test_4_draft_tokens_past_the_figures_is_the_files_key_with_any_card(tmp_path: Path) -> None:
    mtp9 = tmp_path / "mtp9.toml"
    text = MTP_FILE.read_text()
    assert "\ntokens = 2\n" in text
    mtp9.write_text(text.replace("\ntokens = 2\n", "\ntokens = 9\n"))
    said = (f"passprice: error: {mtp9}: draft.tokens: 9 drafted tokens, but drafting method qwen35-mtp gives "
            "acceptance figures for 3 drafts (facts/drafts/qwen35-mtp.toml), so a longer draft would be priced on a "
            "guess: set draft.tokens to at most 3, or add acceptance.4 to that file, cited as every fact is")
    for args in (("price", str(mtp9)), ("price", str(mtp9), "--card", "mi300x"),
                 ("best", str(mtp9), "--card", "mi300x"), ("roofline", "mi300x", str(mtp9))):
        refused = invoke(*args, "--no-lock")
        assert refused.exit_code == 2, (args, refused.output)
        assert refused.stderr.strip() == said
    # --draft-tokens 9 on the command line is the option's: still BadDraft, exit 1
    option = invoke("price", str(MTP_FILE), "--card", "mi300x", "--draft-tokens", "9", "--no-lock")
    assert option.exit_code == 1 and "refused: BadDraft" in option.stderr and "(--draft-tokens 3)" in option.stderr


def test_4_draft_method_out_of_scope_is_the_files_key_with_any_card(tmp_path: Path) -> None:
    scope = tmp_path / "scope.toml"
    text = MTP_FILE.read_text()
    assert 'method = "qwen35-mtp"' in text
    scope.write_text(text.replace('method = "qwen35-mtp"', 'method = "deepseek-v3-mtp"'))
    for args in (("price", str(scope)), ("price", str(scope), "--card", "mi300x"),
                 ("roofline", "mi300x", str(scope))):
        refused = invoke(*args, "--no-lock")
        assert refused.exit_code == 2, (args, refused.output)
        assert refused.stderr.startswith(f"passprice: error: {scope}: draft.method: drafting method "
                                         "'deepseek-v3-mtp' applies to checkpoint deepseek-v3-q4_k_m only")


# --- 5. simulate's TPOT cap advice names --chunk --------------------------------------------------------------------


def test_5_max_batch_at_bests_batch_and_the_chunk(tmp_path: Path) -> None:
    """r1 with ``max_tpot = 0.005``: best finds 142; ``simulate --max-batch 142`` still has static batching's
    requests over the cap (48 of 300 here) where ``--chunk 64`` has none: prefill chunks push steps over, and the
    advice says so."""
    capped = _serving(tmp_path, "capped.toml", **{"batch = 1\n": "batch = 1\nmax_tpot = 0.005\n"})
    found = invoke("best", capped, "--no-lock")
    assert found.exit_code == 0 and "  batch 142 sequences (all in card memory);" in found.stdout, found.output
    lines = {}
    for chunk in ("2048", "64"):
        run = invoke("simulate", capped, "--synthetic", "300", "--seed", "1", "--max-batch", "142", "--chunk", chunk)
        assert run.exit_code == 0, run.output
        lines[chunk] = _line(run.stdout, "TPOT cap")
    advice = ("(`passprice best` finds the best batch within it: --max-batch that batch bounds the decode steps, but a "
              "step that also carries a prompt's chunk (--chunk, {} rows) takes longer, so give a smaller --chunk too)")
    assert lines["2048"] == (
        "TPOT cap    the serving's max_tpot 5 ms is not enforced: admission takes up to 142 sequences (--max-batch) "
        "while memory holds them; requests whose TPOT is above it: static 48 of 300, continuous 0 of 300 "
        + advice.format("2,048"))
    assert "requests whose TPOT is above it: static 0 of 300, continuous 0 of 300 " + advice.format("64") in lines["64"]


# --- 6. a stray link to a card file is no lock to move; the review names it as check does -------------------------

CARD_LINK = ("locks/old: not a folder passprice reads: its 1 .toml file is neither checked nor priced (passprice reads "
             "locks/ itself, not the folders in it); locks/old/card.toml -> ../../facts/cards/h200_sxm_141gb.toml, a "
             "symbolic link to facts/cards/h200_sxm_141gb.toml, read already from facts/cards/: remove the link "
             "(locks/ reads no file of facts/cards/)")


def test_6_a_link_to_a_card_in_locks_old(repo: Path) -> None:
    """``check`` advised ``move the file it names to locks/`` of a link to a card, and the review printed the link's
    absolute path where check printed ``locks/old/card.toml``."""
    old = repo / "locks" / "old"
    old.mkdir()
    (old / "card.toml").symlink_to("../../facts/cards/h200_sxm_141gb.toml")
    checked = invoke("check", root=repo)
    assert checked.exit_code == 2, checked.output
    assert f"passprice: error: {CARD_LINK}" in checked.stderr.splitlines()
    _git(repo, "checkout", "-q", "-b", "b")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "link")
    review = invoke("diff", "main", root=repo)
    assert review.exit_code == 2, review.output
    assert f"passprice: error: on HEAD: {CARD_LINK}" in review.stderr.splitlines(), review.stderr
    assert str(repo) not in review.output


# --- 7. a mixture every token reads whole says so ------------------------------------------------------------------


def test_7_every_expert_line_and_json(tmp_path: Path) -> None:
    from test_walk45 import moe_header

    header = str(moe_header(tmp_path / "h.gguf", 8))  # 8 experts, 8 a token
    base = ("price", "--checkpoint", header, "--card", "h200_sxm_141gb")
    plain = invoke(*base)
    assert plain.exit_code == 0, plain.output
    assert _line(plain.stdout, "experts ") == "experts       8 of 8 experts a layer: every token reads every expert"
    routed = invoke(*base, "--routing", "uniform")
    assert routed.exit_code == 0, routed.output
    assert _line(routed.stdout, "experts ") == (
        "experts       8 of 8 experts a layer: every token reads every expert; --routing uniform is not needed (no "
        "price of this checkpoint rests on a routing record)")
    assert json.loads(invoke(*base, "--json").stdout)["every_expert"] == {"experts": 8, "routing_unused": None}
    assert json.loads(invoke(*base, "--json", "--routing", "uniform").stdout)["every_expert"] == {
        "experts": 8, "routing_unused": "uniform"}
    found = invoke("best", "--checkpoint", header, "--card", "h200_sxm_141gb", "--routing", "uniform", "--json")
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["every_expert"] == {"experts": 8, "routing_unused": "uniform"}
    # a dense checkpoint and a mixture reading fewer: no key, no line
    dense = invoke("price", R1, "--json", "--no-lock")
    assert "every_expert" not in json.loads(dense.stdout)
    fewer = invoke("price", "--checkpoint", str(moe_header(tmp_path / "h7.gguf", 7)), "--card", "h200_sxm_141gb",
                   "--routing", "uniform")
    assert fewer.exit_code == 0 and "every token reads every expert" not in fewer.stdout


# --- 8. who set the TPOT cap; sweep's --cards prefix as compare's ---------------------------------------------------


def test_8_a_cap_from_the_command_line_is_named_so() -> None:
    given = invoke("best", R1, "--max-tpot", "0.0005", "--no-lock")
    assert given.exit_code == 1
    assert given.stderr.strip() == (
        "passprice: refused: OverTPOT: batch 1 already takes 1.004 ms per output token, over the TPOT cap of 500 µs "
        "(--max-tpot): no batch meets it; raise the cap (--max-tpot SECONDS), or price a smaller model, a shorter "
        "context or a faster card")


def test_8_a_cap_from_the_serving_file_is_named_so(tmp_path: Path) -> None:
    capped = _serving(tmp_path, "capped.toml", **{"batch = 1\n": "batch = 1\nmax_tpot = 0.0005\n"})
    own = invoke("best", capped, "--no-lock")
    assert own.exit_code == 1
    assert "over the serving's TPOT cap of 500 µs (max_tpot): no batch meets it" in own.stderr


def test_8_sweep_cards_prefix_as_compare() -> None:
    said = ("--cards: card 'MI300X': not found in facts/cards; did you mean mi300x? (the name differs only in case; "
            "names are matched exactly)")
    for command in ("sweep", "compare"):
        result = invoke(command, R1, "--cards", "MI300X")
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == f"passprice: error: {said}"
