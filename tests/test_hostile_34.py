"""Round 34 of hostile input (#13): git's config as passprice reads it for ``core.attributesFile`` (a NUL in a value,
a line of many section headers, includes fanning out, the null device, includes the environment gives, a config
file linked to one not yet written), ...

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from tests.cli_helpers import invoke
from tests.test_hostile_29 import _git_registry
from tests.test_hostile_33 import _TAIL, _home

# --- (a) git's config: what git reads, read as git reads it, in bounded time -----------------------------------------


def _rules(tmp_path: Path) -> Path:
    """A file of attribute rules making git rewrite ``facts/cards/a40.toml`` (``ident``)."""
    rules = tmp_path / "rules"
    rules.write_text("facts/cards/a40.toml ident\n", encoding="utf-8")
    return rules


def _refused(rules: Path, named: str) -> list[str]:
    return [f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout (ident, a rule of {rules}, the "
            f"core.attributesFile of {named}), {_TAIL}"]


def _check_errors(path: Path) -> list[str]:
    """``check`` of ``path``, which must fail as bad input (exit 2): its lines on standard error."""
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    return result.stderr.splitlines()


def test_a_nul_in_a_config_value_ends_it_as_git_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `attributesFile = RULES<NUL>junk`: git holds a value as a C string, so it reads RULES and applies its rules
    # (git check-attr: ident set); passprice looked for a file named `RULES\0junk`, found none (os.path.lexists says
    # False of a NUL), ran no git and passed the card: check "all holds", exit 0.
    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    rules = _rules(tmp_path)
    (home / ".gitconfig").write_bytes(b"[core]\n\tattributesFile = " + bytes(rules) + b"\0junk\n")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == _refused(rules, str(home / ".gitconfig"))


def test_a_line_of_many_section_headers_is_read_in_linear_time(tmp_path: Path) -> None:
    # `[a][a][a]…` on one line (valid git config; git reads 1 MB of it in 30 ms): each header re-sliced the rest of
    # the line, so 349,000 of them took 7 s of CPU in check (quadratic). Now linear: the count of headers read is what
    # is asserted, and the time only loosely (a tenth of the old cost, on a loaded machine).
    from passprice.gitconfig import entries

    text = "[a]" * 349_000 + "\n[core]\n\tattributesFile = x\n"
    start = time.process_time()
    assert list(entries(text, "cfg")) == [("core.attributesfile", "x")]
    assert time.process_time() - start < 2.0


def test_includes_that_fan_out_are_each_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ~/.gitconfig: `[includeIf "gitdir:/nowhere/"] path = c1`, c1 to c5 each 200 lines including the next: git
    # (whose condition does not hold) reads none of them, in 15 ms; passprice followed each include as if it held,
    # reading c6 200^5 times: check never finished (killed after 20 s). Each file is now read once.
    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    rules = _rules(tmp_path)
    for n in range(1, 6):
        lines = "".join(f"\tpath = c{n + 1}\n" for _ in range(200))
        (home / f"c{n}").write_text(f'[includeIf "gitdir:/nowhere/"]\n{lines}', encoding="utf-8")
    (home / "c6").write_text(f"[core]\n\tattributesFile = {rules}\n", encoding="utf-8")
    (home / ".gitconfig").write_text('[includeIf "gitdir:/nowhere/"]\n\tpath = c1\n', encoding="utf-8")
    start = time.process_time()
    result = invoke("check", root=path)
    assert time.process_time() - start < 20
    assert result.exit_code == 0, result.output  # git does not apply c6's rule: the condition does not hold
    # included unconditionally (two lines a file, which git itself follows 2^5 times): the rule is git's, and
    # refused, named by the file that sets it
    (home / ".gitconfig").write_text("[include]\n\tpath = c1\n", encoding="utf-8")
    for n in range(1, 6):
        (home / f"c{n}").write_text(f"[include]\n\tpath = c{n + 1}\n\tpath = c{n + 1}\n", encoding="utf-8")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == _refused(rules, str(home / "c6"))


def test_includes_past_the_bound_are_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # More names of included files than any config holds: refused by name, not followed without end.
    from passprice.gitconfig import MAX_INCLUDES

    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    for n in range(MAX_INCLUDES + 1):
        (home / f"x{n}").write_text("[user]\n\tname = x\n", encoding="utf-8")
    lines = "".join(f"\tpath = x{n}\n" for n in range(MAX_INCLUDES + 1))
    (home / ".gitconfig").write_text(f"[include]\n{lines}", encoding="utf-8")
    assert _check_errors(path) == [
        f"passprice: error: {home / '.gitconfig'}: more than {MAX_INCLUDES:,} files included in all (git config; so "
        "whether they name a file of attribute rules cannot be told)"]


def test_an_include_loop_is_refused_as_git_refuses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    (home / ".gitconfig").write_text("[include]\n\tpath = other\n", encoding="utf-8")
    (home / "other").write_text("[include]\n\tpath = .gitconfig\n", encoding="utf-8")
    assert _check_errors(path) == [
        f"passprice: error: {home / '.gitconfig'}: includes nest more than 10 deep (it includes itself, by way of the "
        "files it includes; git refuses this too)"]


@pytest.mark.parametrize("variable", ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"])
def test_the_null_device_as_a_config_file_is_read_as_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          variable: str) -> None:
    # `GIT_CONFIG_GLOBAL=/dev/null` is git's own way to read no user config (git's documentation): check refused it
    # ("/dev/null: is a character device, not a regular file … a git config file"), and diff and fact show --history
    # ran no git ("a character device, where git reads its settings: git would block reading it"), exit 2.
    _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    monkeypatch.setenv(variable, os.devnull)
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM")
    assert invoke("check", root=path).exit_code == 0
    assert invoke("diff", "main", "HEAD", root=path).exit_code == 0
    assert invoke("fact", "show", "a40", "memory.capacity", "--history", root=path).exit_code == 0


def test_the_null_device_as_a_rule_file_or_an_include_is_read_as_empty(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # `core.attributesFile = /dev/null` (no user rules, a common setting): diff refused it, exit 2, as a device git
    # would block on; `include.path = /dev/null` made check refuse the config as unreadable.
    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    (home / ".gitconfig").write_text(f"[core]\n\tattributesFile = {os.devnull}\n", encoding="utf-8")
    assert invoke("check", root=path).exit_code == 0
    assert invoke("diff", "main", "HEAD", root=path).exit_code == 0
    rules = _rules(tmp_path)
    (home / ".gitconfig").write_text(f"[include]\n\tpath = {os.devnull}\n[core]\n\tattributesFile = {rules}\n",
                                     encoding="utf-8")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == _refused(rules, str(home / ".gitconfig"))


@pytest.mark.parametrize("how", ["count", "parameters"])
def test_a_config_file_the_environment_includes_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         how: str) -> None:
    # `git -c include.path=FILE` (a hook's GIT_CONFIG_PARAMETERS) or GIT_CONFIG_KEY_0=include.path: git reads FILE,
    # whose core.attributesFile names the rules, and applies them; passprice read only core.attributesFile from the
    # environment, found no rule file and passed the card (check "all holds", exit 0).
    _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    rules = _rules(tmp_path)
    included = tmp_path / "included.cfg"
    included.write_text(f"[core]\n\tattributesFile = {rules}\n", encoding="utf-8")
    if how == "count":
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", "include.path")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(included))
    else:
        monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'include.path'='{included}'")
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == _refused(rules, str(included))


def test_every_pair_the_config_count_gives_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIT_CONFIG_COUNT=1500 with GIT_CONFIG_KEY_1499=core.attributesFile: git reads every pair; passprice stopped at
    # 1,000 and passed the card.
    _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    rules = _rules(tmp_path)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1500")
    for n in range(1500):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{n}", "user.name" if n < 1499 else "core.attributesFile")
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{n}", "x" if n < 1499 else str(rules))
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == _refused(rules, "GIT_CONFIG_KEY_1499")


def test_a_config_variable_set_empty_names_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `GIT_CONFIG_GLOBAL=` (empty): git reads no user config at all; passprice read ~/.gitconfig, and refused the
    # check when it was not git config (git, reading none, runs).
    home = _home(tmp_path, monkeypatch)
    path = _git_registry(tmp_path)
    (home / ".gitconfig").write_text("[core\n", encoding="utf-8")
    assert _check_errors(path)[0].startswith(f"passprice: error: {home / '.gitconfig'}: line 1: ")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "")
    assert invoke("check", root=path).exit_code == 0


def test_a_config_file_linked_to_one_not_yet_written_is_no_stale_replay(tmp_path: Path) -> None:
    # ~/.gitconfig a link to a file not yet there (dotfiles not yet checked out): check held, and the memo kept it
    # with the link unstamped (nothing was opened: the file was looked at by stat alone). Once the file was written,
    # naming a file of rules git applies, the memo replayed "all holds", exit 0, where a fresh run refuses the card.
    import subprocess

    from tests.test_memo import recorded, run

    path = _git_registry(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").symlink_to("dotfiles-gitconfig")
    rules = _rules(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "GIT_CONFIG", "XDG_"))}
    env.update(PASSPRICE_CACHE_DIR=str(tmp_path / "cache"), HOME=str(home), GIT_CONFIG_NOSYSTEM="1",
               GIT_ATTR_NOSYSTEM="1")
    w = {"root": path, "cache": tmp_path / "cache", "env": env, "tmp": tmp_path}
    recorded(w, "check")
    (home / "dotfiles-gitconfig").write_text(f"[core]\n\tattributesFile = {rules}\n", encoding="utf-8")
    assert subprocess.run(["git", "check-attr", "ident", "facts/cards/a40.toml"], cwd=path, env=env,
                          capture_output=True, text=True).stdout.strip().endswith("ident: set")
    again = run(w, "check")
    assert again.returncode == 2, again.stderr.decode()
    assert again.stderr.decode().splitlines() == _refused(rules, str(home / ".gitconfig"))
