// Sharding a program the way PyTorch/XLA's SPMD API does (docs/python.md, "From PyTorch/XLA"): describe the devices
// as a Mesh (or a HybridMesh whose DCN axes span xlac's DCN slices), annotate the program's parameters and results
// with partition specs, and compile it partitioned over the mesh. The Python package `xlac.spmd` is a thin layer over
// this header; both raise the same errors with the same texts. Link the CMake target `xlac_jit`.
//
//   auto mesh = xlac::spmd::Mesh::Create({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}, {"data", "model"});
//   auto program = xlac::spmd::Program::Load(text);
//   absl::Status s = program->MarkParameter(0, *mesh, {{0}, {}});  // x: rows over axis 0, columns replicated
//   s = program->MarkParameter(1, *mesh, {{}, {"model"}});          // w: columns over "model"
//   auto exe = program->Compile();                                  // 8 partitions: the mesh's devices
//
// Shardings cross this API as HLO sharding text ("{devices=[4,1,2]<=[8] last_tile_dim_replicate}"), as the module
// prints them; this header does not expose xlac's IR.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "xlac/jit.h"

namespace xlac::spmd {

// A logical mesh of devices, as torch_xla.distributed.spmd.Mesh: `device_ids` laid out row-major over `mesh_shape`,
// optionally with axis names. The device ids are partition ids of the compiled program: a permutation of
// 0..size()-1.
class Mesh {
 public:
  // InvalidArgument (texts in docs/python.md) when the device count is not the product of the shape, an id repeats
  // or is outside 0..size()-1, an axis is not positive, or the names are not one distinct name per axis.
  static absl::StatusOr<Mesh> Create(std::vector<int64_t> device_ids, std::vector<int64_t> mesh_shape,
                                     std::vector<std::string> axis_names = {});
  // torch_xla's HybridMesh: axis i has ici_mesh_shape[i] * dcn_mesh_shape[i] devices, the DCN coordinate major
  // (numpy.block of one ICI mesh per slice). Slice s of the prod(dcn_mesh_shape) slices holds devices
  // [s * n, (s + 1) * n) for n = prod(ici_mesh_shape), as xla-run --dcn-mesh=K numbers them; within a slice the ICI
  // mesh is row-major (no physical torus order: emulated cores have no torus). An empty dcn_mesh_shape is all ones.
  static absl::StatusOr<Mesh> Hybrid(std::vector<int64_t> ici_mesh_shape, std::vector<int64_t> dcn_mesh_shape,
                                     std::vector<std::string> axis_names = {});

