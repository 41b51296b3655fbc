"""Attack105 (issue 13): hostile input against session 44's merges, each escape's reproducer built in its test.

- (1) A source record's stored excerpt (``source.excerpt``, trace96) was printed by ``audit --source`` as "the text
  read, from the registry's top folder" whatever was there: in a registry made by ``passprice init`` (which copied
  the records, not the files) and in the installed package's (whose wheel carried ``sources/``, not ``tests/data/``)
  all 21 records named a file that was not there; a FIFO, a folder, a link out of the registry or nothing at all
  was named the same way, exit 0. Now ``init`` copies each excerpt a record names (byte-equal, at its path), the
  wheel carries them (``pyproject.toml``'s force-include), and ``audit --source`` says in the excerpt's line what is
  wrong with one that is not a regular file of the registry (:func:`passprice.registry.document_problem`, the test
  ``source.path`` gets), still exit 0: the rest of the audit holds.
- (2) ``lock --name NAME`` beside a lock file of ``locks/`` that holds NAME in a ``[lock]`` table laid out as passprice
  writes it, while the file whole does not read (a second ``[lock]`` or ``[[lock]]`` table after it, a dotted key
  ``lock.x`` before it, lone CR line ends, a byte-order mark, its digest not its text's), refused saying that file
  "pins other facts": its ``[lock]`` table was read alone (``locks.lock_table_of``; lone CRs read as newlines, the
  mark passed over), as if it read. Now a lone CR or the mark makes the table-alone read ``None`` as ``tomllib``
  does, and the file refused for is read whole first (``locks.unread_problem``): the refusal is left98's, naming
  the file and what is wrong with it. Exit 2 before and after, nothing written.
- (3) A checkpoint entry of 7,879 lines of 31-part dotted keys (or of arrays nested 50 deep), under its 8,192 lines and
  131,072 separators, was parsed by ``tomllib`` before its refusal: ``check`` 1.70-2.21 s of CPU. The count now
  takes a key's dots and an array's or inline table's opening too: refused unparsed.
- (4) An invalid file of 60,721 one-key tables in chains (no table past the 4,096 keys one may hold) was explained by
  ``jsonschema-rs``, converting each: four such files, under 1 MB in all, held ``check`` at 1.95-2.39 s of CPU and
  460-473 MiB. Past 32,768 tables and arrays (``schema.MAX_TABLES``) it is refused in one line unexplained.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

HANDBOOK = "gpu-container-handbook-routing-derisk"
EXCERPT = "sources/excerpts/cite70-excerpt.txt"
FOUND = f"  stored excerpt: {EXCERPT} (the lines quoted from the text read, from the registry's top folder)"


def _excerpt_line(root: Path, source: str = HANDBOOK) -> str:
    result = invoke("audit", "--source", source, root=root)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("  stored excerpt: ")]
    assert len(lines) == 1, result.output
    return lines[0]


def _named_excerpts() -> set[str]:
    out = set()
    for path in (REPO / "sources").glob("*.toml"):
        record = tomllib.loads(path.read_text(encoding="utf-8"))["source"]
        if "excerpt" in record:
            out.add(record["excerpt"])
    return out


# 1. A stored excerpt that is not there.


@pytest.mark.parametrize("kind", ["missing", "fifo", "folder", "link-out", "link-in"])
def test_1_audit_says_what_is_wrong_with_an_excerpt_that_is_not_a_file_of_the_registry(
    tmp_path: Path, kind: str
) -> None:
    root = copy_root(tmp_path)  # facts, registry, locks, sources with sources/excerpts/ (tests/test_walk107.py)
    data = root / "sources" / "excerpts"
    target = root / EXCERPT
    target.unlink()  # as a registry init made before the excerpts were copied
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "link-out":
        (tmp_path / "secret.txt").write_text("hunter2\n")
        target.symlink_to(tmp_path / "secret.txt")
    elif kind == "link-in":
        (data / "real.txt").write_text("== text\n")
        target.symlink_to("real.txt")
    problem = {
        "missing": f"{EXCERPT} is not a file of this registry: put the document there (source.excerpt is read from "
                   "the registry's top folder), or correct source.excerpt",
        "fifo": f"{EXCERPT} is a FIFO (named pipe), not a regular file of this registry",
        "folder": f"{EXCERPT} is a folder, not a regular file of this registry",
        "link-out": f"{EXCERPT} lies outside the registry (a document of this registry is a file inside its root)",
        "link-in": f"{EXCERPT} passes through a symbolic link ({EXCERPT}): a document of this registry is a file at "
                   "its own path (a review reads it through git at each revision, where a link holds only its "
                   "target's name): put the document itself there, or name its own path in source.excerpt",
    }[kind]
    # before: "  stored excerpt: sources/excerpts/cite70-excerpt.txt (the text read, from the registry's top folder)"
    assert _excerpt_line(root) == f"{FOUND}, but {problem}"
    said = invoke("audit", "--source", HANDBOOK, "--json", root=root)
    assert said.exit_code == 0
    document = json.loads(said.output)
    assert document["source"]["excerpt"] == EXCERPT and document["excerpt_problem"] == problem


def test_1_audit_names_an_excerpt_that_is_there_as_before(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / EXCERPT).write_bytes((REPO / EXCERPT).read_bytes())
    assert _excerpt_line(root) == FOUND
    assert _excerpt_line(REPO) == FOUND
    assert json.loads(invoke("audit", "--source", HANDBOOK, "--json", root=root).output)["excerpt_problem"] is None


def test_1_init_copies_every_excerpt_a_record_names(tmp_path: Path) -> None:
    made = tmp_path / "mine"
    result = invoke("init", str(made))
    assert result.exit_code == 0, result.output
    named = _named_excerpts()
    assert len(named) == 13  # 22 records name 13 files
    copied = {str(p.relative_to(made)) for p in (made / "sources" / "excerpts").iterdir()}
    assert copied == named
    for rel in named:
        assert (made / rel).read_bytes() == (REPO / rel).read_bytes(), rel
    # before: the line named a file the new registry did not hold
    assert _excerpt_line(made) == FOUND


def test_1_the_wheel_carries_every_excerpt_a_record_names() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    carried = project["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    # the package's data folder mirrors the registry's top folder: an excerpt is read from there, and every one a
    # record names lies in sources/excerpts/, which the wheel carries with sources/ (tests/test_walk107.py)
    assert carried["sources"] == "passprice/_data/sources"
    assert all(re.fullmatch(r"sources/excerpts/[a-z0-9-]+-excerpt\.txt", rel) for rel in _named_excerpts())
    assert not any(rel.startswith("tests/") for rel in carried)


# 2. A lock file holding the name whose table reads alone and whose file does not.

R1 = "r1-qwen7b-h200"


def _whole_problem(kind: str, text: str) -> tuple[str, str]:
    """The broken file's text and the problem ``check`` names for it (``locks/other.lock.toml: …``)."""
    lines = text.count("\n")
    at = text[: text.index("\n[lock]\n")].count("\n") + 2  # the [lock] line
    return {
        "second-table": (text + "\n[lock]\nname = \"x\"\n", f"not valid TOML: Cannot declare ('lock',) twice (at line "
                         f"{lines + 2}, column 6)"),
        "array-after": (text + "\n[[lock]]\n", f"not valid TOML: Cannot overwrite a value (at line {lines + 2}, "
                        "column 7)"),
        "dotted-before": ("lock.x = 1\n" + text, f"not valid TOML: Cannot declare ('lock',) twice (at line {at + 1}, "
                          "column 6)"),
        "lone-cr": (text.replace("\n", "\r"), "not valid TOML: Found invalid character '\\r' (at line 1, column "
                    f"{text.index(chr(10)) + 1})"),
        "bom": ("\ufeff" + text, "starts with a byte-order mark (U+FEFF): save it as UTF-8 without BOM"),
    }[kind]


