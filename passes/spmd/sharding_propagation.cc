// Sharding propagation: the driver. It gives every value of the entry computation and of the computations reached
// through while/conditional/call/fusion a node of leaf shardings (values that must agree — a loop's state across the
// while, its body and condition, a conditional's result and its branch roots — share one node), seeds the nodes with
// the annotations, and sweeps forward and backward over all instructions until nothing improves. The per-op rules and
// the order on shardings are in sharding_propagation_ops.cc.
#include "passes/spmd/sharding_propagation.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/status_macros.h"
#include "passes/spmd/sharding_propagation_internal.h"

namespace xlac {
namespace {

using spmd::LeafShardings;
using spmd::Proposal;

// "line:col: " before messages about `inst`, the convention of the SPMD passes' user errors.
std::string Where(const Instruction& inst) {
  if (!inst.loc().known()) return "";
  return absl::StrCat(inst.loc().line, ":", inst.loc().col, ": ");
}

void CollectLeafShapes(const Shape& shape, std::vector<const Shape*>& out) {
  if (!shape.IsTuple()) {
    out.push_back(&shape);
    return;
  }
  for (const Shape& element : shape.tuple_shapes) CollectLeafShapes(element, out);
}

std::vector<const Shape*> LeafShapes(const Shape& shape) {
  std::vector<const Shape*> out;
  CollectLeafShapes(shape, out);
  return out;
}

// Calls and fusions pass operand k to parameter k and return their computation's root: shardings flow through the
// called computation as through the same ops inlined (the partitioner partitions a fusion's computation with them).
bool IsCallLike(const Instruction& inst) {
  return (inst.opcode() == Opcode::kCall || inst.opcode() == Opcode::kFusion) && inst.called_computations().size() == 1;
}

bool IsSharding(const Instruction& inst) {
  return inst.opcode() == Opcode::kCustomCall && inst.StringAttr("custom_call_target") == "Sharding";
}

// The dimensions a Sharding custom-call leaves to propagation: backend_config="unspecified_dims=[0,2]" as XLA
// writes it, or the same list in a frontend attribute "unspecified_dims".
absl::StatusOr<std::vector<int64_t>> UnspecifiedDims(const Instruction& inst) {
  constexpr std::string_view kKey = "unspecified_dims=";
  std::string text;
  const std::string& config = inst.backend_config();
  if (size_t pos = config.find(kKey); pos != std::string::npos) {
    text = config.substr(pos + kKey.size());
    if (size_t close = text.find(']'); close != std::string::npos) text.resize(close + 1);
  } else {
    for (const auto& [key, value] : inst.frontend_attributes()) {
      if (key == "unspecified_dims") text = value;
    }
  }
  std::vector<int64_t> dims;
  if (text.empty()) return dims;
  auto malformed = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(inst), "%", inst.name(), ": malformed unspecified_dims '", text, "'"));
  };
  std::string list = text;
  if (list.front() == '[') {
    if (list.back() != ']') return malformed();
    list = list.substr(1, list.size() - 2);
  }
  if (list.empty()) return dims;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(item, &d) || d < 0 || (inst.shape().IsArray() && d >= inst.shape().rank())) {
      return malformed();
    }
    dims.push_back(d);
  }
  return dims;
}

// Checks one leaf of an annotation against its shape. Shardings the partitioner does not support yet (manual or
// unreduced subgroups) are accepted: they stay where they are written and do not propagate.
absl::Status CheckLeafSharding(const Instruction& inst, const Sharding& sharding, const Shape& shape) {
  auto error = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(inst), "%", inst.name(), ": sharding ", spmd::ShardingToString(sharding), " ", why));
  };
  if (sharding.IsTuple()) return error("is a tuple sharding nested in a tuple sharding");
  if (!sharding.IsTiled()) return absl::OkStatus();
  if (!shape.IsArray()) return error(absl::StrCat("tiles a value of shape ", ShapeToString(shape, false)));
  if (sharding.NumDataTileDims() != shape.rank()) {
    return error(absl::StrCat("tiles ", sharding.NumDataTileDims(), " dimensions of a rank-", shape.rank(), " value"));
  }
  absl::StatusOr<spmd::Tiling> tiling = spmd::TilingOfAnyDevices(sharding);
  if (tiling.ok() || tiling.status().code() != absl::StatusCode::kInvalidArgument) return absl::OkStatus();
  // TilingOf's messages already name the sharding.
  const std::string message(tiling.status().message());
  if (message.starts_with("sharding ")) {
    return absl::InvalidArgumentError(absl::StrCat(Where(inst), "%", inst.name(), ": ", message));
  }
  return error(message);
}

