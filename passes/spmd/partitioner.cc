// The partitioner's driver: walks each computation in post order, asks the op-family handlers for a per-core value
// of every instruction, reshards it to the instruction's sharding, and finally swaps the partitioned computations in.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/dce.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac {
namespace spmd {
namespace {

std::string At(const Instruction& inst) {
  return inst.loc().known() ? absl::StrCat(inst.loc().line, ":", inst.loc().col, ": ") : std::string();
}

bool IsManual(const Sharding& s) {
  if (s.kind == Sharding::Kind::kManual) return true;
  if (s.IsTuple()) {
    return !s.tuple_elements.empty() &&
           std::all_of(s.tuple_elements.begin(), s.tuple_elements.end(), [](const Sharding& e) { return IsManual(e); });
  }
  return false;
}

}  // namespace

namespace {

int64_t LeafCountOf(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes) count += LeafCountOf(element);
  return count;
}

bool HasNestedTuple(const Shape& shape) {
  return std::any_of(shape.tuple_shapes.begin(), shape.tuple_shapes.end(), [](const Shape& e) { return e.IsTuple(); });
}

// `leaves[next...]` regrouped into the nesting of `shape`.
Sharding NestLeaves(const std::vector<Sharding>& leaves, const Shape& shape, size_t& next) {
  if (!shape.IsTuple()) return leaves[next++];
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes) elements.push_back(NestLeaves(leaves, element, next));
  return Sharding::Tuple(std::move(elements));
}

}  // namespace

Sharding ExpandTupleSharding(const Sharding& sharding, const Shape& shape) {
  if (!shape.IsTuple()) {
    if (sharding.IsTuple() && sharding.tuple_elements.size() == 1) return sharding.tuple_elements[0];
    return sharding;
  }
  // XLA writes the sharding of a nested tuple as the flat list of its leaves' shardings
  // ({{devices=[2,1]0,1}, {replicated}, {maximal device=0}} on ((f32[9,2], f32[2]), token[])).
  if (sharding.IsTuple() && HasNestedTuple(shape) &&
      static_cast<int64_t>(sharding.tuple_elements.size()) == LeafCountOf(shape) &&
      std::none_of(sharding.tuple_elements.begin(), sharding.tuple_elements.end(),
                   [](const Sharding& e) { return e.IsTuple(); })) {
    size_t next = 0;
    return NestLeaves(sharding.tuple_elements, shape, next);
  }
  std::vector<Sharding> elements;
  for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
    const Sharding& element =
        sharding.IsTuple() ? (i < sharding.tuple_elements.size() ? sharding.tuple_elements[i] : Sharding::Replicated())
                           : sharding;
    elements.push_back(ExpandTupleSharding(element, shape.tuple_shapes[i]));
  }
  return Sharding::Tuple(std::move(elements));
}

absl::StatusOr<Shape> ShardShapeOf(const Shape& base, const Sharding& sharding, int64_t num_devices) {
  if (base.IsTuple()) {
    Sharding expanded = ExpandTupleSharding(sharding, base);
    Shape out = base;
    for (size_t i = 0; i < base.tuple_shapes.size(); ++i) {
      XLAC_ASSIGN_OR_RETURN(out.tuple_shapes[i],
                            ShardShapeOf(base.tuple_shapes[i], expanded.tuple_elements[i], num_devices));
    }
    return out;
  }
  if (!base.IsArray()) return base;
  XLAC_ASSIGN_OR_RETURN(Tiling tiling, TilingOf(sharding, base.rank(), num_devices));
  if (tiling.manual) return base;
  return ShardShape(base, tiling);
}

int64_t ComputationBuilder::num_devices() const { return p_.num_devices(); }

Partitioner::Partitioner(Module& module, const SpmdOptions& options, SpmdReport* report)
    : module_(module), options_(options), report_(report) {
  num_partitions_ = options.num_partitions > 0 ? options.num_partitions : module.config().num_partitions;
  num_replicas_ = std::max<int64_t>(1, module.config().replica_count);
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      next_channel_id_ = std::max(next_channel_id_, inst->IntAttr("channel_id", 0) + 1);
    }
  }
}

