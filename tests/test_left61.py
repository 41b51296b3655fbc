"""left61: attack80's leftovers (issue 13), each reproducer built in its test.

- (2) a tag character (U+E0000–U+E007F) in a one-line text passed: the schemas' pattern (ECMA-262 without the ``u``
  flag) cannot hold a range past U+FFFF; now the ``one-line`` format the schemas state beside it refuses it.
- (3) two ``lock`` runs writing two locks of one name at one moment both passed ``require_unique_name``.
- (4) a gzip file wrapping an xz file was told "bad magic of an xz file (name it .gguf.xz)".
"""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

from cli_helpers import bad

# --- (4) a file compressed twice ------------------------------------------------------------------------------------


def test_4_a_file_compressed_twice_is_named_so(tmp_path: Path) -> None:
    # before: "b.gguf.gz: byte 0: bad magic of an xz file (name it .gguf.xz): a GGUF file starts with b'GGUF'", for
    # a file whose name already was .gguf.xz's plus a gzip layer: the advice named nothing the user could do
    gguf = b"GGUF" + b"\x03\x00\x00\x00" + bytes(16)
    cases = {
        "b.gguf.gz": (gzip.compress(lzma.compress(gguf)), "an xz stream inside a gzip member", "gunzip", ".gguf.xz"),
        "c.gguf.xz": (lzma.compress(lzma.compress(gguf)), "an xz stream inside an xz stream", "unxz", ".gguf.xz"),
        "d.gguf.gz": (gzip.compress(gzip.compress(gguf)), "a gzip member inside a gzip member", "gunzip", ".gguf.gz"),
        "f.gguf.xz": (lzma.compress(gzip.compress(gguf)), "a gzip member inside an xz stream", "unxz", ".gguf.gz"),
    }
    for name, (data, what, tool, suffix) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert bad("header", str(path)) == [
            f"passprice: error: {path}: byte 0: bad magic: {what}, a file compressed twice (passprice takes off one "
            f"layer): take off the outer one ({tool}) and give the file it holds, named {suffix}"]
    # a plain file holding xz's or gzip's bytes is read through them, as before; a zip inside a gzip is named as ever
    path = tmp_path / "z.gguf.gz"
    path.write_bytes(gzip.compress(b"PK\x03\x04" + bytes(20)))
    assert bad("header", str(path)) == [
        f"passprice: error: {path}: byte 0: bad magic of a zip file: a GGUF file starts with b'GGUF'"]
