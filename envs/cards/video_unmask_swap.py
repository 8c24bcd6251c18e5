"""VideoUnmaskSwap: the permanence suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="VideoUnmaskSwap",
    suite="permanence",
    rank=3,
    code=5,
    env_class="envs.tasks.video_unmask_swap:VideoUnmaskSwap",
    # ood: swaps [2-3], picks [2]
    ood_tiers=(
        {"swaps": (3, 4), "picks": 2, "new_colours": 1},
        {"swaps": (4, 5), "picks": 2, "new_colours": 1},
        {"swaps": (5, 6), "picks": 3, "new_colours": 1},
        {"swaps": (6, 7), "picks": 3, "new_colours": 1},
    ),
    official_history_options={"pick up the container": "which container"},
))
