"""PyTorch/XLA's SPMD API on xlac programs (docs/python.md, "From PyTorch/XLA").

    import numpy as np, xlac, xlac.spmd as xs
    program = xlac.load(open("examples/mlp.hlo").read())
    mesh = xs.Mesh(np.arange(8), (4, 2), ("data", "model"))
    xs.mark_sharding(program.parameter("x"), mesh, (0, None))       # rows over axis 0, columns replicated
    xs.mark_sharding(program.parameter("w"), mesh, (None, "model"))  # columns over "model"
    exe = program.compile()                                          # 8 partitions: the mesh's devices
    print(program.text())                                            # the annotated HLO, to save

Meshes, partition specs and their error texts are the C++ API's (include/xlac/spmd.h).
"""

import collections
import numbers
import operator

import numpy as np

import xlac
from xlac import _xlac

__all__ = [
    "HybridMesh",
    "auto_shard",
    "Mesh",
    "Program",
    "Value",
    "clear_sharding",
    "data_parallel",
    "fsdp",
    "get_global_mesh",
    "load",
    "mark_sharding",
    "megatron_mlp",
    "modeled_step_time",
    "set_global_mesh",
    "sharding_table",
    "visualize_sharding",
]


class Mesh:
    """A logical mesh of devices, as torch_xla.distributed.spmd.Mesh(device_ids, mesh_shape, axis_names).

    device_ids: the partition ids of the compiled program laid out row-major over mesh_shape, a permutation of
    0..N-1 (N = prod(mesh_shape) becomes the program's num_partitions). axis_names: one distinct name per axis, or
    None. Invalid meshes raise ValueError.
    """

    def __init__(self, device_ids, mesh_shape, axis_names=None):
        ids = [operator.index(d) for d in np.asarray(device_ids).ravel().tolist()]
        shape = [operator.index(s) for s in mesh_shape]
        names = _axis_names(axis_names)
        self._init(_xlac._spmd_mesh(ids, shape, names))

    def _init(self, mesh):
        ids, shape, names, dcn = mesh
        self.device_ids = np.array(ids, dtype=np.int64)
        self.mesh_shape = tuple(shape)
        self.axis_names = tuple(names) if names else None
        self._dcn_shape = tuple(dcn)

    def size(self):
        """The number of devices."""
        return len(self.device_ids)

    def shape(self):
        """OrderedDict of axis name (or index, for an unnamed mesh) -> size, as torch_xla's Mesh.shape()."""
        keys = self.axis_names if self.axis_names is not None else range(len(self.mesh_shape))
        return collections.OrderedDict(zip(keys, self.mesh_shape))

    def get_logical_mesh(self):
        """The device ids as a numpy array of mesh_shape."""
        return self.device_ids.reshape(self.mesh_shape)

    def get_axis_name_idx(self, name):
        """The index of the axis called `name` (None when there is none)."""
        if self.axis_names is None or name not in self.axis_names:
            return None
        return self.axis_names.index(name)

    @property
    def dcn_slices(self):
        """The DCN slices the mesh spans: prod(dcn_mesh_shape) for a HybridMesh, 1 otherwise (xla-run --dcn-mesh)."""
        return int(np.prod(self._dcn_shape, dtype=np.int64))

    def _parts(self):
        return list(map(int, self.device_ids)), list(self.mesh_shape), list(self.axis_names or ())

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._parts() == other._parts()

    def __hash__(self):
        return hash((tuple(self._parts()[0]), self.mesh_shape, self.axis_names))

    def __repr__(self):
        return f"Mesh(device_ids={self._parts()[0]}, mesh_shape={self.mesh_shape}, axis_names={self.axis_names})"


