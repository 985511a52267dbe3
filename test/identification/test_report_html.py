"""``report.html`` opened in a real headless browser (Debian's Chromium), as a user opens it (issue 25).

Chromium is driven over its DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages separated by NUL bytes on fds 3 and 4, no network): the page is loaded
from its file, console messages and uncaught exceptions are collected, and every
image's ``naturalWidth`` read from the DOM (0: a broken image). The reference is the
browser's own rendering, not pardyn's text.
"""

from __future__ import annotations

import json

import pytest

from pardyn.cli import main


def open_page(browser, url: str) -> tuple[str, list[str], list]:
    """Load ``url`` in a new tab: (session, console messages and exceptions, [[complete, naturalWidth], ...])."""
    target = browser.call("Target.createTarget", url="about:blank")["targetId"]
    session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        browser.call(f"{domain}.enable", session)
    browser.call("Page.navigate", session, url=url)
    browser.wait_for("Page.loadEventFired")
    images = browser.call("Runtime.evaluate", session, returnByValue=True,
                          expression="JSON.stringify([...document.images].map(i => [i.complete, i.naturalWidth]))")
    problems = browser.problems()
    return session, problems, json.loads(images["result"]["value"])


@pytest.fixture(scope="module")
def report(tmp_path_factory, vendor):
    import pardyn  # noqa: PLC0415

    folder = tmp_path_factory.mktemp("report")
    robot = pardyn.load_robot("ur5e")
    truth = vendor.truth(robot)
    vendor.write(folder / "run.csv", robot, truth, 5.0, seed=3)
    vendor.write(folder / "held_out.csv", robot, truth, 4.0, seed=4)
    (folder / "truth.json").write_text(json.dumps({"standard_parameters": truth.as_dict()}))
    assert main(["identify", "--robot", "ur5e", "--run", str(folder / "run.csv"), "--validate",
                 str(folder / "held_out.csv"), "--columns", vendor.columns, "--time-unit", "samples", "--rate",
                 "1000", "--truth", str(folder / "truth.json"), "--out", str(folder / "out.json"),
                 "--report", str(folder / "report")]) == 0
    return folder / "report"


def test_the_html_report_loads_in_chromium_without_errors_and_its_images_render(report, tmp_path, chromium):
    page = report / "report.html"
    text = page.read_text(encoding="utf-8")
    assert "<table>" in text and "Regrouping relations" in text and "%sigma" in text and "estimator: wls" in text
    assert "Against the truth" in text and "the floor" in text
    assert "src=\"http" not in text and "<script" not in text  # self-contained: opens offline, from anywhere
    moved = tmp_path / "elsewhere.html"  # the page alone, without its PNG files beside it
    moved.write_text(text, encoding="utf-8")
    browser = chromium(tmp_path / "profile")
    try:
        _, problems, images = open_page(browser, moved.as_uri())
    finally:
        browser.close()
    assert problems == []
    assert len(images) == 3  # fit, residuals, validation
    assert all(complete and width > 0 for complete, width in images), images


def test_a_broken_image_and_a_console_error_are_seen_by_the_check(tmp_path, chromium):
    """The check itself: an image that does not decode gives naturalWidth 0, a console error is collected."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><body><img src="data:image/png;base64,AAAA">'
                    '<script>console.error("boom")</script></body></html>')
    browser = chromium(tmp_path / "profile")
    try:
        _, problems, images = open_page(browser, page.as_uri())
    finally:
        browser.close()
    assert images == [[True, 0]]
    assert len(problems) == 1 and "boom" in problems[0]
