"""VideoPlaceButton: the reference suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="VideoPlaceButton",
    suite="reference",
    rank=3,
    code=10,
    env_class="envs.tasks.video_place_button:VideoPlaceButton",
    # ood: targets [hard count]: one and two more
    ood_tiers=(
        {"extra_targets": 1},
        {"extra_targets": 2},
    ),
    official_history_options={"drop onto": "which target"},
))
