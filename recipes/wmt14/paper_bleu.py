"""The paper's own BLEU: tokenised BLEU with compound splitting, as tensor2tensor's evaluation
(get_ende_bleu.sh) computed the numbers of Table 2.

How it is computed, for the hypotheses and the references alike:

1. Each line is tokenised by the rules of the Moses tokenizer (tokenizer.perl with `-l LANG` and
   its defaults: no aggressive hyphen splitting, XML escaping on), reimplemented here by
   tokenize(): punctuation and symbols split off, runs of periods kept together, commas kept
   inside numbers, apostrophes split by the language's rule, a final period split unless the
   word is a known abbreviation, then & | < > ' " [ ] escaped as Moses escapes them.
2. Compounds are split at hyphens between two non-space characters: "a-b" becomes
   "a ##AT##-##AT## b" (the regular expression s{(\\S)-(\\S)}{$1 ##AT##-##AT## $2}g, with its
   quirk kept: matches do not overlap, so "a-b-c" becomes "a ##AT##-##AT## b-c").
3. BLEU is multi-bleu.perl's: whitespace tokens, cased, n-grams up to 4, no smoothing, one
   reference: `transduce score --tokenize none --smooth-method none`.

Differences from the Perl script, said plainly: the abbreviation lists (NONBREAKING) are our own and
shorter than Moses' nonbreaking_prefix files, so a rare abbreviation before a capitalised word can
be split where Moses would keep it; and Perl's Unicode classes are approximated by Python's
general categories (ALPHA: letters and letter numbers; ALNUM: those and decimal digits).
"""

import functools
import re
import sys
import unicodedata

# Abbreviations that keep their period before a capitalised word: 1 always, 2 only before a
# number ("No. 5"). Single letters (initials) count for every language.
_COMMON = {c: 1 for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
NONBREAKING = {
    "en": {**_COMMON, **dict.fromkeys(
        "Adj Adm Adv Apr Asst Aug Bros Capt Col Corp Dec Dr Drs Feb Fig Fr Gen Gov Hon Inc Jan "
        "Jr Jul Jun Lt Ltd Maj Mar Messrs Mr Mrs Ms Mt Nov Oct Prof Rep Rev Sen Sep Sept Sgt Sr "
        "St Supt e.g etc i.e vs".split(), 1), **dict.fromkeys("No Nos Art pp".split(), 2)},
    "de": {**_COMMON, **dict.fromkeys(
        "Abb Abs Abt Apr Aug Bd Bsp Bzw Ca Chr Dez Di Do Dr Feb Fr Hr Hrn Inh Jan Jh Jhd Jul "
        "Jun Kap Mi Mio Mo Mrd Mrz Nov Okt Prof Sa Sep Sept So Std Str Tel Vgl abs bzw ca evtl "
        "geb ggf inkl jew lt max min mind sog usw vgl zB zzgl".split(), 1),
        **dict.fromkeys("Nr S Art".split(), 2)},
    "fr": {**_COMMON, **dict.fromkeys(
        "Dr Me Mgr Mlle Mlles Mme Mmes MM Pr Prof St Ste av bd cf chap etc ex fig janv juil "
        "mm oct sept nov déc vol".split(), 1), **dict.fromkeys("No art n p pp".split(), 2)},
}


@functools.cache
def _classes():
    """Character classes for re, built from Unicode general categories (Perl's \\p{...})."""
    def ranges(pred):
        out, start, prev = [], None, None
        for cp in range(0x30000):
            if 0xD800 <= cp < 0xE000 or not pred(unicodedata.category(chr(cp))):
                continue
            if start is None or cp != prev + 1:
                if start is not None:
                    out.append((start, prev))
                start = cp
            prev = cp
        if start is not None:
            out.append((start, prev))
        return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                       for a, b in out)

    alpha = ranges(lambda c: c[0] == "L" or c == "Nl")
    alnum = ranges(lambda c: c[0] == "L" or c in ("Nl", "Nd"))
    number = ranges(lambda c: c[0] == "N")
    return alpha, alnum, number


