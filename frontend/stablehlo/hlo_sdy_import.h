// Shardy's round-trip form in HLO text.
//
// XLA with Shardy on (JAX's default since mid-2025) keeps Shardy's shardings through HLO as frontend attributes, and
// its HLO dumps and `as_text(dialect="hlo")` print them that way: the module's
// `frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=8]>}}`, a value's `xla.sdy.sharding="#sdy.sharding<...>"`
// (parameters) or `"#sdy.sharding_per_value<[...]>"` (other instructions), and each shard_map as
// `custom-call(...), custom_call_target="xla.sdy.GlobalToLocalShape"` (frontend attributes xla.sdy.in_shardings and
// xla.sdy.manual_axes), a call of a `xla.sdy.manual_computation_body*` computation, and
// `custom_call_target="xla.sdy.LocalToGlobalShape"` (xla.sdy.out_shardings), every boundary one tuple of values.
// The GSPMD `sharding=` attributes may be there too, or not (the shard_map boundaries never have them).
#pragma once

#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

// Reads those attributes of a module parsed from HLO text, as XLA's Shardy import does: every xla.sdy.sharding
// becomes the instruction's sharding (Shardy's wins over a GSPMD one, as in XLA with Shardy on; without the module's
// xla.sdy.meshes they name nothing and the GSPMD ones stand), read inside a
// shard_map body as the StableHLO frontend reads a sdy.manual_computation's body, and every shard_map boundary
// becomes what sdy.manual_computation lowers to: per value, custom-call "Sharding" and "SPMDFullToShardShape" on the
// way in, "Sharding" {manual} and "SPMDShardToFullShape" on the way out. A module without them is left alone.
// Reports errors at the instruction (the attribute text quoted) and returns false.
bool ImportHloShardyRoundTrip(Module& module, DiagnosticEngine& diags);

}  // namespace xlac