ReplicaGroups Partitioner::GlobalGroups(const std::vector<std::vector<int64_t>>& groups) const {
  ReplicaGroups out;
  for (int64_t r = 0; r < num_replicas_; ++r) {
    for (const std::vector<int64_t>& group : groups) {
      std::vector<int64_t> global;
      for (int64_t d : group) global.push_back(r * num_partitions_ + d);
      out.groups.push_back(std::move(global));
    }
  }
  return out;
}

Computation* Partitioner::ScalarReducer(Opcode op, PrimitiveType type) {
  auto key = std::make_pair(op, type);
  if (auto it = reducers_.find(key); it != reducers_.end()) return it->second;
  std::string name = module_.UniqueComputationName(
      absl::StrCat(std::string(OpcodeName(op)), ".", std::string(PrimitiveTypeName(type))));
  Computation* comp = module_.AddComputation(std::make_unique<Computation>(name));
  Shape scalar = Shape::Scalar(type);
  Instruction* lhs =
      comp->AddInstruction(Instruction::CreateParameter(0, module_.UniqueInstructionName("lhs"), scalar));
  Instruction* rhs =
      comp->AddInstruction(Instruction::CreateParameter(1, module_.UniqueInstructionName("rhs"), scalar));
  Instruction* root =
      comp->AddInstruction(Instruction::Create(op, module_.UniqueInstructionName(OpcodeName(op)), scalar, {lhs, rhs}));
  comp->set_root(root);
  reducers_[key] = comp;
  return comp;
}

Sharding Partitioner::TargetSharding(const Instruction& inst) const {
  if (inst.sharding().has_value()) return ExpandTupleSharding(*inst.sharding(), inst.shape());
  return ExpandTupleSharding(Sharding::Replicated(), inst.shape());
}

void Partitioner::Warn(const Instruction& source, std::string message) {
  if (report_ != nullptr) report_->warnings.push_back(absl::StrCat(At(source), "%", source.name(), ": ", message));
}

void Partitioner::Note(const Instruction& source, std::string message) {
  if (report_ != nullptr) report_->notes.push_back(absl::StrCat(At(source), "%", source.name(), ": ", message));
}

void Partitioner::RecordCollective(const Instruction& source, const Instruction& collective, int64_t group_size) {
  if (report_ == nullptr) return;
  SpmdReport::Collective c;
  c.source = source.name();
  c.opcode = std::string(OpcodeName(collective.opcode()));
  c.name = collective.name();
  c.group_size = group_size;
  for (const Instruction* operand : collective.operands()) {
    if (operand->shape().IsArray()) c.bytes_per_core += operand->shape().ByteSizeOf().value_or(0);
  }
  report_->collectives.push_back(std::move(c));
  collectives_.push_back(&collective);
}

