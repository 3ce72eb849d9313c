"""recipes/common/back_translation.py: holding pairs out of train, and adding synthetic pairs,
against files written by hand."""

import pytest
import back_translation


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def read(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_hold_out_keeps_the_last_pairs_apart_and_copies_the_other_splits(tmp_path):
    data, dest = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    write(data / "train.en", ["e1", "e2", "e3", "e4"])
    write(data / "train.de", ["d1", "d2", "d3", "d4"])
    write(data / "val.en", ["v"])
    write(data / "val.de", ["w"])
    back_translation.hold_out(data, dest, 1, ("en", "de"), ("train", "val"), pytest.fail)
    assert read(dest / "train.en") == ["e1", "e2", "e3"]
    assert read(dest / "heldout.de") == ["d4"]
    assert read(dest / "val.de") == ["w"]
    assert read(data / "train.en") == ["e1", "e2", "e3", "e4"]  # the data given is untouched
    messages = []
    back_translation.hold_out(data, tmp_path / "bad", 4, ("en",), ("train",), messages.append)
    assert messages[0] == "--hold-out 4: train has 4 pairs; hold out between 1 and 3"


def test_synthetic_pairs_are_appended_without_empty_sides(tmp_path):
    src = write(tmp_path / "train.en", ["a"])
    tgt = write(tmp_path / "train.de", ["A"])
    synthetic = write(tmp_path / "bt.en", ["b", "", "d"])
    mono = write(tmp_path / "mono.de", ["B", "C", " "])
    assert back_translation.add_synthetic_pairs(src, tgt, synthetic, mono) == 1
    assert read(src) == ["a", "b"]
    assert read(tgt) == ["A", "B"]
    write(tmp_path / "short.en", ["x"])
    with pytest.raises(ValueError, match="short.en has 1 lines for 3 in .*mono.de"):
        back_translation.add_synthetic_pairs(src, tgt, tmp_path / "short.en", mono)
