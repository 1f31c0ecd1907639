// xla-run's entry arguments: decoded from --input .npy files (mapped from the page cache) or seeded
// (SeededParameterValue, run_seeded.cc), and the module files it reads.
#include "tools/lib/run_arguments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "frontend/hlo/printer.h"
#include "runtime/harness/npy.h"
#include "tools/lib/run_driver.h"

namespace xlac {

namespace fs = std::filesystem;

bool ReadFile(const std::string& path, std::string& contents, std::string& error) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    error = "'" + path + "' is a directory";
    return false;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  // One read into the string when the size is known (a regular file), rather than a stringstream's copies: .npy
  // inputs can be hundreds of MB. Pipes and the like are read to their end.
  std::error_code size_ec;
  const uintmax_t size = fs::is_regular_file(path, size_ec) ? fs::file_size(path, size_ec) : 0;
  if (!size_ec && size > 0) {
    contents.resize(static_cast<size_t>(size));
    file.read(contents.data(), static_cast<std::streamsize>(size));
    if (file.gcount() != static_cast<std::streamsize>(size)) {
      error = "cannot read '" + path + "'";
      return false;
    }
    return true;
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  if (file.bad()) {
    error = "cannot read '" + path + "'";
    return false;
  }
  contents = std::move(buffer).str();
  return true;
}

namespace {

// A regular file mapped read-only. .npy inputs are decoded from the page cache this way instead of being read into
// fresh memory first: for the BERT layer's 31 MB of inputs that copy and its page faults were half of the start.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  // False (and nothing mapped) for anything but a non-empty regular file that maps; the caller then reads it.
  bool Map(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    void* data = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      data = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    }
    ::close(fd);
    if (data == MAP_FAILED) return false;
    data_ = data;
    size_ = static_cast<size_t>(st.st_size);
    return true;
  }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Seeded parameters are generated in memory; beyond this the run could only fail later (or exhaust memory).
constexpr int64_t kMaxGeneratedBytes = int64_t{4} << 30;

// Bytes of all arrays in `shape` (tuples recursively); nullopt on overflow.
std::optional<int64_t> BytesOf(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? shape.ByteSizeOf() : std::optional<int64_t>(0);
  int64_t total = 0;
  for (const Shape& element : shape.tuple_shapes) {
    std::optional<int64_t> bytes = BytesOf(element);
    if (!bytes || *bytes > kMaxGeneratedBytes) return std::nullopt;
    total += *bytes;
  }
  return total;
}

}  // namespace

