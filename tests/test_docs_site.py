"""The documentation site builds with ``mkdocs build --strict``, warning-free (issue 28).

Strict mode turns every warning into a failure: a broken link or anchor, a page left out of
the nav, a snippet whose file is gone, a docstring mkdocstrings cannot parse. The build also
runs the two generators the site relies on — the CLI reference (``docs/_hooks/cli_reference.py``
walks the Typer app) and the API reference (mkdocstrings over the package, with the lazy
packages' names read by ``docs/_hooks/lazy_exports.py``) — so the checks below look for what
each must have produced. The README's relative links are checked here too, since the README
is not part of the site.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = 300  # a safety net: the build takes ~5 s on a quiet machine, ~12 s on a busy one


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is missing: pip install -e '.[docs]' (part of the dev extra)")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # Material's banner, not a build warning
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=REPO,  # the snippets' base path (benchmarks/RESULTS.md) is the repository
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    log = done.stdout + done.stderr
    warnings = [line for line in log.splitlines() if re.match(r"^\W*(WARNING|ERROR)\b", line)]
    assert done.returncode == 0 and warnings == [], f"mkdocs build --strict failed:\n{log[-4000:]}"
    return out


@pytest.mark.slow
def test_the_site_builds_strictly(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "getting-started/index.html").is_file()


@pytest.mark.slow
def test_the_cli_reference_lists_every_command_with_its_options(site: Path) -> None:
    html = (site / "cli/index.html").read_text(encoding="utf-8")
    for command in ("langmarl-magrpo-train", "langmarl-p2p-run", "langmarl-jobs-submit"):
        assert f'id="{command}"' in html, command
    assert "--resume" in html and "--runs-dir" in html
    assert "<!-- cli-reference -->" not in html


@pytest.mark.slow
def test_the_api_reference_documents_the_lazy_packages_too(site: Path) -> None:
    # names served by a lazy table (`__all__ = sorted(_NAMES)`) and by a plain __all__
    assert 'id="langmarl.MAGRPOTrainer"' in (site / "api/langmarl/index.html").read_text()
    assert 'id="langmarl.magrpo.MAGRPOConfig"' in (site / "api/magrpo/index.html").read_text()
    assert 'id="langmarl.store.RunDir"' in (site / "api/store/index.html").read_text()
    assert 'id="langmarl.store.kinds.RunKindSpec"' in (site / "api/kinds/index.html").read_text()


@pytest.mark.slow
def test_the_benchmarks_page_includes_the_results_file(site: Path) -> None:
    html = (site / "benchmarks/index.html").read_text(encoding="utf-8")
    first_section = next(
        line[3:]
        for line in (REPO / "benchmarks/RESULTS.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    )
    assert first_section.split(":")[0] in html


def test_every_relative_link_of_the_readme_exists() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links to the docs"
    assert [t for t in local if not (REPO / t).exists()] == []


RAW_ROLE = re.compile(r":(?:py:)?(?:meth|func|class|mod|attr|data|exc|obj|const):(?:`|<code>)")
"""A Sphinx role as a page would show it raw: as typed, or with its target made a code span."""


@pytest.mark.slow
def test_the_api_reference_shows_no_raw_sphinx_roles(site: Path) -> None:
    # docs/_hooks/sphinx_roles.py rewrites the docstrings' roles as code before rendering
    pages = sorted((site / "api").rglob("*.html"))
    assert len(pages) >= 10
    raw = {
        page.relative_to(site).as_posix(): RAW_ROLE.findall(page.read_text(encoding="utf-8"))
        for page in pages
    }
    assert {page: found for page, found in raw.items() if found} == {}
    store = (site / "api/store/index.html").read_text(encoding="utf-8")
    assert "created on <code>start</code>" in store  # RunDir's ":meth:`start`", as code


@pytest.mark.slow
def test_the_site_asks_no_other_host_for_fonts(site: Path) -> None:
    # theme.font: false: the system's fonts, so the site renders offline
    for page in ("index.html", "api/store/index.html"):
        html = (site / page).read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in html and "fonts.gstatic.com" not in html, page
