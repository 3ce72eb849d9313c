#!/usr/bin/python3
"""The benchmark workloads of ../shared/BENCHMARKS.md in PyTorch, for side-by-side comparison with
`transduce bench`: our own PyTorch implementation of the same model (post-LN, sinusoidal
positions, one embedding matrix shared by source, target and output projection, label-smoothed
cross-entropy, Adam with equation 3), written as a PyTorch user would write it.

    /usr/bin/python3 bench/pytorch_reference.py --threads 2 train --preset tiny
    /usr/bin/python3 bench/pytorch_reference.py --threads 2 translate --preset base --beam 4
    ... --json       one JSON object with the same field names as `transduce bench ... --json`

Needs Debian's python3-torch. Thread counts are fixed before torch is imported: Debian's PyTorch
takes its fp32 GEMMs from OpenBLAS, whose pool is sized by OPENBLAS_NUM_THREADS when the library
loads, and its own kernels use OpenMP (OMP_NUM_THREADS, torch.set_num_threads).
"""

import argparse
import contextlib
import json
import math
import os
import resource
import sys
import time

PAD, BOS, EOS, FIRST_WORD = 0, 1, 2, 4
PRESETS = {"tiny": dict(layers=3, d_model=256, d_ff=1024, heads=4),
           "base": dict(layers=6, d_model=512, d_ff=2048, heads=8)}
MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def randint(self, lo, hi):
        return lo + self.next() % (hi - lo + 1)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--blas-threads", type=int,
                   help="OpenBLAS's pool, fixed when it loads (default: --threads)")
    p.add_argument("--json", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="training steps (BENCHMARKS.md, training step)")
    t.add_argument("--preset", choices=PRESETS, default="tiny")
    t.add_argument("--steps", type=int, help="timed steps (default 10 tiny, 5 base)")
    t.add_argument("--batch", type=int, default=164)
    t.add_argument("--accum", type=int, default=1,
                   help="the batch as this many slices, gradients summed before one update")
    t.add_argument("--src-len", type=int, default=25)
    t.add_argument("--tgt-len", type=int, default=25)
    t.add_argument("--vocab", type=int, default=8000)
    t.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="bf16: forward and loss under torch.autocast('cpu', dtype=torch.bfloat16)")
    d = sub.add_parser("translate", help="forced-length decoding (BENCHMARKS.md, decoding)")
    d.add_argument("--preset", choices=PRESETS, default="tiny")
    d.add_argument("--beam", type=int, default=4, help="1: greedy")
    d.add_argument("--alpha", type=float, default=0.6)
    d.add_argument("--sentences", type=int, default=500)
    d.add_argument("--batch", type=int, default=100)
    d.add_argument("--vocab", type=int, default=8000)
    d.add_argument("--compute-type", choices=("fp32", "bf16", "int8"), default="fp32",
                   help="bf16: the whole model in bfloat16 (its products through oneDNN; faster "
                        "than autocast, which rounds the weights again at every product); "
                        "int8: torch.ao.quantization.quantize_dynamic on the Linear layers (the "
                        "tied output projection, a functional linear, stays fp32)")
    d.add_argument("--quantized-engine", default="onednn",
                   help="torch.backends.quantized.engine for int8 (onednn, qnnpack)")
    for s in (t, d):
        s.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    return p.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS is not None:
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.blas_threads or ARGS.threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import torch  # noqa: E402  (after the thread settings)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def sinusoids(n, d):
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d, 2, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, i2 / d)
    table = torch.zeros(n, d, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d // 2])
    return table.float()


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.q_proj, self.k_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)

    def split(self, x):  # [B, L, d] -> [B, h, L, dk]
        return x.view(x.shape[0], x.shape[1], self.h, self.dk).transpose(1, 2)

    def keys_values(self, memory):
        return self.split(self.k_proj(memory)), self.split(self.v_proj(memory))

    def attend(self, x, k, v, bias):
        q = self.split(self.q_proj(x)) * self.dk ** -0.5
        scores = torch.matmul(q, k.transpose(-1, -2))
        if bias is not None:
            scores = scores + bias.to(scores.dtype)  # (a bf16 model)
        weights = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(weights, v).transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)
        return self.out_proj(ctx)

    def forward(self, x, memory, bias):
        k, v = self.keys_values(memory)
        return self.attend(x, k, v, bias)


