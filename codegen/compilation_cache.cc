#include "codegen/compilation_cache.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "fmt/format.h"
#include "frontend/hlo/printer.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

namespace xlac::codegen {
namespace {

namespace fs = std::filesystem;

// Bumped whenever the entry layout or the meaning of a component changes; old entries then simply miss.
constexpr uint32_t kFormatVersion = 1;
constexpr char kMagic[8] = {'X', 'L', 'A', 'C', 'A', 'C', 'H', 'E'};
// magic, version, components length, check length, object length, checksum, key.
constexpr size_t kChecksumOffset = 28;
constexpr size_t kKeyOffset = 36;
constexpr size_t kHeaderBytes = kKeyOffset + 32;
// Entries and temporaries larger than this are not ours (or are corrupt): never read them whole.
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 34;
// A miss explanation reads at most this many entries' headers (the nearest entry is among them).
constexpr int kMaxExplainScan = 1000;
// A temporary older than this belongs to a writer that died before renaming it.
constexpr auto kStaleTemporaryAge = std::chrono::hours(1);

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetLe(std::string_view bytes, size_t offset, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[offset + i])} << (8 * i);
  return v;
}

std::string ComponentsText(const CacheKeyComponents& components) {
  std::string text;
  for (const auto& [name, value] : components) {
    std::string clean = value;
    std::replace(clean.begin(), clean.end(), '\n', ' ');
    text += name + "=" + clean + "\n";
  }
  return text;
}

CacheKeyComponents ParseComponents(std::string_view text) {
  CacheKeyComponents components;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    size_t eq = line.find('=');
    if (eq != std::string_view::npos) components.emplace_back(line.substr(0, eq), line.substr(eq + 1));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return components;
}

std::array<uint8_t, 32> Sha256(std::string_view data) {
  return llvm::SHA256::hash(llvm::ArrayRef(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
}

std::string Hex(const uint8_t* bytes, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", bytes[i]);
  return s;
}

// The checksum covers every byte but its own field.
uint64_t Checksum(std::string_view entry) {
  std::string covered(entry.substr(0, kChecksumOffset));
  covered.append(entry.substr(kChecksumOffset + 8));
  return llvm::xxh3_64bits(llvm::StringRef(covered));
}

std::string Serialize(const std::array<uint8_t, 32>& key, const std::string& components, const CacheEntry& entry) {
  std::string out(kMagic, sizeof kMagic);
  PutU32(out, kFormatVersion);
  PutU32(out, static_cast<uint32_t>(components.size()));
  PutU32(out, static_cast<uint32_t>(entry.check.size()));
  PutU64(out, entry.object.size());
  PutU64(out, 0);  // checksum, filled below
  out.append(reinterpret_cast<const char*>(key.data()), key.size());
  out += components;
  out += entry.check;
  out += entry.object;
  uint64_t sum = Checksum(out);
  for (int i = 0; i < 8; ++i) out[kChecksumOffset + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
  return out;
}

// The components text of a header, or an error saying what is wrong with it. `size` is the file's size.
absl::StatusOr<std::string_view> ParseHeader(std::string_view bytes, uint64_t size) {
  if (bytes.size() < kHeaderBytes) return absl::DataLossError("truncated header");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return absl::DataLossError("bad magic");
  uint64_t version = GetLe(bytes, 8, 4);
  if (version != kFormatVersion) {
    return absl::DataLossError(fmt::format("format version {}, expected {}", version, kFormatVersion));
  }
  uint64_t components = GetLe(bytes, 12, 4), check = GetLe(bytes, 16, 4), object = GetLe(bytes, 20, 8);
  if (object > kMaxEntryBytes || kHeaderBytes + components + check + object != size) {
    return absl::DataLossError(
        fmt::format("{} bytes, the header describes {}", size, kHeaderBytes + components + check + object));
  }
  if (bytes.size() < kHeaderBytes + components) return absl::DataLossError("truncated header");
  return bytes.substr(kHeaderBytes, components);
}

absl::StatusOr<std::string> ReadWhole(const std::string& path, uint64_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) > kMaxEntryBytes) {
    ::close(fd);
    return absl::DataLossError("unreadable size");
  }
  std::string bytes(std::min<uint64_t>(static_cast<uint64_t>(st.st_size), limit), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool IsEntryName(const std::string& name) {
  const std::string suffix = CompilationCache::kEntrySuffix;
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         name[0] != '.';
}

// Removes the least recently used entries until the directory's entries fit in `max_bytes`, keeping `keep` (the
// entry just written), and temporaries left behind by writers that died. Other processes may evict concurrently:
// an entry already gone is fine.
void Evict(const CacheOptions& options, const fs::path& keep, std::string& log) {
  struct File {
    fs::path path;
    uint64_t size;
    fs::file_time_type mtime;
  };
  std::vector<File> entries;
  uint64_t total = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(options.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code e1, e2;
    uint64_t size = it->file_size(e1);
    fs::file_time_type mtime = it->last_write_time(e2);
    if (e1 || e2) continue;
    if (name.rfind(".tmp-", 0) == 0 && now - mtime > kStaleTemporaryAge) {
      fs::remove(it->path(), e1);
      continue;
    }
    if (!IsEntryName(name)) continue;
    entries.push_back({it->path(), size, mtime});
    total += size;
  }
  if (total <= static_cast<uint64_t>(options.max_bytes)) return;
  std::sort(entries.begin(), entries.end(), [](const File& a, const File& b) { return a.mtime < b.mtime; });
  for (const File& f : entries) {
    if (total <= static_cast<uint64_t>(options.max_bytes)) break;
    if (f.path == keep) continue;
    std::error_code e;
    fs::remove(f.path, e);
    total -= f.size;
    log += fmt::format("cache: evicted {} ({} bytes, least recently used)\n", f.path.filename().string(), f.size);
  }
}

struct BuildIdSearch {
  uintptr_t address;
  std::string id;
};

int FindBuildId(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && search->address >= begin && search->address < begin + ph.p_memsz) mine = true;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + ((note->n_namesz + 3) & ~3u);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + note->n_descsz <= end) {
        search->id = Hex(desc, note->n_descsz);
        return 1;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

// Whether the module draws from the stateful rng streams, whose seed is a constant of its code.
bool HasStatefulRng(const Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kRng) return true;
    }
  }
  return false;
}

}  // namespace

