#!/usr/bin/python3
"""The translation service under abuse: many clients mixing valid, malformed and oversized requests.

    tests/reliability/serve_abuse.py [--model MODEL_DIR] [--clients 64] [--requests 200]
                                     [--seed 1] [--threads N] [--skip VARIANT ...]
                                     [--heavy-concurrency 4] [--data DIR]
                                     [--transduce build/transduce] [--work DIR]
                                     [-- SERVE FLAGS...]

    nice -n 19 tests/reliability/serve_abuse.py --clients 64 --requests 200 --threads 1
                                                                            (docs/reliability.md)

ctest runs a short version (Reliability.ServeAbuse in tests/CMakeLists.txt: 8 clients x 50
requests).

It starts `transduce serve -m MODEL_DIR --port 0` (without --model it first trains a small model
for a few hundred updates on a slice of Multi30k from --data, by default ../shared/data/multi30k,
or on a toy corpus without --data where that folder is missing; a --data folder without train.en,
train.de and val.en is an error), reads
the port from its "listening on http://127.0.0.1:PORT/" line, and runs --clients threads that send
--requests requests each over keep-alive connections (reconnecting now and then, whenever the
server closes, and, as HTTP clients do, after a connection has been idle for about the server's
Keep-Alive timeout), drawn with a seeded generator from three kinds:
  valid      (50%) POST /v1/translate with 1-4 short sentences (or one string, a blank line, an
                   empty list, non-ASCII text), sometimes with beam, alpha, nbest or attention;
                   it must answer 200 with one well-formed translation per sentence;
  malformed  (35%) bodies that are not JSON, truncated or deeply nested, fields of the wrong type
                   or value (beam, alpha, nbest out of range), unknown fields, no "text", invalid
                   UTF-8 (raw and as escaped lone surrogates), unknown paths and methods, a request
                   line that is not HTTP: each must get a 4xx;
  oversized  (15%) a body over --max-body-bytes (with Content-Length, chunked, or only announced),
                   more sentences than --max-sentences, a sentence of more subword tokens than
                   --max-sentence-tokens (a short one, and one filling the body limit): each must
                   get a 4xx (413 or 400, as docs/serve.md says). The server splits a sentence
                   into subword tokens before it counts them, which for a million characters
                   takes a few hundred MB: at most --heavy-concurrency (4) such requests are sent
                   at once, so that the run cannot exhaust the machine's memory.
It records the server's resident memory (VmRSS in /proc/PID/status) after the first 1,000
answers (--rss-after) and at the end, asks GET /health, then sends SIGTERM and waits for the exit.

It prints a table per request variant (statuses seen) and a summary, and exits 1 if any bar is
missed: the server exits (crashes) or does not exit 0 on SIGTERM; a valid request is lost (not a
200 with a translation per sentence: 503s for a full queue are counted as lost and shown apart);
an invalid or oversized request gets anything but a 4xx or no answer (5xx, a dropped connection,
a timeout); memory at the end more than 10% (--max-rss-growth) above memory after 1,000 answers;
/health not ok. Statuses other than the documented one (but still 4xx) are listed, not failed.
The 10% bar is for the 64 x 200 requests of docs/reliability.md: in a shorter run the server's
memory is still filling its working set (docs/experiments/reliability.md), so the short version
ctest runs reads it after 100 answers and allows it to double, which a leak of the kind the first
measurement found (+197%) still fails.
"""

import argparse
import json
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "multi30k"
HOST = "127.0.0.1"
# Requests that make the server tokenize about a million characters (a few hundred MB each, for a
# second): at most --heavy-concurrency of them are in flight at once, so that the run cannot
# exhaust the machine's memory.
HEAVY = {"chunked body over the limit", "1 MiB sentence within the body limit"}
FALLBACK_SENTENCES = [
    "A dog runs through the snow.", "Two men are playing football in a park.",
    "A woman in a red coat is reading a book.", "Children play on the beach.",
    "A man rides a bicycle down a busy street.", "A little girl is eating ice cream.",
    "People are walking along the river.", "A cat sleeps on the sofa.",
]
NON_ASCII = ["Ein Mädchen läuft über die Straße.", "Crème brûlée für zwei, s'il vous plaît.",
             "一只狗在雪地里跑。", "Мужчина играет на гитаре.", "A dog 🐕 runs ✨ fast."]


