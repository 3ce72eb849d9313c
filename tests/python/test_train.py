"""transduce.train against `transduce train` with the same options: the same weights bit for
bit, the progress callback given what train_log.jsonl holds, the same configuration files, and
the library's errors."""

import json

import numpy as np
import pytest

import transduce
from conftest import run

OPTIONS = {"layers": 1, "d_model": 32, "d_ff": 64, "heads": 2, "batch_tokens": 600,
           "warmup": 20, "max_steps": 24, "log_every": 4, "valid_every": 8,
           "valid_metric": ["bleu", "ppl"], "seed": 3}


def flags(options):
    out = []
    for k, v in options.items():
        out += [f"--{k.replace('_', '-')}", *(map(str, v) if isinstance(v, list) else [str(v)])]
    return out


@pytest.fixture(scope="module")
def data(model):
    """The session model's folder: its vocabulary and first 3,000 pairs; 40 val pairs."""
    for lang in ("en", "de"):
        lines = (model / f"val.{lang}").read_text(encoding="utf-8").splitlines()[:40]
        (model / f"v40.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"src": str(model / "train.en"), "tgt": str(model / "train.de"),
            "valid_src": str(model / "v40.en"), "valid_tgt": str(model / "v40.de"),
            "vocab": str(model / "vocab")}


def test_train_equals_the_command_line(model, transduce_bin, data, tmp_path):
    run(transduce_bin, "--threads", 2, "train", *flags(data), *flags(OPTIONS), "--output",
        tmp_path / "cli")
    records = []
    out = transduce.train(progress=records.append, output=str(tmp_path / "py"), threads=2,
                          **data, **OPTIONS)
    assert out == str(tmp_path / "py")
    cli, ours = (transduce.load_weights(str(tmp_path / d)) for d in ("cli", "py"))
    assert cli.keys() == ours.keys()
    for name in cli:
        np.testing.assert_array_equal(ours[name], cli[name], err_msg=name)
    logged = [json.loads(line) for line in
              (tmp_path / "py" / "train_log.jsonl").read_text().splitlines()]
    assert records == logged
    assert [r["step"] for r in records if r["kind"] == "train"] == [4, 8, 12, 16, 20, 24]
    assert [r["step"] for r in records if r["kind"] == "valid"] == [8, 16, 24]
    assert all("bleu" in r for r in records if r["kind"] == "valid")


def test_resume_and_an_exception_from_the_callback(data, tmp_path):
    options = dict(OPTIONS, max_steps=8, log_every=2, valid_metric=None, valid_every=0,
                   valid_src=None, valid_tgt=None, save_every=4)

    def stop_at_6(record):
        if record["step"] >= 6:
            raise KeyboardInterrupt("enough")

    with pytest.raises(KeyboardInterrupt, match="enough"):
        transduce.train(progress=stop_at_6, output=str(tmp_path / "m"), **{**data, **options})
    # The checkpoint of step 4 was written whole; training resumes from it.
    seen = []
    transduce.train(progress=seen.append, resume=str(tmp_path / "m"), src=data["src"],
                    tgt=data["tgt"], max_steps=8)
    assert [r["step"] for r in seen] == [6, 8]
    assert transduce.Translator(str(tmp_path / "m")).step == 8


def test_bad_options_raise(data, tmp_path):
    with pytest.raises(transduce.Error, match="no_such_option|no-such-option"):
        transduce.train(output=str(tmp_path / "a"), no_such_option=3, **data)
    # The library names its settings as Python spells them (the command line, as flags).
    with pytest.raises(transduce.Error, match="give vocab DIR"):
        transduce.train(output=str(tmp_path / "b"), src=data["src"], tgt=data["tgt"])
    with pytest.raises(transduce.Error, match="missing.en"):
        transduce.train(output=str(tmp_path / "c"), max_steps=2,
                        **dict(data, src=str(tmp_path / "missing.en")))
    with pytest.raises(TypeError):
        transduce.train(progress=3, output=str(tmp_path / "d"), **data)


def test_a_config_file_and_keyword_arguments_over_it(data, tmp_path, capfd):
    """Every keyword argument is train's flag of that name: config= reads a file, the keywords
    override it, dump_config=True prints the resolved configuration (and trains nothing)."""
    config = tmp_path / "run.yml"
    config.write_text("lr_scale: 2\nbatch_tokens: 300\nadam_beta2: 0.99\n")
    transduce.train(config=str(config), output=str(tmp_path / "m"), compute_type="bf16",
                    lr_scale=3, valid_metric=["chrf", "ppl"], dump_config=True, **data)
    out = capfd.readouterr().out
    for line in ("lr_scale: 3.0", "batch_tokens: 300", "adam_beta2: 0.99", 'compute_type: "bf16"',
                 'valid_metric: ["chrf", "ppl"]', f'output: "{tmp_path / "m"}"'):
        assert line in out.splitlines(), (line, out)
    assert not (tmp_path / "m").exists()
    with pytest.raises(transduce.Error, match="train: --out is now --output"):
        transduce.train(out=str(tmp_path / "n"), **data)
