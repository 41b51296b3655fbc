"""attack80: breaking session 42's merges (issue 13), each escape's reproducer built in its test.

- (1) ``lock`` wrote into ``locks/`` a lock whose ``[lock]`` name another lock file carries while pinning other
  facts: ``lock R1 --name R1 -o locks/new.lock.toml`` after a pinned fact's note changed, and ``lock --update -o
  locks/copy.lock.toml`` of an exact copy of R1's lock (a copy ``check`` only warns of), each exit 0, after which
  ``check`` failed (exit 2, "lock.name: 'r1-qwen7b-h200' is also the name of …"). left58 refused this for a
  first-format lock's update alone. Now refused before writing (:func:`passprice.locking.require_unique_name`).
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
NOTE = "One direction of the product page's PCIe Gen5 figure, which counts both together."  # host.read (left60)


def _only_r1(root: Path) -> Path:
    """``root``'s lock of :data:`R1` alone in ``locks/`` (check and lock read every lock: CPU); its path."""
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml":
            other.unlink()
    return root / "locks" / f"{R1}.lock.toml"


def test_1_lock_refuses_a_name_another_lock_holds_with_other_pins(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    r1 = _only_r1(root)
    # R1's lock written by the running code (the shipped one's pricing model is the last re-lock's)
    assert invoke("lock", R1, "--force", "-o", str(r1), root=root).exit_code == 0
    copy = root / "locks" / "copy.lock.toml"
    copy.write_bytes(r1.read_bytes())
    # facts unchanged: the update writes the same lock again, still a copy (check warns of it, as before)
    assert invoke("lock", "--update", "-o", str(copy), root=root).exit_code == 0
    assert copy.read_bytes() == r1.read_bytes()
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count(NOTE) == 1
    card.write_text(text.replace(NOTE, NOTE.replace("together", "together here")),  # host.read's note, pinned
                    encoding="utf-8")
    # before: exit 0 ("locked r1-qwen7b-h200 … -> …copy.lock.toml"), then check exit 2 naming the two files
    assert bad("lock", "--update", "-o", str(copy), root=root) == [
        f"passprice: error: {copy}: lock.name: 'r1-qwen7b-h200' is also the name of locks/r1-qwen7b-h200.lock.toml, "
        "which pins other facts: a lock's name must be unique (`passprice check` refuses the two): --update keeps "
        f"the name: re-lock this one under its file's name (`passprice lock r1-qwen7b-h200 --force -o {copy}`), or "
        "remove locks/r1-qwen7b-h200.lock.toml; nothing written"]
    assert copy.read_bytes() == r1.read_bytes()
    new = root / "locks" / "new.lock.toml"
    assert bad("lock", R1, "--name", R1, "-o", str(new), root=root) == [
        f"passprice: error: {new}: lock.name: 'r1-qwen7b-h200' is also the name of locks/copy.lock.toml, which pins "
        "other facts: a lock's name must be unique (`passprice check` refuses the two): lock it under another name "
        "(--name NAME, or -o locks/NAME.lock.toml), or remove locks/copy.lock.toml; nothing written"]
    assert sorted(p.name for p in (root / "locks").iterdir()) == ["copy.lock.toml", f"{R1}.lock.toml"]
    # under a name of its own it is written, as before
    assert invoke("lock", R1, "-o", str(new), root=root).exit_code == 0
    assert "name = \"new\"" in new.read_text(encoding="utf-8")


# --- (2) an invisible character in a one-line text --------------------------------------------------------------------


def test_2_a_soft_hyphen_or_another_invisible_character_in_a_text_is_refused(tmp_path: Path) -> None:
    # before: `fact set … --locator 'Table<U+00AD> 1'` exit 0, the locator written and shown raw by `fact show`
    # (U+200B was refused since attack round 20); a source record's title holding U+00AD passed check (exit 0), and
    # audit --source printed it raw. Now the schemas' one-line rule (schema.ONE_LINE) refuses them too.
    import re

    from passprice.schema import ONE_LINE, ecma_pattern

    one_line = re.compile(ecma_pattern(ONE_LINE))
    for ch in "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b\u180e\u180f\u2065\u206a\u206f\u3164\uffa0\ufff9\ufffb":
        assert not one_line.search(f"Table{ch} 1"), repr(ch)
    for ch in "\u200c\u200d\ufe0f\u00a0\u2009é中":  # the joiners, a variation selector, spaces, letters: read as ever
        assert one_line.search(f"Table{ch} 1"), repr(ch)
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    assert bad("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9", "--unit", "1", "--provenance",
               "estimated", "--source", "nvidia-h200-datasheet", "--locator", "Table\u00ad 1", root=root) == [
        f"passprice: error: {card}: streams.read.locator: 'Table\\xad 1' holds a control character, a line separator, "
        "a bidi control or an invisible character (a newline, a tab, U+2028, U+202E, U+200B …): write it on one line"]
    assert card.read_bytes() == before
    source = root / "sources" / "alvarobartt-cuda-device-query.toml"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace('title = "cuda', 'title = "\u00adcuda', 1), encoding="utf-8")
    lines = bad("audit", "--source", "alvarobartt-cuda-device-query", root=root)
    assert lines == [
        f"passprice: error: {source}: source.title: '\\xadcuda-device-query: Rust port of deviceQuery.cpp (README.md, "
        "its run on an NVIDIA L40S)' holds a control character, a line separator, a bidi control or an invisible "
        "character (a newline, a tab, U+2028, U+202E, U+200B …): write it on one line"]


