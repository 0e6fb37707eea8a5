"""Where the corpora are: ../shared beside the repository (the tests fail loudly without)."""

import json
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
