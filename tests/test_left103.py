"""left103: issue 13's small leftovers from session 44, each reproducer built in its test.

- (2) ``lock --name X`` was refused beside any lock file of ``locks/`` that does not parse and holds ``"X"`` quoted,
  even as another field's value (a note, the serving it locks), saying it "may" hold the name: the broken file's
  ``[lock]`` table is now read line by line (``locks.name_as_read``) and the refusal says what was found (its name
  reads X at line N), refuses still where it cannot be told (the name's own line broken, a multi-line string, a
  header that does not read), and a file whose name reads otherwise is passed over.
"""

from __future__ import annotations

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
