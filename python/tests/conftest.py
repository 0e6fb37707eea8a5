"""Where the corpora are: ../shared beside the repository (the tests fail loudly without)."""

import json
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "alone: measures a thread's speed; .ci/run runs it after the rest, nothing beside it")


def _need(p: Path) -> Path:
    if not p.exists():
        raise FileNotFoundError(f"{p} is missing: the corpora live in ../shared beside the repository")
    return p


@pytest.fixture(scope="session")
def bags_dir() -> Path:
    return _need(SHARED / "bags")


@pytest.fixture(scope="session")
def bags2_dir() -> Path:
    return _need(SHARED / "bags2")


@pytest.fixture(scope="session")
def expected(bags_dir):
    return json.loads((bags_dir / "expected.json").read_text())


@pytest.fixture(scope="session")
def cli() -> Path:
    """The command-line binary of the same checkout (built by `cargo build`)."""
    for p in [ROOT / "target" / "debug" / "bagscope", ROOT / "target" / "release" / "bagscope"]:
        if p.exists():
            return p
    raise FileNotFoundError("build the command line first: cargo build")


@pytest.fixture
def in_two_threads():
    """Runs `take(0)` and `take(1)` on two threads at once and fails if either has not finished
    within a minute (an iterator that deadlocks holding the GIL hangs the process instead)."""

    def run(take, seconds=60):
        threads = [threading.Thread(target=take, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=seconds)
        assert not any(t.is_alive() for t in threads), "a thread did not finish"

    return run
