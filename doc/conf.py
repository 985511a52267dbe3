"""Sphinx configuration of pardyn's documentation (``make docs``; rosdoc2 finds it in ``doc/``).

Pages are Markdown (MyST); the node reference is generated from :mod:`pardyn.node_parameters` at every build
(one source), the API reference from the docstrings (autodoc/autosummary over ``src/pardyn``).
"""

from __future__ import annotations

import builtins
import os
import re
import sys
import types
from pathlib import Path

DOC = Path(__file__).resolve().parent
sys.path.insert(0, str(DOC.parent / "src"))  # the checkout's sources (rosdoc2 builds from the package folder)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MUJOCO_GL", "disable")

import pardyn  # noqa: E402

# autosummary imports every submodule it lists; pardyn.cli.__main__ would run the command line on Sphinx's argv.
sys.modules.setdefault("pardyn.cli.__main__", types.ModuleType("pardyn.cli.__main__"))

project = "pardyn"
author = "pardyn contributors"
copyright = "pardyn contributors, BSD-3-Clause"  # noqa: A001
version = release = pardyn.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    # Google-style sections (Args:, Returns:, Raises:) by napoleon's parser, applied in setup() to everything
    # but attributes and properties: those docstrings are prose ("Degree of redundancy: actuators minus ..."),
    # which napoleon would read as "type: description".
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
html_theme = "furo"
html_title = f"pardyn {release}"
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
suppress_warnings: list[str] = []
if os.environ.get("PARDYN_DOCS_API") == "0":  # the narrative pages only (test/test_docs_site.py: a quick build)
    exclude_patterns += ["reference/api.rst", "reference/generated"]
    suppress_warnings += ["toc.excluded", "toc.not_readable"]

autosummary_generate = True
autosummary_ignore_module_all = True
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True,
                           "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True

nitpicky = True
# Third-party types named in signatures and docstrings (no intersphinx: the build runs offline).
THIRD_PARTY = [
    "np.ndarray", "numpy.ndarray", "ndarray", "np.dtype", "numpy.dtype", "np.random.Generator",
    "numpy.random.Generator", "numpy.typing.ArrayLike", "ArrayLike", "NDArray", "numpy.typing.NDArray",
    "pinocchio.Model", "pinocchio.Data", "pin.Model", "pin.Data", "pinocchio.SE3", "pin.SE3",
    "mujoco.MjModel", "mujoco.MjData", "casadi.SX", "casadi.Function", "ca.SX",
    "rclpy.node.Node", "Node", "rclpy.qos.QoSProfile", "rclpy.time.Time", "rclpy.executors.Executor",
    "scipy.sparse.csr_matrix", "matplotlib.figure.Figure", "matplotlib.axes.Axes", "Figure", "Axes",
    "distributed.Client", "dask.distributed.Client", "distributed.LocalCluster",
    "cvxpy.Problem", "yaml.Node", "viser.ViserServer",
    # rclpy's Node methods, named short in the nodes' docstrings
    "create_timer", "create_subscription", "create_service", "create_publisher", "create_guard_condition",
    "create_client",
]
# The standard library's types (no intersphinx: they are not documented here).
STANDARD_LIBRARY = [
    "pathlib.Path", "Path", "collections.abc.Sequence", "collections.abc.Callable", "collections.abc.Mapping",
    "collections.abc.Iterator", "collections.abc.Iterable", "collections.abc.Generator", "collections.abc.Hashable",
    "collections.abc.MutableMapping", "collections.abc.Set", "concurrent.futures.Future", "threading.Event",
    "threading.Thread", "threading.Lock", "subprocess.Popen", "io.TextIOBase", "typing.Any", "typing.TextIO",
    "typing.IO", "enum.Enum", "argparse.ArgumentParser", "argparse.Namespace", "logging.Logger", "datetime.datetime",
    "os.PathLike", "types.ModuleType", "ctypes.CDLL", "queue.Queue", "signal.Signals", "socket.socket",
]
nitpick_ignore = [(role, name) for name in THIRD_PARTY + STANDARD_LIBRARY
                  for role in ("py:class", "py:obj", "py:data", "py:mod", "py:exc", "py:func", "py:meth")]
