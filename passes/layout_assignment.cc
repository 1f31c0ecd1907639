#include "passes/layout_assignment.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/attributes.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"
#include "passes/layout_copies.h"
#include "passes/layout_fusion.h"
#include "passes/layout_order.h"

namespace xlac {
namespace {

using Order = DimOrder;

bool IsFollower(Opcode op) {
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kReducePrecision:
    case Opcode::kCopy:
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
      return true;
    default:
      return IsElementwiseUnary(op) || IsElementwiseBinary(op);
  }
}

bool IsFreeOpcode(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kTranspose:
    case Opcode::kReshape:
    case Opcode::kReduce:
    case Opcode::kDot:
    case Opcode::kConvolution:
      return true;
    default:
      return IsFollower(op);
  }
}

std::vector<Instruction*> DistinctUsers(const Instruction* inst) {
  std::vector<Instruction*> users;
  for (Instruction* user : inst->users()) {
    if (std::find(users.begin(), users.end(), user) == users.end()) users.push_back(user);
  }
  return users;
}

bool IsBroadcastLike(const Instruction& inst) {
  return inst.opcode() == Opcode::kBroadcast || inst.opcode() == Opcode::kIota || inst.opcode() == Opcode::kConstant;
}

class Assigner {
 public:
  Assigner(Module& module, Computation& comp, const absl::flat_hash_set<const Computation*>& called_once)
      : module_(module), comp_(comp), called_once_(called_once) {}

