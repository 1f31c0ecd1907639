"""xlac.spmd, PyTorch/XLA's sharding API on xlac programs (docs/python.md "From PyTorch/XLA"), and xlac.metrics.

Meshes and hybrid meshes (device order), xlac.load's parameters and results, mark_sharding / clear_sharding and the
exact texts of their errors, the annotated text, partitioned runs against the unpartitioned program and the
interpreter, sharding_of after propagation, visualize_sharding, the FSDPv2 / data-parallel / Megatron plans with the
collectives they produce, and torch_xla's metrics functions.
"""

import collections
import os

import numpy as np
import pytest

import xlac
import xlac.metrics as met
import xlac.spmd as xs

# Two dense layers: x @ w1 -> relu -> @ w2.
MLP2 = """HloModule mlp2
ENTRY e {
  x = f32[16,32] parameter(0)
  w1 = f32[32,64] parameter(1)
  w2 = f32[64,32] parameter(2)
  h = f32[16,64] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  zeros = f32[16,64] broadcast(zero), dimensions={}
  r = f32[16,64] maximum(h, zeros)
  ROOT y = f32[16,32] dot(r, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""

STABLEHLO = """module @m {
  func.func public @main(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.tanh %0 : tensor<8x6xf32>
    return %1 : tensor<8x6xf32>
  }
}
"""

TUPLE = """HloModule t
ENTRY e {
  a = f32[8,4] parameter(0)
  n = f32[8,4] negate(a)
  e = f32[8,4] exponential(a)
  ROOT t = (f32[8,4], f32[8,4]) tuple(n, e)
}
"""


@pytest.fixture
def mlp_text(source_dir):
    with open(os.path.join(source_dir, "examples", "mlp.hlo")) as f:
        return f.read()


def inputs(program, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, p.shape).astype(p.dtype) for p in program.parameters]


def check_against_unpartitioned(program, original_text, exe=None):
    """Runs the annotated program partitioned and the original one unpartitioned and on the interpreter."""
    exe = exe or program.compile()
    args = inputs(program)
    as_list = lambda out: out if isinstance(out, list) else [out]  # noqa: E731
    got = as_list(exe(*args))
    want = as_list(xlac.compile(original_text, partition=False, num_partitions=1)(*args))
    ref = as_list(xlac.interpret(original_text, *args, partition=False, num_partitions=1))
    assert len(got) == len(want) == len(ref)
    for g, w, r in zip(got, want, ref):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    return exe


# ------------------------------------------------------------------------------------------------ meshes


def test_mesh_shape_and_logical_mesh():
    mesh = xs.Mesh(np.arange(8), (4, 2), ("data", "model"))
    assert mesh.size() == 8
    assert mesh.shape() == collections.OrderedDict([("data", 4), ("model", 2)])
    assert isinstance(mesh.shape(), collections.OrderedDict)
    np.testing.assert_array_equal(mesh.get_logical_mesh(), np.arange(8).reshape(4, 2))
    assert mesh.get_axis_name_idx("model") == 1 and mesh.get_axis_name_idx("nope") is None
    assert mesh.dcn_slices == 1
    unnamed = xs.Mesh([3, 2, 1, 0], (2, 2))
    assert unnamed.shape() == collections.OrderedDict([(0, 2), (1, 2)])
    assert unnamed.axis_names is None


def test_mesh_errors():
    with pytest.raises(ValueError) as e:
        xs.Mesh(np.arange(6), (4, 2))
    assert str(e.value) == "Mesh: 6 device ids for mesh shape (4, 2), which has 8 devices"
    with pytest.raises(ValueError) as e:
        xs.Mesh([0, 1, 1, 3], (4,))
    assert str(e.value) == "Mesh: device id 1 appears twice"
    with pytest.raises(ValueError) as e:
        xs.Mesh(np.arange(8), (4, 2), ("x", "x"))
    assert str(e.value) == "Mesh: axis name 'x' names mesh axes 0 and 1"
    with pytest.raises(ValueError) as e:
        xs.Mesh(np.arange(8), (4, 2), ("x",))
    assert str(e.value) == "Mesh: 1 axis names for 2 mesh axes"


def test_hybrid_mesh_follows_torch_xla_device_order():
    # The SPMD guide's example: 2 slices of 4 devices.
    mesh = xs.HybridMesh(ici_mesh_shape=(1, 4, 1), dcn_mesh_shape=(2, 1, 1), axis_names=("data", "fsdp", "tensor"))
    assert mesh.shape() == collections.OrderedDict([("data", 2), ("fsdp", 4), ("tensor", 1)])
    np.testing.assert_array_equal(mesh.get_logical_mesh(), np.arange(8).reshape(2, 4, 1))
    assert mesh.dcn_slices == 2 and mesh.dcn_mesh_shape == (2, 1, 1) and mesh.ici_mesh_shape == (1, 4, 1)
    # numpy.block of the slices' meshes: slice 1 (devices 4..7) to the right of slice 0 along the DCN axis.
    wide = xs.HybridMesh(ici_mesh_shape=(2, 2), dcn_mesh_shape=(1, 2))
    np.testing.assert_array_equal(wide.get_logical_mesh(), [[0, 1, 4, 5], [2, 3, 6, 7]])
    no_dcn = xs.HybridMesh(ici_mesh_shape=(2, 4))
    np.testing.assert_array_equal(no_dcn.get_logical_mesh(), np.arange(8).reshape(2, 4))
    with pytest.raises(ValueError) as e:
        xs.HybridMesh(ici_mesh_shape=(2, 2), dcn_mesh_shape=(2, 1, 1))
    assert str(e.value) == "HybridMesh: ici_mesh_shape (2, 2) and dcn_mesh_shape (2, 1, 1) have different lengths"


# ------------------------------------------------------------------------------------------------ programs


def test_load_lists_parameters_and_results(mlp_text):
    program = xlac.load(mlp_text)
    assert [(p.index, p.name, p.shape, p.element_type) for p in program.parameters] == [
        (0, "x", (8, 16), "f32"), (1, "w", (16, 32), "f32"), (2, "b", (32,), "f32")]
    assert [p.sharding for p in program.parameters] == ["{devices=[2,1]0,1}", "{replicated}", "{replicated}"]
    assert [(r.index, r.name, r.shape) for r in program.results] == [(0, "row_sum", (8,))]
    assert program.parameter("w").index == 1 and program.parameter("%b").index == 2
    assert program.result("row_sum").sharding == "{devices=[2]0,1}"
    assert program.num_partitions == 2
    with pytest.raises(ValueError) as e:
        program.parameter("y")
    assert str(e.value) == "the program has no parameter named 'y' (parameters: 'x', 'w', 'b')"
    with pytest.raises(IndexError):
        program.parameter(3)
    with pytest.raises(xlac.CompileError):
        xlac.load("HloModule broken\nENTRY e {\n  ROOT x = f32[2] parameter(0\n}\n")


def test_guide_example_mesh_4x2(mlp_text):
    # PyTorch/XLA: mark_sharding(input, mesh, (0, None)); mark_sharding(weight, mesh, (None, 1)).
    program = xlac.load(mlp_text)
    mesh = xs.Mesh(np.arange(8), (4, 2))
    xs.clear_sharding(program.result(0))  # mlp.hlo shards its result over 2 devices; the mesh has 8
    xs.mark_sharding(program.parameter(0), mesh, (0, None))
    xs.mark_sharding(program.parameter(1), mesh, (None, 1))
    assert program.parameter(0).sharding == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
    assert program.parameter(1).sharding == "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"
    assert program.num_partitions == 8
    text = program.text()
    assert "num_partitions=8" in text.splitlines()[0]
    assert "parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}" in text
    assert "parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}" in text
    exe = check_against_unpartitioned(program, mlp_text)
    assert exe.partitioned and exe.num_devices == 8
    # The saved text compiles to the same partitioned program.
    again = xlac.compile(text)
    assert again.num_devices == 8 and again.partitioned
    np.testing.assert_allclose(again(*inputs(program)), exe(*inputs(program)), rtol=1e-6)
    # Shardings after propagation.
    assert exe.sharding_of(parameter=0) == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
    assert exe.sharding_of("w") == "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"
    assert exe.sharding_of(program.parameter("b")) == "{replicated}"
    assert exe.sharding_of(result=0) == exe.sharding_of("row_sum")
    assert exe.sharding_of(result=0).startswith("{")
    with pytest.raises(IndexError):
        exe.sharding_of(parameter=5)


def test_sharding_of_plain_compile(mlp_text):
    exe = xlac.compile(mlp_text)
    assert exe.sharding_of("x") == "{devices=[2,1]0,1}"
    assert exe.sharding_of(result="row_sum") == "{devices=[2]0,1}"
    assert xlac.compile(mlp_text, partition=False).sharding_of(0) == "{replicated}"


def test_names_and_tuples_in_specs(mlp_text):
    program = xlac.load(mlp_text)
    mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    xs.clear_sharding(program.result(0))
    xs.mark_sharding(program.parameter("x"), mesh, (("data", "model"), None))
    assert program.parameter("x").sharding == "{devices=[8,1]<=[8]}"
    xs.mark_sharding(program.parameter("x"), mesh, (("model", "data"), None))
    assert program.parameter("x").sharding == "{devices=[8,1]<=[2,4]T(1,0)}"
    xs.mark_sharding(program.parameter("w"), mesh, ("model", "data"))
    assert program.parameter("w").sharding == "{devices=[4,2]<=[2,4]T(1,0)}"
    xs.mark_sharding(program.parameter("b"), mesh, (None,))
    assert program.parameter("b").sharding == "{replicated}"
    xs.mark_sharding(program.result(0), mesh, ("data",))
    assert program.result(0).sharding == "{devices=[2,4]<=[8] last_tile_dim_replicate}"
    check_against_unpartitioned(program, mlp_text)


def test_spec_errors_name_the_parameter_dimension_and_axis(mlp_text):
    program = xlac.load(mlp_text)
    xs.clear_sharding(program.result(0))
    mesh = xs.Mesh(np.arange(8), (4, 2), ("data", "model"))
    w = program.parameter("w")
    cases = [
        ((0, "data"), "mark_sharding: parameter 1 (w: f32[16,32]): dimension 1: mesh axis 0 ('data') is already used "
                      "by dimension 0"),
        ((None, None, 1), "mark_sharding: parameter 1 (w: f32[16,32]): the partition spec (None, None, 1) has 3 "
                          "entries but the array has rank 2: there is no dimension 2 to shard over mesh axis 1"),
        (("modle", None), "mark_sharding: parameter 1 (w: f32[16,32]): dimension 0: the mesh has no axis named "
                          "'modle' (axes: 'data', 'model')"),
        ((None, 2), "mark_sharding: parameter 1 (w: f32[16,32]): dimension 1: mesh axis 2 is out of range (the mesh "
                    "has 2 axes)"),
        (((0, 1), "model"), "mark_sharding: parameter 1 (w: f32[16,32]): dimension 1: mesh axis 1 ('model') is "
                            "already used by dimension 0"),
    ]
    for spec, message in cases:
        with pytest.raises(ValueError) as e:
            xs.mark_sharding(w, mesh, spec)
        assert str(e.value) == message
    assert w.sharding == "{replicated}"  # unchanged by the failed marks
    unnamed = xs.Mesh(np.arange(8), (4, 2))
    with pytest.raises(ValueError) as e:
        xs.mark_sharding(w, unnamed, ("data", None))
    assert str(e.value) == ("mark_sharding: parameter 1 (w: f32[16,32]): dimension 0: the mesh has no axis named "
                            "'data' (the mesh's axes have no names; use axis indices)")
    with pytest.raises(ValueError) as e:
        xs.mark_sharding(program.result("row_sum"), mesh, (0, 1))
    assert str(e.value) == ("mark_sharding: result 0 (row_sum: f32[8]): the partition spec (0, 1) has 2 entries but "
                            "the array has rank 1: there is no dimension 1 to shard over mesh axis 1")
    with pytest.raises(TypeError):
        xs.mark_sharding(w, mesh, (0.5, None))


def test_mesh_device_count_mismatch(mlp_text):
    program = xlac.load(mlp_text)
    mesh8 = xs.Mesh(np.arange(8), (4, 2))
    # mlp.hlo's result is sharded over 2 devices.
    with pytest.raises(ValueError) as e:
        xs.mark_sharding(program.parameter("x"), mesh8, (0, None))
    assert str(e.value) == ("mark_sharding: parameter 0 (x: f32[8,16]): the mesh has 8 devices but %row_sum is "
                            "sharded over 2 ({devices=[2]0,1}); clear that sharding or use a mesh of 2 devices")
    xs.clear_sharding(program.result(0))
    xs.mark_sharding(program.parameter("x"), mesh8, (0, None))
    with pytest.raises(ValueError) as e:
        xs.mark_sharding(program.parameter("w"), xs.Mesh(np.arange(4), (4,)), (0, None))
    assert str(e.value) == ("mark_sharding: parameter 1 (w: f32[16,32]): the mesh has 4 devices but %x is sharded "
                            "over 8 ({devices=[4,1,2]<=[8] last_tile_dim_replicate}); clear that sharding or use a "
                            "mesh of 8 devices")
    with pytest.raises(ValueError) as e:
        program.compile(num_partitions=4)
    assert str(e.value) == "compile: num_partitions=4 but the shardings were marked on a mesh of 8 devices"
    # Without a mesh the module's own count may be overridden, as in xlac.compile.
    assert xlac.load(MLP2).compile(num_partitions=4).num_devices == 4


def test_global_mesh(mlp_text):
    program = xlac.load(mlp_text)
    xs.clear_sharding(program.result(0))
    assert xs.get_global_mesh() is None
    with pytest.raises(ValueError) as e:
        xs.mark_sharding(program.parameter(0), None, (0, None))
    assert str(e.value) == "mark_sharding: no mesh given and no global mesh set (xlac.spmd.set_global_mesh)"
    mesh = xs.Mesh(np.arange(4), (4,), ("data",))
    xs.set_global_mesh(mesh)
    try:
        assert xs.get_global_mesh() is mesh
        xs.mark_sharding(program.parameter(0), None, ("data", None))
        assert program.parameter(0).sharding == "{devices=[4,1]<=[4]}"
        xs.data_parallel(program)  # the plans take the global mesh too
        check_against_unpartitioned(program, mlp_text)
    finally:
        xs.set_global_mesh(None)


def test_hybrid_mesh_program(mlp_text):
    # The guide's multislice mesh: 2 slices (DCN) x 4 devices; the batch over both, as FSDPv2 shards inputs.
    mesh = xs.HybridMesh(ici_mesh_shape=(1, 4, 1), dcn_mesh_shape=(2, 1, 1), axis_names=("data", "fsdp", "tensor"))
    program = xlac.load(mlp_text)
    xs.clear_sharding(program.result(0))
    xs.mark_sharding(program.parameter("x"), mesh, (("data", "fsdp"), None))
    xs.mark_sharding(program.parameter("w"), mesh, (None, "fsdp"))
    assert program.parameter("x").sharding == "{devices=[8,1]<=[8]}"
    assert program.parameter("w").sharding == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    check_against_unpartitioned(program, mlp_text)


def test_stablehlo_prints_hlo():
    program = xlac.load(STABLEHLO)
    assert [p.shape for p in program.parameters] == [(8, 4), (4, 6)]
    assert [p.name for p in program.parameters] == ["Arg_0.1", "Arg_1.2"]  # XLA's names for StableHLO arguments
    mesh = xs.Mesh(np.arange(4), (2, 2), ("a", "b"))
    xs.mark_sharding(program.parameter(0), mesh, ("a", None))
    xs.mark_sharding(program.parameter(1), mesh, (None, "b"))
    text = program.text()
    assert text.startswith("HloModule") and "sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}" in text
    check_against_unpartitioned(program, STABLEHLO)


def test_stablehlo_file_compiles_as_printed_hlo():
    # A StableHLO file's name ends in .mlir; what compile() and interpret() get is the printed HLO.
    program = xlac.load(STABLEHLO, source_name="model.mlir")
    mesh = xs.Mesh(np.arange(2), (2,), ("data",))
    xs.mark_sharding(program.parameter(0), mesh, ("data", None))
    exe = check_against_unpartitioned(program, STABLEHLO)
    assert exe.partitioned
    args = inputs(program)
    np.testing.assert_allclose(program.interpret(*args), exe(*args), rtol=1e-5, atol=1e-5)


def test_tuple_results():
    program = xlac.load(TUPLE)
    assert [r.name for r in program.results] == ["n", "e"]
    mesh = xs.Mesh(np.arange(2), (2,))
    xs.mark_sharding(program.parameter(0), mesh, (0, None))
    xs.mark_sharding(program.result("e"), mesh, (None, 0))
    assert program.result(1).sharding == "{devices=[1,2]<=[2]}"
    assert program.result(0).sharding == "{replicated}"
    assert "ROOT %t = (f32[8,4]{1,0}, f32[8,4]{1,0}) tuple(" in program.text()
    assert "sharding={{replicated}, {devices=[1,2]<=[2]}}" in program.text()
    exe = check_against_unpartitioned(program, TUPLE)
    assert exe.sharding_of(result=1) == "{devices=[1,2]<=[2]}"
    xs.clear_sharding(program.result(1))
    assert program.result(1).sharding == "" and program.result(0).sharding == ""


def test_visualize_sharding(capsys):
    xs.visualize_sharding((8, 16), "{devices=[4,1,2]<=[8] last_tile_dim_replicate}")
    assert capsys.readouterr().out == (
        "devices holding each block of (8, 16) sharded {devices=[4,1,2]<=[8] last_tile_dim_replicate}\n"
        "+-------------+------+\n"
        "| rows \\ cols | 0:16 |\n"
        "+-------------+------+\n"
        "| 0:2         | 0,1  |\n"
        "| 2:4         | 2,3  |\n"
        "| 4:6         | 4,5  |\n"
        "| 6:8         | 6,7  |\n"
        "+-------------+------+\n")
    assert xs.sharding_table((16, 32), "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}").splitlines()[2:5] == [
        "| rows \\ cols | 0:16    | 16:32   |",
        "+-------------+---------+---------+",
        "| 0:16        | 0,2,4,6 | 1,3,5,7 |",
    ]
    assert xs.sharding_table((10,), "{devices=[4]<=[4]}").splitlines()[2:4] == [
        "|         | 0:3 | 3:6 | 6:9 | 9:10 |", "+---------+-----+-----+-----+------+"]
    assert xs.sharding_table((4, 4), "{replicated}").endswith("every device holds the whole array\n")
    assert xs.sharding_table((2, 2, 2), "{devices=[2,1,1]<=[2]}").splitlines()[1:] == [
        "[0:1, 0:2, 0:2]: devices 0", "[1:2, 0:2, 0:2]: devices 1"]
    with pytest.raises(NotImplementedError):
        xs.visualize_sharding((4, 4), "{devices=[2,1,2]<=[4] last_tile_dims={manual}}")
    with pytest.raises(ValueError) as e:
        xs.visualize_sharding((8,), "{devices=[2,2]<=[4]}")
    assert str(e.value) == "visualize_sharding: the sharding {devices=[2,2]<=[4]} tiles 2 dimensions but the shape (8,) has 1"


# ------------------------------------------------------------------------------------------------ plans


def test_fsdp():
    program = xlac.load(MLP2)
    mesh = xs.Mesh(np.arange(8), (8,), ("fsdp",))
    xs.fsdp(program, mesh)
    # x is the batch (dim 0); w1's largest divisible dim is 1 (64), w2's is 0 (64).
    assert [p.sharding for p in program.parameters] == [
        "{devices=[8,1]<=[8]}", "{devices=[1,8]<=[8]}", "{devices=[8,1]<=[8]}"]
    exe = check_against_unpartitioned(program, MLP2)
    assert exe.num_devices == 8 and "all-gather" in exe.spmd_report
    # Inputs that are weights too: batch_parameters=() shards x on its largest dimension.
    xs.fsdp(program, mesh, batch_parameters=())
    assert program.parameter("x").sharding == "{devices=[1,8]<=[8]}"
    with pytest.raises(ValueError) as e:
        xs.fsdp(program, xs.Mesh(np.arange(8), (8,), ("data",)))
    assert str(e.value) == "fsdp: the mesh has no axis named 'fsdp' (axes: 'data')"


def test_fsdp_on_mlp_example(mlp_text):
    program = xlac.load(mlp_text)
    mesh = xs.HybridMesh(ici_mesh_shape=(1, 4, 1), dcn_mesh_shape=(2, 1, 1), axis_names=("data", "fsdp", "tensor"))
    xs.fsdp(program, mesh)
    assert [p.sharding for p in program.parameters] == [
        "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
        "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
        "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"]
    assert program.result(0).sharding == ""
    check_against_unpartitioned(program, mlp_text)


def test_data_parallel():
    program = xlac.load(MLP2)
    mesh = xs.Mesh(np.arange(4), (4,), ("data",))
    xs.data_parallel(program, mesh, batch_results=[0])
    assert [p.sharding for p in program.parameters] == ["{devices=[4,1]<=[4]}", "{replicated}", "{replicated}"]
    assert program.result(0).sharding == "{devices=[4,1]<=[4]}"
    exe = check_against_unpartitioned(program, MLP2)
    assert "all-" not in exe.spmd_report and "collective-permute" not in exe.spmd_report


def test_megatron_mlp():
    program = xlac.load(MLP2)
    mesh = xs.Mesh(np.arange(4), (4,), ("model",))
    xs.megatron_mlp(program, mesh, pairs=[("w1", "w2")])
    assert program.parameter("w1").sharding == "{devices=[1,4]<=[4]}"
    assert program.parameter("w2").sharding == "{devices=[4,1]<=[4]}"
    assert program.parameter("x").sharding == ""
    exe = check_against_unpartitioned(program, MLP2)
    report = exe.spmd_report
    assert report.count("all-reduce") == 1 and "all-gather" not in report, report


def test_data_parallel_and_megatron_compose():
    program = xlac.load(MLP2)
    mesh = xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    xs.data_parallel(program, mesh, axis="data", batch_results="y")
    xs.megatron_mlp(program, mesh, pairs=[(1, 2)], axis="model")
    assert [p.sharding for p in program.parameters] == [
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
        "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"]
    exe = check_against_unpartitioned(program, MLP2)
    assert exe.spmd_report.count("all-reduce") == 1


# ------------------------------------------------------------------------------------------------ metrics


def test_metrics_functions(mlp_text):
    met.clear_all()
    assert met.counter_names() == [] and met.metric_names() == [] and met.counter_value("Executions") is None
    exe = xlac.compile(mlp_text)
    args = [np.ones(p.shape, p.dtype) for p in exe.parameters]
    exe(*args)
    exe(*args)
    assert "Executions" in met.counter_names()
    assert met.counter_value("Executions") == 2
    assert met.counter_value("UncachedCompile") == 1 or met.counter_value("CachedCompile") == 1
    names = met.metric_names()
    assert "CompileTime" in names and "ExecuteTime" in names and "Core0.ArenaBytes" in names
    assert names == sorted(names)
    short = met.short_metrics_report()
    assert short.startswith("Metric: CompileTime\n  TotalSamples: 1\n")
    assert "Metric: ExecuteTime\n  TotalSamples: 2\n" in short and "Counter: Executions\n  Value: 2\n" in short
    assert "Core0" not in short and "PhaseTime" not in short
    assert met.short_metrics_report(counter_names=["Executions"], metric_names=[]) == "Counter: Executions\n  Value: 2\n"
    assert met.metrics_report() == xlac.metrics_report()
    met.clear_all()
    assert met.counter_names() == []
