// An HLO module: owns its computations; one of them is the entry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/computation.h"

namespace xlac {

// entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}
struct ComputationLayout {
  std::vector<Shape> parameters;
  Shape result;
  bool operator==(const ComputationLayout&) const = default;
};

// One entry of input_output_alias={ {0}: (0, {}, may-alias), ... }.
struct InputOutputAlias {
  std::vector<int64_t> output_index;
  int64_t parameter_number = 0;
  std::vector<int64_t> parameter_index;
  bool must_alias = false;  // "must-alias" vs "may-alias"
  bool operator==(const InputOutputAlias&) const = default;
};

// One entry of buffer_donor={ (0, {}), ... }.
struct BufferDonor {
  int64_t parameter_number = 0;
  std::vector<int64_t> parameter_index;
  bool operator==(const BufferDonor&) const = default;
};

// XLA's stack frame index: the FileNames / FunctionNames / FileLocations / StackFrames block printed after the
// HloModule line (long form only). Entries are numbered from 1 in that order; all ids are as written in the text
// (metadata's stack_frame_id refers to `stack_frames` by that number).
struct StackFrameIndex {
  struct FileLocation {
    int64_t file_name_id = 0;
    int64_t function_name_id = 0;
    int64_t line = 0;
    int64_t end_line = 0;
    int64_t column = 0;
    int64_t end_column = 0;
    bool operator==(const FileLocation&) const = default;
  };
  struct StackFrame {
    int64_t file_location_id = 0;
    int64_t parent_frame_id = 0;
    bool operator==(const StackFrame&) const = default;
  };
  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<StackFrame> stack_frames;
  bool operator==(const StackFrameIndex&) const = default;
};

// Module-level attributes printed on the HloModule line.
struct ModuleConfig {
  bool is_scheduled = false;
  std::optional<ComputationLayout> entry_computation_layout;  // as written, or computed on print when absent
  std::vector<InputOutputAlias> input_output_alias;
  std::vector<BufferDonor> buffer_donor;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters;
  std::vector<bool> allow_spmd_sharding_propagation_to_output;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  // Whether the text stated them (HLO header, mhlo.num_partitions / mhlo.num_replicas): ResolveDeviceCounts
  // (ir/device_counts.h) infers unstated counts from shardings and collectives, and says where from here.
  bool replica_count_given = false;
  bool num_partitions_given = false;
  std::string device_count_source;
  StringMap frontend_attributes;
  // Any other module attribute kept verbatim (name -> raw value text), in source order.
  StringMap extra_attributes;
  // Printed after the header when it has file names (XLA's condition).
  std::optional<StackFrameIndex> stack_frame_index;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Computations in print order (callees before callers, as parsed / as added).
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  std::vector<Computation*> MakeComputationList() const;
  // Post order over the call graph from the entry: callees before callers; unreachable computations last.
  std::vector<Computation*> MakeComputationPostOrder() const;
  Computation* AddComputation(std::unique_ptr<Computation> comp);
  Computation* AddEntryComputation(std::unique_ptr<Computation> comp);
  // Removes a computation nothing calls.
  absl::Status RemoveComputation(Computation* comp);
  Computation* FindComputation(std::string_view name) const;
  // Deep copy: computations in the same order, calls remapped to the copies, and the same names, unique ids and
  // config, so the copy prints exactly like the original and later fresh ids/names continue the same sequence.
  std::unique_ptr<Module> Clone() const;

  Computation* entry_computation() const { return entry_; }
  void set_entry_computation(Computation* comp) { entry_ = comp; }

  const ModuleConfig& config() const { return config_; }
  ModuleConfig& mutable_config() { return config_; }

  // Fresh ids for instructions/computations; deterministic (a counter).
  int64_t NextUniqueId() { return next_unique_id_++; }
  // A name not used by any instruction in the module, derived from `prefix` as XLA does ("add" -> "add.1").
  std::string UniqueInstructionName(std::string_view prefix);
  std::string UniqueComputationName(std::string_view prefix);

  // Gives `inst` a unique id and records its name; Computation::AddInstruction calls this.
  void RegisterInstruction(Instruction* inst);

  // Name of the text the module was parsed from, for diagnostics ("" if built in memory).
  const std::string& source_name() const { return source_name_; }
  void set_source_name(std::string name) { source_name_ = std::move(name); }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  ModuleConfig config_;
  int64_t next_unique_id_ = 0;
  std::string source_name_;
  absl::flat_hash_set<std::string> instruction_names_;
  absl::flat_hash_map<std::string, int64_t> next_name_suffix_;
};

}  // namespace xlac
