"""Attack round 36 (issue 13: hostile input on session 18's new code): a measured run's routing record, the review's
description of an added measurement file, the renamed-card hint, document hashes. Each test builds the reproducer
of one finding and asserts the exit status and the error line."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke
from passprice import schema
from test_diff import commit_all, git

RUN = """#:schema ../../schema/measurement.schema.json
[source]
name = "A run of Qwen3-30B-A3B on one H200"
source = "xiongjiedai-gpu-benchmarks"

[[run]]
id = "a36.qwen3moe.tg128"
stack = "llamacpp-cuda-2507"
card = "h200_sxm_141gb"
checkpoint = "qwen3-30b-a3b-q4_k_m"
routing = "{routing}"
batch = 1
positions = [0, 128]
tokens_per_s = 160.5
locator = "an attack round's made-up figure"
"""


def _run_naming(tmp_path: Path, routing: str) -> Path:
    root = copy_root(tmp_path)
    (root / "registry" / "measurements" / "a36.toml").write_text(RUN.format(routing=routing))
    return root


def test_a_measured_runs_routing_record_outside_the_registry_is_refused(tmp_path: Path) -> None:
    """A run's ``routing = "/any/file.toml"`` (a routing record copied outside the registry) was read and priced
    with: ``check`` said "all holds" (exit 0), ``validate`` priced it, where the same path as its ``card`` is refused
    (a registry file names nothing outside the registry: CI would read and quote a file of the machine)."""
    outside = tmp_path / "elsewhere" / "skew.toml"
    outside.parent.mkdir()
    shutil.copy(copy_root(tmp_path / "src") / "facts" / "routing" / "qwen3-30b-a3b-measured.toml", outside)
    root = _run_naming(tmp_path, str(outside))
    for command in ("check", "validate"):
        result = invoke(command, root=root)
        assert result.exit_code == 2, result.output
        assert (
            f"passprice: error: registry/measurements/a36.toml: run.0.routing: {outside} lies outside the registry"
            in result.stderr.replace(str(root) + "/", "")
        ), result.stderr
    # a path relative to the working folder is refused whatever it names, as a card's is
    root = _run_naming(tmp_path / "rel", "facts/routing/qwen3-30b-a3b-measured.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert (
        "registry/measurements/a36.toml: run.0.routing: 'facts/routing/qwen3-30b-a3b-measured.toml' is a path "
        "relative to the working folder" in result.stderr
    ), result.stderr
    # the registry name still prices
    assert invoke("check", root=_run_naming(tmp_path / "ok", "qwen3-30b-a3b-measured")).exit_code == 0


def test_a_document_past_the_file_cap_under_its_right_sha256_passes_the_review_of_a_revision(tmp_path: Path) -> None:
    """A source record naming a registry document of 64 MiB + 1 byte (past the cap on a file read whole) with its
    right sha256: ``check`` said "all holds", but the review of the revision (``diff HEAD~1 HEAD``) failed it, exit 2,
    "its bytes hash to blob:4d38bbd5…" (the identity a revision kept of a document past the cap was its git blob id,
    no sha256). The blob is hashed as git streams it now; an edited one still fails, and fails the review of a work tree
    too (``diff HEAD``: exit 0 before, the work tree's document past the cap read as no identity)."""
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    (path / "notes").mkdir()
    document = b"\0" * (schema.MAX_TOML_BYTES + 1)
    (path / "notes" / "doc.md").write_bytes(document)
    stated = hashlib.sha256(document).hexdigest()
    (path / "sources" / "my-notes.toml").write_text(
        '[source]\ntitle = "My notes"\nkind = "registry"\npublisher = "me"\npath = "notes/doc.md"\n'
        f'sha256 = "{stated}"\nread = "how the figures were read off it"\n', encoding="utf-8")
    commit_all(path, "a registry with a large document")
    git(path, "commit", "-q", "--no-verify", "--allow-empty", "-m", "nothing")
    assert invoke("check", root=path).exit_code == 0
    review = invoke("diff", "HEAD~1", "HEAD", "--json", root=path)
    assert review.exit_code == 0, review.output  # was 2
    assert json.loads(review.stdout)["head_check"] == []
    edited = document + b"x"
    (path / "notes" / "doc.md").write_bytes(edited)
    line = [
        f"sources/my-notes.toml: source.sha256: {stated[:12]}… is not the sha256 of notes/doc.md (its bytes hash to "
        f"{hashlib.sha256(edited).hexdigest()}): the registry's document is not the copy that was read; restore it, "
        "or re-read it and record its sha256"
    ]
    # the review of the work tree (the hook's) read no identity of a document past the cap: exit 0, where check fails
    review = invoke("diff", "HEAD", "--json", root=path)
    assert review.exit_code == 2, review.output
    assert json.loads(review.stdout)["head_check"] == line
    commit_all(path, "the document edited")
    review = invoke("diff", "HEAD~1", "HEAD", "--json", root=path)
    assert review.exit_code == 2, review.output
    assert json.loads(review.stdout)["head_check"] == line
    assert line == [
        f"sources/my-notes.toml: source.sha256: {stated[:12]}… is not the sha256 of notes/doc.md (its bytes hash to "
        f"{hashlib.sha256(edited).hexdigest()}): the registry's document is not the copy that was read; restore it, "
        "or re-read it and record its sha256"
    ]


def test_the_recompute_command_check_advises_is_one_shell_word_whatever_the_cards_name(tmp_path: Path) -> None:
    """A card file ``my h200;$(id).toml`` with a stale derived share was advised ``passprice fact recompute my
    h200;$(id)`` (pasted: ``fact recompute my h200``, then ``id`` run), and one named ``h200:b.toml`` got no command."""
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    text = (cards / "h200_sxm_141gb.toml").read_text()
    old = "[memory.bandwidth]\nvalue = 4.8\n"
    assert old in text
    (cards / "h200_sxm_141gb.toml").unlink()
    for name in ("my h200;$(id)", "h200:b"):
        (cards / f"{name}.toml").write_text(text.replace(old, "[memory.bandwidth]\nvalue = 4.89\n"))
    result = invoke("check", root=root)
    assert result.exit_code in (1, 2), result.output
    hints = [line for line in result.stdout.splitlines() if "fact recompute" in line]
    assert hints == [
        "  to write them from today's inputs: `passprice fact recompute h200:b`",
        "  to write them from today's inputs: `passprice fact recompute 'my h200;$(id)'`",
    ], result.stdout
    # Since session 26 a ':' is a character check names in a registry file's name (no file name on Windows holds it;
    # tests/test_leftovers_26.py): the card is still read, its command still advised, and the name is a problem too.
    assert result.exit_code == 2
    assert ("passprice: error: facts/cards/h200:b.toml: ':' is a character no file name on Windows holds, where no "
            "file of that name can be checked out: rename the file (and what names it)") in result.stderr.splitlines()
    assert invoke("fact", "recompute", "my h200;$(id)", root=root).exit_code == 0


def test_the_review_of_an_added_measurement_file_names_the_runs_it_could_not_price(tmp_path: Path) -> None:
    """An added measurement file of 4 runs, two of its first 5 not priceable (a card not found, positions past the
    context): the review's description showed 2 priced runs, then "and 2 more runs (`passprice validate` prices
    each)", the two unpriceable ones counted as runs past the 5 shown, which validate does not price either."""
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "base")
    text = RUN.format(routing="qwen3-30b-a3b-measured")
    body = text[text.index("[[run]]"):]
    text += body.replace("a36.qwen3moe.tg128", "a36.nocard").replace('"h200_sxm_141gb"', '"nope"')
    text += body.replace("a36.qwen3moe.tg128", "a36.past").replace("[0, 128]", "[0, 99999999]")
    text += body.replace("a36.qwen3moe.tg128", "a36.slow").replace("160.5", "16.5")
    (path / "registry" / "measurements" / "a36.toml").write_text(text)
    review = invoke("diff", "main", "--json", root=path)
    assert review.exit_code == 2, review.output  # the two bad runs are the review's errors
    described = json.loads(review.stdout)["added_records"]["registry/measurements/a36.toml"]
    assert described.startswith("4 measured runs (stack llamacpp-cuda-2507 (not registered: priced as the limit "
                                "only); cards h200_sxm_141gb, nope; checkpoint qwen3-30b-a3b-q4_k_m): ")
    # Slip round 34: the runs to verify follow the priced ones (each of these 4 locators quotes another figure)
    described, asked = described.split("; 4 measured runs to verify in their sources: ", 1)
    assert asked.startswith("a36.qwen3moe.tg128 added: "), asked
    shown = described.split("): ", 1)[1].split("; ")
    assert [s.split(" ", 1)[0] for s in shown] == ["a36.qwen3moe.tg128", "2", "a36.slow"]
    # Runs left out alike are one entry (slip round 32: one refusal was repeated for each run).
    assert shown[1] == ("2 runs (a36.nocard 160.5 tokens/s, a36.past 160.5 tokens/s), not priced: the review's errors "
                        "say why")
    assert "more run" not in described


