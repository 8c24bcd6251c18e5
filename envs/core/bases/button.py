"""The mixin of every task with a button: press detection (:class:`ButtonMixin`)."""

from __future__ import annotations

from envs.core import primitives as P


class ButtonMixin:
    """Press detection with a rising edge, shared by every task with a button."""

    def button_pressed(self, button) -> bool:
        return P.button_depth(button) > P.BUTTON_PRESSED_DEPTH