namespace {

// Values of tokens and other non-array leaves have no shards: they pass through unchanged.
bool IsReplicatedLike(const Sharding& s) {
  if (s.IsTuple()) {
    return std::all_of(s.tuple_elements.begin(), s.tuple_elements.end(),
                       [](const Sharding& e) { return IsReplicatedLike(e); });
  }
  return s.kind == Sharding::Kind::kReplicated || s.kind == Sharding::Kind::kMaximal ||
         s.kind == Sharding::Kind::kUnknown;
}

// Ops on manual values run as written: their shapes are already per-core.
absl::StatusOr<PValue> HandleManual(ComputationBuilder& b, const Instruction& inst) {
  std::vector<Instruction*> operands;
  for (const Instruction* operand : inst.operands()) operands.push_back(b.Get(operand).hlo);
  Instruction* clone = b.Clone(inst, inst.shape(), operands);
  return PValue{clone, ExpandTupleSharding(Sharding::Manual(), inst.shape()), inst.shape()};
}

// The tiling of a full array whose shards are the shards of a manual region's value: `manual` is that value's
// tiling (fully manual, or manual on a subgroup and tiled within it) over its shape `local`. Each dimension the
// manual axis splits (full size over manual size, in order, the manual coordinate major) becomes tiled by that split
// times the tiles within the group; what is left of the manual axis replicates. Used where a boundary's own sharding
// does not fit its operand (sharding propagation refined one side only).
absl::StatusOr<Tiling> FullTilingOfManual(const Tiling& manual, const Shape& full, const Shape& local,
                                          int64_t num_devices) {
  const int64_t rank = full.rank();
  const int64_t groups = manual.manual ? num_devices : manual.manual_subgroup;
  const int64_t replication = manual.manual ? 1 : manual.replication;
  const std::vector<int64_t> inner = manual.manual ? std::vector<int64_t>(static_cast<size_t>(rank), 1) : manual.tiles;
  std::vector<int64_t> split(static_cast<size_t>(rank), 1);
  int64_t splits = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (local.dimensions[i] <= 0 || full.dimensions[i] % local.dimensions[i] != 0) {
      return absl::InvalidArgumentError(absl::StrCat("the manual shape ", ShapeToString(local, false),
                                                     " does not divide ", ShapeToString(full, false)));
    }
    split[i] = full.dimensions[i] / local.dimensions[i];
    splits *= split[i];
  }
  if (groups % splits != 0) {
    return absl::InvalidArgumentError(absl::StrCat(ShapeToString(full, false), " is split into ", splits,
                                                   " manual shards, which ", groups, " manual groups cannot hold"));
  }
  Tiling out;
  out.tiles.resize(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) out.tiles[i] = split[i] * inner[i];
  out.replication = groups / splits * replication;
  out.devices.assign(static_cast<size_t>(num_devices), 0);
  // Walk the manual tiling's device array [inner tiles..., replication, groups] and place each device.
  std::vector<int64_t> sizes = inner;
  sizes.push_back(replication);
  sizes.push_back(groups);
  std::vector<int64_t> out_sizes = out.AxisSizes();
  const std::vector<int64_t> devices = manual.manual ? std::vector<int64_t>() : manual.devices;
  for (int64_t p = 0; p < num_devices; ++p) {
    std::vector<int64_t> c(sizes.size());
    for (int64_t q = p, k = static_cast<int64_t>(sizes.size()); k-- > 0;) {
      c[k] = q % sizes[k];
      q /= sizes[k];
    }
    int64_t m = c.back();
    std::vector<int64_t> mc(static_cast<size_t>(rank));
    for (int64_t i = rank; i-- > 0;) {
      mc[i] = m % split[i];
      m /= split[i];
    }
    std::vector<int64_t> oc(out_sizes.size());
    for (int64_t i = 0; i < rank; ++i) oc[i] = mc[i] * inner[i] + c[i];
    oc[rank] = m * replication + c[rank];
    int64_t flat = 0;
    for (size_t k = 0; k < oc.size(); ++k) flat = flat * out_sizes[k] + oc[k];
    out.devices[flat] = manual.manual ? p : devices[p];
  }
  return out;
}

