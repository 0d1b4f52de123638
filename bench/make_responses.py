#!/usr/bin/python3
"""Writes a responses file for a benchmark directory, as a model would answer it, for
bench/compare.sh: every record has about 300 bytes of reasoning and a FINAL line; faults are chosen
by a hash of the prompt id (deterministic, no random generator): 2% wrong values, 5% markdown
around the FINAL line, 20% "m x 10^k" scientific notation (integer answers), 2% unit slips (the
value in a unit 1,000 times smaller), 1% truncated. The grades exercise both layers of the grader.

Usage: /usr/bin/python3 bench/make_responses.py BENCH_DIR OUT.jsonl
"""
import hashlib
import json
import sys
from fractions import Fraction

REASONING = ("We need the quantity the question asks for. First we read the given amounts and "
             "convert them to the same unit, because mixing units is the most common mistake. Then "
             "we combine them as the question describes and check the result against a rough "
             "estimate to make sure the order of magnitude is right. The check agrees.\n\n")


def decimal(v):
    """Exact decimal text of v, or p/q when it has no finite decimal."""
    d = v.denominator
    k = 0
    while d % 2 == 0 or d % 5 == 0:
        d //= 2 if d % 2 == 0 else 5
        k += 1
    if d != 1:
        return f"{v.numerator}/{v.denominator}"
    if v.denominator == 1:
        return str(v.numerator)
    s = str(abs(v.numerator) * 10 ** k // v.denominator).rjust(k + 1, "0")
    return ("-" if v < 0 else "") + s[:-k] + "." + s[-k:]


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    with open(f"{sys.argv[1]}/views.jsonl", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
        for line in f:
            v = json.loads(line)
            pid, unit, expected = v["prompt_id"], v["answer_unit"], Fraction(v["expected"])
            h = int.from_bytes(hashlib.blake2b(pid.encode(), digest_size=8).digest(), "little") % 1000
            ans = decimal(expected)
            final = f"FINAL: {ans} {unit}".rstrip()
            finish = "stop"
            if h < 20:
                final = f"FINAL: {decimal(expected + 1)} {unit}".rstrip()
            elif h < 70:
                final = f"**{final}**"
            elif h < 270 and ans.isdigit() and len(ans) > 1:
                final = f"FINAL: {ans[0]}.{ans[1:]} x 10^{len(ans) - 1} {unit}".rstrip()
            elif h < 290:
                final = f"FINAL: {decimal(expected * 1000)} {unit}".rstrip()
            elif h < 300:
                final, finish = "Let me compute", "length"
            rec = {"prompt_id": pid, "response": REASONING + final, "finish_reason": finish,
                   "usage": {"completion_tokens": 60 + h % 200}}
            out.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
