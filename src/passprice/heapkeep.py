"""A process that makes a long text a block at a time keeps the heap memory it frees for its next block, rather than
handing it back to the kernel and asking for fresh pages again.

glibc's ``malloc`` serves a block above its mmap threshold (128 KiB at first, raised to the size of the largest such
block freed, at most 32 MiB) with a mapping of its own, unmapped when freed, and gives the top of its heap back to the
kernel whenever more than its trim threshold (twice that) lies free there. A sweep makes each group of rows' text (a
few megabytes: the floats' texts, the list of pieces, the joined text, its encoded bytes) and frees it before the
next: the heap's top swung past the threshold group after group, so its pages went back to the kernel and were
faulted in afresh (zeroed) for the next group. The bench grid's ``sweep --json`` (1,000,875 rows, 486 MB) took
117,593 minor page faults and 0.35 s of system time writing to ``/dev/null``, against 12,569 and 0.07 s with both
thresholds fixed (medians of 5, ``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` set; issue 16, round 20). A
fault costs more in a virtual machine that hands freed pages back to its host.

:func:`keep_freed` fixes both thresholds with ``mallopt`` (``ctypes``): blocks up to :data:`MMAP_BELOW` come from the
heap, and the heap's top is given back only past :data:`TRIM_ABOVE` free. The peak of memory in use is unchanged
(what is kept is what the process used before); only its return to the kernel waits. Elsewhere (macOS, musl,
Windows) nothing is done.
"""

from __future__ import annotations

import os

#: ``mallopt``'s parameters (glibc's ``malloc.h``).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3

#: Blocks smaller than this come from the heap, not a mapping of their own: glibc's largest mmap threshold on a
#: 64-bit system (``DEFAULT_MMAP_THRESHOLD_MAX``; ``mallopt`` refuses more).
MMAP_BELOW = 32 << 20

#: The heap's free top is given back to the kernel only past this many bytes.
TRIM_ABOVE = 256 << 20


def _glibc() -> bool:
    """Whether this process runs on glibc (``confstr``'s ``CS_GNU_LIBC_VERSION``, answered by glibc alone)."""
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError, AttributeError):
        return False


def keep_freed(libc: object = None) -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_BELOW` and its trim threshold at :data:`TRIM_ABOVE` for the rest of
    the process (and the workers it forks): whether both were set. ``libc``: the C library to call (default: the
    process's own, through :mod:`ctypes`; a test passes a stand-in). Raises nothing: where there is no glibc, or no
    ``mallopt``, it returns ``False`` and changes nothing."""
    if libc is None:
        if not _glibc():
            return False
        try:
            import ctypes

            libc = ctypes.CDLL(None)
        except OSError:  # pragma: no cover - a process without a C library to open
            return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_BELOW)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_ABOVE))