// The annotation of `inst`, one sharding per leaf (a non-tuple sharding on a tuple applies to every leaf).
absl::StatusOr<LeafShardings> ExpandAnnotation(const Instruction& inst) {
  const Sharding& sharding = *inst.sharding();
  const std::vector<const Shape*> shapes = LeafShapes(inst.shape());
  LeafShardings leaves;
  if (sharding.IsTuple()) {
    if (!inst.shape().IsTuple()) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(inst), "%", inst.name(), ": tuple sharding on a value of shape ", ShapeToString(inst.shape(), false)));
    }
    if (sharding.tuple_elements.size() != shapes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(Where(inst), "%", inst.name(), ": tuple sharding has ",
                                                     sharding.tuple_elements.size(), " elements for ", shapes.size(),
                                                     " leaves"));
    }
    leaves.assign(sharding.tuple_elements.begin(), sharding.tuple_elements.end());
  } else {
    leaves.assign(shapes.size(), sharding);
  }
  for (size_t i = 0; i < shapes.size(); ++i) XLAC_RETURN_IF_ERROR(CheckLeafSharding(inst, *leaves[i], *shapes[i]));
  return leaves;
}

// Per leaf of `shape`, whether `flags` (empty: none; one flag for everything; or one per tuple element) allows it.
std::optional<std::vector<bool>> AllowedLeaves(const std::vector<bool>& flags, const Shape& shape) {
  const size_t leaves = static_cast<size_t>(spmd::LeafCount(shape));
  if (flags.empty()) return std::vector<bool>(leaves, false);
  if (flags.size() == 1) return std::vector<bool>(leaves, flags[0]);
  if (!shape.IsTuple() || flags.size() != shape.tuple_shapes.size()) return std::nullopt;
  std::vector<bool> allowed;
  for (size_t i = 0; i < flags.size(); ++i) {
    allowed.insert(allowed.end(), static_cast<size_t>(spmd::LeafCount(shape.tuple_shapes[i])), flags[i]);
  }
  return allowed;
}

// The order xla-opt prints a computation in (XLA's instruction post order: a depth-first walk from each instruction
// without users, in program order, control predecessors and operands first; program order in scheduled modules),
// so that the report reads alongside the printed module. Channel-id orderings of the printer are not mirrored.
std::vector<Instruction*> PrintOrder(const Computation& comp) {
  std::vector<Instruction*> order;
  if (comp.parent() != nullptr && comp.parent()->config().is_scheduled) {
    for (const auto& inst : comp.instructions()) order.push_back(inst.get());
    return order;
  }
  absl::flat_hash_map<Instruction*, uint8_t> state;  // 1: on the stack's path, 2: emitted
  std::vector<Instruction*> stack;
  auto push = [&](Instruction* inst) {
    if (inst->parent() == &comp && state[inst] != 2) stack.push_back(inst);
  };
  for (const auto& seed : comp.instructions()) {
    if (!seed->users().empty()) continue;
    push(seed.get());
    while (!stack.empty()) {
      Instruction* current = stack.back();
      if (state[current] == 0) {
        state[current] = 1;
        for (auto it = current->operands().rbegin(); it != current->operands().rend(); ++it) push(*it);
        for (Instruction* pred : current->control_predecessors()) push(pred);
        continue;
      }
      stack.pop_back();
      if (state[current] != 2) {
        state[current] = 2;
        order.push_back(current);
      }
    }
  }
  for (const auto& inst : comp.instructions()) {
    if (state[inst.get()] != 2) order.push_back(inst.get());
  }
  return order;
}

