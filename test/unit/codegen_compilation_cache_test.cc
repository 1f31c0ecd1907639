// The persistent compilation cache through the JIT (codegen/compilation_cache.h, docs/cache.md): hits give the
// same results as compiling, corrupt and truncated entries are recompiled, readonly never writes, LRU eviction,
// concurrent writers, and the miss explanation.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "codegen/compilation_cache.h"
#include "codegen/jit.h"
#include "codegen_test_util.h"
#include "gtest/gtest.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::codegen {
namespace {

namespace fs = std::filesystem;

// A dot, a custom-call (whose site the cached object must still find) and an elementwise op.
constexpr char kModule[] = R"(
HloModule cached
ENTRY e {
  p0 = f32[16,32] parameter(0)
  p1 = f32[32,8] parameter(1)
  d = f32[16,8] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[16,8] custom-call(d), custom_call_target="twice"
  ROOT r = f32[16,8] tanh(c)
}
)";

// The same computation written differently: other spacing, a comment. Its canonical text is kModule's.
constexpr char kModuleReformatted[] = R"(HloModule cached

// same module, other formatting
ENTRY e {
  p0 = f32[16,32]   parameter(0)
  p1 = f32[32,8] parameter(1)
  d = f32[16,8] dot(p0,   p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[16,8] custom-call(d), custom_call_target="twice"
  ROOT r = f32[16,8] tanh(c)
})";

constexpr char kOtherModule[] = R"(
HloModule other
ENTRY e {
  p0 = f32[64] parameter(0)
  ROOT r = f32[64] exponential(p0)
}
)";

class CompilationCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("xlac_cache_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }

  JitOptions Options(bool readonly = false, int64_t max_bytes = int64_t{1} << 30) const {
    JitOptions options;
    options.cache.dir = dir_.string();
    options.cache.readonly = readonly;
    options.cache.max_bytes = max_bytes;
    options.custom_call_handler = [](const Instruction& inst,
                                     const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
      EXPECT_EQ(inst.StringAttr("custom_call_target"), "twice");
      Literal out(operands[0]->shape());
      const auto* in = reinterpret_cast<const float*>(operands[0]->raw_data());
      auto* o = reinterpret_cast<float*>(out.mutable_raw_data());
      for (int64_t i = 0; i < out.shape().ElementCount().value_or(0); ++i) o[i] = 2 * in[i];
      return out;
    };
    return options;
  }

  // Compiles `text`, runs it on seeded arguments and returns the result bytes; `hit` and `log` report the cache.
  std::string CompileAndRun(const std::string& text, const JitOptions& options, bool* hit = nullptr,
                            std::string* log = nullptr) {
    std::unique_ptr<Module> module = testing::ParseAndVerify(text);
    if (module == nullptr) return "";
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
    EXPECT_TRUE(exe.ok()) << exe.status();
    if (!exe.ok()) return "";
    if (hit != nullptr) *hit = (*exe)->cache_hit();
    if (log != nullptr) *log = (*exe)->cache_log();
    std::vector<Literal> args;
    for (size_t i = 0; i < (*exe)->parameter_shapes().size(); ++i) {
      args.push_back(interp::MakeRandomLiteral((*exe)->parameter_shapes()[i], 7 + i));
    }
    absl::StatusOr<std::vector<Literal>> results = (*exe)->Run(args);
    EXPECT_TRUE(results.ok()) << results.status();
    if (!results.ok()) return "";
    const Literal& r = (*results)[0];
    return std::string(reinterpret_cast<const char*>(r.raw_data()), static_cast<size_t>(r.byte_size()));
  }

  std::vector<fs::path> Entries() const {
    std::vector<fs::path> entries;
    std::error_code ec;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    return entries;
  }

  fs::path dir_;
};

