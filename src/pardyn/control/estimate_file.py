"""The estimate file a controller is asked to adopt: the ``online_estimate`` entry of a parameters file.

Kept apart from :mod:`pardyn.identification.online` (SciPy, the regressor) so that the controller's swap request
reads it without importing anything heavy in a callback: an import there held the executor thread for
0.1-0.5 s, during which ``/clock`` lagged and the watchdog, under ``use_sim_time``, commanded zero torque.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pardyn.errors import InputError

__all__ = ["ESTIMATE_KEY", "check_estimate_file"]

ESTIMATE_KEY = "online_estimate"
"""Key of a saved estimate's conditioning in its parameters file."""


def check_estimate_file(path: str | Path, *, max_condition: float) -> dict[str, Any]:
    """The ``online_estimate`` entry of a parameters file a controller is asked to adopt (``{}`` if none).

    Raises:
        InputError: no such file (the estimate is not available: nothing saved yet), not JSON, or an
            estimate whose condition number is missing, non-finite or not below ``max_condition``.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no estimate available: {path} does not exist (the identifier's ~/save writes it "
                         "once its estimate is well conditioned)")
    try:
        content = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: not a readable parameters file: {error}") from error
    entry = content.get(ESTIMATE_KEY) if isinstance(content, dict) else None
    if entry is None:
        return {}
    condition = entry.get("condition") if isinstance(entry, dict) else None
    if not isinstance(condition, (int, float)) or not math.isfinite(condition) or condition >= max_condition:
        raise InputError(f"{path}: estimate ill-conditioned ({ESTIMATE_KEY}.condition {condition!r}, "
                         f"accepted below {max_condition:g})")
    return dict(entry)