CacheKeyComponents CompileCacheKey(const Module& module, const CompileOptions& c, const TargetInfo& target) {
  CacheKeyComponents key = {
      {"module", Sha256Hex(PrintModule(module))},
      {"entry", c.entry_name},
      {"opt_level", std::to_string(c.opt_level)},
      {"exact", std::to_string(c.exact)},
      {"tpu_numerics", std::to_string(c.tpu_numerics)},
      // prebuilt_gemms: an object calling the prebuilt GEMMs needs them bound when it is loaded.
      {"codegen",
       fmt::format("tiled_dot={} tiled_convolution={} parallel={} row_groups={} trace_kernels={}{}{}{}", c.tiled_dot,
                   c.tiled_convolution, c.parallel, c.row_groups, c.trace_kernels,
                   c.outline_kernels ? "" : " outline_kernels=false", c.partitioned ? " partitioned=true" : "",
                   c.prebuilt_gemms ? "" : " prebuilt_gemms=false")},
      {"buffers", fmt::format("alignment={} reuse={} in_place={}", c.buffers.alignment, c.buffers.reuse_buffers,
                              c.buffers.allow_in_place)},
      {"triple", target.triple},
      {"cpu", target.cpu},
      {"features", target.features},
      {"xlac", XlacBuildIdentity()},
      {"llvm", LlvmVersionString()},
  };
  // C++ kernels linked into the program (their sources, includes, Clang version): only programs that have them.
  if (!c.kernel_fingerprint.empty()) key.emplace_back("kernels", c.kernel_fingerprint);
  // The stateful rng's seed: only programs that draw from it.
  if (HasStatefulRng(module)) key.emplace_back("rng_seed", std::to_string(c.rng_seed));
  return key;
}

std::string Sha256Hex(std::string_view data) {
  std::array<uint8_t, 32> h = Sha256(data);
  return Hex(h.data(), h.size());
}

std::string XlacBuildIdentity() {
  static const std::string identity = [] {
    BuildIdSearch search{reinterpret_cast<uintptr_t>(&XlacBuildIdentity), ""};
    dl_iterate_phdr(&FindBuildId, &search);
    if (!search.id.empty()) return "build-id " + search.id;
    Dl_info info;
    std::string file = "/proc/self/exe";
    if (dladdr(reinterpret_cast<void*>(&XlacBuildIdentity), &info) != 0 && info.dli_fname != nullptr &&
        info.dli_fname[0] == '/') {
      file = info.dli_fname;
    }
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) return std::string("unknown");
    std::error_code ec;
    return fmt::format("{} {} bytes mtime {}.{:09d}", fs::canonical(file, ec).string(), st.st_size, st.st_mtim.tv_sec,
                       st.st_mtim.tv_nsec);
  }();
  return identity;
}

std::string LlvmVersionString() { return LLVM_VERSION_STRING; }

CompilationCache::CompilationCache(CacheOptions options) : options_(std::move(options)) {}

std::string CompilationCache::EntryPath(const CacheKeyComponents& components) const {
  std::array<uint8_t, 32> key = Sha256(ComponentsText(components));
  return (fs::path(options_.dir) / (Hex(key.data(), 16) + kEntrySuffix)).string();
}

