"""VideoRepick: the reference suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="VideoRepick",
    suite="reference",
    rank=2,
    code=9,
    env_class="envs.tasks.video_repick:VideoRepick",
    # ood: swaps [..], re-picks [1-3]
    ood_tiers=(
        {"cubes": 4, "swaps": (4, 5), "repeats": 2},
        {"cubes": 5, "swaps": (5, 6), "repeats": 3},
    ),
    official_history_options={"pick up the cube": "which cube"},
))
