// Internal state and helpers of the HLO text parser, shared by parser.cc (module / computation / instruction
// structure), parse_instruction.cc (per-opcode rules), parse_attributes.cc, parse_shape.cc, parse_literal.cc and
// parse_sharding.cc. Not part of the public API.
//
// Conventions: every Parse* function returns false after reporting exactly one error (plus notes) through the
// DiagnosticEngine, at the offending token; callers just propagate the false.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "frontend/hlo/lexer.h"
#include "frontend/hlo/parser.h"
#include "ir/attributes.h"
#include "ir/diagnostics.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "ir/sharding.h"

namespace xlac::hlo {

// XLA's NameUniquer with separator ".": "add" -> "add", then "add.1", ...; a registered "x.5" reserves suffix 5.
class NameUniquer {
 public:
  std::string GetUniqueName(std::string_view prefix);

 private:
  struct IdGenerator {
    absl::flat_hash_set<int64_t> used;
    int64_t next = 0;
  };
  absl::flat_hash_map<std::string, IdGenerator> generators_;
};

// One parsed operand and where it was written.
struct ParsedOperand {
  Instruction* inst = nullptr;
  size_t pos = 0;
};

// Everything parsed for one instruction before it is created.
struct PendingInstruction {
  Opcode opcode = Opcode::kParameter;
  std::optional<Opcode> async_wrapped_opcode;
  std::optional<Shape> shape;  // absent when the text omitted it
  size_t shape_pos = 0;
  size_t opcode_pos = 0;
  size_t operands_pos = 0;  // the '(' of the operand list
  std::vector<ParsedOperand> operands;
  int64_t parameter_number = -1;
  std::unique_ptr<Literal> literal;
  bool allow_attributes = true;

  AttrMap attrs;
  absl::flat_hash_map<std::string, size_t> attr_pos;  // attribute name -> position of its name token
  std::vector<std::pair<std::string, std::vector<Computation*>>> computation_attrs;  // in source order
  std::optional<Sharding> sharding;
  std::optional<OpMetadata> metadata;
  std::optional<StringMap> frontend_attributes;
  std::optional<std::pair<std::string, bool>> backend_config;  // text, is_raw
  StringMap extra_attributes;
  std::vector<Instruction*> control_predecessors;
  std::optional<std::vector<bool>> parameter_replication;
};

class Parser {
 public:
  Parser(const SourceFile& file, DiagnosticEngine& diags, const HloParseOptions& options);

  std::unique_ptr<Module> ParseModule();
  // A standalone shape followed by end of input.
  std::optional<Shape> ParseStandaloneShape();

  // ---- Token helpers (parser.cc) ----
  const Token& tok() const { return lexer_.tok(); }
  TokKind kind() const { return lexer_.kind(); }
  TokKind LookAhead() const { return lexer_.LookAhead(); }
  void Next();
  bool EatIfPresent(TokKind kind);
  size_t pos() const { return lexer_.tok().begin; }
  size_t prev_end() const { return prev_end_; }
  std::string_view SourceText(size_t begin, size_t end) const { return lexer_.Slice(begin, end); }
  Lexer& lexer() { return lexer_; }

  // ---- Diagnostics (parser.cc) ----
  SourceLoc Loc(size_t offset) const { return lines_.Loc(offset); }
  bool Error(size_t offset, std::string message);
  // Reports at the current token; if that token is a lexer error, the lexer's message and position win.
  bool TokenError(std::string message);
  void Note(size_t offset, std::string message);
  bool Expect(TokKind kind, std::string_view context);  // "expects X <context>"

  // RAII nesting guard against stack exhaustion on hostile input.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    bool ok() const { return p_->depth_ <= p_->options_.max_nesting_depth; }

   private:
    Parser* p_;
  };
  bool DepthExceeded();  // reports the error

  // ---- Scalars and lists (parse_attributes.cc) ----
  bool ParseInt64(int64_t* out);
  bool ParseInt32(int64_t* out);  // range-checked to int32
  bool ParseDouble(double* out);
  bool ParseBool(bool* out);
  bool ParseString(std::string* out);
  bool ParseName(std::string* out);
  bool ParseAttributeName(std::string* out);
  bool ParseList(TokKind start, TokKind end, TokKind delim, const std::function<bool()>& parse_item);
  bool ParseInt64List(TokKind start, TokKind end, TokKind delim, std::vector<int64_t>* out);
  bool ParseInt64ListList(std::vector<std::vector<int64_t>>* out);  // {{1,2},{3}}
  bool ParseShapeIndex(std::vector<int64_t>* out);
  // Generic "{ (','? name=value)* }" with a per-name callback; duplicate names are errors.
  bool ParseSubAttributes(std::string_view what,
                          const std::function<bool(const std::string& name, size_t name_pos)>& parse_value);

  // ---- Attribute values (parse_attributes.cc) ----
  bool ParseAttrValue(const std::string& name, AttrKind kind, const std::vector<std::string_view>& enum_values,
                      bool enum_case_insensitive, AttrValue* out);
  bool ParseWindow(Window* out);
  bool ParseConvolutionDimensionNumbers(ConvolutionDimensionNumbers* out);
  bool ParsePaddingConfig(PaddingConfig* out);
  bool ParseSliceRanges(std::vector<SliceRange>* out);
  bool ParseReplicaGroups(ReplicaGroups* out);
  // "[d0,d1]" followed by an iota "<=[r0,r1]T(p0,p1)" or, if `devices` is non-null, an explicit list "0,1,2,3".
  bool ParseTileAssignment(std::vector<int64_t>* dims, std::optional<IotaList>* iota, std::vector<int64_t>* devices);
  bool ParseInstructionAliasing(std::vector<OutputOperandAlias>* out);
  bool ParseMetadata(OpMetadata* out);
  bool ParseFrontendAttributes(StringMap* out);
  bool ParseBackendConfig(std::string* text, bool* is_raw);
  // Validating parsers for whole-instruction attributes kept as raw text.
  bool ParseStatistics();
  bool ParseOriginalValue();
  bool ParseResultAccuracy();
  bool ParseParameterReplication(std::vector<bool>* out);
  bool ParseDomain();
  bool ParseBracedBlob(std::string* out);  // brace-balanced raw text (JSON dicts, tables)