// custom-call SPMDFullToShardShape / SPMDShardToFullShape: the boundaries of manual regions (shard_map).
absl::StatusOr<PValue> HandleManualBoundary(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  std::string_view call = inst.StringAttr("custom_call_target");
  PValue operand = b.Get(inst.operand(0));
  const bool to_shard = call == "SPMDFullToShardShape";
  const Shape& manual_shape = to_shard ? inst.shape() : inst.operand(0)->shape();
  const Shape& full_shape = to_shard ? inst.operand(0)->shape() : inst.shape();
  const Sharding& manual_sharding = to_shard ? target : operand.sharding;
  XLAC_ASSIGN_OR_RETURN(Shape local, ShardShapeOf(manual_shape, manual_sharding, b.num_devices()));
  XLAC_ASSIGN_OR_RETURN(Tiling manual, TilingOf(manual_sharding, manual_shape.rank(), b.num_devices()));
  if (to_shard) {
    // The operand's own sharding says how the global value is split into the manual shards (a partially manual result
    // may be tiled further within each manual group). When its shards are not the manual shards, the operand moves
    // to the tiling that makes them so.
    if (!(operand.hlo->shape().dimensions == local.dimensions)) {
      absl::StatusOr<Tiling> full = FullTilingOfManual(manual, full_shape, manual_shape, b.num_devices());
      if (full.ok()) {
        XLAC_ASSIGN_OR_RETURN(operand, b.ReshardToTiling(operand, *full, inst));
      }
    }
    if (!(operand.hlo->shape().dimensions == local.dimensions)) {
      return absl::InvalidArgumentError(
          absl::StrCat(At(inst), "SPMDFullToShardShape %", inst.name(), " has shards of ", ShapeToString(local, false),
                       ", but the shard of its operand under ", ShardingToString(operand.sharding), " is ",
                       ShapeToString(operand.hlo->shape(), false)));
    }
    // Uneven shards: the manual program sees zeros where the operand's shard is padding (as GSPMD pads).
    Instruction* shard = operand.hlo;
    XLAC_ASSIGN_OR_RETURN(Tiling operand_tiling, TilingOf(operand.sharding, full_shape.rank(), b.num_devices()));
    std::vector<int64_t> uneven;
    for (int64_t i = 0; i < full_shape.rank(); ++i) {
      if (full_shape.dimensions[i] % operand_tiling.tiles[i] != 0) uneven.push_back(i);
    }
    if (!uneven.empty() && !operand_tiling.manual && operand_tiling.manual_subgroup == 1) {
      shard = b.MaskPadding(shard, full_shape, operand_tiling, uneven, b.Zero(full_shape.element_type));
    }
    Instruction* copy = b.Add(Opcode::kCopy, local, {shard});
    return PValue{copy, target, inst.shape()};
  }
  // SPMDShardToFullShape: the manual value is this core's shard of the result in the target sharding. When the
  // shapes disagree, the shard is read in the tiling the manual value's own sharding implies, and the driver reshards
  // it to the target.
  XLAC_ASSIGN_OR_RETURN(Shape shard_shape, ShardShapeOf(inst.shape(), target, b.num_devices()));
  if (!(shard_shape.dimensions == operand.hlo->shape().dimensions)) {
    absl::StatusOr<Tiling> full = FullTilingOfManual(manual, full_shape, manual_shape, b.num_devices());
    if (full.ok() && ShardShape(full_shape, *full).dimensions == operand.hlo->shape().dimensions) {
      Instruction* copy = b.Add(Opcode::kCopy, ShardShape(full_shape, *full), {operand.hlo});
      return PValue{copy, ToSharding(*full), inst.shape()};
    }
    return absl::InvalidArgumentError(absl::StrCat(At(inst), "SPMDShardToFullShape %", inst.name(), " of sharding ",
                                                   ShardingToString(target), " expects shards of ",
                                                   ShapeToString(shard_shape, false), ", but its operand is ",
                                                   ShapeToString(operand.hlo->shape(), false)));
  }
  Instruction* copy = b.Add(Opcode::kCopy, shard_shape, {operand.hlo});
  return PValue{copy, target, inst.shape()};
}

}  // namespace

absl::StatusOr<PValue> DispatchInstruction(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() == Opcode::kCustomCall) {
    std::string_view call = inst.StringAttr("custom_call_target");
    if (IsShardingIdentityTarget(call) && inst.operand_count() == 1) return b.Get(inst.operand(0));
    if (call == "SPMDFullToShardShape" || call == "SPMDShardToFullShape") {
      // The boundary's own sharding says how the manual shards make up the global value. `target` may differ: a
      // computation's root takes its caller's sharding (JAX's shard_map inside a called function ends in an
      // SPMDShardToFullShape whose call is unannotated); the driver reshards to it afterwards.
      return HandleManualBoundary(b, inst, inst.sharding().has_value() ? b.partitioner().TargetSharding(inst) : target);
    }
  }
  // Tuples are assembled and taken apart leaf by leaf: a tuple mixing manual and tiled leaves stays mixed.
  bool manual = IsManual(target);
  bool leafwise = !manual && (inst.opcode() == Opcode::kTuple || inst.opcode() == Opcode::kGetTupleElement ||
                              (inst.opcode() == Opcode::kCopy && inst.shape().IsTuple()));
  for (const Instruction* operand : inst.operands()) manual |= IsManual(b.Get(operand).sharding);
  if (manual && !leafwise) return HandleManual(b, inst);

  using Handler = absl::StatusOr<PValue> (*)(ComputationBuilder&, const Instruction&, const Sharding&);
  for (Handler handler : {&HandleElementwise, &HandleKernelCall, &HandleDot, &HandleConvolution, &HandleReduce,
                          &HandleReduceWindow, &HandleSelectAndScatter, &HandleGatherScatter, &HandleTopK,
                          &HandleShapeOp, &HandleFusion, &HandleControlFlow, &HandleHostIo}) {
    absl::StatusOr<PValue> value = handler(b, inst, target);
    if (value.ok() || !absl::IsNotFound(value.status())) return value;
  }
  return HandleReplicated(b, inst);
}