class Dropped(Exception):
    """No complete HTTP answer: the connection was closed or reset, or the answer timed out."""


# --- HTTP over raw sockets (to send what a library would refuse to) --------------------------

class Connection:
    def __init__(self, port, timeout):
        self.port = port
        self.timeout = timeout
        self.sock = None
        self.used = 0  # requests answered on this connection
        self.idle_since = 0.0
        self.keep_alive = 5.0  # seconds the server keeps an idle connection (its Keep-Alive)

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self.used = 0

    def exchange(self, raw):
        """Sends raw request bytes; returns (status, headers, body, reused) or raises Dropped."""
        if self.sock is not None and time.time() - self.idle_since > self.keep_alive - 1:
            self.close()  # the server may be closing it as idle: do as HTTP clients do
        if self.sock is None:
            try:
                self.sock = socket.create_connection((HOST, self.port), timeout=self.timeout)
            except OSError as e:
                raise Dropped(f"connect: {e}")
        reused = self.used > 0
        send_error = None
        try:
            self.sock.sendall(raw)
        except OSError as e:  # the server may answer (413) and close before reading it all
            send_error = e
        try:
            status, headers, body = self._read_response()
        except (OSError, Dropped, ValueError) as e:
            self.close()
            why = f"{type(e).__name__}: {e}"
            if send_error:
                why += f" (send: {send_error})"
            if reused:
                why += " on a reused connection"
            raise Dropped(why)
        self.used += 1
        self.idle_since = time.time()
        m = re.search(r"timeout=(\d+)", headers.get("keep-alive", ""))
        if m:
            self.keep_alive = float(m.group(1))
        if send_error is not None or headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body, reused

    def _read_response(self):
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Dropped("closed before the answer" if not buf else "closed in the headers")
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
        if not m:
            raise Dropped(f"not an HTTP answer: {lines[0][:80]!r}")
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            n = int(headers["content-length"])
            while len(rest) < n:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise Dropped(f"closed after {len(rest)} of {n} body bytes")
                rest += chunk
            body = rest[:n]
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._read_chunked(rest)
        else:
            body = rest
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                body += chunk
            headers["connection"] = "close"
        return int(m.group(1)), headers, body

    def _read_chunked(self, rest):
        body = b""
        while True:
            while b"\r\n" not in rest:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise Dropped("closed in a chunked body")
                rest += chunk
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise Dropped("closed in a chunked body")
                rest += chunk
            if size == 0:
                return body
            body += rest[:size]
            rest = rest[size + 2:]


def post(body, path="/v1/translate", close=False, extra=b""):
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n".encode() + extra
            + (b"Connection: close\r\n" if close else b"") + b"\r\n" + body)


def chunked(body, path="/v1/translate"):
    pieces = [body[i:i + 65536] for i in range(0, len(body), 65536)]
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            + b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in pieces) + b"0\r\n\r\n")


def get(path):
    return f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()


# --- the requests ------------------------------------------------------------------------------

def dumps(obj):
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


