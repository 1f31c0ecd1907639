// The TPU step-time model (tpu_cost_model.h). Formulas: "How to Scale Your Model" (Austin et al.), part 1
// "Rooflines" (time = max(FLOPs / peak, bytes / bandwidth)) and part 3 "Sharded Matrices" (AllGather and
// ReduceScatter V / W_ici, AllReduce 2V / W_ici, AllToAll V / (4 W_ici) on a bidirectional ring with wraparound;
// half the bandwidth without wraparound; bandwidth adding up over the axes a collective spans; ~1us per hop),
// https://jax-ml.github.io/scaling-book/.
#include "passes/tpu_cost_model.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/collective_groups.h"
#include "ir/computation.h"
#include "ir/tpu_layout.h"
#include "ir/tpu_numerics.h"
#include "passes/alias_util.h"
#include "passes/optimization_pipeline.h"

namespace xlac {
namespace {

constexpr const char* kAxisNames[] = {"x", "y", "z"};

double PaddedBytes(const Shape& shape) {
  double total = 0;
  for (const ShapeIndex& index : ArrayLeafIndices(shape)) {
    std::optional<int64_t> bytes = TpuPaddedByteSize(*shape.Subshape(index));
    total += bytes ? static_cast<double>(*bytes) : 0;
  }
  return total;
}

double LogicalBytes(const Shape& shape) {
  double total = 0;
  for (const ShapeIndex& index : ArrayLeafIndices(shape)) {
    std::optional<int64_t> bytes = TpuUnpaddedByteSize(*shape.Subshape(index));
    total += bytes ? static_cast<double>(*bytes) : 0;
  }
  return total;
}

double Elements(const Shape& shape) {
  std::optional<int64_t> n = shape.ElementCount();
  return n ? static_cast<double>(*n) : 0;
}

// Matrix-unit time of one dot or convolution: 2 x multiply-adds at the peak of its operand type and precision.
double MatrixSeconds(const Instruction& inst, const TpuChipSpec& chip, double* flops_out) {
  double macs = 0;
  const Shape& lhs = inst.operand(0)->shape();
  if (inst.opcode() == Opcode::kDot) {
    double contracted = 1;
    for (int64_t d : inst.IntListAttr("lhs_contracting_dims")) contracted *= static_cast<double>(lhs.dimensions[d]);
    macs = Elements(inst.shape()) * contracted;
  } else {
    const Shape& kernel = inst.operand(1)->shape();
    const AttrValue* dnums = inst.FindAttr("dim_labels");
    double out_features = 1;
    if (dnums != nullptr && dnums->kind == AttrKind::kConvDnums) {
      out_features = static_cast<double>(
          kernel.dimensions[dnums->get<ConvolutionDimensionNumbers>().kernel_output_feature_dimension]);
    }
    macs = Elements(inst.shape()) * Elements(kernel) / std::max(1.0, out_features);
  }
  const double flops = 2 * macs;
  *flops_out += flops;
  double peak = chip.peak_bf16_flops;
  const PrimitiveType type = lhs.element_type;
  if ((type == PrimitiveType::kS8 || type == PrimitiveType::kU8) && chip.peak_int8_ops > 0) {
    peak = chip.peak_int8_ops;
  } else if (type == PrimitiveType::kF32) {
    switch (TpuDotModeOf(inst)) {
      case TpuDotMode::kF32:
        peak /= 6;  // HIGHEST: the 6-pass bf16 emulation of f32 products
        break;
      case TpuDotMode::kBf16x3:
        peak /= 3;
        break;
      default:
        break;
    }
  }
  return flops / peak;
}

// FLOPs (and matrix-unit seconds) of the dots and convolutions inside a fused computation.
double FusedMatrixSeconds(const Computation& comp, const TpuChipSpec& chip, double* flops) {
  double seconds = 0;
  for (const auto& inst : comp.instructions()) {
    if (inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution) {
      seconds += MatrixSeconds(*inst, chip, flops);
    } else if (inst->opcode() == Opcode::kFusion) {
      seconds += FusedMatrixSeconds(*inst->called_computation(0), chip, flops);
    }
  }
  return seconds;
}

bool IsFree(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kAfterAll:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kOptimizationBarrier:
      return true;
    default:
      return false;
  }
}

// backend_config={"known_trip_count":{"n":"10"}} -> 10; 1 when absent or unreadable.
int64_t KnownTripCount(const Instruction& loop) {
  const std::string& config = loop.backend_config();
  size_t at = config.find("known_trip_count");
  if (at == std::string::npos) return 1;
  at = config.find("\"n\"", at);
  if (at == std::string::npos) return 1;
  at = config.find_first_of("0123456789", at + 3);
  if (at == std::string::npos) return 1;
  int64_t n = 0;
  for (; at < config.size() && config[at] >= '0' && config[at] <= '9' && n < (int64_t{1} << 40); ++at) {
    n = n * 10 + (config[at] - '0');
  }
  return std::max<int64_t>(n, 1);
}

class StepModel {
 public:
  StepModel(const TpuTopology& topology, int64_t replicas, int64_t partitions)
      : topology_(topology), replicas_(replicas), partitions_(partitions) {}

