"""``pardyn view``'s 3D scene opened in headless Chromium: the robot is drawn where it projects, sliders move it.

The scene is served by :mod:`pardyn.scene.viewer` in this process (viser on a free port); Chromium renders it
with WebGL (software). The robot's pixels are found by difference: a screenshot with the robot minus one with
it hidden. They must lie where the model projects through the browser's own camera (position, orientation and
field of view read back from the client), computed here with a pinhole model; a slider moved through viser's
server-side API must move the platform's pixels to where its new pose projects.
"""

from __future__ import annotations

import base64
import io
import math
import time

import numpy as np
import pytest

from pardyn.robot import load_robot

WIDTH, HEIGHT = 1000, 700
PANEL = (WIDTH - 340, 350)  # the GUI panel's corner (x from, y to): its text changes with the configuration


@pytest.fixture(scope="module")
def served():
    from pardyn.scene.viewer import SceneView, add_sliders, start_server, stop_server  # noqa: PLC0415

    server = start_server(port=0)
    robot = load_robot("dualv")
    view = SceneView(server, robot)
    sliders = add_sliders(view)
    yield server, view, sliders
    stop_server(server)


@pytest.fixture(scope="module")
def page(served, tmp_path_factory, chromium):
    server = served[0]
    browser = chromium(tmp_path_factory.mktemp("chromium"))
    try:
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        browser.call("Page.enable", session)
        browser.call("Emulation.setDeviceMetricsOverride", session, width=WIDTH, height=HEIGHT, deviceScaleFactor=1,
                     mobile=False)
        browser.call("Page.navigate", session, url=f"http://127.0.0.1:{server.get_port()}")
        deadline = time.monotonic() + 60
        while not server.get_clients():
            assert time.monotonic() < deadline, "the page never connected to the viser server"
            time.sleep(0.1)
        (client,) = server.get_clients().values()
        yield browser, session, client
    finally:
        browser.close()


def screenshot(browser, session) -> np.ndarray:
    from PIL import Image  # noqa: PLC0415 - matplotlib's dependency

    data = base64.b64decode(browser.call("Page.captureScreenshot", session, format="png")["data"])
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.int16)


def settled(browser, session, timeout_s: float = 30.0) -> np.ndarray:
    """A screenshot once two in a row, 0.4 s apart, are the same (the scene is drawn and still)."""
    deadline = time.monotonic() + timeout_s
    last = screenshot(browser, session)
    while True:
        time.sleep(0.4)
        shot = screenshot(browser, session)
        if np.array_equal(shot, last):
            return shot
        assert time.monotonic() < deadline, "the page never stopped changing"
        last = shot


def changed(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """(row, column) of the pixels that differ (any channel by more than 40), the GUI panel left out."""
    mask = np.abs(first - second).max(axis=2) > 40
    mask[: PANEL[1], PANEL[0]:] = False
    return np.argwhere(mask)


def project(client, points: np.ndarray) -> np.ndarray:
    """Pixels (x, y) of world points (k, 3) through the client's camera (OpenCV frame: +z forward, +y down)."""
    import pinocchio as pin  # noqa: PLC0415

    camera = client.camera
    w, x, y, z = camera.wxyz
    rotation = pin.Quaternion(w, x, y, z).matrix()  # camera to world
    local = (np.asarray(points) - camera.position) @ rotation
    focal = 0.5 * HEIGHT / math.tan(0.5 * camera.fov)
    return np.column_stack([0.5 * WIDTH + focal * local[:, 0] / local[:, 2],
                            0.5 * HEIGHT + focal * local[:, 1] / local[:, 2]])


def near(pixels: np.ndarray, point: np.ndarray, radius: float) -> int:
    """How many of ``pixels`` (row, column) lie within ``radius`` px of ``point`` (x, y)."""
    return int((np.hypot(pixels[:, 1] - point[0], pixels[:, 0] - point[1]) < radius).sum())


def test_the_robot_is_drawn_where_the_model_projects(served, page):
    server, view, _ = served
    browser, session, client = page
    with_robot = settled(browser, session)
    view.root.visible = False
    without = settled(browser, session)
    view.root.visible = True
    robot_pixels = changed(with_robot, without)
    assert len(robot_pixels) > 3000, f"only {len(robot_pixels)} pixels of robot"
    frame = view.frame
    corners = project(client, frame.skeleton.reshape(-1, 3))
    for point in project(client, np.vstack([frame.platform[:3, 3], frame.closure_points])):
        assert near(robot_pixels, point, 15) > 0, f"nothing drawn at {point} where the model projects"
    low, high = corners.min(axis=0) - 40, corners.max(axis=0) + 40
    inside = ((robot_pixels[:, 1] >= low[0]) & (robot_pixels[:, 1] <= high[0]) & (robot_pixels[:, 0] >= low[1])
              & (robot_pixels[:, 0] <= high[1]))
    assert inside.mean() > 0.97, f"{100 * (1 - inside.mean()):.1f} % of the robot's pixels out of its projection"


def test_moving_a_slider_moves_the_platform(served, page):
    server, view, sliders = served
    browser, session, client = page
    before_frame = view.frame
    before = settled(browser, session)
    sliders.sliders[0].value = float(sliders.sliders[0].value) + 0.25  # rad, as a user drags it
    after_frame = view.frame
    assert sliders.message == "", sliders.message
    moved = after_frame.platform[:3, 3] - before_frame.platform[:3, 3]
    assert np.linalg.norm(moved) > 0.01, moved
    after = settled(browser, session)
    pixels = changed(before, after)
    old, new = project(client, np.array([before_frame.platform[:3, 3], after_frame.platform[:3, 3]]))
    assert np.hypot(*(new - old)) > 5, "the move is too small to see"
    assert near(pixels, new, 15) > 0 and near(pixels, old, 15) > 0, "the platform's pixels did not move"
    # the loops stay closed along the move, and the GUI says so
    assert after_frame.residual < 1e-9 and "closed" in sliders.status.content
