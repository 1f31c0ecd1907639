// Dimension orders (a layout's minor_to_major) and when a reshape or transpose relabels its operand's bytes instead
// of moving them. Shared by layout assignment (passes/layout_assignment.h), which chooses layouts that make them so
// and turns them into bitcasts, and fusion (passes/fusion/fusion.h), which leaves such ops out of its loops.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/instruction.h"
#include "ir/shape.h"

namespace xlac {

using DimOrder = std::vector<int64_t>;  // minor_to_major

// The shape's order; the default (descending) one when it has no layout.
DimOrder OrderOf(const Shape& shape);

// A static array whose layout is nothing but a dimension order: the only kind layout assignment changes.
bool IsPlainArray(const Shape& shape);

// `order` without the dimensions of size 1, which never affect where an element lives.
DimOrder WithoutUnitDims(const Shape& shape, const DimOrder& order);

// Whether `a` and `b` place every element of `shape` at the same offset.
bool SameOrder(const Shape& shape, const DimOrder& a, const DimOrder& b);

// A transpose's result dimension i is its operand's dimension perm[i]. The result order that makes the transpose a
// relabelling of the operand's bytes, and the operand order that does so for a given result order.
DimOrder TransposeResultOrder(const std::vector<int64_t>& perm, const DimOrder& operand_order);
DimOrder TransposeOperandOrder(const std::vector<int64_t>& perm, const DimOrder& result_order);

// The result order that makes a reshape of `in` (in `in_order`) to `out` a relabelling of the same bytes, if one
// exists.
std::optional<DimOrder> ReshapeBitcastOrder(const Shape& in, const DimOrder& in_order, const Shape& out);

// A reshape or transpose of plain arrays whose layouts, as they are, make it a relabelling of its operand's bytes.
bool IsBitcastInCurrentLayouts(const Instruction& inst);

}  // namespace xlac
