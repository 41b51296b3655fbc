"""Walkthrough 95 (issue 13, a new user from the README alone, ``pip install .``): a lock's ``-o`` in ``locks/``
refused for its suffix, not its folder; ``explain`` of a review's ``--json`` path gives the review's entry (or names
each command's); a routing record of a checkpoint's name not written says which file to write; a source id not
found offers only ids close to it; a sweep at other positions than the locked serving's says which rows are its;
the README's tour and the DeepSeek sentence say what runs. (Finding 1, every ``--json`` count an integer, is
``test_walk43.py``'s ``test_every_json_count_of_every_command_is_an_integer``.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice import glossary
from passprice.errors import InputError

R1 = "r1-qwen7b-h200"


# --- 2. a lock's -o: the suffix is the fault in locks/ ------------------------------------------------------------


def test_2_a_lock_in_locks_with_a_json_suffix_is_refused_for_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lock R1 -o locks/l.json`` said "locks are read from locks/NAME.lock.toml only … write it there", where it
    was: the name is the fault, said so; ``-o l.json`` at the top says both its place and its suffix."""
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    lines = bad("lock", R1, "-o", "locks/l.json", root=root)
    assert lines == [
        f"passprice: error: locks/l.json (relative to the working folder: {root}/locks/l.json): locks are read from "
        f"{root}/locks/NAME.lock.toml only, and this name ends in .json (a name that says JSON): a lock written so "
        "would guard nothing (check, price and diff never read it); name it NAME.lock.toml"
    ]
    lines = bad("lock", R1, "-o", "l.json", root=root)
    assert lines == [
        f"passprice: error: l.json (relative to the working folder: {root}/l.json): inside the registry, locks are "
        f"read from {root}/locks/NAME.lock.toml only: a lock written here would guard nothing (check, price and diff "
        "never read it); write it there (the default), or outside the registry; and its name ends in .json (a name "
        "that says JSON): name it NAME.lock.toml"
    ]
    assert not (root / "locks" / "l.json").exists() and not (root / "l.json").exists()


def test_2_the_readme_s_suffix_refusal_of_a_lock_is_what_runs(tmp_path: Path) -> None:
    """The README lists ``lock -o l.json`` among the refusals of a suffix naming another format: outside the
    registry it is refused for its suffix alone, in the words ``name it NAME.lock.toml``."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "a suffix naming another format passprice writes" in readme and "(`lock -o l.json`," in readme
    root = copy_root(tmp_path)
    out = tmp_path / "l.json"
    assert bad("lock", R1, "-o", str(out), root=root) == [
        f"passprice: error: {out}: -o would write a lock (TOML) into a file whose name ends in .json (a name that says "
        "JSON): name it NAME.lock.toml"
    ]


# --- 3. explain of a review's --json path --------------------------------------------------------------------------


@pytest.mark.parametrize("path", [".locks[0].held", ".locks[3].holds", "locks.held"])
def test_3_a_review_s_held_and_holds_explain_to_floors_hold(path: str) -> None:
    """``explain .locks[0].held`` printed ``held``'s entry (bytes resident in card memory) for the review's boolean
    ``held`` (floors held on BASE)."""
    result = invoke("explain", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("floors hold: ")
    assert ("`held` (the same of BASE: BASE's inputs priced it within BASE's floors; not a count of bytes"
            in result.stdout)
    assert "`holds` (true when HEAD's inputs price it and keep HEAD's floors)" in result.stdout


def test_3_bytes_held_still_explain_to_held() -> None:
    for path in ("held", ".locks[0].before.held_bytes", ".terms.held"):
        assert glossary.lookup(path).name == "held", path


@pytest.mark.parametrize("path", [".locks[0].breaks", "breaks", ".breaks"])
def test_3_a_key_two_commands_use_apart_is_refused_naming_each_entry(path: str) -> None:
    """``explain .locks[0].breaks`` printed ``withdrawn``'s entry (``audit --source``'s ``breaks``) for a review's
    lock: each command's entry is named, and each explains its own."""
    lines = bad("explain", path)
    assert lines == [
        f"passprice: error: explain: {path!r} is a --json key of more than one command, each with its own entry: "
        "diff --json's is `passprice explain 'floors hold'`, audit --source --json's is `passprice explain "
        "'withdrawn'`"
    ]
    assert [(c, t.name) for c, t in glossary.entries(path)] == [
        ("diff --json", "floors hold"), ("audit --source --json", "withdrawn")]
    assert "`breaks` (true when HEAD leaves it unheld" in glossary.TERMS["floors hold"].long
    assert "`breaks` (the floors would break)" in glossary.TERMS["withdrawn"].long
    with pytest.raises(InputError, match="more than one command"):
        glossary.lookup(path)


def test_3_the_readme_s_review_table_names_held_holds_and_breaks() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    row = readme[readme.index("| `files`, `locks`, `unaffected` |"):]
    row = row[: row.index(" |\n") if " |\n" in row else row.index("| `behind` |")]
    for key in ("`holds`", "`held`", "`breaks`"):
        assert key in row, key
    assert "true or false, not bytes" in row


# --- 4. a routing record not written; a source id not found --------------------------------------------------------


def test_4_a_routing_record_named_as_a_checkpoint_says_which_file_to_write() -> None:
    """The README's demo names its routing record after its checkpoint (``my-mixtral``); before the record is
    written, ``--routing NAME`` said only "NAME is a registered checkpoint, not a routing record"."""
    ckpt = "qwen3-30b-a3b-q4_k_m"
    lines = bad("price", "--checkpoint", ckpt, "--card", "h200_sxm_141gb", "--routing", ckpt)
    assert lines == [
        f"passprice: error: routing record '{ckpt}': not found in facts/routing; {ckpt} is a registered checkpoint, "
        f"not a routing record: to add a routing record of that name, write facts/routing/{ckpt}.toml (a [routing] "
        "table, schema/routing.schema.json) (registered: qwen3-30b-a3b-measured, uniform)"
    ]


