"""Attack round 20 (issue 13): hostile input against every command and option, the registry files, the cache, git
revisions, racing writers and signals. Each test builds the input that broke passprice and asserts what it does with
it now (exit status and the line it says)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke
from passprice import edit

H200 = "h200_sxm_141gb"
CARD = Path("facts") / "cards" / f"{H200}.toml"


def _derivation(inputs: int) -> str:
    """A ``--derivation`` table of ``inputs`` literal inputs besides the two streams.read names (the schema allows
    32 in all)."""
    extra = "".join(f'k{i} = {{value = {i}, unit = "TB/s", locator = "xyz"}}, ' for i in range(inputs))
    return (
        '{formula = "dot / bandwidth", digits = 4, inputs = {' + extra
        + 'dot = {value = 4.48, unit = "TB/s", locator = "xyz"}, bandwidth = {fact = "memory.bandwidth"}}}'
    )


# --- (a) fact set: an entry the schema refuses is never placed in the layout-keeping document -------------------------


def test_a_derivation_of_2000_inputs_is_refused_without_placing_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) \
        -> None:
    """``fact set … --derivation`` of 2,000 inputs (a 106 KB argument; the schema allows 32) ran past 10 s, one of
    100 took 4.8 s of CPU: tomlkit copies the whole table at each dotted key it adds, so placing the entry cost time
    quadratic in its inputs before the schema refused it. The entry is now held to the schema on the file's plain
    data first and never placed (``_place`` is not called); the lines are those the schema and the derivation check
    gave before, and the card is untouched."""
    root = copy_root(tmp_path)
    before = (root / CARD).read_bytes()

    def placed(*_: object) -> None:
        raise AssertionError("an entry the schema refuses was placed in the tomlkit document")

    monkeypatch.setattr(edit, "_place", placed)
    lines = bad(
        "fact", "set", H200, "on_chip.bandwidth", "--value", "4.8", "--unit", "TB/s", "--provenance", "derived",
        "--source", "nvidia-h200-datasheet", "--locator", "xyzw", "--derivation", _derivation(2000), root=root,
        says=[
            f"{root / CARD}: on_chip.bandwidth.derivation.inputs: {{'k0': {{'value': 0, 'unit': 'TB/s', "
            "'locator': 'xyz'}, 'k1'",
            f"{root / CARD}: on_chip.bandwidth.derivation: its formula gives 1, but the fact is in TB/s (B/s)",
        ],
    )
    assert len(lines) == 2 and lines[0].endswith("… has too many properties"), lines
    assert (root / CARD).read_bytes() == before


def test_an_input_of_5000_keys_is_refused_without_placing_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One derivation input of 5,000 keys (an inline table tomlkit grows key by key): refused, never placed (by the
    schema's additional-properties rule until attack65 refused a table past 4,096 keys before jsonschema walks it)."""
    root = copy_root(tmp_path)
    monkeypatch.setattr(edit, "_place", lambda *_: pytest.fail("placed"))
    keys = ", ".join(f"k{i} = {i}" for i in range(5000))
    derivation = (
        '{formula = "dot / bandwidth", digits = 4, inputs = {dot = {value = 4.48, unit = "TB/s", locator = "xyz", '
        + keys + '}, bandwidth = {fact = "memory.bandwidth"}}}'
    )
    bad(
        "fact", "set", H200, "on_chip.bandwidth", "--value", "4.8", "--unit", "TB/s", "--provenance", "derived",
        "--source", "nvidia-h200-datasheet", "--locator", "xyzw", "--derivation", derivation, root=root,
        says=f"{root / CARD}: on_chip.bandwidth.derivation.inputs.dot: a table of 5,003 keys (no passprice file holds "
             "one of more than 4,096, and this file does not validate): make it smaller",
    )