@pytest.mark.parametrize("kind", ["second-table", "array-after", "dotted-before", "lone-cr", "bom"])
def test_2_lock_name_beside_a_lock_file_that_holds_it_and_does_not_read_names_its_problem(
    tmp_path: Path, kind: str
) -> None:
    from passprice.locks import lock_table_of

    root = copy_root(tmp_path)
    locks = root / "locks"
    text = (locks / f"{R1}.lock.toml").read_text(encoding="utf-8")
    (locks / f"{R1}.lock.toml").unlink()
    broken, problem = _whole_problem(kind, text)
    (locks / "other.lock.toml").write_bytes(broken.encode("utf-8"))
    checked = invoke("check", root=root)
    assert checked.exit_code == 2 and f"passprice: error: locks/other.lock.toml: {problem}" in checked.stderr
    # before: "… 'r1-qwen7b-h200' is also the name of locks/other.lock.toml, which pins other facts: …"
    lines = bad("lock", "gemma3-270m-h100", "--name", R1, "-o", str(locks / "new.lock.toml"), root=root)
    # the [lock] table read alone (lone CRs and a BOM: refused alone too, so read line by line, test_left103.py)
    named = text.splitlines().index(f'name = "{R1}"') + 1
    found = "(the table read alone)" if kind not in ("lone-cr", "bom") else f"at line {named}, read line by line"
    assert lines == [
        f"passprice: error: {locks}/new.lock.toml: lock.name: 'r1-qwen7b-h200' is also the name of "
        f"locks/other.lock.toml, which does not read (locks/other.lock.toml: {problem}), though its [lock] table's "
        f"name reads 'r1-qwen7b-h200' {found}: a lock's name must be unique (`passprice check` refuses "
        "the two once it is mended): fix it or remove it, or lock this one under another name (--name NAME, or -o "
        "locks/NAME.lock.toml); nothing written"]
    assert not (locks / "new.lock.toml").exists()
    if kind in ("lone-cr", "bom"):  # the table-alone read refuses what tomllib refuses
        assert lock_table_of(broken.encode("utf-8")) is None
    # a lock file of CR LF line breaks reads (TOML's), alone as whole
    assert lock_table_of(text.replace("\n", "\r\n").encode()) == lock_table_of(text.encode())


