"""Round 33 of hostile input (#13): a file of attribute rules a git setting names, a number typed too small for a
float, a sweep's serving named by a path, ...

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.cli_helpers import bad, invoke
from tests.test_hostile_29 import _git_registry

# --- (a) core.attributesFile: a file of rules git reads that check, diff and the history never looked at ------------

_TAIL = ("so what a review reads from git is not what check and price read in a checkout; remove the rule for "
         "passprice's files")


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home folder of the test's own (no user config, no XDG folder)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_ATTR_NOSYSTEM", "1")
    return home


@pytest.mark.parametrize("where", ["repository", "home", "xdg"])
def test_a_rule_in_the_file_core_attributes_file_names_is_refused_by_check_diff_and_history(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    # Round 33: `core.attributesFile = RULES` (in .git/config, ~/.gitconfig or $XDG_CONFIG_HOME/git/config), RULES
    # holding `facts/cards/a40.toml ident`: git applies it in every checkout (git check-attr says so), and check, diff
    # main HEAD and fact show --history all passed (exit 0): they looked only in .gitattributes files and
    # info/attributes.
    from test_diff import commit_all, git

    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    (path / "facts" / "cards" / "a40.toml").write_bytes((path / "facts" / "cards" / "a40.toml").read_bytes() + b"\n")
    commit_all(path, "a40: a blank line")
    rules = tmp_path / "rules"
    rules.write_text("facts/cards/a40.toml ident\n", encoding="utf-8")
    if where == "repository":
        config = path / ".git" / "config"
        config.write_text(config.read_text(encoding="utf-8") + f"[core]\n\tattributesFile = {rules}\n",
                          encoding="utf-8")
        named = ".git/config"
    elif where == "home":
        config = home / ".gitconfig"
        config.write_text(f"# mine\n[core]\n  attributesfile = \"{rules}\" ; the rules\n", encoding="utf-8")
        named = str(config)
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
        config = tmp_path / "xdg" / "git" / "config"
        config.parent.mkdir(parents=True)
        config.write_text(f"[core] attributesFile = {rules}\n", encoding="utf-8")
        named = str(config)
    assert git(path, "check-attr", "ident", "facts/cards/a40.toml").strip().endswith("ident: set")
    rule = f"(ident, a rule of {rules}, the core.attributesFile of {named})"
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout {rule}, {_TAIL}"]
    assert bad("fact", "show", "a40", "memory.capacity", "--history", root=path) == [
        f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout {rule}, {_TAIL}"]
    head = git(path, "rev-parse", "HEAD").strip()[:12]
    assert bad("diff", "main", "HEAD", root=path) == [
        f"passprice: error: facts/cards/a40.toml at {head}: git rewrites it in a checkout {rule}, {_TAIL}"]
    rules.write_text("*.gguf filter=lfs\n", encoding="utf-8")  # a rule for files passprice does not read
    assert invoke("check", root=path).exit_code == 0
    assert invoke("diff", "main", "HEAD", root=path).exit_code == 0


def test_the_file_a_rule_is_in_is_named_by_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 33: a rule in .git/info/attributes, in facts/.gitattributes or in the user's attributes file was "a
    # .gitattributes rule"; the file git takes the rule from is named (info/attributes over a folder's .gitattributes
    # over the top's over the user's), in the work tree and in a revision.
    from test_diff import commit_all, git

    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    user = home / ".config" / "git" / "attributes"
    user.parent.mkdir(parents=True)
    user.write_text("facts/cards/*.toml ident\n", encoding="utf-8")
    (path / ".gitattributes").write_text("facts/cards/a40.toml -ident\n", encoding="utf-8")
    (path / "facts" / ".gitattributes").write_text("cards/a100*.toml filter=lfs\n", encoding="utf-8")
    commit_all(path, "rules")
    (path / ".git" / "info").mkdir(exist_ok=True)
    (path / ".git" / "info" / "attributes").write_text("facts/cards/h200*.toml working-tree-encoding=UTF-16\n",
                                                       encoding="utf-8")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines == [
        f"passprice: error: facts/cards/a100_pcie_80gb.toml and 1 more file: git rewrites them in a checkout "
        f"(filter=lfs, a rule of facts/.gitattributes), {_TAIL}",
        f"passprice: error: facts/cards/b200.toml and 12 more files: git rewrites them in a checkout (ident, a rule of "
        f"{user}), {_TAIL}",
        "passprice: error: facts/cards/h200_sxm_141gb.toml: git rewrites it in a checkout "
        f"(working-tree-encoding=UTF-16, a rule of .git/info/attributes), {_TAIL}",
    ], lines
    head = git(path, "rev-parse", "HEAD").strip()[:12]
    assert bad("diff", "main", "HEAD", root=path)[0] == (
        f"passprice: error: facts/cards/a100_pcie_80gb.toml and 1 more file at {head}: git rewrites them in a checkout "
        f"(filter=lfs, a rule of facts/.gitattributes at {head}), {_TAIL}")


@pytest.mark.parametrize(("text", "line"), [
    ("[core\n", "line 1: a section header not closed"),
    ("[core]\n\tattributesFile = \"x\n", "line 2: a quote not closed"),
    ("[core]\n\tattributesFile = a\\q\n", "line 2: an unknown escape \\q"),
    ("[core]\n\tattributesFile\n", "core.attributesFile has no value"),
])
def test_a_config_file_that_is_not_git_config_is_said_to_be(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             text: str, line: str) -> None:
    # A ~/.gitconfig passprice cannot read as git config: whether it names a file of rules cannot be told, said in one
    # line naming the file and line (git refuses it as well), not passed as naming none.
    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    (home / ".gitconfig").write_text(text, encoding="utf-8")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"passprice: error: {home / '.gitconfig'}: {line}"), lines
    # git refuses it too (the history's first git run): said in git's words, not "not a git checkout"
    assert bad("fact", "show", "a40", "memory.capacity", "--history", root=path)[0].startswith(
        f"passprice: error: {path}: git rev-parse failed (fatal: ")


# --- (b) a number typed nearer zero than a float holds, a number shown as Python writes it ---------------------------

_UNDER = "underflows a float (read as 0: nothing but 0 is nearer zero than ±4.9e-324): give a number a float holds"


@pytest.mark.parametrize(("old", "new", "key"), [
    ("position = 1024\n", "position = 1e-400\n", "contexts.0.position"),  # 0 is allowed: it priced position 0
    ("share = 0.75\n", "share = 7_5e-4_00\n", "contexts.0.share"),  # was "0.0 is less than or equal to the minimum"
])
def test_a_servings_number_that_underflows_a_float_is_named_as_written(tmp_path: Path, old: str, new: str,
                                                                       key: str) -> None:
    # Round 33: `position = 1e-400` (a float reads it as 0.0) priced position 0, exit 0; `share = 1e-400` said "0.0
    # is less than or equal to the minimum of 0", a value the file does not hold.
    from tests.cli_helpers import REPO

    serving = tmp_path / "s.toml"
    text = (REPO / "registry" / "servings" / "gemma3-270m-h100.toml").read_text(encoding="utf-8")
    assert old in text
    serving.write_text(text.replace(old, new, 1), encoding="utf-8")
    typed = new.split(" = ")[1].strip()
    assert bad("price", str(serving)) == [f"passprice: error: {serving}: {key}: {typed} {_UNDER}"]


def test_a_cards_figure_that_underflows_or_is_past_its_bound_is_shown_as_typed(tmp_path: Path) -> None:
    # Round 33: `memory.bandwidth.value = 1e-400` was "0.0 is less than the minimum of 1e-09", and `= 1e19` "1e+19 is
    # greater than the maximum of 1e+18" (the bound is the schema's literal, 1e+18).
    from tests.cli_helpers import copy_root

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "a40.toml"
    text = card.read_text(encoding="utf-8")
    assert "\nvalue = 696\n" in text
    card.write_text(text.replace("\nvalue = 696\n", "\nvalue = 1e-400\n", 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == (
        f"passprice: error: facts/cards/a40.toml: memory.bandwidth.value: 1e-400 {_UNDER}")
    card.write_text(text.replace("\nvalue = 696\n", "\nvalue = 1E19\n", 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.stderr.splitlines()[0] == (
        "passprice: error: facts/cards/a40.toml: memory.bandwidth.value: 1E19 is greater than the maximum of 1e+18")


def test_an_option_that_underflows_a_float_is_said_to() -> None:
    # `--position 1e-400` priced position 0 (exit 0): a number the line does not hold.
    assert bad("price", "gemma3-270m-h100", "--position", "1e-400") == [
        "passprice: error: Invalid value for '--position': '1e-400' underflows a float (read as 0: nothing but 0 is "
        "nearer zero than ±4.9e-324) (a finite number from 0 to 4,294,967,295) (see 'cli price --help')"]
    assert invoke("price", "gemma3-270m-h100", "--position", "0e-400").exit_code == 0  # a zero written so


# --- (c) a sweep's serving named by a path to the registry's file -------------------------------------------------


@pytest.mark.parametrize("how", ["file", "argument"])
def test_a_sweep_row_names_a_registered_serving_by_its_name(tmp_path: Path, how: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 33: a sweep file outside the registry naming `../servings/gemma3-270m-h100` (a path the lookup resolves to
    # the registry's own file, as `price ../servings/gemma3-270m-h100` does) showed that text in the serving column;
    # so did `sweep ../servings/…` and a .toml path to the registry's file. A serving file elsewhere keeps its path.
    import csv
    import io
    import shutil

    from tests.cli_helpers import REPO

    monkeypatch.chdir(tmp_path)
    ref = "../servings/gemma3-270m-h100"
    (tmp_path / "sw.toml").write_text(f'servings = ["{ref}", "mine.toml"]\nbatches = [1]\n', encoding="utf-8")
    shutil.copy(REPO / "registry" / "servings" / "gemma3-270m-h100.toml", tmp_path / "mine.toml")
    args = ["--file", "sw.toml"] if how == "file" else [ref, "mine.toml", "--batches", "1"]
    result = invoke("sweep", *args)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["serving"] for row in rows] == ["gemma3-270m-h100", "mine.toml"]
    assert rows[0]["tokens_per_s"] == rows[1]["tokens_per_s"]


# --- diff's word diffs of a text without spaces, or with combining marks -----------------------------------------


def test_a_changed_character_of_a_text_without_spaces_is_shown_alone() -> None:
    # Round 33: a note of 4,000 Chinese characters (one `\w` word to the tokenizer) with one character changed was shown
    # whole, old → new (8,003 characters on one line); and the context kept around a change had no bound in characters
    # (a run of 3,999 dots before it was kept whole).
    from passprice.textchange import CONTEXT_CHARS, text_change

    old, new = "字" * 2000 + "甲" + "字" * 1999, "字" * 2000 + "乙" + "字" * 1999
    assert text_change(old, new) == f"…{'字' * CONTEXT_CHARS}[甲 → 乙]{'字' * CONTEXT_CHARS}…"
    assert text_change("." * 3999 + "a", "." * 3999 + "b") == f"…{'.' * CONTEXT_CHARS}[a → b]"


def test_a_changed_accent_is_shown_with_its_letter() -> None:
    # Round 33: `cafe` + U+0301 → `cafe` + U+0300 was shown `the cafe[́ → ̀] measured`: the accent alone in the
    # brackets, drawn on the bracket. A combining mark stays with the character it is written on.
    from passprice.textchange import text_change

    tail = " measured 100.02 tokens per second on the card, as the table in the README of the runs says so"
    old, new = "the cafe\u0301" + tail, "the cafe\u0300" + tail
    assert text_change(old, new) == "the [cafe\u0301 → cafe\u0300] measured 100.02 tokens per second …"


# --- fact show of a routing record and a serving stack of one name ------------------------------------------------


def test_fact_show_finds_a_stacks_fact_beside_a_routing_record_of_the_name(tmp_path: Path) -> None:
    # Round 33: with facts/routing/uniform.toml and facts/stacks/uniform.toml, `fact show uniform stack.share.read` said
    # "facts/routing/uniform.toml: stack.share.read: no such fact (it has routing.hot_experts, routing.hot_share)",
    # silent on the stack (round 32 fixed a card and a record of one name, not two records).
    import shutil

    from tests.cli_helpers import copy_root

    root = copy_root(tmp_path)
    shutil.copy(root / "facts" / "stacks" / "llamacpp-cuda-2405.toml", root / "facts" / "stacks" / "uniform.toml")
    shown = invoke("fact", "show", "uniform", "stack.share.read", root=root)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == "uniform (facts/stacks/uniform.toml), a serving stack"
    assert invoke("fact", "show", "uniform", "share.read", root=root).stdout == shown.stdout
    assert invoke("fact", "show", "uniform", "routing.hot_share", root=root).stdout.splitlines()[0] == (
        "uniform (facts/routing/uniform.toml), a routing record")
    line = bad("fact", "show", "uniform", "nope", root=root)[0]
    assert line.startswith(f"passprice: error: {root / 'facts' / 'routing' / 'uniform.toml'}: nope: no such fact (it "
                           "has routing.hot_experts, routing.hot_share); nor a fact of the serving stack uniform "
                           "(it has stack.overhead.pass, ")


# --- a text past its schema's maxLength ---------------------------------------------------------------------------


def test_a_note_past_its_bound_says_the_bound_and_its_length(tmp_path: Path) -> None:
    # Round 33: a card's note of 4,001 characters was "memory.capacity.note: 'xxx…' is too long": neither the bound
    # nor by how much; 4,000 characters (2,000 of them astral: counted as code points, as both validators count) pass.
    from tests.cli_helpers import copy_root

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "a40.toml"
    text = card.read_text(encoding="utf-8")
    marker = '\n[memory.bandwidth]\n'
    assert marker in text
    card.write_text(text.replace(marker, f'\n[memory.bandwidth]\nnote = "{"😀" * 2000 + "y" * 2000}"\n', 1),
                    encoding="utf-8")
    assert invoke("check", root=root).exit_code == 0
    card.write_text(text.replace(marker, f'\n[memory.bandwidth]\nnote = "{"😀" * 2000 + "y" * 2001}"\n', 1),
                    encoding="utf-8")
    lines = invoke("check", root=root).stderr.splitlines()
    assert lines[0].startswith("passprice: error: facts/cards/a40.toml: memory.bandwidth.note: '😀😀")
    assert lines[0].endswith("… is too long (4,001 characters; at most 4,000)"), lines[0]


# --- reproduce and audit: a derived fact whose recorded inputs moved but whose value still follows -----------------


def test_a_derived_fact_that_still_follows_is_not_said_to_be_priced_stale(tmp_path: Path) -> None:
    # Round 33: memory.bandwidth 3.35 → 3.350000001 TB/s (streams.read and streams.append derive from it, to 4
    # significant digits) made reproduce say "streams.read, streams.append are stale derived facts … priced on their
    # written values (streams.read 0.9493, recomputed 0.9493 …)" and audit "STALE:" the same: a move the price does
    # not make. Their values still follow; only the inputs their derivations record are old.
    from tests.cli_helpers import copy_root

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    text = card.read_text(encoding="utf-8")
    assert "[memory.bandwidth]\nvalue = 3.35\n" in text
    card.write_text(text.replace("[memory.bandwidth]\nvalue = 3.35\n", "[memory.bandwidth]\nvalue = 3.350000001\n"),
                    encoding="utf-8")
    said = ("streams.read, streams.append record inputs that changed (memory.bandwidth 3.35 TB/s when derived, "
            "3.350000001 TB/s now), but their values still follow from them; `passprice check` names each (update the "
            "derivation)")
    out = invoke("reproduce", "gemma3-270m-h100", root=root)
    assert f"    stale          {said} (today's inputs column rests on them)" in out.stdout.splitlines(), out.stdout
    assert "recomputed 0.9493" not in out.stdout
    assert f"STALE: {said}" in invoke("audit", "gemma3-270m-h100", root=root).stdout.splitlines()


def test_a_rule_file_git_c_names_is_refused_by_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `git -c core.attributesFile=RULES …` runs a hook with GIT_CONFIG_PARAMETERS naming it: git applies the rules,
    # and check (reading the config files alone) spawned no git, passing the card.
    _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    rules = tmp_path / "rules"
    rules.write_text("facts/cards/a40.toml ident\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.attributesfile'='{rules}'")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout (ident, a rule of {rules}, the "
        f"core.attributesFile of GIT_CONFIG_PARAMETERS), {_TAIL}"]


# --- sweep of every registered serving: twins by Unicode normalization ---------------------------------------------


def test_a_sweep_of_every_serving_names_servings_that_print_alike(tmp_path: Path) -> None:
    # Round 33: registry/servings/é-h100.toml written twice (é as one code point, and as e + U+0301): `servings` and
    # `check` name the pair, but `sweep` (every registered serving) priced both, two rows that print alike, exit 0.
    # The grid is still swept; the pair is named on stderr and the command exits 2, as the listings do.
    import csv
    import io

    from tests.cli_helpers import copy_root

    root = copy_root(tmp_path)
    folder = root / "registry" / "servings"
    text = (folder / "gemma3-270m-h100.toml").read_bytes()
    for name in ("\u00e9-h100", "e\u0301-h100"):
        (folder / f"{name}.toml").write_bytes(text)
    result = invoke("sweep", "--batches", "1", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (
        "passprice: error: registry/servings: 'e\\u0301-h100.toml', '\\xe9-h100.toml': names that differ only by case "
        "or Unicode normalization (they show alike, and are one file on macOS and Windows): rename all but one")
    servings = [row["serving"] for row in csv.DictReader(io.StringIO(result.stdout))]
    assert "\u00e9-h100" in servings and "e\u0301-h100" in servings and "gemma3-270m-h100" in servings
    assert invoke("sweep", "gemma3-270m-h100", "--batches", "1", root=root).exit_code == 0  # named: no listing


# --- a FIFO where git reads rules or settings ---------------------------------------------------------------------


def test_a_fifo_where_git_reads_rules_or_settings_is_refused_not_waited_on(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 33: .git/info/attributes made a FIFO: `check` and `fact show --history` ran `git check-attr`, which opened
    # the FIFO and blocked forever (as a .gitattributes FIFO, or the file core.attributesFile names); a FIFO as the
    # user's git config blocked every git passprice runs (`diff main`).
    import os

    _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    info = path / ".git" / "info" / "attributes"
    info.parent.mkdir(exist_ok=True)
    os.mkfifo(info)
    tail = ("a FIFO (named pipe), where git reads attribute rules: git would block reading it (or read without end), "
            "so passprice runs no git here; make it a regular file or remove it")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"passprice: error: .git/info/attributes: {tail}"]  # relative, as check's
    assert bad("fact", "show", "a40", "memory.capacity", "--history", root=path) == [
        f"passprice: error: {info}: {tail}"]
    info.unlink()
    config = tmp_path / "gitconfig"
    os.mkfifo(config)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    assert bad("diff", "main", root=path) == [
        f"passprice: error: {config}: a FIFO (named pipe), where git reads its settings: git would block reading it "
        "(or read without end), so passprice runs no git here; make it a regular file or remove it"]


# --- a lock named in another case ---------------------------------------------------------------------------------


def test_a_lock_named_in_another_case_is_offered_as_the_others_are() -> None:
    # Round 33: `price GEMMA3-270M-H100` said "did you mean gemma3-270m-h100?", `reproduce GEMMA3-270M-H100` listed the
    # locks without the hint.
    line = bad("reproduce", "GEMMA3-270M-H100")[0]
    assert line.startswith("passprice: error: lock 'GEMMA3-270M-H100': no such file, and not in ")
    # (since tests/test_walk117.py a name that differs only in case is answered with the suggestion alone)
    assert line.endswith("/locks; did you mean gemma3-270m-h100? (the name differs only in case; names are matched "
                         "exactly)")


def test_a_config_file_with_crlf_line_ends_is_read_as_git_reads_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # A ~/.gitconfig saved with CRLF line ends (git reads it alike) was "line 1: not a key; not git config" once the
    # config was read (round 33's own reader, before this test).
    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    rules = tmp_path / "rules"
    rules.write_text("facts/cards/a40.toml ident\n", encoding="utf-8")
    (home / ".gitconfig").write_bytes(f"[core]\r\n\tattributesFile = {rules}\r\n".encode())
    result = invoke("check", root=path)
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout (ident, a rule of {rules}, the "
        f"core.attributesFile of {home / '.gitconfig'}), {_TAIL}"]


def test_a_sweep_row_names_a_servings_registered_checkpoint_by_its_name(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 33: a serving file outside the registry naming `checkpoint = "../checkpoints/gemma3-270m-q4_k_m"` (the
    # registry's entry, reached by a path) showed that text in the sweep's checkpoint column.
    import csv
    import io

    from tests.cli_helpers import REPO

    monkeypatch.chdir(tmp_path)
    text = (REPO / "registry" / "servings" / "gemma3-270m-h100.toml").read_text(encoding="utf-8")
    assert '\ncheckpoint = "gemma3-270m-q4_k_m"\n' in text
    (tmp_path / "mine.toml").write_text(text.replace('\ncheckpoint = "gemma3-270m-q4_k_m"\n',
                                                     '\ncheckpoint = "../checkpoints/gemma3-270m-q4_k_m"\n'),
                                        encoding="utf-8")
    result = invoke("sweep", "mine.toml", "--batches", "1")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(row["serving"], row["checkpoint"]) for row in rows] == [("mine.toml", "gemma3-270m-q4_k_m")]


def test_a_model_configurations_number_that_underflows_is_named_as_written(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 33: `"rms_norm_eps": 1e-400` in a config.json (json reads it as 0.0) is refused in the file's text, not
    # as the 0.0 it is not.
    import json

    from tests.cli_helpers import REPO

    document = json.loads((REPO / "examples" / "configs" / "llama-3.1-8b.json").read_text(encoding="utf-8"))
    text = json.dumps(document)
    assert '"rms_norm_eps": ' in text
    config = tmp_path / "c.json"
    config.write_text(re.sub(r'"rms_norm_eps": [0-9.e-]+', '"rms_norm_eps": 1e-400', text), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert bad("synth", "c.json", "-o", str(tmp_path / "c.gguf")) == [
        f"passprice: error: c.json: config.rms_norm_eps: 1e-400 {_UNDER}"]
    assert not (tmp_path / "c.gguf").exists()


def test_a_sweep_position_that_underflows_is_refused(tmp_path: Path) -> None:
    # Round 33: `sweep --positions 1e-400,5` priced a row at position 0.0; a sweep file's `positions = [1e-400]` said
    # nothing either way before the schema's number check knew an underflow.
    assert bad("sweep", "gemma3-270m-h100", "--batches", "1", "--positions", "1e-400,5") == [
        "passprice: error: --positions: '1e-400' underflows a float (read as 0: nothing but 0 is nearer zero than "
        "±4.9e-324)"]
    sweep = tmp_path / "sw.toml"
    sweep.write_text('servings = ["gemma3-270m-h100"]\nbatches = [1]\npositions = [1e-400]\n', encoding="utf-8")
    assert bad("sweep", "--file", str(sweep)) == [f"passprice: error: {sweep}: positions.0: 1e-400 {_UNDER}"]
    assert invoke("sweep", "gemma3-270m-h100", "--batches", "1", "--positions", "0e5").exit_code == 0  # a zero


def test_a_trace_arrival_that_underflows_is_named_as_written(tmp_path: Path) -> None:
    # Round 33: `"arrival_s": 1e-400` (JSON reads it as 0.0) was simulated as an arrival at 0 s, exit 0.
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"arrival_s": 1e-400, "prompt_tokens": 10, "output_tokens": 5}\n'
                     '{"prompt_tokens": 10, "arrival_s": 1E-999, "output_tokens": 5}\n'
                     '{"arrival_s": 0e-5, "prompt_tokens": 10, "output_tokens": 5}\n', encoding="utf-8")
    said = "underflows a float (read as 0: nothing but 0 is nearer zero than ±4.9e-324)"
    assert bad("simulate", "r1-qwen7b-h200", "--trace", str(trace)) == [
        f"passprice: error: {trace}:1: arrival_s: 1e-400 {said}",
        f"passprice: error: {trace}:2: arrival_s: 1E-999 {said}",
    ]