class Requests:
    """Draws requests: (kind, variant, raw bytes, expected statuses, check of a 200's body)."""

    def __init__(self, sentences, limits, skip=()):
        self.sentences = sentences
        self.limits = limits
        self.skip = set(skip)
        mb = limits["max_body_bytes"]
        self.big = dumps({"text": ["a" * (mb + 1000)]})
        self.huge = dumps({"text": ["dog " * (mb // 2)]})  # 2x the limit
        long_sentence = " ".join(["dog"] * (2 * limits["max_sentence_tokens"] + 10))
        # One sentence filling the body limit: read whole, split into subword tokens, then refused.
        self.huge_sentence = dumps({"text": ["dog " * ((mb - 100) // 4)]})
        self.long = dumps({"text": ["A cat.", long_sentence]})
        deep = 100000  # 200 KB of brackets: within the body limit
        self.deep_top = b"[" * deep + b"]" * deep
        self.deep_text = b'{"text": ' + b"[" * deep + b"]" * deep + b"}"
        self.deep_object = b'{"text": ["a"], "x": ' + b'{"a": ' * deep + b"1" + b"}" * deep + b"}"

    def draw(self, rng):
        while True:
            r = rng.random()
            if r < 0.50:
                request = self.valid(rng)
            elif r < 0.85:
                request = self.malformed(rng)
            else:
                request = self.oversized(rng)
            if request[1] not in self.skip:
                return request

    def pick(self, rng, k):
        return [rng.choice(self.sentences) for _ in range(k)]

    def valid(self, rng):
        v = rng.randrange(8)
        body = {}
        if v == 0:
            name, body["text"] = "one string", rng.choice(self.sentences)
            n = 1
        elif v == 1:
            texts = self.pick(rng, rng.randint(1, 3))
            texts.insert(rng.randrange(len(texts) + 1), rng.choice(["", "   "]))
            name, body["text"], n = "with a blank sentence", texts, len(texts)
        elif v == 2:
            name, body["text"], n = "empty list", [], 0
        elif v == 3:
            texts = [rng.choice(NON_ASCII)] + self.pick(rng, rng.randint(0, 2))
            name, body["text"], n = "non-ASCII", texts, len(texts)
        elif v == 4:
            name, body["text"], n = "attention", self.pick(rng, 1), 1
            body["attention"] = True
        elif v == 5:
            beam = rng.randint(1, 4)
            name = "beam, alpha, nbest"
            body = {"text": self.pick(rng, rng.randint(1, 3)), "beam": beam,
                    "alpha": round(rng.uniform(0, 2), 2), "nbest": rng.randint(1, beam)}
            n = len(body["text"])
        else:
            name, body["text"] = "1-4 sentences", self.pick(rng, rng.randint(1, 4))
            n = len(body["text"])
        texts = body["text"] if isinstance(body["text"], list) else [body["text"]]
        return ("valid", name, post(dumps(body), close=rng.random() < 0.1), (200,),
                lambda reply: check_translations(reply, n, body, texts))

    def malformed(self, rng):
        ok_text = self.pick(rng, 1)
        cases = [
            ("not JSON", b"this is not json", 400),
            ("truncated JSON", b'{"text": ["A dog runs.", "Two c', 400),
            ("unquoted key", b"{text: ['A dog.']}", 400),
            ("empty body", b"", 400),
            ("trailing garbage", b'{"text": ["A dog."]} }', 400),
            ("top level array", b'["A dog runs."]', 400),
            ("top level null", b"null", 400),
            ("binary bytes", bytes(rng.randrange(256) for _ in range(200)), 400),
            ("raw control character", b'{"text": ["A\x01dog\nruns"]}', 400),
            ("text a number", dumps({"text": 5}), 400),
            ("text null", dumps({"text": None}), 400),
            ("text an object", dumps({"text": {"a": "b"}}), 400),
            ("text holds a number", dumps({"text": ok_text + [7]}), 400),
            ("text holds a list", dumps({"text": [ok_text]}), 400),
            ("beam a string", dumps({"text": ok_text, "beam": "4"}), 400),
            ("beam a float", dumps({"text": ok_text, "beam": 2.5}), 400),
            ("beam 0", dumps({"text": ok_text, "beam": 0}), 400),
            ("beam negative", dumps({"text": ok_text, "beam": -3}), 400),
            ("beam above --max-beam", dumps({"text": ok_text,
                                             "beam": self.limits["max_beam"] + 1}), 400),
            ("beam 10^12", dumps({"text": ok_text, "beam": 10 ** 12}), 400),
            ("beam 2^64", b'{"text": ["a"], "beam": 18446744073709551616}', 400),
            ("alpha negative", dumps({"text": ok_text, "alpha": -0.5}), 400),
            ("alpha above 10", dumps({"text": ok_text, "alpha": 11}), 400),
            ("alpha 1e400", b'{"text": ["a"], "alpha": 1e400}', 400),
            ("nbest 0", dumps({"text": ok_text, "nbest": 0}), 400),
            ("nbest above beam", dumps({"text": ok_text, "beam": 2, "nbest": 3}), 400),
            ("attention a string", dumps({"text": ok_text, "attention": "yes"}), 400),
            ("unknown field", dumps({"text": ok_text, "bean": 4}), 400),
            ("no text", dumps({"beam": 4}), 400),
            ("empty object", b"{}", 400),
            ("invalid UTF-8 byte", b'{"text": ["A \xff dog"]}', 400),
            ("overlong UTF-8", b'{"text": ["A \xc0\xaf dog"]}', 400),
            ("UTF-8 surrogate", b'{"text": ["A \xed\xa0\x80 dog"]}', 400),
            ("truncated UTF-8", b'{"text": ["A dog \xe2\x82"]}', 400),
            ("invalid UTF-8 in a key", b'{"te\xffxt": ["A dog"]}', 400),
            ("escaped lone surrogate", b'{"text": ["A \\ud800 dog"]}', 400),
            ("escaped low surrogate", b'{"text": ["A \\udc00 dog"]}', 400),
            ("deeply nested top level", self.deep_top, 400),
            ("deeply nested text", self.deep_text, 400),
            ("deeply nested unknown field", self.deep_object, 400),
        ]
        http = [
            ("unknown path", post(dumps({"text": ok_text}), path="/v1/translat"), 404),
            ("GET /v1/translate", get("/v1/translate"), 404),
            ("PUT /v1/translate", post(dumps({"text": ok_text})).replace(b"POST", b"PUT", 1),
             404),
            ("request line not HTTP", b"HELLO THERE\r\n\r\n", 400),
        ]
        i = rng.randrange(len(cases) + len(http))
        if i < len(cases):
            name, body, status = cases[i]
            raw = post(body, close=rng.random() < 0.1)
        else:
            name, raw, status = http[i - len(cases)]
        return "malformed", name, raw, (status,), None

    def oversized(self, rng):
        v = rng.randrange(7)
        mb = self.limits["max_body_bytes"]
        if v == 0:
            return "oversized", "body over --max-body-bytes", post(self.big), (413,), None
        if v == 1:
            return "oversized", "body 2x --max-body-bytes", post(self.huge), (413,), None
        if v == 2:
            return "oversized", "chunked body over the limit", chunked(self.big), (413,), None
        if v == 3:
            # Announced but not sent: the server must refuse by the header alone.
            raw = (f"POST /v1/translate HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: "
                   f"application/json\r\nContent-Length: {mb * 1000}\r\n\r\n").encode()
            return "oversized", "Content-Length 1000x the limit", raw, (413,), None
        if v == 4:
            n = self.limits["max_sentences"] + rng.randint(1, 200)
            raw = post(dumps({"text": self.pick(rng, n)}))
            return "oversized", "more than --max-sentences", raw, (413,), None
        if v == 5:
            return ("oversized", "sentence over --max-sentence-tokens", post(self.long), (400,),
                    None)
        return ("oversized", "1 MiB sentence within the body limit", post(self.huge_sentence),
                (400,), None)


def check_translations(reply, n, body, texts):
    """None if a 200's body holds n well-formed translations, else what is wrong."""
    try:
        j = json.loads(reply)
    except ValueError as e:
        return f"the answer is not JSON: {e}"
    t = j.get("translations")
    if not isinstance(t, list) or len(t) != n:
        return f"{n} sentences but {len(t) if isinstance(t, list) else t!r} translations"
    for i, (item, src) in enumerate(zip(t, texts)):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) \
                or not isinstance(item.get("tokens"), list) \
                or not isinstance(item.get("score"), (int, float)):
            return f"translation {i} is malformed: {str(item)[:200]}"
        if not src.strip() and item["text"] != "":
            return f"blank sentence {i} got {item['text']!r}"
        if src.strip() and not item["tokens"]:
            return f"sentence {i} ({src!r}) got no tokens"
        nbest = body.get("nbest", 1)
        if nbest > 1 and src.strip() and not (isinstance(item.get("nbest"), list)
                                              and 1 <= len(item["nbest"]) <= nbest):
            return f"translation {i}: nbest {nbest} asked, got {str(item.get('nbest'))[:100]}"
        if body.get("attention") and "attention" not in item:
            return f"translation {i}: attention asked, none given"
    return None


# --- the server ----------------------------------------------------------------------------------

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


class Server:
    def __init__(self, transduce, model, threads, extra, log_path):
        self.log = open(log_path, "w")
        cmd = [str(transduce)] + (["--threads", str(threads)] if threads else [])
        cmd += ["serve", "-m", str(model), "--port", "0"] + extra
        self.command = " ".join(cmd)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True)
        self.port = None
        for line in self.proc.stdout:
            self.log.write(line)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.proc.wait()
            self.log.close()
            sys.exit(f"serve_abuse: the server did not start ({self.proc.returncode}); see "
                     f"{log_path}")
        self.log.flush()
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    def _drain(self):
        for line in self.proc.stdout:
            self.log.write(line)
            self.log.flush()


def make_model(args, work):
    """A small model trained for a few hundred updates (any weights would do), in WORK/model
    (replaced)."""
    data = work / "data"
    model = work / "model"
    for old in (data, model):
        shutil.rmtree(old, ignore_errors=True)
    data.mkdir(parents=True)
    if args.data is not None:
        with open(args.data / "train.en", encoding="utf-8") as f:
            src = [next(f) for _ in range(2000)]
        with open(args.data / "train.de", encoding="utf-8") as f:
            tgt = [next(f) for _ in range(2000)]
    else:
        rng = random.Random(args.seed)
        src = [rng.choice(FALLBACK_SENTENCES) + "\n" for _ in range(2000)]
        tgt = [" ".join(reversed(s.split())) + "\n" for s in src]
    (data / "train.src").write_text("".join(src), encoding="utf-8")
    (data / "train.tgt").write_text("".join(tgt), encoding="utf-8")
    for cmd in (["vocab", "--input", str(data / "train.src"), str(data / "train.tgt"),
                 "--vocab-size", "1000", "--output", str(data / "vocab")],
                ["--threads", "1", "train", "--src", str(data / "train.src"),
                 "--tgt", str(data / "train.tgt"), "--vocab", str(data / "vocab"),
                 "--output", str(model), "--layers", "2", "--d-model", "32", "--d-ff", "64",
                 "--heads", "2", "--batch-tokens", "1000", "--warmup", "100",
                 "--max-steps", "300", "--log-every", "100"]):
        r = subprocess.run([str(args.transduce)] + cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.exit(f"serve_abuse: transduce {' '.join(cmd[:3])} failed:\n{r.stdout}")
    return model


def load_sentences(args):
    if args.data is not None:
        text = (args.data / "val.en").read_text(encoding="utf-8")
        lines = [s.strip() for s in text.splitlines()[:500]]
        return [s for s in lines if s]
    return FALLBACK_SENTENCES


class Tally:
    def __init__(self, server_pid, rss_every):
        self.lock = threading.Lock()
        self.pid = server_pid
        self.rss_every = rss_every
        self.answered = 0
        self.rss = []  # (answers, KiB)
        self.variants = {}  # (kind, variant) -> {status or "dropped": count}
        self.violations = []
        self.unexpected = {}  # (kind, variant, status) -> count: 4xx but not the documented one
        self.not_json = {}  # variant -> refusals whose body is no JSON error
        self.lost = 0
        self.lost_503 = 0
        self.dropped = 0
        self.reused_drops = 0
        self.latency = {"valid": [], "malformed": [], "oversized": []}

    def record(self, kind, variant, outcome, seconds, violation=None, expected=None):
        with self.lock:
            counts = self.variants.setdefault((kind, variant), {})
            counts[outcome] = counts.get(outcome, 0) + 1
            self.latency[kind].append(seconds)
            if violation:
                self.violations.append(f"{kind} / {variant}: {violation}")
            if kind == "valid" and outcome != 200 or kind == "valid" and violation:
                self.lost += 1
                self.lost_503 += outcome == 503
            if outcome == "dropped":
                self.dropped += 1
            if isinstance(outcome, int) and expected and outcome not in expected \
                    and 400 <= outcome < 500 and kind != "valid":
                key = (kind, variant, outcome)
                self.unexpected[key] = self.unexpected.get(key, 0) + 1
            self.answered += 1
            if self.answered % self.rss_every == 0:
                try:
                    self.rss.append((self.answered, rss_kib(self.pid)))
                except OSError:
                    self.rss.append((self.answered, None))


def client(cid, args, port, requests, tally, heavy):
    rng = random.Random(args.seed * 100003 + cid)
    conn = Connection(port, args.timeout)
    for _ in range(args.requests):
        kind, variant, raw, expected, check = requests.draw(rng)
        if rng.random() < 0.2:
            conn.close()  # a new connection now and then
        t0 = time.time()
        try:
            if variant in HEAVY:
                with heavy:
                    status, headers, body, reused = conn.exchange(raw)
            else:
                status, headers, body, reused = conn.exchange(raw)
        except Dropped as e:
            if "reused" in str(e):
                with tally.lock:
                    tally.reused_drops += 1
            tally.record(kind, variant, "dropped", time.time() - t0, f"no answer: {e}")
            continue
        seconds = time.time() - t0
        violation = None
        if kind == "valid":
            if status == 200:
                violation = check(body)
            else:
                violation = f"status {status}: {body[:200]!r}"
        elif not 400 <= status < 500:
            violation = f"status {status} (want a 4xx): {body[:200]!r}"
        elif b'"error"' not in body:
            with tally.lock:
                tally.not_json[variant] = tally.not_json.get(variant, 0) + 1
        tally.record(kind, variant, status, seconds, violation, expected)
    conn.close()


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--transduce", type=Path, default=REPO / "build" / "transduce")
    p.add_argument("--model", type=Path, help="model directory (default: train a small one)")
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--requests", type=int, default=200, help="requests per client")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=300, help="seconds to wait for an answer")
    p.add_argument("--threads", type=int, help="transduce --threads for the server")
    p.add_argument("--heavy-concurrency", type=int, default=4,
                   help="most requests of a million characters to tokenize in flight at once")
    p.add_argument("--skip", action="append", default=[], metavar="VARIANT",
                   help="leave out a request variant (as the table names it); repeatable")
    p.add_argument("--rss-after", type=int, default=1000,
                   help="answers after which resident memory is first read (the baseline)")
    p.add_argument("--max-rss-growth", type=float, default=10, metavar="PERCENT",
                   help="how much more resident memory than the baseline the end may hold")
    p.add_argument("--data", type=Path,
                   help="Multi30k's folder (default ../shared/data/multi30k, or a toy corpus "
                        "where it is missing)")
    p.add_argument("--work", type=Path, default=Path("/tmp/reliability/serve_abuse"))
    p.add_argument("serve_flags", nargs="*", help="after --: more flags for transduce serve")
    args = p.parse_args()
    args.transduce = args.transduce.resolve()
    if args.data is None and (DEFAULT_DATA / "train.en").is_file():
        args.data = DEFAULT_DATA
    if args.data is not None and not all((args.data / name).is_file()
                                         for name in ("train.en", "train.de", "val.en")):
        sys.exit(f"serve_abuse: {args.data}: no train.en, train.de and val.en")
    args.work.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    model = args.model or make_model(args, args.work)
    server = Server(args.transduce, model, args.threads, args.serve_flags,
                    args.work / "serve.log")
    pid = server.proc.pid
    print(f"server pid {pid} on port {server.port}: {server.command}", flush=True)

    info = Connection(server.port, 30)
    status, _, body, _ = info.exchange(get("/v1/model"))
    limits = json.loads(body)["limits"]
    info.close()
    requests = Requests(load_sentences(args), limits, args.skip)
    tally = Tally(pid, args.rss_after)
    crashes = []

    def watch():
        while not done.is_set():
            if server.proc.poll() is not None:
                crashes.append(f"the server exited with {server.proc.returncode} during the run")
                return
            time.sleep(0.2)

    done = threading.Event()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    rss_start = rss_kib(pid)
    t0 = time.time()
    heavy = threading.BoundedSemaphore(args.heavy_concurrency)
    threads = [threading.Thread(target=client,
                                args=(c, args, server.port, requests, tally, heavy))
               for c in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    run_seconds = time.time() - t0
    done.set()
    watcher.join()

    alive = server.proc.poll() is None
    rss_end = rss_kib(pid) if alive else None
    health = None
    if alive:
        try:
            c = Connection(server.port, 30)
            status, _, body, _ = c.exchange(get("/health"))
            c.close()
            health = (status, json.loads(body))
        except (Dropped, ValueError) as e:
            health = (None, str(e))
        server.proc.send_signal(signal.SIGTERM)
        try:
            rc = server.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            rc = "no exit within 120 s of SIGTERM (killed)"
    else:
        rc = server.proc.returncode
    server.drain.join(timeout=5)
    report(args, tally, limits, crashes, alive, rc, health, rss_start, rss_end, run_seconds,
           time.time() - t_start, model, server.command)


def report(args, tally, limits, crashes, alive, rc, health, rss_start, rss_end, run_seconds,
           wall, model, server_command):
    print()
    print(f"{'kind':<10} {'variant':<36} {'requests':>8}  statuses")
    totals = {}
    histogram = {}
    for (kind, variant), counts in sorted(tally.variants.items()):
        n = sum(counts.values())
        totals[kind] = totals.get(kind, 0) + n
        for s, c in counts.items():
            histogram[(kind, s)] = histogram.get((kind, s), 0) + c
        shown = ", ".join(f"{s}: {c}" for s, c in sorted(counts.items(), key=lambda x: str(x[0])))
        print(f"{kind:<10} {variant:<36} {n:>8}  {shown}")
    print()
    for kind in ("valid", "malformed", "oversized"):
        hist = {s: c for (k, s), c in histogram.items() if k == kind}
        shown = ", ".join(f"{s}: {c}" for s, c in sorted(hist.items(), key=lambda x: str(x[0])))
        lat = tally.latency[kind]
        print(f"{kind:<10} {totals.get(kind, 0):>6} requests   {shown}   latency p50 "
              f"{1000 * percentile(lat, 0.5):.0f} ms, p99 {1000 * percentile(lat, 0.99):.0f} ms")
    rss_1000 = tally.rss[0][1] if tally.rss else None
    failures = list(crashes)
    if not alive:
        failures.append("the server was not running at the end")
    elif rc != 0:
        failures.append(f"the server exited with {rc} after SIGTERM")
    if tally.lost:
        failures.append(f"{tally.lost} valid requests lost ({tally.lost_503} of them 503)")
    bad_invalid = [v for v in tally.violations if not v.startswith("valid")]
    if bad_invalid:
        failures.append(f"{len(bad_invalid)} invalid or oversized requests without a 4xx")
    growth = None
    if rss_1000 and rss_end:
        growth = rss_end / rss_1000 - 1
        if growth > args.max_rss_growth / 100:
            failures.append(f"resident memory grew {100 * growth:.1f}% after the first "
                            f"{args.rss_after} answers (bar: {args.max_rss_growth:g}%)")
    elif alive:
        failures.append(f"resident memory could not be read after {args.rss_after} answers "
                        "and at the end")
    if not health or health[0] != 200 or health[1].get("status") != "ok":
        failures.append(f"GET /health at the end: {health}")
    n = sum(totals.values())
    rows = [
        ("model", str(model)),
        ("clients x requests", f"{args.clients} x {args.requests} = {n} answered or dropped"),
        ("valid / malformed / oversized",
         " / ".join(str(totals.get(k, 0)) for k in ("valid", "malformed", "oversized"))),
        ("server", server_command),
        ("variants left out", ", ".join(args.skip) or "none"),
        ("limits", ", ".join(f"{k} {v}" for k, v in limits.items())),
        ("run time", f"{run_seconds:.1f} s ({n / run_seconds:.0f} requests/s)"),
        ("crashes", len(crashes) + (0 if alive else 1)),
        ("exit status after SIGTERM", rc),
        ("lost valid requests", f"{tally.lost} (503: {tally.lost_503})"),
        ("invalid without a 4xx", len(bad_invalid)),
        ("dropped connections", f"{tally.dropped} ({tally.reused_drops} on reused ones)"),
        ("RSS at start", f"{rss_start} KiB"),
        (f"RSS after {args.rss_after} answers", f"{rss_1000} KiB"),
        ("RSS at the end", f"{rss_end} KiB" + (f" ({100 * growth:+.1f}%)" if growth is not None
                                               else "")),
        (f"RSS every {args.rss_after} answers", " ".join(str(r) for _, r in tally.rss)),
        ("GET /health at the end", json.dumps(health[1]) if health else None),
        ("wall time", f"{wall:.1f} s"),
    ]
    print()
    for k, v in rows:
        print(f"{k:<32} {v}")
    if tally.unexpected:
        print("\n4xx statuses other than docs/serve.md's:")
        for (kind, variant, s), c in sorted(tally.unexpected.items()):
            print(f"  {kind} / {variant}: {s} x {c}")
    if tally.not_json:
        print("\nrefusals without a JSON error body (docs/serve.md: every refusal is JSON):")
        for variant, c in sorted(tally.not_json.items()):
            print(f"  {variant}: {c}")
    if tally.violations:
        print(f"\nviolations ({len(tally.violations)}, first 20):")
        for v in tally.violations[:20]:
            print(f"  {v}")
    if failures:
        print("\nFAILED:")
        for f in failures:
            print(f"  {f}")
        sys.exit(1)
    print("\nOK")


if __name__ == "__main__":
    main()
