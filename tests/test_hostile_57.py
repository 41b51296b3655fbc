"""Attack round 57 (issue 13, hostile input): each input that escaped, built here and kept as a test.

1. ``sweep --json --plot P`` where ``P``'s folder passes ``os.access`` but takes no file (root in ``/sys``): the
   whole array, closing ``]`` and all, was printed before the picture failed with exit 2 (a reader of stdout saw a
   valid document). Now the folder is probed before the first row (``files.check_writable``), and a picture that fails
   late (a full disk) ends the streamed array with the error document.
2. Output to a closed pipe or a closed stdout, and a signal during a sweep to a file: one line (or none, for a reader
   gone), the documented status, no traceback, nothing left under the final name.
3. Registry files nested 10^5 deep, of each kind: one error line, no ``RecursionError``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hostile import H200, R1, prepare
from passprice.cli import cli
from passprice.errors import InputError

_CHILD = "import sys; from passprice.cli import main; sys.argv[0] = 'passprice'; main()"


# --- 1. Outputs are checked before the first row; the closing `]` waits for the picture ----------------------------


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs a /sys that takes no new file")
def test_sweep_json_with_a_plot_into_sys_prints_only_the_error_document() -> None:
    result = CliRunner().invoke(cli, ["sweep", R1, "--batches", "1,2", "--json", "--plot", "/sys/attack57.png"])
    assert result.exit_code == 2, result.output
    # Root passes os.access in /sys and the kernel refuses the file (Permission denied); a user is refused by
    # os.access ("is not writable"). Either way before the first row: stdout is the error document alone.
    document = json.loads(result.stdout)
    [line] = document["error"]["problems"]
    assert line.startswith("/sys/attack57.png: cannot write: "), line
    assert result.stderr == f"passprice: error: {line}\n"


def test_a_folder_that_takes_no_file_is_refused_before_any_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """The probe itself, on any machine: the kernel refusing the temporary file (EACCES) where ``os.access`` said
    yes."""
    import passprice.files

    def refused(folder: Path, prefix: str) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(passprice.files, "_temporary", refused)
    plot = tmp_path / "x.svg"
    result = CliRunner().invoke(cli, ["sweep", R1, "--batches", "1,2", "--json", "--plot", str(plot)])
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout) == {
        "error": {"status": 2, "problems": [f"{plot}: cannot write: Permission denied"]}}
    out = tmp_path / "rows.csv"
    result = CliRunner().invoke(cli, ["sweep", R1, "--batches", "1,2", "-o", str(out)])
    assert result.exit_code == 2 and result.stderr == f"passprice: error: {out}: cannot write: Permission denied\n"
    assert list(tmp_path.iterdir()) == []


def test_the_probe_leaves_no_file_behind(tmp_path: Path) -> None:
    from passprice.files import check_writable

    check_writable(tmp_path / "x.csv")
    assert list(tmp_path.iterdir()) == []


def test_a_picture_failing_after_the_rows_ends_the_array_with_the_error(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk met writing the picture, after every row: before, the array was closed and the error came after
    it (stdout a valid array of rows, exit 2); now the `]` waits for the picture, and the array ends with the
    error document as its last element."""
    import passprice.plots

    plot = tmp_path / "x.svg"

    def full(path: Path, data: bytes, force: bool = False) -> None:
        raise InputError(f"{path}: cannot write: No space left on device")

    monkeypatch.setattr(passprice.plots, "write_picture", full)
    result = CliRunner().invoke(cli, ["sweep", R1, "--batches", "1,2", "--json", "--plot", str(plot)])
    assert result.exit_code == 2, result.output
    rows = json.loads(result.stdout)
    assert [row["batch"] for row in rows[:-1]] == [1, 2]
    assert rows[-1] == {"error": {"status": 2, "problems": [f"{plot}: cannot write: No space left on device"]}}
    assert not plot.exists()