def test_2_a_hand_edited_lock_holding_the_name_is_named_with_its_problem(tmp_path: Path) -> None:
    # a lock whose digest disagrees with its text (its serving's name changed by hand): it does not read
    root = copy_root(tmp_path)
    locks = root / "locks"
    text = (locks / f"{R1}.lock.toml").read_text(encoding="utf-8")
    (locks / f"{R1}.lock.toml").unlink()
    edited = text.replace('title = "NVIDIA H200 SXM 141GB"', 'title = "NVIDIA H200 SXM 141 GB"', 1)
    assert edited != text
    (locks / "other.lock.toml").write_text(edited)
    lines = bad("lock", "gemma3-270m-h100", "--name", R1, "-o", str(locks / "new.lock.toml"), root=root)
    assert len(lines) == 1 and lines[0].startswith(
        f"passprice: error: {locks}/new.lock.toml: lock.name: 'r1-qwen7b-h200' is also the name of "
        "locks/other.lock.toml, which does not read (locks/other.lock.toml: lock.digest: ")
    # one that reads is the clash it was (test_left98's mended file)
    (locks / "other.lock.toml").write_text(text)
    bad("lock", "gemma3-270m-h100", "--name", R1, "-o", str(locks / "new.lock.toml"), root=root,
        says="lock.name: 'r1-qwen7b-h200' is also the name of locks/other.lock.toml, which pins other facts")


# 3. A checkpoint entry under its line and separator caps that tomllib spends seconds on.

ENTRY = "gemma3-270m-q4_k_m"