@functools.cache
def _rules(lang):
    alpha, alnum, number = _classes()
    c = re.compile
    rules = [
        # Every character that is not alphanumeric, space, or one of . ' ` , - stands alone.
        (c(f"([^{alnum}\\s\\.'`,\\-])"), r" \1 "),
        # Commas: split unless between two digits; kept after a final number's comma split off.
        (c(f"([^{number}]),"), r"\1 , "),
        (c(f",([^{number}])"), r" , \1"),
        (c(f"([{number}]),$"), r"\1 ,"),
    ]
    if lang == "en":  # contractions split to the right: "don't" -> "don 't"
        rules += [(c(f"([^{alpha}])'([^{alpha}])"), r"\1 ' \2"),
                  (c(f"([^{alpha}{number}])'([{alpha}])"), r"\1 ' \2"),
                  (c(f"([{alpha}])'([^{alpha}])"), r"\1 ' \2"),
                  (c(f"([{alpha}])'([{alpha}])"), r"\1 '\2"),
                  (c(f"([{number}])'(s)"), r"\1 '\2")]
    elif lang in ("fr", "it", "ga", "ca"):  # to the left: "l'homme" -> "l' homme"
        rules += [(c(f"([^{alpha}])'([^{alpha}])"), r"\1 ' \2"),
                  (c(f"([^{alpha}])'([{alpha}])"), r"\1 ' \2"),
                  (c(f"([{alpha}])'([^{alpha}])"), r"\1 ' \2"),
                  (c(f"([{alpha}])'([{alpha}])"), r"\1' \2")]
    else:
        rules.append((c("'"), " ' "))
    return rules


_ESCAPES = [("&", "&amp;"), ("|", "&#124;"), ("<", "&lt;"), (">", "&gt;"), ("'", "&apos;"),
            ('"', "&quot;"), ("[", "&#91;"), ("]", "&#93;")]
_DOTS = re.compile(r"\.{2,}")
_DOTS_MARK = "DOTSMULTI"  # letters only, so that no later rule splits it


def tokenize(line, lang):
    """One line tokenised as tokenizer.perl -l LANG tokenises it (see the module's notes)."""
    text = re.sub(r"\s+", " ", f" {line.rstrip(chr(10))} ")
    text = re.sub(r"[\x00-\x1f]", "", text)
    for pattern, repl in _rules(lang)[:1]:
        text = pattern.sub(repl, text)
    # Runs of periods stay together as one token.
    runs = _DOTS.findall(text)
    text = _DOTS.sub(f" {_DOTS_MARK} ", text)
    for pattern, repl in _rules(lang)[1:]:
        text = pattern.sub(repl, text)
    prefixes = NONBREAKING.get(lang, _COMMON)
    words = text.split()
    for i, word in enumerate(words):
        if len(word) < 2 or not word.endswith("."):
            continue
        pre = word[:-1]
        if i == len(words) - 1:
            words[i] = f"{pre} ."  # the last word: a sentence end, not an abbreviation
            continue
        after = words[i + 1]
        keep = (("." in pre and any(ch.isalpha() for ch in pre)) or prefixes.get(pre) == 1 or
                after[:1].islower() or (prefixes.get(pre) == 2 and after[:1] in "0123456789" and after[:1] != ""))
        if not keep:
            words[i] = f"{pre} ."
    text = " ".join(words)
    text = re.sub(r"\.' ?$", " . ' ", text)  # a final .' the word rule misses
    text = " ".join(text.split())
    runs.reverse()
    text = re.sub(_DOTS_MARK, lambda _: runs.pop(), text)
    for raw, escaped in _ESCAPES:
        text = text.replace(raw, escaped)
    return text


_COMPOUND = re.compile(r"(\S)-(\S)")


def split_compounds(line):
    """tensor2tensor's compound splitting: a-b -> a ##AT##-##AT## b (non-overlapping matches)."""
    return _COMPOUND.sub(r"\1 ##AT##-##AT## \2", line)


def prepare(line, lang):
    """A line as the paper's BLEU sees it: tokenised, then its compounds split."""
    return split_compounds(tokenize(line, lang))


def prepare_file(src, dst, lang):
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        for line in f:
            out.write(prepare(line, lang) + "\n")


# `transduce score`'s flags for the BLEU of two prepared files: multi-bleu.perl's settings.
SCORE_FLAGS = ("--tokenize", "none", "--smooth-method", "none", "--metrics", "bleu")


if __name__ == "__main__":  # tokenise standard input: paper_bleu.py LANG < in > out
    for text_line in sys.stdin:
        print(prepare(text_line, sys.argv[1] if len(sys.argv) > 1 else "en"))
