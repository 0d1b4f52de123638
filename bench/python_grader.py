#!/usr/bin/python3
"""The peer of `numcheck orbit score` in bench/compare.sh: the straightforward Python grader a
researcher would write (re + fractions.Fraction), following docs/grading.md (strict parser and the
audit_v2 layer) so that it gives the same grade on every record of the benchmark's responses.

It reads the benchmark's views.jsonl (prompt id -> expected value and unit) and data/units.json,
grades every record of a responses file and writes one JSON line per prompt in benchmark order:
{"prompt_id", "strict": {"outcome", "value", "multiple_final"},
 "audit": {"outcome", "value", "recovered", "rules", "magnitude_k"}}.
bench/compare.sh checks these against numcheck's scores record by record.

It covers the rules the benchmark's responses exercise (FINAL lines, the strict number grammar,
the six whitelisted units and their words, attached percent, the audit's markdown, casefold and
times-ten rewrites, magnitude drops); the rarer number forms that numcheck reads only to call
an answer a parse_error instead of a unit_error (number words, vulgar fractions) are checked with
a small regular expression, not numcheck's full reader.

Usage: /usr/bin/python3 bench/python_grader.py BENCH_DIR RESPONSES.jsonl OUT.jsonl
"""
import json
import re
import sys
from fractions import Fraction

ROOT = __file__.rsplit("/bench/", 1)[0]
SEED_UNITS = ("L", "mL", "km", "m", "cm", "km/h")
RULES = ["strip_bold", "strip_asterisk", "strip_backtick", "casefold_tag", "sci_times", "sci_x",
         "sci_caret", "sci_superscript"]

NUMBER_RE = re.compile(r"^(?:[0-9+\-.,/% \t]|\u2212|(?<=[0-9.])[eE](?=[+\-\u2212]?[0-9]))*")
STRICT_RE = re.compile(
    r"^(?P<sign>[+\-\u2212]?)(?:"
    r"(?P<frac>(?P<fn>[0-9]+)/(?P<fd>[0-9]+))"
    r"|(?P<int>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<dec>[0-9]+))?(?:[eE](?P<exp>[+\-\u2212]?[0-9]+))?"
    r")$")
LONGER_RE = re.compile(r"^[0-9.,]+\s*(?:percent|per\s+cent|hundred|thousand|million|billion|trillion)\b"
                       r"|^[0-9]+\s*[\u00bc-\u00be\u2150-\u215e]", re.I)
SUPERSCRIPT = {"\u2070": "0", "\u00b9": "1", "\u00b2": "2", "\u00b3": "3", "\u2074": "4", "\u2075": "5",
               "\u2076": "6", "\u2077": "7", "\u2078": "8", "\u2079": "9", "\u207a": "+", "\u207b": "-"}
SCI_RE = re.compile(r"(?<=[0-9])([ \t]*)(\u00d7|[xX])[ \t]*10(?:(\^|\u02c6)([+\-\u2212]?[0-9]+)|"
                    r"([\u207a\u207b]?[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+))")


def load_units():
    with open(f"{ROOT}/data/units.json", encoding="utf-8") as f:
        doc = json.load(f)
    symbols, words, by_id = {}, {}, {}
    for u in doc["units"]:
        unit = {"id": u["id"], "dim": u["dimension"], "factor": Fraction(u["factor"]), "symbols": u.get("symbols", [])}
        by_id[u["id"]] = unit
        for s in unit["symbols"]:
            symbols[s] = unit
        for w in u.get("words", []):
            words[" ".join(w.lower().split())] = unit
    return symbols, words, by_id


SYMBOLS, WORDS, BY_ID = load_units()


def lookup(text):
    text = text.strip()
    if not text:
        return None
    if text in SYMBOLS:
        return SYMBOLS[text]
    return WORDS.get(" ".join(text.lower().split()))


def strict_number(text):
    m = STRICT_RE.match(text.strip())
    if not m:
        return None
    neg = m.group("sign") in ("-", "\u2212")
    if m.group("frac"):
        den = int(m.group("fd"))
        if den == 0:
            return None
        v = Fraction(int(m.group("fn")), den)
    else:
        digits = m.group("int").replace(",", "") + (m.group("dec") or "")
        e = -len(m.group("dec") or "")
        if m.group("exp"):
            if m.group("int").find(",") >= 0:
                return None
            e += int(m.group("exp").replace("\u2212", "-"))
        if abs(e) > 1000:
            return None
        v = Fraction(int(digits)) * (Fraction(10) ** e)
    return -v if neg else v