def test_a_card_vendor_of_100000_characters_is_cut_in_the_stacks_card_warning(tmp_path: Path) -> None:
    """``[card] vendor`` has no length cap: the MI300X's set to 100,000 characters made the stack's card warning on
    ``price --stack`` a 104,495-byte stderr; the fitted cards' vendors were all listed however many."""
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    text = (cards / "mi300x.toml").read_text()
    assert 'vendor = "AMD"' in text
    (cards / "mi300x.toml").write_text(text.replace('vendor = "AMD"', 'vendor = "' + "A" * 100_000 + '"'))
    for i, card in enumerate(("a40", "l40s", "rtx_3080", "rtx_3090", "rtx_4080", "rtx_4090")):
        path = cards / f"{card}.toml"
        assert 'vendor = "NVIDIA"' in path.read_text()
        path.write_text(path.read_text().replace('vendor = "NVIDIA"', f'vendor = "V{i}"'))
    out = invoke("price", "qwen3-30b-a3b-h200", "--card", "mi300x", "--batch", "1", "--stack", "llamacpp-cuda-2405",
                 "--no-lock", root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert len(out.stderr) < 2_000, len(out.stderr)
    assert ("; and every card its runs measured has vendor NVIDIA or V0 or V1 or V2 (or 3 more vendors), mi300x has "
            f"vendor {'A' * 40}…: the stack's kernels never ran on such a card") in out.stderr, out.stderr


def test_a_non_ascii_name_holding_a_character_that_does_not_print_is_spelled_out_too() -> None:
    """``spelled`` wrote a name holding a character that does not print through ``escaped`` alone: the look-alike
    card ``h200_sхm_141gb`` (a Cyrillic ``х``) with a zero-width space after it read ``h200_sхm_141gb\\u200b``, the
    ``х`` shown as an ASCII ``x`` reads."""
    from passprice.errors import spelled

    assert spelled("h200_s\u0445m_141gb\u200b") == (
        "h200_s\u0445m_141gb\\u200b (spelled 'h200_s\\u0445m_141gb\\u200b')")
    assert spelled("h200_sxm_141gb\n") == "h200_sxm_141gb\\n"  # ASCII: escaped alone
    assert spelled("h200_s\u0445m_141gb") == "h200_s\u0445m_141gb (spelled 'h200_s\\u0445m_141gb')"


def test_a_measured_run_of_a_dense_checkpoint_naming_a_routing_record_is_told_to_remove_it(tmp_path: Path) -> None:
    """A run of the dense 7B naming ``routing = "uniform"``: validate's row read "refused (BadRouting): … price it
    without --routing", an option no run has (exit 0). It is bad input at the run's key now, as another model's
    record is."""
    root = _run_naming(tmp_path, "uniform")
    path = root / "registry" / "measurements" / "a36.toml"
    path.write_text(path.read_text().replace('"qwen3-30b-a3b-q4_k_m"', '"deepseek-r1-distill-qwen-7b-q4_k_m"'))
    result = invoke("validate", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "passprice: error: run a36.qwen3moe.tg128 (a36): registry/measurements/a36.toml: run.0.routing: checkpoint "
        "deepseek-r1-distill-qwen-7b-q4_k_m is dense (no expert_count): a routing record says how a mixture of "
        "experts' tokens route; remove `routing` from the run (or correct its checkpoint)"
    ], result.stderr
    assert "--routing" not in result.output


def test_a_link_out_of_the_registry_is_no_renamed_card(tmp_path: Path) -> None:
    """The H200's card moved out of the registry, ``facts/cards/aaa.toml`` a link to it: a serving naming
    ``h200_sxm_141gb`` was told "name the card aaa here", which the loader refuses as a link outside the registry."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    outside = tmp_path / "h200.toml"
    (cards / "h200_sxm_141gb.toml").rename(outside)
    (cards / "aaa.toml").symlink_to(outside)
    lines = bad("price", "r1-qwen7b-h200", "--no-lock", root=root)
    assert "aaa.toml is 'NVIDIA H200 SXM 141GB' too" not in lines[0], lines[0]
    assert "h200_sxm_141gb is a card of the facts passprice ships, not of this registry" in lines[0], lines[0]
    # a link inside the registry is a card the loader reads: named
    shutil.copy(outside, cards / "kept.toml")
    (cards / "aaa.toml").unlink()
    (cards / "aaa.toml").symlink_to("kept.toml")
    lines = bad("price", "r1-qwen7b-h200", "--no-lock", root=root)
    assert "facts/cards/aaa.toml is 'NVIDIA H200 SXM 141GB' too" in lines[0], lines[0]  # the link's name (left29b)
