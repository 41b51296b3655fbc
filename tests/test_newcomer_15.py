"""What session 15's README-only walkthrough tripped on, each kept as a test."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

H200 = "h200_sxm_141gb"
REVIEW = "passprice-card-review"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def _git(root: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True)


def _notes_registry(tmp_path: Path) -> Path:
    """A git registry whose review source keeps its document in notes/, outside the five record folders (as the
    README's routing example keeps notes/mixtral-routing.md), committed once."""
    root = copy_root(tmp_path)
    (root / "notes").mkdir()
    shutil.move(root / "facts" / "cards" / "README.md", root / "notes" / "card-review.md")
    record = root / "sources" / f"{REVIEW}.toml"
    record.write_text(record.read_text().replace('path = "facts/cards/README.md"', 'path = "notes/card-review.md"'))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def test_a_revision_holds_the_registry_document_its_source_names_outside_the_record_folders(tmp_path: Path) -> None:
    # `passprice diff` on a branch of a registry whose source record names notes/h200-bench.md: BASE, read through
    # git, held only facts/, registry/, locks/, schema/ and sources/, so the document was missing there and every
    # lock on the card was "not judged" ("BASE cannot price: … source.path: notes/… is not a file of this
    # registry"), exit 0 on a review that judged nothing; `diff A B` of two such commits exited 2.
    root = _notes_registry(tmp_path)
    assert invoke("check", root=root).exit_code == 0
    _git(root, "switch", "-qc", "edit")
    # The capacity's note dropped: every lock on the H200 pins it, so each is priced on both sides.
    invoke("fact", "set", H200, "memory.capacity", "--value", "141", "--unit", "GB", "--provenance", "published",
           "--source", "nvidia-h200-product-page", "--locator", "Specifications table, H200 SXM column (a row: its "
           "label, the H200 SXM figure, the H200 NVL figure): 'GPU Memory 141GB 141GB'", root=root)
    _git(root, "commit", "-qam", "memory.capacity without its note")
    for args in (("diff",), ("diff", "main", "edit")):
        result = invoke(*args, root=root)
        assert result.exit_code == 0, result.output
        assert "cannot price" not in result.output and "not a file of this registry" not in result.output
        assert result.stdout.splitlines()[1] == (
            "1 fact changed in 1 file; 5 locks affected, 5 to re-pin (lock --update) for check --frozen; "
            "5 locks unaffected"
        ), result.stdout
    # A document the revision does not hold is still missing there, as in a checkout of it.
    _git(root, "rm", "-q", "notes/card-review.md")
    _git(root, "commit", "-qm", "document gone")
    result = invoke("diff", "main", "edit", root=root)
    assert result.exit_code == 2
    assert ("passprice: error: on HEAD: sources/passprice-card-review.toml: source.path: notes/card-review.md is "
            "not a file of this registry: put the document there (source.path is read from the registry's top "
            "folder), or correct source.path") in result.stderr.splitlines()


def test_the_markdown_review_lists_a_source_record_it_counts(tmp_path: Path) -> None:
    # A fact cited anew to a source record added in the same pull request: the comment's summary said "1 other
    # file changed" and no section named it (the text review listed it under "other files changed").
    root = _notes_registry(tmp_path)
    _git(root, "switch", "-qc", "bench")
    (root / "notes" / "h200-bench.md").write_text("nvbandwidth device-local copy: 4.8 TB/s (median of 20)\n")
    (root / "sources" / "team-h200-bench.toml").write_text(
        '[source]\ntitle = "Our H200 HBM bandwidth measurement"\nkind = "registry"\npublisher = "the team"\n'
        'path = "notes/h200-bench.md"\nread = "the median line"\n'
    )
    invoke("fact", "set", H200, "host.capacity", "--value", "512", "--unit", "GiB", "--provenance", "assumed",
           "--source", "team-h200-bench", "--locator", "notes/h200-bench.md: the placeholder kept", root=root)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "cite our note")
    result = invoke("diff", "--format", "markdown", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # walkthrough 21: counted as a source added, and described under Sources (title, publisher, kind, where)
    assert "1 source added" in lines[0]
    assert ("- `team-h200-bench` (added, `sources/team-h200-bench.toml`): Our H200 HBM bandwidth measurement (the "
            "team), registry, at notes/h200-bench.md in this registry; read: the median line") in lines
    assert not any(line.startswith("Other files changed") for line in lines)


def test_fact_set_says_how_to_recompute_the_facts_it_leaves_stale(tmp_path: Path) -> None:
    # The stale warnings named the recomputed values but not the command that writes them; the walkthrough met
    # `passprice fact recompute` only in diff's refusal, once the pull request had failed.
    root = copy_root(tmp_path)
    result = invoke("fact", "set", H200, "memory.bandwidth", "--value", "4.89", "--unit", "TB/s", "--provenance",
                    "published", "--source", "nvidia-h200-datasheet", "--locator", "a what-if", root=root)
    assert result.exit_code == 0, result.output
    warnings = result.stderr.splitlines()
    assert warnings[2] == (
        "passprice: warning: facts/cards/h200_sxm_141gb.toml: streams.append is stale: its input bandwidth = "
        "memory.bandwidth: 4.8 TB/s when derived, 4.89 TB/s now; recomputed from today's inputs it is 0.8487, not "
        "0.8646"
    )  # 4.15 / 4.89 = 0.84867
    assert warnings[3] == (
        "passprice: warning: facts/cards/h200_sxm_141gb.toml: `passprice fact recompute h200_sxm_141gb` writes them "
        "from today's inputs (`passprice diff` fails a change that leaves a derived fact stale)"
    )
    # The command as printed does what it says.
    out = invoke("fact", "recompute", H200, root=root)
    assert out.exit_code == 0 and out.stdout.splitlines()[0] == (
        "facts/cards/h200_sxm_141gb.toml: streams.append: 0.8646 -> 0.8487 (recomputed from today's inputs)"
    ), out.output


def test_a_mistyped_fact_path_is_hinted_as_a_card_name_is(tmp_path: Path) -> None:
    # `passprice fact show h200_sxm_141gb memory.bandwith`: a card name a letter off gets "did you mean"; a fact
    # path a letter off got the whole list of 17 paths to read through.
    card = REPO / "facts" / "cards" / f"{H200}.toml"
    known = ("memory.capacity, memory.bandwidth, on_chip.capacity, on_chip.bandwidth, streams.read, streams.rewrite, "
             "streams.append, array, vector, scale, host.capacity, host.read, host.write, host.stream, tensor.f16, "
             "tensor.bf16, tensor.f8")
    assert bad("fact", "show", H200, "memory.bandwith") == [
        f"passprice: error: {card}: memory.bandwith: not a card fact path; did you mean memory.bandwidth? "
        f"(one of {known})"
    ]
    assert bad("fact", "show", H200, "streams.reed") == [
        f"passprice: error: {card}: streams.reed: not a card fact path; did you mean streams.read or "
        f"streams.rewrite? (one of {known})"
    ]
    assert bad("fact", "show", H200, "memory.speed") == [
        f"passprice: error: {card}: memory.speed: not a card fact path (one of {known})"
    ]


def test_the_audit_of_a_fact_has_one_blank_line_before_its_derived_facts() -> None:
    # `passprice audit --fact h200_sxm_141gb:memory.bandwidth` printed two blank lines there (the place of the
    # source audit's "facts citing it" table, which a fact's audit has not).
    lines = invoke("audit", "--fact", f"{H200}:memory.bandwidth").stdout.splitlines()
    assert lines[:4] == [
        f"audit of fact {H200}:memory.bandwidth",
        "  4.8 TB/s (published); nvidia-h200-product-page: Specifications table, H200 SXM column (a row: its label, "
        "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'",
        "",
        "facts derived from it: 3",
    ]


def _readme_block(after: str, fence: str = "```toml\n") -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(fence, text.index(after)) + len(fence)
    return text[start:text.index("```\n", start)]


def test_the_readme_routing_record_prices_once_its_source_document_is_written(tmp_path: Path) -> None:
    # The README's routing record and source record, written byte for byte, were refused until the document the
    # source names existed, which the README did not say; nor how to get the checkpoint `my-mixtral` it scopes.
    root = copy_root(tmp_path)
    commands = _readme_block("To try the record\non a checkpoint named", "```sh\n").splitlines()
    assert commands[1] == ("passprice synth ../examples/configs/mixtral-8x7b.json --mix Q4_K_M -o "
                           "../mixtral-8x7b.header.gguf --import my-mixtral")
    out = invoke("synth", str(REPO / "examples" / "configs" / "mixtral-8x7b.json"), "--mix", "Q4_K_M", "-o",
                 str(tmp_path / "mixtral-8x7b.header.gguf"), "--import", "my-mixtral", root=root)
    assert out.exit_code == 0, out.output
    (root / "facts" / "routing" / "my-mixtral.toml").write_text(_readme_block("A record of your own is a TOML file"))
    (root / "sources" / "my-notes.toml").write_text(_readme_block("The source it cites is a record of its own"))
    price = re.sub(r"\s+#.*", "", commands[3]).split()[1:]
    assert price == ["price", "--checkpoint", "my-mixtral", "--card", H200, "--batch", "16", "--routing",
                     "my-mixtral"]
    record = root / "facts" / "routing" / "my-mixtral.toml"
    assert bad(*price, root=root) == [
        f"passprice: error: {record}: hot_experts.source: source 'my-notes' names no document of this registry: "
        "sources/my-notes.toml: source.path: notes/mixtral-routing.md is not a file of this registry:"
        " put the document there (source.path is read from the registry's top folder), or correct source.path"
    ]
    (root / "notes").mkdir()
    (root / "notes" / "mixtral-routing.md").write_text("# Mixtral routing\n")
    lines = invoke(*price, root=root).stdout.splitlines()
    # Hot experts 4 of 8 take 70 % of 2 slots a token: p = 0.35 (hot), 0.15 (cold); over 16 token-rows
    # 4 (1 − 0.65^16) + 4 (1 − 0.85^16) = 3.9959 + 3.7030 = 7.699 experts a layer.
    # (walkthrough 19: with the bytes all its routed experts hold, 26.28 GB × 8 / 7.699 = 27.3 GB)
    assert "  experts       7.699 of 8 experts a layer for 16 token-rows (2 a token), the mean over routing: " \
           "26.28 GB of them in the bytes shared by the batch (all 8 experts of every layer hold 27.3 GB)" in lines
    # memory: 27,346,464,572 B of weights / (4.8 TB/s × 0.9333) + 16 × 268,566,528 B / (4.8 TB/s × 0.8646)
    # = 6.1043 + 1.0354 = 7.1398 ms; 16 / 7.1398 ms = 2,240.97 tokens/s.
    assert "  tokens/s      2,241  (TPOT 7.14 ms per sequence)" in lines


def test_speculate_without_a_drafting_method_says_which_checkpoints_each_prices(tmp_path: Path) -> None:
    # `passprice speculate my-serving` on an imported dense checkpoint offered "--draft METHOD (deepseek-v3-mtp,
    # qwen35-mtp)"; each try was then refused OutOfScope: neither lists that checkpoint.
    root = copy_root(tmp_path)
    (root / "facts" / "drafts" / "any-head.toml").write_text(
        (root / "facts" / "drafts" / "qwen35-mtp.toml").read_text().replace('checkpoints = ["qwen35-27b-like"]\n', "")
    )
    assert bad("speculate", "gemma3-270m-h100", "--tokens", "1..2", root=root) == [
        "passprice: error: gemma3-270m-h100 names no drafting method: give --draft METHOD (the registered ones, each "
        "with the checkpoints it prices: any-head for any; deepseek-v3-mtp for deepseek-v3-q4_k_m; qwen35-mtp for "
        "qwen35-27b-like)"
    ]


def test_outside_a_registry_the_line_does_not_open_with_the_shipped_facts_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run from /tmp with an editable install, `fact show … --history` said "/work/…/passprice: not in a registry
    # (these are the facts passprice ships)": the checkout's path, itself a git checkout, named as the folder in no
    # registry.
    from click.testing import CliRunner

    from passprice.cli import cli
    from passprice.registry import embedded_root

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["fact", "show", H200, "streams.rewrite", "--history"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"passprice: error: no registry here (passprice is reading the facts it ships, {embedded_root().path}): a "
        "fact's history is read from the git history of your registry; run inside your registry, start one with "
        "`passprice init DIR`, or name one before the command: `passprice --root DIR COMMAND`"
    ]


def test_the_readme_says_how_to_lock_a_pairing_no_serving_registers(tmp_path: Path) -> None:
    # Walkthrough 15, point 10: `lock --checkpoint … --card … --name` was only in --help and the registry README that
    # init writes; the main README now states it, and the command does what the sentence says.
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "`passprice lock --checkpoint CHECKPOINT --card CARD --name NAME` writes `locks/NAME.lock.toml`" in readme
    root = copy_root(tmp_path)
    result = invoke("lock", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "h200_sxm_141gb",
                    "--name", "my-r1-h200", root=root)
    assert result.exit_code == 0, result.output
    assert "locked my-r1-h200 (price, locks no registered serving)" in result.stdout
    assert (root / "locks" / "my-r1-h200.lock.toml").is_file()
    bad("lock", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "h200_sxm_141gb", root=root,
        says="give -o FILE (or a SERVING or --name to write locks/NAME.lock.toml)")


def test_reproduce_after_a_checkpoint_is_renamed_says_what_to_name(tmp_path: Path) -> None:
    # Walkthrough 15, point 9: with the lock's checkpoint entry renamed, the facts line said "today's checkpoint does
    # not read (below)" while the line below said where the content went, not what failed to read.
    root = copy_root(tmp_path)
    entries = root / "registry" / "checkpoints"
    old = entries / "deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    text = old.read_text(encoding="utf-8").replace('name = "deepseek-r1-distill-qwen-7b-q4_k_m"', 'name = "r1-renamed"')
    (entries / "r1-renamed.toml").write_text(text, encoding="utf-8")
    old.unlink()
    lines = invoke("reproduce", "r1-qwen7b-h200", root=root).stdout.splitlines()
    # left33: the pinned facts are compared on the entry that holds the pinned content now
    assert "    facts          unchanged (today's card, the serving resolved on entry r1-renamed, which holds the " \
           "pinned content: checkpoint deepseek-r1-distill-qwen-7b-q4_k_m does not read today, name r1-renamed " \
           "instead)" in lines
    assert any(line.startswith("    checkpoint     deepseek-r1-distill-qwen-7b-q4_k_m: the pinned content 169f62b972aa"
                               "… is now entry r1-renamed (renamed or moved)") for line in lines)