  const std::vector<int64_t>& device_ids() const { return device_ids_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<std::string>& axis_names() const { return axis_names_; }  // empty when unnamed
  int64_t size() const;
  // A hybrid mesh's DCN shape (all ones for Mesh::Create) and its slice count, the --dcn-mesh=K it maps onto.
  const std::vector<int64_t>& dcn_shape() const { return dcn_shape_; }
  int64_t dcn_slices() const;

 private:
  std::vector<int64_t> device_ids_, shape_, dcn_shape_;
  std::vector<std::string> axis_names_;
};

// One mesh axis in a partition spec: by index or by name.
struct MeshAxis {
  MeshAxis(int64_t i) : index(i) {}                // NOLINT: PartitionSpec literals
  MeshAxis(int i) : index(i) {}                    // NOLINT
  MeshAxis(std::string n) : name(std::move(n)) {}  // NOLINT
  MeshAxis(const char* n) : name(n) {}             // NOLINT
  int64_t index = -1;                              // used when `name` is empty
  std::string name;
};
// One entry per array dimension, major to minor: the mesh axes that dimension is split over (several: the first
// major), none for replicated. Fewer entries than the rank leave the trailing dimensions replicated.
using PartitionSpec = std::vector<std::vector<MeshAxis>>;

// The HLO sharding of an array of rank `rank` laid out over `mesh` as `spec` says (GSPMD's / JAX's NamedSharding
// rule: the tile assignment is the mesh transposed to the spec's axes followed by the unused ones, which become
// last_tile_dim_replicate). `what` names the array in errors, e.g. "parameter 0 (x: f32[8,16])"; errors are
// InvalidArgument: "mark_sharding: <what>: dimension 1: the mesh has no axis named 'modle' (axes: 'data',
// 'model')" and the others docs/python.md lists.
absl::StatusOr<std::string> ShardingFor(const Mesh& mesh, const PartitionSpec& spec, int64_t rank,
                                        std::string_view what);

// A plain-text table of which device holds which block of an array of `dims` with the HLO sharding `sharding`
// (as JAX's visualize_array_sharding): rank 1 and 2 as a grid, other ranks one line per block.
absl::StatusOr<std::string> VisualizeSharding(const std::vector<int64_t>& dims, std::string_view sharding);

// An entry parameter or a result (an element of the entry computation's result tuple, or the one array result).
struct ValueInfo {
  int64_t index = 0;
  std::string name;      // the instruction's name (a result: the root tuple's operand, or the root)
  ArrayInfo array;       // element_type "tuple" and no dims for a tuple-shaped value
  std::string sharding;  // its HLO sharding text, "" when it has none
};

// A module loaded from HLO or StableHLO text whose entry parameters and results can be annotated and printed
// back as HLO text (StableHLO input prints as HLO: the shardings are HLO's `sharding={...}`).
class Program {
 public:
  // Parses and verifies (InvalidArgument with file:line:col diagnostics otherwise).
  static absl::StatusOr<Program> Load(std::string_view text, std::string_view source_name = "<text>");
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  const std::vector<ValueInfo>& parameters() const;
  const std::vector<ValueInfo>& results() const;
  // Index of the parameter / result with this name (a leading '%' is ignored); InvalidArgument naming the choices.
  absl::StatusOr<int64_t> ParameterIndex(std::string_view name) const;
  absl::StatusOr<int64_t> ResultIndex(std::string_view name) const;

  // Sets (or with "" clears) the HLO sharding of a parameter or result. The text is parsed and must fit the value
  // (a tiled sharding's data dimensions = its rank).
  absl::Status SetParameterSharding(int64_t index, std::string_view sharding);
  absl::Status SetResultSharding(int64_t index, std::string_view sharding);
  // ShardingFor, then Set*Sharding; also InvalidArgument when another sharding of the module spans a different
  // number of devices than the mesh ("... the mesh has 8 devices but %row_sum is sharded over 2 ...").
  absl::Status MarkParameter(int64_t index, const Mesh& mesh, const PartitionSpec& spec);
  absl::Status MarkResult(int64_t index, const Mesh& mesh, const PartitionSpec& spec);

  // The device count of the last mesh used by Mark*, else the module's num_partitions.
  int64_t num_partitions() const;
  // The annotated module as HLO text (num_partitions in the header is num_partitions()).
  std::string Text() const;
  // Executable::Compile of Text() with num_partitions(); options.num_partitions must be 0 or equal to it.
  absl::StatusOr<std::unique_ptr<Executable>> Compile(CompileOptions options = {}) const;

