// The persistent compilation cache (docs/cache.md): object code of compiled modules kept in a directory that many
// processes may share. An entry is found by a key that hashes everything that changes the code (the canonical module
// text, the code-changing options, the target, the xlac build and the LLVM version); its header keeps those
// components as text, so a miss can say which component differs from the nearest entry.
//
// Entries are written to a temporary file in the same directory, fsynced and renamed into place, so a reader sees
// a whole entry or none. Every read checks the magic, format version, key, lengths and a checksum of the whole entry:
// a corrupt or truncated entry is reported and treated as a miss, never trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/pipeline.h"
#include "codegen/target.h"
#include "ir/module.h"

namespace xlac::codegen {

struct CacheOptions {
  std::string dir;  // empty: no cache
  // Never writes to the directory: no new entries, no replaced corrupt ones, no LRU touches, no eviction.
  bool readonly = false;
  // After a store, the oldest entries (by mtime, which a hit refreshes) are removed until the entries fit.
  int64_t max_bytes = int64_t{1} << 30;
};

// What determines the compiled code, as (name, value) pairs in a fixed order. Values are single-line text.
using CacheKeyComponents = std::vector<std::pair<std::string, std::string>>;

// A cached compilation: the object file plus `check`, a digest of what the runtime rebuilds on a hit (the prepared
// module and its buffer assignment) so a hit can confirm the object's buffer layout is the one it will be given.
struct CacheEntry {
  std::string check;
  std::string object;
};

class CompilationCache {
 public:
  explicit CompilationCache(CacheOptions options);

  // The entry for `components`, or nullopt on a miss. Corrupt or truncated entries are misses (and are replaced by
  // the next Store unless readonly). `log` gets one line per notable event (hit, miss and why, corruption).
  std::optional<CacheEntry> Lookup(const CacheKeyComponents& components, std::string& log) const;

  // Writes the entry atomically (unless readonly), then evicts the least recently used entries beyond max_bytes.
  // Failures to write are not errors of the compilation: they are logged and the cache is simply not filled.
  void Store(const CacheKeyComponents& components, const CacheEntry& entry, std::string& log) const;

  // On a miss: the components in which the nearest entry of the directory (fewest differing components) differs,
  // as "name: cached 'x', now 'y'" lines; empty when the directory has no readable entry. Reads the headers of at
  // most 1000 entries.
  std::string ExplainMiss(const CacheKeyComponents& components) const;

  // The file an entry for `components` lives in.
  std::string EntryPath(const CacheKeyComponents& components) const;

  const CacheOptions& options() const { return options_; }

  static constexpr char kEntrySuffix[] = ".xlacache";

 private:
  CacheOptions options_;
};

// The components every compilation's key has: the canonical text of `module` (printed, so formatting, comments and
// the input format do not matter), the code-changing `options`, the resolved `target`, the xlac build and the LLVM
// version. Callers append what else changes their output (the JIT: device counts; xlac: the output kind).
CacheKeyComponents CompileCacheKey(const Module& module, const CompileOptions& options, const TargetInfo& target);

// Hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// The identity of the xlac build running this code: the GNU build id of the executable or shared object holding
// it, or, without one, that file's path, size and modification time. A rebuilt compiler never reuses old entries.
std::string XlacBuildIdentity();

// The LLVM version xlac was built with.
std::string LlvmVersionString();

}  // namespace xlac::codegen
