"""pytest setup for the xlac Python package tests: they import `xlac` from the build tree (PYTHONPATH=build/python;
ctest's `python_api` entry sets it)."""

import os

import pytest


def pytest_configure(config):
    try:
        import xlac  # noqa: F401 - only checks that it imports
    except ImportError as e:
        raise pytest.UsageError(
            f"cannot import xlac ({e}); build it (ninja -C build xlac_python) and run with PYTHONPATH=build/python"
        )


@pytest.fixture
def source_dir():
    return os.environ.get("XLAC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