// The processed computations in the order xla-opt prints them: callees before callers, found in print order, a
// while's body before its condition (XLA's order of called computations).
void AppendInPrintOrder(Computation* comp, const absl::flat_hash_set<const Computation*>& processed,
                        absl::flat_hash_set<const Computation*>& seen, std::vector<Computation*>& out) {
  if (!seen.insert(comp).second) return;
  for (Instruction* inst : PrintOrder(*comp)) {
    std::vector<Computation*> callees = inst->called_computations();
    if (inst->opcode() == Opcode::kWhile && callees.size() == 2) std::swap(callees[0], callees[1]);
    for (Computation* callee : callees) {
      if (processed.contains(callee)) AppendInPrintOrder(callee, processed, seen, out);
    }
  }
  out.push_back(comp);
}

// Flags whose count fits neither the parameters nor the result's elements (XLA's own tests have such modules,
// which never reach propagation there): unambiguous only when they all agree; otherwise nothing is opened.
std::vector<bool> UnmatchedFlags(const std::vector<bool>& flags, size_t leaves) {
  const bool all = !flags.empty() && std::all_of(flags.begin(), flags.end(), [](bool b) { return b; });
  return std::vector<bool>(leaves, all);
}

struct Node {
  LeafShardings values;
  std::vector<bool> fixed;       // annotated, or an entry parameter/result leaf the config keeps as written
  std::vector<bool> merge_only;  // a Sharding annotation with unspecified dims: only refinements of it
  std::vector<ShardingOrigin> origins;
  std::vector<int64_t> ranks;  // per leaf; -1 for tokens and other non-arrays
  // The annotation fixing every leaf, kept verbatim so that all instructions sharing the node print it exactly as
  // written (the verifier compares a loop's shardings including their metadata).
  std::optional<Sharding> annotation;
  std::string annotated_by;
};

class Propagator {
 public:
  explicit Propagator(Module& module) : module_(module) {}
  absl::StatusOr<bool> Run(ShardingPropagationReport* report);

 private:
  void CollectComputations();
  void UnshareFusedComputations();
  bool AnySharding() const;
  void ComputeEntryAllowance();
  bool GiveEntryLoopRootACopy();
  void BuildNodes();
  absl::Status Seed();
  absl::Status Iterate();
  bool Finalize(ShardingPropagationReport* report);

  bool Forward(Instruction* inst);
  bool Backward(Instruction* inst);
  bool Apply(const Instruction& target, const std::vector<Proposal>& proposals, ShardingOrigin::Kind kind,
             const Instruction& source);
  std::vector<Proposal> CopyAll(const Instruction& from, const Instruction& to);

  bool Tracked(const Instruction* inst) const { return node_of_.contains(inst); }
  Node& NodeOf(const Instruction* inst) { return nodes_[node_of_.at(inst)]; }
  const std::vector<bool>* EntryAllowance(const Instruction& inst) const;

  Module& module_;
  Computation* entry_ = nullptr;
  std::vector<Computation*> computations_;  // the processed ones, callers before callees
  absl::flat_hash_set<const Computation*> processed_;
  // Fusions whose fused computation is also called elsewhere (XLA's dumps share identical ones).
  std::vector<Instruction*> shared_fusions_;
  // Callers of computations called by call and conditional, by unique id.
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> call_sites_;
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> post_orders_;
  absl::flat_hash_map<const Instruction*, std::vector<Instruction*>> users_;  // tracked users, by unique id
  absl::flat_hash_map<const Instruction*, size_t> node_of_;
  std::vector<Node> nodes_;
  std::vector<std::vector<bool>> parameter_allowed_;  // per entry parameter, per leaf
  std::vector<bool> root_allowed_;
};

absl::StatusOr<bool> Propagator::Run(ShardingPropagationReport* report) {
  entry_ = module_.entry_computation();
  if (entry_ == nullptr || entry_->root() == nullptr) return false;
  CollectComputations();
  if (!AnySharding()) return false;
  bool changed = false;
  while (!shared_fusions_.empty()) {
    UnshareFusedComputations();
    changed = true;
    processed_.clear();
    call_sites_.clear();
    computations_.clear();
    CollectComputations();
  }
  ComputeEntryAllowance();
  changed |= GiveEntryLoopRootACopy();
  BuildNodes();
  XLAC_RETURN_IF_ERROR(Seed());
  XLAC_RETURN_IF_ERROR(Iterate());
  changed |= Finalize(report);
  return changed;
}

