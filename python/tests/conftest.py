"""Shared fixtures: where the source tree and the build are."""

import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
BINARY_DIR = pathlib.Path(os.environ.get("IL_BINARY_DIR", SOURCE_DIR / "build"))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh current directory, so default stores and destinations land in it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
