"""The episode recorder writes a readable mp4 named by task, episode, seed, condition and outcome."""

import imageio.v2 as imageio

from experiments.run import main


def test_video_flag_writes_an_annotated_mp4(tmp_path):
    out = tmp_path / "run"
    code = main(["--tasks", "PickXtimes", "--episodes", "1", "--conditions", "oracle", "--out", str(out),
                 "--wandb", "disabled", "--video"])
    assert code == 0
    videos = list((out / "videos" / "oracle" / "s7").glob("PickXtimes_ep1_*.mp4"))
    assert len(videos) == 1, list(out.rglob("*.mp4"))
    assert videos[0].name.endswith("_success.mp4")
    reader = imageio.get_reader(str(videos[0]))
    frames = [f for _, f in zip(range(400), reader)]
    assert len(frames) > 20
    assert frames[0].shape[0] > 256  # the frame plus the text band under it
