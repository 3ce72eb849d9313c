"""The paper's own BLEU: tokenised BLEU with compound splitting, as tensor2tensor's evaluation
(get_ende_bleu.sh) computed the numbers of Table 2.

How it is computed, for the hypotheses and the references alike:

1. Each line is tokenised by the rules of the Moses tokenizer (tokenizer.perl with `-l LANG` and
   its defaults: no aggressive hyphen splitting, XML escaping on), reimplemented here by
   tokenize(): punctuation and symbols split off, runs of periods kept together, commas kept
   inside numbers, apostrophes split by the language's rule, a word's final period split unless
   the word is an abbreviation, then & | < > ' " [ ] escaped as Moses escapes them.
2. Compounds are split at hyphens between two non-space characters: "a-b" becomes
   "a ##AT##-##AT## b" (the regular expression s{(\\S)-(\\S)}{$1 ##AT##-##AT## $2}g, with its
   quirks kept: matches do not overlap, so "a-b-c" becomes "a ##AT##-##AT## b-c"; and Perl runs it
   on UTF-8 bytes, so each byte of "à" is a \\S of its own).
3. BLEU is multi-bleu.perl's: whitespace tokens, cased, n-grams up to 4, no smoothing, one
   reference: `transduce score --tokenize none --smooth-method none`.

How close to the Perl script, said plainly: on newstest2013 and newstest2014, English and German
(12,006 lines), tokenize() and prepare() give exactly what tokenizer.perl -l LANG -q (Moses commit
3a0631a) and the compound split give, line for line (tests/recipes/wmt14/test_paper_bleu.py checks
this against their output in the shared data's moses-reference/). Other text can still differ in
three ways. (a) The abbreviations, which keep their period before a capitalised word, a number or
the line's end: Moses reads them from its nonbreaking_prefix files; ours are our own lists and
rules (NONBREAKING, _GERMAN_PREFIX), with every entry those sets exercise checked against Moses'
output, but an abbreviation they do not exercise may be missing from ours or in ours only, and
French and every other language are not checked at all. (b) Perl's Unicode classes are
approximated by Python's general categories (IsAlpha: letters and letter numbers; IsAlnum: those
and decimal digits; IsN: numbers), which leave out the combining marks Perl counts as alphabetic
(Other_Alphabetic) and follow Python's Unicode version, not Perl's; no such character occurs in
these sets. (c) Options other than `-l LANG -q` (-a, -no-escape, protected patterns, -penn) are not
implemented.
"""

import functools
import re
import sys
import unicodedata

# Words that keep their final period before a capitalised word, a number or the line's end: 1
# always, 2 only before a number ("No. 5"). Before a lowercase word every period stays anyway, so
# only these cases matter. Entries marked "seen" were kept by tokenizer.perl in newstest2013/2014;
# the rest are usual abbreviations the sets do not exercise, listed on judgement.
_INITIALS = dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1)  # every language: "J. Oates"
NONBREAKING = {
    "en": {
        **_INITIALS,
        # Seen: titles, months, "No. 1".
        **dict.fromkeys("Bros Col Dr Maj Mr Prof Rep Sen St Dec Jan Nov".split(), 1),
        "No": 2,
        # Not exercised. (Seen split, so left out: Co Ft Inc Jr etc, and Roman numerals "III.")
        **dict.fromkeys("Adj Adm Adv Asst Capt Corp Drs Fig Gen Gov Hon Lt Messrs Mrs Ms Mt Sgt "
                        "Sr Supt vs Apr Aug Feb Mar Oct Sep Sept".split(), 1),
        **dict.fromkeys("Art Nos pp".split(), 2)},
    "de": {
        **_INITIALS,
        # Seen: German abbreviations ("Art." at the end of a line too); English titles, which
        # tokenizer.perl keeps in German text as well ("Mr. President", "St. Josef").
        **dict.fromkeys("Art Dr Mio Mrd Prof bzw ca sog usw".split(), 1),
        **dict.fromkeys("Bros Maj Mr Mrs St".split(), 1),
        # Not exercised. (Seen split, so left out: Ft Inc Ing Jr geb.) Numbers, single letters
        # and Roman numerals are _GERMAN_PREFIX's.
        **dict.fromkeys("Abb Abs Abt Apr Aug Bd Bsp Bzw Ca Chr Dez Di Do Feb Fr Hr Hrn Inh Jan "
                        "Jh Jhd Jul Jun Kap Mi Mo Mrz Nov Okt Sa Sep Sept So Std Str Tel Vgl abs "
                        "evtl ggf inkl jew lt max min mind vgl zB zzgl".split(), 1),
        **dict.fromkeys("Nr".split(), 2)},
    "fr": {  # not checked against Moses' output
        **_INITIALS, **dict.fromkeys(
            "Dr Me Mgr Mlle Mlles Mme Mmes MM Pr Prof St Ste av bd cf chap etc ex fig janv juil "
            "mm oct sept nov déc vol".split(), 1), **dict.fromkeys("No art n p pp".split(), 2)},
}
# German keeps a period after rules rather than listed words: a number of one or two digits (an
# ordinal: "am 22. September", "Terminal 3. Augenzeugen"; "2013." at a sentence end splits, as
# Moses splits 100 and above); a single letter of either case ("z. B.", "d. h. 21", "n. Chr.",
# "E / S."); a Roman numeral up to XX ("Mswati III.", "die VI. Sitzung"). The sets show 1 to 77,
# the lowercase d h n z, and II III VI; the rest of each range follows Moses' German list as we
# recall its documentation, unchecked (0, 00-09, other letters, IV-XX but VI).
_GERMAN_PREFIX = re.compile(r"[1-9][0-9]?|[A-Za-z]|X?(?:IX|IV|V?I{0,3})|XX")


