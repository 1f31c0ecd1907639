#include "codegen/clang/kernel_cache.h"

#include <fstream>
#include <sstream>

#include "clang/Basic/Version.h"
#include "fmt/format.h"
#include "ir/status_macros.h"

namespace xlac::codegen {
namespace {

// Fields are length-prefixed ("<n>:<bytes>"), so any text (tabs, newlines in a source line) round-trips.
void Put(std::string& out, std::string_view field) { out += fmt::format("{}:{}", field.size(), field); }
void Put(std::string& out, int64_t value) { Put(out, std::to_string(value)); }

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  absl::StatusOr<std::string> Next() {
    size_t colon = bytes_.find(':', pos_);
    if (colon == std::string_view::npos || colon == pos_ || colon - pos_ > 12) return Bad();
    size_t n = 0;
    for (size_t i = pos_; i < colon; ++i) {
      if (bytes_[i] < '0' || bytes_[i] > '9') return Bad();
      n = n * 10 + static_cast<size_t>(bytes_[i] - '0');
    }
    if (n > bytes_.size() - colon - 1) return Bad();
    std::string field(bytes_.substr(colon + 1, n));
    pos_ = colon + 1 + n;
    return field;
  }
  absl::StatusOr<int64_t> NextInt() {
    absl::StatusOr<std::string> field = Next();
    if (!field.ok()) return field.status();
    int64_t v = 0;
    bool negative = !field->empty() && (*field)[0] == '-';
    if (field->size() == (negative ? 1u : 0u) || field->size() > 19) return Bad();
    for (size_t i = negative ? 1 : 0; i < field->size(); ++i) {
      if ((*field)[i] < '0' || (*field)[i] > '9') return Bad();
      v = v * 10 + ((*field)[i] - '0');
    }
    return negative ? -v : v;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  static absl::Status Bad() { return absl::DataLossError("malformed kernel library entry"); }
  std::string_view bytes_;
  size_t pos_ = 0;
};

constexpr char kFormat[] = "xlac-kernel-library-2";

void PutLoc(std::string& out, const KernelSourceLoc& loc) {
  Put(out, loc.file);
  Put(out, loc.line);
  Put(out, loc.col);
  Put(out, loc.line_text);
}

absl::StatusOr<KernelSourceLoc> ReadLoc(Reader& r) {
  XLAC_ASSIGN_OR_RETURN(auto file, r.Next());
  XLAC_ASSIGN_OR_RETURN(auto line, r.NextInt());
  XLAC_ASSIGN_OR_RETURN(auto col, r.NextInt());
  XLAC_ASSIGN_OR_RETURN(auto line_text, r.Next());
  return KernelSourceLoc{std::move(file), static_cast<int32_t>(line), static_cast<int32_t>(col), std::move(line_text)};
}

// A count no entry xlac wrote exceeds: anything larger is corruption, not a reason to allocate.
absl::StatusOr<int64_t> ReadCount(Reader& r) {
  XLAC_ASSIGN_OR_RETURN(int64_t n, r.NextInt());
  if (n < 0 || n > 100000) return absl::DataLossError("malformed kernel library entry");
  return n;
}

void PutParams(std::string& out, const std::vector<KernelBufferParam>& params) {
  Put(out, static_cast<int64_t>(params.size()));
  for (const KernelBufferParam& p : params) {
    Put(out, p.name);
    Put(out, static_cast<int64_t>(p.type));
    Put(out, p.rank);
    PutLoc(out, p.loc);
  }
}

absl::StatusOr<std::vector<KernelBufferParam>> ReadParams(Reader& r) {
  XLAC_ASSIGN_OR_RETURN(int64_t n, ReadCount(r));
  std::vector<KernelBufferParam> params(static_cast<size_t>(n));
  for (KernelBufferParam& p : params) {
    XLAC_ASSIGN_OR_RETURN(p.name, r.Next());
    XLAC_ASSIGN_OR_RETURN(int64_t type, r.NextInt());
    p.type = static_cast<PrimitiveType>(type);
    XLAC_ASSIGN_OR_RETURN(p.rank, r.NextInt());
    XLAC_ASSIGN_OR_RETURN(p.loc, ReadLoc(r));
  }
  return params;
}

CacheKeyComponents KernelCacheKey(const std::vector<std::string>& paths, const TargetInfo& target,
                                  const KernelCompileOptions& options, const std::vector<std::string>& contents) {
  std::string sources;
  for (size_t i = 0; i < paths.size(); ++i) sources += fmt::format("{}\n{}\n", paths[i], KernelInputHash(contents[i]));
  std::string flags;
  for (const std::string& dir : options.include_dirs) flags += "-I" + dir + " ";
  for (const std::string& define : options.defines) flags += "-D" + define + " ";
  return {
      {"kind", "kernel library"},    {"sources", Sha256Hex(sources)},
      {"flags", Sha256Hex(flags)},   {"clang", clang::getClangFullVersion()},
      {"triple", target.triple},     {"cpu", target.cpu},
      {"features", target.features}, {"xlac", XlacBuildIdentity()},
  };
}

bool ReadFile(const std::string& path, std::string& contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  contents = text.str();
  return true;
}

}  // namespace

std::string SerializeKernelLibrary(const KernelLibrary& library) {
  std::string out;
  Put(out, kFormat);
  Put(out, static_cast<int64_t>(library.inputs.size()));
  for (const auto& [name, hash] : library.inputs) {
    Put(out, name);
    Put(out, hash);
  }
  Put(out, static_cast<int64_t>(library.kernels.size()));
  for (const KernelSignature& k : library.kernels) {
    Put(out, k.target);
    Put(out, static_cast<int64_t>(k.kind));
    Put(out, k.symbol);
    Put(out, k.function);
    Put(out, static_cast<int64_t>(k.result_type));
    Put(out, static_cast<int64_t>(k.operand_types.size()));
    for (PrimitiveType t : k.operand_types) Put(out, static_cast<int64_t>(t));
    PutLoc(out, k.loc);
    PutParams(out, k.operands);
    PutParams(out, k.results);
    Put(out, k.attrs_struct);
    Put(out, k.attrs_size);
    Put(out, k.attrs_align);
    Put(out, static_cast<int64_t>(k.attrs.size()));
    for (const KernelAttrField& field : k.attrs) {
      Put(out, field.name);
      Put(out, static_cast<int64_t>(field.type));
      Put(out, field.offset);
      PutLoc(out, field.loc);
    }
    PutLoc(out, k.attrs_loc);
    Put(out, static_cast<int64_t>(k.sharding));
    Put(out, static_cast<int64_t>(k.batch_dims.size()));
    for (int64_t d : k.batch_dims) Put(out, d);
  }
  Put(out, library.fingerprint);
  Put(out, library.bitcode);
  return out;
}

absl::StatusOr<KernelLibrary> DeserializeKernelLibrary(std::string_view bytes) {
  Reader r(bytes);
  KernelLibrary library;
  XLAC_ASSIGN_OR_RETURN(auto format, r.Next());
  if (format != kFormat) return absl::DataLossError("kernel library entry of another format");
  XLAC_ASSIGN_OR_RETURN(auto num_inputs, r.NextInt());
  if (num_inputs < 0 || num_inputs > 100000) return absl::DataLossError("malformed kernel library entry");
  for (int64_t i = 0; i < num_inputs; ++i) {
    XLAC_ASSIGN_OR_RETURN(auto name, r.Next());
    XLAC_ASSIGN_OR_RETURN(auto hash, r.Next());
    library.inputs.emplace_back(std::move(name), std::move(hash));
  }
  XLAC_ASSIGN_OR_RETURN(auto num_kernels, r.NextInt());
  if (num_kernels < 0 || num_kernels > 100000) return absl::DataLossError("malformed kernel library entry");
  for (int64_t i = 0; i < num_kernels; ++i) {
    KernelSignature k;
    XLAC_ASSIGN_OR_RETURN(auto target, r.Next());
    XLAC_ASSIGN_OR_RETURN(auto kind, r.NextInt());
    XLAC_ASSIGN_OR_RETURN(auto symbol, r.Next());
    XLAC_ASSIGN_OR_RETURN(auto function, r.Next());
    XLAC_ASSIGN_OR_RETURN(auto result_type, r.NextInt());
    XLAC_ASSIGN_OR_RETURN(auto num_operands, r.NextInt());
    if ((kind != static_cast<int64_t>(KernelKind::kElementwise) && kind != static_cast<int64_t>(KernelKind::kBuffer)) ||
        num_operands < 0 || num_operands > 4096) {
      return absl::DataLossError("malformed kernel library entry");
    }
    k.target = std::move(target);
    k.kind = static_cast<KernelKind>(kind);
    k.symbol = std::move(symbol);
    k.function = std::move(function);
    k.result_type = static_cast<PrimitiveType>(result_type);
    for (int64_t j = 0; j < num_operands; ++j) {
      XLAC_ASSIGN_OR_RETURN(auto type, r.NextInt());
      k.operand_types.push_back(static_cast<PrimitiveType>(type));
    }
    XLAC_ASSIGN_OR_RETURN(k.loc, ReadLoc(r));
    XLAC_ASSIGN_OR_RETURN(k.operands, ReadParams(r));
    XLAC_ASSIGN_OR_RETURN(k.results, ReadParams(r));
    XLAC_ASSIGN_OR_RETURN(k.attrs_struct, r.Next());
    XLAC_ASSIGN_OR_RETURN(k.attrs_size, r.NextInt());
    XLAC_ASSIGN_OR_RETURN(k.attrs_align, r.NextInt());
    XLAC_ASSIGN_OR_RETURN(int64_t num_attrs, ReadCount(r));
    for (int64_t j = 0; j < num_attrs; ++j) {
      KernelAttrField field;
      XLAC_ASSIGN_OR_RETURN(field.name, r.Next());
      XLAC_ASSIGN_OR_RETURN(int64_t type, r.NextInt());
      field.type = static_cast<PrimitiveType>(type);
      XLAC_ASSIGN_OR_RETURN(field.offset, r.NextInt());
      XLAC_ASSIGN_OR_RETURN(field.loc, ReadLoc(r));
      k.attrs.push_back(std::move(field));
    }
    XLAC_ASSIGN_OR_RETURN(k.attrs_loc, ReadLoc(r));
    XLAC_ASSIGN_OR_RETURN(int64_t sharding, r.NextInt());
    if (sharding < 0 || sharding > static_cast<int64_t>(KernelShardingRule::kBatchDims)) {
      return absl::DataLossError("malformed kernel library entry");
    }
    k.sharding = static_cast<KernelShardingRule>(sharding);
    XLAC_ASSIGN_OR_RETURN(int64_t num_batch_dims, ReadCount(r));
    for (int64_t j = 0; j < num_batch_dims; ++j) {
      XLAC_ASSIGN_OR_RETURN(int64_t d, r.NextInt());
      k.batch_dims.push_back(d);
    }
    library.kernels.push_back(std::move(k));
  }
  XLAC_ASSIGN_OR_RETURN(auto fingerprint, r.Next());
  XLAC_ASSIGN_OR_RETURN(auto bitcode, r.Next());
  if (!r.done()) return absl::DataLossError("malformed kernel library entry");
  library.fingerprint = std::move(fingerprint);
  library.bitcode = std::move(bitcode);
  return library;
}

absl::StatusOr<KernelLibrary> CompileKernelSourcesCached(const std::vector<std::string>& paths,
                                                         const TargetInfo& target, const KernelCompileOptions& options,
                                                         const CacheOptions& cache, std::string& log) {
  if (cache.dir.empty() || paths.empty()) return CompileKernelSources(paths, target, options);
  std::vector<std::string> contents(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    // An unreadable source is CompileKernelSources' error to report.
    if (!ReadFile(paths[i], contents[i])) return CompileKernelSources(paths, target, options);
  }
  CompilationCache store(cache);
  CacheKeyComponents key = KernelCacheKey(paths, target, options, contents);
  if (std::optional<CacheEntry> entry = store.Lookup(key, log)) {
    absl::StatusOr<KernelLibrary> library = DeserializeKernelLibrary(entry->object);
    bool valid = library.ok();
    for (size_t i = 0; valid && i < library->inputs.size(); ++i) {
      std::string text;
      valid = ReadFile(library->inputs[i].first, text) && KernelInputHash(text) == library->inputs[i].second;
      if (!valid)
        log += fmt::format("kernel cache: {} changed since the entry was written\n", library->inputs[i].first);
    }
    if (valid) {
      log += fmt::format("kernel cache: hit {}\n", store.EntryPath(key));
      return library;
    }
  }
  absl::StatusOr<KernelLibrary> library = CompileKernelSources(paths, target, options);
  if (library.ok()) store.Store(key, CacheEntry{"", SerializeKernelLibrary(*library)}, log);
  return library;
}

}  // namespace xlac::codegen
