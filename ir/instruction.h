// An HLO instruction. Owned by its Computation; everything else holds plain pointers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attributes.h"
#include "ir/diagnostics.h"
#include "ir/literal.h"
#include "ir/opcode.h"
#include "ir/shape.h"
#include "ir/sharding.h"

namespace xlac {

class Computation;

class Instruction {
 public:
  // A detached instruction; add it to a computation with Computation::AddInstruction.
  static std::unique_ptr<Instruction> Create(Opcode opcode, std::string name, Shape shape,
                                             std::vector<Instruction*> operands);
  static std::unique_ptr<Instruction> CreateParameter(int64_t number, std::string name, Shape shape);
  static std::unique_ptr<Instruction> CreateConstant(std::string name, Literal literal);

  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;
  ~Instruction();

  Opcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Module-unique id, assigned when the instruction is added to a computation of a module; printing and all
  // iteration orders are independent of pointer values.
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }
  void set_shape(Shape shape) { shape_ = std::move(shape); }

  Computation* parent() const { return parent_; }

  // Operands and users. The use lists are kept consistent by these mutators.
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  const std::vector<Instruction*>& operands() const { return operands_; }
  void AppendOperand(Instruction* operand);
  void ReplaceOperandWith(int64_t index, Instruction* new_operand);
  // Replaces every use of `old_operand` among this instruction's operands.
  void ReplaceUsesOfOperand(Instruction* old_operand, Instruction* new_operand);
  // Distinct users, in the order they first became users.
  const std::vector<Instruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  // Makes every user of this instruction (and the parent's root, if this is it) use `replacement` instead.
  void ReplaceAllUsesWith(Instruction* replacement);
  // Drops all operands (updating their use lists) and control edges; used before deletion.
  void DetachFromOperandsAndEdges();

  // Control dependencies: control-predecessors={a,b}.
  const std::vector<Instruction*>& control_predecessors() const { return control_predecessors_; }
  const std::vector<Instruction*>& control_successors() const { return control_successors_; }
  void AddControlDependencyTo(Instruction* successor);
  void RemoveControlDependencyTo(Instruction* successor);

  // Called computations in XLA's order: while {condition, body}; conditional branches; select-and-scatter
  // {select, scatter}; to_apply for reduce/map/sort/...; calls= for fusion/call/async.
  const std::vector<Computation*>& called_computations() const { return called_computations_; }
  void set_called_computations(std::vector<Computation*> comps) { called_computations_ = std::move(comps); }
  Computation* called_computation(int64_t i = 0) const { return called_computations_[i]; }

  // Opcode-specific attributes.
  const AttrMap& attrs() const { return attrs_; }
  AttrMap& mutable_attrs() { return attrs_; }
  const AttrValue* FindAttr(std::string_view name) const { return attrs_.Find(name); }
  void SetAttr(std::string name, AttrValue value) { attrs_.Set(std::move(name), std::move(value)); }
  // Typed lookups; return the given default when the attribute is absent.
  int64_t IntAttr(std::string_view name, int64_t default_value = 0) const;
  bool BoolAttr(std::string_view name, bool default_value = false) const;
  const std::vector<int64_t>& IntListAttr(std::string_view name) const;  // empty if absent
  std::string_view StringAttr(std::string_view name) const;              // kString/kEnum/kRaw; "" if absent
  const std::vector<int64_t>& dimensions() const { return IntListAttr("dimensions"); }

  // parameter(N)
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }
  // constant(...)
  const Literal& literal() const { return *literal_; }
  bool has_literal() const { return literal_ != nullptr; }
  void set_literal(Literal literal);

  // Attributes every instruction may carry.
  const std::optional<Sharding>& sharding() const { return sharding_; }
  void set_sharding(std::optional<Sharding> sharding) { sharding_ = std::move(sharding); }
  const OpMetadata& metadata() const { return metadata_; }
  OpMetadata* mutable_metadata() { return &metadata_; }
  const StringMap& frontend_attributes() const { return frontend_attributes_; }
  StringMap* mutable_frontend_attributes() { return &frontend_attributes_; }
  // backend_config as written: a quoted string's contents, or (if `backend_config_is_raw`) raw braced text.
  const std::string& backend_config() const { return backend_config_; }
  bool backend_config_is_raw() const { return backend_config_is_raw_; }
  void set_backend_config(std::string config, bool raw = false) {
    backend_config_ = std::move(config);
    backend_config_is_raw_ = raw;
  }
  // Async syntax sugar: for async-start/update/done written as e.g. `custom-call-start`, the wrapped opcode.
  std::optional<Opcode> async_wrapped_opcode() const { return async_wrapped_opcode_; }
  void set_async_wrapped_opcode(std::optional<Opcode> op) { async_wrapped_opcode_ = op; }
  // Other whole-instruction attributes kept verbatim for printing (statistics=, original_value=, result_accuracy=
  // ...), name -> raw value text.
  const StringMap& extra_attributes() const { return extra_attributes_; }
  StringMap* mutable_extra_attributes() { return &extra_attributes_; }

  SourceLoc loc() const { return loc_; }
  void set_loc(SourceLoc loc) { loc_ = loc; }

  // True if removing or merging this instruction could change behaviour (side-effecting custom calls,
  // collectives, send/recv, infeed/outfeed, rng, ...).
  bool HasSideEffect() const;
  // Structural equality for CSE: opcode, shape, operands (by pointer), attributes, called computations, literal.
  bool IdenticalIgnoringName(const Instruction& other) const;

 private:
  friend class Computation;
  Instruction(Opcode opcode, std::string name, Shape shape);
  void AddUser(Instruction* user);
  void RemoveUserIfUnused(Instruction* user);

  Opcode opcode_;
  std::string name_;
  int64_t unique_id_ = -1;
  Shape shape_;
  Computation* parent_ = nullptr;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Instruction*> control_predecessors_;
  std::vector<Instruction*> control_successors_;
  std::vector<Computation*> called_computations_;
  AttrMap attrs_;
  int64_t parameter_number_ = -1;
  std::unique_ptr<Literal> literal_;
  std::optional<Sharding> sharding_;
  OpMetadata metadata_;
  StringMap frontend_attributes_;
  std::string backend_config_;
  bool backend_config_is_raw_ = false;
  std::optional<Opcode> async_wrapped_opcode_;
  StringMap extra_attributes_;
  SourceLoc loc_;
};

}  // namespace xlac
