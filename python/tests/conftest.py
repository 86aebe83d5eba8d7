"""Paths shared by the tests: the repository's examples, the test models and the
`fdc` binary of the same workspace (FDC_BIN, default target/debug/fdc)."""

import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXAMPLES = ROOT / "examples"
MODELS = HERE / "models"


def example(name: str) -> str:
    return str(EXAMPLES / name)


def model(name: str) -> str:
    return str(MODELS / name)


@pytest.fixture(scope="session")
def fdc_bin() -> str:
    path = pathlib.Path(os.environ.get("FDC_BIN", ROOT / "target" / "debug" / "fdc"))
    if not path.is_file():
        pytest.fail(f"no fdc binary at {path} (cargo build -p fdc, or set FDC_BIN)")
    return str(path)