void Propagator::CollectComputations() {
  processed_.insert(entry_);
  std::vector<Computation*> worklist = {entry_};
  while (!worklist.empty()) {
    Computation* comp = worklist.back();
    worklist.pop_back();
    for (const auto& inst : comp->instructions()) {
      const Opcode op = inst->opcode();
      if (op != Opcode::kWhile && op != Opcode::kConditional && !IsCallLike(*inst)) continue;
      for (Computation* callee : inst->called_computations()) {
        if (op == Opcode::kFusion && processed_.contains(callee)) shared_fusions_.push_back(inst.get());
        if (op != Opcode::kWhile) call_sites_[callee].push_back(inst.get());
        if (processed_.insert(callee).second) worklist.push_back(callee);
      }
    }
  }
  for (auto& [comp, sites] : call_sites_) {
    std::sort(sites.begin(), sites.end(),
              [](const Instruction* a, const Instruction* b) { return a->unique_id() < b->unique_id(); });
    sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
  }
  std::vector<Computation*> post_order = module_.MakeComputationPostOrder();
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    if (processed_.contains(*it)) computations_.push_back(*it);
  }
}

// Every fusion gets a fused computation of its own: the ops in it take shardings from that one fusion's operands
// and users, as they would unfused, and the partitioner partitions each fusion with them.
void Propagator::UnshareFusedComputations() {
  for (Instruction* fusion : shared_fusions_) {
    const Computation* shared = fusion->called_computation(0);
    std::unique_ptr<Computation> own = shared->Clone(module_.UniqueComputationName(shared->name()));
    for (const auto& inst : own->instructions()) inst->set_name(module_.UniqueInstructionName(inst->name()));
    fusion->set_called_computations({module_.AddComputation(std::move(own))});
  }
  shared_fusions_.clear();
}

bool Propagator::AnySharding() const {
  for (const Computation* comp : computations_) {
    for (const auto& inst : comp->instructions()) {
      if (inst->sharding()) return true;
    }
  }
  return false;
}

void Propagator::ComputeEntryAllowance() {
  const ModuleConfig& config = module_.config();
  const std::vector<bool>& flags = config.allow_spmd_sharding_propagation_to_parameters;
  const int64_t num_parameters = entry_->parameter_count();
  for (int64_t i = 0; i < num_parameters; ++i) {
    const Shape& shape = entry_->parameter(i)->shape();
    const size_t leaves = static_cast<size_t>(spmd::LeafCount(shape));
    std::optional<std::vector<bool>> allowed;
    if (flags.size() > 1 && static_cast<int64_t>(flags.size()) == num_parameters) {
      allowed = std::vector<bool>(leaves, flags[i]);
    } else if (flags.size() <= 1 || num_parameters == 1) {
      // One flag for everything, or XLA's form for a single tuple parameter: one flag per tuple element.
      allowed = AllowedLeaves(flags, shape);
    }
    parameter_allowed_.push_back(allowed ? *std::move(allowed) : UnmatchedFlags(flags, leaves));
  }
  const Shape& result = entry_->root()->shape();
  std::optional<std::vector<bool>> root = AllowedLeaves(config.allow_spmd_sharding_propagation_to_output, result);
  root_allowed_ = root ? *std::move(root)
                       : UnmatchedFlags(config.allow_spmd_sharding_propagation_to_output,
                                        static_cast<size_t>(spmd::LeafCount(result)));
}

// An entry result the config keeps would pin the state of a loop (or the result of a conditional) it shares a
// node with; as XLA does, a copy takes over the result so that the loop itself stays free.
bool Propagator::GiveEntryLoopRootACopy() {
  Instruction* root = entry_->root();
  if (root->opcode() != Opcode::kWhile && root->opcode() != Opcode::kConditional) return false;
  if (root->sharding() || std::all_of(root_allowed_.begin(), root_allowed_.end(), [](bool b) { return b; })) {
    return false;
  }
  Instruction* copy = entry_->AddInstruction(
      Instruction::Create(Opcode::kCopy, module_.UniqueInstructionName("copy"), root->shape(), {root}));
  copy->set_loc(root->loc());
  entry_->set_root(copy);
  return true;
}

