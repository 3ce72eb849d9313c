#!/usr/bin/env python3
"""scripts/check_docs against pages written here: a made-up flag, an old spelling, a flag of
another subcommand and a broken link or image are each reported with their file and line; a page
whose commands and links are right passes. The binary is the build's (TRANSDUCE_BINARY)."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_docs"
BINARY = os.environ["TRANSDUCE_BINARY"]


class CheckDocs(unittest.TestCase):
    def check(self, text):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "real.md").write_text("a page\n")
            page = Path(d) / "page.md"
            page.write_text(text)
            r = subprocess.run([sys.executable, str(SCRIPT), "--transduce", BINARY, str(page)],
                               capture_output=True, text=True)
            return r.returncode, r.stdout

    def test_right_page_passes(self):
        code, out = self.check(
            "Train with `transduce train --src a --tgt b -o m --max-steps 5`:\n\n"
            "```\ntransduce --threads 2 bench train --batch-sentences 8 \\\n    --json\n"
            "transduce translate -m m < in.txt | transduce score --ref ref.txt\n```\n"
            "See [the page](real.md#section), ![a figure](real.md) and [a site](https://x.org).\n"
            "```yaml\nbatch_tokens: 4000\nvalid_metric: [bleu, ppl]\n```\n")
        self.assertEqual(code, 0, out)

    def test_each_problem_is_reported(self):
        code, out = self.check(
            "`transduce train --src a --made-up-flag 3`\n"          # 1: made up
            "```\n"                                                  # 2
            "transduce vocab --input a --size 100 \\\n"              # 3: old spelling
            "  --output v\n"                                         # 4
            "transduce translate -m m --max-steps 2\n"               # 5: another command's
            "```\n"                                                  # 6
            "[gone](missing.md) and ![img](pics/none.svg)\n"        # 7: broken link, image
            "```yaml\n"                                             # 8: a bad configuration
            "batch_tokens: 4000\nbatch-size: 3\n```\n")
        self.assertEqual(code, 1, out)
        for expected in ("page.md:1: `transduce train` has no --made-up-flag",
                         "page.md:3: `transduce vocab` has no --size",
                         "page.md:5: `transduce translate` has no --max-steps",
                         "page.md:7: the link missing.md names no file",
                         "page.md:7: the link pics/none.svg names no file",
                         "page.md:8: the configuration file is refused: transduce: error: FILE: "
                         "line 2: batch-size: keys write '_' for the flags' '-'"):
            self.assertIn(expected, out)


if __name__ == "__main__":
    unittest.main()
