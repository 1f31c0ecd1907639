// An HLO computation: an ordered list of instructions with parameters and a root. Owned by its Module; owns its
// instructions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/instruction.h"

namespace xlac {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  // Instructions in program (print) order.
  const std::vector<std::unique_ptr<Instruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // Plain pointers in program order, safe to iterate while mutating the computation.
  std::vector<Instruction*> MakeInstructionList() const;
  // Post order: operands (and control predecessors) before users; deterministic.
  std::vector<Instruction*> MakePostOrder() const;

  // Appends `inst` (taking ownership) and returns it. Parameters are also registered by their number.
  Instruction* AddInstruction(std::unique_ptr<Instruction> inst);
  // Deletes `inst`, which must have no users, must not be the root, and (if a parameter) is only removed from the
  // parameter list when `allow_parameter` is set.
  absl::Status RemoveInstruction(Instruction* inst);
  // Removes `inst` and, transitively, operands that become dead (not roots, parameters or side-effecting).
  absl::Status RemoveInstructionAndUnusedOperands(Instruction* inst);
  // Finds an instruction by name (linear scan); nullptr if absent.
  Instruction* FindInstruction(std::string_view name) const;

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }
  Instruction* parameter(int64_t i) const { return parameters_[i]; }
  const std::vector<Instruction*>& parameters() const { return parameters_; }

  // Deep copy into `module` (not added to it) with instruction names kept; called computations are shared.
  std::unique_ptr<Computation> Clone(const std::string& new_name) const;

  bool is_entry() const;
  // Set for computations that are the `calls=` of a fusion.
  bool is_fusion_computation() const { return is_fusion_computation_; }
  void set_is_fusion_computation(bool v) { is_fusion_computation_ = v; }
  // execution_thread="..." on the computation header; "main" by default.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  SourceLoc loc() const { return loc_; }
  void set_loc(SourceLoc loc) { loc_ = loc; }

 private:
  friend class Module;
  std::string name_;
  Module* parent_ = nullptr;
  int64_t unique_id_ = -1;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  bool is_fusion_computation_ = false;
  std::string execution_thread_ = "main";
  SourceLoc loc_;
};

}  // namespace xlac
