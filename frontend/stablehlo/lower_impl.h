// Lowering of the StableHLO syntax tree (ast.h) to HLO IR, following XLA's MHLO -> HLO export. Module structure,
// functions, calls, regions and value scoping are in lower_module.cc; attribute access and instruction emission
// helpers in lower_util.cc; ops by family in lower_ops_*.cc; CHLO in lower_chlo.cc; Shardy shardings and ops in
// lower_sdy.cc.
//
// Convention: functions returning bool/pointer report exactly one error (at the op or attribute position) on failure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/stablehlo/ast.h"
#include "frontend/stablehlo/parser_impl.h"
#include "ir/module.h"

namespace xlac::shlo {

// A validated Shardy mesh: axis names and sizes in order, and its device ids (empty: the iota 0..n-1).
struct SdyMeshInfo {
  std::string label;  // "mesh @name" or "the inlined mesh", for messages
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  std::vector<int64_t> device_ids;
  int64_t num_devices = 1;
  bool operator==(const SdyMeshInfo& o) const {
    return names == o.names && sizes == o.sizes && device_ids == o.device_ids;
  }
};

// xla.sdy.GlobalToLocalShape / xla.sdy.LocalToGlobalShape (also spelled with a local_ prefix).
bool IsRoundTripShardMapTarget(std::string_view target);

// Values visible while lowering one region (or function body) into one computation.
struct Scope {
  Computation* comp = nullptr;
  Scope* parent = nullptr;
  std::string owner;  // the op whose region this is ("stablehlo.reduce"), for messages; "" for functions
  std::unordered_map<std::string, std::vector<Instruction*>> values;  // defined here: name -> results
  std::map<std::pair<std::string, int64_t>, Instruction*> imported;   // outer values: cloned constants, captures
  std::unordered_map<const Instruction*, Instruction*> clones;        // outer instruction -> clone in `comp`
};

// Shape refinement (lower_refine.cc). An unbounded `?` dimension of a module being refined is Shape::kUnboundedSize
// (dynamic) until the op that produces it is lowered.
bool HasUnboundedDims(const Shape& shape);
bool TypeHasUnboundedDims(const Type& type);
bool SignatureHasUnboundedDims(const Func& func);
// `actual` is what `declared` (possibly with unbounded dims, which match any size) allows.
bool ShapeRefines(const Shape& declared, const Shape& actual);
// llvm::formatv's `{N}` placeholders (with optional `,layout` / `:format`, ignored) filled with values[N], `{{` as
// `{`: how XLA formats a failed shape_assertion's error_message. A placeholder beyond `values` stays as written.
std::string FormatShapeAssertionMessage(std::string_view message, const std::vector<std::optional<int64_t>>& values);

// How a function is lowered for one call site (or as the entry) of a module being refined: its argument shapes, and
// the constant values of the scalar integer arguments (dimension variables) known there.
struct FunctionSpecialization {
  std::vector<Shape> arg_shapes;
  std::vector<std::optional<Literal>> arg_values;
};

class Lowerer {
 public:
  using Results = std::vector<Instruction*>;

  Lowerer(Parser& parser, const SourceFile& file, DiagnosticEngine& diags, const StableHloParseOptions& options);
  std::unique_ptr<Module> Lower(const ModuleAst& ast);

  // ---- Diagnostics ----
  bool Error(size_t pos, std::string message);
  bool OpError(const Op& op, std::string message) { return Error(op.name_pos, std::move(message)); }
  SourceLoc Loc(size_t pos) const { return parser_.Loc(pos); }

  // ---- Types ----
  bool ToShape(const Type& type, size_t pos, Shape* out);
  bool ResultShape(const Op& op, size_t i, Shape* out);  // result type i of `op`
  // The HLO shape for all results: the single result's shape, or a tuple of them.
  bool ResultShapes(const Op& op, std::vector<Shape>* out);

