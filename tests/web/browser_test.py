#!/usr/bin/env python3
"""The service's web page in a real browser: headless Chromium driven through chromedriver (the
W3C WebDriver protocol is plain HTTP and JSON, so the standard library is the whole client).

Trains a small copy model with the transduce binary, starts `transduce serve` on a free loopback
port, opens the page, types a sentence, clicks Translate, and checks that the translation (what
the API returns for the same sentence) and the attention view appear, that clicking a token isolates its lines and
that the layer and kind selectors redraw the view; then saves a screenshot and stops the server
with SIGTERM, which must exit 0.

  tests/web/browser_test.py --transduce build/transduce --out build/browser-test

Exit status 0 when every check passes, 1 when one fails, 77 (skipped) when Chromium or
chromedriver is not installed, unless TRANSDUCE_REQUIRE_BROWSER=1 (as scripts/test sets): then 1.
"""

import argparse
import base64
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--window-size=1200,900"]
WORDS = ["cat", "dog", "sun", "box", "red", "cup", "map", "pen", "owl", "fig"]
SENTENCE = "owl cat red map"
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failures += not ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, timeout=60):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise RuntimeError("%s %s: %s %s" % (method, url, e.code, e.read().decode()[:400]))


class WebDriver:
    """A chromedriver session: just the commands this test needs."""

    def __init__(self, chromedriver, chromium, profile):
        self.port = free_port()
        self.process = subprocess.Popen([chromedriver, "--port=%d" % self.port],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = "http://127.0.0.1:%d" % self.port
        for _ in range(200):
            try:
                if http("GET", self.base + "/status", timeout=2)["value"]["ready"]:
                    break
            except (OSError, RuntimeError):
                pass
            time.sleep(0.05)
        caps = {"capabilities": {"alwaysMatch": {
            "goog:chromeOptions": {"binary": chromium,
                                   "args": CHROMIUM_FLAGS + ["--user-data-dir=" + profile]},
            "goog:loggingPrefs": {"browser": "ALL"}}}}
        self.session = self.base + "/session/" + http("POST", self.base + "/session",
                                                      caps)["value"]["sessionId"]

    def cmd(self, method, path, body=None):
        return http(method, self.session + path, body)["value"]

    def go(self, url):
        self.cmd("POST", "/url", {"url": url})

    def element(self, css):
        found = self.cmd("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(found.values()))

    def type(self, css, text):
        self.cmd("POST", "/element/%s/value" % self.element(css), {"text": text})

    def click(self, css):
        self.cmd("POST", "/element/%s/click" % self.element(css), {})

    def js(self, script, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait_for(self, script, timeout=60):
        """Polls `script` (a JS expression) until it is truthy; returns its value or None."""
        end = time.time() + timeout
        while time.time() < end:
            value = self.js("return " + script)
            if value:
                return value
            time.sleep(0.1)
        return None

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.cmd("GET", "/screenshot")))

    def console(self):
        return self.cmd("POST", "/se/log", {"type": "browser"})

    def quit(self):
        try:
            http("DELETE", self.session)
        finally:
            self.process.terminate()
            self.process.wait(10)


def train_copy_model(transduce, work):
    rng = random.Random(1)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))) for _ in range(3000)]
    for side in ("src", "tgt"):
        with open(os.path.join(work, "train." + side), "w") as f:
            f.write("\n".join(lines) + "\n")
    run = lambda *args: subprocess.run([transduce] + list(args), check=True,
                                       stdout=subprocess.DEVNULL)
    run("vocab", "--input", os.path.join(work, "train.src"), "--vocab-size", "45",
        "--output", os.path.join(work, "vocab"))
    run("train", "--src", os.path.join(work, "train.src"), "--tgt", os.path.join(work, "train.tgt"),
        "--vocab", os.path.join(work, "vocab"), "--output", os.path.join(work, "model"),
        "--layers", "2", "--d-model", "32", "--d-ff", "64", "--heads", "4", "--dropout", "0",
        "--batch-tokens", "400", "--warmup", "100", "--lr-scale", "0.5", "--max-steps", "1500",
        "--log-every", "500")
    return os.path.join(work, "model")


