"""The default tool set of the memory layer: every tool registered with ``@register_tool``.

A tool registers itself where it is defined (:func:`memory.tools.base.register_tool`, with its
place in the layer's loop); this module only imports the tool modules and builds one fresh
instance of each. The experiment harness removes groups or read kinds per ablation
(``experiments/loop/memory_factory.py``). Every tool only sees frames, actions, the goal and the
proposed subgoal.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any

import memory.tools as _package
from memory.tools.base import REGISTERED_TOOLS, Tool

__all__ = ["default_tools", "make_tool", "registered_tools", "tool_thresholds"]

_NOT_TOOLS = {"base", "registry"}


def registered_tools() -> list[tuple[int, type[Tool], dict]]:
    """``(order, class, kwargs)`` of every registered tool, in loop order (imports every tool module once)."""
    for module in pkgutil.iter_modules(_package.__path__):
        if module.name not in _NOT_TOOLS:
            importlib.import_module(f"{_package.__name__}.{module.name}")
    return sorted(REGISTERED_TOOLS, key=lambda entry: entry[0])


def default_tools(exclude: frozenset[str] = frozenset(), perception=None,
                  settings: Mapping[str, Mapping[str, Any]] | None = None) -> list[Tool]:
    """A fresh instance of every registered tool (tools keep per-episode state) whose name is not in
    ``exclude``, each handed ``perception`` (:class:`memory.perception.Perception`; ``None``: the colour default).

    ``settings`` maps a tool's name to constructor arguments that replace its registered ones (what
    the deployment fixes, such as how the executor carries out a press); a name no tool has is a
    ``KeyError`` naming it, so a misspelt setting cannot silently change nothing."""
    entries = registered_tools()
    settings = dict(settings or {})
    unknown = sorted(set(settings) - {cls.name for _, cls, _ in entries})
    if unknown:
        raise KeyError(f"tool settings for {', '.join(map(repr, unknown))}: no registered tool has that name "
                       f"(registered: {', '.join(cls.name for _, cls, _ in entries)})")
    tools = [t for t in (cls(**{**kwargs, **settings.get(cls.name, {})}) for _, cls, kwargs in entries)
             if t.name not in exclude]
    if perception is not None:
        for tool in tools:
            tool.use_perception(perception)
    return tools


def make_tool(name: str, perception=None) -> Tool:
    """A fresh instance of the registered tool called ``name``; ``KeyError`` lists the names."""
    tools = {t.name: t for t in default_tools(perception=perception)}
    if name not in tools:
        raise KeyError(f"no registered tool is called {name!r} (registered: {', '.join(tools)})")
    return tools[name]


def _json_ready(value):
    """``value`` with tuples as lists and dict keys as strings (what ``json.dumps`` writes anyway), so a
    record read back from JSON compares equal to the one written."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_ready(v) for v in value]
    return value


def tool_thresholds(tools: list[Tool] | None = None) -> dict[str, list[dict]]:
    """Per tool name, the thresholds it decides with (:meth:`Tool.thresholds`), JSON-ready:
    ``[{"kind": <dataclass name>, **fields}, ...]``. ``tools``: the default set when ``None``.

    Raises:
        TypeError: a tool's thresholds include something that is not a frozen dataclass instance.
    """
    out: dict[str, list[dict]] = {}
    for tool in default_tools() if tools is None else tools:
        rows = []
        for th in tool.thresholds():
            if not (dataclasses.is_dataclass(th) and not isinstance(th, type) and th.__dataclass_params__.frozen):
                raise TypeError(f"{tool.name}.thresholds() returned {th!r}; it returns frozen dataclass instances")
            rows.append({"kind": type(th).__name__, **_json_ready(dataclasses.asdict(th))})
        out[tool.name] = rows
    return out