# Perl's \s: Python's \s would also take the separators \x1c-\x1f, which Perl drops as control
# characters instead.
_SPACES = re.compile(r"[^\S\x1c-\x1f]+")
_CONTROL = re.compile(r"[\x00-\x1f]")

# Letters and numbers live in planes 0-3; planes 4-16 hold none.
_LAST_CODE_POINT = 0x3FFFF
_CATEGORIES = {  # Perl's classes, as Unicode general categories
    "alpha": lambda c: c[0] == "L" or c == "Nl",              # \p{IsAlpha}
    "alnum": lambda c: c[0] == "L" or c in ("Nl", "Nd"),      # \p{IsAlnum}
    "number": lambda c: c[0] == "N",                          # \p{IsN}
}


@functools.cache
def _ranges():
    """Each of Perl's classes as code point ranges [first, last], from one pass over Unicode."""
    out = {kind: [] for kind in _CATEGORIES}
    for cp in range(_LAST_CODE_POINT + 1):
        category = unicodedata.category(chr(cp))
        for kind, pred in _CATEGORIES.items():
            if pred(category):
                ranges = out[kind]
                if ranges and ranges[-1][1] == cp - 1:
                    ranges[-1][1] = cp
                else:
                    ranges.append([cp, cp])
    return out


@functools.cache
def _class(kind, wide):
    """The inside of a [...] for one of Perl's classes. Without wide, only its part in the Basic
    Multilingual Plane: re looks that part up in one table but tests ranges beyond it one by one,
    which made every rule several times slower; tokenize() uses the wide classes only for the
    rare line with such a character."""
    def text(first, last):
        return re.escape(chr(first)) + ("" if first == last else "-" + re.escape(chr(last)))
    return "".join(text(first, last) for first, last in _ranges()[kind] if wide or last <= 0xFFFF)


