#!/usr/bin/env python3
"""Label claim-orbit variants by rule: what a careful reader would flag.

Usage: scripts/claim-orbit-flags.py ORBITS_DIR [--sample N] [--seed S] [--list]

Reads ORBITS_DIR/claims.jsonl (numcheck claims orbit generate), draws N variants at random
(deterministic: the variants ordered by SHA-256 of "<seed>:<variant id>", the first N taken) and
applies the rules below to every rewritten span. A variant is flagged when one of its spans is.
The rules read only the variant, its spans and the original claim, never numcheck's code, so the
same rules score the generator before and after a change.

Rules that change the claim:
  magnitude_split    a magnitude word glued by a hyphen is left behind ("$110-billion" -> "one
                     hundred ten dollars-billion")
  ordinal_fraction   "a third/fourth/... <noun>" rewritten (an ordinal read as a fraction)
  identifier         a number inside an identifier rewritten (401k, 501(c)(4), F-35, phone numbers,
                     ZIP/area codes, after "call"/"dial")
  tally              a number of a score or vote tally "228-197" rewritten alone
  year               a year rewritten as a number (a 4-digit 1000..2100 after a temporal word)
  pronoun_one        the pronoun or compound "one" rewritten ("prevent one from", "a one way trip")
  split_half         "a half" of "a year and a half" rewritten alone (the quantity is 1.5 years)
  quoted             a number that is all of a quotation rewritten (starting "19" -> "nineteen")
Rules for absurd or unnatural forms:
  unit_range         a unit rewrite whose number is outside [0.01, 10^6]
  words_fraction     number words for a non-integer ("two and a half", "one half", "... point ...")
  words_long         number words for an integer >= 1000 with more than two significant digits
  scientific_small   e-notation for a magnitude below 10^6
  percent_non_ratio  a percentage made from a number not written as a ratio (no %, percent, p/q or
                     fraction word)
  fraction_improper  a fraction p/q with p >= q
  scale_mantissa     a mantissa of 1,000 or more before a scale word or letter ("1304.795 thousand",
                     "5600bn")
"""
import argparse
import hashlib
import json
import re
import sys
from fractions import Fraction

SCALE = r"(thousand|million|billion|trillion|lakh|crore)"
ORDINALS = r"(third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|quarter)"
FRACTION_FOLLOWERS = {"of", "as", "in", "on", "to", "from", "since", "by", "and", "or", "than", "less",
                      "more", "fewer", "the", "a", "an", "this", "that", "for", "over", "under", "last",
                      "during", "after", "before", "its", "their", "his", "her", "all"}
YEAR_WORDS = {"in", "since", "until", "till", "during", "before", "after", "circa", "year", "by"}
PRONOUN_VERBS = {"prevent", "prevents", "protect", "protects", "stop", "stops", "keep", "keeps"}
FRACTION_WORDS = r"\b(half|halves|point|(third|quarter|fourth|fifth|sixth|seventh|eighth|ninth|tenth)s?)\b"


def words_after(s):
    m = re.match(r"\s*([A-Za-z]+)", s)
    return m.group(1).lower() if m else ""


def word_before(s):
    m = re.search(r"([A-Za-z]+)\W*$", s)
    return m.group(1).lower() if m else ""


def token_around(claim, b, e):
    tb = b
    while tb > 0 and not claim[tb - 1].isspace():
        tb -= 1
    te = e
    while te < len(claim) and not claim[te].isspace():
        te += 1
    return claim[tb:te]


def number_in(text):
    m = re.search(r"-?\d[\d,]*(\.\d+)?", text)
    return Fraction(m.group(0).replace(",", "")) if m else None


