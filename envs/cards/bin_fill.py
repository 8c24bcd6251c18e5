"""BinFill: the counting suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

CARD = register(TaskCard(
    name="BinFill",
    suite="counting",
    rank=1,
    code=4,
    env_class="envs.tasks.bin_fill:BinFill",
    # ood: deposits [3-5] out of [10-12] on the table
    ood_tiers=(
        {"deposits": 6, "spawn": 12, "colours": (2, 3)},
        {"deposits": 7, "spawn": 12, "colours": 3},
    ),
    official_history_choices=(OfficialChoice("which colour next, or stop", ("pick up the cube", "press the button"), "after_first"),),
))