def test_an_entry_the_schema_takes_is_still_placed_in_the_files_layout(tmp_path: Path) -> None:
    """The plain-data check passes a valid entry on: the edit lands in place, the rest of the file byte for byte."""
    root = copy_root(tmp_path)
    before = (root / CARD).read_text(encoding="utf-8")
    where = edit.FactFile(root / CARD, "card", H200, "memory.bandwidth")
    entry = {"value": 4.9, "unit": "TB/s", "provenance": "published", "source": "nvidia-h200-product-page",
             "locator": "xyzw"}
    done = edit.set_fact(where, entry, root=None)
    assert done.after == before.replace("value = 4.8\n", "value = 4.9\n", 1).replace(
        "locator = \"Specifications table, H200 SXM column (a row: its label, "
        "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"",
        'locator = "xyzw"', 1)


def test_an_edit_leaving_three_derived_facts_stale_parses_the_layout_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fact set h200 memory.bandwidth`` on a card padded with 115,000 blank lines (127 KB, within the 128 KiB
    passprice edits in place) took 3.5 s of CPU: the check for derived facts recomputed out of their schema's range
    parsed the edited text with tomlkit (0.9 s here) once for each of the three facts derived from the bandwidth. It
    places each recomputed entry in the text's plain data now: tomlkit parses the card once (1.3 s in all), and the
    three stale lines are still said."""
    root = copy_root(tmp_path)
    with (root / CARD).open("a", encoding="utf-8") as f:
        f.write("\n" * 112_525)  # 128,600 B with the 16,075 B card (13,600 B and 115,000 before cite102's locators)
    parses: list[int] = []
    parse = edit.tomlkit.parse
    monkeypatch.setattr(edit.tomlkit, "parse", lambda text: parses.append(len(text)) or parse(text))
    result = invoke(
        "fact", "set", H200, "memory.bandwidth", "--value", "4.9", "--unit", "TB/s", "--provenance", "published",
        "--source", "nvidia-h200-datasheet", "--locator", "xyzw", root=root,
    )
    assert result.exit_code == 0, result.output
    # the locked prices the bandwidth moves are said too (one line, tests/test_fixw56.py), not a stale fact
    assert [line.split(" is stale:")[0] for line in result.stderr.splitlines() if ": the edit moves " not in line] == [
        *(f"passprice: warning: {CARD}: streams.{name}" for name in ("read", "rewrite", "append")),
        f"passprice: warning: {CARD}: `passprice fact recompute {H200}` writes them from today's inputs (`passprice "
        "diff` fails a change that leaves a derived fact stale)",
    ]
    assert len(parses) == 1, parses


def test_a_bandwidth_that_recomputes_a_share_past_1_is_still_said(tmp_path: Path) -> None:
    """The plain-data check finds what the tomlkit one did: 3 TB/s makes each stream share recompute past its bound
    1, one warning line each, naming the schema's rule."""
    root = copy_root(tmp_path)
    result = invoke(
        "fact", "set", H200, "memory.bandwidth", "--value", "3", "--unit", "TB/s", "--provenance", "published",
        "--source", "nvidia-h200-datasheet", "--locator", "xyzw", root=root,
    )
    assert result.exit_code == 0, result.output
    # No `fact recompute` hint: the values it would write are ones the schema refuses (session 15).
    assert "fact recompute" not in result.stderr
    assert [line for line in result.stderr.splitlines() if ": the edit moves " not in line][3:] == [
        f"passprice: warning: {CARD}: memory.bandwidth: 3 TB/s would make streams.{name}, derived from it, {value} "
        f"when recomputed, which its schema refuses (streams.{name}.value: {value} is greater than the maximum of 1): "
        "the card's figures disagree"
        for name, value in (("read", "1.493"), ("rewrite", "1.333"), ("append", "1.383"))
    ]