def parse_answer(answer, expected, target):
    answer = answer.strip()
    if answer.endswith("."):
        answer = answer[:-1].rstrip()
    n = NUMBER_RE.match(answer).end()
    number = answer[:n].rstrip()
    unit_text = answer[n:]
    percent = len(number) >= 2 and number[-1] == "%" and number[-2] not in " \t"
    if percent:
        number = number[:-1]
    if not number or any(c.isdigit() and c < "\x80" for c in unit_text):
        return "parse_error", None
    v = strict_number(number)
    if v is None:
        return "parse_error", None
    if percent:
        v /= 100
    if unit_text:
        w = lookup(unit_text)
        ok = (w is not None and target is not None and
              ((w["id"] in SEED_UNITS and not (unit_text.strip() in w["symbols"] and unit_text.strip() != w["id"]))
               or w is target) and w["dim"] == target["dim"])
        if not ok:
            return ("parse_error" if LONGER_RE.match(answer) else "unit_error"), None
        v = v * w["factor"] / target["factor"]
    elif target is not None:
        return "unit_error", None
    return ("correct" if v == expected else "value_error"), v


def final_line(lines):
    """(answer, multiple, index) of the last FINAL line, scanning from the end."""
    found = None
    for i in range(len(lines) - 1, -1, -1):
        s = lines[i].lstrip(" \t")
        if s.startswith("FINAL:"):
            if found is not None:
                return found[0], True, found[1]
            found = (s[6:], i)
    return (found[0], False, found[1]) if found else (None, False, -1)


def rewrite_line(line):
    fired = set()
    if "**" in line:
        line = line.replace("**", "")
        fired.add("strip_bold")
    if "*" in line:
        line = line.replace("*", "")
        fired.add("strip_asterisk")
    if "`" in line:
        line = line.replace("`", "")
        fired.add("strip_backtick")
    s = line.lstrip(" \t")
    if s[:6].upper() == "FINAL:" and s[:6] != "FINAL:":
        line = line[:len(line) - len(s)] + "FINAL:" + s[6:]
        fired.add("casefold_tag")

    def sci(m):
        fired.add("sci_times" if m.group(2) == "\u00d7" else "sci_x")
        if m.group(4) is not None:
            fired.add("sci_caret")
            return "e" + m.group(4).replace("\u2212", "-")
        fired.add("sci_superscript")
        return "e" + "".join(SUPERSCRIPT[c] for c in m.group(5))

    line = SCI_RE.sub(sci, line)
    return line, fired


def magnitude(v, expected):
    if v == 0 or expected == 0 or (v < 0) != (expected < 0):
        return None
    r = expected / v
    for k in range(1, 16):
        if r == 10 ** k:
            return k
        if r == Fraction(1, 10 ** k):
            return -k
    return None


def value_str(v):
    if v is None:
        return None
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


def grade(response, finish, expected, target):
    if finish != "stop":
        t = "truncation_error"
        return ({"outcome": t, "value": None, "multiple_final": False},
                {"outcome": t, "value": None, "recovered": False, "rules": [], "magnitude_k": None})
    lines = (response or "").split("\n")
    answer, multiple, _ = final_line(lines)
    so, sv = ("format_error", None) if answer is None else parse_answer(answer, expected, target)
    strict = {"outcome": so, "value": value_str(sv), "multiple_final": multiple}
    if so == "correct":
        return strict, {"outcome": so, "value": value_str(sv), "recovered": False, "rules": [], "magnitude_k": None}
    rewritten = [rewrite_line(l) for l in lines]
    answer, _, idx = final_line([l for l, _ in rewritten])
    ao, av = ("format_error", None) if answer is None else parse_answer(answer, expected, target)
    rules = [r for r in RULES if idx >= 0 and r in rewritten[idx][1]]
    k = magnitude(av, expected) if ao == "value_error" else None
    return strict, {"outcome": ao, "value": value_str(av), "recovered": ao == "correct", "rules": rules,
                    "magnitude_k": k}


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    bench, responses, out = sys.argv[1:]
    views = []
    with open(f"{bench}/views.jsonl", encoding="utf-8") as f:
        for line in f:
            v = json.loads(line)
            views.append((v["prompt_id"], Fraction(v["expected"]), v["answer_unit"]))
    records = {}
    with open(responses, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                records.setdefault(r["prompt_id"], r)
    with open(out, "w", encoding="utf-8") as f:
        for pid, expected, unit in views:
            r = records.get(pid)
            if r is None:
                continue
            target = BY_ID.get(unit) if unit else None
            strict, audit = grade(r.get("response"), r.get("finish_reason"), expected, target)
            f.write(json.dumps({"prompt_id": pid, "strict": strict, "audit": audit}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
