"""``report.html`` opened in a real headless browser (Debian's Chromium), as a user opens it (issue 25).

Chromium is driven over its DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages separated by NUL bytes on fds 3 and 4, no network): the page is loaded
from its file, console messages and uncaught exceptions are collected, and every
image's ``naturalWidth`` read from the DOM (0: a broken image). The reference is the
browser's own rendering, not pardyn's text.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pardyn.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4 (answers and events out)."""

    def __init__(self, profile: Path):
        if CHROMIUM is None:
            raise AssertionError("chromium is not installed (apt-get install chromium; .ci/run installs it)")
        commands, self._to_browser = os.pipe()
        self._from_browser, answers = os.pipe()

        def pipes():  # in the child: its fd 3 reads our commands, its fd 4 writes its answers
            os.dup2(commands, 103)  # out of the way first: commands or answers may be fd 3 or 4
            os.dup2(answers, 104)
            os.dup2(103, 3)
            os.dup2(104, 4)

        # pass_fds keeps 3 and 4 open in the child (fds outside it are closed after preexec_fn)
        self.process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        preexec_fn=pipes, pass_fds=(3, 4, commands, answers),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands)
        os.close(answers)
        self._buffer = b""
        self._next = 0
        self.events: list[dict] = []

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise AssertionError("chromium did not answer within the time limit")
            chunk = os.read(self._from_browser, 65536)
            if not chunk:
                raise AssertionError(f"chromium closed its pipe (exit {self.process.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, session: str | None = None, timeout_s: float = 30.0, **params) -> dict:
        self._next += 1
        request = {"id": self._next, "method": method, "params": params}
        if session:
            request["sessionId"] = session
        os.write(self._to_browser, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._message(deadline)
            if message.get("id") == self._next:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)

    def wait_for(self, method: str, timeout_s: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout_s
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            message = self._message(deadline)
            self.events.append(message)
            if message.get("method") == method:
                return message

    def close(self):
        try:
            self.call("Browser.close", timeout_s=5.0)
        except AssertionError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def open_page(browser: Browser, url: str) -> tuple[str, list[str], list]:
    """Load ``url`` in a new tab: (session, console messages and exceptions, [[complete, naturalWidth], ...])."""
    target = browser.call("Target.createTarget", url="about:blank")["targetId"]
    session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        browser.call(f"{domain}.enable", session)
    browser.call("Page.navigate", session, url=url)
    browser.wait_for("Page.loadEventFired")
    images = browser.call("Runtime.evaluate", session, returnByValue=True,
                          expression="JSON.stringify([...document.images].map(i => [i.complete, i.naturalWidth]))")
    problems = []
    for event in browser.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            problems.append(f"console {params['type']}: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            problems.append(f"exception: {params.get('exceptionDetails')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            problems.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
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


def test_the_html_report_loads_in_chromium_without_errors_and_its_images_render(report, tmp_path):
    page = report / "report.html"
    text = page.read_text(encoding="utf-8")
    assert "<table>" in text and "Regrouping relations" in text and "%sigma" in text and "estimator: wls" in text
    assert "Against the truth" in text and "the floor" in text
    assert "src=\"http" not in text and "<script" not in text  # self-contained: opens offline, from anywhere
    moved = tmp_path / "elsewhere.html"  # the page alone, without its PNG files beside it
    moved.write_text(text, encoding="utf-8")
    browser = Browser(tmp_path / "profile")
    try:
        _, problems, images = open_page(browser, moved.as_uri())
    finally:
        browser.close()
    assert problems == []
    assert len(images) == 3  # fit, residuals, validation
    assert all(complete and width > 0 for complete, width in images), images


def test_a_broken_image_and_a_console_error_are_seen_by_the_check(tmp_path):
    """The check itself: an image that does not decode gives naturalWidth 0, a console error is collected."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><body><img src="data:image/png;base64,AAAA">'
                    '<script>console.error("boom")</script></body></html>')
    browser = Browser(tmp_path / "profile")
    try:
        _, problems, images = open_page(browser, page.as_uri())
    finally:
        browser.close()
    assert images == [[True, 0]]
    assert len(problems) == 1 and "boom" in problems[0]