void Propagator::BuildNodes() {
  for (Computation* comp : computations_) {
    post_orders_[comp] = comp->MakePostOrder();
    for (const auto& inst : comp->instructions()) {
      Node node;
      // A bare token (after-all, outfeed, ...) gets no leaves: nothing propagates through it, and an outfeed's
      // sharding describes its operand rather than its token. An empty tuple has none either (XLA's flat tuple
      // shardings count no leaf for it).
      if (inst->shape().IsArray() || inst->shape().IsTuple()) {
        for (const Shape* leaf : LeafShapes(inst->shape())) node.ranks.push_back(leaf->IsArray() ? leaf->rank() : -1);
      }
      const size_t n = node.ranks.size();
      node.values.resize(n);
      node.fixed.resize(n, false);
      node.merge_only.resize(n, false);
      node.origins.resize(n);
      node_of_[inst.get()] = nodes_.size();
      nodes_.push_back(std::move(node));
    }
  }
  for (Computation* comp : computations_) {
    for (const auto& inst : comp->instructions()) {
      std::vector<Instruction*>& users = users_[inst.get()];
      for (Instruction* user : inst->users()) {
        if (Tracked(user)) users.push_back(user);
      }
      std::sort(users.begin(), users.end(),
                [](const Instruction* a, const Instruction* b) { return a->unique_id() < b->unique_id(); });
    }
  }
  // Union the values that must agree; members keep pointing at their root node.
  std::vector<size_t> parent(nodes_.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](const Instruction* a, const Instruction* b) {
    if (b == nullptr || !Tracked(b) || spmd::LeafCount(a->shape()) != spmd::LeafCount(b->shape())) return;
    size_t ra = find(node_of_[a]);
    size_t rb = find(node_of_[b]);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  };
  for (Computation* comp : computations_) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kWhile && inst->called_computations().size() == 2) {
        const Computation* cond = inst->called_computation(0);
        const Computation* body = inst->called_computation(1);
        unite(inst.get(), body->root());
        if (body->parameter_count() == 1) unite(inst.get(), body->parameter(0));
        if (cond->parameter_count() == 1) unite(inst.get(), cond->parameter(0));
      } else if (inst->opcode() == Opcode::kConditional) {
        for (const Computation* branch : inst->called_computations()) unite(inst.get(), branch->root());
      }
    }
  }
  for (auto& [inst, index] : node_of_) index = find(index);
}

const std::vector<bool>* Propagator::EntryAllowance(const Instruction& inst) const {
  if (inst.parent() != entry_) return nullptr;
  if (&inst == entry_->root()) return &root_allowed_;
  if (inst.opcode() == Opcode::kParameter &&
      inst.parameter_number() < static_cast<int64_t>(parameter_allowed_.size())) {
    return &parameter_allowed_[inst.parameter_number()];
  }
  return nullptr;
}

absl::Status Propagator::Seed() {
  // Annotations first, so that an unspecified-dims annotation sharing a node with a full one yields to it.
  std::vector<std::pair<Instruction*, LeafShardings>> partial;
  for (Computation* comp : computations_) {
    for (const auto& owned : comp->instructions()) {
      Instruction* inst = owned.get();
      Node& node = NodeOf(inst);
      if (node.values.empty()) continue;
      const bool annotated = inst->sharding() && inst->sharding()->kind != Sharding::Kind::kUnknown;
      if (!annotated) {
        // An entry parameter or result the config keeps stays as written: unannotated, then replicated. XLA lets
        // propagation choose an {unknown} one regardless.
        const std::vector<bool>* allowed = EntryAllowance(*inst);
        if (allowed != nullptr && !inst->sharding()) {
          for (size_t i = 0; i < node.fixed.size() && i < allowed->size(); ++i) {
            node.fixed[i] = node.fixed[i] || !(*allowed)[i];
          }
        }
        continue;
      }
      XLAC_ASSIGN_OR_RETURN(LeafShardings leaves, ExpandAnnotation(*inst));
      if (IsSharding(*inst) && inst->shape().IsArray() && leaves[0]->IsTiled()) {
        XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> unspecified, UnspecifiedDims(*inst));
        if (!unspecified.empty() && spmd::TilingOfTiled(*leaves[0])) {
          partial.emplace_back(inst, LeafShardings{spmd::ReplicateDims(*leaves[0], inst->shape().rank(), unspecified)});
          continue;
        }
      }
      if (node.annotation) {
        if (!(*node.annotation == *inst->sharding())) {
          return absl::InvalidArgumentError(
              absl::StrCat(Where(*inst), "%", inst->name(), " and %", node.annotated_by,
                           " carry the same loop or conditional value but are annotated with different shardings"));
        }
        continue;
      }
      node.annotation = *inst->sharding();
      node.annotated_by = inst->name();
      for (size_t i = 0; i < leaves.size(); ++i) {
        node.values[i] = *std::move(leaves[i]);
        node.fixed[i] = true;
        node.origins[i] = {ShardingOrigin::Kind::kAnnotated, "", inst->name()};
      }
    }
  }
  for (auto& [inst, leaves] : partial) {
    Node& node = NodeOf(inst);
    if (node.fixed[0] || node.values[0]) continue;
    node.values[0] = *std::move(leaves[0]);
    node.merge_only[0] = true;
    node.origins[0] = {ShardingOrigin::Kind::kAnnotated, "", inst->name()};
  }
  return absl::OkStatus();
}

