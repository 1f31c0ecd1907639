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

namespace xlac {
namespace {

using Order = std::vector<int64_t>;  // minor_to_major

Order OrderOf(const Shape& shape) {
  return shape.layout ? shape.layout->minor_to_major : Layout::Default(shape.rank()).minor_to_major;
}

// A static array whose layout is nothing but a dimension order: the only kind this pass changes or reasons about.
bool IsPlainArray(const Shape& shape) {
  return shape.IsArray() && shape.IsStatic() && (!shape.layout || shape.layout->HasOnlyMinorToMajor());
}

// `order` without the dimensions of size 1, which never affect where an element lives.
Order WithoutUnitDims(const Shape& shape, const Order& order) {
  Order result;
  for (int64_t d : order) {
    if (shape.dimensions[d] != 1) result.push_back(d);
  }
  return result;
}

bool SameOrder(const Shape& shape, const Order& a, const Order& b) {
  return WithoutUnitDims(shape, a) == WithoutUnitDims(shape, b);
}

// A transpose's result dimension i is its operand's dimension perm[i]. The result order that makes the transpose a
// relabelling of the operand's bytes, and the operand order that does so for a given result order.
Order TransposeResultOrder(const std::vector<int64_t>& perm, const Order& operand_order) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  Order result;
  for (int64_t d : operand_order) result.push_back(inverse[d]);
  return result;
}

Order TransposeOperandOrder(const std::vector<int64_t>& perm, const Order& result_order) {
  Order operand;
  for (int64_t d : result_order) operand.push_back(perm[d]);
  return operand;
}

// The result order that makes a reshape of `in` (in `in_order`) to `out` a relabelling of the same bytes, if one
// exists. A reshape is row-major: split both shapes (unit dimensions aside) into groups of consecutive dimensions
// with equal products; it is a bitcast exactly when each input group lies contiguously, major to minor, in the
// input's physical order. The output then lists its groups in that physical order.
std::optional<Order> ReshapeBitcastOrder(const Shape& in, const Order& in_order, const Shape& out) {
  std::vector<int64_t> in_dims, out_dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.dimensions[d] == 0) return std::nullopt;
    if (in.dimensions[d] != 1) in_dims.push_back(d);
  }
  for (int64_t d = 0; d < out.rank(); ++d) {
    if (out.dimensions[d] != 1) out_dims.push_back(d);
  }
  struct Group {
    std::vector<int64_t> in, out;
  };
  std::vector<Group> groups;
  std::vector<int64_t> group_of(in.dimensions.size(), -1);
  size_t i = 0, j = 0;
  while (i < in_dims.size() || j < out_dims.size()) {
    Group group;
    int64_t in_product = 1, out_product = 1;
    do {
      if (in_product <= out_product && i < in_dims.size()) {
        in_product *= in.dimensions[in_dims[i]];
        group_of[in_dims[i]] = static_cast<int64_t>(groups.size());
        group.in.push_back(in_dims[i++]);
      } else if (j < out_dims.size()) {
        out_product *= out.dimensions[out_dims[j]];
        group.out.push_back(out_dims[j++]);
      } else {
        return std::nullopt;
      }
    } while (in_product != out_product);
    groups.push_back(std::move(group));
  }
  Order physical = WithoutUnitDims(in, in_order);
  std::reverse(physical.begin(), physical.end());  // major to minor
  std::vector<int64_t> major_to_minor;
  for (size_t p = 0; p < physical.size();) {
    const Group& group = groups[group_of[physical[p]]];
    if (p + group.in.size() > physical.size() ||
        !std::equal(group.in.begin(), group.in.end(), physical.begin() + static_cast<int64_t>(p))) {
      return std::nullopt;
    }
    major_to_minor.insert(major_to_minor.end(), group.out.begin(), group.out.end());
    p += group.in.size();
  }
  // Unit dimensions go where the default layout would put them relative to the others, so that a reshape between
  // default layouts keeps the default layout.
  for (int64_t d = 0; d < out.rank(); ++d) {
    if (out.dimensions[d] != 1) continue;
    auto at = std::find_if(major_to_minor.begin(), major_to_minor.end(), [&](int64_t e) { return e > d; });
    major_to_minor.insert(at, d);
  }
  return Order(major_to_minor.rbegin(), major_to_minor.rend());
}

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
  Assigner(Module& module, Computation& comp) : module_(module), comp_(comp) {}

  absl::StatusOr<bool> Run() {
    std::vector<Instruction*> post_order = comp_.MakePostOrder();
    for (Instruction* inst : post_order) {
      original_.emplace(inst, inst->shape());
      if (IsFree(*inst)) free_.insert(inst);
    }
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) SinkIntoProducer(*it);
    for (Instruction* inst : post_order) {
      if (free_.contains(inst) && !pinned_.contains(inst)) Choose(inst);
    }
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) FollowConsumer(*it);
    for (Instruction* inst : post_order) StreamConvolutionOperands(inst);
    for (Instruction* inst : post_order) XLAC_RETURN_IF_ERROR(MakeBitcast(inst));
    CopyForConstrainedReaders();
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
    if (std::none_of(users.begin(), users.end(), [](const Instruction* u) { return ReadsAnyLayout(*u); })) return;
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
    const AttrValue* attr = conv->FindAttr("dim_labels");
    if (attr == nullptr || attr->kind != AttrKind::kConvDnums || conv->shape().rank() < 2) return;
    const auto& dn = attr->get<ConvolutionDimensionNumbers>();
    Order order = OrderOf(conv->shape());
    const int64_t batch = dn.output_batch_dimension, feature = dn.output_feature_dimension;
    const int64_t most_major = order.back(), second = order[order.size() - 2];
    bool nhwc_like = order.front() == feature;
    bool nchw_like = (most_major == batch && second == feature) || (most_major == feature && second == batch);
    if (nhwc_like || nchw_like) return;
    Order feature_minor = {feature};
    for (int64_t d = conv->shape().rank() - 1; d >= 0; --d) {
      if (d != feature) feature_minor.push_back(d);
    }
    SetOrder(conv, feature_minor);
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
  void StreamConvolutionOperands(Instruction* conv) {
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
      Instruction* operand = conv->operand(i);
      const Order& order = i == 0 ? lhs_order : rhs_order;
      if (SameOrder(operand->shape(), order, OrderOf(operand->shape()))) continue;
      Shape target = operand->shape();
      target.EnsureLayout();
      target.layout->minor_to_major = order;
      auto known = std::find_if(streamed_.begin(), streamed_.end(), [&](const auto& s) {
        return s.first == operand && OrderOf(s.second->shape()) == order;
      });
      Instruction* copy = known != streamed_.end()
                              ? known->second
                              : streamed_.emplace_back(operand, CoerceLayouts(module_, comp_, operand, target)).second;
      conv->ReplaceOperandWith(i, copy);
      changed_ = true;
    }
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
    const Opcode op = inst->opcode();
    if ((op != Opcode::kTranspose && op != Opcode::kReshape) || !IsPlainArray(inst->shape()) ||
        !IsPlainArray(inst->operand(0)->shape()) || inst->HasSideEffect() || !inst->control_predecessors().empty() ||
        !inst->control_successors().empty()) {
      return absl::OkStatus();
    }
    const Shape& in = inst->operand(0)->shape();
    Order in_order = OrderOf(in);
    if (op == Opcode::kTranspose) {
      if (!SameOrder(inst->shape(), TransposeResultOrder(inst->dimensions(), in_order), OrderOf(inst->shape()))) {
        return absl::OkStatus();
      }
    } else {
      std::optional<Order> order = ReshapeBitcastOrder(in, in_order, inst->shape());
      if (!order || !SameOrder(inst->shape(), *order, OrderOf(inst->shape()))) return absl::OkStatus();
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
  absl::flat_hash_map<const Instruction*, Shape> original_;  // looked up only, never iterated
  absl::flat_hash_set<const Instruction*> free_, pinned_, made_;
  std::vector<std::pair<Instruction*, Instruction*>> streamed_;  // (operand, its copy for a convolution)
  bool changed_ = false;
};

}  // namespace

absl::StatusOr<bool> RunLayoutAssignment(Module& module) {
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    if (comp->is_fusion_computation()) continue;
    // Buffer kernels read and write row-major buffers: copies to and from other layouts come first, as ordinary
    // instructions the assignment below (and fusion) sees; the call itself is constrained, so it keeps them.
    for (Instruction* inst : comp->MakeInstructionList()) changed |= MakeKernelCallRowMajor(module, *comp, inst);
    XLAC_ASSIGN_OR_RETURN(bool comp_changed, Assigner(module, *comp).Run());
    changed |= comp_changed;
  }
  return changed;
}

}  // namespace xlac
