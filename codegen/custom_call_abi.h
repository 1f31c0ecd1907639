// How compiled code identifies custom-call and infeed sites to a host handler (see codegen/ir_emitter_custom_call.cc
// for the full calling convention of xlac_rt_custom_call).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "ir/module.h"

namespace xlac::codegen {

// The exported symbol whose address is the `target` string compiled code passes for the custom-call with
// `unique_id` in the module compiled with entry function `entry_name`.
std::string CustomCallSiteSymbol(const std::string& entry_name, int64_t unique_id);

// Likewise for the `site` string compiled code passes to xlac_rt_infeed for the infeed with `unique_id` (see
// codegen/ir_emitter_infeed.cc); the string is the infeed's name.
std::string InfeedSiteSymbol(const std::string& entry_name, int64_t unique_id);

// OK when every custom-call of `module` is compiled in (identities such as "Sharding", a shard_map boundary whose
// shapes agree, the interpreter's run_parallel / probe); otherwise Unimplemented naming the first call that would
// need a host handler, and how to declare it an identity.
absl::Status CheckCustomCallsNeedNoHandler(const Module& module);
// The same check for one instruction (OK for anything but a custom-call).
absl::Status CheckCustomCallNeedsNoHandler(const Instruction& inst);

}  // namespace xlac::codegen