class HybridMesh(Mesh):
    """torch_xla's HybridMesh(ici_mesh_shape=, dcn_mesh_shape=, axis_names=): a mesh over DCN slices.

    Axis i has ici_mesh_shape[i] * dcn_mesh_shape[i] devices, the DCN coordinate major (numpy.block of one ICI mesh
    per slice, as torch_xla builds it). Slice s of the prod(dcn_mesh_shape) slices holds devices [s*n, (s+1)*n) for
    n = prod(ici_mesh_shape): xla-run --dcn-mesh=K's slices. Within a slice the ICI mesh is row-major (torch_xla
    orders TPU v4 chips by their physical torus; emulated cores have none).
    """

    def __init__(self, *, ici_mesh_shape, dcn_mesh_shape=None, axis_names=None):
        ici = [operator.index(s) for s in ici_mesh_shape]
        dcn = [] if dcn_mesh_shape is None else [operator.index(s) for s in dcn_mesh_shape]
        self._init(_xlac._spmd_hybrid_mesh(ici, dcn, _axis_names(axis_names)))
        self.ici_mesh_shape = tuple(ici)
        self.dcn_mesh_shape = self._dcn_shape

    def __repr__(self):
        return (f"HybridMesh(ici_mesh_shape={self.ici_mesh_shape}, dcn_mesh_shape={self.dcn_mesh_shape}, "
                f"axis_names={self.axis_names})")


def _axis_names(axis_names):
    if axis_names is None:
        return []
    if isinstance(axis_names, str):
        raise TypeError(f"axis_names takes a sequence of names, got the string {axis_names!r}")
    names = list(axis_names)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"axis names are strings, got {n!r}")
    return names


_global_mesh = None


def set_global_mesh(mesh):
    """The mesh mark_sharding and the plans use when given none (torch_xla's xs.set_global_mesh)."""
    global _global_mesh
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"set_global_mesh takes a Mesh, got {type(mesh).__name__}")
    _global_mesh = mesh


def get_global_mesh():
    """The mesh set_global_mesh() set, or None."""
    return _global_mesh


def _mesh(mesh, what):
    if mesh is None:
        mesh = _global_mesh
        if mesh is None:
            raise ValueError(f"{what}: no mesh given and no global mesh set (xlac.spmd.set_global_mesh)")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{what}: expected a Mesh, got {type(mesh).__name__}")
    return mesh


def _spec(partition_spec):
    """A partition spec as lists of axis indices / names per dimension (None -> [])."""
    if partition_spec is None:
        return []
    if isinstance(partition_spec, (str, numbers.Integral)):
        raise TypeError(f"a partition spec is a tuple with one entry per dimension, got {partition_spec!r}")
    out = []
    for entry in partition_spec:
        if entry is None:
            out.append([])
        elif isinstance(entry, (str, numbers.Integral)) and not isinstance(entry, bool):
            out.append([entry if isinstance(entry, str) else int(entry)])
        elif isinstance(entry, (tuple, list)):
            axes = []
            for a in entry:
                if not isinstance(a, (str, numbers.Integral)) or isinstance(a, bool):
                    raise TypeError(f"partition spec entries are None, mesh axis indices or names, or tuples of "
                                    f"them; got {a!r} in {entry!r}")
                axes.append(a if isinstance(a, str) else int(a))
            out.append(axes)
        else:
            raise TypeError(f"partition spec entries are None, mesh axis indices or names, or tuples of them; "
                            f"got {entry!r}")
    return out


class Value:
    """A parameter or result of a Program: `program.parameter(0)`, `program.result("row_sum")`.

    index, name, shape, dtype, element_type; `sharding` is its HLO sharding text ("" when it has none).
    """

    def __init__(self, program, kind, index):
        self.program = program
        self.kind = kind
        self.index = index

    def _row(self):
        return (self.program._impl.results if self.kind == "result" else self.program._impl.parameters)[self.index]

    @property
    def name(self):
        return self._row()[1]

    @property
    def element_type(self):
        return self._row()[2]

    @property
    def shape(self):
        return tuple(self._row()[3])

    @property
    def dtype(self):
        return None if self.element_type == "tuple" else xlac.numpy_dtype(self.element_type)

    @property
    def sharding(self):
        return self._row()[4]

    def set_sharding(self, sharding):
        """Sets the HLO sharding text ("{devices=[2,1]0,1}", "{replicated}", ...); "" or None clears it."""
        self.program._impl.set_sharding(self.kind == "result", self.index, sharding or "")
        return self

    def __repr__(self):
        shape = ",".join(map(str, self.shape))
        sharding = f", sharding={self.sharding}" if self.sharding else ""
        return f"<{self.kind} {self.index} {self.name}: {self.element_type}[{shape}]{sharding}>"