# Third-party packages whose objects appear in signatures under their internal module paths
# (pinocchio.pinocchio_pywrap_default.Model, std_msgs.msg._float64_multi_array.Float64MultiArray, ...).
THIRD_PARTY_PACKAGES = ["pinocchio", "casadi", "mujoco", "rosbags", "mcap", "rclpy", "numpy", "scipy", "matplotlib",
                        "cvxpy", "dask", "distributed", "viser", "yaml", "h5py", "std_msgs", "sensor_msgs",
                        "geometry_msgs", "trajectory_msgs", "visualization_msgs", "rosgraph_msgs", "std_srvs",
                        "builtin_interfaces", "rcl_interfaces", "xml", "abc", "datetime", "reprlib", "warnings",
                        "typing", "collections", "enum", "dataclasses", "ctypes", "concurrent", "contextlib"]
nitpick_ignore_regex = [(r"py:.*", rf"{package}(\..*)?") for package in THIRD_PARTY_PACKAGES]


def write_node_parameters(target: Path) -> None:
    """The node parameter tables, generated from :mod:`pardyn.node_parameters` (one source) for ``{include}``."""
    from pardyn.node_parameters import markdown  # noqa: PLC0415

    target.parent.mkdir(parents=True, exist_ok=True)
    text = markdown()
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


def _resolve_by_suffix(app, env, node, contnode):  # noqa: ANN001, ANN202
    """A Python cross-reference written short or through a re-export (``:class:`InputError```,
    ``:class:`pardyn.Robot```, ``:func:`pardyn.bags.repair_bag```) resolved to the one documented object whose
    full name ends with it, leading package names dropped one by one, as ``.InputError`` would be; one to a
    private helper (``:func:`_base_system```, not part of the API reference) shown as code. Ambiguous or absent:
    left to Sphinx (a nitpicky warning)."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    if target.rsplit(".", 1)[-1].startswith("_") and not target.rsplit(".", 1)[-1].startswith("__"):
        return contnode
    domain = env.get_domain("py")
    parts = target.split(".")
    module = node.get("py:module") or ""
    for start in range(len(parts)):
        suffix = ".".join(parts[start:])
        found = [name for name in domain.objects if name == suffix or name.endswith("." + suffix)]
        if len(found) > 1 and module:
            found = [name for name in found if name.startswith(module.rsplit(".", 1)[0] + ".")] or found
        if len(found) == 1:
            obj = domain.objects[found[0]]
            from sphinx.util.nodes import make_refnode  # noqa: PLC0415

            return make_refnode(app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, found[0])
        if found:
            break  # ambiguous: only the module and class the reference is written in can tell
    if _exists(target, node.get("py:module"), node.get("py:class")):
        return contnode  # a real object the API reference does not list (no docstring): shown as code
    return None


def _assigned_on_self(klass: type, attribute: str) -> bool:
    import inspect  # noqa: PLC0415

    try:
        source = inspect.getsource(klass)
    except (OSError, TypeError):
        return False
    return re.search(rf"self\.{re.escape(attribute)}\s*(:[^=\n]*)?=", source) is not None


def _exists(target: str, module: str | None, klass: str | None) -> bool:
    """Whether ``target`` names an object of the code: a full dotted name, or one relative to the module
    (and class) the reference is written in; an instance attribute counts when a method of its class assigns it
    (``self.last_error = ...``)."""
    import importlib  # noqa: PLC0415

    candidates = [target]
    if module:
        candidates += [f"{module}.{klass}.{target}" if klass else f"{module}.{target}", f"{module}.{target}"]
    for name in candidates:
        parts = name.split(".")
        for split in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:split]))
            except ImportError:
                continue
            rest = parts[split:]
            for index, attribute in enumerate(rest):
                if not hasattr(obj, attribute):
                    if index == len(rest) - 1 and isinstance(obj, type) and _assigned_on_self(obj, attribute):
                        return True
                    break
                obj = getattr(obj, attribute)
            else:
                return True
            break
    return False


_INLINE_LITERAL = re.compile(r"(``.+?``)")


def _escape_bars(app, what, name, obj, options, lines):  # noqa: ANN001, ANN202, ARG001, PLR0913
    """Docstrings write norms and absolute values as ``|x|`` in plain text; reST would read a substitution.
    Escape each ``|`` outside inline literals and literal blocks, on lines that are not a grid table or line
    block."""
    literal_indent = None  # inside a literal block (after a line ending in ``::``): the paragraph's indent
    after_colons = None
    for index, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if line.strip():
            if literal_indent is not None and indent <= literal_indent:
                literal_indent = None
            if after_colons is not None:
                literal_indent, after_colons = (after_colons if indent > after_colons else None), None
            if literal_indent is None and line.rstrip().endswith("::"):
                after_colons = indent
        stripped = line.strip()
        table_or_line_block = stripped == "|" or stripped.startswith(("| ", "+-", "+="))
        if literal_indent is not None or "|" not in line or table_or_line_block:
            continue
        parts = _INLINE_LITERAL.split(line)
        lines[index] = "".join(part if part.startswith("``") else part.replace("|", r"\|") for part in parts)


_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))


def _builtins_first(find_obj):  # noqa: ANN001, ANN202
    """A type annotation's ``type``/``list``/... is the builtin, never an attribute that happens to share its
    name (``MjcfClosure.type``): the Python domain's fuzzy search would pick one and warn."""
    def find(self, env, modname, classname, name, type, searchmode=0):  # noqa: ANN001, ANN202, A002, PLR0913
        if searchmode == 1 and name in _BUILTINS:
            return []
        return find_obj(self, env, modname, classname, name, type, searchmode)
    return find


