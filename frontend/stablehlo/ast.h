// The syntax tree of a StableHLO file: MLIR operations in their generic shape (name, operands, attributes,
// regions, types), whichever textual form they were written in. The parser produces it; the lowering turns it into
// HLO. Positions are byte offsets into the source text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/literal.h"
#include "ir/primitive_type.h"

namespace xlac::shlo {

// The parameters of a `!quant.uniform<...>` element type: values are stored as `storage` integers q and stand for
// (q - zero_point) * scale in `expressed`; per-axis types have one (scale, zero point) per index of `axis`.
struct QuantParams {
  PrimitiveType storage = PrimitiveType::kInvalid;
  PrimitiveType expressed = PrimitiveType::kInvalid;
  int64_t storage_min = 0;
  int64_t storage_max = 0;
  int64_t axis = -1;  // -1: per-tensor
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  bool operator==(const QuantParams& o) const {
    return storage == o.storage && expressed == o.expressed && storage_min == o.storage_min &&
           storage_max == o.storage_max && axis == o.axis && scales == o.scales && zero_points == o.zero_points;
  }
};

// An MLIR type, reduced to what HLO can express.
struct Type {
  enum class Kind : uint8_t {
    kNone,
    kTensor,    // tensor<2x?xf32>; also plain element types used where a tensor is expected (i32, f32)
    kToken,     // !stablehlo.token
    kTuple,     // tuple<...>
    kFunction,  // (a, b) -> c
    kOther,     // anything else (memref, index scalars, unknown dialect types); kept for diagnostics
  };
  Kind kind = Kind::kNone;
  PrimitiveType element = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;    // kTensor; kDynamic for '?'
  std::vector<int64_t> bounds;  // from a #stablehlo.bounds encoding; kDynamic where unbounded
  bool is_scalar_type = false;  // written as a bare element type (`f32`) rather than `tensor<f32>`
  bool quantized = false;       // element is !quant.*
  // For !quant.uniform elements: the parameters; `element` is then the storage type (quantized values are lowered
  // as their storage integers, frontend/stablehlo/lower_quant.cc). Null for quantized types xlac cannot lower.
  std::shared_ptr<const QuantParams> quant;
  bool unranked = false;       // tensor<*xf32>
  std::vector<Type> elements;  // kTuple elements, kFunction inputs
  std::vector<Type> results;   // kFunction results
  std::string text;            // the source spelling, for messages
  size_t pos = 0;

  static constexpr int64_t kDynamic = -1;
  bool IsDynamic() const;  // has '?' dims (recursively)
};

struct Attr;
using AttrPtr = std::shared_ptr<const Attr>;

// Shardy (sdy dialect) sharding attributes, as JAX writes them (parse_sdy.cc).

// An axis reference in a sharding: "x", or the sub-axis "x":(pre_size)size.
struct SdyAxisRef {
  std::string name;
  int64_t pre_size = 1;
  int64_t size = 0;  // 0: the whole axis
  size_t pos = 0;
  bool IsSubAxis() const { return size != 0; }
};

// <["x"=2, "y"=4], device_ids=[...]>; no axes and one device id is a maximal mesh.
struct SdyMesh {
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<size_t> axis_pos;
  std::vector<int64_t> device_ids;  // empty: iota
  bool has_device_ids = false;
  size_t device_ids_pos = 0;
  size_t pos = 0;
};

// {"x", "y", ?}p1: the axes sharding one tensor dimension, major first.
struct SdyDimSharding {
  std::vector<SdyAxisRef> axes;
  bool open = false;      // `?`
  int64_t priority = -1;  // p<N>
  size_t pos = 0;
};

// <@mesh, [{"x"}, {}], replicated={"y"}, unreduced={"z"}> (the mesh may be inlined: mesh<[...]>).
struct SdySharding {
  std::string mesh_name;                // "" when `mesh` is inlined
  std::shared_ptr<const SdyMesh> mesh;  // inlined mesh
  size_t mesh_pos = 0;
  std::vector<SdyDimSharding> dims;
  std::vector<SdyAxisRef> replicated;
  std::vector<SdyAxisRef> unreduced;
  size_t pos = 0;
};

// The payload of the kSdy* attribute kinds.
struct SdyAttr {
  SdyMesh mesh;                        // kSdyMesh
  std::vector<SdySharding> shardings;  // kSdySharding (one), kSdyShardingPerValue
  std::vector<SdyAxisRef> axes;        // kSdyManualAxes
};

// An MLIR attribute value.
struct Attr {
  enum class Kind : uint8_t {
    kUnit,        // `unit` or a bare key in an attribute dictionary
    kBool,        // true / false
    kInt,         // 3 : i64
    kFloat,       // 1.0 : f32
    kString,      // "text"
    kSymbol,      // @name
    kType,        // a type used as an attribute (tensor<f32>, f32)
    kKeyword,     // a bare identifier value: EQ, FLOAT, DEFAULT, e5m2, tf32
    kArray,       // [a, b, ...]
    kDenseArray,  // array<i64: 1, 2>: elements are kInt/kFloat (bools become kInt 0/1)
    kDense,       // dense<...> : tensor<...>  (literal)
    kDict,        // {a = 1, b}   and structured dialect attributes #stablehlo.gather<a = [1], ...>
    kEnum,        // #stablehlo<comparison_direction EQ>: str = value, dialect = "comparison_direction"
    kConvDims,    // #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, or the pretty dim_numbers
    kOpaque,      // an attribute kept as raw text (unknown dialect attributes)

