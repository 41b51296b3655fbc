"""Round 26 of hostile input (#13): outputs landing on files passprice reads that no earlier check saw (a link's
target of another format, a sweep file's servings and cards, a serving file's card, ``--stack FILE``, a document a
source record cites, passprice's own schemas), a folder where a locked serving was, and ``init`` into /proc.

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke

from passprice.registry import embedded_root, schema_dir

R1 = "r1-qwen7b-h200"
H200 = "h200_sxm_141gb"
CONFIG = str(REPO / "examples" / "configs" / "meta-llama-3-8b.json")


def _passprice(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "passprice", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


# --- (a) a link whose name asks for one format and whose target's name another -------------------------------------


def test_a_link_named_for_one_format_onto_a_file_of_another_is_refused(tmp_path: Path) -> None:
    # Round 26: `sweep R1 -o gl.json --force`, gl.json a link to g.csv, wrote JSON rows into g.csv, exit 0: the
    # format followed the name typed, the file replaced was the target. `--plot p.png`, a link to x.svg, the same.
    root = copy_root(tmp_path)
    csv = tmp_path / "g.csv"
    csv.write_text("a,b\n")
    link = tmp_path / "gl.json"
    link.symlink_to(csv)
    assert bad("sweep", R1, "--batches", "1", "-o", str(link), "--force", root=root) == [
        f"passprice: error: {link} (a link to {csv}): -o would write the .json format the name asks for into a file "
        "whose name ends in .csv: give the file's own name, or another file"
    ]
    assert csv.read_text() == "a,b\n" and link.is_symlink()
    picture = tmp_path / "p.png"
    picture.symlink_to(tmp_path / "x.svg")
    line = (f"passprice: error: {picture} (a link to {tmp_path / 'x.svg'}): --plot would write the .png format the "
            "name asks for into a file whose name ends in .svg: give the file's own name, or another file")
    for command in (("roofline", H200, R1), ("audit", R1), ("validate",), ("sweep", R1, "--batches", "1")):
        assert bad(*command, "--plot", str(picture), "--force", root=root) == [line], command
    assert not (tmp_path / "x.svg").exists()
    # A link without a suffix of its own follows its target's: JSON into g.json.
    (tmp_path / "g.json").write_text("[]\n")
    bare = tmp_path / "out"
    bare.symlink_to(tmp_path / "g.json")
    assert invoke("sweep", R1, "--batches", "1", "-o", str(bare), "--force", root=root).exit_code == 0
    assert (tmp_path / "g.json").read_text().startswith("[\n{") and bare.is_symlink()


# --- (b) inputs named inside a sweep file or a serving file, and --stack FILE -----------------------------------------


def _input_line(output: Path, reads: str, given: Path, option: str = "-o") -> str:
    return (f"passprice: error: {output}: {option} {output} is {reads} {given}, a file the command reads; writing it "
            "would replace that input: give another file")


def test_an_output_over_a_file_a_sweep_file_or_serving_file_names_is_refused(tmp_path: Path) -> None:
    # Round 26: `sweep --file grid.toml -o s.toml --force` (grid.toml naming s.toml, a serving file, and c.toml, a
    # card) replaced the serving with the CSV, exit 0, and `-o c.toml` the card; `sweep s2.toml -o c.toml --force`,
    # `simulate s2.toml ... -o c.toml` and `lock s2.toml -o c.toml` (s2.toml's card = c.toml) the card; `sweep R1
    # --stack st.toml -o st.toml --force` and `simulate R1 --stack st.toml -o st.toml` the stack: only the command
    # line's own names were compared with the output.
    root = copy_root(tmp_path)
    serving, card, stack = tmp_path / "s.toml", tmp_path / "c.toml", tmp_path / "st.toml"
    serving.write_bytes((root / "registry" / "servings" / f"{R1}.toml").read_bytes())
    card.write_bytes((root / "facts" / "cards" / f"{H200}.toml").read_bytes())
    stack.write_bytes((root / "facts" / "stacks" / "llamacpp-cuda-2405.toml").read_bytes())
    grid = tmp_path / "grid.toml"
    grid.write_text(f'servings = ["{serving}"]\ncards = ["{card}"]\nbatches = [1, 2]\n')
    other = tmp_path / "s2.toml"
    other.write_text("\n".join(f'card = "{card}"' if line.startswith("card =") else line
                               for line in serving.read_text().splitlines()) + "\n")
    before = {p: p.read_bytes() for p in (serving, card, stack, grid, other)}
    assert bad("sweep", "--file", str(grid), "-o", str(serving), "--force", root=root) == [
        _input_line(serving, f"{grid}: servings.0", serving)]
    assert bad("sweep", "--file", str(grid), "-o", str(card), "--force", root=root) == [
        _input_line(card, f"{grid}: cards.0", card)]
    assert bad("sweep", str(other), "--batches", "1", "-o", str(card), "--force", root=root) == [
        _input_line(card, f"{other}: card", card)]
    assert bad("simulate", str(other), "--synthetic", "3", "-o", str(card), "--force", root=root) == [
        _input_line(card, f"{other}: card", card)]
    assert bad("lock", str(other), "-o", str(card), "--force", root=root) == [_input_line(card, f"{other}: card", card)]
    assert bad("sweep", R1, "--batches", "1", "--stack", str(stack), "-o", str(stack), "--force", root=root) == [
        _input_line(stack, "--stack", stack)]
    assert bad("simulate", R1, "--stack", str(stack), "--synthetic", "3", "-o", str(stack), "--force",
               root=root) == [_input_line(stack, "--stack", stack)]
    assert {p: p.read_bytes() for p in before} == before
    # The grid priced to another file, as before.
    out = tmp_path / "out.csv"
    assert invoke("sweep", "--file", str(grid), "-o", str(out), root=root).exit_code == 0
    assert out.read_text().count("\n") == 3


# --- (e) a document a source record cites, passprice's own schemas and package ---------------------------------------


def test_an_output_over_a_document_a_source_record_cites_is_refused(tmp_path: Path) -> None:
    # Round 26: `sweep R1 -o facts/stacks/README.md --force` replaced the calibration document
    # sources/passprice-stack-calibration.toml cites (source.path) with CSV rows, exit 0, and check still said
    # "all holds"; through a link named rd.csv to facts/cards/README.md the same.
    root = copy_root(tmp_path)
    document = root / "facts" / "stacks" / "README.md"
    cards_doc = root / "facts" / "cards" / "README.md"
    before = {p: p.read_bytes() for p in (document, cards_doc)}
    record = root / "sources" / "passprice-stack-calibration.toml"
    assert bad("sweep", R1, "--batches", "1", "-o", str(document), "--force", root=root) == [
        f"passprice: error: {document}: -o would replace facts/stacks/README.md, the document {record} cites "
        "(source.path): write it elsewhere"
    ]
    link = tmp_path / "rd.csv"
    link.symlink_to(cards_doc)
    assert bad("simulate", R1, "--synthetic", "3", "-o", str(link), "--force", root=root) == [
        f"passprice: error: {link} (a link to {cards_doc}): -o would replace facts/cards/README.md, the document "
        f"{root / 'sources' / 'passprice-card-review.toml'} cites (source.path): write it elsewhere"
    ]
    assert {p: p.read_bytes() for p in before} == before


def test_an_output_into_passprices_own_schemas_or_package_is_refused(tmp_path: Path) -> None:
    # Round 26: `sweep R1 -o CHECKOUT/schema/x.json` wrote into the JSON Schemas every file is validated against
    # (with --force over card.schema.json, every later command failed), `lock R1 --root COPY -o
    # CHECKOUT/schema/card.schema.json --force` likewise, and `synth CONFIG -o src/passprice/x.gguf` into the package.
    root = copy_root(tmp_path)
    schemas = schema_dir()
    new = schemas / "zz-round26.json"
    package = Path(sys.modules["passprice"].__file__ or "").parent
    header = package / "zz-round26.gguf"
    try:
        assert bad("sweep", R1, "--batches", "1", "-o", str(new), root=root) == [
            f"passprice: error: {new}: -o would write into {schemas}/, the JSON Schemas passprice validates against: "
            "write it elsewhere"
        ]
        card_schema = schemas / "card.schema.json"
        before = card_schema.read_bytes()
        assert bad("lock", R1, "-o", str(card_schema), "--force", root=root) == [
            f"passprice: error: {card_schema}: -o would write into {schemas}/, the JSON Schemas passprice validates "
            "against: write the lock elsewhere"
        ]
        assert card_schema.read_bytes() == before
        assert bad("synth", CONFIG, "-o", str(header), root=root) == [
            f"passprice: error: {header}: -o would write into {package}/, passprice's own package: write it elsewhere"
        ]
        (root / "schema").mkdir()
        mine = root / "schema" / "card.schema.json"
        mine.write_bytes(before)
        assert bad("sweep", R1, "--batches", "1", "-o", str(mine), "--force", root=root) == [
            f"passprice: error: {mine}: -o would write into {root / 'schema'}/, the registry's copy of passprice's "
            "JSON Schemas: write it elsewhere"
        ]
        assert mine.read_bytes() == before
    finally:
        new.unlink(missing_ok=True)
        header.unlink(missing_ok=True)
    assert not new.exists() and not header.exists()


def test_an_output_into_the_embedded_registrys_records_is_refused(tmp_path: Path) -> None:
    # Round 26: run outside any registry (the embedded one: for an editable install, the checkout itself), `sweep R1
    # -o CHECKOUT/registry/servings/NEW.toml` wrote CSV among the checkout's servings (with --force over R1.toml,
    # the serving itself), exit 0: the embedded registry was never judged.
    # The embedded registry: the checkout for an editable install, passprice/_data for a wheel (CI installs one).
    embedded = embedded_root().path
    new = embedded / "registry" / "servings" / "zz-round26.toml"
    try:
        done = _passprice("sweep", R1, "--batches", "1", "-o", str(new), cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert done.stderr.splitlines() == [
            f"passprice: error: {new}: -o would write into {embedded / 'registry'}/, where every .toml file is a "
            "record passprice reads (this output is none): write it outside the registry's record folders, or under "
            "another suffix"
        ]
    finally:
        new.unlink(missing_ok=True)
    assert not new.exists()


# --- (c) a folder where the locked serving was ------------------------------------------------------------------------


def test_reproduce_says_a_folder_at_the_serving_is_a_folder(tmp_path: Path) -> None:
    # Round 26: with a folder at registry/servings/R1.toml, `reproduce R1` said "serving r1-qwen7b-h200 is no longer
    # registered (priced as the lock embeds it)" and priced today's inputs, while check and price said "is a folder,
    # not a serving file".
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / f"{R1}.toml"
    serving.unlink()
    serving.mkdir()
    result = invoke("reproduce", R1, root=root)
    # left41: bad input, exit 2 on the file's line after the report, as check says of it (was exit 0, a note)
    assert result.exit_code == 2, result.output
    assert ("    facts          today's files do not read: registry/servings/r1-qwen7b-h200.toml: is a folder, not a "
            "serving file (bad input: not judged; the price above is rebuilt from the lock's pins alone)\n"
            ) in result.stdout
    assert result.stderr == ("passprice: error: registry/servings/r1-qwen7b-h200.toml: is a folder, not a serving "
                             "file\n")
    assert "no longer registered" not in result.stdout
    # Nothing there at all: not registered (a copy with no git history shows no serving was: "not registered
    # here", tests/test_walk117.py).
    serving.rmdir()
    result = invoke("reproduce", R1, root=root)
    assert "    serving        serving r1-qwen7b-h200 is not registered here (priced as the lock embeds it)\n" in (
        result.stdout)


# --- (d) init into a folder the kernel makes -------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
def test_init_into_proc_says_the_folder_is_not_writable(tmp_path: Path) -> None:
    # Round 26: `init /proc/self` said "cannot write: No such file or directory" of a folder that exists.
    lines = bad("init", "/proc/self/registry", root=copy_root(tmp_path))
    if os.geteuid() != 0:
        assert lines == ["passprice: error: /proc/self/registry: cannot write: the folder /proc/self is not writable"]
    else:  # root may write anywhere by its permission bits: the kernel's answer, said of the folder
        assert lines[0].startswith("passprice: error: /proc/self/registry: cannot write: the folder ")
    assert "No such file or directory" not in lines[0]


# --- fresh attacks: names, the cache's home ---------------------------------------------------------------------------


def test_a_name_in_another_unicode_normalization_is_said_so(tmp_path: Path) -> None:
    # Round 26: with facts/cards/é40.toml (NFC), `fact show` of the NFD spelling (e + U+0301) said "card 'é40': not
    # found in …/facts/cards (registered: …, é40)": two strings that print alike, nothing telling them apart.
    import unicodedata

    root = copy_root(tmp_path)
    nfc = unicodedata.normalize("NFC", "é40")
    (root / "facts" / "cards" / f"{nfc}.toml").write_bytes((root / "facts" / "cards" / "a40.toml").read_bytes())
    nfd = unicodedata.normalize("NFD", nfc)
    for args in (("fact", "show", nfd), ("price", R1, "--card", nfd)):
        lines = bad(*args, root=root)
        assert lines[0].startswith(
            f"passprice: error: card {nfd!r}: not found in facts/cards; 'e\\u030140' is the registered "
            "'\\xe940' in another Unicode normalization (they print alike): give the name as registered (registered: "
        ), lines
    assert invoke("fact", "show", nfc, root=root).exit_code == 0


def test_a_registry_name_with_a_folder_does_not_reach_outside_its_folder(tmp_path: Path) -> None:
    # Round 26: `--root R fact set ../../../other/facts/cards/a40 memory.bandwidth …` edited the card of another
    # registry, exit 0 (validated against R's sources), and `price R1 --card ../drafts/qwen35-mtp` read a drafting
    # method as a card: a name was joined to the folder (facts/cards/NAME.toml) with its `..` parts, wherever they
    # led.
    root = copy_root(tmp_path)
    other = copy_root(tmp_path / "other")
    card = other / "facts" / "cards" / "a40.toml"
    before = card.read_bytes()
    escape = os.path.relpath(card.with_suffix(""), root / "facts" / "cards")
    assert escape.startswith("..")
    assert bad("fact", "set", escape, "memory.bandwidth", "--value", "0.7", "--unit", "TB/s", "--provenance",
               "published", "--source", "nvidia-a40-datasheet", "--locator", "Specifications table",
               root=root) == [
        f"passprice: error: {escape}: no such card file: a card name is a file of facts/cards, and this one "
        f"leads out of it (to {card}, a file of another folder); to read a card file from elsewhere give its path, "
        "ending in .toml"]
    assert card.read_bytes() == before
    for option, name, kind, folder, there in (
            ("--card", "../drafts/qwen35-mtp", "card", "facts/cards", "facts/drafts/qwen35-mtp.toml, the drafting "
             "method qwen35-mtp"),
            ("--stack", "../cards/a40", "stack", "facts/stacks", "facts/cards/a40.toml, the card a40")):
        assert bad("price", R1, option, name, root=root) == [
            f"passprice: error: {name}: no such {kind} file: a {kind} name is a file of {folder}, and this one "
            f"leads out of it (to {there}); to read a {kind} file from elsewhere give its path, ending in .toml"]
    assert bad("price", "../../facts/cards/a40", root=root) == [
        "passprice: error: ../../facts/cards/a40: no such serving file: a serving name is a file of "
        "registry/servings, and this one leads out of it (to facts/cards/a40.toml, the card a40); to "
        "read a serving file from elsewhere give its path, ending in .toml"]
    # A name that stays in its folder is that folder's record, as before (round 10: ./R1, ../servings/R1).
    assert invoke("price", R1, "--card", "./a40", root=root).exit_code == 0
    assert invoke("price", R1, "--card", "../cards/a40", root=root).exit_code == 0


def test_a_home_folder_that_does_not_exist_is_not_created_for_the_cache(tmp_path: Path) -> None:
    # Round 26: with HOME=/nonexistent (the home of system accounts such as nobody) and no XDG_CACHE_HOME, a run
    # created /nonexistent/.cache/passprice at the file system's top; no cache is kept instead, the run unchanged.
    home = tmp_path / "nonexistent"
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "PASSPRICE_CACHE_DIR",
                                                               "PASSPRICE_NO_CACHE")}
    done = subprocess.run([sys.executable, "-m", "passprice", "--root", str(REPO), "cards"], cwd=tmp_path,
                          env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout.startswith("card ")
    assert not home.exists()


def test_a_plot_over_the_header_it_draws_is_refused(tmp_path: Path) -> None:
    # Round 26: `roofline CARD --checkpoint h.png --plot h.png --force` and `audit --checkpoint h.png --card CARD
    # --plot h.png --force` (a GGUF header named h.png: passprice reads any file not a .toml as a header) drew the
    # picture over the header they had just priced, exit 0: neither command compared --plot with its inputs.
    import lzma

    header = tmp_path / "h.png"
    header.write_bytes(lzma.decompress((REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz").read_bytes()))
    before = header.read_bytes()
    line = _input_line(header, "checkpoint", header, "--plot")
    assert bad("roofline", H200, "--checkpoint", str(header), "--plot", str(header), "--force") == [line]
    assert bad("audit", "--checkpoint", str(header), "--card", H200, "--plot", str(header), "--force") == [line]
    assert header.read_bytes() == before


def test_an_output_over_another_shard_of_a_split_checkpoint_is_refused(tmp_path: Path) -> None:
    # Round 26 left it: an output was compared with the shard named only, so `lock --checkpoint m-00001-of-00002.gguf
    # -o m-00002-of-00002.gguf --force` could replace the second shard, which the command reads too.
    import numpy as np
    from gguf import GGUFWriter

    from passprice.errors import InputError
    from passprice.files import require_not_input

    writer = GGUFWriter(tmp_path / "m.gguf", "llama", split_max_tensors=1)
    for name in ("a", "b"):
        writer.add_tensor(name, np.zeros((4,), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    first, second = tmp_path / "m-00001-of-00002.gguf", tmp_path / "m-00002-of-00002.gguf"
    before = second.read_bytes()
    bad("lock", "--checkpoint", str(first), "--card", "h200_sxm_141gb", "-o", str(second), "--force",
        says=f"-o {second} is a shard of the split checkpoint --checkpoint {first} starts, a file the command reads")
    assert second.read_bytes() == before
    # names only, and only the same stem, count and folder
    with pytest.raises(InputError, match="is a shard of the split checkpoint"):
        require_not_input(("--checkpoint", first), ("-o", tmp_path / "m-00002-of-00002.gguf.xz"))
    require_not_input(("--checkpoint", first), ("-o", tmp_path / "m-00002-of-00003.gguf"))
    require_not_input(("--checkpoint", first), ("-o", tmp_path / "n-00002-of-00002.gguf"))
    (tmp_path / "elsewhere").mkdir()
    require_not_input(("--checkpoint", first), ("-o", tmp_path / "elsewhere" / "m-00002-of-00002.gguf"))
