#!/usr/bin/env python3
"""Builds a parser fuzzer's seed corpus from the shared corpus and the repository's own files.

--format hlo (hlo_parser_fuzzer): HLO text files of the shared corpus and examples/*.hlo. --format stablehlo
(stablehlo_parser_fuzzer): every .mlir file under the shared corpus's stablehlo/ and the repository's test/lit/.

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


def stablehlo_files(corpus_dir, repo):
    found = []
    for root in (os.path.join(corpus_dir, "stablehlo"), os.path.join(repo, "test", "lit")):
        for dirpath, _, names in os.walk(root):
            found += [os.path.join(dirpath, n) for n in names if n.endswith(".mlir")]
    return sorted(found)


def main():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(repo, "..", "shared", "corpus"))
    ap.add_argument("--out", default=os.path.join(repo, "build", "fuzz-seeds"))
    ap.add_argument("--max-bytes", type=int, default=32768)
    ap.add_argument("--format", choices=("hlo", "stablehlo"), default="hlo")
    args = ap.parse_args()

    if args.format == "stablehlo":
        sources = stablehlo_files(args.corpus, repo)
    else:
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
    if not os.path.isdir(os.path.join(args.corpus, "hlo")):
        print(f"note: no corpus at {args.corpus}; seeds come from the repository only", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
