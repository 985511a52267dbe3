"""The documentation site (doc/, Sphinx + MyST + furo) built and opened in headless Chromium (issue 35).

The build is Sphinx's with ``-W --keep-going -n`` (a warning, an unresolved reference or a page missing from the
toctree fails it) over the narrative pages (``PARDYN_DOCS_API=0``: the API reference's ~220 autodoc pages take
minutes on 2 cores; ``make docs`` builds them with the same flags). Every page is then loaded from its file in
Chromium over the DevTools protocol (test/conftest.py's ``Browser``) and fails on

* a console error or warning, or an uncaught exception,
* an image that does not decode (``naturalWidth`` 0),
* an internal link to a file that is not there, or to an anchor the target page does not have (the ids read
  from the browser's DOM of that page, so a heading anchor MyST did not write is seen).

The reference is the browser's own reading of the site, not Sphinx's report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

REPO = Path(__file__).resolve().parents[1]

PAGE_FACTS = """JSON.stringify({
  links: [...document.querySelectorAll('a[href]')].map(a => a.href),
  images: [...document.images].map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth]),
  ids: [...document.querySelectorAll('[id]')].map(e => e.id),
})"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The narrative site built once for this module into a temporary folder (warnings are errors)."""
    html = tmp_path_factory.mktemp("site") / "html"
    environment = {**os.environ, "PARDYN_DOCS_API": "0", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
                           "-d", str(html.parent / "doctrees"), str(REPO / "doc"), str(html)],
                          env=environment, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-5000:]
    return html


def visit(browser, url: str) -> tuple[list[str], dict]:
    """Load ``url`` in a new tab: (its console errors and exceptions, its links, images and ids)."""
    target = browser.call("Target.createTarget", url="about:blank")["targetId"]
    session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        browser.call(f"{domain}.enable", session)
    browser.events.clear()
    browser.call("Page.navigate", session, url=url)
    loaded = next((event for event in browser.events if event.get("method") == "Page.loadEventFired"
                   and event.get("sessionId") == session), None)
    while loaded is None:
        loaded = browser.wait_for("Page.loadEventFired")
        if loaded.get("sessionId") != session:
            browser.events.remove(loaded)
            loaded = None
    facts = browser.call("Runtime.evaluate", session, returnByValue=True, expression=PAGE_FACTS)
    problems = browser.problems(session)
    browser.call("Target.closeTarget", targetId=target)
    return problems, json.loads(facts["result"]["value"])


def check_site(html: Path, browser) -> list[str]:
    """Every page of ``html`` opened in ``browser``: the problems found, one line each (empty: none)."""
    pages = sorted(html.rglob("*.html"))
    problems, facts = [], {}
    for page in pages:
        found, facts[page] = visit(browser, page.as_uri())
        problems += [f"{page.relative_to(html)}: {problem}" for problem in found]
        problems += [f"{page.relative_to(html)}: image does not render: {src}"
                     for src, complete, width in facts[page]["images"] if not (complete and width > 0)]
    ids = {page: set(fact["ids"]) for page, fact in facts.items()}
    for page, fact in facts.items():
        for link in fact["links"]:
            url = urlparse(link)
            if url.scheme != "file":
                continue
            target = Path(unquote(url.path))
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{page.relative_to(html)}: broken link {link}")
            elif url.fragment and target in ids and unquote(url.fragment) not in ids[target]:
                problems.append(f"{page.relative_to(html)}: no anchor #{url.fragment} in {target.name}")
    return problems


def test_the_site_opens_in_chromium_without_a_broken_link_image_or_console_error(site, tmp_path, chromium):
    pages = sorted(site.rglob("*.html"))
    assert {"index.html", "tutorials/own_robot.html", "reference/nodes.html", "data.html"} <= {
        str(page.relative_to(site)) for page in pages}
    nodes = (site / "reference" / "nodes.html").read_text()
    assert "stall_timeout" in nodes and "<table" in nodes  # the generated parameter tables are in the page
    browser = chromium(tmp_path / "profile")
    try:
        problems = check_site(site, browser)
    finally:
        browser.close()
    assert problems == [], "\n".join(problems)


def test_the_check_sees_a_broken_link_a_missing_image_and_a_console_error(tmp_path, chromium):
    """The check itself, on a two-page site with one of each defect."""
    html = tmp_path / "html"
    html.mkdir()
    (html / "other.html").write_text('<!DOCTYPE html><html><body><h1 id="here">x</h1></body></html>')
    (html / "index.html").write_text(
        '<!DOCTYPE html><html><body><a href="other.html#here">fine</a><a href="other.html#gone">anchor</a>'
        '<a href="missing.html">file</a><img src="absent.png"><script>console.error("boom")</script></body></html>')
    browser = chromium(tmp_path / "profile")
    try:
        problems = check_site(html, browser)
    finally:
        browser.close()
    text = "\n".join(problems)
    assert "broken link" in text and "missing.html" in text, text
    assert "no anchor #gone in other.html" in text, text
    assert "image does not render" in text and "absent.png" in text, text
    assert "boom" in text, text
    assert "#here" not in text, text
