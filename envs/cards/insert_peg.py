"""InsertPeg: the imitation suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

CARD = register(TaskCard(
    name="InsertPeg",
    suite="imitation",
    rank=2,
    code=13,
    env_class="envs.tasks.insert_peg:InsertPeg",
    # ood: pegs [3], yaw [+-45 deg]
    ood_tiers=(
        {"pegs": 4, "full_yaw": 1},
    ),
    official_history_options={"pick up the peg by grasping one end": "peg and end"},
    official_history_choices=(OfficialChoice("side", ("insert the peg from the right side", "insert the peg from the left side")),),
))