class Program:
    """A module whose parameters and results can be annotated with shardings, compiled, and printed (xlac.load).

    `parameters` / `results` list them as Values (a tuple result gives one Value per element of the root tuple);
    `parameter(i or name)` / `result(i or name)` pick one. `text()` is the annotated module as HLO text
    (StableHLO input prints as HLO); `compile(**options)` is xlac.compile(text(), num_partitions=the mesh's device
    count, **options).
    """

    def __init__(self, text, source_name="<text>"):
        self.source_name = str(source_name)
        self._impl = _xlac._SpmdProgram(xlac._text(text), self.source_name)
        self._mesh_devices = 0  # the last mesh mark_sharding used

    @property
    def parameters(self):
        return [Value(self, "parameter", i) for i in range(len(self._impl.parameters))]

    @property
    def results(self):
        return [Value(self, "result", i) for i in range(len(self._impl.results))]

    def _pick(self, kind, key):
        if isinstance(key, Value):
            if key.program is not self or key.kind != kind:
                raise ValueError(f"{key!r} is not a {kind} of this program")
            return key
        if isinstance(key, str):
            index = (self._impl.result_index if kind == "result" else self._impl.parameter_index)(key)
        else:
            index = operator.index(key)
            count = len(self._impl.results if kind == "result" else self._impl.parameters)
            if not 0 <= index < count:
                raise IndexError(f"{kind} {index} is out of range (the program has {count} {kind}s)")
        return Value(self, kind, index)

    def parameter(self, key):
        """Parameter `key`: an index or a name (the HLO instruction name, with or without '%')."""
        return self._pick("parameter", key)

    def result(self, key):
        """Result `key`: an index into the root tuple (0 for an array result) or a name (the root tuple's operand)."""
        return self._pick("result", key)

    @property
    def num_partitions(self):
        """The device count of the last mesh used by mark_sharding, else the module's num_partitions."""
        return self._impl.num_partitions

    def text(self):
        """The annotated module as HLO text, num_partitions in its header: save it, or pass it to xla-run."""
        return self._impl.text()

    def compile(self, **options):
        """xlac.compile(self.text(), num_partitions=self.num_partitions, **options); the executable's
        sharding_of(...) gives every parameter's and result's sharding after propagation."""
        n = options.pop("num_partitions", 0) or self.num_partitions
        if self._mesh_devices and n != self._mesh_devices:
            raise ValueError(f"compile: num_partitions={n} but the shardings were marked on a mesh of "
                             f"{self._mesh_devices} devices")
        options.setdefault("source_name", self._printed_name())
        return xlac.compile(self.text(), num_partitions=n, **options)

    def _printed_name(self):
        # text() is HLO even for StableHLO input: a ".mlir" name would make the parser read it as StableHLO.
        return self.source_name + ".hlo" if self.source_name.endswith(".mlir") else self.source_name

    def interpret(self, *args, **options):
        """xlac.interpret(self.text(), *args, num_partitions=self.num_partitions, **options)."""
        options.setdefault("num_partitions", self.num_partitions)
        options.setdefault("source_name", self._printed_name())
        return xlac.interpret(self.text(), *args, **options)

    def __repr__(self):
        params = ", ".join(repr(p) for p in self.parameters)
        return f"<xlac.spmd.Program ({params}), {len(self._impl.results)} results>"


def load(text, source_name="<text>"):
    """Loads HLO or StableHLO text as a Program to annotate (raises xlac.CompileError when it does not parse)."""
    return Program(text, source_name)


def _value(value, what):
    if not isinstance(value, Value):
        raise TypeError(f"{what} takes a program's parameter or result (program.parameter(i) / program.result(i)), "
                        f"got {type(value).__name__}")
    return value


