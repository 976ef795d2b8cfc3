"""The documentation site builds (``mkdocs build --strict``) and its API pages list every
public name of every sub-package (their ``__all__``), so that neither can rot."""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# sub-package -> its API page (docs/api/<page>.md); the optional library its import needs
PAGES = {"gbrank": "gbrank", "gbrank.metrics": "metrics", "gbrank.evaluation": "evaluation",
         "gbrank.lambdas": "lambdas", "gbrank.bounds": "bounds", "gbrank.backends": "backends",
         "gbrank.estimators": "estimators", "gbrank.datasets": "datasets", "gbrank.interactions": "interactions",
         "gbrank.torch": "torch", "gbrank.dask": "dask", "gbrank.bench": "bench"}
NEEDS = {"gbrank.torch": "torch"}


def _public_names(module) -> list[str]:
    """``__all__``, or for a package of lazy names without one, those names."""
    return list(getattr(module, "__all__", None) or getattr(module, "_LAZY", {}))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("mkdocs and mkdocstrings are not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    yield out
    shutil.rmtree(out, ignore_errors=True)


def test_site_builds_with_every_page(site):
    for page in ["index", "metrics", "objectives", "bounds", "torch", "dask", "bench", "results", "gallery"]:
        assert (site / page / "index.html").is_file() or (site / f"{page}.html").is_file() \
            or (page == "index" and (site / "index.html").is_file()), page
    for figure in (ROOT / "docs").glob("gallery/*.png"):
        assert (site / "gallery" / figure.name).is_file()


def test_the_nav_lists_every_docs_page():
    nav = (ROOT / "mkdocs.yml").read_text()
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.name not in nav]
    assert not missing, f"mkdocs.yml's nav misses {missing}"
    missing = [p for p in PAGES.values() if f"api/{p}.md" not in nav]
    assert not missing, f"mkdocs.yml's nav misses the API pages {missing}"


@pytest.mark.parametrize("package", list(PAGES))
def test_api_page_documents_every_public_name(site, package):
    if package in NEEDS and importlib.util.find_spec(NEEDS[package]) is None:
        pytest.skip(f"{package} needs {NEEDS[package]}")
    module = importlib.import_module(package)
    html = (site / "api" / PAGES[package] / "index.html").read_text()
    anchors = set(re.findall(r'id="([^"]+)"', html))
    missing = []
    for name in _public_names(module):
        if f"{package}.{name}" in anchors:
            continue
        value = getattr(module, name)
        if getattr(value, "__name__", None) in PAGES:  # a sub-package: it has its own page
            continue
        missing.append(name)
    assert not missing, f"docs/api/{PAGES[package]}.md does not document {missing}"