TEST_F(CompilationCacheTest, HitGivesTheSameResultsAsCompiling) {
  JitOptions no_cache = Options();
  no_cache.cache.dir.clear();
  const std::string reference = CompileAndRun(kModule, no_cache);
  ASSERT_FALSE(reference.empty());
  bool hit = true;
  std::string log;
  EXPECT_EQ(CompileAndRun(kModule, Options(), &hit, &log), reference);
  EXPECT_FALSE(hit);
  EXPECT_NE(log.find("cache: miss"), std::string::npos) << log;
  EXPECT_NE(log.find("cache: stored"), std::string::npos) << log;
  ASSERT_EQ(Entries().size(), 1u);
  // Formatting and comments do not change the key.
  EXPECT_EQ(CompileAndRun(kModuleReformatted, Options(), &hit, &log), reference);
  EXPECT_TRUE(hit) << log;
  EXPECT_NE(log.find("cache: hit"), std::string::npos) << log;
  EXPECT_EQ(Entries().size(), 1u);
}

TEST_F(CompilationCacheTest, MissExplainsTheDifferingComponent) {
  CompileAndRun(kModule, Options());
  JitOptions o1 = Options();
  o1.compile.opt_level = 1;
  bool hit = true;
  std::string log;
  CompileAndRun(kModule, o1, &hit, &log);
  EXPECT_FALSE(hit);
  EXPECT_NE(log.find("differs in 1 component:"), std::string::npos) << log;
  EXPECT_NE(log.find("opt_level: cached '2', now '1'"), std::string::npos) << log;
}

// Flips one byte at `offset` (from the end when negative) of the only entry.
void FlipByte(const fs::path& path, int64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  int64_t size = f.tellg();
  int64_t at = offset < 0 ? size + offset : offset;
  f.seekg(at);
  char c = 0;
  f.read(&c, 1);
  c ^= 0x10;
  f.seekp(at);
  f.write(&c, 1);
}

TEST_F(CompilationCacheTest, FlippedByteIsDetectedAndRecompiled) {
  const std::string reference = CompileAndRun(kModule, Options());
  ASSERT_EQ(Entries().size(), 1u);
  const fs::path entry = Entries()[0];
  const uint64_t size = fs::file_size(entry);
  // A byte in the object code, one in the header's key components and one in the length field.
  for (int64_t offset : {int64_t{-100}, int64_t{80}, int64_t{20}}) {
    SCOPED_TRACE(offset);
    FlipByte(entry, offset);
    bool hit = true;
    std::string log;
    EXPECT_EQ(CompileAndRun(kModule, Options(), &hit, &log), reference);
    EXPECT_FALSE(hit);
    EXPECT_NE(log.find("cache: corrupt entry"), std::string::npos) << log;
    EXPECT_NE(log.find("cache: stored"), std::string::npos) << log;  // replaced
    EXPECT_EQ(fs::file_size(entry), size);
    EXPECT_EQ(CompileAndRun(kModule, Options(), &hit, &log), reference);
    EXPECT_TRUE(hit) << log;
  }
}

TEST_F(CompilationCacheTest, TruncatedEntryIsDetectedAndRecompiled) {
  const std::string reference = CompileAndRun(kModule, Options());
  ASSERT_EQ(Entries().size(), 1u);
  const fs::path entry = Entries()[0];
  for (uint64_t keep : {fs::file_size(entry) / 2, uint64_t{10}, uint64_t{0}}) {
    SCOPED_TRACE(keep);
    fs::resize_file(entry, keep);
    bool hit = true;
    std::string log;
    EXPECT_EQ(CompileAndRun(kModule, Options(), &hit, &log), reference);
    EXPECT_FALSE(hit);
    EXPECT_NE(log.find("cache: corrupt entry"), std::string::npos) << log;
    EXPECT_EQ(CompileAndRun(kModule, Options(), &hit, &log), reference);
    EXPECT_TRUE(hit) << log;
  }
}

