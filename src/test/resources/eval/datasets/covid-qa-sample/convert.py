#!/usr/bin/env python3
"""Builds this folder from deepset-ai/COVID-QA's data/question-answering/200423_covidQA.json (see README.md).

usage: convert.py 200423_covidQA.json OUT_DIR

Takes every article whose text carries "License: cc-by" (92 of the 98), by document_id; writes each article as
docs/<document_id>.txt (unchanged) and its questions to questions.jsonl: the first answer, stripped of surrounding
spaces (the annotation tool kept trailing ones). Should an offset not point at its text, the answer is moved to the
occurrence of that text nearest the given offset (none was, in 200423_covidQA.json), and an answer whose text does not
occur in the article is dropped (none was). Offsets are in code points, as SQuAD's.
"""
import json
import re
import sys
from pathlib import Path


def main(src, out):
    data = json.load(open(src, encoding="utf-8"))["data"]
    articles = sorted((a["paragraphs"][0] for a in data), key=lambda p: int(p["document_id"]))
    articles = [p for p in articles if re.search(r"^License:\s*cc-by\s*$", p["context"], re.M)]
    docs = Path(out, "docs")
    docs.mkdir(parents=True, exist_ok=True)
    kept = moved = dropped = 0
    with open(Path(out, "questions.jsonl"), "w", encoding="utf-8") as qf:
        for p in articles:
            text, name = p["context"], f"{p['document_id']}.txt"
            Path(docs, name).write_text(text, encoding="utf-8")
            for q in p["qas"]:
                a = q["answers"][0]
                answer, given = a["text"].strip(), a["answer_start"]
                starts = [m.start() for m in re.finditer(re.escape(answer), text)] if answer else []
                if not starts:
                    dropped += 1
                    continue
                start = min(starts, key=lambda s: abs(s - given))
                moved += start != given
                kept += 1
                qf.write(json.dumps({"id": str(q["id"]), "question": q["question"].strip(), "doc": name, "answer": answer,
                                     "answer_start": start, "answer_end": start + len(answer)}, ensure_ascii=False) + "\n")
    print(f"{len(articles)} articles, {kept} questions ({moved} offsets moved to their text), {dropped} dropped", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
