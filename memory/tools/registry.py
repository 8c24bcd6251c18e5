"""The default tool set of the memory layer: every tool registered with ``@register_tool``.

A tool registers itself where it is defined (:func:`memory.tools.base.register_tool`, with its
place in the layer's loop); this module only imports the tool modules and builds one fresh
instance of each. The experiment harness removes groups or read kinds per ablation
(``experiments/memory_factory.py``). Every tool only sees frames, actions, the goal and the
proposed subgoal.
"""

from __future__ import annotations

import importlib
import pkgutil

import memory.tools as _package
from memory.tools.base import REGISTERED_TOOLS, Tool

__all__ = ["default_tools", "make_tool", "registered_tools"]

_NOT_TOOLS = {"base", "registry"}


def registered_tools() -> list[tuple[int, type[Tool], dict]]:
    """``(order, class, kwargs)`` of every registered tool, in loop order (imports every tool module once)."""
    for module in pkgutil.iter_modules(_package.__path__):
        if module.name not in _NOT_TOOLS:
            importlib.import_module(f"{_package.__name__}.{module.name}")
    return sorted(REGISTERED_TOOLS, key=lambda entry: entry[0])


def default_tools(exclude: frozenset[str] = frozenset(), perception=None) -> list[Tool]:
    """A fresh instance of every registered tool (tools keep per-episode state) whose name is not in
    ``exclude``, each handed ``perception`` (:class:`memory.perception.Perception`; ``None``: the colour default)."""
    tools = [t for t in (cls(**kwargs) for _, cls, kwargs in registered_tools()) if t.name not in exclude]
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
