"""URDF fuzzing in a process of its own (``test_fuzz.py::test_urdf_fuzz``): ``python urdf_fuzz.py N``.

N mutated copies of the five-bar's URDF (hypothesis, derandomized) go through
``pardyn robots --describe`` in this process. Each example is printed before it
runs, so that if pinocchio crashes (a signal: the parent test sees it) the last
line names the culprit. Exit 0 and ``N examples`` when every run gave exit 0 or
one line with exit 2.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pardyn.cli import main

REPO = Path(__file__).resolve().parents[2]
URDF = (REPO / "urdf" / "five_bar.urdf").read_text()
ROOT = ET.fromstring(URDF)
LINKS = [link.get("name") for link in ROOT.findall("link")]
ELEMENTS = [(index, element.tag) for index, element in enumerate(ROOT.iter())]
JUNK = st.sampled_from(["nan", "inf", "-1", "-1e308", "1e308", "", "abc", "0 0 0", "1 2", "1e999", "-0",
                        "0 0 1e308", "nan 0 0", "1" + "0" * 400, "revolute", "fixed", "continuous"])
count = 0


def mutate(data) -> str:
    root = ET.fromstring(URDF)
    elements = list(root.iter())
    kind = data.draw(st.sampled_from(["attribute", "swap", "duplicate", "delete", "rename"]))
    element = elements[data.draw(st.integers(1, len(elements) - 1))]
    if kind == "attribute" and element.attrib:
        key = data.draw(st.sampled_from(sorted(element.attrib)))
        element.set(key, data.draw(JUNK))
    elif kind == "swap":  # parent/child links pointed elsewhere: cycles, self-joints, two parents, unknown links
        ends = [e for e in root.iter() if e.tag in ("parent", "child")]
        end = data.draw(st.sampled_from(ends))
        end.set("link", data.draw(st.sampled_from(LINKS + ["nowhere"])))
    elif kind == "duplicate":
        copy = ET.fromstring(ET.tostring(element))
        root.append(copy)
    elif kind == "delete":
        parent = next((p for p in root.iter() if element in list(p)), None)
        if parent is not None:
            parent.remove(element)
    else:
        element.set("name", data.draw(st.sampled_from(LINKS + ["", "leg1_joint1", "x y"])))
    return ET.tostring(root, encoding="unicode")


@settings(max_examples=int(sys.argv[1]) if len(sys.argv) > 1 else 20, derandomize=True, deadline=None,
          database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def fuzz(data) -> None:
    global count
    text = mutate(data)
    with tempfile.TemporaryDirectory() as folder:
        description = yaml.safe_load((REPO / "config" / "robots" / "five_bar.yaml").read_text())
        description["urdf"] = "robot.urdf"
        (Path(folder) / "robot.urdf").write_text(text)
        (Path(folder) / "robot.yaml").write_text(yaml.safe_dump(description))
        print(f"example {count}:\n{text}", file=sys.stderr, flush=True)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(["robots", "--describe", str(Path(folder) / "robot.yaml")])
            except SystemExit as stop:
                code = stop.code
        line = err.getvalue().strip()
        assert code in (0, 2), (code, err.getvalue())
        assert code == 0 or (line and "\n" not in line and "Traceback" not in line), err.getvalue()
    count += 1


if __name__ == "__main__":
    fuzz()
    print(f"{count} examples: every one accepted or refused in one line")
