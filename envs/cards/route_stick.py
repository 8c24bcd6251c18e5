"""RouteStick: the imitation suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

CARD = register(TaskCard(
    name="RouteStick",
    suite="imitation",
    rank=4,
    code=16,
    env_class="envs.tasks.route_stick:RouteStick",
    # ood: route steps [4-7]
    ood_tiers=(
        {"steps": (8, 9)},
        {"steps": (10, 11)},
        {"steps": (12, 14)},
    ),
    official_history_choices=(OfficialChoice("side and circling sense", ("move to the nearest *",)),),
))
