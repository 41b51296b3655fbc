"""What the console script imports that a command does not use (performance round 19, issue 16): :mod:`pathlib`
imports :mod:`urllib.parse` (and :mod:`ipaddress`) for ``Path.as_uri`` alone, 8.5 M of the 380 M instructions of a
price run afresh; the console script imports it without them
(:func:`passprice.entry.pathlib_without_urls`), and ``as_uri`` and a later ``import urllib.parse`` still work. (A
stand-in for :mod:`platform`, 7.6 M more, was declined: it would stay click's ``uuid``'s and attrs' ``platform`` for
the whole run, a standard module replaced in the process, as round 16 declined one for :mod:`inspect`.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_RUN = """
import sys
sys.argv = ["passprice", *{args!r}]
from passprice import entry
try:
    entry.main()
except SystemExit as e:
    assert e.code == 0, e.code
print("loaded:" + ",".join(sorted(m for m in ("urllib.parse", "ipaddress", "pathlib") if m in sys.modules)))
"""


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO, env=env)


def test_a_price_afresh_from_the_console_script_imports_pathlib_without_urllib_parse(tmp_path: Path) -> None:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache"), "PASSPRICE_NO_MEMO": "1"}
    for args in (["price", "r1-qwen7b-h200", "--json"], ["price", "r1-qwen7b-h200", "--json"],
                 ["best", "r1-qwen7b-h200", "--json"]):
        done = _python(_RUN.format(args=args), env)
        assert done.returncode == 0, done.stderr
        # the first run fills the cache (jsonschema may import urllib.parse for itself); a warm one does not
        last = done.stdout.splitlines()[-1]
        assert last.startswith("loaded:"), done.stdout[-300:]
    assert last == "loaded:pathlib", last


def test_as_uri_and_a_later_import_of_urllib_parse_still_work() -> None:
    code = (
        "import sys\n"
        "from passprice.entry import pathlib_without_urls\n"
        "pathlib_without_urls()\n"
        "print('urllib.parse' in sys.modules, 'pathlib' in sys.modules)\n"
        "import pathlib\n"
        "print(pathlib.Path('/a b/\\u00e9').as_uri())\n"
        "import urllib.parse\n"
        "print(urllib.parse.urlsplit('https://example.org/x?y=1').query, urllib.parse.quote_from_bytes(b'a b'))\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False True", "file:///a%20b/%C3%A9", "y=1 a%20b"]


def test_nothing_is_replaced_when_urllib_parse_is_imported_already() -> None:
    code = (
        "import sys, urllib.parse\n"
        "real = sys.modules['urllib.parse']\n"
        "from passprice.entry import pathlib_without_urls\n"
        "pathlib_without_urls()\n"
        "import pathlib\n"
        "print(sys.modules['urllib.parse'] is real, pathlib.urlquote_from_bytes is real.quote_from_bytes)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True True\n"