absl::Status LocatePartitionError(const Instruction& inst, const Sharding& target, const absl::Status& status) {
  std::string message(status.message());
  bool located = message.find(": ") != std::string::npos && !message.empty() && std::isdigit(message[0]);
  return absl::Status(
      status.code(), located ? message
                             : absl::StrCat(At(inst), "cannot partition ", std::string(OpcodeName(inst.opcode())), " %",
                                            inst.name(), " with sharding ", ShardingToString(target), ": ", message));
}

Sharding KeepManualLeaves(const Sharding& produced, const Sharding& target, const Shape& shape) {
  if (shape.IsTuple()) {
    Sharding from = ExpandTupleSharding(produced, shape);
    Sharding to = ExpandTupleSharding(target, shape);
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      to.tuple_elements[i] = KeepManualLeaves(from.tuple_elements[i], to.tuple_elements[i], shape.tuple_shapes[i]);
    }
    return to;
  }
  if (produced.kind == Sharding::Kind::kManual && target.kind == Sharding::Kind::kReplicated) return produced;
  return target;
}

// The whole value on every core: replicated, or — for a value manual on a subgroup — whole within each manual group.
absl::StatusOr<Sharding> WholeSharding(const Sharding& sharding, const Shape& base, int64_t num_devices) {
  if (base.IsTuple()) {
    Sharding expanded = ExpandTupleSharding(sharding, base);
    std::vector<Sharding> elements;
    for (size_t i = 0; i < base.tuple_shapes.size(); ++i) {
      XLAC_ASSIGN_OR_RETURN(Sharding e, WholeSharding(expanded.tuple_elements[i], base.tuple_shapes[i], num_devices));
      elements.push_back(std::move(e));
    }
    return Sharding::Tuple(std::move(elements));
  }
  if (!base.IsArray()) return Sharding::Replicated();
  XLAC_ASSIGN_OR_RETURN(Tiling t, TilingOf(sharding, base.rank(), num_devices));
  if (t.manual_subgroup == 1) return Sharding::Replicated();
  return ToSharding(RegroupAxes(t, std::vector<std::vector<int64_t>>(static_cast<size_t>(base.rank()))));
}

absl::StatusOr<PValue> HandleReplicated(ComputationBuilder& b, const Instruction& inst) {
  std::vector<Instruction*> operands;
  bool gathered = false;
  std::optional<Sharding> manual_group;  // a partially manual operand makes the result manual the same way
  for (const Instruction* operand : inst.operands()) {
    const PValue& value = b.Get(operand);
    XLAC_ASSIGN_OR_RETURN(Sharding whole, WholeSharding(value.sharding, value.base, b.num_devices()));
    if (!value.base.IsTuple() && value.base.IsArray() && !(whole == Sharding::Replicated())) manual_group = whole;
    gathered |= !IsReplicatedLike(value.sharding);
    XLAC_ASSIGN_OR_RETURN(PValue full, b.Reshard(value, whole, inst));
    operands.push_back(full.hlo);
  }
  if (gathered && !IsReplicatedLike(b.partitioner().TargetSharding(inst))) {
    b.partitioner().Warn(inst, absl::StrCat(std::string(OpcodeName(inst.opcode())),
                                            " is computed on the whole array on every core (no sharded form)"));
  }
  Instruction* clone = b.Clone(inst, inst.shape(), operands);
  Sharding result = ExpandTupleSharding(Sharding::Replicated(), inst.shape());
  if (manual_group) {
    // Every array leaf of the result: whole within each manual group.
    std::function<Sharding(const Shape&)> like = [&](const Shape& shape) -> Sharding {
      if (shape.IsTuple()) {
        std::vector<Sharding> elements;
        for (const Shape& e : shape.tuple_shapes) elements.push_back(like(e));
        return Sharding::Tuple(std::move(elements));
      }
      if (!shape.IsArray()) return Sharding::Replicated();
      absl::StatusOr<Tiling> mt =
          TilingOf(*manual_group, static_cast<int64_t>(manual_group->NumDataTileDims()), b.num_devices());
      if (!mt.ok()) return Sharding::Replicated();
      Tiling whole = RegroupAxes(*mt, std::vector<std::vector<int64_t>>(static_cast<size_t>(shape.rank())));
      return ToSharding(whole);
    };
    result = like(inst.shape());
  }
  return PValue{clone, result, inst.shape()};
}

