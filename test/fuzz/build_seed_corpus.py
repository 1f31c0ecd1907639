#!/usr/bin/env python3
"""Builds the hlo_parser_fuzzer seed corpus: HLO text files from the shared corpus and the repository's examples.

Seeds are named by the SHA-1 of their content (libFuzzer's convention), so duplicates collapse and re-running the
script is idempotent. Files larger than --max-bytes are left out: libFuzzer would truncate them to -max_len, and
big seeds slow every mutation down. Standard library only.
"""

import argparse
import csv
import glob
import hashlib
import os
import shutil
import sys

HLO_FORMATS = ("hlo_module", "hlo_no_header")


def corpus_files(corpus_dir):
    manifest = os.path.join(corpus_dir, "hlo", "manifest.tsv")
    if not os.path.isfile(manifest):
        return []
    with open(manifest, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    # Templated and must-reject files are kept on purpose: near-valid text is good fuzzing material.
    return [os.path.join(corpus_dir, r["file"]) for r in rows if r["format"] in HLO_FORMATS]


def main():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(repo, "..", "shared", "corpus"))
    ap.add_argument("--out", default=os.path.join(repo, "build", "fuzz-seeds"))
    ap.add_argument("--max-bytes", type=int, default=32768)
    args = ap.parse_args()

    sources = corpus_files(args.corpus) + sorted(glob.glob(os.path.join(repo, "examples", "*.hlo")))
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    written, too_big = set(), 0
    for path in sources:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) > args.max_bytes:
            too_big += 1
            continue
        name = hashlib.sha1(data).hexdigest()
        if name in written:
            continue
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
        written.add(name)
    print(f"seed corpus: {len(written)} files in {args.out} ({too_big} larger than {args.max_bytes} bytes left out, "
          f"{len(sources) - len(written) - too_big} duplicates)")
    if not os.path.isfile(os.path.join(args.corpus, "hlo", "manifest.tsv")):
        print(f"note: no HLO corpus at {args.corpus}; seeds come from examples/ only", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
