// The StableHLO reference interpreter's own custom-calls under the JIT (runtime/interpreter/interpreter_ops.cc has
// their semantics):
//  - "interpreter.run_parallel" runs a replicas x partitions grid of programs. Each call site is compiled at
//    JitExecutable::Compile time into a module of its own whose entry runs program (r, p) on device
//    r * num_partitions + p, and runs as a nested device group when the call executes.
//  - "interpreter.probe" is an identity.
// The Winograd transforms of ir/winograd.h are built in too: calls of runtime kernels, not of a handler.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "codegen/jit.h"
#include "ir/module.h"

namespace xlac::codegen {

// True for the custom-call targets the JIT implements itself.
bool IsBuiltinCustomCallTarget(std::string_view target);

// Compiles every interpreter.run_parallel of `prepared` (the executable's prepared module, whose instructions the
// handler is later called with) and returns a handler that runs them and the probes, passing every other target to
// options.custom_call_handler (Unimplemented without one). Returns options.custom_call_handler unchanged when the
// module has no built-in targets.
absl::StatusOr<CustomCallHandler> WithBuiltinCustomCalls(const Module& prepared, const JitOptions& options);

// The module one run_parallel call site compiles to (exposed for tests). Its entry takes the call's non-token
// operands, in order, as parameters and returns a tuple; `slots[d][e]` is the index in that tuple of result element
// e of device d's program (-1 for a token), read from device d's result.
struct GridModule {
  std::unique_ptr<Module> module;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  std::vector<std::vector<int64_t>> slots;
};
absl::StatusOr<GridModule> BuildGridModule(const Module& module, const Instruction& run_parallel);

}  // namespace xlac::codegen
