"""A checkpoint is priced from its header alone: the reader streams the bytes from the file's start to the end of the
tensor-info table, checks every count against what the file can hold before acting on it, and never touches the
weights.

The GGUF layout (v2 and v3, either byte order) is ``magic "GGUF"``, ``version u32``, ``tensor count u64``,
``metadata count u64``, the metadata (``key string``, ``type u32``, value), then one tensor info per tensor
(``name string``, ``n_dims u32``, ``dims u64 × n_dims``, ``type u32``, ``offset u64``). The header ends there; the
tensor data starts at the header's length rounded up to ``general.alignment`` (default 32). A big-endian file writes
the magic as little-endian and every other number big-endian, so its version reads byte-swapped.

The reader is passprice's own (DESIGN.md, Checkpoints: the GGUF header): ``gguf.GGUFReader`` maps the whole file,
cannot open a header-only file, and builds a Python object per tokenizer entry. The ``gguf`` package still supplies
the value-type table (``GGUFValueType``) and the tensor-type table, through the copy :mod:`passprice.ggml_types`
generated from it (so reading a header imports neither ``gguf`` nor NumPy).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import struct
from collections import OrderedDict
from math import prod
from pathlib import Path
from typing import IO, Any, TypeAlias, cast

import attrs

from passprice import ggml
from passprice.errors import InputError
from passprice.files import is_folder, is_there, open_regular, shown
from passprice.ggml_types import VALUE_TYPES

# The records, re-exported: ``from passprice.gguf_header import GGUFHeader`` names the same class.
from passprice.gguf_records import KEEP_ARRAY_LIMIT as KEEP_ARRAY_LIMIT
from passprice.gguf_records import VALUE_TYPE_NAMES as VALUE_TYPE_NAMES
from passprice.gguf_records import GGUFHeader as GGUFHeader
from passprice.gguf_records import LongArray as LongArray
from passprice.gguf_records import LongString as LongString
from passprice.gguf_records import MetaValue as MetaValue
from passprice.gguf_records import Shard as Shard
from passprice.gguf_records import TensorInfo as TensorInfo
from passprice.gguf_records import nonfinite_text as nonfinite_text

#: The GGUF versions the reader reads.
VERSIONS = (2, 3)
#: Arrays nested deeper than this are refused (GGUF writers nest at most one level).
MAX_ARRAY_DEPTH = 8
#: A tensor has at most this many dimensions (``GGML_MAX_DIMS``).
MAX_DIMS = 4
#: ``general.alignment`` when the header does not set it.
DEFAULT_ALIGNMENT = 32
#: Bytes read from the file at a time.
CHUNK = 1 << 20
#: The most header bytes passprice reads (decompressed, for an ``.xz``/``.gz`` file) unless the environment variable
#: :data:`CAP_VARIABLE` says otherwise: 32 MiB, five times the largest real header it ships (gemma3's 262,144-token
#: vocabulary, 6.5 MB). A compressed file has no size to check counts against, and 195 KB of xz can declare a
#: 1.25 GiB string: every count and length is checked against this cap instead, and no read goes past it, so no
#: header, however small its file, makes the reader allocate or loop past what the cap allows.
MAX_HEADER_BYTES = 32 << 20
#: The environment variable that raises (or lowers) :data:`MAX_HEADER_BYTES`: a number of bytes.
CAP_VARIABLE = "PASSPRICE_MAX_HEADER_BYTES"
#: The cap on a header's bytes also caps the work a header of tiny entries could make (each is a Python object or a
#: loop step, whatever its size in bytes), each as the cap divided by a figure here; under the default cap:
#: 2,048 tensors (the largest real tables hold about 1,200: Llama 3.1 405B 1,138), 512 metadata keys (real headers
#: hold under a hundred), 524,288 strings and inner arrays walked one by one (gemma3's vocabulary is 262,144,
#: Llama 3's 128,256 tokens and 280,147 merges), 16,384 arrays of arrays inside arrays read one by one (GGUF writers
#: nest one level: real headers hold none), 4,096 array elements kept in all (per-layer arrays hold a few hundred;
#: an empty inner array counts as one) and 1 MiB of string values kept in all (a longer array is kept as its type and
#: length, a longer string as its length), so a checkpoint entry stays small enough to write, validate and read back
#: in about a second. Each of these takes a few microseconds (an array of arrays read one by one about 6 µs: 260,000
#: of them, 1 KB of .xz, took 1.6 s of CPU; 522,000 empty inner arrays kept, 2.0 s; session 24), so no header
#: reaches a second of CPU within them.
BYTES_PER_TENSOR = 16384
BYTES_PER_KEY = 65536
BYTES_PER_WALKED = 64
BYTES_PER_NESTED = 2048
BYTES_PER_KEPT = 8192
BYTES_PER_KEPT_TEXT = 32
#: The characters a checkpoint entry (tomlkit) writes as a six-byte ``\\uXXXX`` escape: the ASCII controls but the
#: five with a two-byte escape, and DEL.
_SIX_BYTE_ESCAPES = tuple(chr(c) for c in (*range(0x20), 0x7F) if chr(c) not in "\b\t\n\f\r")
#: The characters it writes as a two-byte escape (``\\n``, ``\\"`` …).
_TWO_BYTE_ESCAPES = ("\b", "\t", "\n", "\f", "\r", '"', "\\")


def written_bytes(text: str) -> int:
    """The bytes ``text`` takes as a TOML basic string in a checkpoint entry, quotes aside: its UTF-8 bytes, 5 more
    for each ASCII control written ``\\uXXXX`` and 1 more for each written as a two-byte escape. The budget of kept
    text is charged this, not the header's bytes: a 552-byte ``.xz`` of 17 strings of 65,000 ``\\x01`` (1.1 MB of
    header text, under the 1 MiB of text kept then) made ``import`` write a 6.2 MB entry (8.6 s) that ``checkpoints``
    then parsed for 7.3 s (attack round 57, load 8 on 2 cores). Linear, in C: a printable text costs one pass."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if text.isprintable() and '"' not in text and "\\" not in text:
        return size
    return (size + 5 * sum(text.count(c) for c in _SIX_BYTE_ESCAPES)
            + sum(text.count(c) for c in _TWO_BYTE_ESCAPES))


#: A string value longer than this (bytes) is kept as its length (:class:`LongString`): an embedded
#: ``tokenizer.huggingface.json``, never a figure the pricer reads.
KEEP_STRING_LIMIT = 1 << 16

_MAGIC = b"GGUF"
_INT64_MAX = (1 << 63) - 1
_XZ_MAGIC = b"\xfd7zXZ\x00"
_GZ_MAGIC = b"\x1f\x8b"


@functools.cache
def shard_name() -> re.Pattern[str]:
    """The name of one shard of a split checkpoint (groups ``stem``, ``no``, ``count``, ``suffix``): compiled when a
    split file is read, not when the module is imported (a price that reads no GGUF file never needs it)."""
    return re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})(?P<suffix>\.gguf(?:\.xz|\.gz)?)$")


_SUFFIXES = (".gguf", ".gguf.xz", ".gguf.gz")

#: The split keys and the one type each is written with (llama.cpp's gguf-split and gguf-py's writer alike: at
#: c392e5094d, examples/gguf-split/gguf-split.cpp lines 234-236 ``gguf_set_val_u16``/``_u16``/``_i32``, and
#: gguf-py/gguf/gguf_writer.py lines 204-206 ``UINT16``/``UINT16``/``INT32``; tests/test_cite69.py).
_SPLIT_TYPES = (("split.no", "uint16"), ("split.count", "uint16"), ("split.tensors.count", "int32"))

# struct format of each fixed-size value type (a GGUF bool is one byte, 0 or 1), by GGUFValueType name.
_FORMAT_BY_NAME = {
    "UINT8": "B",
    "INT8": "b",
    "UINT16": "H",
    "INT16": "h",
    "UINT32": "I",
    "INT32": "i",
    "FLOAT32": "f",
    "BOOL": "?",
    "UINT64": "Q",
    "INT64": "q",
    "FLOAT64": "d",
}
_TYPE_ID = {name: type_id for type_id, name in VALUE_TYPES.items()}
_FORMAT: dict[int, str] = {_TYPE_ID[name]: fmt for name, fmt in _FORMAT_BY_NAME.items()}
_SIZE: dict[int, int] = {t: struct.calcsize("<" + f) for t, f in _FORMAT.items()}
_STRING = _TYPE_ID["STRING"]
_ARRAY = _TYPE_ID["ARRAY"]
# Fewest bytes one element of an array of each type takes: a string is at least its 8-byte length, an array its
# 4-byte type and 8-byte length.
_MIN_SIZE: dict[int, int] = {**_SIZE, _STRING: 8, _ARRAY: 12}


class HeaderError(InputError):
    """A GGUF header passprice cannot read: ``str(error)`` is one line naming the file, the byte offset and what was
    wrong (``model.gguf: byte 8: tensor count 9223372036854775808 needs at least … bytes; the file has 40 left``).

    ``source`` is the file, ``offset`` the byte offset in the (decompressed) header, ``problem`` what was wrong.
    """

    def __init__(self, source: str, offset: int, problem: str, *, message: str | None = None) -> None:
        self.source = source
        self.offset = offset
        self.problem = problem
        super().__init__(message if message is not None else f"{shown(source)}: byte {offset}: {problem}")

    @classmethod
    def ends(cls, source: str, offset: int, what: str) -> HeaderError:
        """The error for a header cut short: ``FILE: header ends at byte N while reading WHAT``."""
        problem = f"header ends at byte {offset} while reading {what}"
        return cls(source, offset, problem, message=f"{shown(source)}: {problem}")


# --- the byte stream ------------------------------------------------------------------------------------------------


def header_cap() -> int:
    """The most header bytes the reader reads: :data:`CAP_VARIABLE` from the environment when set, else
    :data:`MAX_HEADER_BYTES`; set but empty (``PASSPRICE_MAX_HEADER_BYTES=``) is unset, as POSIX tools read an
    empty variable. Raises :class:`InputError` when the variable is not a whole number (ASCII digits), or is one out
    of range (24 … 2^63 − 1 bytes), saying which."""
    text = os.environ.get(CAP_VARIABLE)
    if not text:
        return MAX_HEADER_BYTES
    if not re.fullmatch(r"[0-9]+", text.strip(), flags=re.ASCII):
        raise InputError(f"{CAP_VARIABLE}: {text[:40]!r} is not a number of bytes (a whole number, at least 24)")
    digits = text.strip().lstrip("0") or "0"
    if len(digits) > 19 or not 24 <= int(digits) <= _INT64_MAX:
        shown_value = digits if len(digits) <= 40 else f"a number of {len(digits):,} digits"
        raise InputError(
            f"{CAP_VARIABLE}: {shown_value} bytes is out of range: give a number of bytes from 24 to {_INT64_MAX:,}"
        )
    return int(digits)


#: The largest ``general.alignment``: GGUF stores it as a uint32, and it is a power of two.
MAX_ALIGNMENT = 1 << 31


