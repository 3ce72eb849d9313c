"""Type hints for transduce (the extension module _transduce, re-exported)."""

from typing import Any, Callable, Literal, Sequence, overload

import numpy as np
import numpy.typing as npt

__version__: str

class Error(RuntimeError):
    """A message meant for the user, naming what is wrong and where (the command line's line)."""

class Tokenizer:
    """The shared subword vocabulary (SentencePiece) of a model or of `transduce vocab`."""

    def __init__(self, path: str) -> None:
        """Loads DIR/spm.model of a vocabulary or model directory, or a .model file."""
    def encode(self, text: str) -> list[int]:
        """Subword ids of `text`, without BOS/EOS."""
    def encode_pieces(self, text: str) -> list[str]:
        """The pieces of `text` as strings."""
    def decode(self, ids: Sequence[int]) -> str:
        """Text of `ids`; PAD, BOS and EOS are skipped."""
    def piece(self, id: int) -> str: ...
    def piece_id(self, piece: str) -> int:
        """The id of a piece, or -1 when the vocabulary does not have it."""
    @property
    def vocab_size(self) -> int: ...
    @property
    def path(self) -> str: ...
    def __len__(self) -> int: ...

class Attention:
    """Every layer's and head's attention weights behind one translation: float32 arrays
    [layers, heads, queries, keys] whose rows sum to 1."""

    source_ids: list[int]
    target_ids: list[int]
    source_pieces: list[str]
    target_pieces: list[str]
    target_input_pieces: list[str]
    encoder_self: npt.NDArray[np.float32]
    decoder_self: npt.NDArray[np.float32]
    cross: npt.NDArray[np.float32]

class Translation:
    """One translation of one input."""

    text: str
    tokens: list[int]
    pieces: list[str]
    score: float
    log_prob: float
    token_log_probs: npt.NDArray[np.float32]
    constraints_unmet: bool
    alignment: list[tuple[int, int]]
    attention: Attention | None

class PairScore:
    """The model's score of a given translation (force decoding)."""

    log_prob: float
    score: float
    token_log_probs: npt.NDArray[np.float32]
    pieces: list[str]