TEST_F(CompilationCacheTest, ReadonlyNeverWrites) {
  // A miss in a readonly cache creates nothing, not even the directory.
  bool hit = true;
  std::string log;
  const std::string reference = CompileAndRun(kModule, Options(/*readonly=*/true), &hit, &log);
  EXPECT_FALSE(hit);
  EXPECT_NE(log.find("readonly, not stored"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_));
  // Filled by a writer, then read-only: hits, and neither the entry's mtime (the LRU clock) nor the directory change.
  CompileAndRun(kModule, Options());
  ASSERT_EQ(Entries().size(), 1u);
  const fs::path entry = Entries()[0];
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(5);
  fs::last_write_time(entry, old_time);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_EQ(CompileAndRun(kModule, Options(/*readonly=*/true), &hit, &log), reference);
  EXPECT_TRUE(hit) << log;
  EXPECT_EQ(fs::last_write_time(entry), old_time);
  // A corrupt entry in a readonly cache is recompiled but left as it is.
  fs::permissions(dir_, fs::perms::owner_all);
  FlipByte(entry, -50);
  fs::last_write_time(entry, old_time);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_EQ(CompileAndRun(kModule, Options(/*readonly=*/true), &hit, &log), reference);
  EXPECT_FALSE(hit);
  EXPECT_NE(log.find("cache: corrupt entry"), std::string::npos) << log;
  EXPECT_EQ(fs::last_write_time(entry), old_time);
  EXPECT_EQ(Entries().size(), 1u);
}

TEST_F(CompilationCacheTest, EvictsLeastRecentlyUsed) {
  CompileAndRun(kModule, Options());
  ASSERT_EQ(Entries().size(), 1u);
  const fs::path first = Entries()[0];
  JitOptions exact = Options();
  exact.compile.exact = true;
  CompileAndRun(kModule, exact);
  ASSERT_EQ(Entries().size(), 2u);
  fs::path second = Entries()[0] == first ? Entries()[1] : Entries()[0];
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(first, now - std::chrono::hours(2));
  fs::last_write_time(second, now - std::chrono::hours(1));
  // A hit on the older entry makes it the most recently used.
  bool hit = false;
  CompileAndRun(kModule, Options(), &hit);
  EXPECT_TRUE(hit);
  EXPECT_GT(fs::last_write_time(first), now - std::chrono::minutes(1));
  // A third entry in a cache with room for two: the least recently used (`second`) goes. The third entry's size comes
  // from a cache of its own, so that the room holds `first` and whichever of the other two is larger.
  JitOptions scratch = Options();
  scratch.cache.dir = dir_.string() + "_scratch";
  CompileAndRun(kOtherModule, scratch);
  uintmax_t other = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(scratch.cache.dir)) other += entry.file_size();
  fs::remove_all(scratch.cache.dir);
  ASSERT_GT(other, 100u);
  const int64_t room = static_cast<int64_t>(fs::file_size(first) + std::max(fs::file_size(second), other)) + 100;
  std::string log;
  CompileAndRun(kOtherModule, Options(false, room), &hit, &log);
  EXPECT_FALSE(hit);
  EXPECT_NE(log.find("evicted " + second.filename().string()), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(first));
  EXPECT_FALSE(fs::exists(second));
  EXPECT_EQ(Entries().size(), 2u);
  // An entry larger than the whole cache is not stored.
  JitOptions tiny = Options(false, 100);
  tiny.compile.opt_level = 1;
  CompileAndRun(kModule, tiny, &hit, &log);
  EXPECT_FALSE(hit);
  EXPECT_NE(log.find("exceeds the cache's 100 bytes"), std::string::npos) << log;
}

TEST_F(CompilationCacheTest, ConcurrentCompilesOfOneModuleShareTheCache) {
  JitOptions no_cache = Options();
  no_cache.cache.dir.clear();
  const std::string reference = CompileAndRun(kModule, no_cache);
  constexpr int kThreads = 4;
  std::vector<std::string> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { results[t] = CompileAndRun(kModule, Options()); });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& r : results) EXPECT_EQ(r, reference);
  // One whole entry, no temporaries left behind, and it hits.
  ASSERT_EQ(Entries().size(), 1u);
  EXPECT_EQ(Entries()[0].extension(), CompilationCache::kEntrySuffix);
  bool hit = false;
  EXPECT_EQ(CompileAndRun(kModule, Options(), &hit), reference);
  EXPECT_TRUE(hit);
}

TEST(CompilationCacheKeyTest, BuildIdentityAndVersionsAreKnown) {
  EXPECT_NE(XlacBuildIdentity(), "unknown");
  EXPECT_FALSE(LlvmVersionString().empty());
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace xlac::codegen
