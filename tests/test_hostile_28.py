"""Round 28 of hostile input (#13): names that are only a suffix, compressed names over another format, the "has one"
hint for a path leading out of the checkout, references with folders in them recorded by a lock, a lock's format and
name edited and digested again, TOML values shown in Python's spelling, and a record folder linked to another.

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
CONFIG = str(REPO / "examples" / "configs" / "meta-llama-3-8b.json")
HEADER_NAMES = ".gguf (or .gguf.xz, .gguf.gz to compress it)"


# --- (1) a name that is only a suffix ---------------------------------------------------------------------------------


def test_a_name_that_is_only_a_suffix_names_its_format(tmp_path: Path) -> None:
    # Round 28: pathlib gives `.json` no suffix (a hidden file), so `sweep R1 -o .json` wrote CSV into it, `synth -o
    # .gz` an uncompressed header, `synth -o .json` and `lock -o .json` a header and TOML, each exit 0.
    root = copy_root(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    result = invoke("sweep", R1, "--batches", "1", "-o", str(out / ".json"), root=root)
    assert result.exit_code == 0, result.output
    assert json.loads((out / ".json").read_text())[0]["serving"] == R1
    assert invoke("synth", CONFIG, "-o", str(out / ".gz"), root=root).exit_code == 0
    assert gzip.decompress((out / ".gz").read_bytes())[:4] == b"GGUF"
    for command, name, line in (
            (("synth", CONFIG), ".json", f"-o would write a GGUF header into a file whose name ends in .json (a name "
                                         f"that says JSON): name it {HEADER_NAMES}"),
            (("lock", R1), ".json", "-o would write a lock (TOML) into a file whose name ends in .json (a name that "
                                    "says JSON): name it NAME.lock.toml"),
            (("simulate", R1, "--synthetic", "2"), ".CSV", "-o would write a simulation (a text table, or JSON) into a "
                                                           "file whose name ends in .csv (a name that says CSV): name "
                                                           "it .json for JSON, or .txt for the table")):
        path = tmp_path / name
        assert bad(*command, "-o", str(path), root=root) == [f"passprice: error: {path}: {line}"]
        assert not path.exists()
    # A name ending in a dot named no format (the command's own was written); since leftovers 28b it is a name
    # Windows cannot hold, refused before anything is written.
    path = out / "rows.json."
    assert bad("sweep", R1, "--batches", "1", "-o", str(path), root=root) == [
        f"passprice: error: {path}: the name 'rows.json.' ends in a dot, which Windows drops: no checkout on Windows "
        "can hold the name (Git for Windows refuses it), and passprice writes no file a repository could not share: "
        "give another name"]
    assert not path.exists()


def test_a_plot_named_only_by_its_suffix_is_drawn_and_roofline_says_what_audit_says(tmp_path: Path) -> None:
    # Round 28: `audit R1 --plot .png` said "--plot .png: the file must end in .png or .svg" of a name that does;
    # `roofline CARD R1 --plot x.png.` gave click's "Invalid value for --plot: x.png.: …" where audit gives one line.
    pytest.importorskip("matplotlib")
    root = copy_root(tmp_path)
    plot = tmp_path / ".svg"
    result = invoke("audit", R1, "--plot", str(plot), root=root)
    assert result.exit_code == 0, result.output
    assert plot.read_bytes().lstrip().startswith(b"<?xml")
    wrong = tmp_path / "x.png."
    assert bad("roofline", "h200_sxm_141gb", R1, "--plot", str(wrong), root=root) == [
        f"passprice: error: --plot {wrong}: the file must end in .png or .svg"]


@pytest.mark.parametrize(("name", "inner", "says"), [("h.json.gz", ".json", "gzip-compressed JSON"),
                                                     ("h.gguf.xz.gz", ".xz", "gzip-compressed xz"),
                                                     ("h.toml.xz", ".toml", "xz-compressed TOML")])
def test_a_compressed_name_over_another_format_is_refused(tmp_path: Path, name: str, inner: str, says: str) -> None:
    # Round 28: `synth CONFIG -o h.json.gz` wrote a gzipped header, which gunzip leaves as h.json; `-o h.gguf.xz.gz`
    # one gunzip leaves as h.gguf.xz, no xz file; each exit 0.
    path = tmp_path / name
    outer = name[name.rindex("."):]
    word = "gzip" if outer == ".gz" else "xz"
    assert bad("synth", CONFIG, "-o", str(path)) == [
        f"passprice: error: {path}: -o would write a {word}-compressed GGUF header into a file whose name ends in "
        f"{inner}{outer} (a name that says {says}): name it {HEADER_NAMES}"]
    assert not path.exists()
    # A suffix naming no format passprice writes before it is the user's (h.tar.gz is still a gzipped header).
    assert invoke("synth", CONFIG, "-o", str(tmp_path / "h.tar.gz")).exit_code == 0


# --- (1) "no such file here; TOP has one" -----------------------------------------------------------------------------


def test_a_path_leading_out_of_the_checkout_is_not_said_to_be_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Round 28: run from /tmp/x, `sweep --file ../../main/examples/grid.toml` said "/…/attack has one: run there, or
    # give /…/attack/../../main/examples/grid.toml", a file of another checkout.
    from click.testing import CliRunner

    from passprice.cli import cli

    monkeypatch.chdir(tmp_path)
    ref = f"../{REPO.name}/examples/grid.toml"  # from the checkout: its own grid, by a path leading out and back
    assert (REPO / ref).is_file() and not (tmp_path / ref).exists()
    result = CliRunner().invoke(cli, ["--root", str(REPO), "sweep", "--file", ref])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"passprice: error: {ref}: no such file"]


# --- (1) record names with folders in them ----------------------------------------------------------------------------


def test_a_lock_records_a_name_with_a_folder_in_it_by_the_entry_it_reads(tmp_path: Path) -> None:
    # Round 28: `lock --checkpoint .//M --card ./a40` wrote checkpoint.name = ".//M", serving.checkpoint = ".//M",
    # serving.card = "./a40"; `--draft ./qwen35-mtp` and `--routing ../routing/uniform` the same (the entries they read
    # are M, a40, qwen35-mtp and uniform).
    import tomllib

    root = copy_root(tmp_path)
    model = "deepseek-r1-distill-qwen-7b-q4_k_m"
    for name, args in (("c", ("--checkpoint", f".//{model}", "--card", "./a40")),
                       ("d", ("qwen35-27b-h200-chat", "--draft", "./qwen35-mtp", "--draft-tokens", "2")),
                       ("m", ("qwen3-30b-a3b-h200", "--routing", "../routing/uniform"))):
        out = tmp_path / f"{name}.lock.toml"
        result = invoke("lock", *args, "-o", str(out), root=root)
        assert result.exit_code == 0, result.output
        lock = tomllib.loads(out.read_text(encoding="utf-8"))
        serving = lock["serving"]
        if name == "c":
            assert (lock["checkpoint"]["name"], serving["checkpoint"], serving["card"]) == (model, model, "a40")
        elif name == "d":
            assert serving["draft"]["method"] == "qwen35-mtp"
        else:
            assert serving["routing"] == "uniform"
        assert invoke("reproduce", str(out), root=root).exit_code == 0


def test_a_name_ending_in_a_slash_is_said_to_name_a_folder(tmp_path: Path) -> None:
    # Round 28: `--card a40/` said "leads out of it (to …/facts/cards/a40/.toml)"; `--checkpoint M/` "no such
    # checkpoint file".
    root = copy_root(tmp_path)
    assert bad("price", R1, "--card", "a40/", root=root) == [
        "passprice: error: a40/: no such card file: a name ending in / names a folder; the registered card is named "
        "a40"]
    assert bad("price", R1, "--card", "nope/", root=root) == [
        "passprice: error: nope/: no such card file: a name ending in / names a folder"]
    model = "deepseek-r1-distill-qwen-7b-q4_k_m"
    assert bad("price", "--checkpoint", f"{model}/", "--card", "a40", root=root) == [
        f"passprice: error: {model}/: no such checkpoint file: a name ending in / names a folder; the registered "
        f"checkpoint is named {model}"]


# --- (2) a lock's format and name, edited and digested again ----------------------------------------------------------


def _redigested(source: Path, out: Path, table: str, key: str, value: object) -> None:
    """``source``'s lock with ``[table] key = value`` and every digest computed again, as an attacker who knows the
    rule writes it."""
    import tomlkit

    from passprice.digests import sha256
    from passprice.locks import _PREAMBLE, _canonical, lock_document, read_lock

    body = lock_document(read_lock(source))
    body[table][key] = value
    del body["lock"]["digest"]
    body["lock"]["digest"] = "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest()
    out.write_text(_PREAMBLE + tomlkit.dumps(body), encoding="utf-8")


def test_a_lock_of_format_2_0_is_refused(tmp_path: Path) -> None:
    # Round 28 (a leftover of 27): `format = 2.0`, digested again, read as format 2 (JSON Schema's enum counts 2.0
    # equal to 2), where passprice writes the integer.
    root = copy_root(tmp_path)
    out = tmp_path / "f.lock.toml"
    _redigested(root / "locks" / f"{R1}.lock.toml", out, "lock", "format", 2.0)
    assert bad("reproduce", str(out), root=root) == [
        f"passprice: error: {out}: lock.format: 2.0 is not allowed here (one of 2: a whole number, written without a "
        "decimal point)"]


def test_a_lock_named_with_a_slash_is_refused(tmp_path: Path) -> None:
    # Round 28 (a leftover of 27): lock.name = "../../etc/passwd", digested again: `reproduce` and `check` printed
    # "lock ../../etc/passwd …: ok". A lock is named after its file, whose name holds no '/'.
    root = copy_root(tmp_path)
    out = root / "locks" / "evil.lock.toml"
    _redigested(root / "locks" / f"{R1}.lock.toml", out, "lock", "name", "../../etc/passwd")
    line = ("lock.name: '../../etc/passwd' is not a lock's name (its file's name less .lock.toml, which holds no "
            "'/')")
    assert bad("reproduce", str(out), root=root) == [f"passprice: error: {out}: {line}"]
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert f"passprice: error: locks/evil.lock.toml: {line}\n" in result.stderr


def test_a_toml_value_is_shown_as_toml_writes_it(tmp_path: Path) -> None:
    # Round 28: `format = true` in a lock said "lock.format: True is not allowed here", a serving's `card = true`
    # "card: True is not of type 'string'" and `batch = 2024-01-01` "datetime.date(2024, 1, 1) is not of type
    # 'integer'": Python's spelling of values the file writes as TOML does.
    root = copy_root(tmp_path)
    lock = tmp_path / "t.lock.toml"
    text = (root / "locks" / f"{R1}.lock.toml").read_text(encoding="utf-8")
    lock.write_text(text.replace("\nformat = 2\n", "\nformat = true\n"), encoding="utf-8")
    assert bad("reproduce", str(lock), root=root) == [
        f"passprice: error: {lock}: lock.format: true is not allowed here (one of 2)"]
    serving = tmp_path / "s.toml"
    text = (root / "registry" / "servings" / f"{R1}.toml").read_text(encoding="utf-8")
    text = text.replace('card = "h200_sxm_141gb"', "card = true").replace("batch = 1", "batch = 2024-01-01")
    serving.write_text(text, encoding="utf-8")
    assert bad("price", str(serving), root=root) == [
        f"passprice: error: {serving}: batch: 2024-01-01 is not of type 'integer'",
        f"passprice: error: {serving}: card: true is not of type 'string'"]


# --- (2) a record folder linked to another ----------------------------------------------------------------------------


def test_a_record_folder_linked_to_another_kinds_is_one_line(tmp_path: Path) -> None:
    # Round 28 (a leftover of 27): facts/drafts a link to facts/cards: check gave 17 lines "facts/drafts/a40.toml:
    # method: missing (required): this is a card file …", one a card, and 5 more of servings whose drafting method
    # was "not found (registered: a100_pcie_80gb, …)", none naming the link.
    root = copy_root(tmp_path)
    drafts = root / "facts" / "drafts"
    for path in drafts.iterdir():
        path.unlink()
    drafts.rmdir()
    os.symlink("cards", drafts)
    line = ("a symbolic link to facts/cards, the registry's folder of another kind of record, whose files would be "
            "read as this kind: each kind keeps a folder of its own (remove the link)")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    errors = result.stderr.splitlines()
    assert errors[0] == f"passprice: error: facts/drafts: {line}"
    assert not any("this is a card file" in e or "drafting method 'qwen35-mtp'" in e for e in errors), errors
    assert bad("price", "qwen35-27b-h200-mtp", root=root) == [f"passprice: error: {drafts}: {line}"]
    # A record folder linked to a folder of the root that is no record folder is still read.
    os.unlink(drafts)
    (root / "facts" / "my-drafts").mkdir()
    os.symlink("my-drafts", drafts)
    assert bad("price", "qwen35-27b-h200-mtp", root=root, says="drafting method 'qwen35-mtp': not found")


# --- (3) empty folder names, and a file whose name gives no checkpoint name -------------------------------------------


def test_an_empty_folder_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 28: `init ''` (`init "$DIR"` with DIR unset) wrote a registry into the working folder, exit 0, and
    # `--root ''` read the working folder's: pathlib reads '' as '.'.
    monkeypatch.chdir(tmp_path)
    assert bad("init", "") == [
        "passprice: error: Invalid value for '[DIRECTORY]': '' is an empty name: give a folder name (. for the "
        "working folder) (see 'cli init --help')"]
    assert list(tmp_path.iterdir()) == []
    from click.testing import CliRunner

    from passprice.cli import cli

    result = CliRunner().invoke(cli, ["--root", "", "cards"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "passprice: error: Invalid value for '--root': '' is an empty name: give a folder name (. for the working "
        "folder) (see 'cli --help')"]


def test_a_file_whose_name_gives_no_checkpoint_name_is_told_to_give_one(tmp_path: Path) -> None:
    # Round 28: `import .gz` (a gzipped header named only by its suffix) said "checkpoint name '': use letters …", of
    # a name nobody gave.
    root = copy_root(tmp_path)
    packed = tmp_path / ".gz"
    assert invoke("synth", CONFIG, "-o", str(packed), root=root).exit_code == 0
    assert bad("import", str(packed), root=root) == [
        f"passprice: error: {packed}: imported under its file's name less its suffixes, '', which is no checkpoint "
        "name: give --name NAME (letters, digits, '.', '_' and '-', first a letter or digit)"]
    result = invoke("import", str(packed), "--name", "packed", root=root)
    assert result.exit_code == 0, result.output
