"""``pardyn bag repair|info`` and "not an MCAP file" vs "the writer was killed" (issue 20, item 5)."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.bags import BagError, bag_status, write_joint_states
from pardyn.bags.mcap_chunks import FlushPolicy
from pardyn.cli import main


def _killed_bag(tmp_path):
    """A bag whose writer died: the .mcap cut after its complete chunks, metadata.yaml provisional (as SIGKILL leaves it)."""
    t = np.arange(500) * 1e-3
    bag = write_joint_states(tmp_path / "killed", t, ["j1", "j2"], np.column_stack([t, -t]),
                             flush=FlushPolicy(chunk_messages=100))
    mcap = next(bag.glob("*.mcap"))
    data = mcap.read_bytes()
    mcap.write_bytes(data[: int(len(data) * 0.7)])  # the summary, footer and part of the last chunks gone
    return bag


def test_random_bytes_are_not_an_mcap_file(tmp_path):
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(np.random.default_rng(0).bytes(4000))
    with pytest.raises(BagError, match="not an MCAP file") as raised:
        bag_status(junk)
    assert "nothing to repair" in str(raised.value)
    assert "writer was killed" not in str(raised.value) and "repair_bag" not in str(raised.value)


def test_a_bag_directory_without_its_mcap_file_is_not_a_killed_writer(tmp_path):
    t = np.arange(50) * 1e-3
    bag = write_joint_states(tmp_path / "gone", t, ["j1"], t[:, None])
    next(bag.glob("*.mcap")).unlink()
    with pytest.raises(BagError, match="missing") as raised:
        bag_status(bag)
    assert "not a killed writer" in str(raised.value) and "nothing to read or repair" in str(raised.value)


def test_bag_repair_and_info_through_the_cli(tmp_path, capsys):
    bag = _killed_bag(tmp_path)
    assert main(["bag", "info", str(bag)]) == 0
    text = capsys.readouterr().out
    assert "not closed" in text and "pardyn bag repair" in text
    assert main(["bag", "repair", str(bag)]) == 0
    text = capsys.readouterr().out
    assert "recovered" in text and "/joint_states" in text
    recovered = int(text.split("recovered ")[1].split()[0])
    assert 300 <= recovered < 500  # every complete chunk of 100 messages before the cut, not the torn ones
    assert main(["bag", "info", str(bag)]) == 0
    text = capsys.readouterr().out
    assert "complete" in text and f"/joint_states: {recovered} messages" in text
    assert main(["bag", "repair", str(bag)]) == 0
    assert "nothing to repair" in capsys.readouterr().out


def test_bag_cli_errors_are_one_line(tmp_path, capsys):
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"not a bag at all" * 100)
    assert main(["bag", "repair", str(junk)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "not an MCAP file" in error
    assert main(["bag", "info"]) == 2
    assert "give the bag" in capsys.readouterr().err
