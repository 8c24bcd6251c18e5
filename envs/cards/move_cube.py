"""MoveCube: the imitation suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import TaskCard, register

CARD = register(TaskCard(
    name="MoveCube",
    suite="imitation",
    rank=1,
    code=14,
    env_class="envs.tasks.move_cube:MoveCube",
    # ood: a disc workspace around the robot"s reach -> an annulus, yaw [+-45 deg] -> the full circle
    ood_tiers=(
        {"annulus": 1, "full_yaw": 1},
    ),
))