 private:
  struct Impl;
  explicit Program(std::unique_ptr<Impl> impl);
  absl::Status Mark(bool result, int64_t index, const Mesh& mesh, const PartitionSpec& spec);
  absl::Status Set(bool result, int64_t index, std::string_view sharding);
  std::unique_ptr<Impl> impl_;
};

// One-call plans (docs/python.md, "Sharding programs"). `axis` is one mesh axis or several (a dimension split over
// them, the first major); an axis the mesh lacks is InvalidArgument ("fsdp: the mesh has no axis named 'fsdp' (axes:
// 'data')"). Parameters and results are indices; the plans replace the entry shardings they are about.
//
// DataParallel: the batch parameters and batch results on dimension 0 over `axis`, every other parameter (the
// weights) {replicated}, the other results unannotated (replicated).
absl::Status DataParallel(Program& program, const Mesh& mesh, const std::vector<MeshAxis>& axis = {"data"},
                          const std::vector<int64_t>& batch_parameters = {0},
                          const std::vector<int64_t>& batch_results = {});
// FSDPv2: the batch parameters and results on dimension 0 over `axis`; every other parameter of rank >= 1 over
// `axis` on its largest dimension the axes' size divides (the first of equal ones; none: {replicated}); rank-0 and
// tuple parameters and the other results unannotated.
absl::Status Fsdp(Program& program, const Mesh& mesh, const std::vector<MeshAxis>& axis = {"fsdp"},
                  const std::vector<int64_t>& batch_parameters = {0}, const std::vector<int64_t>& batch_results = {});
// Megatron-LM's MLP: for each (w1, w2), w1's last dimension and w2's first over `axis` (column- then row-sharded);
// nothing else changes.
absl::Status MegatronMlp(Program& program, const Mesh& mesh, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                         const std::vector<MeshAxis>& axis = {"model"});

// The shardings the entry parameters and results of `text` have when it is compiled with these options: the
// compile pipeline's load and partition steps (sharding propagation, then the partitioner) run as Compile runs them,
// and the partitioner's report says how it splits each argument and assembles each result. HLO sharding text per
// parameter and per result (ValueInfo's results). Every value is "{replicated}" when the module is not partitioned
// (no shardings, one partition, or partition = false).
struct PropagatedShardings {
  std::vector<std::string> parameters, results;
};
absl::StatusOr<PropagatedShardings> PropagateShardings(std::string_view text, const CompileOptions& options = {});

}  // namespace xlac::spmd

namespace xlac::spmd {

// ---------------------------------------------------------------------------------------------------- AutoShard
// Automatic sharding (docs/spmd.md, "Automatic sharding"): chooses shardings for the program's unannotated entry
// parameters that minimize the modeled TPU step time (`xlac --emit=tpu-report`'s model) subject to per-core HBM,
// keeping every sharding the user gave. The search starts from the best of the data-parallel, FSDP and
// Megatron-style plans (and `seeds`), so its plan is never modeled slower than any of them, then improves it one
// parameter at a time, largest first. The program comes back annotated over `mesh`, ready for Compile().
struct AutoShardOptions {
  std::string tpu = "v5e";  // v4, v5e, v5p, v6e
  // Plans to start from besides the built-in ones, e.g. programs annotated by DataParallel / Fsdp / MegatronMlp:
  // (name, program) with the same parameters. Their parameter shardings are read; the programs are not changed.
  std::vector<std::pair<std::string, const Program*>> seeds;
  int max_sweeps = 2;
  // Check accepted plans' per-core HBM with the full analysis of --tpu (the buffer assignment's padded peak); false:
  // only the per-core bytes of the parameters and results.
  bool full_memory_check = true;
  // Only plans that shard some parameter: otherwise "no sharding, every core runs the whole program" is one of the
  // plans and wins when the model says communication costs more than the compute it splits.
  bool require_sharded = false;
};

struct AutoShardReport {
  double modeled_seconds = 0;  // the chosen plan's modeled step time
  int64_t per_core_bytes = 0;  // its per-core HBM (the padded peak with full_memory_check)
  std::vector<std::pair<std::string, double>> start_plans;  // each start plan's modeled step (inf: infeasible)
  std::string start;                                        // the one the search started from
  int64_t evaluations = 0;                                  // assignments partitioned and modeled
  double search_seconds = 0;
  std::vector<std::string> explanation;  // one line per start plan set, choice and the result (--explain-sharding)
};

absl::StatusOr<AutoShardReport> AutoShard(Program& program, const Mesh& mesh, const AutoShardOptions& options = {});

// The modeled step time of `program` compiled over its num_partitions() on a slice of `tpu` chips: the
// `ModelOptimizedTpuStep` total `xlac --tpu=<tpu> --emit=tpu-report` prints. For comparing plans.
absl::StatusOr<double> ModeledStepSeconds(const Program& program, std::string_view tpu = "v5e");

}  // namespace xlac::spmd