def _draft_of_64_acceptances(root: Path) -> Path:
    """qwen35-mtp with acceptance.4 … acceptance.64 added, each ``acceptance.1 - 0.2`` (a valid 31 KB file)."""
    path = root / "facts" / "drafts" / "qwen35-mtp.toml"
    with path.open("a", encoding="utf-8") as f:
        for n in range(4, 65):
            f.write(
                f'\n[acceptance.{n}]\nvalue = 0.65\nunit = "1"\nprovenance = "assumed"\nsource = "qwen35-mtp-review"\n'
                'locator = "a placeholder"\nderivation.formula = "first - step"\n'
                'derivation.inputs.first = { fact = "acceptance.1", value = 0.85, unit = "1" }\n'
                'derivation.inputs.step = { value = 0.2, unit = "1", constant = "assumed drop" }\n'
            )
    return path


def test_sixty_one_derived_acceptances_pushed_below_0_are_checked_by_one_schema_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fact set --draft qwen35-mtp acceptance.1 --value 0.1`` on a method of 64 acceptances each derived from
    acceptance.1 took 2.55 s of CPU: each of the 61 recomputed below 0 was placed and the whole file validated
    alone (jsonschema explaining every failure). The recomputed entries are placed together and validated once now
    (0.6 s), the problems told apart by key path: the same 61 lines."""
    root = copy_root(tmp_path)
    _draft_of_64_acceptances(root)
    calls: list[str] = []
    problems = edit.schema.problems
    monkeypatch.setattr(edit.schema, "problems", lambda doc, kind, folder=None: calls.append(kind) or problems(
        doc, kind, folder))
    result = invoke(
        "fact", "set", "--draft", "qwen35-mtp", "acceptance.1", "--value", "0.1", "--unit", "1", "--provenance",
        "estimated", "--source", "deepseek-v3-technical-report", "--locator", "xyzw", root=root,
    )
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "would make" in line]
    assert said == [
        f"passprice: warning: facts/drafts/qwen35-mtp.toml: acceptance.1: 0.1 would make acceptance.{n}, derived from "
        f"it, -0.1 when recomputed, which its schema refuses (acceptance.{n}.value: -0.1 is less than the minimum of "
        "0): the card's figures disagree"
        for n in range(4, 65)
    ]
    assert len(calls) < 10, calls  # the edit's own checks and one for the recomputed entries (67 before)


# --- (b) a file with other names (hard links) is not split by a rename ----------------------------------------------

HARD_LINKED = (
    ": has 2 names (hard links); passprice replaces a file by renaming a new one into place, which would leave the "
    "other names holding the old text: remove the other names, or give this one a copy of its own first"
)


def test_fact_set_of_a_card_with_a_second_name_is_refused_and_both_names_keep_one_file(tmp_path: Path) -> None:
    """``ln facts/cards/h200_sxm_141gb.toml elsewhere.toml`` then ``fact set``: the card got the edit in a new file
    by a rename, the other name kept the old text, and the two were two files without a word (exit 0). Refused
    now, before anything is written: both names are still one file."""
    root = copy_root(tmp_path)
    other = tmp_path / "elsewhere.toml"
    other.hardlink_to(root / CARD)
    bad(
        "fact", "set", H200, "memory.bandwidth", "--value", "4.9", "--unit", "TB/s", "--provenance", "published",
        "--source", "nvidia-h200-datasheet", "--locator", "xyzw", root=root, says=f"{root / CARD}{HARD_LINKED}",
    )
    assert (root / CARD).stat().st_ino == other.stat().st_ino
    assert [p.name for p in (root / CARD).parent.iterdir() if ".tmp" in p.name] == []


def test_lock_update_and_output_force_refuse_a_file_with_a_second_name(tmp_path: Path) -> None:
    """The same rule for every writer (``files.check_writable``): ``lock --update`` of a hard-linked lock and
    ``sweep -o FILE --force`` over a hard-linked file."""
    root = copy_root(tmp_path)
    lock = root / "locks" / "r1-qwen7b-h200.lock.toml"
    (tmp_path / "lock-elsewhere").hardlink_to(lock)
    bad("lock", "--update", "r1-qwen7b-h200", root=root, says=f"{lock}{HARD_LINKED}")
    out = tmp_path / "out.csv"
    out.write_text("old\n", encoding="utf-8")
    (tmp_path / "out-elsewhere.csv").hardlink_to(out)
    bad("sweep", "r1-qwen7b-h200", "-o", str(out), "--force", root=root, says=f"{out}{HARD_LINKED}")
    assert out.read_text(encoding="utf-8") == "old\n"


# --- (c) an empty file name -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("sweep", "r1-qwen7b-h200", "--batches", "1", "-o", ""), "'-o' / '--output'"),
        (("simulate", "r1-qwen7b-h200", "--synthetic", "3", "-o", ""), "'-o' / '--output'"),
        (("lock", "r1-qwen7b-h200", "-o", ""), "'-o' / '--output'"),
        (("roofline", H200, "--plot", ""), "'--plot'"),
    ],
    ids=["sweep", "simulate", "lock", "roofline-plot"],
)
def test_an_empty_output_name_is_named_as_empty(tmp_path: Path, args: tuple[str, ...], option: str) -> None:
    """``-o ''`` became ``Path('.')``: "``.: is a folder; give a file to write``" (``--plot ''``: "``.: the file must
    end in .png or .svg``"), naming a folder nobody gave. The empty name is refused as such."""
    bad(*args, root=copy_root(tmp_path), says=(
        f"passprice: error: Invalid value for {option}: '' is an empty name: give a file name (see '"
    ))


def test_an_invisible_character_in_a_citation_is_refused_by_the_one_line_rule(tmp_path: Path) -> None:
    # Attack round 20 (found, fixed by the lead): U+200B and U+FEFF in --locator passed the schema's one-line rule,
    # so two locators that read alike on the screen differed, and a citation copied from a review found nothing.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    for ch, shown in (("\u200b", "\\u200b"), ("\ufeff", "\\ufeff"), ("\u2060", "\\u2060")):
        bad("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9", "--unit", "1", "--provenance",
            "estimated", "--source", "nvidia-h200-datasheet", "--locator", f"Table{ch} 1", root=root,
            says=f"'Table{shown} 1' holds a control character, a line separator, a bidi control or an invisible "
                 "character (a newline, a tab, U+2028, U+202E, U+200B …): write it on one line")
    assert card.read_bytes() == before


def test_import_origin_is_one_bounded_line(tmp_path: Path) -> None:
    # Attack round 20 (found, fixed by the lead): `import --origin` took a newline or 100 KB, written into the entry.
    root = copy_root(tmp_path)
    header = str(Path(__file__).parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz")
    bad("import", header, "--name", "g2", "--origin", "a\nb", root=root,
        says="cannot import: the entry would not read back (entry: entry.origin: 'a\\nb' holds a control character")
    bad("import", header, "--name", "g3", "--origin", "x" * 5000, root=root,
        says="cannot import: the entry would not read back (entry: entry.origin: 'xxxx")
    assert not (root / "registry" / "checkpoints" / "g2.toml").exists()
    assert not (root / "registry" / "checkpoints" / "g3.toml").exists()
    made = invoke("import", header, "--name", "g4", "--origin", "x" * 4000, root=root)
    assert made.exit_code == 0, made.output


def test_a_value_too_small_for_a_double_is_named_as_written(tmp_path: Path) -> None:
    # Attack round 20 (found, fixed by the lead): `--value 1e-400` underflowed to 0.0, and the error named 0.0, a
    # figure the user never gave.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    args = ("fact", "set", "h200_sxm_141gb", "streams.read", "--unit", "1", "--provenance", "estimated", "--source",
            "nvidia-h200-datasheet", "--locator", "Table 1")
    assert bad(*args, "--value", "1e-400", root=root) == [
        "passprice: error: --value: '1e-400' is too small for a double (it reads as 0): write the figure in a larger "
        "unit, or give 0 if 0 is meant"
    ]
    bad(*args, "--value", "0." + "0" * 400 + "1", root=root, says="is too small for a double (it reads as 0)")
    # a zero written as zero is judged by the schema, as before
    bad(*args, "--value", "0.0e-5", root=root, says="streams.read.value: 0.0 is less than the minimum of 1e-06")
    assert card.read_bytes() == before