# --- (3) explain of a long dotted path ------------------------------------------------------------------------------


def test_3_explain_of_a_path_of_many_keys_tries_only_tails_a_term_could_name() -> None:
    # before: every tail of the path was joined and looked up: `explain .a.a.a…` (120,001 characters, 60,001 keys)
    # took 110.7 s wall (16,001 keys: 7.3 s); now only the tails no longer than the longest term name's keys.
    from passprice import glossary

    assert glossary._MOST_KEYS == max(name.count(".") + 1 for name in glossary._INDEX) == 3
    long_path = "." + "a." * 60_000 + "a"
    seen: list[str] = []
    real = glossary._INDEX

    class Counted(dict):  # type: ignore[type-arg]
        def __contains__(self, key: object) -> bool:
            seen.append(str(key))
            return dict.__contains__(self, key)

    try:
        glossary._INDEX = Counted(real)
        assert bad("explain", long_path)[0].endswith(
            ".a.a.a.… is not a term passprice defines (passprice explain lists them)")
    finally:
        glossary._INDEX = real
    assert seen == ["a.a.a", "a.a", "a"]  # was 60,001 tails, the first 120,000 characters long
    assert invoke("explain", ".x.y.calibration[0].card_facts.unread").stdout.startswith("stack: ")


# --- (4) alternates that link back to the object folder -------------------------------------------------------------


def test_4_alternates_linking_to_their_own_folder_are_one_folder(tmp_path: Path) -> None:
    # before: objects/info/alternates of 8 lines l1 … l8, each a link to objects itself (l1 -> .): the look for a
    # blocking loose object named 8**5 + … folders (l1/l3/l2/…, by unresolved path, each compared with all before)
    # and `diff` ran past 120 s (killed; git itself reads such a repository at once). Now each folder once by its
    # real path, as git links an alternate: the object folder alone, and a FIFO in a real alternate still named.
    import os

    from passprice.gitread import _blocking_object, _object_folders
    from test_left52 import _git

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    objects = repo / ".git" / "objects"
    for i in range(1, 9):
        (objects / f"l{i}").symlink_to(".")
    (objects / "info" / "alternates").write_text("".join(f"l{i}\n" for i in range(1, 9)), encoding="utf-8")
    assert _object_folders(objects) == [objects]
    alternate = tmp_path / "alt" / "objects"
    (alternate / "ab").mkdir(parents=True)
    os.mkfifo(alternate / "ab" / ("cd" * 19))
    (alternate / "info").mkdir()
    (alternate / "info" / "alternates").write_text(f"{objects}\n../objects\n", encoding="utf-8")  # back, twice
    (objects / "l9").symlink_to(alternate)
    (objects / "info" / "alternates").write_text("l1\nl9\n" + f"{alternate}\n", encoding="utf-8")
    assert _object_folders(objects) == [objects, objects / "l9"]
    line = _blocking_object(_object_folders(objects))
    assert line is not None and line.startswith(f"{objects / 'l9' / 'ab' / ('cd' * 19)}: a FIFO (named pipe)")
    # lines naming no folder are passed over, as git passes them ("unable to normalize alternate object path"):
    # 20,000 of them held `diff` past 300 s (killed), then 10 s of CPU resolving each for each of its 13 git runs
    (objects / "info" / "alternates").write_text("".join(f"{tmp_path}/none/{i}/objects\n" for i in range(2_000))
                                                 + "l9\n", encoding="utf-8")
    assert _object_folders(objects) == [objects, objects / "l9"]