absl::Status Propagator::Iterate() {
  // Every change strictly refines a leaf (replicated, maximal, then more and more tiles), so this terminates; the
  // bound only turns a bug into an error instead of a hang.
  int64_t leaves = 0;
  for (const Node& node : nodes_) leaves += static_cast<int64_t>(node.values.size());
  int64_t sweeps_left = 2 + 70 * leaves;
  bool changed = true;
  while (changed) {
    if (sweeps_left-- == 0) return absl::InternalError("sharding propagation did not reach a fixed point");
    changed = false;
    for (Computation* comp : computations_) {
      for (Instruction* inst : post_orders_[comp]) changed |= Forward(inst);
    }
    for (Computation* comp : computations_) {
      const std::vector<Instruction*>& order = post_orders_[comp];
      for (auto it = order.rbegin(); it != order.rend(); ++it) changed |= Backward(*it);
    }
  }
  return absl::OkStatus();
}

bool AllFixed(const Node& node) {
  return std::all_of(node.fixed.begin(), node.fixed.end(), [](bool b) { return b; });
}

std::vector<Proposal> Propagator::CopyAll(const Instruction& from, const Instruction& to) {
  std::vector<Proposal> out;
  if (spmd::LeafCount(from.shape()) != spmd::LeafCount(to.shape())) return out;
  const LeafShardings& values = NodeOf(&from).values;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) continue;
    if (std::optional<Sharding> s = spmd::Canonical(*values[i])) out.push_back({static_cast<int64_t>(i), *s});
  }
  return out;
}

namespace {

bool AllLeavesManual(const LeafShardings& leaves) {
  return !leaves.empty() && std::all_of(leaves.begin(), leaves.end(), [](const std::optional<Sharding>& s) {
    return s.has_value() && s->kind == Sharding::Kind::kManual;
  });
}

// Ops the rules do not model: collectives other than all-reduce / collective-permute (which are elementwise) and
// custom calls other than the sharding annotations.
bool IsUnmodeled(const Instruction& inst) {
  if (inst.opcode() == Opcode::kCustomCall) {
    std::string_view target = inst.StringAttr("custom_call_target");
    return !IsShardingIdentityTarget(target) && !IsShardMapBoundaryTarget(target);
  }
  if (inst.opcode() == Opcode::kAllReduce || inst.opcode() == Opcode::kCollectivePermute) return false;
  return inst.FindAttr("replica_groups") != nullptr || inst.FindAttr("source_target_pairs") != nullptr;
}

}  // namespace