def mark_sharding(value, mesh, partition_spec):
    """Annotates a parameter or result with the sharding of `partition_spec` over `mesh` (None: the global mesh).

    As torch_xla's xs.mark_sharding(t, mesh, partition_spec): one entry per dimension (fewer: the trailing ones are
    replicated), each None (replicated), a mesh axis index or name, or a tuple of them (the dimension is split over
    those axes, the first major). Mesh axes no entry names replicate the value (last_tile_dim_replicate). Invalid
    specs raise ValueError naming the value, the dimension and the mesh axis. Returns the value.
    """
    value = _value(value, "mark_sharding")
    mesh = _mesh(mesh, "mark_sharding")
    ids, shape, names = mesh._parts()
    value.program._impl.mark(value.kind == "result", value.index, ids, shape, names, _spec(partition_spec))
    value.program._mesh_devices = mesh.size()
    return value


def clear_sharding(value):
    """Removes a parameter's or result's sharding (torch_xla's xs.clear_sharding). Returns the value."""
    return _value(value, "clear_sharding").set_sharding("")


def sharding_table(shape, sharding):
    """visualize_sharding's table as a string."""
    if isinstance(sharding, Value):
        shape, sharding = sharding.shape if shape is None else shape, sharding.sharding or "{replicated}"
    return _xlac._spmd_visualize([operator.index(d) for d in shape], str(sharding))


def visualize_sharding(shape, sharding):
    """Prints which device holds which block of an array of `shape` with the HLO sharding text `sharding` (as JAX's
    jax.debug.visualize_array_sharding): rank 1 and 2 as a table whose header row and first column give the index
    ranges of the blocks and whose cells list the devices holding them; other ranks one line per block."""
    print(sharding_table(shape, sharding), end="")


# ------------------------------------------------------------------------------------------------ plans


def _axes(axis):
    """A plan's `axis` (a name, an index, or a tuple of them) as a list."""
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    for a in axes:
        if not isinstance(a, (str, numbers.Integral)) or isinstance(a, bool):
            raise TypeError(f"axis takes mesh axis names or indices, or a tuple of them; got {axis!r}")
    return [a if isinstance(a, str) else int(a) for a in axes]


def _picked(program, kind, keys):
    if keys is None:
        return []
    if isinstance(keys, (str, numbers.Integral, Value)):
        keys = [keys]
    return [(program.result if kind == "result" else program.parameter)(k).index for k in keys]


def fsdp(program, mesh=None, axis="fsdp", *, batch_parameters=(0,), batch_results=()):
    """FSDPv2 (torch_xla's SpmdFullyShardedDataParallel) as one call: every parameter of rank >= 1 not listed in
    batch_parameters is sharded over `axis` on its largest dimension that the axis size divides (the first of equal
    ones; none divides: replicated); batch_parameters (indices or names, default parameter 0) and batch_results are
    sharded on dimension 0 over `axis`; other results and rank-0 parameters are replicated. Existing annotations of
    the parameters and results are replaced. Returns the program.

    Collectives: whatever the partitioner needs to bring each op's operands together: an all-gather of a weight
    (or, when it is smaller, of the activation) where an op needs it whole, an all-reduce (or reduce-scatter) of
    partial sums where an op contracts a sharded dimension. docs/python.md lists the reports for its examples.
    """
    mesh = _mesh(mesh, "fsdp")
    program._impl.fsdp(*mesh._parts(), _axes(axis), _picked(program, "parameter", batch_parameters),
                       _picked(program, "result", batch_results))
    program._mesh_devices = mesh.size()
    return program