  // ---- Attributes (lower_util.cc) ----
  const Attr* FindAttr(const Op& op, std::string_view name) const;
  bool RequireAttr(const Op& op, std::string_view name, const Attr** out);
  bool AttrToI64List(const Attr& attr, std::vector<int64_t>* out);  // arrays, array<i64>, dense
  bool GetI64List(const Op& op, std::string_view name, std::vector<int64_t>* out, bool required = true);
  // A rank-2 [n, 2] integer attribute (padding) as pairs.
  bool GetI64Pairs(const Op& op, std::string_view name, std::vector<std::pair<int64_t, int64_t>>* out);
  bool GetBoolList(const Op& op, std::string_view name, std::vector<bool>* out);
  bool GetInt(const Op& op, std::string_view name, int64_t* out, std::optional<int64_t> default_value = {});
  bool GetBool(const Op& op, std::string_view name, bool* out, bool default_value = false);
  bool GetString(const Op& op, std::string_view name, std::string* out, std::optional<std::string> def = {});
  // kEnum (#stablehlo<x VALUE>), bare keyword or string: the VALUE.
  bool GetEnum(const Op& op, std::string_view name, std::string* out, std::optional<std::string> def = {});
  bool DictI64List(const Attr& dict, std::string_view key, std::vector<int64_t>* out);
  bool DictInt(const Attr& dict, std::string_view key, int64_t* out, int64_t default_value);
  static bool IsUnitOrTrue(const Attr& attr);
  // replica_groups = dense<[[0, 1], [2, 3]]> (-1 entries are padding).
  bool GetReplicaGroups(const Op& op, ReplicaGroups* out);
  // channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>: sets channel_id when the handle is positive.
  bool SetChannelId(const Op& op, Instruction* inst);
  bool GetPrecisionConfig(const Op& op, std::vector<std::string>* out);

  // ---- Emission (lower_util.cc) ----
  Instruction* Emit(Opcode opcode, Shape shape, std::vector<Instruction*> operands);
  Instruction* EmitConstant(Literal literal);
  Instruction* EmitGte(Instruction* tuple, int64_t index);
  Instruction* EmitTuple(std::vector<Instruction*> elements);
  // Splits a tuple-shaped instruction into `n` GTEs (and records it as the op's primary instruction).
  std::vector<Instruction*> SplitTuple(Instruction* tuple, int64_t n);
  // A scalar of `type` with value `v`, broadcast to `dims` when not scalar.
  Instruction* ConstScalar(PrimitiveType type, double v);
  Instruction* ConstLike(double v, const Instruction* like);
  Instruction* ConstLikeBits(uint64_t bits, const Instruction* like);  // raw bit pattern of like's element type
  Instruction* BroadcastTo(Instruction* x, const Shape& shape, std::vector<int64_t> dims);
  // StableHLO broadcast_in_dim semantics (operand dims of size 1 may expand): HLO's broadcast needs equal sizes, so
  // expanding dims are first reshaped away, as XlaBuilder::BroadcastInDim does. Reports an error and returns
  // nullptr for incompatible sizes.
  Instruction* BroadcastInDim(Instruction* x, const Shape& shape, const std::vector<int64_t>& dims);
  Instruction* Unary(Opcode op, Instruction* x);
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b);
  Instruction* Compare(Instruction* a, Instruction* b, std::string_view direction);
  Instruction* Select(Instruction* pred, Instruction* a, Instruction* b);
  Instruction* Convert(Instruction* x, PrimitiveType type);

  // ---- Values (lower_module.cc) ----
  Instruction* Lookup(const ValueRef& ref);
  bool LookupOperands(const Op& op, std::vector<Instruction*>* out);
  Scope* scope() { return scope_; }