class FeedForward(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class EncoderLayer(nn.Module):
    def __init__(self, d, d_ff, heads, p):
        super().__init__()
        self.self_attn, self.ffn = Attention(d, heads), FeedForward(d, d_ff)
        self.self_attn_norm, self.ffn_norm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.drop = nn.Dropout(p)

    def forward(self, x, bias):
        x = self.self_attn_norm(x + self.drop(self.self_attn(x, x, bias)))
        return self.ffn_norm(x + self.drop(self.ffn(x)))


class DecoderLayer(nn.Module):
    def __init__(self, d, d_ff, heads, p):
        super().__init__()
        self.self_attn, self.cross_attn = Attention(d, heads), Attention(d, heads)
        self.ffn = FeedForward(d, d_ff)
        self.self_attn_norm, self.cross_attn_norm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ffn_norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(p)

    def forward(self, y, memory, self_bias, cross_bias):
        y = self.self_attn_norm(y + self.drop(self.self_attn(y, y, self_bias)))
        y = self.cross_attn_norm(y + self.drop(self.cross_attn(y, memory, cross_bias)))
        return self.ffn_norm(y + self.drop(self.ffn(y)))

    def step(self, y, cache, cross_kv, cross_bias):
        """One new position: y [B, 1, d]; cache holds this layer's self-attention keys/values."""
        k, v = self.self_attn.keys_values(y)
        if "k" in cache:
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
        cache["k"], cache["v"] = k, v
        y = self.self_attn_norm(y + self.self_attn.attend(y, k, v, None))
        y = self.cross_attn_norm(y + self.cross_attn.attend(y, *cross_kv, cross_bias))
        return self.ffn_norm(y + self.ffn(y))


class Transformer(nn.Module):
    def __init__(self, vocab, layers, d_model, d_ff, heads, dropout=0.1, max_positions=1024):
        super().__init__()
        self.d = d_model
        self.embedding = nn.Embedding(vocab, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model ** -0.5)
        self.register_buffer("positions", sinusoids(max_positions, d_model), persistent=False)
        self.encoder = nn.ModuleList(EncoderLayer(d_model, d_ff, heads, dropout)
                                     for _ in range(layers))
        self.decoder = nn.ModuleList(DecoderLayer(d_model, d_ff, heads, dropout)
                                     for _ in range(layers))
        self.drop = nn.Dropout(dropout)

    def embed(self, ids, offset=0):
        x = self.embedding(ids) * math.sqrt(self.d)
        return self.drop(x + self.positions[offset:offset + ids.shape[1]])

    @staticmethod
    def padding_bias(src):  # [B, 1, 1, Ls]: -inf where the source is padding
        return torch.zeros(src.shape, dtype=torch.float32).masked_fill(
            src == PAD, float("-inf"))[:, None, None, :]

    def encode(self, src):
        bias = self.padding_bias(src)
        x = self.embed(src)
        for layer in self.encoder:
            x = layer(x, bias)
        return x, bias

    def forward(self, src, tgt_in):
        memory, cross_bias = self.encode(src)
        lt = tgt_in.shape[1]
        causal = torch.full((lt, lt), float("-inf")).triu(1)
        y = self.embed(tgt_in)
        for layer in self.decoder:
            y = layer(y, memory, causal, cross_bias)
        return F.linear(y, self.embedding.weight)


def noam(step, d, warmup=4000):
    return d ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def training_flops(cfg, batch, ls, lt, vocab):
    n, d, dff = cfg["layers"], cfg["d_model"], cfg["d_ff"]
    s, t = batch * ls, batch * lt
    return (6 * (s * n * (4 * d * d + 2 * d * dff) + t * n * (6 * d * d + 2 * d * dff)
                 + s * n * 2 * d * d + t * d * vocab)
            + 12 * d * batch * n * (ls * ls + lt * lt + ls * lt))


def sgemm_gflops(n=2048, repeats=5, dtype=None):
    """torch.mm's rate on n x n x n products: fp32 (BLAS), or bf16 inputs (oneDNN)."""
    g = torch.Generator().manual_seed(7)
    a = torch.rand(n, n, generator=g) * 2 - 1
    b = torch.rand(n, n, generator=g) * 2 - 1
    if dtype is not None:
        a, b = a.to(dtype), b.to(dtype)
    torch.mm(a, b)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2 * n ** 3 / median(times) / 1e9


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def runtime_facts():
    """Which BLAS library this process loaded, and its thread pools, as PyTorch runs them."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))  # loads the BLAS
    with open("/proc/self/maps") as maps:
        libs = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
    blas = next((lib for lib in libs if "libopenblas" in lib), libs[0] if libs else "none")
    threading = ("OpenMP" if "openmp" in blas else "pthreads" if "pthread" in blas
                 else "serial" if "serial" in blas else "unknown")
    parallel = torch.__config__.parallel_info()
    onednn = next((line.strip() for line in parallel.splitlines() if "MKL-DNN" in line), "none")
    return {"blas_library": blas, "blas_threading": threading,
            "blas_threads": int(os.environ["OPENBLAS_NUM_THREADS"]),
            "openmp_threads": torch.get_num_threads(), "onednn": onednn,
            "cpu_capability": torch.backends.cpu.get_cpu_capability()
            if hasattr(torch.backends, "cpu") else "unknown"}


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def benchmark_batch(batch, ls, lt, vocab, seed=1):
    """BENCHMARKS.md's training batch, drawn as transduce's make_benchmark_batch draws it."""
    rng = SplitMix64(seed)
    src, tgt_out = [], []
    for _ in range(batch):
        src.append([rng.randint(FIRST_WORD, vocab - 1) for _ in range(ls)])
        tgt_out.append([rng.randint(FIRST_WORD, vocab - 1) for _ in range(lt - 1)] + [EOS])
    tgt_in = [[BOS] + row[:-1] for row in tgt_out]
    as_tensor = lambda rows: torch.tensor(rows, dtype=torch.long)  # noqa: E731
    return as_tensor(src), as_tensor(tgt_in), as_tensor(tgt_out)


def run_train(args):
    cfg = PRESETS[args.preset]
    torch.manual_seed(1)
    model = Transformer(args.vocab, **cfg)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    src, tgt_in, tgt_out = benchmark_batch(args.batch, args.src_len, args.tgt_len, args.vocab)
    steps = args.steps or (10 if args.preset == "tiny" else 5)
    # Mixed precision as PyTorch documents it for CPUs: autocast runs the linear layers and
    # matrix products in bf16 (oneDNN) and keeps the loss in fp32; weights and Adam stay fp32.
    autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if args.precision == "bf16"
                else contextlib.nullcontext())
    times = []
    for step in range(1, steps + 3):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        for k in range(args.accum):  # slices as transduce's --accum cuts them
            rows = slice(args.batch * k // args.accum, args.batch * (k + 1) // args.accum)
            with autocast:
                logits = model(src[rows], tgt_in[rows])
                # The mean over the whole batch's target tokens (no padding here), by slices.
                loss = F.cross_entropy(logits.view(-1, args.vocab).float(),
                                       tgt_out[rows].reshape(-1), ignore_index=PAD,
                                       label_smoothing=0.1, reduction="sum")
            (loss / tgt_out.numel()).backward()
        for group in opt.param_groups:
            group["lr"] = noam(step, cfg["d_model"])
        opt.step()
        if step > 2:
            times.append(time.perf_counter() - start)
    step_time = median(times)
    tokens = args.batch * (args.src_len + args.tgt_len)
    flops = training_flops(cfg, args.batch, args.src_len, args.tgt_len, args.vocab)
    sgemm = sgemm_gflops()
    bf16_gemm = sgemm_gflops(dtype=torch.bfloat16) if args.precision == "bf16" else None
    model_gflops = flops / step_time / 1e9
    return {"implementation": "pytorch", "torch": torch.__version__, "preset": args.preset,
            "precision": args.precision, "bf16_gemm_gflops": bf16_gemm, **runtime_facts(),
            "threads": torch.get_num_threads(),
            "wait_policy": os.environ["OMP_WAIT_POLICY"], "steps": steps, "step_seconds": step_time,
            "tokens_per_second": tokens / step_time, "model_gflops": model_gflops,
            "sgemm_gflops": sgemm, "mfu": model_gflops / (bf16_gemm or sgemm),
            "loss": float(loss) * args.accum / tgt_out.numel(), "accumulate": args.accum,
            "peak_rss_mb": peak_rss_mb()}


def decode_sources(sentences, vocab, seed=1):
    rng = SplitMix64(seed)
    out = []
    for _ in range(sentences):
        n = rng.randint(15, 25)
        out.append([rng.randint(FIRST_WORD, vocab - 1) for _ in range(n)])
    return out


def constrain(logp, lengths, step, vocab):
    """Forced length: EOS banned before step L, only EOS at step L; PAD and BOS always banned."""
    logp[:, PAD] = float("-inf")
    logp[:, BOS] = float("-inf")
    before = lengths > step
    logp[before, EOS] = float("-inf")
    at = lengths == step
    if at.any():
        eos = logp[at, EOS].clone()
        logp[at] = float("-inf")
        logp[at, EOS] = eos
    return logp


@torch.no_grad()
def beam_search(model, src, lengths, beam, alpha, vocab):
    """Batched beam search with per-layer key/value caches; sentences leave the batch when done.
    Returns the best hypothesis (token list, EOS excluded) per sentence."""
    batch = src.shape[0]
    memory, cross_bias = model.encode(src)
    # Cross-attention keys/values once per sentence, repeated for its beam.
    cross = [layer.cross_attn.keys_values(memory) for layer in model.decoder]
    rep = lambda t: t.repeat_interleave(beam, dim=0)  # noqa: E731
    cross = [(rep(k), rep(v)) for k, v in cross]
    cross_bias = rep(cross_bias)
    caches = [{} for _ in model.decoder]
    alive = torch.arange(batch)                                  # sentence of each live group
    scores = torch.zeros(batch, beam)
    scores[:, 1:] = float("-inf")                                # one live hypothesis at start
    tokens = torch.full((batch * beam, 1), BOS, dtype=torch.long)
    lens = rep(lengths)
    best = [None] * batch
    step = 0
    while alive.numel() > 0:
        y = model.embed(tokens[:, -1:], offset=step)
        for layer, cache, kv in zip(model.decoder, caches, cross):
            y = layer.step(y, cache, kv, cross_bias)
        logp = torch.log_softmax(F.linear(y[:, 0], model.embedding.weight), dim=-1)
        logp = constrain(logp, lens, step, vocab)
        n = alive.numel()
        cand = (scores.view(-1, 1) + logp).view(n, beam * vocab)
        top, idx = cand.topk(beam, dim=1)
        origin, word = idx // vocab, idx % vocab
        rows = (torch.arange(n)[:, None] * beam + origin).view(-1)
        tokens = torch.cat([tokens[rows], word.view(-1, 1)], dim=1)
        for cache in caches:  # each hypothesis continues the one it came from
            cache["k"], cache["v"] = cache["k"][rows], cache["v"][rows]
        scores = top
        step += 1
        # Forced length: every hypothesis of a sentence ends with EOS at the same step, so a
        # sentence is done when its best candidate is EOS.
        done = word[:, 0] == EOS
        if not done.any():
            continue
        penalty = ((5 + step) / 6) ** alpha
        for g in torch.nonzero(done).view(-1).tolist():
            finished = scores[g] / penalty
            best[int(alive[g])] = tokens[g * beam + int(finished.argmax()), 1:-1].tolist()
        keep = torch.nonzero(~done).view(-1)
        rows = (keep[:, None] * beam + torch.arange(beam)).view(-1)
        alive, scores, tokens = alive[keep], scores[keep], tokens[rows]
        lens, cross_bias = lens[rows], cross_bias[rows]
        cross = [(k[rows], v[rows]) for k, v in cross]
        for cache in caches:
            cache["k"], cache["v"] = cache["k"][rows], cache["v"][rows]
    return best


def run_translate(args):
    cfg = PRESETS[args.preset]
    torch.manual_seed(1)
    model = Transformer(args.vocab, **cfg)
    model.eval()
    if args.compute_type == "int8":
        torch.backends.quantized.engine = args.quantized_engine
        model = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    elif args.compute_type == "bf16":
        model = model.to(torch.bfloat16)
    sources = decode_sources(args.sentences, args.vocab)
    order = sorted(range(len(sources)), key=lambda i: -len(sources[i]))  # stable
    batches = []
    for begin in range(0, len(order), args.batch):
        ids = order[begin:begin + args.batch]
        width = max(len(sources[i]) for i in ids) + 1
        rows = [sources[i] + [EOS] + [PAD] * (width - len(sources[i]) - 1) for i in ids]
        batches.append((torch.tensor(rows, dtype=torch.long),
                        torch.tensor([len(sources[i]) for i in ids], dtype=torch.long)))
    beam_search(model, *batches[0], args.beam, args.alpha, args.vocab)  # warm-up
    start = time.perf_counter()
    out_tokens = 0
    for src, lengths in batches:
        hyps = beam_search(model, src, lengths, args.beam, args.alpha, args.vocab)
        for hyp, length in zip(hyps, lengths.tolist()):
            if len(hyp) != length:
                sys.exit(f"forced length broken: {len(hyp)} words instead of {length}")
            out_tokens += len(hyp) + 1
    seconds = time.perf_counter() - start
    return {"implementation": "pytorch", "torch": torch.__version__, "preset": args.preset,
            "search": "greedy" if args.beam == 1 else "beam", "beam": args.beam,
            "compute_type": args.compute_type,
            "quantized_engine": (torch.backends.quantized.engine
                                 if args.compute_type == "int8" else None),
            "threads": torch.get_num_threads(), "sentences": args.sentences,
            "seconds": seconds, "sentences_per_second": args.sentences / seconds,
            "output_tokens": out_tokens, "tokens_per_second": out_tokens / seconds,
            "wait_policy": os.environ["OMP_WAIT_POLICY"], **runtime_facts(),
            "peak_rss_mb": peak_rss_mb()}


def main():
    torch.set_num_threads(ARGS.threads)
    result = run_train(ARGS) if ARGS.command == "train" else run_translate(ARGS)
    if ARGS.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>20}  {v:.4g}" if isinstance(v, float) else f"{k:>20}  {v}")


if __name__ == "__main__":
    main()
