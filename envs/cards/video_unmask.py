"""VideoUnmask: the permanence suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="VideoUnmask",
    suite="permanence",
    rank=1,
    code=6,
    env_class="envs.tasks.video_unmask:VideoUnmask",
    # ood: containers [up to 15 in +-0.2], picks [2] of three red/green/blue cubes
    ood_tiers=(
        {"containers": 15, "picks": 2, "new_colours": 1},
        {"containers": 15, "picks": 3, "new_colours": 1},
        {"containers": 18, "picks": 3, "new_colours": 1, "region": 0.22},
        {"containers": 20, "picks": 3, "new_colours": 1, "region": 0.22},
    ),
    official_history_options={"pick up the container": "which container"},
))