  absl::Status Computation(const xlac::Computation& comp, std::vector<TpuOpCost>& out) {
    for (const Instruction* inst : comp.MakePostOrder()) {
      const Opcode op = inst->opcode();
      if (IsFree(op)) continue;
      if (op == Opcode::kWhile) {
        // A loop with a known trip count (XLA's backend_config) counts that many iterations, otherwise one.
        const int64_t trips = KnownTripCount(*inst);
        std::vector<TpuOpCost> body;
        for (const xlac::Computation* callee : inst->called_computations()) {
          if (absl::Status s = Computation(*callee, body); !s.ok()) return s;
        }
        for (TpuOpCost& c : body) {
          if (trips > 1) {
            c.seconds *= static_cast<double>(trips);
            c.flops *= static_cast<double>(trips);
            c.bytes *= static_cast<double>(trips);
            c.name = absl::StrCat(c.name, " x", trips);
          }
          out.push_back(std::move(c));
        }
        continue;
      }
      if (op == Opcode::kCall) {
        if (absl::Status s = Computation(*inst->called_computation(0), out); !s.ok()) return s;
        continue;
      }
      if (op == Opcode::kConditional) {
        std::vector<TpuOpCost> best;
        double best_seconds = -1;
        for (const xlac::Computation* branch : inst->called_computations()) {
          std::vector<TpuOpCost> ops;
          if (absl::Status s = Computation(*branch, ops); !s.ok()) return s;
          double seconds = 0;
          for (const TpuOpCost& c : ops) seconds += c.seconds;
          if (seconds > best_seconds) {
            best_seconds = seconds;
            best = std::move(ops);
          }
        }
        out.insert(out.end(), best.begin(), best.end());
        continue;
      }
      absl::StatusOr<TpuOpCost> cost = Op(*inst);
      if (!cost.ok()) return cost.status();
      if (cost->seconds > 0) out.push_back(*std::move(cost));
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<TpuOpCost> Op(const Instruction& inst) {
    TpuOpCost cost;
    cost.name = inst.name();
    cost.opcode = std::string(OpcodeName(inst.opcode()));
    std::optional<TpuCollectiveKind> kind;
    double bytes = 0;
    switch (inst.opcode()) {
      case Opcode::kAllGather:
      case Opcode::kAllGatherStart:
        kind = TpuCollectiveKind::kAllGather;
        bytes = LogicalBytes(inst.opcode() == Opcode::kAllGather ? inst.shape() : inst.shape().tuple_shapes.back());
        break;
      case Opcode::kReduceScatter:
        kind = TpuCollectiveKind::kReduceScatter;
        for (const Instruction* o : inst.operands()) bytes += LogicalBytes(o->shape());
        break;
      case Opcode::kAllReduce:
      case Opcode::kAllReduceStart:
        kind = TpuCollectiveKind::kAllReduce;
        for (const Instruction* o : inst.operands()) bytes += LogicalBytes(o->shape());
        break;
      case Opcode::kAllToAll:
        kind = TpuCollectiveKind::kAllToAll;
        for (const Instruction* o : inst.operands()) bytes += LogicalBytes(o->shape());
        break;
      case Opcode::kCollectivePermute:
      case Opcode::kCollectivePermuteStart:
        kind = TpuCollectiveKind::kCollectivePermute;
        bytes = LogicalBytes(inst.operand(0)->shape());
        break;
      default:
        break;
    }
    if (kind) {
      cost.bound = TpuOpCost::Bound::kCommunication;
      cost.bytes = bytes;
      return Collective(inst, *kind, bytes, cost);
    }
    double flops = 0, matrix_seconds = 0;
    if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) {
      matrix_seconds = MatrixSeconds(inst, topology_.chip(), &flops);
    } else if (inst.opcode() == Opcode::kFusion) {
      matrix_seconds = FusedMatrixSeconds(*inst.called_computation(0), topology_.chip(), &flops);
    }
    double hbm = PaddedBytes(inst.shape());
    for (const Instruction* o : inst.operands()) hbm += PaddedBytes(o->shape());
    const double memory_seconds = hbm / topology_.chip().hbm_bytes_per_second;
    cost.flops = flops;
    cost.bytes = hbm;
    cost.seconds = std::max(matrix_seconds, memory_seconds);
    cost.bound =
        matrix_seconds >= memory_seconds && matrix_seconds > 0 ? TpuOpCost::Bound::kCompute : TpuOpCost::Bound::kMemory;
    return cost;
  }

  absl::StatusOr<TpuOpCost> Collective(const Instruction& inst, TpuCollectiveKind kind, double bytes, TpuOpCost cost) {
    const int64_t devices = std::max<int64_t>(replicas_, 1) * std::max<int64_t>(partitions_, 1);
    if (devices > topology_.num_devices()) {
      return absl::InvalidArgumentError(absl::StrCat("the program runs on ", devices, " devices but the TPU slice ",
                                                     topology_.ToString(), " has ", topology_.num_devices()));
    }
    if (kind == TpuCollectiveKind::kCollectivePermute) {
      absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
          ResolveSourceTargetPairs(inst, replicas_, partitions_);
      if (!pairs.ok()) return pairs.status();
      int64_t farthest = 0;
      for (const auto& [source, target] : *pairs) {
        farthest = std::max(farthest, topology_.Distance(source, target));
      }
      const double link = topology_.chip().ici_link_bytes_per_second;
      cost.seconds = pairs->empty() ? 0 : std::max(bytes / link, farthest * kTpuIciHopSeconds);
      cost.detail = absl::StrCat(pairs->size(), " pairs, farthest ", farthest, " hops");
      return cost;
    }
    absl::StatusOr<std::vector<std::vector<int64_t>>> groups = ResolveDeviceGroups(inst, replicas_, partitions_);
    if (!groups.ok()) return groups.status();
    for (const std::vector<int64_t>& group : *groups) {
      TpuCollectiveCost c = ModelCollective(kind, static_cast<int64_t>(bytes), group, topology_);
      if (c.seconds > cost.seconds) {
        cost.seconds = c.seconds;
        cost.detail = absl::StrCat("group of ", group.size(), ", ", c.path);
      }
    }
    return cost;
  }

  const TpuTopology& topology_;
  int64_t replicas_;
  int64_t partitions_;
};

}  // namespace

TpuCollectiveCost ModelCollective(TpuCollectiveKind kind, int64_t bytes, const std::vector<int64_t>& group,
                                  const TpuTopology& topology) {
  TpuCollectiveCost cost;
  const double link = topology.chip().ici_link_bytes_per_second;
  const int64_t n = static_cast<int64_t>(group.size());
  if (n <= 1 || bytes == 0) {
    cost.path = "one device";
    return cost;
  }
  const double v = static_cast<double>(bytes);
  if (kind == TpuCollectiveKind::kCollectivePermute) {
    int64_t farthest = 0;
    for (int64_t i = 0; i + 1 < n; i += 2) farthest = std::max(farthest, topology.Distance(group[i], group[i + 1]));
    cost.link_bytes_per_second = link;
    cost.bandwidth_seconds = v / link;
    cost.latency_seconds = farthest * kTpuIciHopSeconds;
    cost.seconds = std::max(cost.bandwidth_seconds, cost.latency_seconds);
    cost.path = absl::StrCat("point to point, ", farthest, " hops");
    return cost;
  }
  const int64_t rank = topology.rank();
  std::vector<std::set<int64_t>> values(rank);
  for (int64_t d : group) {
    for (int64_t a = 0; a < rank; ++a) values[a].insert(topology.coords(d)[a]);
  }
  int64_t product = 1;
  bool contiguous = true;
  for (int64_t a = 0; a < rank; ++a) {
    product *= static_cast<int64_t>(values[a].size());
    contiguous &= *values[a].rbegin() - *values[a].begin() + 1 == static_cast<int64_t>(values[a].size());
  }
  double w = 0;
  int64_t hops = 0;
  std::vector<std::string> parts;
  if (product == n && contiguous) {
    for (int64_t a = 0; a < rank; ++a) {
      const int64_t k = static_cast<int64_t>(values[a].size());
      if (k == 1) continue;
      const bool wrap = topology.wraps(a) && k == topology.dims()[a];
      w += (wrap ? 2 : 1) * link;
      hops += wrap ? k / 2 : k - 1;
      parts.push_back(absl::StrCat(wrap ? "ring of " : "line of ", k, " on ", kAxisNames[a],
                                   wrap ? " (wraparound)" : " (no wraparound)"));
    }
  } else {
    // Not a sub-grid: one direction around a ring through the group, in its order.
    w = link;
    for (int64_t i = 0; i < n; ++i) hops += topology.Distance(group[i], group[(i + 1) % n]);
    parts.push_back(absl::StrCat("irregular group of ", n, " (one-way ring)"));
  }
  double factor = 1, rounds = 1;
  if (kind == TpuCollectiveKind::kAllReduce) factor = rounds = 2;
  if (kind == TpuCollectiveKind::kAllToAll) factor = 0.25;
  cost.link_bytes_per_second = w;
  cost.bandwidth_seconds = factor * v / w;
  cost.latency_seconds = rounds * static_cast<double>(hops) * kTpuIciHopSeconds;
  cost.seconds = std::max(cost.bandwidth_seconds, cost.latency_seconds);
  cost.path = absl::StrJoin(parts, " + ");
  return cost;
}

absl::StatusOr<TpuStepReport> ModelTpuStep(const Module& module, const TpuTopology& topology, int64_t num_replicas,
                                           int64_t num_partitions) {
  const xlac::Computation* entry = module.entry_computation();
  if (entry == nullptr) return absl::FailedPreconditionError("module has no entry computation");
  TpuStepReport report;
  StepModel model(topology, std::max<int64_t>(num_replicas, 1), std::max<int64_t>(num_partitions, 1));
  if (absl::Status s = model.Computation(*entry, report.ops); !s.ok()) return s;
  for (const TpuOpCost& op : report.ops) {
    report.flops += op.flops;
    (op.bound == TpuOpCost::Bound::kCompute  ? report.compute_seconds
     : op.bound == TpuOpCost::Bound::kMemory ? report.memory_seconds
                                             : report.communication_seconds) += op.seconds;
  }
  return report;
}

absl::StatusOr<TpuStepReport> ModelOptimizedTpuStep(const Module& module, const TpuTopology& topology,
                                                    int64_t num_replicas, int64_t num_partitions, bool tpu_numerics,
                                                    bool partitioned) {
  std::unique_ptr<Module> optimized = module.Clone();
  OptimizationOptions options;
  options.tpu_numerics = tpu_numerics;
  if (partitioned) options.stage = OptimizationStage::kAfterPartitioning;
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = RunOptimizationPipeline(*optimized, options, diags);
  if (!changed.ok()) return changed.status();
  return ModelTpuStep(*optimized, topology, num_replicas, num_partitions);
}

std::string FormatSeconds(double seconds) {
  if (seconds >= 1) return absl::StrFormat("%.3g s", seconds);
  if (seconds >= 1e-3) return absl::StrFormat("%.3g ms", seconds * 1e3);
  if (seconds >= 1e-6) return absl::StrFormat("%.3g us", seconds * 1e6);
  return absl::StrFormat("%.3g ns", seconds * 1e9);
}

std::string TpuStepReport::ToString(int64_t top) const {
  std::string out =
      absl::StrCat("Modeled step time per core: ", FormatSeconds(total_seconds()), " (compute ",
                   FormatSeconds(compute_seconds), ", memory ", FormatSeconds(memory_seconds), ", communication ",
                   FormatSeconds(communication_seconds), "), ", absl::StrFormat("%.4g", flops), " FLOPs\n");
  std::vector<const TpuOpCost*> sorted;
  for (const TpuOpCost& op : ops) sorted.push_back(&op);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TpuOpCost* a, const TpuOpCost* b) { return a->seconds > b->seconds; });
  const int64_t shown = std::min<int64_t>(top, static_cast<int64_t>(sorted.size()));
  if (shown > 0) absl::StrAppend(&out, "Most expensive ops:\n");
  for (int64_t i = 0; i < shown; ++i) {
    const TpuOpCost& op = *sorted[i];
    const char* bound = op.bound == TpuOpCost::Bound::kCompute  ? "compute"
                        : op.bound == TpuOpCost::Bound::kMemory ? "memory"
                                                                : "communication";
    absl::StrAppend(&out, "  ", FormatSeconds(op.seconds), "  ", op.name, " (", op.opcode, ", ", bound, "): ");
    if (op.bound == TpuOpCost::Bound::kCommunication) {
      absl::StrAppend(&out, static_cast<int64_t>(op.bytes), " bytes per device, ", op.detail, "\n");
    } else {
      absl::StrAppend(&out, absl::StrFormat("%.4g", op.flops), " FLOPs, ", static_cast<int64_t>(op.bytes),
                      " HBM bytes\n");
    }
  }
  return out;
}

}  // namespace xlac
