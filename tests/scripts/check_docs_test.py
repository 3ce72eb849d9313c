#!/usr/bin/env python3
"""scripts/check_docs against pages written here: a made-up flag, an old spelling, a flag of
another subcommand, a broken link or image and a README result the performance page does not
state are each reported with their file and line; a page whose commands, links and figures are
right passes. The binary is the build's (TRANSDUCE_BINARY)."""

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

    def test_readme_results_must_be_on_the_performance_page(self):
        performance = ("| pair | test_2016 | test_2017 |\n|---|---:|---:|\n"
                       "| en→de | 41.63 (42.02) | 34.17 |\n\nbeam 4 base 1.99 over PyTorch, "
                       "int8 3.85, 1,815 tokens/s, tagging 95.55%\n")
        readme = ("# t\n\n## Results\n\n| task | result | machine |\n|---|---|---|\n"
                  "| en→de, test_2016 / test_2017 (120 min) | 41.63 / 34.17 | EPYC |\n"
                  "| beam 4 against PyTorch, fp32 / int8 | 1.99× / 3.85× | EPYC |\n"
                  "| training, tokens/s; over PyTorch | 1,815, 1.99 | EPYC |\n"
                  "| de→en, test_2016 / test_2017 | 43.19 / 39.96 | EPYC |\n"  # 10: stale, new
                  "| tagging accuracy | 95.5% | EPYC |\n"                      # 11: 95.55, cut
                  "\n## Next\n\n| a | result |\n|---|---|\n| x | 12.5 |\n")  # not Results
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "docs").mkdir()
            (Path(d) / "docs" / "performance.md").write_text(performance)
            (Path(d) / "README.md").write_text(readme)
            r = subprocess.run([sys.executable, str(SCRIPT), "--transduce", BINARY,
                                str(Path(d) / "README.md")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout)
        problems = [line.split("README.md:", 1)[1] for line in r.stdout.splitlines()
                    if "README.md:" in line]
        self.assertEqual(problems, ["10: 43.19 is not on docs/performance.md",
                                    "10: 39.96 is not on docs/performance.md",
                                    "11: 95.5 is not on docs/performance.md"], r.stdout)


if __name__ == "__main__":
    unittest.main()
