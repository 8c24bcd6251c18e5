"""PickHighlight: the reference suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="PickHighlight",
    suite="reference",
    rank=1,
    code=12,
    env_class="envs.tasks.pick_highlight:PickHighlight",
    # ood: picks [3] of [6] cubes in red/green/blue, the colour named
    ood_tiers=(
        {"cubes": 7, "highlights": 4, "any_hue": 1},
        {"cubes": 8, "highlights": 5, "any_hue": 1},
    ),
    official_history_options={"pick up the highlighted cube": "which cube"},
))
