"""The stages more than one recipe runs, each one `transduce` command run through a
processes.Stages (standard library only). TXG is the binary with its global flags
([binary, "--threads", N] or [binary])."""


def make_vocabulary(stages, txg, sources, size, output, extra=()):
    """Stage "vocab": a shared subword vocabulary of SIZE pieces in OUTPUT, learnt from SOURCES,
    the flags naming the text (["--input", FILE, ...] or ["--trees", FILE]); EXTRA goes before
    --output (e.g. ["--max-lines", N])."""
    stages.run([*txg, "vocab", *sources, "--vocab-size", size, *extra, "--output", output],
               "vocab")


def average_checkpoints(stages, txg, model_dir, last, output):
    """Stage "average": the average of MODEL_DIR's LAST checkpoints (section 6.1) in OUTPUT."""
    stages.run([*txg, "average", "-m", model_dir, "--last", last, "--output", output], "average")