std::optional<CacheEntry> CompilationCache::Lookup(const CacheKeyComponents& components, std::string& log) const {
  const std::string text = ComponentsText(components);
  const std::array<uint8_t, 32> key = Sha256(text);
  const std::string path = EntryPath(components);
  absl::StatusOr<std::string> bytes = ReadWhole(path, kMaxEntryBytes);
  if (!bytes.ok()) {
    if (!absl::IsNotFound(bytes.status())) {
      log += fmt::format("cache: corrupt entry {}: {}; recompiling\n", path, std::string(bytes.status().message()));
    }
    return std::nullopt;
  }
  absl::StatusOr<std::string_view> header = ParseHeader(*bytes, bytes->size());
  absl::Status problem = header.status();
  if (problem.ok() && GetLe(*bytes, kChecksumOffset, 8) != Checksum(*bytes)) {
    problem = absl::DataLossError("checksum mismatch");
  }
  if (problem.ok() && std::memcmp(bytes->data() + kKeyOffset, key.data(), key.size()) != 0) {
    problem = absl::DataLossError("the entry holds another key");
  }
  if (problem.ok() && *header != text) problem = absl::DataLossError("the entry's key components differ");
  if (!problem.ok()) {
    log += fmt::format("cache: corrupt entry {}: {}; recompiling\n", path, std::string(problem.message()));
    return std::nullopt;
  }
  CacheEntry entry;
  size_t check_size = GetLe(*bytes, 16, 4);
  entry.check = bytes->substr(kHeaderBytes + text.size(), check_size);
  entry.object = bytes->substr(kHeaderBytes + text.size() + check_size);
  // The mtime is the LRU clock: a hit makes the entry the most recently used.
  if (!options_.readonly) ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return entry;
}

void CompilationCache::Store(const CacheKeyComponents& components, const CacheEntry& entry, std::string& log) const {
  if (options_.readonly) {
    log += "cache: readonly, not stored\n";
    return;
  }
  const std::string text = ComponentsText(components);
  const std::string bytes = Serialize(Sha256(text), text, entry);
  if (bytes.size() > static_cast<uint64_t>(options_.max_bytes)) {
    log += fmt::format("cache: entry of {} bytes exceeds the cache's {} bytes, not stored\n", bytes.size(),
                       options_.max_bytes);
    return;
  }
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  const std::string path = EntryPath(components);
  // Unique among processes (pid, and a random tag for processes in other pid namespaces sharing the directory) and
  // threads (counter), so concurrent writers never share a temporary.
  static std::atomic<uint64_t> counter{0};
  static const uint32_t tag = std::random_device{}();
  std::string tmp = (fs::path(options_.dir) / fmt::format(".tmp-{}-{}-{:08x}-{}", fs::path(path).stem().string(),
                                                          ::getpid(), tag, counter.fetch_add(1)))
                        .string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    log += fmt::format("cache: cannot write {}: {}; not stored\n", tmp, std::strerror(errno));
    return;
  }
  bool ok = WriteAll(fd, bytes) && ::fsync(fd) == 0;
  ok &= ::close(fd) == 0;
  // rename is atomic: readers see the old entry, or none, or the whole new one.
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    log += fmt::format("cache: cannot write {}: {}; not stored\n", path, std::strerror(errno));
    ::unlink(tmp.c_str());
    return;
  }
  log += fmt::format("cache: stored {} ({} bytes)\n", path, bytes.size());
  Evict(options_, path, log);
}

std::string CompilationCache::ExplainMiss(const CacheKeyComponents& components) const {
  std::error_code ec;
  size_t best_diffs = SIZE_MAX;
  std::string best;
  int scanned = 0;
  // Every miss explains itself (callers decide whether to show it): a bounded scan keeps that cheap in a big cache.
  for (fs::directory_iterator it(options_.dir, ec), end; !ec && it != end && scanned < kMaxExplainScan;
       it.increment(ec)) {
    if (!IsEntryName(it->path().filename().string())) continue;
    ++scanned;
    std::error_code e;
    uint64_t size = it->file_size(e);
    if (e) continue;
    // Only the header (components are a few hundred bytes), so a miss in a full cache reads kilobytes per entry.
    absl::StatusOr<std::string> bytes = ReadWhole(it->path().string(), kHeaderBytes + (16 << 10));
    if (!bytes.ok()) continue;
    absl::StatusOr<std::string_view> header = ParseHeader(*bytes, size);
    if (!header.ok()) continue;
    CacheKeyComponents theirs = ParseComponents(*header);
    std::string diff;
    size_t diffs = 0;
    for (const auto& [name, value] : components) {
      auto other = std::find_if(theirs.begin(), theirs.end(), [&](const auto& c) { return c.first == name; });
      std::string clean = value;
      std::replace(clean.begin(), clean.end(), '\n', ' ');
      std::string cached = other == theirs.end() ? "<absent>" : other->second;
      if (cached == clean) continue;
      ++diffs;
      diff += fmt::format("  {}: cached '{}', now '{}'\n", name, cached, clean);
    }
    if (diffs < best_diffs) {
      best_diffs = diffs;
      best = fmt::format("cache: nearest entry {} differs in {} component{}:\n{}", it->path().filename().string(),
                         diffs, diffs == 1 ? "" : "s", diff);
    }
  }
  return best;
}

}  // namespace xlac::codegen
