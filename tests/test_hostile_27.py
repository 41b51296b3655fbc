"""Round 27 of hostile input (#13): an output's format against its file's suffix for every command that writes one,
checkpoint names leading out of their folder, and what a round-27 attacker found besides.

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
H200 = "h200_sxm_141gb"
CONFIG = str(REPO / "examples" / "configs" / "meta-llama-3-8b.json")


# --- (1a) an output's format follows its file's suffix, or the file is refused ----------------------------------------


def _suffix_line(path: Path, what: str, suffix: str, says: str, names: str) -> str:
    return (f"passprice: error: {path}: -o would write {what} into a file whose name ends in {suffix} (a name that "
            f"says {says}): name it {names}")


def test_an_output_whose_suffix_names_another_format_is_refused(tmp_path: Path) -> None:
    # Round 27: the format followed the file's suffix for `sweep -o` alone. `simulate R1 --synthetic 3 -o s.csv`
    # wrote the text table into s.csv, `lock R1 -o l.json` TOML into l.json, `synth CONFIG -o h.toml` a GGUF header
    # into h.toml (then read as a registry entry: "byte 417: not UTF-8 text"), `sweep R1 -o rows.csv.gz` plain CSV
    # under a gzip name, each exit 0.
    root = copy_root(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    simulation = ("a simulation (a text table, or JSON)", ".json for JSON, or .txt for the table")
    rows = ("a sweep's rows (CSV or JSON)", ".csv or .json")
    lock = ("a lock (TOML)", "NAME.lock.toml")
    header = ("a GGUF header", ".gguf (or .gguf.xz, .gguf.gz to compress it)")
    for command, name, suffix, says, (what, names) in (
            (("simulate", R1, "--synthetic", "3"), "s.csv", ".csv", "CSV", simulation),
            (("simulate", R1, "--synthetic", "3", "--json"), "s.toml", ".toml", "TOML", simulation),
            (("sweep", R1, "--batches", "1"), "rows.csv.gz", ".gz", "gzip", rows),
            (("sweep", R1, "--batches", "1"), "rows.toml", ".toml", "TOML", rows),
            (("sweep", R1, "--batches", "1"), "rows.png", ".png", "PNG", rows),
            (("lock", R1), "l.json", ".json", "JSON", lock),
            (("lock", R1), "l.gguf.gz", ".gz", "gzip", lock),
            (("synth", CONFIG), "h.toml", ".toml", "TOML", header),
            (("synth", CONFIG), "h.JSON", ".json", "JSON", header)):
        path = out / name
        assert bad(*command, "-o", str(path), root=root) == [_suffix_line(path, what, suffix, says, names)], command
    assert list(out.iterdir()) == []
    # A suffix naming no format passprice writes takes the command's own: text, TOML, GGUF; a sweep's rows name theirs
    # (.csv or .json) or give --format (tests/test_bound111.py: rows.txt was CSV, silently).
    txt = out / "rows.txt"
    assert bad("sweep", R1, "--batches", "1", "-o", str(txt), root=root) == [
        f"passprice: error: {txt}: -o names no format of a sweep's rows (its suffix .txt): name it .csv or .json, or "
        "give --format csv (or --format json) to write that format under this name"]
    assert not txt.exists()
    for command, name, starts in ((("simulate", R1, "--synthetic", "3"), "s.txt", b"simulate r1-qwen7b-h200: "),
                                  (("sweep", R1, "--batches", "1", "--format", "csv"), "rows.txt", b"card,serving,"),
                                  (("lock", R1), "l", b"#:schema ../schema/lock.schema.json\n# A passprice lock"),
                                  (("synth", CONFIG), "h", b"GGUF")):
        result = invoke(*command, "-o", str(out / name), root=root)
        assert result.exit_code == 0, result.output
        assert (out / name).read_bytes().startswith(starts), name


def test_simulate_o_json_writes_json_as_sweep_does(tmp_path: Path) -> None:
    # Round 27: `simulate R1 --synthetic 3 -o run.json` wrote the text table into run.json (exit 0), where `sweep -o
    # grid.json` writes JSON: the format follows the file's suffix, --json or not.
    import json

    root = copy_root(tmp_path)
    out, asked = tmp_path / "run.JSON", tmp_path / "asked.json"
    for path, flags in ((out, ()), (asked, ("--json",))):
        result = invoke("simulate", R1, "--synthetic", "3", *flags, "-o", str(path), root=root)
        assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["title"].startswith("simulate r1-qwen7b-h200: ") and data["trace"]["requests"] == 3
    assert out.read_bytes() == asked.read_bytes()


@pytest.mark.parametrize(("name", "unpack"), [("h.gguf.xz", lzma.decompress), ("h.gguf.gz", gzip.decompress)])
def test_synth_compresses_as_the_suffix_says(tmp_path: Path, name: str, unpack: object) -> None:
    # Round 27: `synth CONFIG -o h.gguf.xz` wrote the plain header under the xz name (`xz -d` refused it: "File
    # format not recognized"); the reader takes .xz and .gz headers, so synth writes them.
    root = copy_root(tmp_path)
    plain, packed = tmp_path / "h.gguf", tmp_path / name
    for path in (plain, packed):
        assert invoke("synth", CONFIG, "-o", str(path), root=root).exit_code == 0
    assert callable(unpack)
    data = unpack(packed.read_bytes())
    assert data[:4] == b"GGUF" and abs(len(data) - len(plain.read_bytes())) < 16  # the name it records differs
    result = invoke("header", str(packed), "--json", root=root)
    assert result.exit_code == 0 and '"architecture": "llama"' in result.stdout
    # the same header gives the same bytes (no time stamp in the gzip member)
    again = tmp_path / "again" / name
    again.parent.mkdir()
    assert invoke("synth", CONFIG, "-o", str(again), root=root).exit_code == 0
    assert again.read_bytes() == packed.read_bytes()


# --- (2) a checkpoint name with a folder in it ------------------------------------------------------------------------


def test_a_checkpoint_path_is_read_not_the_toml_beside_it(tmp_path: Path) -> None:
    # Round 27: `header /data/m` (a GGUF file) read /data/m.toml beside it instead ("/data/m.toml: byte 417: not
    # UTF-8 text", or another entry's header, exit 0), and `price --checkpoint ../../facts/cards/a40` read a card as a
    # checkpoint entry: a name with a folder was joined to registry/checkpoints wherever it led.
    root = copy_root(tmp_path)
    header = tmp_path / "m"
    header.write_bytes(lzma.decompress((REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz").read_bytes()))
    (tmp_path / "m.toml").write_bytes((root / "facts" / "cards" / "a40.toml").read_bytes())
    result = invoke("header", str(header), root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{header}\n  architecture  gemma3 ")
    assert bad("price", "--checkpoint", "../../facts/cards/a40", "--card", H200, root=root) == [
        "passprice: error: ../../facts/cards/a40: no such checkpoint file: a checkpoint name is a file of "
        "registry/checkpoints, and this one leads out of it (to facts/cards/a40.toml, the card a40); to "
        "read a checkpoint file from elsewhere give its path, ending in .toml"]
    assert bad("header", str(tmp_path / "nothing" / "m"), root=root) == [
        f"passprice: error: {tmp_path / 'nothing' / 'm'}: no such checkpoint file"]
    # A name that stays in its folder is still the entry.
    assert invoke("header", "../checkpoints/gemma3-270m-q4_k_m", root=root).exit_code == 0


# --- (2) split checkpoints: a shard's name against its set -------------------------------------------------------


def _split(folder: Path, stem: str = "m", count: int = 3) -> list[Path]:
    import numpy as np
    from gguf import GGUFWriter

    folder.mkdir(parents=True, exist_ok=True)
    writer = GGUFWriter(folder / f"{stem}.gguf", "llama", split_max_tensors=1)
    for name in "abc"[:count]:
        writer.add_tensor(name, np.zeros((4,), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return [folder / f"{stem}-{no:05d}-of-{count:05d}.gguf" for no in range(1, count + 1)]


def test_a_shard_named_past_its_count_is_refused(tmp_path: Path) -> None:
    # Round 27: `header m-00004-of-00003.gguf` (a copy of shard 3 beside the three shards) read shards 1 to 3 and
    # printed them as m-00004-of-00003.gguf, exit 0 (the file named was never judged); alone, it said "shard 1
    # (m-00001-of-00003.gguf) is missing". `lock --checkpoint` and `import` the same.
    shards = _split(tmp_path)
    past = tmp_path / "m-00004-of-00003.gguf"
    past.write_bytes(shards[2].read_bytes())
    line = (f"passprice: error: {past}: byte 44: the file name says shard 4 of 3, which a checkpoint of 3 shards has "
            "not (split.no is 2, counted from 0)")
    root = copy_root(tmp_path)
    assert bad("header", str(past), root=root) == [line]
    assert bad("import", str(past), "--name", "past", root=root) == [line]
    assert bad("lock", "--checkpoint", str(past), "--card", H200, "-o", str(tmp_path / "x.lock.toml"),
               root=root) == [line]
    assert not (root / "registry" / "checkpoints" / "past.toml").exists()
    zero = tmp_path / "m-00000-of-00003.gguf"
    zero.write_bytes(shards[2].read_bytes())
    assert bad("header", str(zero), root=root) == [line.replace(str(past), str(zero)).replace("shard 4", "shard 0")]
    # The shards themselves read, from any of them.
    result = invoke("header", str(shards[1]), root=root)
    assert result.exit_code == 0 and "GGUF v3, little-endian, 3 files" in result.stdout


def test_a_folder_where_a_shard_belongs_is_said_to_be_one(tmp_path: Path) -> None:
    # Round 27: a folder named m-00002-of-00003.gguf beside shards 1 and 3 was "shard 2 (…) is missing".
    shards = _split(tmp_path)
    shards[1].unlink()
    shards[1].mkdir()
    assert bad("header", str(shards[0])) == [
        f"passprice: error: {shards[0]}: byte 114: split.count is 3 but shard 2 (m-00002-of-00003.gguf) is a folder, "
        "not a file"]


# --- (2) locks edited by hand and digested again ----------------------------------------------------------------------


def test_a_lock_whose_floor_moved_to_a_lookalike_path_is_refused(tmp_path: Path) -> None:
    # Round 27: locks/r1-qwen7b-h200.lock.toml with its `array = "derived"` floor renamed to "аrray" (a Cyrillic а)
    # and every digest computed again, as an attacker who knows the rule writes it: `check` said "ok, floors hold"
    # and `reproduce` "reproduces", while the array floor the lock seemed to keep guarded nothing (passprice never
    # writes a floor on a path the price does not rest on: locks.UnreadFloor).
    import attrs

    from passprice.locks import lock_text, read_lock

    root = copy_root(tmp_path)
    file = root / "locks" / f"{R1}.lock.toml"
    lock = read_lock(file)
    paths = {("\u0430rray" if p == "array" else p): v for p, v in lock.policy.paths.items()}
    file.write_text(lock_text(attrs.evolve(lock, policy=attrs.evolve(lock.policy, paths=paths))), encoding="utf-8")
    line = (f"{file}: policy.paths.\"\u0430rray\": a floor on \u0430rray (spelled '\\u0430rray': it prints like "
            "another name), a path the recorded price does not rest on (it rests on array, memory.bandwidth, "
            "memory.capacity, on_chip.capacity, scale, streams.append, streams.read, vector), guards nothing, and "
            "passprice never writes one (edited by hand?): restore the lock from the last commit that holds it as "
            "written, or re-lock it")
    assert bad("reproduce", str(file), root=root) == [f"passprice: error: {line}"]
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert f"passprice: error: {line.replace(str(root) + '/', '')}\n" in result.stderr


def test_a_file_given_as_a_record_name_is_said_to_be_no_record_file(tmp_path: Path) -> None:
    # Round 27: since round 26's "leads out of its folder", `price /dev/zero` said "no such serving file: … this one
    # leads out of it (to /dev/zero.toml)", and `--card ./mine` (a card's TOML saved without its suffix) "no such
    # card file … (to ./mine.toml)": of files that are there. Said as the file it is, as before round 26.
    root = copy_root(tmp_path)
    mine = tmp_path / "mine"
    mine.write_bytes((root / "facts" / "cards" / "a40.toml").read_bytes())
    assert bad("price", "/dev/zero", root=root) == [
        "passprice: error: /dev/zero: not a serving file (a serving file is TOML, named NAME.toml)"]
    assert bad("price", R1, "--card", str(mine), root=root) == [
        f"passprice: error: {mine}: not a card file (a card file is TOML, named NAME.toml)"]
    assert bad("price", R1, "--stack", str(tmp_path), root=root) == [
        f"passprice: error: {tmp_path}: is a folder, not a stack file"]
    # A name leading to nothing, or to another kind's record, is still said to lead out of its folder.
    assert bad("price", R1, "--card", "../drafts/qwen35-mtp", root=root)[0].endswith(
        "leads out of it (to facts/drafts/qwen35-mtp.toml, the drafting method qwen35-mtp); to read a card "
        "file from elsewhere give its path, ending in .toml")


def test_a_source_only_an_unreadable_card_cites_is_not_said_to_be_cited_by_nothing(tmp_path: Path) -> None:
    # Round 27: with facts/cards/a40.toml unreadable (mode 000 for a user, here a TOML error), check warned
    # "sources/nvidia-a40-datasheet.toml: cited by no fact: cite it, or remove it" of the source that card cites.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "a40.toml"
    card.write_text(card.read_text(encoding="utf-8") + "[[[\n", encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert ("  warning: sources/nvidia-a40-datasheet.toml: cited by no fact of the files that read (some do not: it "
            "may be cited there)\n") in result.stdout
    assert "cite it, or remove it" not in result.output


# --- (3) figures nobody gave ------------------------------------------------------------------------------------------


def test_an_option_out_of_range_is_shown_as_given() -> None:
    # Round 27: `best R1 --max-tpot 1e-320` said "9.99989e-321 is out of range", `--max-tpot 0.0000009999999`
    # "1e-06 is out of range (a finite number from 1e-06 …)" and `simulate --rate 1e-320` "at 9.99989e-321
    # requests/s": six figures of a value they did not hold (bounds._shown, '{:g}').
    bound = "(a finite number from 1e-06 to 3,600) (see 'cli best --help')"  # in-process: click's name
    for given, shown in (("1e-320", "1e-320"), ("0.0000009999999", "9.999999e-07"), ("5e-7", "5e-07"),
                         ("3600.5", "3600.5")):
        assert bad("best", R1, "--max-tpot", given) == [
            f"passprice: error: Invalid value for '--max-tpot': {shown} is out of range {bound}"]
    assert bad("simulate", R1, "--synthetic", "5", "--rate", "1e-320") == [
        "passprice: error: --rate: at 1e-320 requests/s request 1 arrives inf s in, past the 1e+09 s (about 31 years) "
        "a trace may span"]
