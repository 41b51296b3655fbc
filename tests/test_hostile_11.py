"""Attack round 11 (issue 13) on the main of round 10's fixes: each test builds the input that broke it and asserts
what passprice now does with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke

_MAIN = [sys.executable, "-c", "from passprice.cli import main; main()"]

# --- -o - and -o /dev/stdout ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["-", "/dev/stdout"])
def test_sweep_output_dash_or_dev_stdout_is_standard_output(tmp_path: Path, name: str) -> None:
    """``sweep -o -`` wrote a file named ``-`` in the working folder, and ``-o /dev/stdout`` with stdout a pipe said
    "cannot write: No such file or directory" (the link names ``pipe:[…]``). Both now mean standard output: the
    rows come on the pipe, and no file is written."""
    run = subprocess.run([*_MAIN, "--root", str(REPO), "sweep", "r1-qwen7b-h200", "--batches", "1,2", "-o", name],
                         cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("card,serving,checkpoint,") and len(lines) == 3
    assert [row.split(",")[6] for row in lines[1:]] == ["1", "2"]  # the batch column
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("args", "option"), [
    (("lock", "r1-qwen7b-h200", "-o", "-"), "'-o' / '--output'"),
    (("lock", "r1-qwen7b-h200", "-o", "/dev/stdout"), "'-o' / '--output'"),
    (("sweep", "r1-qwen7b-h200", "--batches", "1", "--plot", "-"), "'--plot'"),
])  # fmt: skip
def test_a_file_only_output_refuses_standard_output_by_name(tmp_path: Path, args: tuple[str, ...],
                                                           option: str) -> None:  # fmt: skip
    """A lock, a header or a picture is a file: ``-`` or ``/dev/stdout`` is refused in one line, not written as a
    file named ``-``."""
    root = copy_root(tmp_path)
    bad(*args, root=root, says=f"Invalid value for {option}: '{args[-1]}' would be standard output; this option "
        "writes a file: give its name")  # fmt: skip
    assert not (Path.cwd() / "-").exists()


def test_output_to_dev_stderr_on_a_pipe_is_judged_as_the_pipe(tmp_path: Path) -> None:
    """``-o /dev/stderr`` with stderr a pipe said "No such file or directory" (the folder ``/proc/…/fd`` of the
    link's end ``pipe:[…]``): it is now what it opens, a FIFO, refused by name."""
    run = subprocess.run([*_MAIN, "--root", str(REPO), "sweep", "r1-qwen7b-h200", "--batches", "1", "-o",
                          "/dev/stderr"], cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == ("passprice: error: /dev/stderr: is a FIFO (named pipe), not a regular file: passprice "
                          "replaces regular files only\n")  # fmt: skip


# --- kv_bytes and state_bytes: at least one bit an element ----------------------------------------------------------


@pytest.mark.parametrize("key", ["kv_bytes", "state_bytes"])
def test_a_serving_file_with_a_subnormal_element_size_is_refused(tmp_path: Path, key: str) -> None:
    """``kv_bytes = 1e-320`` (a denormal) was accepted and priced (a cache of 5.9e-304 nB a sequence): the schema
    now bounds an element at one bit (0.125 B), and ``--kv-bytes`` reads the same bound."""
    root = copy_root(tmp_path)
    serving = root / "registry" / "servings" / "r1-qwen7b-h200.toml"
    text = serving.read_text(encoding="utf-8")
    assert "\nkv_bytes = " in text
    odd = tmp_path / "odd.toml"
    odd.write_text(text.replace("\nkv_bytes = ", f"\n{key} = 1e-320\n#", 1) if key == "kv_bytes" else
                   text.replace("\nkv_bytes = ", f"\n{key} = 1e-320\nkv_bytes = ", 1), encoding="utf-8")  # fmt: skip
    bad("price", str(odd), root=root, says=f"odd.toml: {key}: 1e-320 is less than the minimum of 0.125")
    option = "--" + key.replace("_", "-")
    bad("price", "r1-qwen7b-h200", option, "0.1", root=root,
        says=f"Invalid value for '{option}': 0.1 is out of range (a finite number from 0.125 to 8)")  # fmt: skip


def test_kv_bytes_of_a_4_bit_cache_still_prices(tmp_path: Path) -> None:
    """The bound keeps every real cache type: llama.cpp's q4_0 cache is 18 bytes a 32-element block, 0.5625 B."""
    result = invoke("kv", "deepseek-r1-distill-qwen-7b-q4_k_m", "--kv-bytes", "0.5625", "--json")
    assert result.exit_code == 0, result.output


# --- init onto a dangling symbolic link -----------------------------------------------------------------------------


@pytest.mark.parametrize("below", ["", "/sub"])
def test_init_onto_a_dangling_link_names_the_link_and_its_target(tmp_path: Path, below: str) -> None:
    """``init LINK`` where LINK points at nothing said only "LINK: cannot write: File exists" (mkdir of the link's
    name): one line now says what is there and what to do, and nothing is created."""
    link = tmp_path / "reg"
    link.symlink_to(tmp_path / "nowhere")
    dest = f"{link}{below}"
    bad("init", dest, says=f"{dest}: cannot write: {link} is a symbolic link to {tmp_path / 'nowhere'}, which does "
        "not exist; init creates no folder through a link: create that folder first, or give another name")  # fmt: skip
    assert sorted(os.listdir(tmp_path)) == ["reg"]