bool Propagator::Forward(Instruction* inst) {
  if (AllFixed(NodeOf(inst))) return false;
  bool changed = false;
  if (IsUnmodeled(*inst) && inst->operand_count() > 0 &&
      std::all_of(inst->operands().begin(), inst->operands().end(), [&](const Instruction* operand) {
        return Tracked(operand) && AllLeavesManual(NodeOf(operand).values);
      })) {
    // Inside a shard_map body (a collective, an exporter's own custom call), an op on manual values is manual.
    std::vector<Proposal> manual;
    for (int64_t i = 0; i < spmd::LeafCount(inst->shape()); ++i) manual.push_back({i, Sharding::Manual()});
    changed |= Apply(*inst, manual, ShardingOrigin::Kind::kOperand, *inst->operand(0));
  }
  for (int64_t k : spmd::OperandPriority(*inst)) {
    const Instruction* operand = inst->operand(k);
    if (!Tracked(operand)) continue;
    changed |= Apply(*inst, spmd::InferFromOperand(*inst, k, NodeOf(operand).values), ShardingOrigin::Kind::kOperand,
                     *operand);
  }
  if (inst->opcode() == Opcode::kParameter) {
    auto sites = call_sites_.find(inst->parent());
    if (sites != call_sites_.end()) {
      for (const Instruction* site : sites->second) {
        for (int64_t k = 0; k < site->operand_count(); ++k) {
          // A call passes operand k to parameter k; a conditional passes operand b+1 to branch b's parameter.
          const bool feeds = IsCallLike(*site)
                                 ? k == inst->parameter_number()
                                 : k >= 1 && k - 1 < static_cast<int64_t>(site->called_computations().size()) &&
                                       site->called_computation(k - 1) == inst->parent();
          if (feeds)
            changed |=
                Apply(*inst, CopyAll(*site->operand(k), *inst), ShardingOrigin::Kind::kOperand, *site->operand(k));
        }
      }
    }
  }
  if (IsCallLike(*inst)) {
    const Instruction* root = inst->called_computation(0)->root();
    changed |= Apply(*inst, CopyAll(*root, *inst), ShardingOrigin::Kind::kOperand, *root);
  }
  return changed;
}

bool Propagator::Backward(Instruction* inst) {
  if (AllFixed(NodeOf(inst))) return false;
  bool changed = false;
  for (const Instruction* user : users_[inst]) {
    for (int64_t k = 0; k < user->operand_count(); ++k) {
      if (user->operand(k) != inst) continue;
      const Instruction* parameter = nullptr;
      if (IsCallLike(*user)) {
        const Computation* callee = user->called_computation(0);
        if (k < callee->parameter_count()) parameter = callee->parameter(k);
      } else if (user->opcode() == Opcode::kConditional) {
        if (k >= 1 && k - 1 < static_cast<int64_t>(user->called_computations().size()) &&
            user->called_computation(k - 1)->parameter_count() == 1) {
          parameter = user->called_computation(k - 1)->parameter(0);
        }
      } else {
        changed |=
            Apply(*inst, spmd::InferOperandFromUser(*user, k, NodeOf(user).values), ShardingOrigin::Kind::kUser, *user);
        continue;
      }
      if (parameter != nullptr) changed |= Apply(*inst, CopyAll(*parameter, *inst), ShardingOrigin::Kind::kUser, *user);
    }
  }
  if (inst == inst->parent()->root()) {
    auto sites = call_sites_.find(inst->parent());
    if (sites != call_sites_.end()) {
      for (const Instruction* site : sites->second) {
        // Conditional results share the branch roots' node already.
        if (IsCallLike(*site)) {
          changed |= Apply(*inst, CopyAll(*site, *inst), ShardingOrigin::Kind::kUser, *site);
        }
      }
    }
  }
  return changed;
}

bool Propagator::Apply(const Instruction& target, const std::vector<Proposal>& proposals, ShardingOrigin::Kind kind,
                       const Instruction& source) {
  Node& node = NodeOf(&target);
  bool changed = false;
  for (const Proposal& p : proposals) {
    if (p.leaf < 0 || static_cast<size_t>(p.leaf) >= node.values.size() || node.fixed[p.leaf]) continue;
    const int64_t rank = node.ranks[p.leaf];
    if (p.sharding.IsTiled() && (rank < 0 || p.sharding.NumDataTileDims() != rank)) continue;
    std::optional<Sharding>& current = node.values[p.leaf];
    std::optional<Sharding> next;
    if (!current) {
      next = p.sharding;
    } else if (std::optional<Sharding> merged = spmd::MergeRefinement(*current, p.sharding)) {
      next = std::move(merged);
    } else if (!node.merge_only[p.leaf] && spmd::IsMoreSpecific(p.sharding, *current)) {
      next = p.sharding;
    }
    if (!next) continue;
    current = std::move(next);
    node.origins[p.leaf] = {kind, source.name(), target.name()};
    changed = true;
  }
  return changed;
}

