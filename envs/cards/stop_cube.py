"""StopCube: the counting suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

CARD = register(TaskCard(
    name="StopCube",
    suite="counting",
    rank=4,
    code=2,
    env_class="envs.tasks.stop_cube:StopCube",
    # ood: stop on pass [2-5], fastest cube only
    ood_tiers=(
        {"stop_pass": 6, "fastest": 1},
        {"stop_pass": 7, "fastest": 1},
        {"stop_pass": 8, "fastest": 1},
        {"stop_pass": 9, "fastest": 1},
        {"stop_pass": 10, "fastest": 1},
    ),
    official_history_choices=(OfficialChoice("press at this arrival or wait", ("remain static", "press button to stop the cube")),),
))
