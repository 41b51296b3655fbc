"""Issue 13's bounds and review-use leftovers, each reproducer built in its test.

- (1) A card of 2,024 keys of 31 dotted parts (242 KB, valid TOML, under the 256 KiB a card may hold) cost ``tomllib``
  about 0.25 s and passprice's walks of its 60,721 tables as much again: four on HEAD held ``diff`` at 2.2-3.0 s of
  CPU. A file is now refused before it is parsed past its kind's separators (``schema.kind_separators``: a card
  4,096, the largest shipped 625), or past one separator each 5 bytes or one dot (outside strings and comments) each
  16 bytes, beyond 64 (``schema.shape_problem``): the caps of one file bound its parse, the densities that of any
  number of files under 1 MB.
- (4) ``reproduce`` dropped its "the lock's code is commit X" hint silently when git was stopped by
  ``gitread.quiet_bound``: now said in the pricing model's line (``not searched: git log: said nothing …``); and
  ``quiet_bound`` counts a repository's loose objects (by one fan-out folder, as ``git gc --auto``), not its packs
  alone.
- (5) ``sweep -o rows.txt`` (or a name of no suffix) wrote CSV silently: refused naming ``.csv`` and ``.json``, unless
  ``--format`` says which to write there.
- (6) ``init`` from a non-editable install of a git clone wrote ``passprice @ file:///…``, unpinned: now pinned at the
  clone's commit (``git+file:///…@COMMIT``), and its first step names the origin remote's line at that commit.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

R1 = "r1-qwen7b-h200"

# --- (1) files shaped to cost tomllib: separators and dots counted before the parse ---------------------------------

#: What a card of 2,024 such keys is refused for (its 60,720 dots and 2,024 '=').
CARD_PAST = ("62,744 separators (',', '=', '.', '[' and '{' outside strings and comments), past the 4,096 a card "
             "file may hold (the largest shipped holds 625; PASSPRICE_MAX_FILE_BYTES=BYTES raises it with the byte "
             "cap): not parsed")
DOTTED = "x{i}." + ".".join(f"k{j}" for j in range(30)) + " = 1\n"  # 31 parts, 32 separators a line


def _dotted(lines: int) -> str:
    return "".join(DOTTED.replace("{i}", str(i)) for i in range(lines))


def test_1_a_card_of_chained_dotted_keys_is_refused_unparsed_in_every_command(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # before: parsed (0.25 s) and walked, refused for its 60,721 tables: four such cards on HEAD held diff 2.2-3.0 s
    # of CPU, check 1.9 s, cards 1.1 s (load 4-7)
    import tomllib

    root = copy_root(tmp_path)
    text = _dotted(2024)
    assert len(text) == 241_770 < 256 << 10  # under the card's byte cap
    (root / "facts" / "cards" / "h200_sxm_141gb.toml").write_text(text)  # the card R1's serving and locks name
    line = f"passprice: error: facts/cards/h200_sxm_141gb.toml: {CARD_PAST}"
    parsed: list[int] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda t, **k: parsed.append(len(t)) or real(t, **k))
    for args in (("check",), ("cards",), ("audit", R1), ("lock", R1, "-o", str(tmp_path / "x.lock.toml"))):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, (args, result.output)  # audit names the file by its whole path
        assert [said.replace(f"{root}/", "") for said in result.stderr.splitlines()] == [line], (args, result.output)
    assert max(parsed, default=0) < 100_000  # never the card
    assert not (tmp_path / "x.lock.toml").exists()


def test_1_the_caps_scale_with_the_byte_cap_and_every_shipped_file_is_under_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import schema

    assert [schema.kind_separators(k) for k in ("card", "serving", "lock", "stack", "measurement")] == [
        4096, 4096, 32_768, 32_768, 16_384]
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(1 << 20))  # 4 times the cap: 4 times the separators
    assert schema.kind_separators("card") == 16_384
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "1000")  # lowered: the separators' cap stays
    assert schema.kind_separators("lock") == 32_768
    monkeypatch.delenv("PASSPRICE_MAX_FILE_BYTES")
    kinds = {"cards": "card", "stacks": "stack", "drafts": "draft", "routing": "routing", "servings": "serving",
             "measurements": "measurement", "locks": "lock"}
    seen = 0
    for path in [*(REPO / "facts").rglob("*.toml"), *(REPO / "registry").rglob("*.toml"),
                 *(REPO / "locks").glob("*.toml"), *(REPO / "sources").glob("*.toml")]:
        kind = "source" if path.parent.name == "sources" else kinds.get(path.parent.name)
        if kind is not None:
            assert schema.shape_problem(kind, path.read_bytes()) is None, path
            seen += 1
    assert seen > 80


@pytest.mark.parametrize(("text", "said"), [
    # 124 lines of 31 parts: 3,844 separators, under the card's 4,096, in 14 KB: past one each 5 bytes
    (_dotted(124), "3,844 separators (',', '=', '.', '[' and '{' outside strings and comments) in 14,646 bytes, past "
                   "the 2,993 a file of its size may hold (64 and one each 5 bytes; the densest shipped file holds one "
                   "each 10): not parsed"),
    # the same keys padded by comments to 11 bytes a separator: their dots still one each 12 bytes
    ("".join(DOTTED.replace("{i}", str(i)).rstrip("\n").ljust(360) + "# pad\n" for i in range(120)),
     "3,600 dots outside strings and comments in 43,920 bytes, past the 2,809 a file of its size may hold (64 and one "
     "each 16 bytes; the densest shipped file holds one each 30): not parsed"),
    # an array of integers, two bytes a separator
    ("a = [" + "1," * 3000 + "]\n", "3,002 separators (',', '=', '.', '[' and '{' outside strings and comments) in "
                                    "6,007 bytes, past the 1,265 a file of its size may hold (64 and one each 5 bytes; "
                                    "the densest shipped file holds one each 10): not parsed"),
])
def test_1_a_file_denser_than_any_shipped_is_refused_whatever_its_size(text: str, said: str) -> None:
    from passprice import schema

    assert schema.shape_problem("card", text.encode()) == said
    # what strings and comments hold is not counted: 3,000 dots in a note, read
    note = 'note = "' + "a." * 3000 + '"\n# ' + "b." * 3000 + "\n"
    assert schema.shape_problem("card", note.encode()) is None


def test_1_a_review_adding_such_cards_names_each_unparsed(tmp_path: Path) -> None:
    # four 242 KB cards on HEAD: 2.2-3.0 s of CPU before (tomllib and the walks), 0.9-1.1 s after (load 3-7)
    root = copy_root(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
    for n in (1, 2):
        (root / "facts" / "cards" / f"x{n}.toml").write_text(_dotted(2024))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "cards"], cwd=root, check=True)
    result = invoke("diff", "main~1", "main", root=root)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert "2 files do not read" in result.stdout
    for n in (1, 2):
        assert f"passprice: error: facts/cards/x{n}.toml does not read on HEAD: {CARD_PAST}" \
            in lines


def test_1_a_side_s_file_read_as_plain_toml_is_refused_for_its_shape() -> None:
    import tomllib

    from passprice.review import changes

    with pytest.raises(tomllib.TOMLDecodeError, match="62,744 separators"):
        changes.side_toml(_dotted(2024).encode(), "card")
    assert changes.side_toml(b'[card]\nname = "x"\n', "card") == {"card": {"name": "x"}}


# --- (4) a stopped git's history search, and loose objects ----------------------------------------------------------


def test_4_reproduce_says_its_history_search_was_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: the pricing model's line ended at "changed (e284fe05dc27 → …)", the commit's hint gone, exit 1 as now
    from passprice import gitread
    from test_walk56 import BEFORE_WINDOW55, needs_history

    if needs_history.args[0]:
        pytest.skip("the checkout's git history is not here")
    old = tmp_path / "gemma-old.lock.toml"
    old.write_bytes(subprocess.run(["git", "show", f"{BEFORE_WINDOW55}:locks/gemma3-270m-h100.lock.toml"],
                                   cwd=REPO, capture_output=True, check=True).stdout)
    import shutil

    real = shutil.which("git")
    folder = tmp_path / "fakebin"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\ncase " $* " in *" log "*) exec sleep 600;; esac\nexec {real} "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{__import__('os').environ['PATH']}")
    monkeypatch.setattr(gitread, "GIT_QUIET_S", 0.3)
    monkeypatch.setattr(gitread, "GIT_QUIET_BYTES", 1 << 50)
    result = invoke("reproduce", str(old))
    assert result.exit_code == 1, result.output
    model = [line for line in result.stdout.splitlines() if line.startswith("    pricing model  changed (")]
    assert len(model) == 1
    assert ": not searched: git log: said nothing for 0.3 s, the most allowed in a repository of " in model[0]
    said = json.loads(invoke("reproduce", str(old), "--json").stdout)
    assert said["pricing_model"]["commit"] is None
    assert said["pricing_model"]["commit_search_cut"].startswith("not searched: git log: said nothing for 0.3 s")


def test_4_the_quiet_allowed_counts_loose_objects(tmp_path: Path) -> None:
    from passprice import gitread

    top = tmp_path / "repo"
    sample = top / ".git" / "objects" / gitread.LOOSE_SAMPLE
    sample.mkdir(parents=True)
    assert gitread.quiet_bound(top) == (1.0, 0)
    for i in range(4):
        (sample / f"{i:038x}").write_bytes(b"x" * 100_000)  # 256 times each file's blocks on disk
    (sample / "tmp_obj_x").write_bytes(b"x" * 10_000_000)  # not an object
    quiet, counted = gitread.quiet_bound(top)
    blocks = sum(max(p.stat().st_size, p.stat().st_blocks * 512) for p in sample.iterdir() if len(p.name) == 38)
    assert counted == 256 * blocks >= 256 * 400_000
    assert quiet == 1.0 + counted / gitread.GIT_QUIET_BYTES


# --- (5) sweep -o FILE of no format's suffix -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "suffix"), [("rows.txt", "its suffix .txt"), ("rows", "no suffix")])
def test_5_sweep_to_a_file_of_no_format_is_refused_unless_format_says(tmp_path: Path, name: str, suffix: str) -> None:
    # before: CSV written, exit 0
    out = tmp_path / name
    assert bad("sweep", R1, "--batches", "1", "-o", str(out)) == [
        f"passprice: error: {out}: -o names no format of a sweep's rows ({suffix}): name it .csv or .json, or give "
        "--format csv (or --format json) to write that format under this name"]
    assert not out.exists()
    done = invoke("sweep", R1, "--batches", "1", "-o", str(out), "--format", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text())[0]["batch"] == 1
    done = invoke("sweep", R1, "--batches", "1", "-o", str(out), "--force", "--json")
    assert done.exit_code == 0 and out.read_text().startswith("[")
    done = invoke("sweep", R1, "--batches", "1", "-o", str(out), "--force", "--format", "csv")
    assert done.exit_code == 0 and out.read_text().startswith("card,serving,")
    standard = invoke("sweep", R1, "--batches", "1", "-o", "-")
    assert standard.exit_code == 0 and standard.stdout.startswith("card,serving,")


# --- (6) init from a non-editable install of a git clone ------------------------------------------------------------


def _clone(tmp_path: Path, origin: str | None) -> tuple[Path, str]:
    clone = tmp_path / "clone"
    clone.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=clone, check=True)
    (clone / "pyproject.toml").write_text("[project]\nname = 'passprice'\n")
    subprocess.run(["git", "add", "-A"], cwd=clone, check=True)
    subprocess.run([*git, "commit", "-qm", "c"], cwd=clone, check=True)
    if origin is not None:
        subprocess.run(["git", "remote", "add", "origin", origin], cwd=clone, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True)
    return clone, head.stdout.strip()


def test_6_init_from_a_clone_installed_not_editable_pins_its_commit(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # before: "passprice @ file:///…/clone" (whatever the folder holds at each install), with the local warning
    import importlib.metadata

    clone, head = _clone(tmp_path, "https://github.com/OWNER/passprice.git")
    url = clone.as_uri()

    class FromAClone:
        def read_text(self, name: str) -> str | None:
            return json.dumps({"url": url, "dir_info": {}})

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: FromAClone())
    mine = tmp_path / "mine"
    result = invoke("init", str(mine))
    assert result.exit_code == 0, result.output
    pinned = f"passprice @ git+{url}@{head}"
    assert (mine / "requirements.txt").read_text().splitlines()[-1] == pinned
    assert (f"first: requirements.txt installs passprice from this machine (git+{url}@{head}, the commit the clone "
            "it was installed from is at): CI cannot reach it; write passprice @ "
            f"git+https://github.com/OWNER/passprice.git@{head} there (its origin remote at that commit, once "
            "pushed), or run init again with --requirement SPEC") in result.stdout.splitlines()


@pytest.mark.parametrize("case", ["editable", "changed", "no-origin", "not-git"])
def test_6_what_is_not_a_committed_clone_installed_not_editable_is_as_before(tmp_path: Path, case: str) -> None:
    from passprice.scaffold import pinned_clone, requirement_from_direct_url

    clone, head = _clone(tmp_path, None if case == "no-origin" else "https://github.com/OWNER/passprice.git")
    if case == "changed":
        (clone / "pyproject.toml").write_text("[project]\nname = 'other'\n")
    if case == "not-git":
        subprocess.run(["rm", "-rf", str(clone / ".git")], check=True)
    text = json.dumps({"url": clone.as_uri(), "dir_info": {"editable": case == "editable"}})
    found = pinned_clone(text, requirement_from_direct_url(text))
    if case == "no-origin":  # pinned, with no remote to name
        assert (found.line, found.remote) == (f"passprice @ git+{clone.as_uri()}@{head}", None)
        assert found.advice() is not None and found.advice().startswith(  # type: ignore[union-attr]
            f"requirements.txt installs passprice from this machine (git+{clone.as_uri()}@{head}): CI cannot reach it")
    else:
        assert (found.line, found.origin, found.remote) == (f"passprice @ {clone.as_uri()}", "local", None)


# --- (3) a side priced in its own process: every module it imports counted ------------------------------------------


def test_3_a_side_whose_other_modules_are_past_the_tokens_is_not_imported(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # a side's schema.py (no pricing module: no cap held it) grown by 1 MB of `[a,a,…]`: diff 5.3-6.3 s of CPU and
    # 585 MB before (its process compiling it), 2.4 s and 90 MB after (load 11-12)
    import shutil

    from passprice import pins, sidecode

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    package = tmp_path / "src" / "passprice"
    shutil.copytree(pins.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    with (package / "cost.py").open("a", encoding="utf-8") as f:
        f.write("\nBOUND111 = 1\n")  # another pricing model: priced in its own process
    assert sidecode.code_of(package).not_judged is None
    own = sum(pins._count_tokens(p.read_bytes()) for p in package.rglob("*.py"))
    names = (sidecode.SIDE_TOKENS - own) // 2 + 10
    with (package / "schema.py").open("a", encoding="utf-8") as f:
        f.write("\nHOSTILE = [" + "a," * names + "]\n")
    total = sum(pins._count_tokens(p.read_bytes()) for p in package.rglob("*.py"))
    assert sidecode.SIDE_TOKENS < total < sidecode.SIDE_TOKENS + 100
    code = sidecode.code_of(package)
    assert code.model == "not judged" and not code.running
    assert code.not_judged == (
        f"src/passprice: {total:,} tokens in its modules, past the 950,000 a side's code may hold to be priced in a "
        "process of its own, which imports them all (this passprice's own hold about 730,000): not imported")
    assert sidecode.price_locks(None, code, [{"key": "k"}]) == {  # type: ignore[arg-type]
        "k": {"error": f"its own code was not judged: {code.not_judged}"}}


def test_3_this_package_is_under_80_percent_of_a_side_s_tokens() -> None:
    from passprice import pins, sidecode

    own = sum(pins._count_tokens(p.read_bytes()) for p in pins.PACKAGE.rglob("*.py"))
    assert 500_000 < own <= 0.8 * sidecode.SIDE_TOKENS, own