def flags_of_span(form, claim, ob, oe, sp):
    orig, new = sp["original"], sp["rewritten"]
    before, after = claim[:ob], claim[oe:]
    value = Fraction(sp["value"])
    out = []
    if re.match(r"-" + SCALE + r"\b", after, re.I):
        out.append("magnitude_split")
    if re.fullmatch(r"(a|an|one)[ -]" + ORDINALS, orig.strip(), re.I):
        nxt = words_after(after)
        if nxt and nxt not in FRACTION_FOLLOWERS and not re.match(r"\s*[,.;:!?)]", after):
            out.append("ordinal_fraction")
    tok = token_around(claim, ob, oe)
    if (re.search(r"\d\([A-Za-z0-9]{1,3}\)", tok) or re.fullmatch(r"[\"'“‘(]*\d{3}\(?[kKbB]\)?s?\W*", tok)
            or re.search(r"\d{3}-\d{3}-\d{4}|\b1-8\d\d\b", tok) or re.search(r"\b[A-Za-z]{1,3}-\d", tok)
            or re.search(r"\b(zip|area|postal)\s+code\s*$", before, re.I)
            or re.search(r"\b(call|dial|text)\s*$", before, re.I)):
        out.append("identifier")
    m = re.fullmatch(r"\W*(\d+)[-\u2013](\d+)\W*", tok)
    if m and int(m.group(1)) >= int(m.group(2)):
        out.append("tally")
    prev = word_before(before)
    if orig.strip().lower() == "one" and (words_after(after) in {"from", "way"} or prev in PRONOUN_VERBS):
        out.append("pronoun_one")
    if re.search(r"[\"'“‘]$", before) and re.match(r"[\"'”’]", after):
        out.append("quoted")
    if orig.strip().lower() in ("a half", "half", "one half") and prev == "and":
        out.append("split_half")
    if re.fullmatch(r"\d{4}", orig.strip()) and 1000 <= int(orig) <= 2100 and word_before(before) in YEAR_WORDS:
        out.append("year")
    if form == "unit":
        n = number_in(new)
        if n is not None and not (Fraction(1, 100) <= abs(n) <= 10**6):
            out.append("unit_range")
    if form == "words":
        if re.search(FRACTION_WORDS, new, re.I):
            out.append("words_fraction")
        elif value.denominator == 1 and abs(value) >= 1000:
            digits = str(abs(value.numerator)).rstrip("0")
            if len(digits) > 2:
                out.append("words_long")
    if form == "scientific" and abs(value) < 10**6:
        out.append("scientific_small")
    if form == "percent" and not re.search(r"%|per ?cent|/|" + FRACTION_WORDS, orig, re.I):
        out.append("percent_non_ratio")
    if form in ("scale_word", "scale_letter"):
        m = re.search(r"(\d+(?:\.\d+)?) ?(thousand|million|billion|trillion|k|m|bn)\b", new)
        if m and Fraction(m.group(1)) >= 1000:
            out.append("scale_mantissa")
    if form == "fraction":
        m = re.search(r"(\d+)/(\d+)", new)
        if m and int(m.group(1)) >= int(m.group(2)):
            out.append("fraction_improper")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("orbits")
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--seed", default="20261207")
    ap.add_argument("--list", action="store_true", help="print every sampled variant with its flags")
    a = ap.parse_args()
    variants = []
    with open(f"{a.orbits}/claims.jsonl", encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            for v in o["variants"]:
                variants.append((o["claim"], v))
    variants.sort(key=lambda cv: hashlib.sha256(f"{a.seed}:{cv[1]['id']}".encode()).hexdigest())
    sample = variants[: a.sample]
    counts, flagged, meaning = {}, 0, 0
    for claim, v in sample:
        fl = []
        delta = 0
        for sp in v["spans"]:
            ob = sp["begin"] - delta
            oe = ob + len(sp["original"].encode("utf-8"))
            # byte offsets -> str offsets
            cb = claim.encode("utf-8")
            ob_s = len(cb[:ob].decode("utf-8", "ignore"))
            oe_s = len(cb[:oe].decode("utf-8", "ignore"))
            fl += flags_of_span(v["form"], claim, ob_s, oe_s, sp)
            delta += len(sp["rewritten"].encode("utf-8")) - len(sp["original"].encode("utf-8"))
        fl = sorted(set(fl))
        for r in fl:
            counts[r] = counts.get(r, 0) + 1
        flagged += bool(fl)
        meaning += bool(set(fl) & {"magnitude_split", "ordinal_fraction", "identifier", "tally", "year", "pronoun_one", "split_half", "quoted"})
        if a.list:
            print(f"{','.join(fl) or '-'}\t{v['form']}\t{v['text']}")
    n = len(sample)
    print(f"variants in the orbits: {len(variants)}; sampled {n} (seed {a.seed})")
    print(f"flagged: {flagged}/{n} = {100 * flagged / max(n, 1):.1f}%")
    print(f"  changing the claim: {meaning}/{n} = {100 * meaning / max(n, 1):.1f}%")
    for r in sorted(counts):
        print(f"  {r}: {counts[r]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
