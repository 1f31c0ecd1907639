"""xlac from Python: compile HLO or StableHLO text and run it on numpy arrays (docs/python.md).

    import numpy as np, xlac
    exe = xlac.compile(open("model.hlo").read(), num_partitions=8, opt_level=2)
    print(exe.parameters, exe.results)
    out = exe(x, w1, w2)                  # numpy in, numpy out
    ref = xlac.interpret(text, x, w1, w2)  # the reference interpreter, same conventions

Sharding as in PyTorch/XLA (xlac.spmd): program = xlac.load(text), then xlac.spmd.mark_sharding(program.parameter(0),
mesh, (0, None)) and program.compile(). torch_xla's metrics functions: xlac.metrics.

Results: a module whose entry computation returns an array gives that array; one that returns a tuple gives a list
with one array per leaf of the flattened tuple. bf16 and the f8/f6/f4 types use ml_dtypes' numpy types when ml_dtypes
is importable, and raw bit patterns otherwise (uint16 for bf16, uint8 for the 8-bit and smaller floats).
"""

import collections
import operator
import os

import numpy as np

from xlac._errors import CompileError, Error, RuntimeError, UnimplementedError
from xlac import _xlac

try:
    import ml_dtypes
except ImportError:  # raw bit-pattern views instead
    ml_dtypes = None

__all__ = [
    "ArrayInfo",
    "CompileError",
    "Error",
    "Executable",
    "RuntimeError",
    "UnimplementedError",
    "clear_metrics",
    "compile",
    "interpret",
    "load",
    "metrics",
    "metrics_report",
    "numpy_dtype",
    "process_count",
    "process_index",
    "spmd",
    "start_trace",
    "stop_trace",
    "trace",
]

_PLAIN_DTYPES = {
    "pred": np.bool_,
    "s8": np.int8,
    "s16": np.int16,
    "s32": np.int32,
    "s64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "c64": np.complex64,
    "c128": np.complex128,
}

# Element type -> (ml_dtypes name, the raw type xlac stores it as: one element per byte for sub-byte types).
_NARROW_DTYPES = {
    "bf16": ("bfloat16", np.uint16),
    "s2": ("int2", np.int8),
    "s4": ("int4", np.int8),
    "u2": ("uint2", np.uint8),
    "u4": ("uint4", np.uint8),
    "f4e2m1fn": ("float4_e2m1fn", np.uint8),
    "f6e2m3fn": ("float6_e2m3fn", np.uint8),
    "f6e3m2fn": ("float6_e3m2fn", np.uint8),
    "f8e3m4": ("float8_e3m4", np.uint8),
    "f8e4m3": ("float8_e4m3", np.uint8),
    "f8e4m3fn": ("float8_e4m3fn", np.uint8),
    "f8e4m3b11fnuz": ("float8_e4m3b11fnuz", np.uint8),
    "f8e4m3fnuz": ("float8_e4m3fnuz", np.uint8),
    "f8e5m2": ("float8_e5m2", np.uint8),
    "f8e5m2fnuz": ("float8_e5m2fnuz", np.uint8),
    "f8e8m0fnu": ("float8_e8m0fnu", np.uint8),
}


def numpy_dtype(element_type):
    """The numpy dtype xlac uses for an HLO element type ("f32", "bf16", "pred", ...).

    bf16, f8/f6/f4 and s4/u4/s2/u2 map to ml_dtypes' types when ml_dtypes is importable and has the type; otherwise
    to their raw storage: uint16 bit patterns for bf16, uint8 bit patterns for the narrow floats, int8/uint8 values
    for the sub-byte integers.
    """
    if element_type in _PLAIN_DTYPES:
        return np.dtype(_PLAIN_DTYPES[element_type])
    if element_type in _NARROW_DTYPES:
        name, raw = _NARROW_DTYPES[element_type]
        if ml_dtypes is not None and hasattr(ml_dtypes, name):
            return np.dtype(getattr(ml_dtypes, name))
        return np.dtype(raw)
    raise ValueError(f"element type {element_type!r} has no numpy dtype")


def _raw_dtype(element_type):
    if element_type in _NARROW_DTYPES:
        return np.dtype(_NARROW_DTYPES[element_type][1])
    return numpy_dtype(element_type)


class ArrayInfo(collections.namedtuple("ArrayInfo", ["shape", "dtype", "element_type"])):
    """One parameter or result leaf: `shape` (a tuple), numpy `dtype`, and the HLO `element_type` ("bf16", ...)."""

    __slots__ = ()

    def __str__(self):
        return f"{self.element_type}[{','.join(str(d) for d in self.shape)}]"