  absl::StatusOr<bool> Run() {
    std::vector<Instruction*> post_order = comp_.MakePostOrder();
    for (Instruction* inst : post_order) {
      original_.emplace(inst, inst->shape());
      if (IsFree(*inst)) free_.insert(inst);
    }
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      SinkIntoProducer(*it);
      SinkIntoProducersOfFusion(*it);
    }
    for (Instruction* inst : post_order) {
      if (free_.contains(inst) && !pinned_.contains(inst)) Choose(inst);
      ChooseFusedConvolution(inst);
    }
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) FollowConsumer(*it);
    for (Instruction* inst : post_order) StreamConvolutionOperands(inst);
    for (Instruction* inst : post_order) XLAC_RETURN_IF_ERROR(MakeBitcast(inst));
    CopyForConstrainedReaders();
    for (Instruction* inst : comp_.MakeInstructionList()) {
      if (inst->opcode() == Opcode::kFusion) changed_ |= SetFusionParameterLayouts(*inst, called_once_);
    }
    return changed_;
  }

 private:
  // Ops whose kernels read their operands in any layout (and so need no copy when an operand's layout changes),
  // and whose own layout is the pass's to choose unless it is the computation's result.
  static bool ReadsAnyLayout(const Instruction& inst) {
    if (!IsFreeOpcode(inst.opcode()) || !IsPlainArray(inst.shape())) return false;
    if (inst.opcode() == Opcode::kReduce && inst.operand_count() != 2) return false;
    for (const Instruction* operand : inst.operands()) {
      if (!IsPlainArray(operand->shape())) return false;
    }
    return true;
  }

  // Whether `user` reads `value` (one of its operands) in whatever layout it has: a free op, or a fusion whose
  // parameters for it take its layout (passes/layout_fusion.h).
  bool ReadsInAnyLayout(const Instruction& user, const Instruction* value) const {
    if (user.opcode() != Opcode::kFusion) return ReadsAnyLayout(user);
    for (int64_t i = 0; i < user.operand_count(); ++i) {
      if (user.operand(i) == value && !FusionReadsAnyLayout(user, i, called_once_)) return false;
    }
    return true;
  }

  bool IsFree(const Instruction& inst) const {
    if (!ReadsAnyLayout(inst) || &inst == comp_.root() || inst.HasSideEffect()) return false;
    return inst.control_predecessors().empty() && inst.control_successors().empty();
  }

  bool Changed(const Instruction* inst) const {
    auto it = original_.find(inst);
    return it != original_.end() && OrderOf(it->second) != OrderOf(inst->shape());
  }

  void SetOrder(Instruction* inst, const Order& order) {
    if (OrderOf(inst->shape()) == order) return;
    Shape shape = inst->shape();
    if (!shape.layout) shape.layout = Layout::Default(shape.rank());
    shape.layout->minor_to_major = order;
    inst->set_shape(std::move(shape));
    changed_ = true;
  }

  // A transpose whose operand is computed for it alone: the producer writes the transposed layout directly.
  void SinkIntoProducer(Instruction* transpose) {
    if (transpose->opcode() != Opcode::kTranspose || !IsPlainArray(transpose->shape())) return;
    Instruction* producer = transpose->operand(0);
    if (!free_.contains(producer) || pinned_.contains(producer)) return;
    if (DistinctUsers(producer) != std::vector<Instruction*>{transpose}) return;
    const Opcode op = producer->opcode();
    if (!(op == Opcode::kDot || op == Opcode::kBroadcast || op == Opcode::kIota ||
          (IsFollower(op) && op != Opcode::kCopy))) {
      return;
    }
    Order order = TransposeOperandOrder(transpose->dimensions(), OrderOf(transpose->shape()));
    if (op == Opcode::kDot && !GemmWritesContiguously(*producer, order)) return;
    SetOrder(producer, order);
    pinned_.insert(producer);
    pinned_.insert(transpose);
  }

  // A producer computed for one fusion alone, which reads it only through transposes: the producer writes the
  // layout those transposes read contiguously (in the fusion, a transpose reads its operand in place).
  void SinkIntoProducersOfFusion(Instruction* fusion) {
    if (fusion->opcode() != Opcode::kFusion) return;
    std::vector<Instruction*> producers;
    for (Instruction* operand : fusion->operands()) {
      if (std::find(producers.begin(), producers.end(), operand) == producers.end()) producers.push_back(operand);
    }
    for (Instruction* producer : producers) {
      if (!free_.contains(producer) || pinned_.contains(producer)) continue;
      if (DistinctUsers(producer) != std::vector<Instruction*>{fusion}) continue;
      const Opcode op = producer->opcode();
      if (!(op == Opcode::kDot || op == Opcode::kBroadcast || op == Opcode::kIota ||
            (IsFollower(op) && op != Opcode::kCopy))) {
        continue;
      }
      std::optional<Order> order = FusedTransposeReadOrder(*fusion, producer, called_once_);
      if (!order || (op == Opcode::kDot && !GemmWritesContiguously(*producer, *order))) continue;
      SetOrder(producer, *order);
      pinned_.insert(producer);
    }
  }

  // The GEMM stores rows of C contiguously: the most minor dimension must be one of the dot's free (m or n)
  // dimensions, not a batch dimension.
  static bool GemmWritesContiguously(const Instruction& dot, const Order& order) {
    Order minor = WithoutUnitDims(dot.shape(), order);
    const int64_t batch = static_cast<int64_t>(dot.IntListAttr("lhs_batch_dims").size());
    return !minor.empty() && minor.front() >= batch;
  }

  void Choose(Instruction* inst) {
    const Opcode op = inst->opcode();
    // A value read only by constrained instructions keeps its layout: following a changed operand would only move
    // the copy from here to its readers.
    std::vector<Instruction*> users = DistinctUsers(inst);
    if (std::none_of(users.begin(), users.end(), [&](const Instruction* u) { return ReadsInAnyLayout(*u, inst); })) {
      return;
    }
    if (IsFollower(op)) {
      for (const Instruction* operand : inst->operands()) {
        if (operand->shape().rank() != inst->shape().rank() || IsBroadcastLike(*operand) || !Changed(operand)) {
          continue;
        }
        SetOrder(inst, OrderOf(operand->shape()));
        return;
      }
    } else if (op == Opcode::kReduce) {
      const Instruction* operand = inst->operand(0);
      if (!Changed(operand)) return;
      const std::vector<int64_t>& reduced = inst->dimensions();
      Order order;
      for (int64_t d : OrderOf(operand->shape())) {
        if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
        order.push_back(d - std::count_if(reduced.begin(), reduced.end(), [&](int64_t r) { return r < d; }));
      }
      SetOrder(inst, order);
    } else if (op == Opcode::kReshape) {
      const Instruction* operand = inst->operand(0);
      if (!Changed(operand)) return;
      if (std::optional<Order> order =
              ReshapeBitcastOrder(operand->shape(), OrderOf(operand->shape()), inst->shape())) {
        SetOrder(inst, *order);
      }
    } else if (op == Opcode::kTranspose) {
      bool only_dots = !users.empty() && std::all_of(users.begin(), users.end(), [&](const Instruction* user) {
        return user->opcode() == Opcode::kDot && free_.contains(user);
      });
      if (only_dots) SetOrder(inst, TransposeResultOrder(inst->dimensions(), OrderOf(inst->operand(0)->shape())));
    } else if (op == Opcode::kConvolution) {
      ChooseConvolution(inst);
    }
  }

  void ChooseConvolution(Instruction* conv) {
    if (std::optional<Order> order = ConvolutionOrder(*conv)) SetOrder(conv, *order);
  }

  // The same for an output fusion's convolution: the fusion, its root and the epilogue between take the order.
  void ChooseFusedConvolution(Instruction* fusion) {
    if (fusion->opcode() != Opcode::kFusion || fusion == comp_.root() || fusion->HasSideEffect()) return;
    Instruction* conv = FusedConvolutionReadingParameters(*fusion, called_once_);
    if (conv == nullptr || !IsPlainArray(fusion->shape())) return;
    std::vector<Instruction*> users = DistinctUsers(fusion);
    if (std::none_of(users.begin(), users.end(), [&](const Instruction* u) { return ReadsInAnyLayout(*u, fusion); })) {
      return;
    }
    std::optional<Order> order = ConvolutionOrder(*conv);
    if (order && RelayoutOutputFusion(*fusion, *order)) changed_ = true;
  }

  // The order a convolution should write: its own when the tiled kernel takes it, else feature-minor.
  static std::optional<Order> ConvolutionOrder(const Instruction& conv) {
    const AttrValue* attr = conv.FindAttr("dim_labels");
    if (attr == nullptr || attr->kind != AttrKind::kConvDnums || conv.shape().rank() < 2) return std::nullopt;
    const auto& dn = attr->get<ConvolutionDimensionNumbers>();
    Order order = OrderOf(conv.shape());
    const int64_t batch = dn.output_batch_dimension, feature = dn.output_feature_dimension;
    const int64_t most_major = order.back(), second = order[order.size() - 2];
    bool nhwc_like = order.front() == feature;
    bool nchw_like = (most_major == batch && second == feature) || (most_major == feature && second == batch);
    if (nhwc_like || nchw_like) return std::nullopt;
    Order feature_minor = {feature};
    for (int64_t d = conv.shape().rank() - 1; d >= 0; --d) {
      if (d != feature) feature_minor.push_back(d);
    }
    return feature_minor;
  }

  // `order` with dimension `d` moved to the most minor place, the others keeping their relative order.
  static Order WithMinor(const Order& order, int64_t d) {
    Order result = {d};
    for (int64_t e : order) {
      if (e != d) result.push_back(e);
    }
    return result;
  }

  // Whether the implicit im2col packs whole vectors along a row of output positions (the dimension after the
  // output feature) because that row is a spatial dimension the lhs stores contiguously, unstrided and undilated:
  // then the lhs is already read in runs.
  static bool PacksWholeRows(const Instruction& conv, const ConvolutionDimensionNumbers& dn, const Order& out_minor) {
    if (out_minor.size() < 2) return false;
    const Shape& lhs = conv.operand(0)->shape();
    Order lhs_minor = WithoutUnitDims(lhs, OrderOf(lhs));
    const AttrValue* window = conv.FindAttr("window");
    for (size_t s = 0; s < dn.output_spatial_dimensions.size(); ++s) {
      if (dn.output_spatial_dimensions[s] != out_minor[1]) continue;
      if (lhs_minor.empty() || lhs_minor.front() != dn.input_spatial_dimensions[s]) return false;
      if (window == nullptr || window->kind != AttrKind::kWindow) return true;
      const std::vector<WindowDimension>& dims = window->get<Window>().dimensions;
      return s >= dims.size() || (dims[s].stride == 1 && dims[s].base_dilation == 1);
    }
    return false;
  }

  // Convolution kernels whose innermost loop walks an operand across its layout read it through a copy in the
  // layout they stream (the copy moves each element once; the convolution reads each one many times). With the
  // output feature most minor:
  //   - batch-grouped, one batch element per group (depthwise filter gradients): the loop nest's innermost loop runs
  //     over output features, i.e. the lhs batch and the kernel output feature dimensions;
  //   - ungrouped (the tiled GEMM's direct form, filter gradients among them): the implicit im2col packs input
  //     features innermost and the kernel packer kernel output features, then kernel input features.
  // The same for the convolution of an output fusion, which reads the streamed values at its parameters. A loop
  // fusion computed for the convolution alone writes the streamed layout itself instead of being copied.
  void StreamConvolutionOperands(Instruction* inst) {
    Instruction* conv = inst;
    if (inst->opcode() == Opcode::kFusion) {
      conv = FusedConvolutionReadingParameters(*inst, called_once_);
      if (conv == nullptr) return;
    }
    if (conv->opcode() != Opcode::kConvolution || !IsPlainArray(conv->shape()) || conv->operand_count() != 2 ||
        !IsPlainArray(conv->operand(0)->shape()) || !IsPlainArray(conv->operand(1)->shape())) {
      return;
    }
    const AttrValue* attr = conv->FindAttr("dim_labels");
    if (attr == nullptr || attr->kind != AttrKind::kConvDnums) return;
    const auto& dn = attr->get<ConvolutionDimensionNumbers>();
    Order out_minor = WithoutUnitDims(conv->shape(), OrderOf(conv->shape()));
    if (out_minor.empty() || out_minor.front() != dn.output_feature_dimension) return;
    const int64_t batch_groups = conv->IntAttr("batch_group_count", 1);
    const int64_t feature_groups = conv->IntAttr("feature_group_count", 1);
    const Shape& lhs = conv->operand(0)->shape();
    const Shape& rhs = conv->operand(1)->shape();
    Order lhs_order = OrderOf(lhs), rhs_order = OrderOf(rhs);
    if (batch_groups > 1 && feature_groups == 1) {
      if (lhs.dimensions[dn.input_batch_dimension] != batch_groups ||
          rhs.dimensions[dn.kernel_output_feature_dimension] != batch_groups) {
        return;
      }
      lhs_order = WithMinor(lhs_order, dn.input_batch_dimension);
      rhs_order = WithMinor(rhs_order, dn.kernel_output_feature_dimension);
    } else if (batch_groups == 1 && feature_groups == 1) {
      if (PacksWholeRows(*conv, dn, out_minor)) return;
      lhs_order = WithMinor(lhs_order, dn.input_feature_dimension);
      rhs_order =
          WithMinor(WithMinor(rhs_order, dn.kernel_input_feature_dimension), dn.kernel_output_feature_dimension);
    } else {
      return;
    }
    for (int64_t i = 0; i < 2; ++i) {
      const Order& order = i == 0 ? lhs_order : rhs_order;
      Instruction* param = conv->operand(i);
      const int64_t at = inst == conv ? i : param->parameter_number();
      Instruction* operand = inst->operand(at);
      if (SameOrder(operand->shape(), order, OrderOf(operand->shape()))) continue;
      inst->ReplaceOperandWith(at, InOrder(operand, order, inst));
      if (inst != conv) {
        Shape shape = param->shape();
        shape.EnsureLayout();
        shape.layout->minor_to_major = order;
        param->set_shape(std::move(shape));
        streamed_reads_.insert({inst, at});
      }
      changed_ = true;
    }
  }

  // `value` in `order` for `reader`: a loop fusion read by `reader` alone writes it, anything else is copied (once
  // per order).
  Instruction* InOrder(Instruction* value, const Order& order, const Instruction* reader) {
    std::vector<Instruction*> users = DistinctUsers(value);
    if (value != comp_.root() && users.size() == 1 && users[0] == reader &&
        RelayoutLoopFusion(*value, order, called_once_)) {
      changed_ = true;
      return value;
    }
    auto known = std::find_if(streamed_.begin(), streamed_.end(),
                              [&](const auto& s) { return s.first == value && OrderOf(s.second->shape()) == order; });
    if (known != streamed_.end()) return known->second;
    Shape target = value->shape();
    target.EnsureLayout();
    target.layout->minor_to_major = order;
    return streamed_.emplace_back(value, CoerceLayouts(module_, comp_, value, target)).second;
  }

  // A broadcast or iota read only by ops that took another layout is produced in that layout.
  void FollowConsumer(Instruction* inst) {
    if ((inst->opcode() != Opcode::kBroadcast && inst->opcode() != Opcode::kIota) || !free_.contains(inst) ||
        pinned_.contains(inst)) {
      return;
    }
    std::vector<Instruction*> users = DistinctUsers(inst);
    if (users.empty()) return;
    Order order = OrderOf(users.front()->shape());
    for (const Instruction* user : users) {
      if (!IsFollower(user->opcode()) || !free_.contains(user) || !Changed(user) ||
          user->shape().dimensions != inst->shape().dimensions || OrderOf(user->shape()) != order) {
        return;
      }
    }
    SetOrder(inst, order);
  }

  // A transpose or reshape whose layouts make it a relabelling of its operand's bytes becomes a bitcast.
  absl::Status MakeBitcast(Instruction* inst) {
    if (!IsBitcastInCurrentLayouts(*inst) || inst->HasSideEffect() || !inst->control_predecessors().empty() ||
        !inst->control_successors().empty()) {
      return absl::OkStatus();
    }
    Shape shape = inst->shape();
    shape.EnsureLayout();
    auto bitcast = Instruction::Create(Opcode::kBitcast, module_.UniqueInstructionName("bitcast"), std::move(shape),
                                       {inst->operand(0)});
    *bitcast->mutable_metadata() = inst->metadata();
    bitcast->set_loc(inst->loc());
    bitcast->set_sharding(inst->sharding());
    Instruction* added = comp_.AddInstruction(std::move(bitcast));
    Shape original = original_.at(inst);  // copied: emplace may rehash
    original_.emplace(added, std::move(original));
    made_.insert(added);
    inst->ReplaceAllUsesWith(added);
    if (comp_.root() == inst) comp_.set_root(added);
    original_.erase(inst);
    free_.erase(inst);
    changed_ = true;
    return comp_.RemoveInstruction(inst);
  }

  // Constrained instructions read their operands in the layouts they had: a copy where one changed.
  void CopyForConstrainedReaders() {
    std::vector<std::pair<Instruction*, Instruction*>> copies;  // (value, copy in its original layout)
    for (Instruction* inst : comp_.MakeInstructionList()) {
      // Bitcasts made here read their operands' bytes as they are now.
      if (ReadsAnyLayout(*inst) || made_.contains(inst)) continue;
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        if (FusionReadsAnyLayout(*inst, i, called_once_) || streamed_reads_.contains({inst, i})) continue;
        Instruction* operand = inst->operand(i);
        auto original = original_.find(operand);
        if (original == original_.end() || SameLayouts(operand->shape(), original->second)) continue;
        auto known = std::find_if(copies.begin(), copies.end(), [&](const auto& c) { return c.first == operand; });
        Instruction* copy =
            known != copies.end()
                ? known->second
                : copies.emplace_back(operand, CoerceLayouts(module_, comp_, operand, original->second)).second;
        inst->ReplaceOperandWith(i, copy);
      }
    }
    if (!copies.empty()) changed_ = true;
  }

  Module& module_;
  Computation& comp_;
  const absl::flat_hash_set<const Computation*>& called_once_;
  absl::flat_hash_map<const Instruction*, Shape> original_;  // looked up only, never iterated
  absl::flat_hash_set<const Instruction*> free_, pinned_, made_;
  std::vector<std::pair<Instruction*, Instruction*>> streamed_;                 // (operand, its copy for a convolution)
  absl::flat_hash_set<std::pair<const Instruction*, int64_t>> streamed_reads_;  // (fusion, operand) in streamed order
  bool changed_ = false;
};

}  // namespace

absl::StatusOr<bool> RunLayoutAssignment(Module& module) {
  bool changed = false;
  const absl::flat_hash_set<const Computation*> called_once = ComputationsCalledOnce(module);
  for (Computation* comp : module.MakeComputationPostOrder()) {
    if (comp->is_fusion_computation()) continue;
    // Buffer kernels read and write row-major buffers: copies to and from other layouts come first, as ordinary
    // instructions the assignment below (and fusion) sees; the call itself is constrained, so it keeps them.
    for (Instruction* inst : comp->MakeInstructionList()) changed |= MakeKernelCallRowMajor(module, *comp, inst);
    XLAC_ASSIGN_OR_RETURN(bool comp_changed, Assigner(module, *comp, called_once).Run());
    changed |= comp_changed;
  }
  return changed;
}

}  // namespace xlac
