#!/usr/bin/python3
"""Writes a synthetic evidence corpus of real sentences, for bench_retrieval --corpus, when the
QuanTemp evidence corpus itself (423,320 snippets) is not at hand.

Its material is the val split's top-3 evidence snippets in the QuanTemp data
(val_claimonly_evidence_question_mapping.json: 8,368 snippets, lower-cased web text), split into
sentences (after ". ", "! " or "? "; pieces of fewer than 3 words dropped; repeated sentences kept
once). Snippet i: a target length is the word count of a real snippet drawn at random; sentences
drawn at random (uniformly, with replacement) are joined until the target is reached, and the text
is cut to the target's words. So the vocabulary, the numbers as written and the length distribution
are the real snippets', while the word order across sentences is not. One random.Random(SEED) drives
every draw, so the file is the same on every run. Ids are "syn-<i>".

The queries (--queries-out) are the val claims (with "/n" and newlines as spaces), one a line, in
the file's order.

Usage: /usr/bin/python3 bench/make_corpus.py DATA_DIR OUT.jsonl [--docs 423320] [--seed 20260725]
           [--queries-out QUERIES.txt]
"""
import json
import random
import re
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    data, out = args[0], args[1]
    docs = int(args[args.index("--docs") + 1]) if "--docs" in args else 423320
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 20260725
    qout = args[args.index("--queries-out") + 1] if "--queries-out" in args else None
    with open(f"{data}/val_claimonly_evidence_question_mapping.json", encoding="utf-8") as f:
        val = json.load(f)
    snippets = [t for r in val for e in r.get("evidences", []) for t in e.get("top_k_doc", [])]
    lengths = [len(t.split()) for t in snippets]
    seen, sentences = set(), []
    for t in snippets:
        for s in re.split(r"(?<=[.!?])\s+", t):
            s = " ".join(s.split())
            if len(s.split()) >= 3 and s not in seen:
                seen.add(s)
                sentences.append(s)
    rng = random.Random(seed)
    total = 0
    with open(out, "w", encoding="utf-8") as f:
        for i in range(docs):
            target = rng.choice(lengths)
            words = []
            while len(words) < target:
                words.extend(rng.choice(sentences).split())
            text = " ".join(words[:target])
            total += len(text.encode())
            f.write(json.dumps({"id": f"syn-{i}", "text": text}, ensure_ascii=False) + "\n")
    if qout:
        with open(qout, "w", encoding="utf-8") as f:
            for r in val:
                f.write(" ".join(r["claim"].replace("/n", " ").split()) + "\n")
    print(f"{docs} snippets ({total / 1e6:.1f} MB of text) from {len(sentences)} sentences of "
          f"{len(snippets)} real snippets; seed {seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
