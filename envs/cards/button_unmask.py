"""ButtonUnmask: the permanence suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="ButtonUnmask",
    suite="permanence",
    rank=2,
    code=8,
    env_class="envs.tasks.button_unmask:ButtonUnmask",
    ood_tiers=(
        {"containers": 15, "picks": 2, "new_colours": 1},
        {"containers": 15, "picks": 3, "new_colours": 1},
        {"containers": 18, "picks": 3, "new_colours": 1, "region": 0.22},
        {"containers": 20, "picks": 3, "new_colours": 1, "region": 0.22},
    ),
    official_history_options={"pick up the container": "which container"},
))
