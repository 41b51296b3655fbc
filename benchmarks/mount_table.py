"""``memo._types`` (the file system types the mount table gives a device) on hostile tables (left44): one line of
1 MB naming the device every 6 bytes, not a real kernel's output, against the function it replaced (kept here, each
occurrence's line cut out and split again: quadratic), with 1 MB of ordinary lines, read by the new one, as the
yardstick run in the same process. CPU seconds (``time.process_time``), medians of 3; the old one is run on 64 KB of
the one-line table only (1 MB took 17 s). Run from a checkout: ``python benchmarks/mount_table.py``. Not a test.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

from passprice import memo


def before(table: bytes, dev: int) -> list[bytes]:
    """``memo._types`` before left44."""
    name = b" %d:%d " % (os.major(dev), os.minor(dev))
    types = []
    start = table.find(name)
    while start >= 0:
        begin = table.rfind(b"\n", 0, start) + 1
        end = table.find(b"\n", start)
        line = table[begin:] if end < 0 else table[begin:end]
        fields = line.split(b" ", 3)
        if len(fields) > 3 and b" %s " % fields[2] == name:
            _, sep, tail = line.partition(b" - ")
            types.append(tail.split(b" ", 1)[0] if sep else b"")
        start = table.find(name, start + 1)
    return types


def cpu(run: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def now(table: bytes, dev: int) -> list[bytes]:
    memo._mounts = table
    return memo._types(dev)


if __name__ == "__main__":
    dev = os.makedev(0, 80)
    one_line = b"1 1 0:80 / /m rw - tmpfs" + b" 0:80 " * (1_000_000 // 6)
    small = one_line[:65_536]
    ordinary = b"".join(b"%d 1 0:%d / /mnt%d rw,relatime shared:1 - ext4 /dev/x rw\n" % (i, i, i)
                        for i in range(17_000))[:1_000_000]
    assert now(small, dev) == before(small, dev)[:1] and now(ordinary, os.makedev(0, 80)) == [b"ext4"]
    yard = cpu(lambda: now(ordinary, os.makedev(0, 80)))
    old_small, new_small = cpu(lambda: before(small, dev)), cpu(lambda: now(small, dev))
    new_big = cpu(lambda: now(one_line, dev))
    print(f"one line, 64 KB: {old_small:.4f} -> {new_small:.5f} s; "
          f"one line, 1 MB: 17 s (left44's task) -> {new_big:.5f} s; "
          f"1 MB of ordinary lines (yardstick): {yard:.5f} s; 1 MB one line / yardstick {new_big / yard:.2f}")