  // ---- Regions (lower_module.cc) ----
  // Lowers a single-block region whose block arguments become parameters; the return values become the root (a
  // tuple when there are several). Only constants may be captured from outside.
  Computation* LowerRegion(const Region& region, const Op& owner, std::string_view role);
  // Like LowerRegion, but the computation has one parameter of `param_shape` and the block arguments (and the
  // captured values, appended after `num_explicit`) are its tuple elements (or the parameter itself if
  // `untupled`). Used by while (cond/body) and conditional branches.
  struct CaptureInfo {
    std::vector<std::pair<std::string, int64_t>> names;  // (value, result index) captured
    std::vector<Instruction*> values;                    // their instructions in the enclosing computation
  };
  bool CollectCaptures(const std::vector<const Region*>& regions, CaptureInfo* out);
  // Builds the root from the returned values (inside the region's computation); reports its own errors.
  using MakeRoot = std::function<bool(const std::vector<Instruction*>& returned, Instruction* param, size_t return_pos,
                                      Instruction** root)>;
  Computation* LowerTupledRegion(const Region& region, const Op& owner, std::string_view role, const Shape& param_shape,
                                 bool untupled, const CaptureInfo& captures, const MakeRoot& make_root);
  Computation* GetFunctionComputation(const std::string& name, const Op* call_site);
  // A new computation (p0, p1) -> op(p0, p1) over scalars of `type`, e.g. the `or` reducer of a bit assembly.
  Computation* ScalarBinaryComputation(Opcode op, PrimitiveType type);

  // ---- Shardy (lower_sdy.cc) ----
  // The module's `sdy.mesh` definitions.
  bool CollectSdyMeshes(const ModuleAst& ast);
  // The HLO sharding XLA's Shardy export gives a value of `shape` sharded as `sharding`; {manual} inside the body of
  // a fully manual sdy.manual_computation.
  bool SdyToSharding(const SdySharding& sharding, const Shape& shape, Sharding* out);
  // The sharding attribute of a function argument or result: an mhlo.sharding string ("" gives nullopt) or an
  // sdy.sharding. `attr.name` is one of those two.
  bool ValueShardingAttr(const NamedAttr& attr, const Shape& shape, std::optional<Sharding>* out);
  static bool IsShardingAttrName(std::string_view name) { return name == "mhlo.sharding" || name == "sdy.sharding"; }
  // sdy.sharding = #sdy.sharding_per_value<[...]> on an op: one sharding per result, set on `primary` (a tuple
  // sharding when the op has several results).
  bool ApplySdyOpSharding(const Attr& attr, const Results& results, Instruction* primary);
  // Lowers the single block of an IsolatedFromAbove region into the current computation, its arguments bound to
  // `args`; the values its terminator returns come back in `returned`.
  bool InlineRegion(const Region& region, const Op& owner, const std::vector<Instruction*>& args,
                    std::vector<Instruction*>* returned);
  // A custom-call `target` (Sharding, SPMDFullToShardShape, SPMDShardToFullShape) of `x` carrying `sharding`.
  Instruction* EmitShardingCall(std::string_view target, const Shape& shape, Instruction* x, Sharding sharding);
  bool LowerSdyManualComputation(const Op& op, Results* results);
  // The local value of an operand of a manual sdy.manual_computation, as its body sees it: which in-sharding made it
  // and the manual axes in force inside (lower_sdy_composite.cc reads it to know what is equal on which devices).
  struct SdyManualArg {
    const SdySharding* in_sharding = nullptr;
    SdyMeshInfo mesh;
    std::vector<std::string> manual_axes;
  };
  // stablehlo.composite "sdy.all_slice" (lower_sdy_composite.cc): sets `*handled` when it lowered the composite as a
  // local dynamic-slice; otherwise (false, nothing emitted) the caller calls the decomposition.
  bool LowerSdyAllSliceComposite(const Op& op, const std::vector<Instruction*>& operands, bool* handled,
                                 Results* results);

  // A value crossing a shard_map boundary that makes `axes` manual: its global sharding (in the enclosing region) and
  // its local shape and sharding (inside: {manual}, or a manual subgroup when the mesh has free axes left).
  struct ShardMapValue {
    Sharding global, local;
    Shape local_shape;
  };
  bool ShardMapShardings(const SdySharding& s, const Shape& global, const std::vector<std::string>& axes, size_t pos,
                         ShardMapValue* out);
  // `global` divided, in each dimension, by the sizes of the manual axes `s` shards it along.
  bool SdyLocalShape(const SdySharding& s, const Shape& global, const std::vector<std::string>& manual, size_t pos,
                     Shape* out);
  // The mesh axes made manual where the shardings being converted stand (the HLO import's shard_map bodies,
  // hlo_sdy_import.cc).
  void set_sdy_manual_axes(std::vector<std::string> axes) { sdy_manual_axes_ = std::move(axes); }

