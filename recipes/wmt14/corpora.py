"""The WMT 2014 data the paper trained and tested on: where each corpus is published, which file of
which archive holds each language, fetching (resumable), and reading the test sets' SGML.

The archives and their members are those of the WMT 2014 translation task's release
(statmt.org). A release elsewhere (a mirror, or the miniature file:// one the tests build) only
has to keep the same file names.
"""

import gzip
import html
import re
import shutil
import tarfile
import urllib.request
from pathlib import Path

RELEASE = "https://www.statmt.org"

# Training corpora per pair: (name, archive path under the release, member for each language).
# "{xx}" in a member is the language code; a member ending in .gz is gzipped inside the archive.
TRAINING = {
    "en-de": [
        ("europarl-v7", "wmt13/training-parallel-europarl-v7.tgz",
         "training/europarl-v7.de-en.{xx}"),
        ("commoncrawl", "wmt13/training-parallel-commoncrawl.tgz", "commoncrawl.de-en.{xx}"),
        ("news-commentary-v9", "wmt14/training-parallel-nc-v9.tgz",
         "training/news-commentary-v9.de-en.{xx}"),
    ],
    "en-fr": [
        ("europarl-v7", "wmt13/training-parallel-europarl-v7.tgz",
         "training/europarl-v7.fr-en.{xx}"),
        ("commoncrawl", "wmt13/training-parallel-commoncrawl.tgz", "commoncrawl.fr-en.{xx}"),
        ("news-commentary-v9", "wmt14/training-parallel-nc-v9.tgz",
         "training/news-commentary-v9.fr-en.{xx}"),
        ("un", "wmt13/training-parallel-un.tgz", "un/undoc.2000.fr-en.{xx}"),
        ("giga-fren", "wmt10/training-giga-fren.tar", "giga-fren.release2.fixed.{xx}.gz"),
    ],
}
# newstest2013 (the paper's development set) is plain text; newstest2014 (its test set) is the
# full 3003-sentence SGML release.
DEV = ("wmt14/dev.tgz", "dev/newstest2013.{xx}")
TEST = ("wmt14/test-full.tgz", "test-full/newstest2014-{pair}-{side}.{xx}.sgm")


def test_member(pair, lang):
    """newstest2014's member for `lang` of `pair` ("en-de" -> "deen"; English is the source)."""
    other = pair.split("-")[1]
    return TEST[1].format(pair=f"{other}en", side="src" if lang == "en" else "ref", xx=lang)


def archives(pair):
    """Every archive the pair needs, relative to the release."""
    names = [a for _, a, _ in TRAINING[pair]] + [DEV[0], TEST[0]]
    return list(dict.fromkeys(names))


def fetch(release, name, dest_dir, log):
    """Downloads release/name into dest_dir (kept: a second run does not fetch it again); a cut
    download is redone, never used."""
    dest = Path(dest_dir) / Path(name).name
    if dest.exists():
        return dest
    url = f"{release.rstrip('/')}/{name}"
    log(f"downloading {url}")
    part = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=120) as r, open(part, "wb") as out:
            shutil.copyfileobj(r, out, 1 << 20)
    except (OSError, ValueError) as e:  # ValueError: not a URL at all
        part.unlink(missing_ok=True)
        raise RuntimeError(f"{url} could not be fetched ({e})") from e
    part.replace(dest)
    return dest


def extract_member(archive, member, dest):
    """Writes one member of a tar archive (gunzipped if it ends in .gz) to dest, atomically."""
    part = Path(str(dest) + ".part")
    try:
        with tarfile.open(archive) as tar:
            try:
                src = tar.extractfile(member)
            except KeyError:
                src = None
            if src is None:
                raise RuntimeError(f"{archive}: no file {member} in the archive")
            with src, open(part, "wb") as out:
                shutil.copyfileobj(gzip.GzipFile(fileobj=src) if member.endswith(".gz") else src,
                                   out, 1 << 20)
    except (tarfile.TarError, OSError, EOFError) as e:
        part.unlink(missing_ok=True)
        raise RuntimeError(f"{archive}: {member} could not be read ({e})") from e
    part.replace(dest)


_SEG = re.compile(r"<seg\b[^>]*>(.*)</seg>", re.IGNORECASE)


def read_sgml(path):
    """The segments of a WMT test-set SGML file, in order: the text inside each <seg ...>...</seg>
    with its entities (&amp; &quot; &#39; ...) decoded and its whitespace collapsed."""
    segments = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if "<seg" not in line.lower():
                continue
            m = _SEG.search(line)
            if not m:
                raise RuntimeError(f"{path}:{number}: a <seg> without its </seg> on the same line")
            segments.append(" ".join(html.unescape(m.group(1)).split()))
    if not segments:
        raise RuntimeError(f"{path}: no <seg> elements (expected a WMT test-set SGML file)")
    return segments