  // ---- Shapes (parse_shape.cc) ----
  bool CanBeShape() const;
  bool AtBufferShape() const;
  bool ParseShape(Shape* out);
  bool ParseLayout(Layout* out);
  bool ParseShapeList(std::vector<Shape>* out);

  // ---- Literals (parse_literal.cc) ----
  bool ParseLiteral(const Shape& shape, Literal* out);
  bool ParseLiteralWithShape(Literal* out);  // custom-call literal=: shape then value, or a tuple

  // ---- Shardings (parse_sharding.cc) ----
  bool ParseSharding(Sharding* out);
  // Named (mesh) shardings print back verbatim: the attribute parser asks whether the last sharding had one.
  void NoteNamedSharding() { saw_named_sharding_ = true; }
  bool TakeNamedShardingSeen() { return std::exchange(saw_named_sharding_, false); }

  // ---- Structure (parser.cc) ----
  bool ParseComputationRef(std::vector<Computation*>* out, bool list);

  // ---- Instructions (parse_instruction.cc) ----
  // Parses "[shape] opcode(operands), attrs" and adds the instruction to the current computation. `name` empty means
  // an anonymous nested instruction. `preparsed_shape` is a shape the caller already consumed.
  Instruction* ParseInstructionRhs(const std::string& name, size_t name_pos, bool allow_attributes,
                                   std::optional<Shape> preparsed_shape, size_t shape_pos);

  // ---- Scopes ----
  struct Scope {
    Computation* computation = nullptr;
    absl::flat_hash_map<std::string, std::pair<Instruction*, size_t>> names;
    Instruction* last_added = nullptr;
  };
  Scope& scope() { return scopes_.back(); }
  // Looks an instruction up in the current computation; nullptr if absent.
  Instruction* FindInstruction(const std::string& name);

  const HloParseOptions& options() const { return options_; }

 private:
  bool ParseHloModuleHeader(ModuleConfig* config, std::string* name);
  bool ParseModuleAttribute(const std::string& name, size_t name_pos, ModuleConfig* config);
  bool ParseStackFrameIndex(ModuleConfig* config);
  bool ParseComputation(Computation** entry, size_t* entry_pos);
  // Parses "{ instructions }" into a new computation (pushed to computations_ on success).
  Computation* ParseInstructionList(const std::string& name, size_t name_pos);
  bool ParseInstruction(Instruction** root, size_t* root_pos);
  bool ParseEntryComputationLayout(ComputationLayout* out);
  bool ParseInputOutputAlias(std::vector<InputOutputAlias>* out);
  bool ParseBufferDonor(std::vector<BufferDonor>* out);
  bool ParseBoolListOrBool(std::vector<bool>* out);
  bool CheckModule(Module* module);
  // Exporters' leniencies that need the whole module (see the definition).
  void RelaxMixedAllReduceLayoutConstraints(Module* module);

  // parse_instruction.cc
  bool ParseOperands(PendingInstruction* inst);
  bool ParseInstructionAttributes(PendingInstruction* inst);
  bool ParseOneInstructionAttribute(PendingInstruction* inst, absl::flat_hash_set<std::string>* seen);
  bool CheckInstruction(PendingInstruction* inst);
  Instruction* BuildInstruction(PendingInstruction* inst, const std::string& name, size_t name_pos);

  const SourceFile& file_;
  DiagnosticEngine& diags_;
  HloParseOptions options_;
  bool warned_unspecified_api_version_ = false;
  LineIndex lines_;
  Lexer lexer_;
  size_t prev_end_ = 0;
  int depth_ = 0;

  std::vector<Scope> scopes_;
  // Computations in the order they are added to the module (nested ones before their callers).
  std::vector<std::unique_ptr<Computation>> computations_;
  absl::flat_hash_map<std::string, std::pair<Computation*, size_t>> computation_pool_;
  NameUniquer instruction_names_;
  NameUniquer computation_names_;
  // Non-sugar async-start instructions by called computation, for the one-caller rule.
  absl::flat_hash_map<const Computation*, std::vector<std::pair<Instruction*, size_t>>> async_callers_;
  std::vector<size_t> alias_positions_;  // source position of each input_output_alias entry
  bool saw_named_sharding_ = false;
};

// Largest device array a tile assignment or mesh may describe (keeps hostile input from allocating without bound).
constexpr int64_t kMaxIotaDevices = int64_t{1} << 24;

// Opcodes XLA can infer the result shape of when the text omits it.
bool CanInferShape(Opcode opcode);
// XLA's ShapeUtil::Compatible: same element types and dimension sizes (tuples element-wise), ignoring layouts and
// whether dimensions are dynamic. Used where XLA's parser checks a written shape against an instruction's.
bool ShapesCompatible(const Shape& a, const Shape& b);
// Number of leaf (non-tuple) subshapes.
int64_t LeafCount(const Shape& shape);

}  // namespace xlac::hlo