def alignment_problem(alignment: object) -> str | None:
    """What is wrong with a ``general.alignment`` (as a header or a checkpoint entry states it): not a power of two
    from 1 to :data:`MAX_ALIGNMENT` (GGUF: a uint32 power of two; llama.cpp's gguf.cpp refuses any other);
    ``None`` when it is one. The one check the binary reader and :func:`passprice.checkpoints.header_from_entry`
    both make."""
    a = alignment
    if isinstance(a, bool) or not isinstance(a, int) or a <= 0 or a & (a - 1) or a > MAX_ALIGNMENT:
        return f"{a!r} is not a power of two from 1 to {MAX_ALIGNMENT:,} (a uint32)"
    return None


def dims_problem(dims: tuple[int, ...], type_id: int | None = None) -> str | None:
    """What is wrong with a tensor's ``dims`` (of GGML type ``type_id``, when given and known): a dimension below
    0 or past int64, elements (their product) or bytes past int64 (ggml counts elements in an int64 and bytes in a
    size_t; llama.cpp's gguf.cpp refuses a tensor whose count or size overflows); ``None`` when they hold. One
    check for the binary reader and checkpoint entries."""
    if dims and (min(dims) < 0 or max(dims) > _INT64_MAX):
        return f"dimension {max(dims, key=lambda d: abs(d))} is beyond int64"
    elements = 1
    for d in dims:
        elements *= d
    if elements > _INT64_MAX:
        return f"dims {list(dims)} hold {elements:,} elements, beyond int64"
    if type_id is not None and ggml.known(type_id):
        size = ggml.tensor_bytes(type_id, dims)
        if size > _INT64_MAX:
            return f"dims {list(dims)} of {ggml.type_name(type_id)} take {size:,} bytes, beyond int64"
    return None