    // Shardy attributes (parse_sdy.cc); their payload is `sdy`.
    kSdyMesh,              // #sdy.mesh<["x"=2]>
    kSdySharding,          // #sdy.sharding<@mesh, [{"x"}, {}]>
    kSdyShardingPerValue,  // #sdy.sharding_per_value<[<@mesh, ...>, ...]>, and the stripped [<...>, ...] of ops
    kSdyManualAxes,        // #sdy<manual_axes{"x"}>, and the bare {"x", "y"} of sdy.manual_computation
  };
  Kind kind = Kind::kUnit;
  size_t pos = 0;
  bool bool_value = false;
  int64_t int_value = 0;
  // Integers that do not fit int64 but fit uint64 (ui64 max) lex with this set and int_value holding the bits.
  bool int_is_unsigned_big = false;
  double float_value = 0;
  std::string str;           // kString / kSymbol / kKeyword / kEnum value; the source text of a {dictionary}
  std::string dialect;       // kEnum category, kDict dialect attribute name ("stablehlo.gather"), "" for plain dicts
  std::optional<Type> type;  // the `: type` of kInt/kFloat/kDense, the type of kType, the element type of kDenseArray
  std::vector<AttrPtr> elements;                      // kArray, kDenseArray
  std::vector<std::pair<std::string, AttrPtr>> dict;  // kDict (in source order)
  std::shared_ptr<const Literal> dense;               // kDense
  // kConvDims: for each of input, kernel, output, the dimension labels in order: 'b','f','i','o' or spatial 0..n-1
  // encoded as -1 - index for spatial dims.
  std::vector<std::vector<int64_t>> conv_labels;
  std::shared_ptr<const SdyAttr> sdy;  // kSdy*

  const Attr* Find(std::string_view key) const;  // kDict lookup
};

// A parsed `loc(...)`: what the HLO metadata can carry.
struct Location {
  std::string name;  // NameLoc
  std::string file;  // FileLineColLoc
  int64_t line = 0;
  int64_t col = 0;
  std::string alias;  // loc(#loc3): resolved after the whole file is read
  bool known() const { return !name.empty() || !file.empty() || !alias.empty(); }
};

// A use of an SSA value: %name or %name#index.
struct ValueRef {
  std::string name;
  int64_t index = 0;
  size_t pos = 0;
};

// A result group of an operation: `%name` (count 1) or `%name:3`.
struct ResultGroup {
  std::string name;
  int64_t count = 1;
  size_t pos = 0;
};

struct Op;

struct BlockArg {
  std::string name;
  Type type;
  size_t pos = 0;
  Location loc;  // kept for the entry block of a generic func.func, whose arguments are the function's
};

struct Block {
  std::vector<BlockArg> args;
  std::vector<Op> ops;
  size_t pos = 0;
};

struct Region {
  std::vector<Block> blocks;
  size_t pos = 0;
};

struct NamedAttr {
  std::string name;
  AttrPtr value;
  size_t pos = 0;
};

struct Op {
  std::string name;  // full name: "stablehlo.add", "func.return", "chlo.lgamma", "check.expect_eq_const"
  size_t pos = 0;    // start of the statement
  size_t name_pos = 0;
  bool generic_form = false;
  std::vector<ResultGroup> results;
  std::vector<ValueRef> operands;
  std::vector<Type> operand_types;  // empty when the text did not spell them
  std::vector<Type> result_types;
  std::vector<NamedAttr> attrs;  // properties and attribute dictionary, normalized to generic names
  std::vector<Region> regions;
  Location loc;

  const NamedAttr* FindAttr(std::string_view attr_name) const;
  int64_t NumResults() const;
};

struct FuncArg {
  std::string name;
  Type type;
  std::vector<NamedAttr> attrs;
  Location loc;
  size_t pos = 0;
};

struct FuncResult {
  Type type;
  std::vector<NamedAttr> attrs;
};

struct Func {
  std::string name;
  std::string visibility;  // "", "public", "private", "nested"
  size_t pos = 0;
  size_t name_pos = 0;
  std::vector<FuncArg> args;
  std::vector<FuncResult> results;
  std::vector<NamedAttr> attrs;
  bool has_body = false;
  Region body;
  Location loc;
};

// sdy.mesh @name = <["x"=2, "y"=4]>
struct MeshDef {
  std::string name;
  AttrPtr mesh;  // kSdyMesh
  size_t pos = 0;
  size_t name_pos = 0;
};

struct ModuleAst {
  std::string name;
  size_t pos = 0;
  std::vector<NamedAttr> attrs;
  std::vector<Func> funcs;
  std::vector<MeshDef> meshes;
};

}  // namespace xlac::shlo
