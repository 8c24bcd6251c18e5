"""Perception and event tools that write evidence into memory.

Each tool is a :class:`~memory.tools.base.Tool`. Import concrete tools from their own
modules (``memory.tools.colour_blobs``) so that a tool's heavier dependencies load only
when it is used.
"""

from memory.tools.base import Tool

__all__ = ["Tool"]