class Translator:
    """A model directory loaded for translation and scoring. Each call releases the GIL; calls
    from several Python threads take turns on the model."""

    def __init__(
        self,
        model_dir: str | Sequence[str],
        threads: int = 0,
        compute_type: Literal["fp32", "bf16", "int8"] | None = None,
        batch_tokens: int = 4000,
    ) -> None:
        """model_dir: a model directory, or several of one vocabulary that translate as an
        ensemble (their probabilities averaged at every step; attention from the first; score
        takes one model); threads: 0 for all cores (BLAS's count is set for the whole process,
        as --threads does); compute_type: the GEMMs' type (None: the model's own); batch_tokens: source
        tokens per batch, padding counted."""
    @overload
    def translate(
        self,
        texts: Sequence[str],
        *,
        target_prefix: Sequence[str] | None = None,
        constraints: Sequence[Sequence[str]] | None = None,
        beam: int = 4,
        alpha: float = 0.6,
        nbest: Literal[1] = 1,
        return_attention: bool = False,
        return_alignment: bool = False,
        max_len_a: float = 1.0,
        max_len_b: int = 50,
        min_len_a: float = 0.0,
        min_len_b: int = 1,
        no_repeat_ngram: int = 0,
        repetition_penalty: float = 1.0,
        sampling: str = "none",
        temperature: float = 1.0,
        seed: int = 0,
        alternatives: int = 0,
        ensemble_mean: Literal["prob", "log-prob"] = "prob",
        max_input_len: int = 0,
        long_input: Literal["refuse", "truncate"] = "refuse",
    ) -> list[Translation]: ...
    @overload
    def translate(
        self,
        texts: Sequence[str],
        *,
        target_prefix: Sequence[str] | None = None,
        constraints: Sequence[Sequence[str]] | None = None,
        beam: int = 4,
        alpha: float = 0.6,
        nbest: int = 1,
        return_attention: bool = False,
        return_alignment: bool = False,
        max_len_a: float = 1.0,
        max_len_b: int = 50,
        min_len_a: float = 0.0,
        min_len_b: int = 1,
        no_repeat_ngram: int = 0,
        repetition_penalty: float = 1.0,
        sampling: str = "none",
        temperature: float = 1.0,
        seed: int = 0,
        alternatives: int = 0,
        ensemble_mean: Literal["prob", "log-prob"] = "prob",
        max_input_len: int = 0,
        long_input: Literal["refuse", "truncate"] = "refuse",
    ) -> list[Translation] | list[list[Translation]]:
        """Translates each text: with one output a sentence its best translation, else a list (up
        to nbest best first; with sampling, nbest samples; with alternatives, that many). Beam 1
        is greedy search. target_prefix: a text each translation starts with ("" for none);
        constraints: phrases each translation must hold, a list per text (an empty translation
        with constraints_unmet True, and a UserWarning, where none can). An
        empty text gives an empty translation. A text of more subword pieces than max_input_len
        (0: than the model takes) raises transduce.Error naming it ("line N" for texts[N-1]), or
        with long_input="truncate" is cut to them, with a UserWarning."""
    def translate_pieces(
        self,
        sources: Sequence[Sequence[int]],
        *,
        target_prefix: Sequence[Sequence[int]] | None = None,
        constraints: Sequence[Sequence[Sequence[int]]] | None = None,
        beam: int = 4,
        alpha: float = 0.6,
        nbest: int = 1,
        return_attention: bool = False,
        return_alignment: bool = False,
        max_len_a: float = 1.0,
        max_len_b: int = 50,
        min_len_a: float = 0.0,
        min_len_b: int = 1,
        no_repeat_ngram: int = 0,
        repetition_penalty: float = 1.0,
        sampling: str = "none",
        temperature: float = 1.0,
        seed: int = 0,
        alternatives: int = 0,
        ensemble_mean: Literal["prob", "log-prob"] = "prob",
        max_input_len: int = 0,
        long_input: Literal["refuse", "truncate"] = "refuse",
    ) -> list[Translation] | list[list[Translation]]:
        """The same for sources (and target prefixes) already in vocabulary ids (without EOS)."""
    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        *,
        alpha: float = 0.6,
        batch_tokens: int = 2000,
        max_input_len: int = 0,
        long_input: Literal["refuse", "truncate"] = "refuse",
    ) -> list[PairScore]:
        """The model's log-probability of each target given its source (transduce
        score-pairs). A source over max_input_len is refused or cut as in translate; a target
        longer than the model takes is always refused."""
    @property
    def model_dir(self) -> str: ...
    @property
    def model_dirs(self) -> list[str]: ...
    @property
    def step(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def config(self) -> dict[str, Any]: ...
    @property
    def tokenizer(self) -> Tokenizer: ...

class Repairs:
    """What restoring the model's output into a tree changed (all 0 under the tree constraint)."""
    unclosed: int
    unopened: int
    mismatched: int
    extra_slots: int
    missing_words: int
    empty: int
    @property
    def total(self) -> int: ...

class Parse:
    tree: str
    """Penn Treebank brackets under TOP over the sentence's words; '' for an empty sentence."""
    score: float
    tokens: list[int]
    repairs: Repairs

class Parser:
    """A parser's model directory (trained with `transduce train --trees`) loaded for parsing;
    decoding defaults come from its parse.json."""
    def __init__(self, model_dir: str, threads: int = 0, batch_tokens: int = 4000) -> None: ...
    def parse(
        self,
        sentences: Sequence[str],
        *,
        beam: int | None = None,
        alpha: float | None = None,
        free: bool = False,
        bracket_bonus: float | None = None,
        word_score: Literal["any", "pieces"] = "any",
        any_tag: bool = False,
        max_len_a: float | None = None,
        max_len_b: int | None = None,
    ) -> list[Parse]:
        """Parses sentences (words separated by spaces), as `transduce parse` does."""
    @property
    def model_dir(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def beam(self) -> int: ...
    @property
    def alpha(self) -> float: ...
    @property
    def scheme(self) -> str: ...

def parse(
    model_dir: str,
    sentences: Sequence[str],
    threads: int = 0,
    **options: Any,
) -> list[Parse]:
    """Parser(model_dir, threads).parse(sentences, **options), for a single call."""

class BLEUScore:
    score: float
    precisions: list[float]
    counts: list[int]
    totals: list[int]
    bp: float
    ratio: float
    sys_len: int
    ref_len: int
    signature: str
    def format(self, width: int = 2) -> str: ...

class CHRFScore:
    score: float
    beta: int
    name: str
    signature: str
    def format(self, width: int = 2) -> str: ...

def bleu(
    hypotheses: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    lowercase: bool = False,
    tokenize: Literal["13a", "intl", "none"] = "13a",
) -> BLEUScore:
    """Corpus BLEU as sacreBLEU 2.x computes it. references: one stream (a list with a line per
    hypothesis) or several."""

def chrf(
    hypotheses: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    lowercase: bool = False,
) -> CHRFScore:
    """Corpus chrF as sacreBLEU 2.x computes it."""

def load_weights(path: str) -> dict[str, npt.NDArray[Any]]:
    """A model directory's (or a .safetensors file's) tensors as numpy arrays by name."""

def train(progress: Callable[[dict[str, Any]], object] | None = None, **options: Any) -> str:
    """Runs `transduce train` with `options` as its flags (output="m" is --output m, valid_metric=
    ["bleu", "ppl"] is --valid-metric bleu ppl, True a flag, None or False left out; config=
    "run.yml" reads a configuration file the other keywords override); returns the model
    directory. `progress` gets each record train_log.jsonl gets, as a dict; an
    exception it raises ends training (the checkpoints written before stay whole)."""

def set_threads(n: int) -> int:
    """Threads for BLAS and the calling thread's kernels (n <= 0: all cores)."""

def num_cores() -> int: ...

def search_options() -> list[dict[str, Any]]:
    """Every search option (beam, alpha, ...) as {key, kind, default, help}: the keyword
    arguments of Translator.translate and Parser.parse, the flags of `transduce translate` and
    the fields of the service's requests."""