  // ---- Shardy's round-trip form (lower_sdy_roundtrip.cc) ----
  // Parses the content of a string attribute as one MLIR attribute (`what` names it in errors).
  bool ParseEmbeddedAttr(const Attr& string_attr, std::string_view what, AttrPtr* out);
  // The module's `mhlo.frontend_attributes = {xla.sdy.meshes = "{name = #sdy.mesh<...>}"}`.
  bool CollectRoundTripMeshes(const ModuleAst& ast);
  bool CollectRoundTripBodyAxes(const ModuleAst& ast);
  // A `#sdy<manual_axes{...}>` in a string attribute: the axis names.
  bool ParseManualAxes(const Attr& text, std::vector<std::string>* names);
  // The sharding of a function argument or result from its attributes: mhlo.sharding, sdy.sharding or the
  // round-trip xla.sdy.sharding (Shardy's wins; a warning when it disagrees with GSPMD's). `value_name` for it.
  bool ValueSharding(const std::vector<NamedAttr>& attrs, const Shape& shape, std::string_view value_name,
                     std::optional<Sharding>* out);
  // An op's round-trip `xla.sdy.sharding = "#sdy.sharding_per_value<[...]>"`, set on `primary`.
  bool ApplyRoundTripOpSharding(const Op& op, const Results& results, Instruction* primary);
  // A custom call xla.sdy.GlobalToLocalShape / xla.sdy.LocalToGlobalShape (IsRoundTripShardMapTarget): the
  // boundaries of a shard_map in Shardy's round-trip form, one result per operand.
  bool LowerRoundTripShardMapBoundary(const Op& op, std::string_view target, const std::vector<Instruction*>& operands,
                                      const std::vector<Shape>& shapes, Results* results);
  const Op* FindShardMapBodyCall(const Op& boundary, bool to_local, std::vector<size_t>* positions) const;

  // ---- Shape refinement (lower_refine.cc) ----
  // True while lowering a shape-polymorphic module with its entry argument shapes given.
  bool refining() const { return refining_; }
  // The value of an integer or boolean instruction when it is known at lowering time: constants, get_dimension_size
  // of a static dimension, and integer arithmetic, comparisons, selects, conversions and reshaping of such values.
  // nullptr otherwise (also for large arrays). The literal lives as long as the lowering.
  const Literal* FoldConstant(const Instruction* inst);
  // `shape` (a result type with unbounded dims) takes its dims from the constant rank-1 shape operand
  // `operand_index` of `op` (dynamic_iota, dynamic_broadcast_in_dim, dynamic_reshape).
  bool RefineFromShapeOperand(const Op& op, size_t operand_index, Shape* shape);
  // shape_assertion and the stablehlo.dynamic_* custom calls (top_k, approx_top_k, reduce_window,
  // rng_bit_generator); IsRefinementCallTarget says which targets these are.
  static bool IsRefinementCallTarget(std::string_view target);
  bool LowerRefinementCall(const Op& op, std::string_view target, Results* results);
  // The computation a func.call to `name` with `args` calls: specialized to the arguments' shapes and constant
  // dimension values when refining and the callee needs it, otherwise GetFunctionComputation.
  Computation* CalleeFor(const std::string& name, const Op& call, const std::vector<Instruction*>& args);

  // ---- Ops (lower_ops_*.cc and lower_chlo.cc register handlers by op name) ----
  bool LowerOp(const Op& op, Results* results);

  // ---- Quantized types (lower_quant.cc) ----
  // Records that `inst` holds the storage values of a quantized `type` (function and region arguments, results).
  void NoteQuant(Instruction* inst, const Type& type);
  const QuantParams* OperandQuant(const Op& op, size_t i, const Instruction* value) const;
  Instruction* QuantParam(const QuantParams& q, bool zero_points, const Shape& shape);
  Instruction* Dequantize(Instruction* storage, const QuantParams& q);
  Instruction* Quantize(Instruction* value, const QuantParams& q);
  // Lowers `op` itself when quantization changes how (*handled); otherwise the caller runs `handler`.
  bool LowerQuantAware(const Op& op, bool (*handler)(Lowerer&, const Op&, Results*), Results* results, bool* handled);