@functools.cache
def _safe_elements() -> dict[int, int]:
    """GGML type id → the most elements a tensor of that type may hold with its bytes,
    ``ceil(elements / block) × block bytes`` (:meth:`passprice.ggml.GgmlType.bytes_for`), and its elements within
    int64: ``min(int64 max // block bytes × block, int64 max)`` (then ``ceil(elements / block)`` is at most
    ``int64 max // block bytes``). The types of passprice's generated table only; a tensor past its type's figure, or
    of a type not there, is checked by :func:`dims_problem`, which says what is wrong."""
    return {t.id: min(_INT64_MAX // t.block_bytes * t.block_elems, _INT64_MAX)
            for t in ggml.type_by_name().values() if t.block_bytes > 0 and t.block_elems > 0}


def offset_problem(offset: int, alignment: int) -> str | None:
    """What is wrong with a tensor's data ``offset`` (bytes from the start of the data section): past int64, or
    not a multiple of ``alignment`` (gguf.cpp lays tensors out at aligned offsets and refuses any other); ``None``
    when it is one. One check for the binary reader and checkpoint entries."""
    if offset < 0 or offset > _INT64_MAX:
        return f"data offset {offset} is beyond int64"
    if offset % alignment:
        return f"data offset {offset:,} is not a multiple of the alignment {alignment:,}"
    return None


def _count_limit(count: int, per: int, what: str, cap: int) -> str | None:
    most = cap // per
    if count <= most:
        return None
    return (
        f"{count:,} {what} is more than the {most:,} passprice reads of a header of at most {cap:,} bytes "
        f"(set {CAP_VARIABLE} to a larger number of bytes to read more)"
    )


def tensor_limit(count: int, cap: int | None = None) -> str | None:
    """Why a header of ``count`` tensors would not read (more than ``cap`` // :data:`BYTES_PER_TENSOR`, ``cap``
    the reader's, :func:`header_cap`, by default), in the reader's own words; ``None`` when it would. ``synth``
    asks before it builds a header. Raises :class:`InputError` as :func:`header_cap` does."""
    return _count_limit(count, BYTES_PER_TENSOR, "tensors", header_cap() if cap is None else cap)


class _Reader:
    """Reads a header from a binary stream a chunk at a time, hashing every byte it consumes.

    ``buf[pos:]`` is read but not consumed; ``buf[hashed:pos]`` is consumed but not yet hashed (``buf[:hashed]`` is);
    every byte before ``base`` (the offset of ``buf[0]`` from where the stream stood when the reader began, ``start``)
    is hashed; the stream stands at ``start + base + len(buf)``. ``size`` is the stream's length when known (a plain
    file), else ``None`` (a compressed one); every count is checked against the smaller of ``size`` and ``cap`` (the
    most header bytes read, :func:`header_cap`) before anything is read or allocated for it, and no chunk is read from
    past ``cap``. When more bytes are needed than ``buf[pos:]`` holds, a plain file is read again from ``pos`` (a seek
    back over the few bytes not consumed, so each chunk comes from the file straight into the buffer), a compressed
    stream's rest is joined to the next chunk.
    """

    def __init__(
        self,
        stream: IO[bytes],
        source: str,
        size: int | None,
        hashers: list[Any],
        cap: int = MAX_HEADER_BYTES,
        digests: bool = True,
    ) -> None:
        self.stream = stream
        self.digests = digests  # hash each long array's elements apart too (LongArray.sha256)
        #: Without ``digests``: each long array's elements' offsets (metadata key → start, end), for a digest made
        #: later from the header's bytes (:func:`_seen_before`).
        self.spans: dict[str, tuple[int, int]] = {}
        self.source = source
        self.size = size
        self.cap = cap
        self.limit = cap if size is None else min(size, cap)
        self.keep_budget = cap // BYTES_PER_KEPT  # array elements that may still be kept
        self.text_budget = cap // BYTES_PER_KEPT_TEXT  # bytes of string values that may still be kept
        self.walk_budget = cap // BYTES_PER_WALKED  # strings and inner arrays that may still be walked one by one
        self.nest_budget = cap // BYTES_PER_NESTED  # arrays of arrays inside arrays that may still be read
        self.hashers = hashers
        self.buf = b""
        self.pos = 0
        self.hashed = 0
        self.base = 0
        self.order = "<"
        self.u32 = struct.Struct("<I")
        self.u64 = struct.Struct("<Q")
        self.rewinds = size is not None and stream.seekable()
        self.start = stream.tell() if self.rewinds else 0  # a stream is read from where it stands

    def set_order(self, order: str) -> None:
        self.order = order
        self.u32 = struct.Struct(order + "I")
        self.u64 = struct.Struct(order + "Q")

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def left(self) -> int:
        """Bytes after the current offset that the reader may still read: to the file's end or to the cap."""
        return self.limit - self.offset

    def fail(self, offset: int, problem: str) -> HeaderError:
        return HeaderError(self.source, offset, problem)

    def _capped(self) -> bool:
        """Whether the cap, not the file's end, is what limits the reader."""
        return self.size is None or self.cap < self.size

    def past_cap(self) -> HeaderError:
        """The error for a header that runs past the cap."""
        problem = (
            f"the header runs past {self.cap:,} bytes{' decompressed' if self.size is None else ''}, the most "
            f"passprice reads of a header (set {CAP_VARIABLE} to a larger number of bytes to read it)"
        )
        return HeaderError(self.source, self.cap, problem, message=f"{shown(self.source)}: {problem}")

    def _hash(self, data: bytes | memoryview) -> None:
        for h in self.hashers:
            h.update(data)

    def _read(self, what: str, have: int) -> bytes:
        if self.base + have >= self.cap:
            raise self.past_cap()
        chunk = self.stream.read(CHUNK)
        if not chunk:
            raise HeaderError.ends(self.source, self.base + have, what)
        return chunk

    def _flush(self) -> None:
        """Hash the consumed bytes not hashed yet, ``buf[hashed:pos]``, keeping the buffer: a digest begun or ended
        (:meth:`begin_digest`) needs no new read. Dropping the buffer there made each of a nested array's inner
        arrays read a chunk (1 MiB) again: a 960 KB header of 80,000 empty inner string arrays took 3.6 s of CPU
        (attack round 44; issue 13: 2 s at most for an input under 1 MB)."""
        if self.pos > self.hashed:
            self._hash(memoryview(self.buf)[self.hashed : self.pos])
            self.hashed = self.pos

    def _consume(self) -> None:
        """Hash the consumed bytes (:meth:`_flush`) and drop them: a plain file is read again from ``pos`` (a seek
        back), a compressed stream keeps ``buf[pos:]`` to be joined to its next chunk."""
        if self.pos:
            self._flush()
            self.base += self.pos
            if self.rewinds:
                self.stream.seek(self.start + self.base)
                self.buf = b""
            else:
                self.buf = self.buf[self.pos :]
            self.pos = self.hashed = 0

    def more(self, n: int, what: str) -> None:
        """Make ``n`` bytes available at ``pos``, reading chunk by chunk (so a length the stream cannot back is
        never allocated); :class:`HeaderError` when the stream ends first."""
        if len(self.buf) - self.pos >= n:
            return
        self._consume()
        parts = [self.buf] if self.buf else []
        have = len(self.buf)
        while have < n:
            chunk = self._read(what, have)
            parts.append(chunk)
            have += len(chunk)
        self.buf = parts[0] if len(parts) == 1 else b"".join(parts)  # a lone chunk as it came, not copied

    def top_up(self, n: int) -> None:
        """Make up to ``n`` bytes available at ``pos`` where the stream has them, reading whole chunks; never an
        error (a stream that ends, or the cap, leaves fewer: the reader that needs them says so, at their offset)."""
        want = min(n, self.left())
        if len(self.buf) - self.pos >= want:
            return
        self._consume()
        parts = [self.buf] if self.buf else []
        have = len(self.buf)
        while have < want:
            chunk = self.stream.read(CHUNK)
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        self.buf = parts[0] if len(parts) == 1 else b"".join(parts)  # a lone chunk as it came, not copied

    def take(self, n: int, what: str) -> bytes:
        """The next ``n`` bytes."""
        if len(self.buf) - self.pos < n:
            self.more(n, what)
        start = self.pos
        self.pos = start + n
        return self.buf[start : self.pos]

    def skip(self, n: int, what: str) -> None:
        """Consume (and hash) ``n`` bytes without keeping them."""
        avail = len(self.buf) - self.pos
        if avail >= n:
            self.pos += n
            return
        self._hash(memoryview(self.buf)[self.hashed :])
        self.base += len(self.buf)
        self.buf, self.pos, self.hashed = b"", 0, 0
        need = n - avail
        while need:
            chunk = self._read(what, 0)
            if len(chunk) <= need:
                self._hash(chunk)
                self.base += len(chunk)
                need -= len(chunk)
            else:
                self.buf, self.pos, self.hashed, need = chunk, need, 0, 0

    def begin_digest(self) -> Any:
        """Start hashing what is consumed from here on apart (the elements of a long array): the bytes consumed so
        far are hashed first, so the new hasher sees only what follows. Its hasher, for :meth:`end_digest`."""
        import hashlib

        self._flush()
        hasher = hashlib.sha256()
        self.hashers.append(hasher)
        return hasher

    def end_digest(self, hasher: Any) -> str:
        """The hex sha256 of what was consumed since :meth:`begin_digest` gave ``hasher``."""
        self._flush()
        self.hashers.remove(hasher)
        return str(hasher.hexdigest())

    def read_u32(self, what: str) -> int:
        if len(self.buf) - self.pos < 4:
            self.more(4, what)
        value: int = self.u32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return value

    def read_u64(self, what: str) -> int:
        if len(self.buf) - self.pos < 8:
            self.more(8, what)
        value: int = self.u64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return value

    def check_count(self, count: int, unit: int, at: int, what: str) -> None:
        """Refuse ``count`` items of at least ``unit`` bytes each (``what``, read at ``at``) when the rest of the file,
        or of the cap on a header's bytes, cannot hold them."""
        left = self.left()
        if count * unit > left:
            if self._capped() and (self.size is None or count * unit <= self.size - self.offset):
                cap = f"{self.cap:,} bytes, the most passprice reads of a header (set {CAP_VARIABLE} to read more)"
                raise self.fail(at, f"{what} needs at least {count * unit:,} bytes: past {cap}")
            if unit == 1:
                raise self.fail(at, f"{what} runs past the end of the file ({left} bytes left)")
            raise self.fail(at, f"{what} needs at least {count * unit} bytes; the file has {left} left")

    def _length(self, what: str, at: int) -> int:
        """A string's u64 length (``what``'s, read at ``at``), refused as :meth:`check_count` refuses a length the
        rest of the file or of the cap cannot hold. Its descriptions are formatted only when they are needed (the
        buffer runs short, or the length is refused), not for every key, name and value."""
        if len(self.buf) - self.pos < 8:
            self.more(8, f"{what} length")
        n: int = self.u64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        if n > self.limit - self.base - self.pos:  # check_count refuses exactly these
            self.check_count(n, 1, at, f"{what}: string length {n}")
        return n

    def read_u32_of(self, what: str, name: str) -> int:
        """:meth:`read_u32` of ``what.format(name)`` (``"tensor {!r} type"``), formatted only if the buffer runs
        short: a tensor's fields are read without a ``repr`` of its name each."""
        if len(self.buf) - self.pos < 4:
            self.more(4, what.format(name))
        value: int = self.u32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return value

    def read_u64_of(self, what: str, name: str) -> int:
        """:meth:`read_u64` of ``what.format(name)``, formatted only if the buffer runs short."""
        if len(self.buf) - self.pos < 8:
            self.more(8, what.format(name))
        value: int = self.u64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return value

    def take_of(self, n: int, what: str, name: str) -> bytes:
        """:meth:`take` of ``what.format(name)``, formatted only if the buffer runs short."""
        if len(self.buf) - self.pos < n:
            self.more(n, what.format(name))
        start = self.pos
        self.pos = start + n
        return self.buf[start : self.pos]

    def read_string(self, what: str, strict: bool) -> str:
        """A GGUF string (u64 length, UTF-8 bytes). ``strict``: refuse bytes that are not UTF-8 (keys, names);
        else decode with replacement characters (values). A key or name is refused past 65,535 bytes (GGUF's own
        limit) or past the budget of kept text."""
        at = self.base + self.pos
        n = self._length(what, at)
        if strict:
            if n > 0xFFFF:
                raise self.fail(at, f"{what}: string length {n:,} is past GGUF's 65,535 bytes for a key or name")
            if n > self.text_budget:
                raise self._past_text(at, what)
        raw = self.take(n, what)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            if strict:
                raise self.fail(at + 8 + e.start, f"{what} is not UTF-8 ({raw[:40]!r})") from None
            return raw.decode("utf-8", errors="replace")
        if strict:
            cost = written_bytes(text)  # as the entry writes it: a control character is six bytes there
            if cost > self.text_budget:
                raise self._past_text(at, what)
            self.text_budget -= cost
        return text

    def _past_text(self, at: int, what: str) -> InputError:
        most = self.cap // BYTES_PER_KEPT_TEXT
        return self.fail(
            at,
            f"{what}: keys and names past the {most:,} bytes of text passprice keeps of a header of at most "
            f"{self.cap:,} bytes, as a checkpoint entry writes them (set {CAP_VARIABLE} to a larger number of bytes "
            "to read more)",
        )

    def read_text(self, what: str) -> str | LongString:
        """A string value: kept (decoded, bytes that are not UTF-8 replaced) when at most :data:`KEEP_STRING_LIMIT`
        bytes and within the budget of kept text, else skipped and returned as its :class:`LongString` length."""
        n = self._length(what, self.base + self.pos)
        if n > KEEP_STRING_LIMIT or n > self.text_budget:
            self.skip(n, what)
            return LongString(n)
        text = self.take(n, what).decode("utf-8", errors="replace")
        cost = written_bytes(text)  # as the entry writes it (a control character six bytes, a U+FFFD three)
        if cost > self.text_budget:
            return LongString(n)
        self.text_budget -= cost
        return text

    def walk(self, count: int, at: int, what: str) -> None:
        """Spend ``count`` of the budget of elements walked one by one (``what``, read at ``at``); refuse a header
        that would walk more."""
        if count > self.walk_budget:
            most = self.cap // BYTES_PER_WALKED
            raise self.fail(
                at,
                f"{what}: past the {most:,} strings and inner arrays passprice walks in a header of at most "
                f"{self.cap:,} bytes (set {CAP_VARIABLE} to a larger number of bytes to read more)",
            )
        self.walk_budget -= count

    def nest(self, at: int, what: str) -> None:
        """Spend one of the budget of arrays of arrays inside arrays read one by one (``what``, its element type read
        at ``at``); refuse a header that would read more. The bulk loop (:func:`_skip_arrays`) skips arrays of
        fixed-size elements, of strings and empty arrays of arrays; an array of arrays inside an array takes a call
        each, and a header of nothing else took 1.6 s of CPU for 260,000 of them in 1 KB of .xz (session 24)."""
        if not self.nest_budget:
            most = self.cap // BYTES_PER_NESTED
            raise self.fail(
                at,
                f"{what}: past the {most:,} arrays of arrays inside arrays passprice reads in a header of at most "
                f"{self.cap:,} bytes (set {CAP_VARIABLE} to a larger number of bytes to read more)",
            )
        self.nest_budget -= 1

    def skip_strings(self, count: int, what: str) -> None:
        """Skip ``count`` strings: the hot loop of a header (a 262,144-token vocabulary). Runs of
        :data:`SHORT_RUN` strings shorter than :data:`SHORT_BYTES` bytes each (nearly every token) are matched by
        one regular expression (:func:`_short_strings`), stepped through in C; where such a run does not match (it
        holds a longer string, or crosses the buffer's end), runs of :data:`SHORTER_RUN` strings, then one string at
        a time, until a whole run is past the spot."""
        run = _short_strings(self.order, SHORT_RUN).match
        done = 0
        while done < count:
            # The buffer and the offset in locals, and the last string a run may start at, for the hot loop. A run
            # ends by the cap (``ends``): the buffer may hold bytes past it (a chunk read from below it), and strings
            # stepped through there were read past the cap (a header 5,000 bytes past it read whole; round hdr54).
            last = count - SHORT_RUN
            buf, pos = self.buf, self.pos
            room, ends = len(buf) - _RUN_BYTES, self.limit - self.base
            while done <= last:
                if pos > room:
                    self.pos = pos
                    self.top_up(CHUNK)  # a run that fails only because the buffer ends costs a slow path
                    buf, pos = self.buf, self.pos
                    room, ends = len(buf) - _RUN_BYTES, self.limit - self.base
                matched = run(buf, pos, ends)
                if matched is None:
                    break
                pos = matched.end()
                done += SHORT_RUN
            self.pos = pos
            stop = min(count, done + SHORT_RUN)
            while done < stop:
                if stop - done >= SHORTER_RUN:
                    matched = _short_strings(self.order, SHORTER_RUN).match(self.buf, self.pos, self.limit - self.base)
                    if matched is not None:
                        self.pos = matched.end()
                        done += SHORTER_RUN
                        continue
                done = self._skip_each(done, min(stop, done + SHORTER_RUN), what)

    def _skip_each(self, done: int, stop: int, what: str) -> int:
        """Skip strings ``done`` … ``stop − 1`` one at a time (reading more of the stream as they need it);
        ``stop``."""
        unpack = self.u64.unpack_from
        while done < stop:
            buf, pos = self.buf, self.pos
            end = min(len(buf), self.limit - self.base)  # not past the cap (the buffer may hold bytes past it)
            last = end - 8
            for i in range(done, stop):  # noqa: B007 - i says where the loop stopped
                if pos > last:
                    break
                nxt = pos + 8 + unpack(buf, pos)[0]
                if nxt > end:
                    break
                pos = nxt
            else:
                i = stop
            self.pos = pos
            done = i
            if done < stop:
                # The next string runs past the buffer: read its length, then take or skip its bytes.
                at = self.offset
                n = self.read_u64(f"{what} string {done} length")
                self.check_count(n, 1, at, f"{what} string {done}: string length {n}")
                if n <= CHUNK:
                    self.more(n, f"{what} string {done}")
                    self.pos += n
                else:
                    self.skip(n, f"{what} string {done}")
                done += 1
        return stop

    def finish(self) -> int:
        """Hash what is consumed; the header's length in bytes. :class:`HeaderError` for a header that ends past the
        cap: a number read whole from a chunk that crosses it (each length and count is refused at its own offset
        before this)."""
        if self.offset > self.limit:
            raise self.past_cap()
        self._consume()
        return self.base


#: Strings :meth:`_Reader.skip_strings` matches at once when each is shorter than :data:`SHORT_BYTES` bytes; where
#: such a run does not match, it tries runs of :data:`SHORTER_RUN` strings before one string at a time.
SHORT_RUN = 256
SHORTER_RUN = 16
#: Strings shorter than this many bytes are matched in runs: a vocabulary's tokens are nearly all shorter (gemma3's
#: 262,144 at most 48 bytes; Qwen2's 152,064 all but 201), and each length is one alternative of the pattern, so
#: fewer lengths compile faster (a few ms of each process that reads a header).
SHORT_BYTES = 64
#: The most bytes a run of :data:`SHORT_RUN` short strings takes.
_RUN_BYTES = SHORT_RUN * (8 + SHORT_BYTES - 1)
#: The lengths of strings most frequent in real vocabularies, most frequent first (gemma3's 262,144 tokens and Qwen2's
#: 152,064 tokens and 151,387 merges together: 6, 7, 9, 12 … bytes), tried first.
_COMMON_LENGTHS = (6, 7, 9, 12, 8, 5, 4, 3, 10, 13, 11)


@functools.cache
def _short_strings(order: str, run: int) -> re.Pattern[bytes]:
    """A pattern matching ``run`` GGUF strings in a row, each shorter than :data:`SHORT_BYTES` bytes: a u64 length
    of one byte ``L`` and seven zero bytes (``order`` ``"<"``; ``">"``: seven zero bytes, then ``L``), then exactly
    ``L`` bytes. One alternative per ``L``, the most common lengths first, each starting with its own byte, so the
    regular-expression engine picks the one that applies in C, without backtracking.

    Written for CPython's engine (``Modules/_sre/sre_lib.h``): a string's ``L`` bytes are a possessive ``.{L}+``
    (``POSSESSIVE_REPEAT_ONE``, which counts them and goes on in the same frame; a plain ``.{L}`` is a
    ``REPEAT_ONE`` that matches the rest of the pattern in a new frame: 477 against 414 instructions a string on
    gemma3's vocabulary, callgrind), and the zero bytes are in the pattern as themselves, not as ``\\x00`` escapes,
    which the parser reads a character at a time (about a third of the compile, which every process that reads a
    vocabulary pays)."""
    zeros = b"\x00" * 7
    alternatives = []
    lengths = (*_COMMON_LENGTHS, *(n for n in range(SHORT_BYTES) if n not in _COMMON_LENGTHS))
    for length in lengths:
        size = re.escape(bytes([length])) + (b"" if order == ">" else zeros)
        alternatives.append(size + (b".{%d}+" % length if length else b""))
    one = (zeros if order == ">" else b"") + b"(?:" + b"|".join(alternatives) + b")"
    # Possessive: a run that fails is not retried with fewer strings (nothing to save for backtracking).
    return re.compile(b"(?:" + one + b"){%d}+" % run, re.DOTALL)


# --- metadata values -------------------------------------------------------------------------------------------------


@attrs.frozen
class _Value:
    value: MetaValue  # a LongArray for an array too long to keep
    descriptor: str
    leaves: int  # elements kept, counted through nested arrays; 0 for a LongArray


def _read_value(r: _Reader, type_id: int, key: str, at: int) -> _Value:
    """One value of type ``type_id`` (its type read at ``at``) of metadata ``key``."""
    fmt = _FORMAT.get(type_id)
    if fmt is not None:
        raw = r.take(_SIZE[type_id], f"metadata {key!r} value")
        scalar: bool | int | float = struct.unpack(r.order + fmt, raw)[0]
        return _Value(scalar, VALUE_TYPE_NAMES[type_id], 1)
    if type_id == _STRING:
        return _Value(r.read_text(f"metadata {key!r} value"), "string", 1)
    if type_id == _ARRAY:
        return _read_array(r, key, True, 1)
    raise r.fail(at, f"metadata {key!r}: unknown value type {type_id}")


def _read_array(r: _Reader, key: str, keep: bool, depth: int) -> _Value:
    """An array (element type u32, length u64, elements) of metadata ``key``, ``depth`` arrays deep; kept as a
    tuple when ``keep`` and short enough, else skipped and returned as a :class:`LongArray`, which carries the
    sha256 of its element bytes when it is the value itself (``depth`` 1: an inner array is hashed as part of its
    outer one, not apart). Every kind of long array is hashed: an array of strings one of which is too long to keep
    and an array of arrays were not, so two headers differing only there read the same (attack round 44)."""
    what = f"metadata {key!r}"
    type_at = r.offset
    etype = r.read_u32(f"{what} array element type")
    if etype not in VALUE_TYPE_NAMES:
        raise r.fail(type_at, f"{what}: unknown array element type {etype}")
    if depth > MAX_ARRAY_DEPTH:
        raise r.fail(type_at, f"{what}: arrays nested more than {MAX_ARRAY_DEPTH} deep")
    length_at = r.offset
    length = r.read_u64(f"{what} array length")
    ename = VALUE_TYPE_NAMES[etype]
    r.check_count(length, _MIN_SIZE[etype], length_at, f"{what}: array of {length} {ename}")
    keep = keep and length <= KEEP_ARRAY_LIMIT and length <= r.keep_budget
    if keep and etype != _ARRAY:
        r.keep_budget -= length
    if etype == _ARRAY:
        if depth > 1 and length:
            r.nest(type_at, f"{what}: an array of arrays inside an array")
        return _read_nested(r, key, length, keep, depth, length_at)
    descriptor = f"array[{ename}]"
    digest = depth == 1
    if etype == _STRING:
        if not keep:
            r.walk(length, length_at, f"{what}: array of {length} {ename}")
            hasher = _begin(r) if digest else None
            r.skip_strings(length, f"{what} array")
            return _Value(LongArray(ename, length, _ended(r, key, hasher)), descriptor, 0)
        items: list[str] = []
        hasher = _begin(r) if digest and length else None  # a string past the limit makes it a LongArray
        for i in range(length):
            item = r.read_text(f"{what} array string {i}")
            if isinstance(item, LongString):  # too long to keep: the array is kept as its type, length and digest
                r.walk(length - i - 1, length_at, f"{what}: array of {length} {ename}")
                r.skip_strings(length - i - 1, f"{what} array")
                return _Value(LongArray(ename, length, _ended(r, key, hasher)), descriptor, 0)
            items.append(item)
        _ended(r, key, hasher, kept=True)
        return _Value(tuple(items), descriptor, length)
    size = _SIZE[etype]
    if not keep:
        hasher = _begin(r) if digest else None
        r.skip(length * size, f"{what} array of {length} {ename}")
        return _Value(LongArray(ename, length, _ended(r, key, hasher)), descriptor, 0)
    raw = r.take(length * size, f"{what} array of {length} {ename}")
    values: tuple[MetaValue, ...] = struct.unpack(f"{r.order}{length}{_FORMAT[etype]}", raw)
    return _Value(values, descriptor, length)


def _read_nested(r: _Reader, key: str, length: int, keep: bool, depth: int, length_at: int) -> _Value:
    """An array of ``length`` arrays: kept while every element, counted through the nesting (an empty inner array
    counting as one), fits :data:`KEEP_ARRAY_LIMIT` and the budget of elements kept (an empty inner array spends one
    of it: 522,000 of them kept took 2.0 s, session 24); else the rest is skipped in bulk (:func:`_skip_arrays`). Its
    descriptor takes the inner arrays' type when they all have one (``array[array[int32]]``), else, for inner
    arrays of different types or none at all, ``array[array]`` (any arrays), which an entry writes and reads back."""
    items: list[MetaValue] = []
    inners: set[str] = set()
    leaves = 0
    done = 0
    hasher = _begin(r) if depth == 1 and length else None  # the digest of a LongArray of arrays
    while keep and done < length:
        element = _read_array(r, key, True, depth + 1)
        done += 1
        inners.add(element.descriptor)
        leaves += max(element.leaves, 1)
        empty = element.value == ()
        if isinstance(element.value, LongArray) or leaves > KEEP_ARRAY_LIMIT or (empty and not r.keep_budget):
            keep = False
            items.clear()
        else:
            r.keep_budget -= empty
            items.append(element.value)
    if done < length:
        r.walk(length - done, length_at, f"metadata {key!r}: array of {length} arrays")
        inners |= _skip_arrays(r, key, length - done, depth + 1)
    inner = inners.pop() if len(inners) == 1 else "array"
    descriptor = f"array[{inner}]"
    digest = _ended(r, key, hasher, kept=keep)
    if not keep:
        return _Value(LongArray(inner, length, digest), descriptor, 0)
    return _Value(tuple(items), descriptor, leaves)


def _begin(r: _Reader) -> Any:
    """Where the elements of a long array (a metadata value, one array deep) start: a hasher of what follows
    (:meth:`_Reader.begin_digest`), or, on a read without the digests, the offset they start at; for :func:`_ended`."""
    return r.begin_digest() if r.digests else r.offset


def _ended(r: _Reader, key: str, begun: Any, kept: bool = False) -> str | None:
    """The sha256 of metadata ``key``'s array elements :func:`_begin` gave ``begun`` for (``None`` when there is
    none, or on a read without the digests: their offsets are then noted in ``r.spans`` unless the array is
    ``kept``)."""
    if begun is None:
        return None
    if isinstance(begun, int):
        if not kept:
            r.spans[key] = (begun, r.offset)
        return None
    return r.end_digest(begun)


def _skip_arrays(r: _Reader, key: str, count: int, depth: int) -> set[str]:
    """Skip ``count`` arrays (each ``depth`` arrays deep) of metadata ``key`` without keeping them, in a loop over the
    buffer for arrays of fixed-size elements and of strings (millions of tiny inner arrays cost one unpack each, not
    a call each; a string array's strings, counted in the budget of strings walked, one unpack each: 500,000 empty
    string arrays in a 1 KB .xz took 1.9 s of CPU a call each, attack round 44); any other array, or one the buffer
    does not hold whole, is read by :func:`_read_array`. The type descriptors of the arrays skipped."""
    seen: set[int] = set()
    out: set[str] = set()
    sizes = _SIZE
    head = struct.Struct(r.order + "IQ").unpack_from  # element type u32, length u64
    u64 = r.u64.unpack_from
    done = 0
    last, size = -1, 0
    fast = depth <= MAX_ARRAY_DEPTH  # deeper, the general reader refuses the first
    while done < count:
        buf, pos = r.buf, r.pos
        end = min(len(buf), r.limit - r.base)  # not past the cap (the buffer may hold bytes past it)
        i = done
        while fast and i < count and pos + 12 <= end:
            etype, length = head(buf, pos)
            if etype == _ARRAY and not length:  # an empty array of arrays: its 12 bytes, ``array[array]``
                seen.add(etype)
                pos += 12
                i += 1
                continue
            if etype == _STRING:
                if length > r.walk_budget:  # refused by the general reader, at its offset
                    break
                nxt = pos + 12
                k = 0
                while k < length and nxt + 8 <= end:
                    nxt += 8 + u64(buf, nxt)[0]
                    k += 1
                if k < length or nxt > end:
                    break
                r.walk_budget -= length
                seen.add(etype)
                pos = nxt
                i += 1
                continue
            if etype != last:
                if etype not in sizes:  # arrays, an unknown type: the general reader
                    break
                last, size = etype, sizes[etype]
                seen.add(etype)
            nxt = pos + 12 + length * size
            if nxt > end:
                break
            pos = nxt
            i += 1
        r.pos = pos
        done = i
        if done < count:
            out.add(_read_array(r, key, False, depth).descriptor)
            done += 1
    out.update(f"array[{VALUE_TYPE_NAMES[t]}]" for t in seen)
    return out


# --- one file --------------------------------------------------------------------------------------------------------


@attrs.frozen
class _Parsed:
    """One file's header, before shards are joined."""

    version: int
    byte_order: str
    metadata: dict[str, MetaValue]
    value_types: dict[str, str]
    offsets: dict[str, int]  # key → byte offset of its value
    tensors: tuple[TensorInfo, ...]
    tensor_offset: int  # byte offset of the first tensor info
    header_bytes: int
    alignment: int
    data_offset: int
    sha256: str
    sized: bool  # read from a plain file (of a known size), not decompressed
    hasher: Any = attrs.field(eq=False, repr=False)  # the sha256 of the header bytes, to hash further shards into
    #: Read without the digests: each long array's elements' offsets (:attr:`_Reader.spans`); ``None`` with them.
    spans: dict[str, tuple[int, int]] | None = attrs.field(default=None, eq=False, repr=False)


#: The first bytes of formats a file given as a GGUF file is often in fact, named in the bad-magic error. The bytes of
#: any other file are not shown: a registry file may name any file as its checkpoint, and its error line (in a CI log)
#: must not print the start of, say, a key file.
_KNOWN_MAGIC = {
    b"GGML": "b'GGML' (the GGML format GGUF replaced)",
    b"GGMF": "b'GGMF' (the GGMF format GGUF replaced)",
    b"GGJT": "b'GGJT' (the GGJT format GGUF replaced)",
    b"\xfd7zX": "of an xz file (name it .gguf.xz)",
    b"PK\x03\x04": "of a zip file",
    b"\x28\xb5\x2f\xfd": "of a zstd file (not read: decompress it)",
    # bzip2's "BZh" and its block size, 1-9 (x.gguf.bz2 said only "bad magic": tests/test_blobcap156.py).
    **{b"BZh" + bytes([level]): "of a bzip2 file (not read: decompress it)" for level in b"123456789"},
}


#: A compressed layer :func:`_open` takes off, by the reader's class name: (what it is, the tool that takes it off).
_LAYERS = {"_XzStreams": ("an xz stream", "unxz"), "_GzMembers": ("a gzip member", "gunzip")}


def _known_magic(magic: bytes, outer: str | None = None) -> str:
    """`` b'GGML' (…)`` for a format :data:`_KNOWN_MAGIC` names (a gzip file by its 2-byte signature), else ``""``.

    ``outer``: the class name of the decompressing reader (:data:`_LAYERS`) the bytes came out of, ``None`` for a
    plain file. An xz stream or a gzip member found inside one is a file compressed twice (``gzip`` of a
    ``.gguf.xz``): "name it .gguf.xz" was wrong advice there (left61; the file was read as gzip, by its first
    bytes), so the line says what the file is and which layer to take off (passprice takes off one)."""
    inner = ("a gzip member" if magic[:2] == b"\x1f\x8b" else "an xz stream" if magic == b"\xfd7zX" else None)
    if inner is not None and outer in _LAYERS:
        layer, tool = _LAYERS[outer]
        suffix = ".gguf.gz" if inner == "a gzip member" else ".gguf.xz"
        return (f": {inner} inside {layer}, a file compressed twice (passprice takes off one layer): take off the "
                f"outer one ({tool}) and give the file it holds, named {suffix}")
    if magic[:2] == b"\x1f\x8b":
        return " of a gzip file (name it .gguf.gz)"
    known = _KNOWN_MAGIC.get(magic)
    return f" {known}" if known else ""


def _parse(stream: IO[bytes], source: str, size: int | None, extra: list[Any], digests: bool = True) -> _Parsed:
    """One file's header from ``stream``; ``digests``: each long array's :attr:`LongArray.sha256` too (else
    ``None``: its elements are hashed once, into the header's sha256, not twice)."""
    import hashlib  # OpenSSL's sha256, loaded where a header (megabytes) is read, not by every import

    own = hashlib.sha256()
    r = _Reader(stream, source, size, [own, *extra], header_cap(), digests)
    magic = r.take(4, "the magic")
    if magic != _MAGIC:
        said = _known_magic(magic, type(stream).__name__ if size is None else None)
        raise r.fail(0, f"bad magic{said}" if said.startswith(":") else
                     f"bad magic{said}: a GGUF file starts with b'GGUF'")
    raw_version = r.take(4, "the version")
    little = struct.unpack("<I", raw_version)[0]
    big = struct.unpack(">I", raw_version)[0]
    if little in VERSIONS:
        version, byte_order = little, "little"
    elif big in VERSIONS:
        version, byte_order = big, "big"
        r.set_order(">")
    else:
        shown = big if little & 0xFFFF == 0 else little
        raise r.fail(4, f"unknown GGUF version {shown} (passprice reads versions 2 and 3)")
    tensor_count = r.read_u64("the tensor count")
    kv_count = r.read_u64("the metadata count")
    r.check_count(tensor_count, 24, 8, f"tensor count {tensor_count}")
    r.check_count(kv_count, 13, 16, f"metadata count {kv_count}")
    for count, per, what, at in ((tensor_count, BYTES_PER_TENSOR, "tensors", 8), (kv_count, BYTES_PER_KEY,
                                                                                "metadata keys", 16)):
        problem = _count_limit(count, per, what, r.cap)
        if problem is not None:
            raise r.fail(at, problem)

    metadata: dict[str, MetaValue] = {}
    value_types: dict[str, str] = {}
    offsets: dict[str, int] = {}
    for i in range(kv_count):
        key_at = r.offset
        key = r.read_string(f"metadata key {i}", strict=True)
        if key in metadata:
            raise r.fail(key_at, f"metadata key {key!r} appears twice")
        type_at = r.offset
        type_id = r.read_u32(f"metadata {key!r} value type")
        if type_id not in VALUE_TYPE_NAMES:
            raise r.fail(type_at, f"metadata {key!r}: unknown value type {type_id}")
        value_at = r.offset
        value = _read_value(r, type_id, key, type_at)
        metadata[key] = value.value
        value_types[key] = value.descriptor
        offsets[key] = value_at

    tensor_offset = r.offset
    tensors: list[TensorInfo] = []
    names: set[str] = set()
    u64s = {n: struct.Struct(f"{r.order}{n}Q") for n in range(MAX_DIMS + 1)}
    safe = _safe_elements()
    offset_ats: list[int] = []
    for i in range(tensor_count):
        at = r.offset
        name = r.read_string(f"tensor {i} name", strict=True)
        if name in names:
            raise r.fail(at, f"tensor {name!r} appears twice")
        names.add(name)
        dims_at = r.offset
        n_dims = r.read_u32_of("tensor {!r} dimension count", name)
        if n_dims > MAX_DIMS:
            raise r.fail(dims_at, f"tensor {name!r} has {n_dims} dimensions (GGUF allows at most {MAX_DIMS})")
        dims: tuple[int, ...] = u64s[n_dims].unpack(r.take_of(8 * n_dims, "tensor {!r} dimensions", name))
        # dims_problem's checks, asked only where the arithmetic leaves a doubt (two calls a tensor were 0.7-1.2 ms
        # of a first read of gemma3's 236 or a 340-tensor header, round hdr54): each dimension and the elements
        # within int64, and the elements within what the type's bytes can count (_safe_elements).
        count = prod(dims)
        if count > _INT64_MAX or (n_dims and max(dims) > _INT64_MAX):
            problem = dims_problem(dims)
            if problem is not None:
                raise r.fail(dims_at + 4, f"tensor {name!r}: {problem}")
        type_id = r.read_u32_of("tensor {!r} type", name)
        if count > safe.get(type_id, -1):
            problem = dims_problem(dims, type_id)
            if problem is not None:
                raise r.fail(dims_at + 4, f"tensor {name!r}: {problem}")
        offset_ats.append(r.offset)
        offset = r.read_u64_of("tensor {!r} offset", name)
        tensors.append(TensorInfo(name, dims, type_id, offset))
    header_bytes = r.finish()

    alignment = DEFAULT_ALIGNMENT
    if "general.alignment" in metadata:
        align = metadata["general.alignment"]
        problem = alignment_problem(align)
        if problem is None and value_types.get("general.alignment") != "uint32":
            # GGUF states it as a uint32: gguf.cpp asserts the type (GGML_ASSERT, an abort) and gguf-py's reader
            # raises "Bad type for general.alignment field"; a uint64 or uint8 one was read (attack round 39).
            kind = value_types.get("general.alignment", "")
            problem = f"is {'an' if kind[:1] in ('a', 'i') else 'a'} {kind}, not a uint32 (GGUF's type for it)"
        if problem is not None:
            raise r.fail(offsets["general.alignment"], f"general.alignment {problem}")
        assert isinstance(align, int)
        alignment = align
    for key, want in _SPLIT_TYPES:
        typed = value_types.get(key)
        if typed is not None and typed != want:
            # llama.cpp reads each with one type (GGUFMeta's get_key throws "key split.no has wrong type …"): a
            # float32 split.no 0.0 was read as shard 0 (0.0 == 0), an int32 split.count -2 or a string "2" as no
            # split at all, the file named m-00001-of-00002.gguf read as a whole checkpoint (attack round 46).
            raise r.fail(offsets[key], f"{key} is {'an' if typed[:1] in ('a', 'i') else 'a'} {typed}, not a {want} "
                                       "(GGUF's type for it, as llama.cpp's gguf-split writes it)")
    for t, at in zip(tensors, offset_ats, strict=True):
        problem = offset_problem(t.offset, alignment)
        if problem is not None:
            raise r.fail(at, f"tensor {t.name!r}: {problem}")
    data_offset = -(-header_bytes // alignment) * alignment
    return _Parsed(
        version=version,
        byte_order=byte_order,
        metadata=metadata,
        value_types=value_types,
        offsets=offsets,
        tensors=tuple(tensors),
        tensor_offset=tensor_offset,
        header_bytes=header_bytes,
        alignment=alignment,
        data_offset=data_offset,
        sha256=own.hexdigest(),
        sized=size is not None,
        hasher=own,
        spans=None if digests else r.spans,
    )


def _single(parsed: _Parsed, file: str, source: str) -> GGUFHeader:
    shard = Shard(file, parsed.header_bytes, parsed.data_offset, parsed.sha256, len(parsed.tensors))
    return GGUFHeader(
        version=parsed.version,
        byte_order=parsed.byte_order,
        metadata=parsed.metadata,
        value_types=parsed.value_types,
        tensors=parsed.tensors,
        header_bytes=parsed.header_bytes,
        alignment=parsed.alignment,
        data_offset=parsed.data_offset,
        sha256=parsed.sha256,
        shards=(shard,),
        source=source,
    )


def read_stream(stream: IO[bytes], source: str, size: int | None = None) -> GGUFHeader:
    """The header of the GGUF bytes ``stream`` yields (already decompressed), read from its current position up
    to the end of the tensor-info table and no further than one chunk past it. ``size`` is the stream's length in
    bytes when known (counts and lengths are then checked against it before anything is read); ``source`` names the
    stream in errors. A single file: no shards are looked for.

    Raises :class:`HeaderError` (file, byte offset, what was wrong).
    """
    return _single(_parse(stream, source, size, []), Path(source).name, source)


def _open(path: Path, stack: contextlib.ExitStack) -> tuple[IO[bytes], int | None]:
    """The file at ``path`` as a stream of GGUF bytes, decompressed when its first bytes are xz's or gzip's magic,
    and its length when known (uncompressed). ``stack`` closes what is opened."""
    raw = stack.enter_context(open_regular(path, buffering=0))
    head = raw.read(6)
    raw.seek(0)
    if head.startswith(_XZ_MAGIC):
        return cast(IO[bytes], stack.enter_context(_XzStreams(raw))), None
    if head.startswith(_GZ_MAGIC):
        return cast(IO[bytes], stack.enter_context(_GzMembers(raw))), None
    return raw, os.fstat(raw.fileno()).st_size


#: The most bytes of stream padding :class:`_XzStreams` reads past an xz stream's end (xz's format lets any multiple of
#: 4 zero bytes follow a stream; tools that pad write a few, up to a block of a tape or a disk): past it the file is
#: refused, so no run of zeros, however long, makes the reader loop on it.
XZ_PADDING_LIMIT = 1 << 20
#: Compressed bytes :class:`_XzStreams` reads from the file at a time.
_XZ_CHUNK = 1 << 16


class _XzStreams(io.RawIOBase):
    """The decompressed bytes of an xz file (``raw``, open at its start): its streams one after another, each read
    by an ``lzma.LZMADecompressor`` of the xz format, the zero bytes of stream padding between and after them
    skipped as the xz file format (section 2.2, "Stream Padding") allows: a multiple of 4 bytes. ``lzma.LZMAFile``
    refuses a valid file padded so (``xz -c f > a.xz; printf '\\0\\0\\0\\0' >> a.xz`` read "Compressed file ended
    before the end-of-stream marker was reached": it reads the padding as a stream cut short) and passed over any
    bytes after the last stream that were no stream (left52). Each read decompresses at most the bytes asked for
    (:data:`CHUNK`), so the header cap still bounds what a reader holds. Raises ``lzma.LZMAError`` naming the byte
    offset (in the compressed file) for padding whose length is not a multiple of 4 or is past
    :data:`XZ_PADDING_LIMIT`, for bytes after a stream that are neither padding nor another stream, and for a
    stream liblzma finds corrupt (naming the offset of the stream's first byte: attack74, "cannot decompress: Corrupt
    input data" named no offset); ``EOFError`` for a stream cut short (naming where the file ends and where that
    stream starts: was "Compressed file ended before the end-of-stream marker was reached")."""

    def __init__(self, raw: IO[bytes]) -> None:
        import lzma

        super().__init__()
        self._lzma = lzma
        self._raw = raw
        self._decompressor: Any = lzma.LZMADecompressor(lzma.FORMAT_XZ)
        self._fed = 0  # compressed bytes handed to decompressors so far (where the current one's input ends)
        self._start = 0  # the offset of the current stream's first byte
        self._pending = b""  # compressed bytes read past a stream's end, for the next stream
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` whole, or up to the file's end (as ``LZMAFile``'s buffered reads do: the read that
        reaches a header-only file's end judges what follows its last stream)."""
        view = memoryview(buffer).cast("B")
        filled = 0
        while not self._ended and filled < view.nbytes:
            decompressor = self._decompressor
            if decompressor.eof:
                self._next_stream()
                continue
            data = b""
            if decompressor.needs_input:
                data, self._pending = self._pending or self._raw.read(_XZ_CHUNK), b""
                if not data:
                    raise EOFError(f"byte {self._fed:,}: the file ends inside the xz stream starting at byte "
                                   f"{self._start:,} (its end-of-stream marker never came)")
                self._fed += len(data)
            try:
                out = decompressor.decompress(data, view.nbytes - filled)
            except self._lzma.LZMAError as e:  # liblzma says what, not where: the stream and how far it was read
                raise self._lzma.LZMAError(
                    f"byte {self._start:,}: the xz stream starting there: {e} (found within its first "
                    f"{self._fed - self._start:,} bytes)") from None
            view[filled : filled + len(out)] = out
            filled += len(out)
        return filled

    def _next_stream(self) -> None:
        """Past a stream's end: skip its padding and start the next stream's decompressor, or end the file."""
        left = self._decompressor.unused_data
        end = self._fed - len(left)  # the offset just past the stream
        zeros = 0
        while True:
            if not left:
                left = self._raw.read(_XZ_CHUNK)
                self._fed += len(left)
                if not left:
                    break
            run = len(left) - len(left.lstrip(b"\0"))
            zeros += run
            if zeros > XZ_PADDING_LIMIT:
                raise self._lzma.LZMAError(
                    f"byte {end:,}: more than {XZ_PADDING_LIMIT:,} bytes of stream padding after the stream ending "
                    "there (passprice reads no more)")
            left = left[run:]
            if left:
                break
        if zeros % 4:
            raise self._lzma.LZMAError(
                f"byte {end:,}: {zeros:,} bytes of stream padding, not a multiple of 4 (the xz format's rule)")
        if not left:
            self._ended = True
            return
        at = end + zeros
        while len(left) < len(_XZ_MAGIC) and (more := self._raw.read(_XZ_CHUNK)):
            self._fed += len(more)
            left += more
        if not left.startswith(_XZ_MAGIC):
            raise self._lzma.LZMAError(f"byte {at:,}: neither stream padding nor another xz stream")
        self._fed -= len(left)  # handed to the next stream's decompressor as it asks
        self._start = at
        self._pending = left
        self._decompressor = self._lzma.LZMADecompressor(self._lzma.FORMAT_XZ)


class _GzMembers(io.RawIOBase):
    """The decompressed bytes of a gzip file (``raw``, open at its start): its members one after another (RFC 1952,
    section 2.2: "a series of members"), each read by a ``zlib.decompressobj`` of the gzip format (which checks the
    header, the CRC-32 and ISIZE), and the zero bytes after the last member skipped as Python's ``gzip`` skips them.
    ``gzip.GzipFile`` said what, not where: a corrupt header read "cannot decompress: Error -3 while decompressing
    data: incorrect header check" with no byte offset (left57). Each read decompresses at most the bytes asked for,
    reading the file :data:`_XZ_CHUNK` bytes at a time, so the header cap still bounds what a reader holds. Raises
    ``zlib.error`` naming the byte offset (in the compressed file) of the member zlib finds corrupt and how far it
    was read, for more than :data:`XZ_PADDING_LIMIT` zero bytes after a member, and for bytes after a member that
    are neither zeros nor another member; ``EOFError`` for a member cut short (where the file ends and where that
    member starts) -- the same form as :class:`_XzStreams`'."""

    def __init__(self, raw: IO[bytes]) -> None:
        import zlib

        super().__init__()
        self._zlib = zlib
        self._raw = raw
        self._decompressor: Any = zlib.decompressobj(31)  # 16 + 15: the gzip wrapper, a 32 KiB window
        self._fed = 0  # compressed bytes read from the file so far
        self._start = 0  # the offset of the current member's first byte
        self._pending = b""  # compressed bytes read past a member's end, for the next member
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` whole, or up to the file's end."""
        view = memoryview(buffer).cast("B")
        filled = 0
        while not self._ended and filled < view.nbytes:
            decompressor = self._decompressor
            if decompressor.eof:
                self._next_member()
                continue
            data = decompressor.unconsumed_tail
            if not data:
                data, self._pending = self._pending or self._raw.read(_XZ_CHUNK), b""
                if not data:
                    raise EOFError(f"byte {self._fed:,}: the file ends inside the gzip member starting at byte "
                                   f"{self._start:,} (its end never came)")
                self._fed += len(data)
            try:
                out = decompressor.decompress(data, view.nbytes - filled)
            except self._zlib.error as e:  # zlib says what, not where: the member and how far it was read
                raise self._zlib.error(
                    f"byte {self._start:,}: the gzip member starting there: {e} (found within its first "
                    f"{self._fed - self._start:,} bytes)") from None
            view[filled : filled + len(out)] = out
            filled += len(out)
        return filled

    def _next_member(self) -> None:
        """Past a member's end: skip the zero bytes after it and start the next member's decompressor, or end."""
        left = self._decompressor.unused_data
        end = self._fed - len(left)  # the offset just past the member
        zeros = 0
        while True:
            if not left:
                left = self._raw.read(_XZ_CHUNK)
                self._fed += len(left)
                if not left:
                    break
            run = len(left) - len(left.lstrip(b"\0"))
            zeros += run
            if zeros > XZ_PADDING_LIMIT:
                raise self._zlib.error(
                    f"byte {end:,}: more than {XZ_PADDING_LIMIT:,} zero bytes after the gzip member ending there "
                    "(passprice reads no more)")
            left = left[run:]
            if left:
                break
        if not left:
            self._ended = True
            return
        at = end + zeros
        while len(left) < len(_GZ_MAGIC) and (more := self._raw.read(_XZ_CHUNK)):
            self._fed += len(more)
            left += more
        if not left.startswith(_GZ_MAGIC):
            raise self._zlib.error(f"byte {at:,}: neither zero padding nor another gzip member")
        self._start = at
        self._pending = left
        self._fed -= len(left)  # counted again as the next member's decompressor reads it
        self._decompressor = self._zlib.decompressobj(31)


def _decompression_errors() -> tuple[type[Exception], ...]:
    """What decompressing a file can raise (an ``except`` clause evaluates this only when something was raised, so
    an uncompressed file's reader never imports lzma or zlib)."""
    import lzma
    import zlib

    return (lzma.LZMAError, zlib.error, EOFError)


def _parse_file(path: Path, extra: list[Any], digests: bool = True) -> _Parsed:
    """The header of the one file at ``path`` (hashed also into each of ``extra``; ``digests``: :func:`_parse`'s)."""
    try:
        with contextlib.ExitStack() as stack:
            stream, size = _open(path, stack)
            return _parse(stream, str(path), size, extra, digests)
    except FileNotFoundError:
        raise InputError(f"{shown(path)}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{shown(path)}: is a folder, not a file") from None
    except _decompression_errors() as e:
        raise InputError(f"{shown(path)}: cannot decompress: {e}") from None
    except OSError as e:  # gzip's BadGzipFile is an OSError
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None


def _split_count(parsed: _Parsed) -> int:
    count = parsed.metadata.get("split.count")
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


def _shard_paths(folder: Path, stem: str, no: int, count: int, suffix: str) -> list[Path]:
    """The files of shard ``no`` (1-based) in ``folder``, the given shard's suffix (``.gguf``, ``.gguf.xz`` …) first:
    more than one is a shard there twice, which the caller refuses (``m-00002-of-00002.gguf`` beside a
    ``m-00002-of-00002.gguf.xz`` of other tensors: the first was read and the other never judged; attack round 46)."""
    suffixes = (suffix, *(x for x in _SUFFIXES if x != suffix))
    return [c for c in (folder / f"{stem}-{no:05d}-of-{count:05d}{s}" for s in suffixes) if is_there(c)]


def _same_alignment(one: _Parsed, head: _Parsed, source: str) -> None:
    """Refuse a further shard ``one`` (of file ``source``) that does not pad to the first shard's (``head``'s)
    alignment: one that states another ``general.alignment``, or a tensor offset that is no multiple of the first's
    (a shard without its own alignment was checked against GGUF's default 32). A checkpoint entry records one
    alignment, the first shard's, and checks every shard's data offset and tensor offsets by it; a shard read by
    another wrote an entry that did not read back (session 24). :class:`HeaderError` at the key's or the tensor
    table's offset."""
    if "general.alignment" in one.metadata and one.alignment != head.alignment:
        raise HeaderError(source, one.offsets["general.alignment"], (
            f"general.alignment is {one.alignment} but the first shard's is {head.alignment}: the shards of a "
            "checkpoint pad to one alignment"
        ))
    for t in one.tensors:
        problem = offset_problem(t.offset, head.alignment)
        if problem is not None:
            raise HeaderError(source, one.tensor_offset, f"tensor {t.name!r}: {problem} (the first shard's)")


def _same_checkpoint(one: _Parsed, head: _Parsed, source: str) -> None:
    """Refuse a further shard ``one`` (of file ``source``) that states a key the first shard (``head``) states too,
    other than ``split.no`` (and ``split.tensors.count``, checked against the tensors every shard holds), with another
    value or type: a shard of another checkpoint. gguf-split writes every key in the first shard and only the split
    keys in the others, so a key both state is one they must agree on; a shard 2 saying ``general.architecture``
    ``qwen2`` beside a first shard's ``llama`` was joined without a word (attack round 46). :class:`HeaderError` at
    the key's offset in ``one``."""
    for key, value in one.metadata.items():
        if key in ("split.no", "split.tensors.count") or key not in head.metadata:  # the count: each against all
            continue
        theirs = head.metadata[key]
        if one.value_types[key] == head.value_types[key] and (value == theirs or repr(value) == repr(theirs)):
            continue  # repr: a NaN both state alike is one value
        raise HeaderError(source, one.offsets[key], (
            f"{key} is {_short(value)} ({one.value_types[key]}) but the first shard's is {_short(theirs)} "
            f"({head.value_types[key]}): the shards are of different checkpoints"
        ))


def _short(value: object) -> str:
    """``value`` as an error line shows it: its ``repr``, cut past 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:50]}… ({len(text):,} characters)"


def _read_split(path: Path, first: _Parsed, combined: Any) -> tuple[GGUFHeader, list[Path]]:
    """Every shard of the split checkpoint ``path`` belongs to (``first`` is ``path``'s own header, hashed into
    ``combined`` already), joined into one header; and the shards' paths."""
    source = str(path)
    count = _split_count(first)
    count_at = first.offsets["split.count"]
    match = shard_name().match(path.name)
    if match is None:
        problem = f"split.count is {count} but the file name is not NAME-0000N-of-{count:05d}.gguf"
        raise HeaderError(source, count_at, problem)
    stem, suffix = match["stem"], match["suffix"]
    if int(match["count"]) != count:
        raise HeaderError(source, count_at, f"split.count is {count} but the file name says {int(match['count'])}")
    given = int(match["no"]) - 1
    if not 0 <= given < count:  # m-00004-of-00003.gguf: read as shards 1 to 3 beside it, itself never judged
        at = first.offsets.get("split.no", count_at)
        raise HeaderError(source, at, f"the file name says shard {given + 1} of {count}, which a checkpoint of "
                                      f"{count} shards has not (split.no is {first.metadata.get('split.no')!r}, "
                                      "counted from 0)")
    paths: list[Path] = []
    parsed: list[_Parsed] = []
    if given != 0:
        import hashlib

        combined = hashlib.sha256()
    cap = header_cap()
    # A shard is a row of the entry as a tensor is, and the tensor limit holds for the shards' tensors together: 6,500
    # shards of one tensor each (1.2 MB of files) were read and joined, and `import` spent 9 s writing and checking
    # an entry that then did not read back (6,500 tensors, at most 2,048; attack round 44).
    too_many = _count_limit(count, BYTES_PER_TENSOR, "shards", cap)
    if too_many is not None:
        raise HeaderError(source, count_at, too_many)
    total = 0  # header bytes of the shards read so far: the cap holds for the shards together, not one at a time
    held = 0  # tensors of the shards read so far
    for no in range(count):
        files = [path] if no == given else _shard_paths(path.parent, stem, no + 1, count, suffix)
        if len(files) > 1:
            names = " and ".join(f.name for f in files)
            raise HeaderError(source, count_at, f"split.count is {count} and shard {no + 1} is there twice ({names}): "
                                                "keep one of them")
        shard = files[0] if files else None
        if shard is None:
            wanted = f"{stem}-{no + 1:05d}-of-{count:05d}{suffix}"
            # a folder of that name is no shard, but not missing either (round 27: "is missing" of a folder there)
            there = " is a folder, not a file" if is_folder(path.parent / wanted) else " is missing"
            raise HeaderError(source, count_at, f"split.count is {count} but shard {no + 1} ({wanted}){there}")
        one = first if (no == 0 and given == 0) else _parse_file(shard, [combined])
        total += one.header_bytes
        if total > cap:
            raise HeaderError(str(shard), one.header_bytes, (
                f"the {no + 1} shards read so far hold {total:,} header bytes, past the {cap:,} bytes passprice "
                f"reads of a header (set {CAP_VARIABLE} to a larger number of bytes to read it)"
            ))
        held += len(one.tensors)
        too_many = _count_limit(held, BYTES_PER_TENSOR, f"tensors in the {no + 1} shards read so far", cap)
        if too_many is not None:
            raise HeaderError(str(shard), 8, too_many)
        own_no = one.metadata.get("split.no")
        if own_no != no or _split_count(one) != count:
            at = one.offsets.get("split.no", one.offsets.get("split.count", 0))
            found = f"split.no is {own_no!r} of split.count {_split_count(one)}"
            raise HeaderError(str(shard), at, f"{found}, expected {no} of {count}")
        if no:
            _same_alignment(one, parsed[0], str(shard))
            _same_checkpoint(one, parsed[0], str(shard))
        paths.append(shard)
        parsed.append(one)
    head = parsed[0]
    tensors: list[TensorInfo] = []
    seen: set[str] = set()
    for no, one in enumerate(parsed):
        for t in one.tensors:
            if t.name in seen:
                raise HeaderError(str(paths[no]), one.tensor_offset, f"tensor {t.name!r} is in two shards")
            seen.add(t.name)
            tensors.append(attrs.evolve(t, shard=no))
    for no, one in enumerate(parsed):  # every shard states it (gguf-split): a shard 2 of 99 beside 4 was joined
        declared = one.metadata.get("split.tensors.count")
        if declared is not None and declared != len(tensors):
            at = one.offsets["split.tensors.count"]
            raise HeaderError(str(paths[no]), at,
                              f"split.tensors.count is {declared!r} but the shards hold {len(tensors)}")
    shards = []
    for p, h in zip(paths, parsed, strict=True):
        data_offset = -(-h.header_bytes // head.alignment) * head.alignment  # every shard pads as the first does
        shards.append(Shard(p.name, h.header_bytes, data_offset, h.sha256, len(h.tensors)))
    header = GGUFHeader(
        version=head.version,
        byte_order=head.byte_order,
        metadata=head.metadata,
        value_types=head.value_types,
        tensors=tuple(tensors),
        header_bytes=sum(h.header_bytes for h in parsed),
        alignment=head.alignment,
        data_offset=head.data_offset,
        sha256=combined.hexdigest(),
        shards=tuple(shards),
        source=source,
    )
    return header, paths


# --- the cache -------------------------------------------------------------------------------------------------------

#: A file's resolved path and status: size, modification time, device, inode and change time (ns). The change time and
#: the inode too: a same-size edit with its modification time put back (``touch -d``, ``cp -p``), or another file
#: renamed over it, was served the old header in process (attack67).
_StatKey: TypeAlias = tuple[str, int, int, int, int, int]
#: Resolved path → (the stat keys of every file read for it, the header, the cap it was read under, whether its long
#: arrays carry their digests). Least recently used first. (A change within the kernel's clock tick of the status
#: taken may leave the change time as it was where the kernel has no fine-grained change times: Linux before 6.13.)
_CACHE: OrderedDict[str, tuple[tuple[_StatKey, ...], GGUFHeader, int, bool]] = OrderedDict()
#: Headers the cache keeps.
CACHE_SIZE = 32


def _stat_key(path: Path) -> _StatKey | None:
    try:
        resolved = Path(os.path.realpath(path))  # Path.resolve raises RuntimeError on a loop of links
        st = resolved.stat()
    except (OSError, ValueError):
        return None
    return (str(resolved), st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino, st.st_ctime_ns)


def clear_cache() -> None:
    """Forget every header :func:`read_header` has kept in this process (the headers kept in the cache folder stay:
    :func:`_seen_before` checks each against the file's bytes)."""
    _CACHE.clear()


#: The kind of a header's entry in passprice's cache folder (:func:`passprice.cache.keep_object`); ``-2`` since a
#: :class:`LongArray` carries its elements' sha256 (slip round 36): an entry kept before holds none; ``-3`` since an
#: array of arrays and an array of strings holding one too long to keep carry it too (attack round 44); ``-4`` since
#: an empty inner array spends the budget of elements kept and arrays of arrays inside arrays have a budget of their
#: own (session 24): a header kept before reads otherwise now; ``-5`` since a split key of another type than
#: gguf-split writes is refused (attack round 46); ``-6`` since a header read without its long arrays' digests
#: (``passprice header``, which shows none) is kept too, with their elements' offsets as a tenth field (session 32).
_KEPT_KIND = "gguf-header-6"


def _kept_data(real: str, cap: int) -> bytes:
    """What a header kept in the cache folder is keyed by besides passprice's code: the file's resolved path and the
    cap it was read under."""
    return os.fsencode(real) + b"\0" + str(cap).encode("ascii")


#: The kind of the entry that vouches for a kept header by its file's status (:func:`_vouch`): the header's sha256,
#: keyed by the file's resolved path, the cap and :func:`_status_stamp`.
_STAMP_KIND = "gguf-header-stamp-1"


def _status_stamp(real: str) -> str | None:
    """What the file resolved as ``real`` is known by from its status alone: its device, inode, size, modification
    and change times, when it is a regular file whose change time is older than :data:`passprice.memo.TRUST_NS`
    before now, on a file system that keeps ``ctime`` itself (:func:`passprice.memo.keeps_ctime`); else ``None``.
    No user can set a change time, and every write (or ``utime`` putting an old modification time back) moves it,
    so once a file's status is taken no other bytes can be read under the same stamp: the rule the result memo and
    the cache's code stamp follow (git's racy-clean rule). But a write through a shared writable mapping moves the
    times only at the fault that makes a page writable: later writes to that page move nothing (on ext4 until the
    page is written back, on tmpfs for ever; attack67: a header written so was served stale, ``t.after`` 7 where the
    file said 9). So a status vouches only while no open file description may write the file
    (:func:`passprice.memo.unwritten`, asked before the status is taken: a writer that opens after it moves the
    change time at its first write, and one open then is refused). Raises nothing."""
    import stat
    import time

    from passprice import memo

    now = time.time_ns()  # before the writers are asked: a writer opened since wrote after it, if at all
    if not memo.unwritten(real):
        return None
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or memo._recent(st.st_ctime_ns, now, memo.TRUST_NS):
        return None
    if not memo.keeps_ctime(st.st_dev, real):
        return None
    return _stamp_of(st)


def _stamp_of(st: os.stat_result) -> str:
    """A file's status as :func:`_status_stamp` writes it: ``DEV:INO:SIZE:MTIME_NS:CTIME_NS``."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _stamp_data(real: str, cap: int, stamp: str) -> bytes:
    """What the entry of :func:`_vouch` is keyed by: :func:`_kept_data` and the file's :func:`_status_stamp`."""
    return _kept_data(real, cap) + b"\0" + stamp.encode("ascii")


def _vouch(real: str, cap: int, stamp: str, sha256: str) -> None:
    """Keep in the cache folder that the file resolved as ``real``, while its status was ``stamp`` (taken before its
    bytes were read), held a header of ``sha256`` read under ``cap``; silently nothing when the cache is bypassed or
    cannot be written."""
    from passprice import cache

    cache.keep_object(_STAMP_KIND, _stamp_data(real, cap, stamp), sha256)


def _seen_before(
    real: str, path: Path, cap: int, digests: bool = True, stamp: str | None = None
) -> GGUFHeader | None:
    """The header of the plain (uncompressed, unsplit) GGUF file ``path`` (resolved: ``real``) when one was read from
    that path before, under the same ``cap``, by this passprice, and kept in the cache folder (:func:`_keep`), and the
    file's first ``header_bytes`` bytes still hash to its ``sha256``; else ``None`` (the file is then parsed). With
    ``digests``, a header kept without its long arrays' digests gets them from those bytes, at the offsets kept with
    it (one more sha256 of each long array's elements, which parsing would hash too; no string walked).

    A header is a function of its bytes and the cap alone (a count or length is checked against the rest of the
    file only where the header holds it, so whatever follows the header cannot change it), and a plain file whose
    first bytes hash to a header's sha256 holds that header's bytes; so the header read again is the one parsing
    would return, equal field for field, with this ``path`` as its ``source`` and shard file. An edit of the header in
    place, of the same size and within the same second, changes the hash and misses; a damaged entry misses. Costs
    a read of the header's bytes, their sha256 and the entry's load (about 0.5 ms for gemma3's 236 tensors): no
    string of the vocabulary is walked.

    ``stamp``: the file's :func:`_status_stamp`, taken before anything of it was read (``None``: none vouches). When
    the cache folder holds that stamp for this path and cap with the entry's ``sha256`` (:func:`_vouch`: the file
    had that status when bytes hashing to it were read) and no long array's digest is to be made, the bytes are
    neither read nor hashed: any write since would have moved the status (gemma3: 6.5 MB read and hashed, about 7 ms,
    and OpenSSL's load, saved; the result memo trusts the same status). A stamp not yet vouched for is vouched for
    once the bytes read hash to the entry's ``sha256`` (so a file read once is kept in one entry; from its third
    read on, its bytes are not read)."""
    from passprice import cache

    kept = cache.kept_object(_KEPT_KIND, _kept_data(real, cap), tuple)
    if kept is None or len(kept) != 10:
        return None
    version, byte_order, metadata, value_types, rows, header_bytes, alignment, data_offset, sha256, spans = kept
    if not isinstance(header_bytes, int) or not 0 < header_bytes <= cap or not isinstance(sha256, str):
        return None
    wants_bytes = digests and spans is not None  # the long arrays' digests are made from the bytes
    vouched = stamp is not None and not wants_bytes and cache.kept_object(
        _STAMP_KIND, _stamp_data(real, cap, stamp), str) == sha256
    data = b""
    if not vouched:
        import hashlib

        try:
            with open_regular(path) as f:
                data = f.read(header_bytes)
                # The status of the file the bytes were read from, after the read: ``path`` may be a link re-pointed
                # since ``real``'s status was taken (attack67: a copy of the old header read through it vouched the
                # resolved file's new status for the old sha256, served stale from then on).
                read_from = _stamp_of(os.fstat(f.fileno()))
        except (InputError, OSError):
            return None
        if len(data) != header_bytes or hashlib.sha256(data).hexdigest() != sha256:
            return None
        # Vouched only when no writer holds the file now: one that opened since the stamp and wrote through a
        # mapping moved the change time (the stamp is then another's); one still holding it may write unseen.
        from passprice.memo import unwritten

        if stamp is not None and not wants_bytes and read_from == stamp and unwritten(real):
            _vouch(real, cap, stamp, sha256)
    if wants_bytes:
        import hashlib

        try:
            order = "<" if byte_order == "little" else ">"
            keys = list(metadata)
            for key, (start, end) in spans.items():
                value = metadata[key]
                if not isinstance(value, LongArray) or not 0 <= start <= end <= header_bytes:
                    return None
                at = keys.index(key)
                following = keys[at + 1] if at + 1 < len(keys) else rows[0][0] if rows else None
                if not _span_holds(data, order, key, value, start, end, following):
                    return None  # offsets in range, yet not this array's elements (slip 55)
                metadata[key] = LongArray(value.element_type, value.length,
                                          hashlib.sha256(memoryview(data)[start:end]).hexdigest())
        except (AttributeError, KeyError, TypeError, ValueError, struct.error):  # not spans this code kept
            return None
        if any(isinstance(v, LongArray) and v.sha256 is None for v in metadata.values()):
            return None  # a long array whose offsets were not kept: parsed, as with no entry
    try:
        tensors = tuple(TensorInfo(name, dims, type_id, offset) for name, dims, type_id, offset in rows)
    except (TypeError, ValueError):  # not rows of four: not an entry this code kept
        return None
    return GGUFHeader(
        version=version,
        byte_order=byte_order,
        metadata=metadata,
        value_types=value_types,
        tensors=tensors,
        header_bytes=header_bytes,
        alignment=alignment,
        data_offset=data_offset,
        sha256=sha256,
        shards=(Shard(path.name, header_bytes, data_offset, sha256, len(tensors)),),
        source=str(path),
    )


def _span_holds(data: bytes, order: str, key: str, value: LongArray, start: int, end: int,
                following: str | None) -> bool:
    """Whether ``data[start:end]`` (``data``: a header's bytes, ``order``: its struct byte order) can be the elements
    of the long array ``value`` of metadata ``key`` as a GGUF file lays it out: just before ``start``, the key (u64
    length, its UTF-8 bytes), the value type ARRAY (u32), the element type (u32) and the length (u64) the array has;
    for an array of a fixed-size type, exactly ``length`` × its size bytes; at ``end``, the next GGUF string, which
    is ``following`` (the next metadata key, else the first tensor's name), or the end of ``data`` when there is
    none. An entry kept by this code always holds; one whose offsets were moved inside the header (a byte on, a
    byte short, onto the array's own type and length) gave the sha256 of those bytes as the array's (slip 55) and
    is a miss. Exact for the array's start and for fixed-size elements; for strings the end is pinned by the string
    after it. Raises nothing."""
    name = key.encode("utf-8")
    element = value.element_type
    etype = _ARRAY if element.startswith("array") else _TYPE_ID.get(element.upper())
    if etype is None or type(value.length) is not int or not 0 <= value.length < 2**64:
        return False  # a kept length no u64 holds (-1, 2^64, 1100.0): struct.pack raised struct.error (attack 60)
    before = struct.pack(f"{order}Q", len(name)) + name + struct.pack(f"{order}IIQ", _ARRAY, etype, value.length)
    if start < len(before) or data[start - len(before):start] != before:
        return False
    size = _SIZE.get(etype)
    if size is not None and end - start != value.length * size:
        return False
    if following is None:
        return end == len(data)
    after = following.encode("utf-8")
    return data[end:end + 8 + len(after)] == struct.pack(f"{order}Q", len(after)) + after


def _keep(real: str, cap: int, header: GGUFHeader, spans: dict[str, tuple[int, int]] | None) -> None:
    """Keep the header parsed from the plain, unsplit file resolved as ``real`` under ``cap`` in the cache folder,
    for :func:`_seen_before`, as a tuple of its fields and its tensors' rows (built again by their constructors: half
    the load of the pickled objects) and ``spans``, each long array's elements' offsets when it was read without their
    digests (else ``None``); silently nothing when the cache is bypassed or cannot be written. (The file's status is
    vouched for by the next read, :func:`_seen_before`: a file read once is kept in one entry.)"""
    from passprice import cache

    rows = tuple((t.name, t.dims, t.type_id, t.offset) for t in header.tensors)
    kept = (header.version, header.byte_order, header.metadata, header.value_types, rows, header.header_bytes,
            header.alignment, header.data_offset, header.sha256, spans)
    cache.keep_object(_KEPT_KIND, _kept_data(real, cap), kept)


def read_header(path: str | os.PathLike[str], *, cache: bool = True, array_digests: bool = True) -> GGUFHeader:
    """The header of the GGUF file at ``path``: a plain ``.gguf`` (complete, header-only, or truncated anywhere
    after its tensor-info table) or an xz- or gzip-compressed one (told by its first bytes, not its suffix).

    Only the header bytes are read, a chunk at a time (never the tensor data; never the whole file into memory).
    For a shard of a split checkpoint (``NAME-00002-of-00003.gguf`` with ``split.count`` 3), every shard's header
    is read and their tensor tables joined (:class:`GGUFHeader`). With ``cache`` (the default), a header read before
    in this process from the same unchanged files (same resolved path, size and mtime in ns) is returned again, the
    same object; and a plain, unsplit file's header read before by any process (kept in passprice's cache folder
    unless the cache is bypassed) is read again from there when the file's header bytes still hash to its sha256
    (:func:`_seen_before`): an equal header, at the cost of reading and hashing those bytes.

    ``array_digests=False``: each long array's :attr:`LongArray.sha256` may be ``None`` (not part of a header's
    equality; ``passprice header`` shows none): its elements are hashed once, into the header's sha256, where a
    digest takes them a second time (gemma3 270M's vocabulary: 6.5 MB of the header's 6.5 MB hashed again, about a
    fifth of a first read). A reader asking for the digests is never handed a header without them: in the process the
    two reads are kept apart; a header kept in the cache folder without them is kept with their elements' offsets,
    and a reader asking for them hashes those bytes of the header it reads anyway (no string walked).

    Raises :class:`HeaderError` (file, byte offset, what was wrong: bad magic, unknown version, a count or length the
    file cannot hold, a key or tensor name that is not UTF-8, a tensor of more than 4 dimensions, an unknown value
    type, a header that ends early, a missing shard) or :class:`InputError` (no such file, cannot decompress).
    """
    path = Path(path)
    cap = header_cap()  # read from the environment every time: a header cached under one cap is not under another
    key = _stat_key(path)
    if cache and key is not None:
        hit = _CACHE.get(key[0])
        if (
            hit is not None
            and hit[0][0] == key
            and hit[2] == cap
            and (hit[3] or not array_digests)
            and all(_stat_key(Path(k[0])) == k for k in hit[0][1:])
        ):
            _CACHE.move_to_end(key[0])
            return hit[1]
    # The file's status before any of its bytes are read: a write from now on moves it (_status_stamp).
    stamp = _status_stamp(key[0]) if cache and key is not None else None
    seen = _seen_before(key[0], path, cap, array_digests, stamp) if cache and key is not None else None
    if seen is not None:
        header, paths = seen, [path]
    else:
        first = _parse_file(path, [], array_digests)
        if _split_count(first) > 1:
            # The joined sha256 starts as the first file's own (its bytes are hashed once, not twice).
            header, paths = _read_split(path, first, first.hasher.copy())
        else:
            header, paths = _single(first, path.name, str(path)), [path]
            if cache and key is not None and first.sized:
                _keep(key[0], cap, header, first.spans)
    if cache and key is not None:
        keys = [key, *(_stat_key(p) for p in paths if p != path)]
        if all(k is not None for k in keys):
            _CACHE[key[0]] = (tuple(k for k in keys if k is not None), header, cap, array_digests)
            _CACHE.move_to_end(key[0])
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    return header
