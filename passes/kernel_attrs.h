// A buffer kernel's attribute struct (include/xlac/custom_call.h) filled from a custom call's backend_config.
//
// backend_config comes in the two forms exporters write: a JSON object (`{"k": 3, "alpha": 0.5}`, a string in HLO
// text, as JAX's and PyTorch's custom calls carry it) or a StableHLO dictionary (`{k = 3 : i32, alpha = 5.0e-01 :
// f32}`, the raw text the StableHLO frontend keeps of `mhlo.backend_config`). Values are numbers and booleans; each
// must fit its field's type exactly (an integer field takes integers in its range, a floating-point field any
// number, a bool field true or false).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "passes/custom_kernels.h"

namespace xlac {

// Why `config` cannot fill `kernel`'s attribute struct.
struct KernelAttrProblem {
  std::string message;                     // for the error at the call
  const KernelAttrField* field = nullptr;  // the note goes at this field, or at the struct when null
};

// The struct's bytes (kernel.attrs_size of them, zero padding), or the problem: a config that does not parse, a
// field it does not name, a name that is no field, a value of the wrong kind or out of range. `call` names the call
// in messages.
std::optional<std::string> FillKernelAttrs(const KernelSignature& kernel, std::string_view config,
                                           std::string_view call, KernelAttrProblem& problem);

}  // namespace xlac
