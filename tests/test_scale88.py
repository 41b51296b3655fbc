"""scale88 (issue 13): a registry whose locks/ holds many copies of one lock, each of its own bytes (a comment, its
keys in another order) — each lock's work done once per content as parsed, each file still judged under its own name.

- (1) ``check``: each copy gets its own lines naming it, the same lines as the lock it copies; a copy pinning another
  value is judged apart (its own verdict, exit 1); a copy whose digest fails is refused naming itself.
- (2) ``diff`` of the copies added (folders as sides): each copy's block names its file, as the first's does.
- (3) the plain TOML reader (``schema._plain_document``) answers what ``tomllib`` does, or leaves the text to it.
- (4) ``schema.content_digest``: one content, one digest, the order of keys and comments aside; ``1`` and ``1.0`` apart.

No timings here: the figures are in docs/PERFORMANCE.md, round scale88.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import tomllib
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke

# counts the locks built (test_1): none kept from an earlier test's command (tests/conftest.py)
FRESH_LASTING = True

R1 = "r1-qwen7b-h200"


def _copies(root: Path, n: int = 6) -> dict[str, str]:
    """``n`` copies of R1's lock of each kind in ``root``'s locks/ (the same bytes, a comment of their own, the keys
    of ``[facts.array]`` in another order), by file name: the kind."""
    text = (root / "locks" / f"{R1}.lock.toml").read_text(encoding="utf-8")
    lines = text.split("\n")
    start = lines.index("[facts.array]") + 1
    end = lines.index("", start)
    orders = itertools.permutations(lines[start:end])
    next(orders)  # the order as written
    made = {}
    for i in range(n):
        for kind, copy in (
            ("same", text),
            ("commented", text + f"# copy {i}: a comment of its own\n"),
            ("reordered", "\n".join(lines[:start] + list(next(orders)) + lines[end:])),
        ):
            name = f"{kind}{i}.lock.toml"
            (root / "locks" / name).write_text(copy, encoding="utf-8")
            made[name] = kind
    return made


def _blocks(output: str) -> dict[str, list[str]]:
    """``check``'s lines of each lock, by its file (``locks/NAME.lock.toml``), the file's name written as ``FILE``."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        found = re.match(r"lock \S+ \((locks/[^,]+), ", line)
        if found is not None:
            current = blocks.setdefault(found.group(1), [])
            line = line.replace(found.group(1), "FILE")
        elif not line.startswith("  "):
            current = None
        if current is not None:
            current.append(line)
    return blocks


def test_1_check_judges_each_copy_under_its_own_name(tmp_path: Path) -> None:
    from passprice.locks import lock_text, read_lock

    root = copy_root(tmp_path)
    made = _copies(root)
    assert len({(root / "locks" / n).read_bytes() for n in made}) == 1 + 6 + 6  # the same, and 12 of their own
    # a copy pinning another value (every digest recomputed, as passprice would write it): judged on its own
    lock = read_lock(root / "locks" / f"{R1}.lock.toml")
    facts = dict(lock.facts)
    facts["memory.bandwidth"] = attrs.evolve(facts["memory.bandwidth"], value=4.9, amount=4.9)
    other = attrs.evolve(lock, facts=facts, info=attrs.evolve(lock.info, name="other"))  # a name of its own
    (root / "locks" / "other.lock.toml").write_text(lock_text(other), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output
    blocks = _blocks(result.output)
    original = blocks[f"locks/{R1}.lock.toml"]
    assert original[0] == f"lock {R1} (FILE, locks serving {R1}): ok"
    assert "  drift: none" in original
    for name in made:  # each copy: its own lines, naming it, the same as the lock it copies
        assert blocks[f"locks/{name}"] == original, name
    judged = blocks["locks/other.lock.toml"]
    assert judged[0] == f"lock other (FILE, locks serving {R1}): FAILS"
    assert judged[1].startswith("  does NOT reproduce"), judged  # its pins do not give the price it records
    assert "    tokens_per_s: 996.0966124437687 → 1016.8486252030137 (+2.083 %)" in judged
    assert judged[-2:] == ["  drift:", "    memory.bandwidth: 4.9 TB/s (published) → 4.8 TB/s (published)"]
    # the duplicates are told, each by its own name (the first file of a content is the one kept)
    duplicates = [line for line in result.output.splitlines() if " duplicates locks/" in line]
    assert len(duplicates) == len(made)
    for name in made:
        assert any(f"warning: locks/{name} duplicates locks/" in line for line in duplicates), name
    assert not any("other.lock.toml duplicates" in line for line in duplicates)


def test_1_a_copy_edited_by_hand_is_refused_naming_itself(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    made = _copies(root, 2)
    text = (root / "locks" / "reordered1.lock.toml").read_text(encoding="utf-8")
    assert text.count("value = 989.5\n") == 1
    (root / "locks" / "reordered1.lock.toml").write_text(text.replace("value = 989.5\n", "value = 989.6\n"),
                                                          encoding="utf-8")
    for args in (("check",), ("--no-cache", "check")):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if "reordered1.lock.toml" in line]
        said = ("locks/reordered1.lock.toml: facts.array: digest mismatch: the pinned fact array was edited by hand "
                "(its content hashes to sha256:e03b4ecd9fcb03da537882bb046b51f8eb829b44b68c935b7233a995aefcefb1, the "
                "lock says sha256:ac508390fbafe2cea8bc885cc4fd9623c9f780b148aeeb7153a3fef53d405d68); re-lock it "
                "instead")
        # on stderr, and again in the recap of problems on stdout just before "check FAILED" (a new user's finding)
        assert lines == [f"  {said}", f"passprice: error: {said}"], lines
        assert result.stderr.splitlines().count(f"passprice: error: {said}") == 1
        for name in made:  # no other copy is refused
            if name != "reordered1.lock.toml":
                assert f"{name}: facts" not in result.output, name


def test_2_diff_names_each_copy_added(tmp_path: Path) -> None:
    base = copy_root(tmp_path / "base")
    head = copy_root(tmp_path / "head")
    made = _copies(head, 3)
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 0, result.output
    assert f"{len(made)} locks affected, {len(made)} added, {len(made)} duplicating another" in result.output
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.output.splitlines():
        found = re.match(rf"  {R1} \((locks/[^,]+), card h200_sxm_141gb, price\): added$", line)
        if found is not None:
            current = blocks.setdefault(found.group(1), [])
        elif not line.startswith("    "):
            current = None
        if current is not None:
            current.append(re.sub(r"locks/\S+\.lock\.toml", "FILE", line))
    assert sorted(blocks) == sorted(f"locks/{name}" for name in made)
    first = blocks["locks/same0.lock.toml"]
    assert "    tokens/s  not priced → 996.1" in first
    assert "    floors    new → still holds" in first
    for name in made:
        assert blocks[f"locks/{name}"] == first, name


# --- (3) the plain TOML reader ----------------------------------------------------------------------------------------


def _parsed(text: str) -> object:
    from passprice.schema import parse_float

    try:
        return tomllib.loads(text, parse_float=parse_float)
    except (ValueError, RecursionError):
        return None


def test_3_the_plain_reader_reads_as_tomllib_or_not_at_all() -> None:
    from passprice.schema import _plain_document

    taken = 0
    for path in sorted(REPO.glob("*/**/*.toml")):
        text = path.read_text(encoding="utf-8")
        plain = _plain_document(text)
        if plain is not None:
            taken += 1
            assert repr(plain) == repr(_parsed(text)), path  # the same keys in the same order, the same types
    assert taken >= 40  # every lock, every card and serving written plainly
    for path in sorted((REPO / "locks").glob("*.lock.toml")):
        assert _plain_document(path.read_text(encoding="utf-8")) is not None, path  # [[...]] too
    # texts mutated at random (lines repeated, dropped, swapped, or one of these added): whatever the plain reader
    # takes, tomllib reads the same; the rest (TOML's refusals among them) is left to tomllib
    extra = ["[[a]]", "[a]", "[[a.b]]", "[a.b]", "a = 1", "a = [1, 2]", "[[serving.contexts]]", "[serving]",
             "[serving.contexts]", "[[serving]]", "limit = 1", "[facts]", 'x = "1"', "[facts.\"host.read\"]",
             "[[facts.\"host.read\".derivation.runs]]", "x = 1e5", "x = -0.0", "x = 1.5E+3", "contexts = 1",
             "[serving.contexts.x]", "x = 12345678901234567890", "x = -1234567890123456789", "[a]]", "[[a]"]
    texts = [p.read_text(encoding="utf-8").split("\n") for p in sorted((REPO / "locks").glob("*.lock.toml"))]
    rng = random.Random(88)
    taken = 0
    for _ in range(1500):
        lines = list(rng.choice(texts))
        for _ in range(rng.randint(1, 3)):
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            step = rng.randrange(4)
            if step == 0:
                lines.insert(j, lines[i])
            elif step == 1:
                del lines[i]
            elif step == 2:
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines.insert(i, rng.choice(extra))
        text = "\n".join(lines)
        plain = _plain_document(text)
        if plain is not None:
            taken += 1
            assert repr(plain) == repr(_parsed(text)), text
    assert taken > 300


@pytest.mark.parametrize("text", [
    "[a]\nx = 1\n[a]\ny = 2\n",  # a table twice
    "[a.b]\n[a]\n",  # a table after its own sub-table: TOML's, left to tomllib
    "a = [1]\n[[a]]\n",  # an array of tables over an array
    "[[a]]\n[a]\n",  # a table over an array of tables
    "[a]\nx = 1\nx = 2\n",  # a key twice
    "[a]\nb = 1\n[a.b]\n",  # a table over a key
    "x = 1 # a comment after a value\n",
    'x = "an \\"escaped\\" quote"\n',
    "x = 0x1f\n", "x = 1_000\n", "x = +1\n", "x = inf\n", "x = 01\n", "x = 1979-05-27\n",
    "x = 12345678901234567890\n",  # past 19 digits: tomllib's
    "[ a ]\n", "x=1\n", "  x = 1\n", "x = 1\r\n", 'x = "tab\there"\n',
])
def test_3_what_the_plain_reader_leaves_to_tomllib(text: str) -> None:
    from passprice.schema import _plain_document

    assert _plain_document(text) is None


def test_3_arrays_of_tables_as_toml_reads_them() -> None:
    from passprice.schema import _plain_document

    text = ('[[a.b]]\nx = 1\n[a.b.c]\ny = "c of the first"\n[[a.b]]\nx = 2.5\n[a.b.c]\ny = "c of the second"\n'
            '[a.d]\nz = [true, "t, u", -3, 1e-05]\n')
    assert _plain_document(text) == _parsed(text) == {
        "a": {"b": [{"x": 1, "c": {"y": "c of the first"}}, {"x": 2.5, "c": {"y": "c of the second"}}],
              "d": {"z": [True, "t, u", -3, 1e-05]}}}


# --- (4) the content digest -------------------------------------------------------------------------------------------


def test_4_one_content_one_digest() -> None:
    from passprice.schema import content_digest, toml_loads

    digest = content_digest(toml_loads('[t]\na = 1\nb = "x"\n[u]\nc = [1, 2]\n'))
    assert digest is not None and len(digest) == 32
    assert content_digest(toml_loads('# a comment\n[u]\nc = [ 1,2 ]\n\n[t]\nb = \'x\'\na = 1\n')) == digest
    for other in ('[t]\na = 1.0\nb = "x"\n[u]\nc = [1, 2]\n',  # a float where an integer was
                  '[t]\na = true\nb = "x"\n[u]\nc = [1, 2]\n',  # a boolean
                  '[t]\na = "1"\nb = "x"\n[u]\nc = [1, 2]\n',  # a string
                  '[t]\na = 1\nb = "x"\n[u]\nc = [2, 1]\n'):  # an array's order is its content
        assert content_digest(toml_loads(other)) != digest, other
    # what JSON cannot hold apart is no content of its own: nan, inf, a date, a number that underflows to zero
    assert content_digest(toml_loads("x = nan\n")) is None
    assert content_digest({"x": math.inf}) is None
    assert content_digest(toml_loads("x = 1979-05-27\n")) is None
    assert content_digest(toml_loads("x = 1e-400\n")) is None
    assert content_digest(toml_loads("x = 0.0\n")) is not None


def test_1_each_content_is_built_and_reproduced_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: each copy of its own bytes was validated, digest-checked, structured (lock_from_document) and
    # reproduced (copies of the same bytes were not): 22 of each here (10 shipped, 12 of their own bytes); 1,000
    # copies each ending in a comment of its own took `check --no-cache` 9.1 s of CPU
    from passprice import locks, reproduce

    root = copy_root(tmp_path)
    made = _copies(root)
    calls = {"built": 0, "reproduced": 0}
    real_built, real_reproduce = locks.lock_from_document, reproduce.reproduce

    def built(*args: object, **named: object) -> object:
        calls["built"] += 1
        return real_built(*args, **named)  # type: ignore[arg-type]

    def reproduced(*args: object, **named: object) -> object:
        calls["reproduced"] += 1
        return real_reproduce(*args, **named)  # type: ignore[arg-type]

    monkeypatch.setattr(locks, "lock_from_document", built)
    monkeypatch.setattr(reproduce, "reproduce", reproduced)
    result = invoke("--no-cache", "check", root=root)
    assert result.exit_code == 0, result.output
    shipped = len(list((REPO / "locks").glob("*.lock.toml")))
    assert len(made) == 18 and shipped == 10
    assert calls == {"built": shipped, "reproduced": shipped}, calls  # was 22 and 22
    assert result.output.count(f"lock {R1} (locks/") == 1 + len(made)