def start_server(transduce, model):
    server = subprocess.Popen([transduce, "serve", "-m", model, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in server.stdout:
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+/)", line)
        if m:
            return server, m.group(1)
    raise RuntimeError("transduce serve did not start (exit %s)" % server.wait())


def browse(driver, url, out):
    driver.go(url)
    check(driver.wait_for("document.getElementById('model').textContent.includes('model')"),
          "the page shows the model: %s" % driver.js(
              "return document.getElementById('model').textContent"))
    # What the page should show, from the API itself (the page asks for beam 4 by default).
    expected = http("POST", url + "v1/translate",
                    {"text": [SENTENCE], "beam": 4, "attention": True})["translations"][0]
    driver.type("#source", SENTENCE)
    driver.click("#translate")
    translation = driver.wait_for(
        "document.querySelector('#translation .sentence') && "
        "document.querySelector('#translation .sentence').firstChild.textContent")
    check(translation == expected["text"],
          "the translation appears: %r (the API: %r)" % (translation, expected["text"]))
    check(driver.wait_for("document.querySelector('#attention svg.attention-view')") is not None,
          "the attention view appears")

    attention = expected["attention"]
    count = lambda css: driver.js("return document.querySelectorAll(arguments[0]).length", css)
    layers = len(attention["cross"])
    check(driver.js("return document.querySelector('.attention-kind').value") == "cross",
          "encoder-decoder attention first")
    check(driver.js("return document.querySelector('.attention-layer').value") == str(layers - 1),
          "the last layer first")
    check(count(".attention-token.query") == len(attention["target_tokens"]),
          "one query token per output token (%d)" % len(attention["target_tokens"]))
    check(count(".attention-token.key") == len(attention["source_tokens"]),
          "one key token per source token (%d)" % len(attention["source_tokens"]))
    check(count(".attention-head") == len(attention["cross"][0]), "one toggle per head")
    # A line for every weight of at least ~1%, in the shown layer.
    heavy = sum(1 for head in attention["cross"][layers - 1] for row in head for w in row
                if w >= 0.011)
    lines = count(".attention-line")
    check(lines >= heavy, "%d lines for %d weights of 1%% or more" % (lines, heavy))
    driver.screenshot(os.path.join(out, "page.png"))

    # One word's attention on its own.
    driver.click(".attention-token.query[data-index='1']")
    shown = driver.js("return [...document.querySelectorAll('.attention-line')]"
                      ".filter(l => getComputedStyle(l).display !== 'none' && "
                      "getComputedStyle(l).visibility !== 'hidden' && "
                      "getComputedStyle(l).opacity !== '0').map(l => l.dataset.query)")
    check(len(shown) > 0 and set(shown) == {"1"},
          "a click on a token isolates its lines (%d lines, queries %s)" % (
              len(shown), sorted(set(shown))))
    driver.screenshot(os.path.join(out, "page_isolated.png"))
    driver.click(".attention-token.query[data-index='1']")

    driver.js("const s = document.querySelector('.attention-kind'); s.value = 'encoder_self';"
              "s.dispatchEvent(new Event('change'));")
    check(count(".attention-token.query") == len(attention["source_tokens"]),
          "encoder self-attention has the source on both rows")
    driver.js("const s = document.querySelector('.attention-layer'); s.value = '0';"
              "s.dispatchEvent(new Event('change'));")
    check(driver.js("return document.querySelector('.attention-layer').value") == "0",
          "the layer selector switches layers")
    errors = [e for e in driver.console() if e.get("level") == "SEVERE"]
    check(not errors, "no errors in the browser console %s" % errors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--transduce", required=True, help="the transduce binary")
    ap.add_argument("--out", required=True, help="folder for the screenshots")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    args = ap.parse_args()
    for tool in (args.chromium, args.chromedriver):
        if not os.access(tool, os.X_OK):
            print("%s is not installed (Debian: apt-get install chromium chromium-driver)" % tool)
            return 1 if os.environ.get("TRANSDUCE_REQUIRE_BROWSER") == "1" else 77
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="transduce_browser_")
    server = driver = None
    try:
        model = train_copy_model(args.transduce, work)
        server, url = start_server(args.transduce, model)
        driver = WebDriver(args.chromedriver, args.chromium, os.path.join(work, "profile"))
        browse(driver, url, args.out)
    finally:
        if driver:
            driver.quit()
        if server:
            server.send_signal(signal.SIGTERM)
            check(server.wait(60) == 0, "the server exits 0 on SIGTERM")
        shutil.rmtree(work, ignore_errors=True)
    print("screenshots in %s; %d failed" % (args.out, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