absl::StatusOr<Computation*> Partitioner::PartitionComputation(const Computation& original,
                                                               const std::vector<Sharding>& param_shardings,
                                                               const Sharding& root_sharding) {
  Computation* comp =
      module_.AddComputation(std::make_unique<Computation>(module_.UniqueComputationName(original.name())));
  replaced_.push_back(&original);
  comp_names_.emplace_back(comp, original.name());
  comp->set_execution_thread(original.execution_thread());
  comp->set_loc(original.loc());
  ComputationBuilder b(*this, comp);
  std::set<const Instruction*> named;
  for (Instruction* inst : original.MakePostOrder()) {
    PValue value;
    if (inst->opcode() == Opcode::kParameter) {
      const Sharding& sharding = param_shardings.at(static_cast<size_t>(inst->parameter_number()));
      absl::StatusOr<Shape> shape = ShardShapeOf(inst->shape(), sharding, num_partitions_);
      if (!shape.ok()) {
        return absl::Status(shape.status().code(),
                            absl::StrCat(At(*inst), "parameter %", inst->name(), ": ", shape.status().message()));
      }
      Instruction* param = comp->AddInstruction(
          Instruction::CreateParameter(inst->parameter_number(), module_.UniqueInstructionName(inst->name()), *shape));
      param->set_loc(inst->loc());
      *param->mutable_metadata() = inst->metadata();
      value = PValue{param, sharding, inst->shape()};
    } else {
      Sharding target = inst == original.root() ? root_sharding : TargetSharding(*inst);
      absl::StatusOr<PValue> produced = DispatchInstruction(b, *inst, target);
      if (produced.ok() && inst == original.root() && &original == module_.entry_computation()) {
        // A manual value cannot be resharded; as the entry's result it is read from core 0 just like a replicated
        // one, so a leaf the program leaves manual stays manual where the result was merely defaulted to replicated.
        target = KeepManualLeaves(produced->sharding, target, inst->shape());
        entry_root_sharding_ = target;
      }
      if (produced.ok()) produced = b.Reshard(*produced, target, *inst);
      if (!produced.ok()) return LocatePartitionError(*inst, target, produced.status());
      value = *std::move(produced);
    }
    if (value.hlo->parent() == comp && named.insert(value.hlo).second) KeepName(value.hlo, inst->name());
    b.Set(inst, value);
  }
  comp->set_root(b.Get(original.root()).hlo);
  return comp;
}

}  // namespace spmd

bool HasShardings(const Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->sharding().has_value() && inst->sharding()->kind != Sharding::Kind::kReplicated) return true;
    }
  }
  return false;
}

bool IsAlreadyPartitioned(const Module& module) {
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return false;
  std::string_view name = entry->name();
  // XLA's partitioner names the new entry NAME_spmd; a later clone may append .N.
  if (size_t dot = name.rfind('.'); dot != std::string_view::npos && name.find("_spmd") != std::string_view::npos &&
                                    name.substr(dot + 1).find_first_not_of("0123456789") == std::string_view::npos) {
    name = name.substr(0, dot);
  }
  if (name.ends_with("_spmd")) return true;
  bool reads_partition_id = false;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kCustomCall) {
        std::string_view target = inst->StringAttr("custom_call_target");
        if (IsShardMapBoundaryTarget(target) || target == "Sharding") return false;
      }
      if (inst->sharding().has_value() && spmd::IsManual(*inst->sharding())) return false;
      reads_partition_id |= inst->opcode() == Opcode::kPartitionId;
    }
  }
  return reads_partition_id;
}

bool NeedsPartitioning(const Module& module) { return HasShardings(module) && !IsAlreadyPartitioned(module); }

