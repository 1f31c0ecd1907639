#include "passes/layout_order.h"

#include <algorithm>

namespace xlac {

DimOrder OrderOf(const Shape& shape) {
  return shape.layout ? shape.layout->minor_to_major : Layout::Default(shape.rank()).minor_to_major;
}

bool IsPlainArray(const Shape& shape) {
  return shape.IsArray() && shape.IsStatic() && (!shape.layout || shape.layout->HasOnlyMinorToMajor());
}

DimOrder WithoutUnitDims(const Shape& shape, const DimOrder& order) {
  DimOrder result;
  for (int64_t d : order) {
    if (shape.dimensions[d] != 1) result.push_back(d);
  }
  return result;
}

bool SameOrder(const Shape& shape, const DimOrder& a, const DimOrder& b) {
  return WithoutUnitDims(shape, a) == WithoutUnitDims(shape, b);
}

DimOrder TransposeResultOrder(const std::vector<int64_t>& perm, const DimOrder& operand_order) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  DimOrder result;
  for (int64_t d : operand_order) result.push_back(inverse[d]);
  return result;
}

DimOrder TransposeOperandOrder(const std::vector<int64_t>& perm, const DimOrder& result_order) {
  DimOrder operand;
  for (int64_t d : result_order) operand.push_back(perm[d]);
  return operand;
}

// A reshape is row-major: split both shapes (unit dimensions aside) into groups of consecutive dimensions with equal
// products; it is a bitcast exactly when each input group lies contiguously, major to minor, in the input's physical
// order. The output then lists its groups in that physical order.
std::optional<DimOrder> ReshapeBitcastOrder(const Shape& in, const DimOrder& in_order, const Shape& out) {
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
  DimOrder physical = WithoutUnitDims(in, in_order);
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
  return DimOrder(major_to_minor.rbegin(), major_to_minor.rend());
}

bool IsBitcastInCurrentLayouts(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if ((op != Opcode::kTranspose && op != Opcode::kReshape) || inst.operand_count() != 1 ||
      !IsPlainArray(inst.shape()) || !IsPlainArray(inst.operand(0)->shape())) {
    return false;
  }
  const Shape& in = inst.operand(0)->shape();
  if (op == Opcode::kTranspose) {
    return SameOrder(inst.shape(), TransposeResultOrder(inst.dimensions(), OrderOf(in)), OrderOf(inst.shape()));
  }
  std::optional<DimOrder> order = ReshapeBitcastOrder(in, OrderOf(in), inst.shape());
  return order && SameOrder(inst.shape(), *order, OrderOf(inst.shape()));
}

}  // namespace xlac