def data_parallel(program, mesh=None, axis="data", *, batch_parameters=(0,), batch_results=()):
    """Data parallelism as one call: the batch_parameters (indices or names; default parameter 0, the input) and
    batch_results are sharded on dimension 0 over `axis` (a name, an index, or a tuple of them), every other
    parameter (the weights) is replicated ({replicated}); other results are replicated. Existing annotations of the
    parameters and results are replaced. Returns the program.

    Collectives: none in a forward pass whose results are batch-sharded; a replicated result that depends on the
    batch (a loss, a reduction over the batch) costs one all-reduce (or all-gather); in a training step each weight
    gradient is one all-reduce over `axis`.
    """
    mesh = _mesh(mesh, "data_parallel")
    program._impl.data_parallel(*mesh._parts(), _axes(axis), _picked(program, "parameter", batch_parameters),
                                _picked(program, "result", batch_results))
    program._mesh_devices = mesh.size()
    return program


def megatron_mlp(program, mesh=None, pairs=(), axis="model"):
    """Megatron-LM's tensor-parallel MLP as one call: for each (w1, w2) in `pairs` (parameter indices or names), w1
    is column-sharded (its last dimension over `axis`) and w2 row-sharded (its first dimension over `axis`). Other
    parameters keep their annotations, so it composes with data_parallel over another mesh axis (call that first).
    Returns the program.

    Collectives: x @ w1 needs none (each device computes its columns of the hidden activation, which stays sharded
    through elementwise ops); h @ w2 contracts the sharded dimension: one all-reduce of the output per pair (a
    reduce-scatter when the output is wanted sharded).
    """
    mesh = _mesh(mesh, "megatron_mlp")
    resolved = []
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"megatron_mlp: each pair is (w1, w2), got {pair!r}")
        resolved.append(tuple(program.parameter(w).index for w in pair))
    program._impl.megatron_mlp(*mesh._parts(), _axes(axis), resolved)
    program._mesh_devices = mesh.size()
    return program


def auto_shard(program, mesh=None, tpu="v5e", explain=False, *, seeds=(), max_sweeps=2, full_memory_check=True,
               require_sharded=False):
    """Chooses shardings for the program's unannotated parameters (docs/spmd.md, "Automatic sharding"): those that
    minimize the modeled step time on a slice of `tpu` chips (what `xlac --tpu=... --emit=tpu-report` prints)
    subject to per-core HBM. Shardings the user gave are kept. The search starts from the best of the data-parallel,
    FSDP and Megatron-style plans over `mesh` and of `seeds` (programs annotated by hand, e.g. with
    data_parallel / fsdp / megatron_mlp on copies: a list of programs or of (name, program)), so its plan is never
    modeled slower than any of them; then it tries, largest parameter first, every sharding of that parameter over
    the mesh's axes with the others fixed, keeping the fastest, for up to `max_sweeps` sweeps. Leaving the program
    unsharded (every core runs all of it) is one of the plans; require_sharded=True rules it out.

    Returns the program, annotated over `mesh` and ready for compile(); with explain=True, (program, lines): one
    line per start plan set, per choice (the chosen partition spec and modeled time, the runner-up's) and the
    result. program.auto_shard_report holds the numbers (modeled_seconds, per_core_bytes, start_plans, start,
    evaluations, search_seconds, explanation). Errors: ValueError (a bad mesh or TPU name, annotations over another
    device count), and when no plan fits the chip's HBM.
    """
    mesh = _mesh(mesh, "auto_shard")
    pairs = []
    for i, seed in enumerate(seeds):
        name, seeded = seed if isinstance(seed, (tuple, list)) else (f"seed {i}", seed)
        if not isinstance(seeded, Program):
            raise TypeError(f"auto_shard: seeds are programs or (name, program) pairs, got {seed!r}")
        pairs.append((str(name), seeded._impl))
    report = program._impl.auto_shard(*mesh._parts(), str(tpu), pairs, int(max_sweeps), bool(full_memory_check),
                                     bool(require_sharded))
    program._mesh_devices = mesh.size()
    program.auto_shard_report = report
    if explain:
        return program, list(report["explanation"])
    return program


def modeled_step_time(program, tpu="v5e"):
    """The modeled step time in seconds of the program compiled over its num_partitions on a slice of `tpu` chips
    (the total of `xlac --tpu=<tpu> --emit=tpu-report`), for comparing plans."""
    return program._impl.modeled_step_seconds(str(tpu))