absl::StatusOr<bool> RunSpmdPartitioner(Module& module, const SpmdOptions& options, SpmdReport* report) {
  SpmdReport local_report;
  if (report == nullptr) report = &local_report;
  const int64_t num_partitions = options.num_partitions > 0 ? options.num_partitions : module.config().num_partitions;
  report->num_partitions = num_partitions;
  Computation* entry = module.entry_computation();
  if (entry == nullptr || num_partitions <= 1 || !NeedsPartitioning(module)) {
    report->parameter_shardings.clear();
    if (entry != nullptr) {
      report->parameter_shardings.assign(entry->parameters().size(), Sharding::Replicated());
    }
    report->result_sharding = Sharding::Replicated();
    return false;
  }
  spmd::Partitioner partitioner(module, options, report);
  std::vector<Sharding> param_shardings;
  for (Instruction* p : entry->parameters()) param_shardings.push_back(partitioner.TargetSharding(*p));
  Sharding root_sharding = partitioner.TargetSharding(*entry->root());

  XLAC_ASSIGN_OR_RETURN(Computation * new_entry,
                        partitioner.PartitionComputation(*entry, param_shardings, root_sharding));
  module.set_entry_computation(new_entry);

  // Drop the original computations that were replaced (callers before callees); scalar computations the new
  // program still calls stay.
  std::vector<const Computation*> replaced = partitioner.replaced_computations();
  replaced.push_back(entry);
  for (bool progress = true; progress;) {
    progress = false;
    for (Computation* comp : module.MakeComputationList()) {
      if (std::find(replaced.begin(), replaced.end(), comp) == replaced.end()) continue;
      if (module.RemoveComputation(comp).ok()) progress = true;
    }
  }
  for (const auto& [comp, name] : partitioner.kept_computation_names()) {
    if (module.FindComputation(name) == nullptr) comp->set_name(name);
  }
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) inst->set_sharding(std::nullopt);
  }
  for (const auto& [inst, name] : partitioner.kept_names()) inst->set_name(name);
  for (size_t i = 0; i < partitioner.collectives().size(); ++i) {
    report->collectives[i].name = partitioner.collectives()[i]->name();
  }

  // Masks and tables that turned out not to be needed leave dead constants behind.
  XLAC_RETURN_IF_ERROR(RunDce(module).status());
  report->parameter_shardings = param_shardings;
  report->result_sharding = partitioner.entry_root_sharding().value_or(root_sharding);
  ModuleConfig& config = module.mutable_config();
  if (config.entry_computation_layout.has_value()) {
    ComputationLayout layout;
    for (Instruction* p : new_entry->parameters()) layout.parameters.push_back(p->shape());
    layout.result = new_entry->root()->shape();
    for (Shape& s : layout.parameters) s.EnsureLayout();
    layout.result.EnsureLayout();
    config.entry_computation_layout = layout;
  }
  config.num_partitions = num_partitions;
  return true;
}

std::string FormatSpmdReport(const SpmdReport& report) {
  std::string out = absl::StrCat("spmd: ", report.num_partitions, " partitions, ", report.collectives.size(),
                                 " collective", report.collectives.size() == 1 ? "" : "s", " inserted\n");
  int64_t total = 0;
  for (const SpmdReport::Collective& c : report.collectives) {
    absl::StrAppend(&out, "  ", c.opcode, " %", c.name, " for %", c.source, ": group of ", c.group_size, ", ",
                    c.bytes_per_core, " bytes per core\n");
    total += c.bytes_per_core;
  }
  absl::StrAppend(&out, "  total: ", total, " bytes sent per core per step\n");
  for (const std::string& n : report.notes) absl::StrAppend(&out, "note: ", n, "\n");
  for (const std::string& w : report.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

absl::StatusOr<int64_t> ParseWindowedEinsumThresholdMib(std::string_view text) {
  const std::string value(text);
  char* end = nullptr;
  const double mib = value.empty() ? -1 : std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !(mib >= 0) || mib > 1e9) {
    return absl::InvalidArgumentError("invalid value '" + value +
                                      "' for --spmd-windowed-einsum-threshold-mib (expected MiB >= 0, 0: off)");
  }
  if (mib == 0) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(mib * 1024 * 1024)));
}

absl::StatusOr<bool> RunSpmdPartitioner(Module& module) { return RunSpmdPartitioner(module, SpmdOptions{}, nullptr); }

}  // namespace xlac