  Module* module() { return module_.get(); }
  const StableHloParseOptions& options() const { return options_; }
  std::string NewName(std::string_view prefix);
  std::string NewComputationName(std::string_view prefix, bool is_function = false);
  void AddComputation(std::unique_ptr<Computation> comp);
  const Op* current_op() const { return cur_op_; }

 private:
  friend class ScopeGuard;
  bool LowerFunction(const Func& func, Computation** out, const FunctionSpecialization* spec = nullptr);
  // LowerFunction with the recursion and depth checks (errors at `at`) and the shard_map body's manual axes.
  Computation* LowerFunctionChecked(const Func& func, size_t at, const FunctionSpecialization* spec);
  // The functions nothing calls or references, private ones dropped when public ones remain (entry candidates).
  std::vector<const Func*> UncalledFunctions(const ModuleAst& ast);
  // Refinement setup (lower_refine.cc): decides refining_, and the entry's specialization from the given shapes.
  bool StartRefinement(const ModuleAst& ast, const Func** entry, FunctionSpecialization* spec);
  // Gives the instructions the current op added to the current computation from index `first` on the shapes shape
  // inference derives from their (static) operands where their types had unbounded dims.
  bool RefineNewInstructions(const Op& op, size_t first);
  bool LowerBlockBody(const Block& block, const Op* owner, std::vector<Instruction*>* returned,
                      std::vector<const Type*>* returned_types, size_t* return_pos);
  bool BindResults(const Op& op, const Results& results);
  Instruction* LookupIn(Scope* scope, const std::string& name, int64_t index, size_t pos);
  bool IsConstantExpr(const Instruction* inst);
  Instruction* CloneConstantExpr(Scope* scope, Instruction* inst);
  bool ApplyOpLevelAttributes(const Op& op, const Results& results);
  std::optional<OpMetadata> MetadataFor(const Location& loc);
  bool ConfigureModule(const ModuleAst& ast);
  bool ApplyModuleSpmdShardings(const ModuleAst& ast, Computation* entry);
  bool ChooseEntry(const ModuleAst& ast, Computation** entry);
  // An mhlo.sharding string; "" (unspecified) gives nullopt.
  bool ParseShardingAttr(const Attr& attr, std::optional<Sharding>* out);
  // The mesh a Shardy sharding refers to (a module mesh, or its inlined one validated into `storage`).
  const SdyMeshInfo* ResolveSdyMesh(const SdySharding& sharding, SdyMeshInfo* storage);
  bool ValidateSdyMesh(const SdyMesh& mesh, std::string label, SdyMeshInfo* out);

  Parser& parser_;
  const SourceFile& file_;
  DiagnosticEngine& diags_;
  StableHloParseOptions options_;
  std::unique_ptr<Module> module_;
  std::vector<std::unique_ptr<Computation>> done_;  // completed computations, callees first
  std::map<std::string, const Func*> funcs_;
  std::map<std::string, Computation*> func_comps_;
  std::map<std::string, bool> in_progress_;
  std::map<std::string, int64_t> comp_name_counts_;
  std::set<std::string> used_comp_names_;
  std::set<std::string> reserved_comp_names_;
  int64_t name_counter_ = 0;
  int function_depth_ = 0;