def _google_sections(app, what, name, obj, options, lines):  # noqa: ANN001, ANN202, PLR0913
    """napoleon's Google-style parser on every docstring but an attribute's, a property's or a datum's."""
    if what in ("attribute", "property", "data"):
        return
    from sphinx.ext.napoleon import Config, GoogleDocstring  # noqa: PLC0415

    parsed = GoogleDocstring(lines, Config(napoleon_use_rtype=False, napoleon_use_ivar=True), app, what, name, obj,
                             options).lines()
    # "task_indices, actuated_indices, sensed_indices: ..." is one entry for several names; Sphinx would read a
    # field "ivar TYPE NAME" and cross-reference the first word as a type.
    lines[:] = [_MULTI_NAME.sub(lambda m: m.group(1) + m.group(2).replace(", ", ",") + ":", line) for line in parsed]


_MULTI_NAME = re.compile(r"^(:(?:ivar|param|raises) )([\w.]+(?:, [\w.]+)+):")


def _modules_first(import_by_name):  # noqa: ANN001, ANN202
    """``pardyn.identification.base_parameters`` is a module and the package's re-exported function of that
    name: autosummary would document the function under the module's name (and none of the module)."""
    def find(name, grouped_exception=True):  # noqa: ANN001, ANN202, FBT002
        obj, parent, modname = import_by_name(name, grouped_exception)
        module = sys.modules.get(name)
        if module is not None and obj is not module and isinstance(module, types.ModuleType):
            return module, None, name
        return obj, parent, modname
    return find


def setup(app):  # noqa: ANN001, ANN201
    import sphinx.ext.autosummary as autosummary  # noqa: PLC0415

    autosummary._import_by_name = _modules_first(autosummary._import_by_name)  # noqa: SLF001
    app.connect("autodoc-process-docstring", _google_sections)
    from sphinx.domains.python import PythonDomain  # noqa: PLC0415

    PythonDomain.find_obj = _builtins_first(PythonDomain.find_obj)
    app.connect("autodoc-process-docstring", _escape_bars)
    write_node_parameters(DOC / "_generated" / "node_parameters.md")
    app.connect("missing-reference", _resolve_by_suffix)
