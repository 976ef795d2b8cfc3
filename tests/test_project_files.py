"""The project files agree with the package: one version number, py.typed shipped, a valid
CITATION.cff and a changelog entry for the version."""

from __future__ import annotations

import importlib.metadata
import pathlib
import re
import tomllib

import gbrank

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_version_is_the_installed_metadata_version():
    assert gbrank.__version__ == importlib.metadata.version("gbrank")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gbrank._version.__version__"}


def test_py_typed_is_shipped():
    assert (ROOT / "gbrank" / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["gbrank"]


def test_citation_cff_names_this_version():
    text = (ROOT / "CITATION.cff").read_text()
    fields = dict(re.findall(r"^([a-z-]+):\s*(.*)$", text, flags=re.M))
    assert fields["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "license"):
        assert key in fields, key
    assert fields["version"].strip('"') == gbrank.__version__
    assert fields["license"] == "MIT"


def test_changelog_has_an_entry_for_this_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {gbrank.__version__}" in text and "## Unreleased" in text