  Scope* scope_ = nullptr;
  std::unordered_map<const Instruction*, std::shared_ptr<const QuantParams>> quant_of_;
  const Op* cur_op_ = nullptr;
  const Block* cur_block_ = nullptr;  // the block LowerBlockBody is in
  SourceLoc cur_loc_;
  std::optional<OpMetadata> cur_metadata_;
  Instruction* split_source_ = nullptr;  // the tuple instruction of the current multi-result op
  std::unordered_map<const Instruction*, bool> constant_expr_cache_;
  std::map<std::string, SdyMeshInfo> sdy_meshes_;
  // The mesh axes the shard_maps (sdy.manual_computation, or the round-trip form's body functions) enclosing what is
  // being lowered made manual: all of them is a fully manual region, some a manual subgroup.
  std::vector<std::string> sdy_manual_axes_;
  // The SPMDFullToShardShape of each operand of a manual sdy.manual_computation.
  std::unordered_map<const Instruction*, SdyManualArg> sdy_manual_args_;
  // Shardy's round-trip form: the manual axes of each xla.sdy.manual_computation_body function, from its call site.
  std::map<std::string, std::vector<std::string>> round_trip_body_axes_;
  // Shape refinement (lower_refine.cc).
  bool refining_ = false;
  std::map<std::string, Computation*> specializations_;  // key: function, argument shapes and constant values
  std::unordered_map<const Instruction*, std::optional<Literal>> folded_;
  int fold_depth_ = 0;
};

// Saves and restores the lowering position (scope and current op) around nested lowering.
class ScopeGuard {
 public:
  ScopeGuard(Lowerer* l, Scope* scope)
      : l_(l),
        saved_scope_(l->scope_),
        saved_op_(l->cur_op_),
        saved_loc_(l->cur_loc_),
        saved_metadata_(l->cur_metadata_),
        saved_split_(l->split_source_) {
    l_->scope_ = scope;
  }
  ~ScopeGuard() {
    l_->scope_ = saved_scope_;
    l_->cur_op_ = saved_op_;
    l_->cur_loc_ = saved_loc_;
    l_->cur_metadata_ = saved_metadata_;
    l_->split_source_ = saved_split_;
  }

 private:
  Lowerer* l_;
  Scope* saved_scope_;
  const Op* saved_op_;
  SourceLoc saved_loc_;
  std::optional<OpMetadata> saved_metadata_;
  Instruction* saved_split_;
};

// For a dense_resource whose values the print elided (an unknown literal) in an attribute whose values are needed
// (dimension lists, replica groups): only constants may have unknown values.
inline constexpr const char kElidedValues[] =
    "the values of this dense_resource were elided when the file was printed, but they are needed here";

// "stablehlo.add" / "mhlo.add" -> "add"; other dialects keep their prefix ("chlo.lgamma").
std::string_view BaseOpName(std::string_view name);

// Op handlers, registered by full op name ("stablehlo.add"); "mhlo." spellings share the stablehlo handlers.
using OpHandler = bool (*)(Lowerer& l, const Op& op, Lowerer::Results* results);
using OpTable = std::unordered_map<std::string, OpHandler>;
void RegisterElementwiseOps(OpTable* table);  // lower_ops_basic.cc
void RegisterDataOps(OpTable* table);         // lower_ops_data.cc
void RegisterRegionOps(OpTable* table);       // lower_ops_region.cc
void RegisterMiscOps(OpTable* table);         // lower_ops_misc.cc: collectives, custom calls, checks, calls
void RegisterChloOps(OpTable* table);         // lower_chlo.cc
void RegisterSdyOps(OpTable* table);          // lower_sdy.cc
void RegisterDialectOps(OpTable* table);      // lower_dialect_ops.cc: arith, math, tensor
void RegisterLegacyOps(OpTable* table);       // lower_legacy_ops.cc: einsum, unary_einsum, torch_index_select
// The handler of an op ("mhlo." spellings find the stablehlo ones); nullptr for ops xlac does not lower.
OpHandler FindOpHandler(std::string_view name);

// MHLO's extensibility protocol (XLA's hlo-legalize-to-stablehlo): an MHLO op StableHLO lacks travels as
// `stablehlo.custom_call @mhlo.<op>(...) {mhlo.attributes = {...}, mhlo.version = N}`. IsMhloExtensionCall: `op` is
// such a call. DecodeMhloExtensionCall: the op it stands for, with the attributes of mhlo.attributes, named so that
// FindOpHandler finds its lowering (lower_ops_misc.cc).
bool IsMhloExtensionCall(const Op& op);
bool DecodeMhloExtensionCall(Lowerer& l, const Op& call, Op* out);

}  // namespace xlac::shlo
