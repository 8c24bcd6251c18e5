"""VideoPlaceOrder: the reference suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="VideoPlaceOrder",
    suite="reference",
    rank=4,
    code=11,
    env_class="envs.tasks.video_place_order:VideoPlaceOrder",
    # ood: placements [2-4] of four targets
    ood_tiers=(
        {"targets": 5},
        {"targets": 6},
    ),
    official_history_options={"drop onto": "which target"},
))
