"""left57: three hostile-input leftovers -- a corrupt .gz named by its byte offset, ``init`` that fails midway,
``modelhistory``'s git call guarded."""

from __future__ import annotations

import gzip
from pathlib import Path

from cli_helpers import bad, invoke
from test_left52 import _tiny_header


def test_a_corrupt_or_cut_gzip_member_is_named_by_its_offset(tmp_path: Path) -> None:
    # Before (gzip.GzipFile): a corrupt deflate block read "cannot decompress: Error -3 while decompressing data:
    # invalid block type", a bad method byte "cannot read: Unknown compression method": no byte offset, no word of
    # which member; reserved flag bits set were read as if clear. Now the member's first byte, as a corrupt .xz reads.
    data = _tiny_header(tmp_path / "h.gguf")
    first, second = gzip.compress(data[:100], mtime=0), bytearray(gzip.compress(data[100:], mtime=0))
    whole = tmp_path / "ok.gguf.gz"
    whole.write_bytes(first + bytes(second) + b"\0" * 3)
    assert invoke("header", str(whole)).exit_code == 0
    second[2] = 7  # the compression method: only 8 (deflate) is defined
    corrupt = tmp_path / "c.gguf.gz"
    corrupt.write_bytes(first + bytes(second))
    assert bad("header", str(corrupt)) == [
        f"passprice: error: {corrupt}: cannot decompress: byte {len(first):,}: the gzip member starting there: "
        f"Error -3 while decompressing data: unknown compression method (found within its first {len(second):,} "
        "bytes)"]
    # the task's own case: "Error -3 …" from the deflate data, found in the second member
    second[2] = 8
    second[10] = 0xFF  # the first deflate block's type: 3, reserved
    corrupt.write_bytes(first + bytes(second))
    assert bad("header", str(corrupt)) == [
        f"passprice: error: {corrupt}: cannot decompress: byte {len(first):,}: the gzip member starting there: "
        f"Error -3 while decompressing data: invalid block type (found within its first {len(second):,} bytes)"]
    header = bytearray(first)
    header[3] = 0xE0  # reserved flag bits set
    lone = tmp_path / "h.gguf.gz"
    lone.write_bytes(bytes(header))
    assert bad("header", str(lone)) == [
        f"passprice: error: {lone}: cannot decompress: byte 0: the gzip member starting there: Error -3 while "
        f"decompressing data: unknown header flags set (found within its first {len(first):,} bytes)"]
    cut = tmp_path / "cut.gguf.gz"
    cut.write_bytes(first + gzip.compress(data[100:], mtime=0)[:-5])
    assert bad("header", str(cut)) == [
        f"passprice: error: {cut}: cannot decompress: byte {len(first) + len(second) - 5:,}: the file ends inside "
        f"the gzip member starting at byte {len(first):,} (its end never came)"]
    junk = tmp_path / "junk.gguf.gz"
    junk.write_bytes(first + bytes(gzip.compress(data[100:], mtime=0)) + b"\0\0xyz")
    assert bad("header", str(junk)) == [
        f"passprice: error: {junk}: cannot decompress: byte {len(first) + len(second) + 2:,}: neither zero padding "
        "nor another gzip member"]
