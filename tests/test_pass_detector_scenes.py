"""The pass detector and the timed press gate on drawn scenes, where every pixel is known.

Why drawn scenes: the two cases here come from the benchmark's own envs, where the sliding object
may have the target's colour. A purple object larger than the disc must not be taken for the
target, and its crossing must count although, over the disc, it differs from the background only at
its edges. The gate's two executor facts (does a press wait for the arrival itself; has the last
wait run out) are checked on the same scene.
"""

from __future__ import annotations

import numpy as np
import pytest

from memory.contract.frames import Frame
from memory.events.passes import PassConfig, PassDetector
from memory.language.spec import specify
from memory.store.memory_store import MemoryStore
from memory.tools.pass_timer import PassTimer

TABLE = (170, 110, 70)
PURPLE = (150, 60, 170)
DISC = (100, 130)
STRIDE = 4  # steps between rendered frames


def scene(object_x: float | None, size: int = 18) -> np.ndarray:
    """A 256 x 256 view: table, a purple disc of radius 9 at DISC, and a purple square at (DISC row, x)."""
    img = np.zeros((256, 256, 3), dtype=np.uint8)
    img[:] = TABLE
    yy, xx = np.mgrid[:256, :256]
    img[(yy - DISC[0]) ** 2 + (xx - DISC[1]) ** 2 <= 81] = PURPLE
    if object_x is not None:
        x0, y0 = int(round(object_x)) - size // 2, DISC[0] - size // 2
        img[y0:y0 + size, x0:x0 + size] = PURPLE
    return img


def object_path() -> list[float]:
    """Standing at x = 40 for two frames (an eased start), then 5 px per frame to x = 220 and back."""
    out = [40.0, 40.0]
    x = 40.0
    while x < 220:
        x += 5
        out.append(x)
    while x > 40:
        x -= 5
        out.append(x)
    return out


def test_a_purple_object_larger_than_the_disc_is_not_the_target_and_its_passes_count():
    d = PassDetector(PassConfig())
    d.reset()
    path = object_path()
    for i, x in enumerate(path):
        d.update(Frame(step=i * STRIDE, rgb=scene(x), source="live"))
    assert d.target is not None and np.hypot(d.target[0] - DISC[0], d.target[1] - DISC[1]) <= 3
    # over the disc at x = 130: on the way out and on the way back
    crossings = [i * STRIDE for i, x in enumerate(path) if x == 130.0]
    assert len(d.arrivals) == 2
    # the object has the disc's very colour, so over the disc only its corners differ from the
    # background (too small to be a sighting): the crossing is read from the sightings either side,
    # up to three frames late, the same on both passes, so the period stays exact
    assert all(0 <= a - c <= 3 * STRIDE for a, c in zip(d.arrivals, crossings))
    assert d.arrivals[1] - d.arrivals[0] == pytest.approx(crossings[1] - crossings[0], abs=2)


def _timer_after_one_arrival(**settings) -> tuple[PassTimer, MemoryStore, int]:
    store = MemoryStore()
    tool = PassTimer(**settings)
    tool.reset(specify("press the button to stop the cube just as it reaches the target for the second time"), store)
    step = 0
    for i, x in enumerate(object_path()[:30]):  # out past the disc, not back yet: no period measured
        step = i * STRIDE
        tool.observe(Frame(step=step, rgb=scene(x), source="live"), store)
    assert len(tool.arrivals) == 1 and tool.period() is None
    return tool, store, step


PRESS = "press the button to stop the cube on the target at <100, 130>"


def test_a_press_whose_arrival_time_is_unknown_goes_only_to_an_executor_that_waits_for_it():
    waits, store, _ = _timer_after_one_arrival(release_unknown=True)
    assert waits.gated(PRESS, store) is None  # released: the executor times the press itself
    at_once, store, _ = _timer_after_one_arrival(release_unknown=False)
    assert at_once.gated(PRESS, store) == "remain static"


def test_a_wait_that_no_longer_moves_the_clock_releases_the_press():
    tool, store, step = _timer_after_one_arrival(release_unknown=False)
    assert tool.gated(PRESS, store) == "remain static"
    # the executor's wait has run out: the next decision comes at the same step
    assert tool.gated(PRESS, store) is None
    assert tool._decisions[-1] == {"step": step, "count": 1, "meet": [2, None], "release": True}


def test_tool_settings_naming_no_tool_are_refused():
    from memory.tools.registry import default_tools

    with pytest.raises(KeyError, match="'pass_timr'"):
        default_tools(settings={"pass_timr": {"release_unknown": False}})
    timer = next(t for t in default_tools(settings={"pass_timer": {"release_unknown": False}}) if t.name == "pass_timer")
    assert timer.config.release_unknown is False


@pytest.mark.parametrize("press, wait", [("push the stop button", "stay still"), ("hit the button at <40, 120>", "wait")])
def test_a_press_and_a_wait_worded_otherwise_are_gated_alike(press, wait):
    tool, store, _ = _timer_after_one_arrival(release_unknown=False)
    assert tool.gated(press, store) == "remain static"  # read as a press: not yet due, so it waits
    tool, store, _ = _timer_after_one_arrival(release_unknown=False)
    assert tool.gated(wait, store) is None and len(tool._decisions) == 1  # read as a wait: decided, left alone
    assert tool.gated("lift the cube", store) is None and len(tool._decisions) == 1  # not the gate's: undecided
    assert tool.gated(press, store) is None and tool._released == press  # the clock did not move: it goes now
