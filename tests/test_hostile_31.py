"""Round 31 of hostile input (#13): a fact's history of a file git rewrites in a checkout, a number that overflows a
float, an output named by an open file descriptor, ...

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke
from tests.test_hostile_29 import _git_registry

_MAIN = [sys.executable, "-c", "from passprice.cli import main; main()"]

# --- (a) fact show --history of a file a .gitattributes rule rewrites ------------------------------------------------


@pytest.mark.parametrize("rule", ["ident", "working-tree-encoding=UTF-16", "filter=lfs"])
def test_a_facts_history_refuses_a_file_git_rewrites_in_a_checkout(tmp_path: Path, rule: str) -> None:
    # Round 31: `check` and `diff` refuse a card a .gitattributes rule rewrites (what git holds is not what a checkout
    # reads), but `fact show a40 memory.capacity --history` showed the committed versions, exit 0.
    from test_diff import commit_all

    path = _git_registry(tmp_path)
    (path / ".gitattributes").write_text(f"facts/cards/*.toml {rule}\n", encoding="utf-8")
    commit_all(path, "rule")
    line = (f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout ({rule}, a rule of "
            ".gitattributes), so what a review reads from git is not what check and price read in a checkout; remove "
            "the rule for passprice's files")
    assert bad("fact", "show", "a40", "memory.capacity", "--history", root=path) == [line]
    assert invoke("check", root=path).stderr.startswith("passprice: error: facts/cards/a100_pcie_80gb.toml and 16 more "
                                                       f"files: git rewrites them in a checkout ({rule}, ")


def test_a_facts_history_reads_a_file_no_rule_rewrites(tmp_path: Path) -> None:
    # The rule on another file (or `eol`, which only changes line ends) leaves the history as it was.
    from test_diff import commit_all

    path = _git_registry(tmp_path)
    (path / ".gitattributes").write_text("facts/cards/h100*.toml ident\n*.toml eol=lf\n", encoding="utf-8")
    commit_all(path, "rule")
    result = invoke("fact", "show", "a40", "memory.capacity", "--history", root=path)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "a40 memory.capacity (facts/cards/a40.toml): 1 version"


# --- (b) a number written finite that overflows a float --------------------------------------------------------------


@pytest.mark.parametrize("typed", ["1e400", "-1_0e1_000", "1.5E+309"])
def test_a_servings_share_that_overflows_a_float_is_named_as_written(tmp_path: Path, typed: str) -> None:
    # Round 31: `share = 1e400` said "contexts.0.share: must be a finite number, not inf", a value the file does not
    # hold (tomllib reads 1e400 as an infinity).
    serving = tmp_path / "s.toml"
    text = (REPO / "registry" / "servings" / "gemma3-270m-h100.toml").read_text(encoding="utf-8")
    serving.write_text(text.replace("share = 0.75", f"share = {typed}", 1), encoding="utf-8")
    assert bad("price", str(serving)) == [
        f"passprice: error: {serving}: contexts.0.share: {typed} overflows a float (at most ±1.8e308): give a finite "
        "number"
    ]


def test_an_infinity_written_as_one_is_still_said_as_one(tmp_path: Path) -> None:
    serving = tmp_path / "s.toml"
    text = (REPO / "registry" / "servings" / "gemma3-270m-h100.toml").read_text(encoding="utf-8")
    serving.write_text(text.replace("share = 0.75", "share = inf", 1), encoding="utf-8")
    assert bad("price", str(serving)) == [f"passprice: error: {serving}: contexts.0.share: must be a finite number, "
                                          "not inf"]  # fmt: skip


def test_a_cards_value_that_overflows_a_float_is_named_as_written(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "a40.toml"
    text = card.read_text(encoding="utf-8")
    assert "\nvalue = 46068\n" in text
    card.write_text(text.replace("\nvalue = 46068\n", "\nvalue = 4.6e400\n", 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert ("passprice: error: facts/cards/a40.toml: memory.capacity.value: 4.6e400 overflows a float (at most "
            "±1.8e308): give a finite number") in result.stderr.splitlines()


def test_an_overflowed_number_is_a_float_and_pickles_as_one() -> None:
    import pickle

    from passprice import schema

    value = schema.toml_loads("x = -1e999\ny = 2.5\nz = -inf\n")
    assert value == {"x": float("-inf"), "y": 2.5, "z": float("-inf")}
    assert isinstance(value["x"], schema.Overflowed) and value["x"].typed == "-1e999"
    assert type(value["y"]) is float and type(value["z"]) is float
    assert type(pickle.loads(pickle.dumps(value["x"]))) is float


# --- (c) sweep positions are mean positions: a fraction is a position, in a file as on the command line -----------


def test_a_sweep_files_fractional_position_is_the_command_lines(tmp_path: Path) -> None:
    # Round 31 asked whether `positions = [1024.5]` in a sweep file should be refused as a float where a whole number
    # goes: it is a mean position reached (a serving's `position` is a number, `--positions 1024.5` is taken, and
    # a limit of 4,097 has a mean of 2,048.5), so the file prices what the command line prices, row for row.
    grid = tmp_path / "grid.toml"
    grid.write_text('servings = ["gemma3-270m-h100"]\nbatches = [1, 2]\npositions = [1024.5]\n', encoding="utf-8")
    from_file = invoke("sweep", "--file", str(grid))
    typed = invoke("sweep", "gemma3-270m-h100", "--batches", "1,2", "--positions", "1024.5")
    assert from_file.exit_code == typed.exit_code == 0, from_file.output
    assert from_file.stdout == typed.stdout
    assert [row.split(",")[5] for row in from_file.stdout.splitlines()] == ["position", "1024.5", "1024.5"]


# --- (d) -o naming an open file descriptor ---------------------------------------------------------------------------


def test_output_through_an_open_descriptor_is_refused(tmp_path: Path) -> None:
    # Round 31: `sweep -o /dev/fd/3 --force 3> x.json` followed the link to x.json, wrote JSON (the redirection's
    # suffix) and renamed a new file over it under the shell's descriptor; `-o /dev/stderr --force 2> x.json` lost
    # the sweep's own warnings with the file they had gone to. Refused, nothing written.
    out = tmp_path / "x.json"
    run = subprocess.run(["bash", "-c", 'out="$1"; shift; exec "$@" 3> "$out"', "-", str(out), *_MAIN, "--root",
                          str(REPO), "sweep", "gemma3-270m-h100", "--batches", "1", "-o", "/dev/fd/3", "--force"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert run.stdout == "" and out.read_bytes() == b""
    assert run.stderr == (
        f"passprice: error: /dev/fd/3: names open file descriptor 3 (a shell's redirection, now {out}), not a file: "
        "passprice writes a file whole and renames it into place, which the descriptor would not see, and a suffix "
        "would be the redirection's; give the file's own name (or - for standard output)\n"
    )
    link = tmp_path / "rows.csv"
    link.symlink_to("/dev/fd/2")
    with out.open("wb") as two:
        run = subprocess.run([*_MAIN, "--root", str(REPO), "sweep", "gemma3-270m-h100", "--batches", "1", "-o",
                              str(link), "--force"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=two,
                             cwd=tmp_path)  # fmt: skip
    assert run.returncode == 2 and run.stdout == b""
    assert out.read_text(encoding="utf-8").startswith(f"passprice: error: {link}: names open file descriptor 2 (")


def test_output_to_dev_stdout_is_standard_output_whatever_it_is_redirected_to(tmp_path: Path) -> None:
    # `-o /dev/stdout > x.json`: the -o name decides (it has no suffix: standard output's CSV), never the name of the
    # file the shell redirected to.
    out = tmp_path / "x.json"
    with out.open("wb") as one:
        run = subprocess.run([*_MAIN, "--root", str(REPO), "sweep", "gemma3-270m-h100", "--batches", "1", "-o",
                              "/dev/stdout"], stdin=subprocess.DEVNULL, stdout=one, stderr=subprocess.PIPE,
                             cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert out.read_text(encoding="utf-8").startswith("card,serving,checkpoint,")


# --- the result memo: a .gitattributes rule written above the registry root -----------------------------------------


def test_a_rewrite_rule_written_above_the_root_is_no_stale_replay_of_check(tmp_path: Path) -> None:
    # Round 31: `check` looks for a .gitattributes in each folder from the root up to the one holding .git
    # (os.path.lexists, which raises no audit event), so the memo's world stamp never held those places: a `check`
    # kept with none there was replayed ("all holds", exit 0) after `reg/facts/cards/a40.toml ident` was written in
    # the repository's top folder, above the root, where a fresh run refuses it.
    import os
    import shutil

    from tests.test_memo import recorded, run

    top = tmp_path / "repository"
    root = top / "reg"
    root.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(REPO / folder, root / folder)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = str(tmp_path / "cache")
    w = {"root": root, "cache": tmp_path / "cache", "env": env, "tmp": tmp_path}
    recorded(w, "check")
    (top / ".gitattributes").write_text("reg/facts/cards/a40.toml ident\n", encoding="utf-8")
    again = run(w, "check")
    assert again.returncode == 2, again.stderr.decode()
    assert again.stderr.decode().splitlines() == [
        "passprice: error: facts/cards/a40.toml: git rewrites it in a checkout (ident, a rule of ../.gitattributes), "
        "so what a review reads from git is not what check and price read in a checkout; remove the rule for "
        "passprice's files"
    ]
    (top / ".gitattributes").unlink()
    assert run(w, "check").returncode == 0


# --- a re-digested lock whose pinned derivation's inputs are not inputs ----------------------------------------------


def _redigested(root: Path, name: str, inputs: dict[str, object]) -> Path:
    """The lock ``locks/NAME.lock.toml`` of ``root`` with ``facts.array``'s derivation inputs updated by ``inputs``
    and every digest computed again, as someone editing it by hand would; its path."""
    import contextlib
    import hashlib
    import tomllib

    import tomlkit

    from passprice.errors import InputError
    from passprice.facts import Fact
    from passprice.locks import _canonical, _sorted

    path = root / "locks" / f"{name}.lock.toml"
    doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    for key, value in inputs.items():
        input_key, _, field = key.partition(".")
        table = doc["facts"]["array"]["derivation"]["inputs"]
        if field:
            table[input_key][field] = value
        else:
            table[input_key] = value
    entry = tomllib.loads(tomlkit.dumps(doc))["facts"]["array"]
    with contextlib.suppress(InputError):  # an input that is no table: the fact does not read, its digest stays
        doc["facts"]["array"]["digest"] = Fact.from_entry({k: v for k, v in entry.items() if k != "digest"},
                                                          "x").digest()
    body = _sorted(tomllib.loads(tomlkit.dumps(doc)))
    body["lock"].pop("digest")
    doc["lock"]["digest"] = "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(("inputs", "said"), [
    ({"sparse.source": 5}, "facts.array.derivation.inputs.sparse.source: 5 is not of type 'string'"),
    ({"sparse.value": "x"}, "facts.array.derivation.inputs.sparse.value: 'x' is not of type 'number'"),
    ({"sparse.fact": 3}, "facts.array.derivation.inputs.sparse.fact: 3 is not of type 'string'"),
    ({"sparse.zzz": "a"}, "facts.array.derivation.inputs.sparse: unknown key 'zzz'; "
                          "the keys here are constant, fact, locator, source, unit, value"),
    ({"ops_per_mac": 5}, "facts.array.derivation.inputs.ops_per_mac: 5 is not of type 'object'"),
])
def test_a_locks_pinned_derivation_input_is_typed_as_a_cards(tmp_path: Path, inputs: dict[str, object],
                                                             said: str) -> None:  # fmt: skip
    # Round 31: the lock schema left a pinned derivation's inputs untyped (only a text was held to one line): a lock
    # re-digested with an input's `source = 5` was reproduced (exit 0) and made `check` and `diff` end in a traceback
    # (TypeError in lineage.pinned_sources); `value = "x"`, `fact = 3` or an unknown key passed check ("all holds").
    # An input is now what a card's is (value, unit, and a fact, a locator or a constant), its texts one line.
    root = copy_root(tmp_path)
    path = _redigested(root, "gemma3-270m-h100", inputs)
    assert bad("reproduce", str(path), root=root) == [f"passprice: error: {path}: {said}"]
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"passprice: error: locks/gemma3-270m-h100.lock.toml: {said}"]


def test_a_value_of_the_wrong_type_is_one_line_not_also_valid_under_each_branch(tmp_path: Path) -> None:
    # A card's derivation input `sms = 5` said "5 is not of type 'object'" and then "5 is valid under each of
    # {'required': ['locator']}, {'required': ['constant']}, {'required': ['fact']}" (a `required` holds of a value
    # that is no table).
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    line = ("derivation.inputs.sms = { value = 132, unit = \"1\", locator = \"Table 3, H100 SXM5 column: 132 SMs "
            "(p. 18: 'The H100 SXM5 GPU has 132 SMs')\" }")
    assert line in text
    card.write_text(text.replace(line, "derivation.inputs.sms = 5", 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == ("passprice: error: facts/cards/h200_sxm_141gb.toml: on_chip.capacity.derivation.inputs.sms: 5 "
                        "is not of type 'object'")
    assert not [line for line in lines if "valid under each of" in line], lines


# --- a record name ending in .toml ---------------------------------------------------------------------------------


def test_import_refuses_a_name_ending_in_toml(tmp_path: Path) -> None:
    # Round 31: `import H --name gemma3-270m-q4_k_m.toml` wrote registry/checkpoints/gemma3-270m-q4_k_m.toml.toml
    # (exit 0), an entry a lock then refused by name ("a path relative to the working folder"): a name ending in
    # .toml is a file's path wherever a record is named.
    root = copy_root(tmp_path)
    header = REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    assert bad("import", str(header), "--name", "g.toml", root=root) == [
        "passprice: error: checkpoint name 'g.toml': ends in .toml, which names a file wherever a checkpoint is named: "
        "give the name without it ('g' writes 'g.toml')"
    ]
    assert not (root / "registry" / "checkpoints" / "g.toml.toml").exists()
    assert bad("new-serving", "s.toml", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "a40", root=root)[0] == (
        "passprice: error: serving name 's.toml': ends in .toml, which names a file wherever a serving is named: give "
        "the name without it ('s' writes 's.toml')"
    )


def test_a_record_file_named_twice_toml_is_named_by_check(tmp_path: Path) -> None:
    # A card facts/cards/a41.toml.toml (or a serving g.toml.toml) was listed and priced by `--card a41.toml`, and
    # `check` said "all holds"; a registry file naming it is read as a path relative to the working folder.
    root = copy_root(tmp_path)
    (root / "facts" / "cards" / "a41.toml.toml").write_bytes((root / "facts" / "cards" / "a40.toml").read_bytes())
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "passprice: error: facts/cards/a41.toml.toml: the name a41.toml ends in .toml, which names a file's path "
        "wherever a record is named (a serving's card or checkpoint, a lock, --card): rename the file to end in a "
        "single .toml"
    ]


# --- a rewrite rule git reads from outside the work tree's .gitattributes files ------------------------------------


@pytest.mark.parametrize("worktree", [False, True], ids=["clone", "worktree"])
def test_check_refuses_a_rewrite_rule_of_the_repositorys_info_attributes(tmp_path: Path, worktree: bool) -> None:
    # Round 31: `facts/cards/a40.toml ident` in .git/info/attributes (git's own file of local rules, which `git
    # check-attr` applies) passed `check` ("all holds"): it looked for .gitattributes files alone and, finding none,
    # never asked git. A work tree added by `git worktree add` reads the common folder's info/attributes.
    from test_diff import git

    path = _git_registry(tmp_path)
    (path / ".git" / "info").mkdir(exist_ok=True)
    (path / ".git" / "info" / "attributes").write_text("facts/cards/a40.toml ident\n", encoding="utf-8")
    if worktree:
        git(path, "worktree", "add", "-q", str(tmp_path / "other"), "main")
        path = tmp_path / "other"
        assert (path / ".git").is_file()
    result = invoke("check", root=path)
    assert result.exit_code == 2, result.output
    rules = tmp_path / "registry" / ".git" / "info" / "attributes" if worktree else ".git/info/attributes"
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/cards/a40.toml: git rewrites it in a checkout (ident, a rule of {rules}), so what a "
        "review reads from git is not what check and price read in a checkout; remove the rule for passprice's files"
    ]
    (tmp_path / "registry" / ".git" / "info" / "attributes").write_text("", encoding="utf-8")
    assert invoke("check", root=path).exit_code == 0


def test_an_option_that_overflows_a_float_is_said_to(tmp_path: Path) -> None:
    # `--position 1e400` was "'1e400' is not a finite number", a number every reader takes as finite: a double cannot
    # hold it, as a file's `share = 1e400` now says; `inf` is still not a finite number.
    assert bad("price", "gemma3-270m-h100", "--position", "1e400") == [
        "passprice: error: Invalid value for '--position': '1e400' overflows a float (at most ±1.8e308) (a finite "
        "number from 0 to 4,294,967,295) (see 'cli price --help')"
    ]
    assert bad("price", "gemma3-270m-h100", "--position", "-inf")[0].endswith(
        "'-inf' is not a finite number (a finite number from 0 to 4,294,967,295) (see 'cli price --help')")


# --- init's advice for a folder named like an option ------------------------------------------------------------------


def test_init_advises_a_folder_named_like_an_option_as_a_path(tmp_path: Path) -> None:
    # Round 31: `passprice init -- -` made the folder `-` and advised `cd - && git init && pre-commit install`: `cd -`
    # goes back to the previous folder, where the advice then made a repository. The folder is now `./-`.
    import os

    from passprice.files import shell_word

    assert shell_word("-") == "./-" and shell_word("--x y") == "'./--x y'" and shell_word("/-x") == "/-x"
    run = subprocess.run([*_MAIN, "init", "--", "-"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PASSPRICE_NO_CACHE": "1"})  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "-" / "facts").is_dir()
    assert run.stdout.splitlines()[-2] == ("next: cd ./- && git init && pre-commit install; passprice import "
                                           "MODEL.gguf --name NAME")


@pytest.mark.parametrize(("key", "typed"), [("rms_norm_eps", "1e400"), ("rope_theta", "-1E+999")])
def test_a_model_configurations_number_that_overflows_a_float_is_named_as_written(tmp_path: Path, key: str,
                                                                                  typed: str) -> None:  # fmt: skip
    # Round 31: `synth` of a config.json holding `"rms_norm_eps": 1e400` said "rms_norm_eps: must be a finite number,
    # not inf" (json reads 1e400 as an infinity), a value the file does not hold.
    import json

    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
              "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
              "rope_theta": 10000.0}  # fmt: skip
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config).replace(json.dumps(config[key]), typed), encoding="utf-8")
    assert bad("synth", str(path), "-o", str(tmp_path / "h.gguf")) == [
        f"passprice: error: {path}: {key}: {typed} overflows a float (at most ±1.8e308): give a finite number"
    ]
    assert not (tmp_path / "h.gguf").exists()


# --- a stack fact's derivation naming one measured run twice ----------------------------------------------------------


def test_a_stack_derivation_naming_a_run_twice_is_refused_by_check(tmp_path: Path) -> None:
    # Round 31: facts/stacks/llamacpp-cuda-2405.toml with one run of overhead.pass's derivation listed twice passed
    # check ("all holds"): the fit check re-runs weighed that run twice, a sample calibrate never fitted.
    root = copy_root(tmp_path)
    path = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = path.read_text(encoding="utf-8")
    line = '    {run = "xd3.h100_pcie_80gb.8b-q4km.tg512", value = 145.55},\n'
    assert line in text
    path.write_text(text.replace(line, line * 2, 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "passprice: error: facts/stacks/llamacpp-cuda-2405.toml: overhead.pass.derivation.runs.1.run: "
        "'xd3.h100_pcie_80gb.8b-q4km.tg512' is named twice (runs.0 too): a derivation names each measured run once "
        "(run passprice calibrate --stack llamacpp-cuda-2405)"
    ]


def test_a_fraction_where_a_whole_number_goes_is_one_line(tmp_path: Path) -> None:
    # Round 31: a derivation's `digits = 4.5` (or a measured run's `positions = [256.5, 512]`) printed two lines for
    # the one key: whole_floats' "… is not of type 'integer' (a whole number, written without a decimal point or
    # exponent)" and jsonschema's own "4.5 is not of type 'integer'".
    root = copy_root(tmp_path)
    path = root / "registry" / "measurements" / "llamacpp-points.toml"
    path.write_text(path.read_text(encoding="utf-8").replace("positions = [256, 512]", "positions = [256.5, 512]", 1),
                    encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "passprice: error: registry/measurements/llamacpp-points.toml: run.0.positions.0: 256.5 is not of type "
        "'integer' (a whole number, written without a decimal point or exponent)"
    ]


# --- a measured run past its checkpoint's context, in no registered stack's fit ---------------------------------------


def test_check_refuses_a_measured_run_past_its_checkpoints_context_as_validate_does(tmp_path: Path) -> None:
    # Round 31: a run of registry/measurements/llamacpp-points.toml (stack llamacpp-cuda-2312, not registered) with
    # positions = [5000000, 6000000] on a 4,096-position checkpoint: `validate` refused it (exit 2, the file and
    # key), `check` said "all holds" (exit 0): only a run in a registered stack's fit was looked at.
    root = copy_root(tmp_path)
    path = root / "registry" / "measurements" / "llamacpp-points.toml"
    text = path.read_text(encoding="utf-8")
    assert "positions = [256, 512]" in text
    path.write_text(text.replace("positions = [256, 512]", "positions = [5000000, 6000000]", 1), encoding="utf-8")
    said = ("run.0.positions: last position 6,000,000 is past the context length of checkpoint llama2-7b-q4_0, 4,096 "
            "positions (a model reads no position past its context: correct the run's positions or its checkpoint)")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"passprice: error: registry/measurements/llamacpp-points.toml: {said}"]
    result = invoke("validate", root=root)
    assert result.exit_code == 2  # the file named as check names it (leftovers 28c: it was ROOT/registry/…)
    assert result.stderr.splitlines() == [f"passprice: error: registry/measurements/llamacpp-points.toml: {said}"]


@pytest.mark.parametrize(("old", "new", "said"), [
    ('card = "h100_pcie_80gb"', 'card = "nope"', "run.0.card: card 'nope': not found in "),
    ('checkpoint = "llama2-7b-q4_0"', 'checkpoint = "nope"', "run.0.checkpoint: checkpoint 'nope': not found in "),
])
def test_check_refuses_a_measured_run_naming_nothing_as_validate_does(tmp_path: Path, old: str, new: str,
                                                                      said: str) -> None:  # fmt: skip
    # Round 31: a run naming a card or checkpoint that is not registered passed check ("all holds", exit 0) when
    # its stack was not registered; validate refused it (exit 2).
    root = copy_root(tmp_path)
    path = root / "registry" / "measurements" / "llamacpp-points.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"passprice: error: registry/measurements/llamacpp-points.toml: {said}"), line
    assert invoke("validate", root=root).exit_code == 2


def test_a_huge_whole_float_is_not_spelled_out_digit_by_digit(tmp_path: Path) -> None:
    # Round 31: a serving's `batch = 1e300` printed "(… without a decimal point or exponent: 1000000000000000052504…)",
    # the 301 digits of the double, on the error line.
    serving = tmp_path / "s.toml"
    text = (REPO / "registry" / "servings" / "gemma3-270m-h100.toml").read_text(encoding="utf-8")
    assert "\nbatch = 1\n" in text
    serving.write_text(text.replace("\nbatch = 1\n", "\nbatch = 1e300\n", 1), encoding="utf-8")
    # One value, one line (issue 13's leftovers): the bound it breaks, saying how a whole number is written.
    assert bad("price", str(serving)) == [
        f"passprice: error: {serving}: batch: 1e300 is greater than the maximum of 4294967295 (a whole number, "
        "written without a decimal point or exponent)",
    ]


def test_a_require_path_that_prints_like_a_fact_path_is_spelled(tmp_path: Path) -> None:
    # Round 31: `lock … --require аrray=measured` (a Cyrillic а) said "'аrray' is not a fact path", which reads as a
    # refusal of `array` itself.
    root = copy_root(tmp_path)
    assert bad("lock", "gemma3-270m-h100", "--name", "t", "-o", str(tmp_path / "t.lock.toml"), "--require",
               "\u0430rray=measured", root=root) == [
        "passprice: error: Invalid value for --require: '\u0430rray' (spelled '\\u0430rray': it prints like another "
        "name) is not a fact path (memory.bandwidth, streams.rewrite, array, host.read, draft.acceptance.1, "
        "routing.hot_share, routing.* for both routing facts …) (see "
        "'cli lock --help')"
    ]
    assert not (tmp_path / "t.lock.toml").exists()
