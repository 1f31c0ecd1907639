#!/usr/bin/env python3
"""ctest aot_example: runs the AOT-compiled example and checks its printed result against the interpreter.

The example writes its inputs as .npy files; `xla-run --backend=interpreter` runs the same module on them and
writes result_0.npy. The two results must be bit-identical (the inputs are chosen so that every partial sum is
exact). Standard library only.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile


def read_f32_npy(path):
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    header_len = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + header_len].decode("latin1")
    if "'<f4'" not in header or "True" in header:
        sys.exit(f"{path}: expected a C-order float32 array, header {header!r}")
    body = data[10 + header_len:]
    return list(struct.unpack(f"<{len(body) // 4}f", body))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--example", required=True)
    parser.add_argument("--xla-run", required=True)
    parser.add_argument("--module", required=True)
    parser.add_argument("--xla-run-arg", action="append", default=[],
                        help="an extra argument for the interpreter run (e.g. --custom-call-src=FILE)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="xlac_aot_example_")
    try:
        printed = subprocess.run([args.example, work], check=True, stdout=subprocess.PIPE, text=True).stdout
        print(printed, end="")
        got = {}
        for line in printed.splitlines():
            m = re.fullmatch(r"result\[(\d+)\] = (\S+)", line)
            if not m:
                sys.exit(f"unexpected line from the example: {line!r}")
            got[int(m.group(1))] = struct.unpack("<f", struct.pack("<f", float(m.group(2))))[0]
        out_dir = os.path.join(work, "out")
        subprocess.run([args.xla_run, "--backend=interpreter", args.module, *args.xla_run_arg,
                        "--input=" + os.path.join(work, "x.npy"),
                        "--input=" + os.path.join(work, "w.npy"), "--input=" + os.path.join(work, "b.npy"),
                        "--output-dir=" + out_dir], check=True)
        want = read_f32_npy(os.path.join(out_dir, "result_0.npy"))
        if sorted(got) != list(range(len(want))):
            sys.exit(f"the example printed {len(got)} values, the interpreter produced {len(want)}")
        bad = [(i, got[i], w) for i, w in enumerate(want) if struct.pack("<f", got[i]) != struct.pack("<f", w)]
        for i, g, w in bad:
            print(f"mismatch at [{i}]: AOT {g!r} interpreter {w!r}")
        if bad:
            return 1
        print(f"AOT example matches the interpreter on all {len(want)} values")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
