"""The Python API over MPI (lit test python_api.hlo runs it with and without mpirun): a partitioned module over 4
partitions compiled with mpi=True. Prints, from process 0 only, the process and device counts and the results' bytes
(hex), which must be those of the one-process run; checks that the other processes get None."""

import sys

import numpy as np

import xlac

text = open(sys.argv[1]).read()
exe = xlac.compile(text, mpi=True, exact=True)
assert exe.process_index == xlac.process_index()
assert exe.process_count == xlac.process_count()
assert exe.num_devices == 4 and exe.local_device_count == 4 // exe.process_count
rng = np.random.default_rng(7)
x = rng.standard_normal((16, 8), dtype=np.float32)
w = rng.standard_normal((8, 4), dtype=np.float32)
if exe.process_index == 0:
    print(f"processes {exe.process_count} local devices {exe.local_device_count} of {exe.num_devices}")
for _ in range(2):
    out = exe(x, w)
    if exe.process_index != 0:
        assert out is None, out
        continue
    y, s = out
    print("y", y.shape, y.tobytes().hex())
    print("s", s.shape, s.tobytes().hex())
