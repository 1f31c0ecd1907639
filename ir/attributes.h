// Typed attribute values carried by HLO instructions (dimensions=, window=, dim_labels=, replica_groups=, ...).
//
// Instructions keep their opcode-specific attributes in a small name -> AttrValue map (like MLIR's attribute
// dictionary). Every attribute name has exactly one value kind (AttrKindForName), so the parser knows how to read a
// value and the printer how to write it; the printer's per-opcode schema fixes XLA's canonical print order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/shape.h"

namespace xlac {

class Literal;
struct Sharding;

// One spatial dimension of window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}.
struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;  // rhs_dilate
  int64_t base_dilation = 1;    // lhs_dilate
  bool window_reversal = false;  // rhs_reversal
  bool operator==(const WindowDimension&) const = default;
};
struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

// dim_labels=b01f_01io->b01f
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

// padding=0_0x1_2_1 (low_high[_interior] per dimension).
struct PaddingDimension {
  int64_t edge_padding_low = 0;
  int64_t edge_padding_high = 0;
  int64_t interior_padding = 0;
  bool operator==(const PaddingDimension&) const = default;
};
struct PaddingConfig {
  std::vector<PaddingDimension> dimensions;
  bool operator==(const PaddingConfig&) const = default;
};

// slice={[0:4:2], [1:3]}
struct SliceRange {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceRange&) const = default;
};

// An iota device list: [d0,d1,...]<=[r0,r1,...]T(p0,p1,...) — iota(prod(r)) reshaped to r, transposed by p,
// reshaped to d. Shared by replica_groups= and tiled shardings.
struct IotaList {
  std::vector<int64_t> dims;           // the visible shape ([num_groups, group_size] for replica groups)
  std::vector<int64_t> reshape_dims;   // r
  std::vector<int64_t> transpose_perm; // p; empty = identity
  bool operator==(const IotaList&) const = default;
  // Materializes the device ids in row-major order of `dims`.
  std::vector<int64_t> ToList() const;
};

// replica_groups={{0,1},{2,3}} or replica_groups=[2,2]<=[4] (iota form).
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;  // list form
  std::optional<IotaList> iota;              // iota form; when set, `groups` is empty
  bool operator==(const ReplicaGroups&) const = default;
  // Explicit groups regardless of form.
  std::vector<std::vector<int64_t>> Expanded() const;
};

// metadata={op_type="Add" op_name="a/b" source_file="x.py" source_line=12 ...}.
struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;
  int64_t source_end_line = 0;
  int64_t source_column = 0;
  int64_t source_end_column = 0;
  std::vector<std::string> profile_type;  // profile_type={...}
  std::string deduplicated_name;
  bool preserve_layout = false;
  int64_t stack_frame_id = 0;
  std::string scheduling_name;
  bool empty() const;
  bool operator==(const OpMetadata&) const = default;
};

// frontend_attributes={a="b",c="d"}: XLA keeps them in a map sorted by key.
using StringMap = std::vector<std::pair<std::string, std::string>>;

// output_to_operand_aliasing={{0}: (1, {}), {1}: (0, {2})}
struct OutputOperandAlias {
  std::vector<int64_t> output_index;
  int64_t operand = 0;
  std::vector<int64_t> operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

enum class AttrKind : uint8_t {
  kInt,           // index=3
  kBool,          // indices_are_sorted=true
  kFloat,         // epsilon=0.001
  kString,        // custom_call_target="foo" (quoted in text)
  kEnum,          // direction=LT, kind=kLoop, fft_type=FFT (bare word in text)
  kIntList,       // dimensions={1,0}
  kIntListList,   // source_target_pairs={{0,1},{1,0}}
  kEnumList,      // operand_precision={high,default}
  kWindow,
  kConvDnums,     // dim_labels=
  kPaddingConfig, // padding=
  kSlice,         // slice=
  kReplicaGroups,
  kShapeList,     // operand_layout_constraints={f32[2]{0}, ...}
  kLiteral,       // literal=  (custom-call)
  kAliasing,      // output_to_operand_aliasing=
  kRaw,           // brace-balanced text kept verbatim (e.g. sparsity=, statistics=)
};

struct AttrValue {
  AttrKind kind = AttrKind::kInt;
  std::variant<int64_t, bool, double, std::string, std::vector<int64_t>, std::vector<std::vector<int64_t>>,
               std::vector<std::string>, Window, ConvolutionDimensionNumbers, PaddingConfig, std::vector<SliceRange>,
               ReplicaGroups, std::vector<Shape>, std::shared_ptr<const Literal>, std::vector<OutputOperandAlias>>
      value;

  static AttrValue Int(int64_t v) { return {AttrKind::kInt, v}; }
  static AttrValue Bool(bool v) { return {AttrKind::kBool, v}; }
  static AttrValue Float(double v) { return {AttrKind::kFloat, v}; }
  static AttrValue String(std::string v) { return {AttrKind::kString, std::move(v)}; }
  static AttrValue Enum(std::string v) { return {AttrKind::kEnum, std::move(v)}; }
  static AttrValue Raw(std::string v) { return {AttrKind::kRaw, std::move(v)}; }
  static AttrValue IntList(std::vector<int64_t> v) { return {AttrKind::kIntList, std::move(v)}; }
  static AttrValue IntListList(std::vector<std::vector<int64_t>> v) { return {AttrKind::kIntListList, std::move(v)}; }
  static AttrValue EnumList(std::vector<std::string> v) { return {AttrKind::kEnumList, std::move(v)}; }
  static AttrValue Of(Window v) { return {AttrKind::kWindow, std::move(v)}; }
  static AttrValue Of(ConvolutionDimensionNumbers v) { return {AttrKind::kConvDnums, std::move(v)}; }
  static AttrValue Of(PaddingConfig v) { return {AttrKind::kPaddingConfig, std::move(v)}; }
  static AttrValue Of(std::vector<SliceRange> v) { return {AttrKind::kSlice, std::move(v)}; }
  static AttrValue Of(ReplicaGroups v) { return {AttrKind::kReplicaGroups, std::move(v)}; }
  static AttrValue Of(std::vector<Shape> v) { return {AttrKind::kShapeList, std::move(v)}; }
  static AttrValue Of(std::shared_ptr<const Literal> v) { return {AttrKind::kLiteral, std::move(v)}; }
  static AttrValue Of(std::vector<OutputOperandAlias> v) { return {AttrKind::kAliasing, std::move(v)}; }

  template <typename T>
  const T& get() const { return std::get<T>(value); }
  bool operator==(const AttrValue& other) const;
};

// The single value kind of an attribute name as it appears in HLO text; nullopt for names that are not
// opcode-specific attributes (sharding=, metadata=, to_apply=, ... are handled by the instruction itself).
std::optional<AttrKind> AttrKindForName(std::string_view name);

// An ordered name -> value map; order is irrelevant to printing (the printer's schema decides).
class AttrMap {
 public:
  const AttrValue* Find(std::string_view name) const;
  AttrValue* FindMutable(std::string_view name);
  void Set(std::string name, AttrValue value);
  bool Erase(std::string_view name);
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<std::string, AttrValue>>& entries() const { return entries_; }
  bool operator==(const AttrMap& other) const;  // order-insensitive

 private:
  std::vector<std::pair<std::string, AttrValue>> entries_;
};

}  // namespace xlac
