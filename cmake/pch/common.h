// Precompiled for every library and tool that depends on ir/ (CMake's target_precompile_headers; see
// xlac_precompile_headers in the top-level CMakeLists.txt). Parsing these headers was 80-90% of a typical
// translation unit's compile time, so precompiling them roughly halves a build from scratch, which is most of CI.
// Sources still include what they use: a build with -DXLAC_PRECOMPILED_HEADERS=OFF must compile.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "fmt/format.h"
#include "ir/computation.h"
#include "ir/diagnostics.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/status_macros.h"