def _infos(raw):
    return tuple(ArrayInfo(tuple(dims), numpy_dtype(et), et) for et, dims in raw)


def _check_argument(value, info, index):
    """`value` as an aligned C-contiguous array of `info`'s dtype and shape, or a TypeError / ValueError."""
    what = f"parameter {index} ({info})"
    if isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "__array__"):
        array = np.asarray(value)
        native = array.dtype.newbyteorder("=")
        if native != array.dtype and native in (info.dtype, _raw_dtype(info.element_type)):
            array = array.astype(native)  # byte-swapped data, e.g. from a big-endian file
        if array.dtype != info.dtype:
            # Raw bit patterns are always accepted for the types ml_dtypes may represent (bf16 as uint16, ...).
            if array.dtype != _raw_dtype(info.element_type):
                raise TypeError(f"{what}: expected dtype {info.dtype}, got {array.dtype}")
    else:
        # Python scalars and (nested) lists take the parameter's dtype, as numpy's own constructors would.
        try:
            array = np.asarray(value, dtype=info.dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: cannot convert {type(value).__name__} to {info.dtype}: {e}") from None
    if array.shape != info.shape:
        raise ValueError(f"{what}: expected shape {info.shape}, got {array.shape}")
    return np.require(array, requirements=["C", "A"])


def _aligned_empty(shape, dtype, alignment=64):
    # Results are written straight into these arrays when they are aligned as the compiled code needs (64 bytes for
    # large results written with streaming stores); numpy's own allocations are only 16-byte aligned.
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


def _run(program, parameters, results, root_is_tuple, args):
    if len(args) != len(parameters):
        raise TypeError(
            f"the module takes {len(parameters)} parameter{'s' if len(parameters) != 1 else ''} "
            f"({', '.join(str(p) for p in parameters)}), got {len(args)}"
        )
    inputs = [_check_argument(a, p, i) for i, (a, p) in enumerate(zip(args, parameters))]
    outputs = [_aligned_empty(r.shape, r.dtype) for r in results]
    program.run(inputs, outputs)
    if root_is_tuple:
        return outputs
    return outputs[0]


def _nonnegative(name, value):
    value = operator.index(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _positive(name, value):
    value = operator.index(value)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _text(text):
    if isinstance(text, (bytes, bytearray)):
        return bytes(text).decode("utf-8")
    if not isinstance(text, str):
        raise TypeError(f"expected the module as HLO or StableHLO text (str), got {type(text).__name__}")
    return text


class Executable:
    """A compiled module. Call it with numpy arrays, one per parameter: ``out = exe(x, w)``.

    Arguments must have the parameter's shape and dtype (Python scalars and lists are converted to it); other arrays
    raise TypeError (dtype, count) or ValueError (shape). Non-contiguous arrays are copied to C order. The GIL is
    released while the program runs; one executable runs one call at a time (concurrent calls wait their turn).
    """

    def __init__(self, impl, source=None):
        self._impl = impl
        self._parameters = _infos(impl.parameters)
        self._results = _infos(impl.results)
        self._source = source  # compile()'s text and the options propagation depends on
        self._propagated = None

    @property
    def parameters(self):
        """One ArrayInfo per parameter (global shapes, also when partitioned)."""
        return list(self._parameters)

    @property
    def results(self):
        """One ArrayInfo per leaf of the flattened result (one for an array result)."""
        return list(self._results)

    @property
    def num_devices(self):
        """Emulated devices the program runs on: replicas x partitions."""
        return self._impl.num_devices

    @property
    def partitioned(self):
        """Whether the module was SPMD-partitioned (it has shardings and runs on more than one partition)."""
        return self._impl.partitioned

    @property
    def spmd_report(self):
        """The partitioner's report: one line per inserted collective with the bytes each core sends, then warnings."""
        return self._impl.spmd_report

    @property
    def cache_hit(self):
        """Whether the compiled code came from the persistent compilation cache (compile(cache_dir=...))."""
        return self._impl.cache_hit

    @property
    def cache_report(self):
        """What the cache did: "cache: hit/miss ..." lines, on a miss which key component differs from the nearest
        entry, corrupt entries found, stores and evictions. Empty without a cache."""
        return self._impl.cache_report

    @property
    def process_index(self):
        """This process among those the devices are split over (compile(mpi=True) under mpirun); 0 otherwise."""
        return self._impl.process_index

    @property
    def process_count(self):
        """How many processes the devices are split over (1 without mpi=True or outside mpirun)."""
        return self._impl.process_count

    @property
    def local_device_count(self):
        """The devices this process runs: num_devices / process_count (num_devices counts all processes')."""
        return self._impl.local_device_count

    def sharding_of(self, value=None, *, parameter=None, result=None):
        """The HLO sharding text a parameter or result has after sharding propagation, as the partitioned program
        splits / assembles it ("{replicated}" when the program is not partitioned): the compile pipeline's load and
        partition steps run again on the module text with compile()'s options, once, the first time it is asked.

        `exe.sharding_of(parameter=0)`, `exe.sharding_of(result="row_sum")`, or one positional key: a Value of an
        xlac.spmd.Program, a parameter index, or a name looked up among the parameters, then the results. Results
        are the elements of the root tuple (the one array result is result 0), as xlac.spmd.Program.results.
        """
        if sum(k is not None for k in (value, parameter, result)) != 1:
            raise TypeError("sharding_of takes one of: a value, parameter=, result=")
        if self._source is None:
            raise RuntimeError("this executable does not know its module text")
        if self._propagated is None:
            src = self._source
            self._propagated = _xlac._spmd_propagate(
                src["text"], num_partitions=src["num_partitions"], num_replicas=src["num_replicas"],
                partition=src["partition"], custom_call_identity=src["custom_call_identity"],
                source_name=src["source_name"])
        parameters, results = self._propagated
        kind, key = ("parameter", parameter) if parameter is not None else ("result", result)
        if value is not None:
            if hasattr(value, "kind") and hasattr(value, "index"):  # an xlac.spmd.Value
                kind, key = value.kind, value.index
            elif isinstance(value, str):
                program = spmd.Program(self._source["text"], self._source["source_name"])
                names = [v.name for v in program.parameters]
                kind = "parameter" if value.lstrip("%") in names else "result"
                key = value
            else:
                kind, key = "parameter", value
        if isinstance(key, str):
            program = spmd.Program(self._source["text"], self._source["source_name"])
            key = (program.result if kind == "result" else program.parameter)(key).index
        key = operator.index(key)
        table = results if kind == "result" else parameters
        if not 0 <= key < len(table):
            raise IndexError(f"{kind} {key} is out of range (the program has {len(table)} {kind}s)")
        return table[key]

    def __call__(self, *args):
        out = _run(self._impl, self._parameters, self._results, self._impl.root_is_tuple, args)
        # Over several processes a partitioned program's global results are assembled on process 0 only.
        if self._impl.partitioned and self._impl.process_index != 0:
            return None
        return out

    def __repr__(self):
        params = ", ".join(str(p) for p in self._parameters)
        results = ", ".join(str(r) for r in self._results)
        if self._impl.root_is_tuple:
            results = f"({results})"
        extra = f", {self.num_devices} devices" if self.num_devices > 1 else ""
        if self.partitioned:
            extra += ", partitioned"
        return f"<xlac.Executable ({params}) -> {results}{extra}>"


def _target_names(names):
    """A list of custom-call target names from an iterable of strings (a lone string is one name, None none)."""
    if names is None:
        return []
    if isinstance(names, str):
        names = [names]
    out = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"custom_call_identity takes custom-call target names (non-empty strings), got {name!r}")
        out.append(name)
    return out


def _paths(paths, option, what):
    """A list of file paths (str or os.PathLike, or one of them) as strings; TypeError names `option` and `what`."""
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    for path in paths:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise TypeError(f"{option} takes {what}, got {path!r}")
        out.append(os.fspath(path))
    return out


def _library_paths(paths):
    """custom_call_libs: shared library paths, optionally with ":target=symbol,..."."""
    return _paths(paths, "custom_call_libs", "shared library paths")


def _source_paths(paths):
    """custom_call_sources: C++ file paths."""
    return _paths(paths, "custom_call_sources", "C++ file paths")


def compile(  # noqa: A001 - xlac.compile is the API's name
    text,
    *,
    opt_level=2,
    target_cpu="host",
    num_replicas=0,
    num_partitions=0,
    partition=True,
    exact=False,
    threads=0,
    tpu_numerics=False,
    source_name="<text>",
    cache_dir=None,
    cache_readonly=False,
    cache_max_bytes=1 << 30,
    dump_to=None,
    dump_pass_regex=None,
    mpi=False,
    custom_call_identity=(),
    custom_call_libs=(),
    custom_call_sources=(),
):
    """Compiles HLO or StableHLO text into an Executable (xlac::Executable::Compile; options as in include/xlac/jit.h).

    opt_level: 0..3. target_cpu: "host" or an LLVM CPU name. num_replicas / num_partitions: emulated devices, 0 keeps
    the module's. partition: a sharded module on several partitions is SPMD-partitioned (calls still take and return
    global arrays); False runs the unpartitioned program on every device. exact: results bit-identical to the
    interpreter. threads: 0 uses the process's CPUs. tpu_numerics: TPU dot/convolution precision. source_name: the
    file name diagnostics show.

    cache_dir: the persistent compilation cache (docs/cache.md), a directory many processes may share; a module
    compiled before with the same options on the same CPU and xlac build is loaded instead of compiled. None takes
    the XLAC_CACHE_DIR environment variable (no cache when unset or empty). cache_readonly: look entries up, never
    write. cache_max_bytes: least recently used entries are evicted beyond it.

    dump_to: a directory for XLA-style dumps of this compilation (docs/observability.md): the module before and
    after optimization and after each pass (only those whose name matches the dump_pass_regex, when given), the
    buffer assignment, LLVM IR and the object file, as module_NNNN.NAME.*, NNNN counting the process's compiles.

    mpi: under mpirun, split the devices over the processes (docs/multihost.md): every process compiles the same
    module and calls the executable with the same global arrays; process 0 gets the global results, the others
    None when the program is partitioned and their first local device's results when not.

    custom_call_identity: custom-call targets that are identities (xla-run --custom-call-identity), e.g.
    ["tt.mark_argument"]: each such call needs one operand and a result of its shape, and becomes a copy of it
    before partitioning, so it never gathers a sharded operand. Annotations XLA knows (MoveToHost,
    xla.sdy.FuncResultSharding, ...) are identities without being listed.

    custom_call_libs: XLA FFI handler libraries (docs/custom_calls.md, "XLA FFI handler libraries"), paths of
    shared libraries exporting XLA FFI handlers named as the custom-call targets (or "lib.so:target=symbol"):
    typed-FFI custom calls (jax.ffi.ffi_call's api_version = 4) call them through XLA's FFI C API, with the call's
    backend_config as attributes. A typed-FFI custom call no library provides is a CompileError at the call; a
    handler's error raises RuntimeError naming the call and its location.

    custom_call_sources: C++ files of kernels for custom calls (docs/custom_calls.md, "C++ kernels compiled with
    Clang"; xla-run --custom-call-src), compiled in process by Clang for target_cpu and linked into the program: an
    XLAC_ELEMENTWISE kernel is inlined into the fused loop around its call. Clang's errors and calls that do not
    match their kernel raise CompileError with file:line:col diagnostics.

    Raises CompileError (a ValueError) with file:line:col diagnostics for modules that do not parse, verify or
    partition, and UnimplementedError (a NotImplementedError) for what xlac does not support yet.
    """
    opt_level = operator.index(opt_level)
    if not 0 <= opt_level <= 3:
        raise ValueError(f"opt_level must be 0..3, got {opt_level}")
    impl = _xlac.compile(
        _text(text),
        opt_level=opt_level,
        target_cpu=str(target_cpu),
        num_replicas=_nonnegative("num_replicas", num_replicas),
        num_partitions=_nonnegative("num_partitions", num_partitions),
        partition=bool(partition),
        exact=bool(exact),
        threads=_nonnegative("threads", threads),
        tpu_numerics=bool(tpu_numerics),
        source_name=str(source_name),
        cache_dir=os.fspath(cache_dir) if cache_dir is not None else os.environ.get("XLAC_CACHE_DIR", ""),
        cache_readonly=bool(cache_readonly),
        cache_max_bytes=_positive("cache_max_bytes", cache_max_bytes),
        dump_to=os.fspath(dump_to) if dump_to is not None else "",
        dump_pass_regex=str(dump_pass_regex) if dump_pass_regex is not None else "",
        mpi=bool(mpi),
        custom_call_identity=_target_names(custom_call_identity),
        custom_call_libs=_library_paths(custom_call_libs),
        custom_call_sources=_source_paths(custom_call_sources),
    )
    source = {
        "text": _text(text),
        "num_partitions": _nonnegative("num_partitions", num_partitions),
        "num_replicas": _nonnegative("num_replicas", num_replicas),
        "partition": bool(partition),
        "custom_call_identity": _target_names(custom_call_identity),
        "source_name": str(source_name),
    }
    return Executable(impl, source)


def process_index():
    """This process's index among those of an mpirun launch (as torch_xla's xr.process_index()); initializes MPI."""
    return _xlac.mpi_process_index()


def process_count():
    """The number of processes of an mpirun launch (1 outside mpirun); initializes MPI."""
    return _xlac.mpi_process_count()


def metrics_report():
    """The process's compile and execute metrics as text, in torch_xla.debug.metrics.metrics_report()'s format.

    "Metric:" entries (TotalSamples, Accumulator, Percentiles): CompileTime, PhaseTime.<phase> (parse and verify,
    spmd partition, each pass, llvm emit / optimize, jit codegen / link), ExecuteTime, and per emulated core
    CoreN.CollectiveWaitTime.<kind>, CoreN.CollectiveBytesSent/Received.<kind>, CoreN.ArenaBytes and
    CoreN.PeakArenaBytes; then "Counter:" entries (CachedCompile, UncachedCompile, Executions, Collective.<kind>);
    then, as PyTorch/XLA's "pt-xla-profiler:" lines, "xlac-profiler: CompileTime too frequent: ..." when the process
    compiles more than 10 times and more than half as often as it runs, and "xlac-profiler: module '...' compiled N
    times" when it compiles one module 3 times or more. docs/observability.md describes them.
    """
    return _xlac.metrics_report()


def clear_metrics():
    """Forgets every metric and counter metrics_report() shows."""
    _xlac.clear_metrics()


_trace_path = None


def start_trace(log_dir):
    """Starts recording a Chrome trace of this process's compilations and runs, as jax.profiler.start_trace(log_dir).

    stop_trace() writes it as Chrome trace event JSON (the format of xla-run --trace; Perfetto and chrome://tracing
    open it) to log_dir/xlac_trace.json, or to log_dir itself when it ends in ".json": compile phases on their own
    track, one track per emulated core with a slice per run and, for executables compiled while the trace is
    started, a slice per fusion/op kernel and per collective (with bytes and wait time). Executables compiled
    before start_trace run uninstrumented (their runs still show, without kernel slices).
    """
    global _trace_path
    if _trace_path is not None:
        raise RuntimeError(f"a trace is already started (to {_trace_path}); call stop_trace() first")
    log_dir = os.fspath(log_dir)
    _trace_path = log_dir if log_dir.endswith(".json") else os.path.join(log_dir, "xlac_trace.json")
    _xlac.start_trace()


def stop_trace():
    """Stops the trace start_trace() started, writes its file and returns the file's path."""
    global _trace_path
    if _trace_path is None:
        raise RuntimeError("no trace is started (call start_trace(log_dir) first)")
    path, _trace_path = _trace_path, None
    json_text = _xlac.stop_trace()
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w") as f:
        f.write(json_text)
    return path


class trace:
    """Context manager form, as jax.profiler.trace(log_dir): `with xlac.trace("/tmp/t"): ...`."""

    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.path = None

    def __enter__(self):
        start_trace(self.log_dir)
        return self

    def __exit__(self, *exc):
        self.path = stop_trace()
        return False


def interpret(
    text,
    *args,
    num_replicas=0,
    num_partitions=0,
    partition=True,
    tpu_numerics=False,
    seed=42,
    source_name="<text>",
    custom_call_identity=(),
    custom_call_libs=(),
    custom_call_sources=(),
):
    """Runs HLO or StableHLO text on the reference interpreter, with Executable's argument and result conventions.

    A sharded module on several partitions is partitioned as compile() does (each emulated device evaluates its
    shard program); partition=False evaluates the unpartitioned module on every device. Results are device 0's
    (partitioned: assembled from replica 0's partitions). seed: values of rng ops and of elided `{...}` constants.
    custom_call_identity, custom_call_libs, custom_call_sources: as compile()'s, so both run the same program (the
    interpreter calls the same XLA FFI handlers and runs the same compiled C++ kernels).
    """
    program = _xlac._InterpreterProgram(
        _text(text),
        source_name=str(source_name),
        num_replicas=_nonnegative("num_replicas", num_replicas),
        num_partitions=_nonnegative("num_partitions", num_partitions),
        partition=bool(partition),
        tpu_numerics=bool(tpu_numerics),
        seed=_nonnegative("seed", seed),
        custom_call_identity=_target_names(custom_call_identity),
        custom_call_libs=_library_paths(custom_call_libs),
        custom_call_sources=_source_paths(custom_call_sources),
    )
    return _run(program, _infos(program.parameters), _infos(program.results), program.root_is_tuple, args)


# The sharding API (PyTorch/XLA's names: xlac.spmd.Mesh, mark_sharding, ...) and torch_xla's metrics functions.
from xlac import metrics, spmd  # noqa: E402  (they use the names above)

load = spmd.load