std::vector<Shape> InputShapes(const RunOptions& options) {
  std::vector<Shape> shapes;
  for (const std::string& path : options.inputs) {
    // The header is at the start; a version 1 header is at most 64 KiB, and numpy writes far less for any shape.
    std::ifstream file(path, std::ios::binary);
    std::string prefix(size_t{1} << 17, '\0');
    if (!file.read(prefix.data(), static_cast<std::streamsize>(prefix.size())) && !file.eof()) return {};
    prefix.resize(static_cast<size_t>(file.gcount()));
    absl::StatusOr<harness::NpyHeader> header = harness::ParseNpyHeader(prefix);
    if (!header.ok()) return {};
    Shape shape;
    shape.dimensions = header->shape;
    shape.dynamic_dimensions.assign(header->shape.size(), false);
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

bool BuildArguments(const RunOptions& options, const Computation& entry, std::vector<Literal>& args,
                    std::ostream& err) {
  const int64_t count = entry.parameter_count();
  if (options.inputs.empty()) {
    int64_t total = 0;
    for (int64_t i = 0; i < count; ++i) {
      const Shape& shape = entry.parameter(i)->shape();
      std::optional<int64_t> bytes = BytesOf(shape);
      if (!bytes || *bytes > kMaxGeneratedBytes) {
        err << "xla-run: error: parameter " << i << " (" << entry.parameter(i)->name() << ") has shape "
            << ShapeToString(shape, false) << ", too large to fill with seeded values\n";
        return false;
      }
      total += *bytes;
    }
    // Each parameter's values depend only on (seed, index), so large inputs are generated on every CPU the run may
    // use (a cache hit's start is mostly this); small ones are not worth a thread.
    args.resize(static_cast<size_t>(count));
    const int64_t workers = std::min<int64_t>(
        {count, options.threads > 0 ? options.threads : std::max<int64_t>(std::thread::hardware_concurrency(), 1),
         std::max<int64_t>(total >> 22, 1)});
    // Largest first, so the workers finish together.
    std::vector<std::pair<int64_t, int64_t>> order;  // (bytes, parameter)
    for (int64_t i = 0; i < count; ++i) order.emplace_back(*BytesOf(entry.parameter(i)->shape()), i);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::atomic<size_t> next{0};
    auto generate = [&] {
      for (size_t n; (n = next.fetch_add(1)) < order.size();) {
        const int64_t i = order[n].second;
        args[static_cast<size_t>(i)] = SeededParameterValue(entry.parameter(i)->shape(), options.seed, i);
      }
    };
    std::vector<std::thread> helpers;
    for (int64_t w = 1; w < workers; ++w) helpers.emplace_back(generate);
    generate();
    for (std::thread& helper : helpers) helper.join();
    return true;
  }
  if (static_cast<int64_t>(options.inputs.size()) != count) {
    err << "xla-run: error: the entry computation " << entry.name() << " takes " << count << " parameter"
        << (count == 1 ? "" : "s") << ", but " << options.inputs.size() << " --input file"
        << (options.inputs.size() == 1 ? " was" : "s were") << " given\n";
    return false;
  }
  for (int64_t i = 0; i < count; ++i) {
    const std::string& path = options.inputs[static_cast<size_t>(i)];
    const Shape& want = entry.parameter(i)->shape();
    std::string prefix = "xla-run: error: input " + std::to_string(i) + " ('" + path + "'): ";
    if (!want.IsArray()) {
      err << prefix << "parameter " << i << " (" << entry.parameter(i)->name() << ") has shape "
          << ShapeToString(want, false) << ", which a .npy file cannot hold; omit --input to use seeded values\n";
      return false;
    }
    MappedFile mapped;
    std::string read, error;
    if (!mapped.Map(path) && !ReadFile(path, read, error)) {
      err << prefix << error << "\n";
      return false;
    }
    absl::StatusOr<Literal> value =
        harness::NpyToLiteral(read.empty() ? mapped.bytes() : std::string_view(read), want.element_type);
    if (!value.ok()) {
      err << prefix << value.status().message() << "; parameter " << i << " (" << entry.parameter(i)->name()
          << ") expects " << ShapeToString(want, false) << "\n";
      return false;
    }
    if (value->shape().dimensions != want.dimensions) {
      err << prefix << "has shape " << harness::NpyShapeString(value->shape().dimensions) << ", but parameter " << i
          << " (" << entry.parameter(i)->name() << ") expects " << ShapeToString(want, false) << " (numpy shape "
          << harness::NpyShapeString(want.dimensions) << ")\n";
      return false;
    }
    // Take the parameter's own shape (layout, dynamic bounds) so the interpreter sees exactly what it declares.
    // The decoded array is row-major: it already is the parameter when that declares the default layout (no copy).
    auto row_major = [](const Shape& s) { return !s.layout || *s.layout == Layout::Default(s.rank()); };
    if (value->shape() == want || (value->shape().Compatible(want) && row_major(want) && row_major(value->shape()))) {
      args.push_back(*std::move(value));
      continue;
    }
    Literal arg(want);
    if (value->byte_size() > 0) std::memcpy(arg.mutable_raw_data(), value->raw_data(), value->byte_size());
    args.push_back(std::move(arg));
  }
  return true;
}

}  // namespace xlac
