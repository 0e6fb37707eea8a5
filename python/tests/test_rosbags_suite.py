"""rosbags' own AnyReader tests run against ``bagscope.rosbags.AnyReader``.

``tests/rosbags/highlevel/test_anyreader.py`` of the rosbags 0.11.9 source distribution is
downloaded with pip at test time (never copied into this repository) and run unchanged, with a
conftest that swaps ``rosbags.highlevel.AnyReader`` (and ``AnyReaderError``) for the drop-in's:
the change of one import a script makes. The fixtures still write their recordings with
rosbags' writers.
"""

import re
import subprocess
import sys
import tarfile

# Tests that reach into rosbags' private internals, which no other reader has: each is
# deselected, with why. Every other test of the file must pass.
EXCLUDED = {
    "test_anyreader1": "after its public assertions (which pass: no path, a missing path, "
    "'not open' before open(), 'seems to be empty'), it asserts on rosbags' per-file reader "
    "objects (`reader.readers[i].bio`); the several-bag part is held in test_rosbags_shim.py",
    "test_anyreader2_autoregister": "patches rosbags' private `Reader2` class and "
    "`Typestore.register`",
    "test_anyreader_uses_default_typestore": "patches rosbags' private `Reader2` class (bagscope "
    "needs no typestore: definitions a recording lacks come from the ones it ships)",
    "test_anyreader_raises_on_missing_typestore": "patches rosbags' private `Reader2` class",
    "test_registration_failure_rolls_back_open_readers": "patches rosbags' private "
    "`get_types_from_msg` and reads `reader.readers[0].storage`",
    "test_schema_failure_rolls_back_open_readers": "after the hash mismatch (which the drop-in "
    "raises, with rosbags' phrase) it reads rosbags' private `reader.readers[0].storage.storages`",
}

ROSBAGS = "rosbags==0.11.9"
SUITE = "tests/rosbags/highlevel/test_anyreader.py"

CONFTEST = '''\
"""Swaps rosbags' AnyReader for bagscope's drop-in (written by bagscope's test)."""
import bagscope.rosbags
import rosbags.highlevel

rosbags.highlevel.AnyReader = bagscope.rosbags.AnyReader
rosbags.highlevel.AnyReaderError = bagscope.rosbags.AnyReaderError


def pytest_collection_modifyitems(items):
    """Every test module sees the drop-in, or the run is void."""
    for item in items:
        assert item.module.AnyReader is bagscope.rosbags.AnyReader, item.nodeid
    print("bagscope drop-in under test:", len(items), "tests")
'''


def test_rosbags_own_anyreader_tests_pass_against_the_drop_in(tmp_path):
    dl = tmp_path / "sdist"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--no-binary", ":all:", ROSBAGS, "-d", str(dl)],
        check=True,
    )
    (archive,) = dl.glob("rosbags-*.tar.gz")
    with tarfile.open(archive) as tar:
        root = tar.getnames()[0].split("/")[0]
        members = [m for m in tar.getmembers() if m.name.startswith(f"{root}/tests/")]
        tar.extractall(tmp_path, members=members, filter="data")
    tests = tmp_path / root / "tests"
    (tests / "conftest.py").write_text(CONFTEST)
    suite = tests.parent / SUITE
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(suite)],
        cwd=tests.parent, capture_output=True, text=True,
    )
    names = {re.sub(r"\[.*", "", line.split("::")[-1]) for line in collected.stdout.splitlines() if "::" in line}
    assert set(EXCLUDED) <= names, f"excluded tests that rosbags' file no longer has: {set(EXCLUDED) - names}"
    deselect = [a for name in EXCLUDED for a in ("--deselect", f"{SUITE}::{name}")]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *deselect, str(suite)],
        cwd=tests.parent, capture_output=True, text=True,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "bagscope drop-in under test: 19 tests" in run.stdout, run.stdout[-2000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    # 19 tests in rosbags 0.11.9's file (parametrized cases counted, all seeing the drop-in),
    # 6 deselected.
    assert passed == 13 and "failed" not in summary, summary
