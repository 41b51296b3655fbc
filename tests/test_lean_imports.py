"""What the console script imports that a command does not use (performance round 19, issue 16): :mod:`pathlib`
imports :mod:`urllib.parse` (and :mod:`ipaddress`) for ``Path.as_uri`` alone, 8.5 M of the 380 M instructions of a
price run afresh; the console script imports it without them
(:func:`passprice.entry.pathlib_without_urls`), and ``as_uri`` and a later ``import urllib.parse`` still work. Nor does
it import :mod:`platform` (7.6 M more) for the two answers click's ``uuid`` and attrs ask of it at import
(:func:`passprice.entry.platform_stand_in`): they are the real module's answers, and anything else asked of the
stand-in is the real module's."""

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
print("loaded:" + ",".join(sorted(m for m in ("urllib.parse", "ipaddress", "pathlib", "platform") if m in sys.modules)))
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


def test_the_platform_stand_in_answers_as_the_real_module_does() -> None:
    # click's uuid and attrs read platform.system() and platform.python_implementation() at import; after a
    # command, the real module is not imported, their answers are the real module's, and any other name asked of
    # the stand-in they keep is the real module's (imported then)
    code = (
        "import sys\n"
        "sys.argv = ['passprice', 'explain', 'binds']\n"
        "from passprice import entry\n"
        "try:\n"
        "    entry.main()\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "print('platform' in sys.modules)\n"
        "import attr._compat, uuid, click\n"
        "kept = attr._compat.platform\n"
        "print(type(kept).__name__, attr._compat.PYPY, uuid._LINUX, uuid._AIX)\n"
        "machine = kept.machine()\n"
        "import platform\n"
        "print(platform is not kept, machine == platform.machine(), platform.system() == kept.system(),\n"
        "      platform.python_implementation() == kept.python_implementation(),\n"
        "      uuid._LINUX == (platform.system() == 'Linux'))\n"
        "print(click.UUID.convert('12345678-1234-4678-8234-567812345678', None, None).version)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()[-4:]
    assert lines[0] == "False", done.stdout
    assert lines[1] == f"_PlatformStandIn False {sys.platform == 'linux'} False", lines
    assert lines[2:] == ["True True True True True", "4"], lines


def test_no_stand_in_when_platform_is_imported_already() -> None:
    code = (
        "import sys, platform\n"
        "from passprice import entry\n"
        "print(entry.platform_stand_in() is None, sys.modules['platform'] is platform)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True True\n"
