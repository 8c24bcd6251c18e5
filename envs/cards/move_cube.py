"""MoveCube: the imitation suite"s task card (``envs/cards/card.py``)."""

from envs.cards.card import OfficialChoice, TaskCard, register

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
    official_history_choices=(OfficialChoice(
        "manner", ("pick up the peg", "close gripper and push the cube to the target", "pick up the cube"), "first"),),
))