def _entry_past(root: Path, kind: str) -> tuple[Path, int]:
    """The registry entry ``ENTRY`` of ``root`` with 7,879 hostile lines added in a table of their own (its lines
    under the 8,192 an entry may hold), and the separators counted in it now."""
    path = root / "registry" / "checkpoints" / f"{ENTRY}.toml"
    text = path.read_text(encoding="utf-8")
    line = {
        "dotted": lambda i: f"x{i}." + ".".join(f"k{j}" for j in range(30)) + " = 1",  # 31 parts a key
        "nested": lambda i: f"x{i} = " + "[" * 50 + "1" + "]" * 50,  # arrays 50 deep
    }[kind]
    added = "".join(line(i) + "\n" for i in range(7879))
    data = (text + "[zz]\n" + added).encode()
    assert data.count(b"\n") <= 8192 and len(data) < 1_000_000
    # the two counts before: ',', '=' and line ends (under 131,072)
    assert data.count(b",") + data.count(b"=") + data.count(b"\n") < 131_072
    path.write_bytes(data)
    from passprice.schema import _one_line_string, _separators

    return path, _separators(_one_line_string().sub(b"", data)) + data.count(b"\n")


@pytest.mark.parametrize("kind", ["dotted", "nested"])
def test_3_an_entry_of_dotted_keys_or_nested_arrays_is_refused_unparsed(tmp_path: Path, kind: str) -> None:
    # before: parsed by tomllib, refused after it for a table of 7,879 keys: check 1.70-2.21 s of CPU (dotted; a
    # clean check 0.58 s) and 1.66 s (nested), load 8
    root = copy_root(tmp_path)
    path, found = _entry_past(root, kind)
    assert found > 131_072
    line = (f"passprice: error: registry/checkpoints/{ENTRY}.toml: {found:,} separators (',', '=', '.', '[', "
            "'{' and line ends outside strings), past the 131,072 a checkpoint entry may hold (8 times as many with "
            "PASSPRICE_MAX_HEADER_BYTES set past 32 MiB): not parsed")
    result = invoke("checkpoints", root=root)
    assert result.exit_code == 2 and line in result.stderr.splitlines(), result.stderr
    from passprice import schema

    with pytest.raises(schema.InputError, match=r"separators"):
        schema.require_entry_shape(path, path.read_bytes())


# 4. An invalid file of many small tables, none of them wide, explained by jsonschema-rs.


def test_4_an_invalid_document_of_sixty_thousand_chained_tables_is_refused_before_it_is_explained(
        tmp_path: Path) -> None:
    # 2,024 keys, each a chain of 30 one-key tables (x0.k0.k1…k29 = 1): 60,721 tables, 250 KB, no table past the
    # 4,096 keys one may hold. Before: jsonschema-rs was asked why it is invalid (about 1.3 s of a check's CPU under a
    # profiler; four such files under 1 MB in all: 1.95-2.39 s of CPU and 460-473 MiB for check, a clean check
    # 0.31 s, load 8-9). As a card it is now refused before it is parsed, for its separators (tests/test_bound111.py);
    # a checkpoint entry may hold them (65,000 separators, under its 131,072), and is refused so.
    root = copy_root(tmp_path)
    line = "x{i}." + ".".join(f"k{j}" for j in range(30)) + " = 1\n"
    text = "".join(line.replace("{i}", str(i)) for i in range(2024))
    assert len(text) < 256 << 10
    path = root / "registry" / "checkpoints" / f"{ENTRY}.toml"
    path.write_text(path.read_text(encoding="utf-8") + "[zz]\n" + text)
    result = invoke("checkpoints", root=root)
    said = re.fullmatch(r"passprice: error: registry/checkpoints/gemma3-270m-q4_k_m\.toml: \(top level\): "
                        r"(6[0-9],[0-9]{3}) tables and arrays \(no passprice file holds more than 32,768, and this "
                        r"file does not validate\): make it smaller", result.stderr.strip())
    assert result.exit_code == 2 and said is not None, result.stderr
    assert int(said[1].replace(",", "")) > 60_721
    (root / "facts" / "cards" / "x4.toml").write_text(text)
    result = invoke("cards", root=root)
    assert result.exit_code == 2 and "passprice: error: facts/cards/x4.toml: 62,744 separators" in result.stderr
    from passprice import schema

    assert schema.MAX_TABLES == 32_768