def test_a_sweep_with_a_plot_still_writes_every_row_and_the_picture(tmp_path: Path) -> None:
    plot = tmp_path / "x.svg"
    result = CliRunner().invoke(cli, ["sweep", R1, "--batches", "1,2", "--json", "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert [row["batch"] for row in json.loads(result.stdout)] == [1, 2]
    assert plot.read_bytes().startswith(b"<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.svg"]


# --- 2. A closed or gone standard output; signals during a sweep to a file ------------------------------------------


@pytest.mark.parametrize("args", [["sweep", R1, "--batches", "1-4096"], ["sweep", R1, "--batches", "1-64", "--json"],
                                  ["sweep", R1, "--batches", "1-4096", "--jobs", "2"],
                                  ["cards"], ["cards", "--json"], ["sources"], ["sources", "--json"],
                                  ["price", R1, "--json"]])
def test_a_reader_gone_before_the_output_is_a_quiet_exit_0(args: list[str]) -> None:
    """``passprice sweep … | head -c 10``: the reader left (its end of the pipe closed), so the write meets EPIPE;
    nothing on stderr (no BrokenPipeError traceback, no "Exception ignored" at the interpreter's exit), exit 0 as
    README's exit statuses say. The read end is closed before the child starts, so no timing is involved."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, *args], stdout=write, stderr=subprocess.PIPE,
                              timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")


def test_price_json_to_a_closed_standard_output_is_one_line_exit_2() -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD, "price", R1, "--json"], stdout=None, stderr=subprocess.PIPE,
                          text=True, timeout=60, preexec_fn=lambda: os.close(1))
    assert (done.returncode, done.stderr) == (2, "passprice: error: standard output is closed; nothing to print to\n")


@pytest.mark.parametrize(("name", "status", "line"), [("SIGINT", 130, "passprice: interrupted"),
                                                      ("SIGTERM", 143, "passprice: terminated"),
                                                      ("SIGHUP", 129, "passprice: terminated")])
def test_a_signal_during_a_sweep_to_a_file_leaves_nothing(tmp_path: Path, name: str, status: int, line: str) -> None:
    """The child signals itself after the first block of rows is written to the temporary file (no timing): one
    line, the shell's status for the signal, and nothing in the output's folder (neither ``grid.csv`` nor its
    temporary file)."""
    code = (
        "import os, signal, passprice.sweep as s\n"
        # Python's own handler, as an interactive shell starts it: a test run as a background job inherits SIGINT
        # ignored, which passprice leaves ignored (the sweep then finishes, exit 0).
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "def chunks(*a, **k):\n"
        "    yield 'serving,card,batch\\n'\n"
        f"    os.kill(os.getpid(), signal.{name})\n"
        "    yield 'never\\n'\n"
        "s.text_chunks = chunks\n" + _CHILD.replace("; ", "\n")
    )
    out = tmp_path / "out" / "grid.csv"
    out.parent.mkdir()
    done = subprocess.run([sys.executable, "-c", code, "sweep", R1, "--batches", "1-8", "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (status, f"{line}\n"), done.stderr
    assert list(out.parent.iterdir()) == []
    assert getattr(signal, name)  # the signal exists here (the test is skipped nowhere it runs)


# --- 3. Registry files nested 10^5 deep, each kind ------------------------------------------------------------------

_KINDS = {
    "card": (f"facts/cards/{H200}.toml", ["cards"]),
    "draft": ("facts/drafts/qwen35-mtp.toml", ["price", "qwen35-27b-h200-mtp"]),
    "serving": (f"registry/servings/{R1}.toml", ["price", R1]),
    "checkpoint": ("registry/checkpoints/gemma3-270m-q4_k_m.toml", ["price", "gemma3-270m-h100"]),
    "source": ("sources/amd-rocm-gpu-specs.toml", ["sources"]),
    "lock": (f"locks/{R1}.lock.toml", ["reproduce", R1]),
    "stack": ("facts/stacks/llamacpp-cuda-2405.toml", ["price", R1, "--stack", "llamacpp-cuda-2405"]),
}


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_a_registry_file_nested_100000_deep_is_one_error_line(tmp_path: Path, kind: str) -> None:
    """``x = [[[…]]]`` 10^5 levels (200 KB, under every kind's 256 KiB cap, so it is parsed): ``tomllib`` recurses
    and raises RecursionError, which reads as one line naming the file (measured: 0.2-1.0 s, 23-31 MiB a command;
    benchmarks/hostile.py part d)."""
    root = prepare(tmp_path)
    rel, args = _KINDS[kind]
    (root / rel).write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    [said] = result.stderr.splitlines()
    assert said.startswith("passprice: error: ") and said.endswith(
        f"{rel}: not valid TOML: arrays or tables nested too deeply"), said


# --- 3. A checkpoint entry is as small as the header's kept text allows, escapes counted ----------------------------


@pytest.mark.parametrize("text", ["", "plain", "x\x01\n\t\"\\\x7f\u0085\u2028\ufffd", "é" * 3, "\x00" * 10,
                                  "{% for m in messages %}\r\n\b\f{{ m['content'] }}"])
def test_written_bytes_is_what_the_entry_writes(text: str) -> None:
    import tomlkit

    from passprice.gguf_header import written_bytes

    document = tomlkit.document()
    document["a"] = text
    assert written_bytes(text) == len(tomlkit.dumps(document).encode("utf-8")) - len('a = ""\n')


def _arch_meta() -> list:  # type: ignore[type-arg]
    from gguf import GGUFValueType as V

    from gguf_bytes import Meta

    return [Meta("general.architecture", V.STRING, "llama"), Meta("llama.block_count", V.UINT32, 1),
            Meta("llama.embedding_length", V.UINT32, 8), Meta("llama.context_length", V.UINT32, 4096)]


def test_control_characters_are_charged_as_the_entry_writes_them(tmp_path: Path) -> None:
    """17 strings of 65,000 ``\\x01`` (1.1 MB of header, 552 bytes as .xz) were kept whole, within the 1 MiB of
    text kept, and written ``\\u0001`` each: a 6.2 MB entry, ``import`` 8.6 s and ``checkpoints`` 7.3 s (load 8).
    Charged six bytes each, two strings fit (130,000 × 6 = 780,000 bytes of the 1,048,576) and the rest are kept as
    their length: a 782 KB entry (2.2 s under the same load)."""
    import tomllib

    from gguf import GGUFValueType as V

    from gguf_bytes import Meta, Tensor, encode

    root = prepare(tmp_path)
    header = tmp_path / "ctl.gguf"
    header.write_bytes(encode([*_arch_meta(), *(Meta(f"s{i:02d}", V.STRING, "\x01" * 65_000) for i in range(17))],
                              [Tensor("token_embd.weight", (8, 16), 0), Tensor("blk.0.attn_norm.weight", (8,), 0)]))
    result = CliRunner().invoke(cli, ["--root", str(root), "import", str(header), "--name", "ctl"])
    assert result.exit_code == 0, result.output
    entry = root / "registry" / "checkpoints" / "ctl.toml"
    metadata = tomllib.loads(entry.read_text(encoding="utf-8"))["metadata"]
    kept = sorted(k for k, v in metadata.items() if k.startswith("s") and "value" in v)
    assert kept == ["s00", "s01"]
    assert [metadata[f"s{i:02d}"]["length"] for i in range(2, 17)] == [65_000] * 15
    assert 780_000 < entry.stat().st_size < 800_000


def test_names_of_control_characters_past_the_kept_text_are_one_error_line(tmp_path: Path) -> None:
    """17 tensor names of 60,000 ``\\x01`` each (1.02 MB of names): written ``\\u0001`` each, a 6.1 MB entry; now
    past the kept text as the entry writes it, refused naming the tensor."""
    from gguf_bytes import Tensor, encode

    root = prepare(tmp_path)
    header = tmp_path / "names.gguf"
    header.write_bytes(encode(_arch_meta(), [Tensor("token_embd.weight", (8, 16), 0),
                                             *(Tensor(f"blk.0.{chr(1) * 60_000}{i}.weight", (8,), 0)
                                               for i in range(17))]))
    result = CliRunner().invoke(cli, ["--root", str(root), "import", str(header), "--name", "names"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "tensor 3 name: keys and names past the 1,048,576 bytes of text passprice keeps" in line, line
    assert "as a checkpoint entry writes them" in line
    assert not (root / "registry" / "checkpoints" / "names.toml").exists()


def test_a_checkpoint_entry_past_8_mib_is_refused_unparsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand-made entry of one 50 MB string (under the 64 MiB then allowed) took ``checkpoints`` 14 s and ``check``
    23 s and 470 MiB to parse (load 5-8). No entry ``import`` writes under the header reader's default cap comes
    near 8 MiB, so a larger one is refused by its size before it is parsed (9 MiB here)."""
    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    root = prepare(tmp_path)
    entry = root / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"
    entry.write_text('x = "' + "a" * (9 << 20) + '"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--root", str(root), "checkpoints"])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "passprice: error: registry/checkpoints/gemma3-270m-q4_k_m.toml: larger than 8 MiB, the most a checkpoint "
        "file may hold (9,437,191 bytes; with PASSPRICE_MAX_HEADER_BYTES set past 32 MiB, 64 MiB)\n")


def test_import_refuses_an_entry_that_would_not_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.checkpoints import write_entry

    monkeypatch.delenv("PASSPRICE_MAX_HEADER_BYTES", raising=False)
    path = tmp_path / "registry" / "checkpoints" / "big.toml"
    with pytest.raises(InputError, match=r"the entry would hold 8,388,609 bytes, past the 8,388,608 a checkpoint "
                                         r"entry may hold \(it would not read back\): nothing written"):
        write_entry(path, "a" * ((8 << 20) + 1))
    assert not path.exists()


def test_diff_of_a_schema_file_nested_100000_deep_is_one_error_line(tmp_path: Path) -> None:
    """A pull request adding ``schema/x.schema.json`` of ``[[[…]]]`` 10^5 deep: ``diff`` read it with ``json.loads``
    and printed a RecursionError traceback, exit 1 (the refusal status)."""
    import shutil

    from hostile import REPO

    sides = []
    for side in ("base", "head"):
        root = prepare(tmp_path / side)
        shutil.copytree(REPO / "schema", root / "schema")
        sides.append(root)
    (sides[1] / "schema" / "x.schema.json").write_text("[" * 100_000 + "]" * 100_000)
    result = CliRunner().invoke(cli, ["diff", str(sides[0]), str(sides[1])])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.stderr.splitlines()[-1] == (
        "passprice: error: schema/x.schema.json does not read on HEAD: not valid JSON: nested too deeply")