bool Propagator::Finalize(ShardingPropagationReport* report) {
  // XLA replicates an inferred entry parameter or result sharding that does not divide the value evenly.
  for (Instruction* inst : entry_->parameters()) {
    if (inst == nullptr) continue;
    Node& node = NodeOf(inst);
    const std::vector<bool>* allowed = EntryAllowance(*inst);
    const std::vector<const Shape*> shapes = LeafShapes(inst->shape());
    for (size_t i = 0; i < node.values.size(); ++i) {
      if (allowed == nullptr || i >= allowed->size() || !(*allowed)[i] || node.fixed[i] || !node.values[i]) continue;
      if (!spmd::EvenlyPartitions(*shapes[i], *node.values[i])) {
        node.values[i] = Sharding::Replicated();
        node.origins[i] = {};
      }
    }
  }
  {
    Instruction* root = entry_->root();
    Node& node = NodeOf(root);
    const std::vector<const Shape*> shapes = LeafShapes(root->shape());
    for (size_t i = 0; i < node.values.size() && i < root_allowed_.size(); ++i) {
      if (!root_allowed_[i] || node.fixed[i] || !node.values[i]) continue;
      if (!spmd::EvenlyPartitions(*shapes[i], *node.values[i])) {
        node.values[i] = Sharding::Replicated();
        node.origins[i] = {};
      }
    }
  }

  bool changed = false;
  std::vector<Computation*> print_order;
  absl::flat_hash_set<const Computation*> seen;
  AppendInPrintOrder(entry_, processed_, seen, print_order);
  for (const Computation* comp : print_order) {
    for (Instruction* inst : PrintOrder(*comp)) {
      const Node& node = NodeOf(inst);
      if (node.values.empty()) continue;
      Sharding sharding;
      if (node.annotation && AllFixed(node)) {
        sharding = *node.annotation;
      } else {
        std::vector<Sharding> leaves;
        for (const std::optional<Sharding>& value : node.values)
          leaves.push_back(value ? *value : Sharding::Replicated());
        sharding = inst->shape().IsTuple() ? Sharding::Tuple(std::move(leaves)) : std::move(leaves[0]);
      }
      if (!inst->sharding() || !(*inst->sharding() == sharding)) {
        inst->set_sharding(sharding);
        changed = true;
      }
      if (report == nullptr) continue;
      ShardingExplanation& e = report->entries.emplace_back();
      e.computation = comp->name();
      e.instruction = inst->name();
      e.sharding = std::move(sharding);
      for (size_t i = 0; i < node.values.size(); ++i) {
        ShardingOrigin origin = node.values[i] ? node.origins[i] : ShardingOrigin{};
        if (origin.via == inst->name()) origin.via.clear();
        e.origins.push_back(std::move(origin));
      }
    }
  }
  return changed;
}

}  // namespace

std::string ShardingOrigin::ToString() const {
  std::string out;
  switch (kind) {
    case Kind::kAnnotated:
      out = "user";
      break;
    case Kind::kOperand:
      out = absl::StrCat("operand %", source);
      break;
    case Kind::kUser:
      out = absl::StrCat("user %", source);
      break;
    case Kind::kDefault:
      out = "default replicated";
      break;
  }
  if (!via.empty()) absl::StrAppend(&out, " (via %", via, ")");
  return out;
}

std::string ShardingPropagationReport::ToString() const {
  std::string out;
  for (const ShardingExplanation& e : entries) {
    std::string origin = e.origins.empty() ? ShardingOrigin{}.ToString() : e.origins[0].ToString();
    const bool uniform =
        std::all_of(e.origins.begin(), e.origins.end(), [&](const ShardingOrigin& o) { return o == e.origins[0]; });
    if (!uniform) {
      std::vector<std::string> parts;
      for (const ShardingOrigin& o : e.origins) parts.push_back(o.ToString());
      origin = absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    absl::StrAppend(&out, "%", e.instruction, ": ", spmd::ShardingToString(e.sharding), " <- ", origin, "\n");
  }
  return out;
}

absl::StatusOr<bool> RunShardingPropagation(Module& module, ShardingPropagationReport* report) {
  if (report != nullptr) report->entries.clear();
  return Propagator(module).Run(report);
}

absl::StatusOr<bool> RunShardingPropagation(Module& module) { return RunShardingPropagation(module, nullptr); }

}  // namespace xlac