@functools.cache
def _rules(lang, wide):
    """tokenizer.perl's substitutions before the one for final periods, in its order, as
    (pattern, replacement)."""
    alpha, alnum, number = (_class(kind, wide) for kind in ("alpha", "alnum", "number"))
    c = re.compile
    rules = [
        # Every character that is not alphanumeric, space, or one of . ' ` , - stands alone.
        (c(f"([^{alnum}\\s.'`,\\-])"), r" \1 "),
        # A run of periods stands alone, as one token ("Wait..." -> "Wait ...").
        (c(r"\.{2,}"), r" \g<0> "),
        # Commas split unless between two numbers; a final one after a number too.
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


@functools.cache
def _alpha_char():
    """Any one character of Perl's \\p{IsAlpha}."""
    return re.compile(f"[{_class('alpha', True)}]")


def _split_punctuation(text, lang):
    """Every rule before the one for final periods."""
    wide = max(text, default="") > "\uffff"  # any character beyond the BMP
    for pattern, repl in _rules(lang, wide):
        text = pattern.sub(repl, text)
    return text


def _split_final_periods(words, lang):
    """Each word ending in a period loses it to a token of its own unless the period marks an
    abbreviation. A run of periods is no such word (Perl hides runs from this rule behind a
    placeholder of capital letters, which is how they look to the word before them)."""
    out = []
    for i, word in enumerate(words):
        if word.endswith(".") and word.strip("."):
            following = words[i + 1] if i + 1 < len(words) else ""
            if not _keeps_period(word[:-1], following, lang):
                word = word[:-1] + " ."
        out.append(word)
    return " ".join(out)


_DIGITS = set("0123456789")  # Perl's [0-9], not every Unicode digit


def _keeps_period(pre, following, lang):
    """Whether pre + "." keeps its period, given the word after it ("" at the line's end)."""
    if "." in pre and _alpha_char().search(pre):  # "U.S.A.", "u.a.", "Amazon.com."
        return True
    kind = _prefix_kind(pre, lang)
    return (kind == 1 or following[:1].islower() or
            (kind == 2 and following[:1] in _DIGITS))


def _prefix_kind(pre, lang):
    """1 if pre always keeps its period, 2 if only before a number, None if it never does."""
    kind = NONBREAKING.get(lang, _INITIALS).get(pre)
    if kind is None and lang == "de" and _GERMAN_PREFIX.fullmatch(pre):
        kind = 1
    return kind


_ESCAPES = [("&", "&amp;"), ("|", "&#124;"), ("<", "&lt;"), (">", "&gt;"), ("'", "&apos;"),
            ('"', "&quot;"), ("[", "&#91;"), ("]", "&#93;")]


def tokenize(line, lang):
    """One line tokenised as tokenizer.perl -l LANG tokenises it (see the module's notes)."""
    line = line.removesuffix("\n")
    if not _SPACES.sub("", line):
        return line  # the Perl script prints a blank line as it read it
    # Spaces collapsed, control characters dropped, then one space cut at each end: a line's
    # first and last characters have no neighbour for the apostrophe rules ("'However" stays).
    text = _CONTROL.sub("", _SPACES.sub(" ", line)).removeprefix(" ").removesuffix(" ")
    text = _split_final_periods(_split_punctuation(text, lang).split(), lang)
    text = re.sub(r"\.'$", " . ' ", text)  # a final .' escapes the rule above: split it
    for raw, escaped in _ESCAPES:
        text = text.replace(raw, escaped)
    return text


_COMPOUND = re.compile(rb"(\S)-(\S)")


def split_compounds(line):
    """tensor2tensor's compound splitting: a-b -> a ##AT##-##AT## b (non-overlapping matches). As
    in Perl without -C, it works on UTF-8 bytes: "vis-à-vis" splits at both hyphens, for "à" ends
    in a byte of its own (Python's str would see one character, taken by the first match)."""
    return _COMPOUND.sub(rb"\1 ##AT##-##AT## \2", line.encode("utf-8")).decode("utf-8")


def prepare(line, lang):
    """A line as the paper's BLEU sees it: tokenised, then its compounds split."""
    return split_compounds(tokenize(line, lang))


def prepare_file(src, dst, lang):
    # Lines end at "\n" alone, as Perl reads them: a stray "\r" is whitespace, not a line break.
    with open(src, encoding="utf-8", newline="\n") as f, \
            open(dst, "w", encoding="utf-8", newline="\n") as out:
        for line in f:
            out.write(prepare(line, lang) + "\n")


# `transduce score`'s flags for the BLEU of two prepared files: multi-bleu.perl's settings.
SCORE_FLAGS = ("--tokenize", "none", "--smooth-method", "none", "--metrics", "bleu")


if __name__ == "__main__":  # tokenise standard input: paper_bleu.py LANG < in > out
    for text_line in sys.stdin:
        print(prepare(text_line, sys.argv[1] if len(sys.argv) > 1 else "en"))