def test_4_a_source_id_not_found_offers_only_close_ids(tmp_path: Path) -> None:
    """``my-notes`` not written was offered "the closest xytpai-nvbench, amd-cdna3-whitepaper, ws1-design", none
    of them close: only the "did you mean" hint names ids, with its likeness cutoff."""
    root = copy_root(tmp_path)
    count = len(list((root / "sources").glob("*.toml")))
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    write = "does not exist: write it (a [source] table, schema/source.schema.json), or cite one of the"
    # (nvidia-h200-product-page second since tests/test_fix190.py: the most leading words shared first)
    close = "; did you mean nvidia-h200-datasheet or nvidia-h200-product-page or nvidia-h100-datasheet?"
    for source, near in (("my-notes", ""), ("nvidia-h200-datashet", close)):
        lines = bad("fact", "set", "h200_sxm_141gb", "streams.rewrite", "--value", "0.8", "--unit", "1",
                    "--provenance", "estimated", "--source", source, "--locator", "a what-if", root=root)
        assert lines == [
            f"passprice: error: {card}: streams.rewrite.source: no source {source!r}{near} (sources/{source}.toml "
            f"{write} {count} registered (passprice sources lists them))"
        ]
    assert card.read_bytes() == before


# --- 5. a sweep at other positions than the locked serving's -------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--positions", "512,4096"),
         "floors hold; no row is the locked serving's, so its prices are not compared with the locked ones "
         f"(`passprice reproduce {R1}` compares them); its rows at position 512, 4096 are not the locked serving's "
         "(position 2048)"),
        (("--positions", "512,2048", "--cards", "h200_sxm_141gb,a40"),
         "floors hold; its rows on h200_sxm_141gb at position 2048 are the locked serving's, their prices not compared "
         f"with the locked ones (`passprice reproduce {R1}` compares them); its rows on a40 are under no lock (the "
         "locks lock h200_sxm_141gb); its rows at position 512 are not the locked serving's (position 2048)"),
        (("--cards", "a40"),
         "floors hold; no row is the locked serving's, so its prices are not compared with the locked ones "
         f"(`passprice reproduce {R1}` compares them); its rows on a40 are under no lock (the locks lock "
         "h200_sxm_141gb)"),
        ((), f"floors hold; the serving is the locked one, its prices not compared with the locked ones (`passprice "
             f"reproduce {R1}` compares them)"),
    ],
)
def test_5_a_sweep_says_which_rows_are_the_locked_serving_s(args: tuple[str, ...], says: str) -> None:
    """``sweep R1 --positions 512,4096`` said "the serving is the locked one" and then that its rows at 512 and
    4096 were not the locked serving's: now which rows are, or that none is."""
    result = invoke("sweep", R1, "--batches", "1", *args)
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stderr.splitlines() if x.startswith(f"passprice: {R1}: ")]  # (a refused row's line
    assert line.endswith(f".lock.toml): {says}"), result.stderr  # follows it: tests/test_fix185.py)


# --- 6. the README -------------------------------------------------------------------------------------------------


def test_6_the_tour_says_the_path_hint_needs_the_checkout() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    tour = readme[readme.index("## A tour"):readme.index("```sh passprice cards")]
    assert "when passprice runs from the checkout (an editable install, `pip install -e .`; or `--root` the" in tour
    assert "(a `pip install .` reads its own copy of the facts and knows no checkout: it says " \
           "`examples/grid.toml: no such file`)" in tour


def test_6_the_tour_s_routing_line_shows_what_it_says() -> None:
    """``price gpt-oss-20b-h200 --routing uniform`` printed what the price without it prints (uniform is the
    serving's routing): the line is the price, its comment saying the routing is the serving's."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "gpt-oss-20b-h200 --routing uniform" not in readme
    (line,) = [x for x in readme.splitlines() if x.startswith("passprice price gpt-oss-20b-h200 ")]
    assert line.endswith("# MXFP4 experts, read on the integer array, routed uniformly (its serving's assumption)")
    result = invoke("price", "gpt-oss-20b-h200")
    assert result.exit_code == 0, result.output
    assert "  routing       uniform: every expert equally likely, assumed (uniform)" in result.stdout.splitlines()


def test_6_the_deepseek_sentence_agrees_with_kv() -> None:
    """"403.5 GB of Q4_K_M weights" where ``kv`` prints "weights 403 GB (375.3 GiB) + embedding table 521.3 MB":
    403.5 GB is what is held once, both together (403,516,178,432 bytes, as the NotResident refusal says)."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("the 403.5 GB held once, 403 GB of Q4_K_M weights and a 521.3 MB embedding table, fit no single card "
            "here") in readme
    result = invoke("kv", "deepseek-v3-q4_k_m", "--contexts", "4k,128k")
    assert result.exit_code == 0, result.output
    assert "  held once: weights 403 GB (375.3 GiB) + embedding table 521.3 MB (497.1 MiB)," in result.stdout
    refused = invoke("price", "deepseek-v3-mi300x")
    assert refused.exit_code == 1
    assert re.search(r"the weights and embedding table alone take 403,516,178,432 bytes", refused.stderr)
    assert 402_994_921_472 + 521_256_960 == 403_516_178_432  # kv --json's weights + embedding_table
