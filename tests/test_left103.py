"""left103: issue 13's small leftovers from session 44, each reproducer built in its test.

- (2) ``lock --name X`` was refused beside any lock file of ``locks/`` that does not parse and holds ``"X"`` quoted,
  even as another field's value (a note, the serving it locks), saying it "may" hold the name: the broken file's
  ``[lock]`` table is now read line by line (``locks.name_as_read``) and the refusal says what was found (its name
  reads X at line N), refuses still where it cannot be told (the name's own line broken, a multi-line string, a
  header that does not read), and a file whose name reads otherwise is passed over.
- (3) a module declaring ``# coding: punycode`` (quadratic decoding, one token a run): a 900,000-byte ``locks.py``
  held ``check`` and ``reproduce`` of its checkout 47 s of CPU and ``diff`` of a side bringing it past 400 s: not
  parsed nor imported now (``pins.SlowCodingNotJudged``), one line naming the file and the declaration's line.
- (4) a git that hangs where ``/proc`` cannot tell (a ``git`` on PATH that sleeps) held ``diff`` 60.5 s of wall
  time, ``reproduce`` 10.8-13.2 s: stopped once it has said nothing for ``gitread.quiet_bound`` (1 s, and 1 s more
  each 100 MiB of the repository's packed objects), the line saying so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

R1 = "r1-qwen7b-h200"

# --- (2) a broken lock file's name, read line by line ---------------------------------------------------------------


def _broken_beside(tmp_path: Path, edit: dict[str, str]) -> tuple[Path, int]:
    """A copy of the checkout whose R1 lock is gone and whose ``locks/other.lock.toml`` is R1's lock text with each
    ``edit`` made and a line ``broken = = 1`` opening its ``[lock]`` table (so it does not parse); the root, and the
    line number of that ``[lock]`` header."""
    root = copy_root(tmp_path)
    locks = root / "locks"
    text = (locks / f"{R1}.lock.toml").read_text(encoding="utf-8")
    (locks / f"{R1}.lock.toml").unlink()
    for old, new in edit.items():
        assert old in text, old
        text = text.replace(old, new)
    text = text.replace("\n[lock]\n", "\n[lock]\nbroken = = 1\n")
    (locks / "other.lock.toml").write_text(text, encoding="utf-8")
    return root, text[: text.index("\n[lock]\n")].count("\n") + 2


def test_2_a_broken_lock_quoting_the_name_in_another_field_is_passed_over(tmp_path: Path) -> None:
    # its [lock] name is "other-name"; R1 is quoted as the serving it locks and in a note: was refused, "may also be
    # the name of locks/other.lock.toml, which holds it and does not read", exit 2
    root, _ = _broken_beside(tmp_path, {f'name = "{R1}"\npricing_model': 'name = "other-name"\npricing_model',
                                        "[card]\n": f'[card]\nnote = "copied from \\"{R1}\\" by hand"\n'})
    data = (root / "locks" / "other.lock.toml").read_bytes()
    assert f'"{R1}"'.encode() in data
    from passprice import locks

    assert locks.name_as_read(data, R1)[0] is False
    result = invoke("lock", R1, "--name", R1, root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"locked {R1} (price, locks serving {R1}): ")
    assert (root / "locks" / f"{R1}.lock.toml").is_file()


def test_2_a_name_spelled_with_escapes_is_read_and_refused(tmp_path: Path) -> None:
    # "r1\u002dqwen7b-h200" everywhere: R1 nowhere quoted as written, so the file was passed over and the lock written
    # (exit 0): the left98 clash in another spelling
    spelled = R1.replace("-", "\\u002d", 1)
    root, header = _broken_beside(tmp_path, {f'"{R1}"': f'"{spelled}"'})
    assert f'"{R1}"'.encode() not in (root / "locks" / "other.lock.toml").read_bytes()
    bad("lock", R1, "--name", R1, root=root,
        says=f"lock.name: '{R1}' is also the name of locks/other.lock.toml, which does not read (locks/other.lock.toml:"
             f" not valid TOML: Invalid value (at line {header + 1}, column 10)), though its [lock] table's name reads "
             f"'{R1}' at line {header + 5}, read line by line: a lock's name must be unique (`passprice check` refuses "
             "the two once it is mended)")
    assert not (root / "locks" / f"{R1}.lock.toml").exists()


@pytest.mark.parametrize(("edit", "found"), [
    # the name's own line broken: cannot be told
    ({f'name = "{R1}"\npricing_model': f'name = "{R1}\npricing_model'},
     "its line {n}, the [lock] table's name, does not read"),
    # a multi-line string anywhere: a line may be a string's
    ({"[card]\n": '[card]\nnote = """\n[lock]\nname = "x"\n"""\n'}, "it holds a multi-line string, so its lines are "
     "not read apart"),
    # a header that does not read
    ({"[policy]\n": "[policy\n"}, "its line {p}, a table header, does not read"),
])
def test_2_where_the_name_cannot_be_told_it_is_refused_saying_why(tmp_path: Path, edit: dict[str, str],
                                                                  found: str) -> None:
    root, header = _broken_beside(tmp_path, edit)
    text = (root / "locks" / "other.lock.toml").read_text(encoding="utf-8")
    n = header + 5  # the name's line (the [lock] header found first as a line: not the string's, before it)
    p = text.split("\n").index("[policy") + 1 if "[policy\n" in text else 0
    lines_said = bad("lock", R1, "--name", R1, root=root)
    assert len(lines_said) == 1
    said = lines_said[0]
    assert f"lock.name: '{R1}' may also be the name of locks/other.lock.toml, which does not read (" in said, said
    assert f"and whose name cannot be told ({found.format(n=n, p=p)}, and it holds '{R1}' quoted): a lock's name " \
           "must be unique, and which name that file gives is not known until it reads" in said, said
    assert not (root / "locks" / f"{R1}.lock.toml").exists()


@pytest.mark.parametrize(("text", "verdict"), [
    ('[lock]\nname = "X"\nformat = = 2\n', (True, "its [lock] table's name reads 'X' at line 2")),
    ('[lock]\nbroken =\nname = "Y"\n[card]\nnote = "X"\n', (False, "its [lock] table's name reads 'Y' at line 3")),
    ('lock.name = "X"\nbroken =\n', (True, "its [lock] table's name reads 'X' at line 1")),
    ('lock = { name = "X" }\nbroken =\n', (True, "its [lock] table's name reads 'X' at line 1")),
    ('[ "lock" ]\nname = "X"\nbroken =\n', (True, "its [lock] table's name reads 'X' at line 2")),
    ('[lock.sub]\nname = "X"\nbroken =\n', (False, "its [lock] table has no name")),
    ('[card]\nname = "X"\n[lock]\nname = "Y"\nx =\n', (False, "its [lock] table's name reads 'Y' at line 4")),
    ('[lock]\nname = "X\n', (None, "its line 2, the [lock] table's name, does not read")),
    ('[lock]\n"X" junk\nname = "Y"\n', (None, "its line 2 does not read and holds 'X'")),
    ('[lock]\n\\u0058 junk\nname = "Y"\n', (None, "its line 2 does not read and holds a backslash")),
    ("[lock]\nname = 'X'\nx = '''\n", (None, "it holds a multi-line string, so its lines are not read apart")),
    ('[lock\nname = "X"\n', (None, "its line 1, a table header, does not read")),
    (b'[lock]\nname = "X"\n\xff\n', (None, "it does not decode as UTF-8")),
    ('[lock]\r\nname = "X"\r\nx =\r\n', (True, "its [lock] table's name reads 'X' at line 2")),
])
def test_2_name_as_read(text: str | bytes, verdict: tuple[bool | None, str]) -> None:
    from passprice import locks

    data = text if isinstance(text, bytes) else text.encode("utf-8")
    assert locks.name_as_read(data, "X") == verdict


# --- (3) a module declaring a codec whose decoding is quadratic -----------------------------------------------------

#: ``# coding: punycode`` then one run after the last ``-``: every byte an insertion the decoder places by a scan
#: (Python's punycode decoding is quadratic): 900,000 bytes held a ``check`` of its checkout 47 s of CPU, one token.
PUNY = b"# -*- coding: punycode -*-\nx = 1\n-" + b"a" * 2_000


@pytest.mark.parametrize(("data", "found"), [
    (PUNY, (1, "punycode")),
    (b"#!/usr/bin/env python\n# vim: set fileencoding=Punycode :\nx = 1\n", (2, "punycode")),
    (b"\n# coding=punycode\n", (2, "punycode")),
    (b"x = 1\n# coding: punycode\n", None),  # code on line 1: line 2 declares nothing (it parses as UTF-8)
    (b"# coding: utf-8\n# coding: punycode\n", None),  # the first declaration is the one
    (b"# coding: latin-1\nx = 1\n", None), (b"# coding: utf-7\n", None), (b"# coding: nonesuch\n", None),
    (b"x = 1\n", None),
])
def test_3_slow_coding(data: bytes, found: tuple[int, str] | None) -> None:
    import ast

    from passprice import pins

    assert pins.slow_coding(data) == found
    if found is None and b"nonesuch" not in data and b"utf-7" not in data:
        ast.parse(data)  # what is let by parses as Python reads it


def _package(tmp_path: Path, modules: dict[str, bytes]) -> Path:
    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    for name, data in modules.items():
        (package / name).write_bytes(data)
    return package


def test_3_a_punycode_module_is_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import pins

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    parse = pins.ast.parse

    def never(*args: object, **kwargs: object) -> object:
        if str(kwargs.get("filename", "")) == str(package / "locks.py"):
            raise AssertionError(f"parsed: {kwargs['filename']}")
        return parse(*args, **kwargs)  # type: ignore[arg-type]

    package = _package(tmp_path, {"pins.py": b"", "locks.py": PUNY, "reproduce.py": b"x = 1\n"})
    monkeypatch.setattr(pins.ast, "parse", never)
    said = ("src/passprice/locks.py: line 1: declares the punycode encoding, whose decoding costs the square of the "
            "module's bytes (no module in it parses): not parsed nor imported; write it in UTF-8")
    with pytest.raises(pins.SlowCodingNotJudged) as refused:
        pins.pricing_model_digest(package)
    assert str(refused.value) == said
    # check and reproduce of that checkout: a warning naming the file and the line (was 'line 0: decoding with
    # 'punycode' codec failed', after the decode: 47 s for 900,000 bytes)
    assert pins._checkout_model(tmp_path) == (f"not judged: {said}", pins.pricing_model_digest())


def test_3_a_side_importing_a_punycode_module_is_not_priced_by_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # a side whose pricing model differs is priced in a process importing its package: a schema.py (no pricing
    # module: never parsed by the digest) in punycode was decoded there (a locks.py of 900,000 bytes: diff 97 s)
    import shutil

    from passprice import pins, sidecode

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    package = tmp_path / "src" / "passprice"
    shutil.copytree(pins.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    with (package / "cost.py").open("a", encoding="utf-8") as f:
        f.write("\nLEFT103 = 1\n")  # another pricing model
    (package / "schema.py").write_bytes(b"# coding: punycode\n" + (package / "schema.py").read_bytes())
    code = sidecode.code_of(package)
    assert code.model == "not judged" and not code.running
    assert code.not_judged == (
        "src/passprice/schema.py: line 1: declares the punycode encoding, whose decoding costs the square of the "
        "module's bytes (no module in it parses): not parsed nor imported; write it in UTF-8")
    assert sidecode.price_locks(None, code, [{"key": "k"}]) == {  # type: ignore[arg-type]
        "k": {"error": f"its own code was not judged: {code.not_judged}"}}


def test_3_diff_reads_no_punycode_unkept_table(monkeypatch: pytest.MonkeyPatch) -> None:
    import ast

    from passprice.review import records as review_records

    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("parsed")

    monkeypatch.setattr(ast, "parse", never)
    assert review_records._unkept_table(PUNY) is None and review_records._unkept_command(PUNY) is None


# --- (4) a git that says nothing ------------------------------------------------------------------------------------


def _fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hangs_on: str = "") -> None:
    """A ``git`` first on PATH that sleeps (on every command, or on those whose arguments hold ``hangs_on``; the real
    git answers the rest)."""
    import shutil

    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "fakebin"
    folder.mkdir()
    script = folder / "git"
    if hangs_on:
        script.write_text(f'#!/bin/sh\ncase " $* " in *" {hangs_on} "*) exec sleep 600;; esac\nexec {real} "$@"\n')
    else:
        script.write_text("#!/bin/sh\nexec sleep 600\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")


def _repository(tmp_path: Path) -> Path:
    import subprocess

    root = copy_root(tmp_path)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"], cwd=root,
                   check=True)
    return root


QUIET = ("said nothing for 1.0 s, the most allowed in a repository of 0 bytes of objects (1 s, and 1 s more "
         "each 100 MiB), so passprice stopped it: a local repository's git answers within milliseconds; something "
         "holds it (a lock, a FIFO, a network mount, the git on PATH)")


def test_4_diff_with_a_git_that_sleeps_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # was "git rev-parse: took longer than 60.0 s" after 60.5 s of wall time
    root = _repository(tmp_path)
    _fake_git(tmp_path, monkeypatch)
    assert bad("diff", "main", "HEAD", root=root) == [f"passprice: error: git rev-parse: {QUIET}"]


def test_4_a_cat_file_batch_that_sleeps_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the kept `cat-file --batch` process (gitread._Batch) waited for 60 s too: "git cat-file: took longer than 60.0 s"
    root = _repository(tmp_path)
    (root / "facts" / "cards" / "a40.toml").write_text(
        (root / "facts" / "cards" / "a40.toml").read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    _fake_git(tmp_path, monkeypatch, hangs_on="--batch")
    assert bad("diff", "main", root=root) == [f"passprice: error: git cat-file: {QUIET}"]


def test_4_the_quiet_allowed_is_proportionate_to_the_packed_objects(tmp_path: Path) -> None:
    from passprice import gitread

    assert gitread.quiet_bound(tmp_path) == (1.0, 0)  # no repository
    pack = tmp_path / "repo" / ".git" / "objects" / "pack"
    pack.mkdir(parents=True)
    with (pack / "pack-1.pack").open("wb") as f:
        f.truncate(250 << 20)  # sparse: 250 MiB said, none written
    (pack / "pack-1.idx").write_bytes(b"x" * 1000)  # an index is not counted
    (tmp_path / "repo" / "sub").mkdir()
    assert gitread.quiet_bound(tmp_path / "repo" / "sub") == (3.5, 262_144_000)  # 1 s + 250 / 100
    assert gitread.quiet_line("ls-tree", 3.5, 262_144_000).startswith(
        "git ls-tree: said nothing for 3.5 s, the most allowed in a repository of 262,144,000 bytes of objects")


# --- (5) a side's unkept.py parsed with no cap ----------------------------------------------------------------------


def test_5_a_side_s_unkept_py_past_the_token_cap_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    # no pricing module, so no cap held it: 4,000,007 bytes of `x = [a,a,…]` took each of _unkept_table and
    # _unkept_command 8.1 s of CPU and 2.8 GB
    import ast

    from cli_helpers import REPO
    from passprice import pins
    from passprice.review import records as review_records

    own = (REPO / "src" / "passprice" / "unkept.py").read_bytes()
    table = review_records._unkept_table(own)
    assert table is not None and len(table) >= 10 and review_records._unkept_command(own) is not None
    dense = b"x = [" + b"a," * (pins.MODEL_TOKENS // 2) + b"]\n"
    assert pins._count_tokens(dense) == pins.MODEL_TOKENS + 5

    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("parsed")

    monkeypatch.setattr(ast, "parse", never)
    assert review_records._unkept_table(dense) is None and review_records._unkept_command(dense) is None
