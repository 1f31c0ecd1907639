// Small sub-grammar formatters of the HLO printer: escaping, JSON-dict detection, shapes, windows, convolution
// dimension labels, padding, slices, aliasing and frontend attributes (xla/window_util.cc, xla/util.cc,
// xla/shape_util.cc, xla/hlo/parser/hlo_lexer.cc, xla/hlo/ir/hlo_instruction.cc).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/hlo/lexer.h"
#include "frontend/hlo/print_internal.h"

namespace xlac::hlo_print {
namespace {

// Skips whitespace and /*...*/ or //... comments, as XLA's HloLexer does between tokens.
size_t SkipTrivia(std::string_view s, size_t pos) {
  while (pos < s.size()) {
    char c = s[pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos;
    } else if (c == '/' && pos + 1 < s.size() && s[pos + 1] == '*') {
      size_t end = s.find("*/", pos + 2);
      if (end == std::string_view::npos) return pos;  // an unterminated comment is a lexer error
      pos = end + 2;
    } else if (c == '/' && pos + 1 < s.size() && s[pos + 1] == '/') {
      size_t end = s.find('\n', pos);
      pos = end == std::string_view::npos ? s.size() : end + 1;
    } else {
      break;
    }
  }
  return pos;
}

}  // namespace

std::string CEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

bool LexesAsJsonDict(std::string_view s) {
  size_t pos = SkipTrivia(s, 0);
  if (pos >= s.size() || s[pos] != '{') return false;
  int64_t depth = 1;
  ++pos;
  while (pos < s.size() && depth > 0) {
    char c = s[pos];
    if (c == '"') {
      // "([^"\\]|\\.)*" where '.' does not match a newline.
      ++pos;
      bool closed = false;
      while (pos < s.size()) {
        if (s[pos] == '\\') {
          if (pos + 1 >= s.size() || s[pos + 1] == '\n') return false;
          pos += 2;
        } else if (s[pos] == '"') {
          ++pos;
          closed = true;
          break;
        } else {
          ++pos;
        }
      }
      if (!closed) return false;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') --depth;
    ++pos;
  }
  if (depth != 0) return false;
  return SkipTrivia(s, pos) == s.size();
}

std::string FrontendAttributesToString(const StringMap& attributes) {
  std::vector<std::pair<std::string, std::string>> sorted(attributes.begin(), attributes.end());
  std::sort(sorted.begin(), sorted.end());
  std::string out = "{";
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ",";
    const auto& [key, value] = sorted[i];
    if (LexesAsJsonDict(value)) {
      absl::StrAppend(&out, key, "=", value);
    } else {
      absl::StrAppend(&out, key, "=\"", CEscape(value), "\"");
    }
  }
  return out + "}";
}

std::string PrintShape(const Shape& shape, bool print_layout) {
  if (shape.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (i > 0) out += i % 5 == 0 ? absl::StrCat(", /*index=", i, "*/") : ", ";
      out += PrintShape(shape.tuple_shapes[i], print_layout);
    }
    return out + ")";
  }
  if (print_layout && (shape.IsArray() || shape.IsBuffer()) && !shape.layout) {
    Shape with_layout = shape;
    with_layout.EnsureLayout();
    return ShapeToString(with_layout, true);
  }
  return ShapeToString(shape, print_layout);
}

std::string WindowToString(const Window& window) {
  std::string out;
  auto add_field = [&](std::string_view heading, auto format) {
    out += heading;
    out += "=";
    for (size_t i = 0; i < window.dimensions.size(); ++i) {
      if (i > 0) out += "x";
      out += format(window.dimensions[i]);
    }
  };
  auto any = [&](auto pred) { return std::any_of(window.dimensions.begin(), window.dimensions.end(), pred); };
  if (!window.dimensions.empty()) add_field("size", [](const WindowDimension& d) { return std::to_string(d.size); });
  if (any([](const WindowDimension& d) { return d.stride != 1; })) {
    add_field(" stride", [](const WindowDimension& d) { return std::to_string(d.stride); });
  }
  if (any([](const WindowDimension& d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    add_field(" pad", [](const WindowDimension& d) { return absl::StrCat(d.padding_low, "_", d.padding_high); });
  }
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; })) {
    add_field(" lhs_dilate", [](const WindowDimension& d) { return std::to_string(d.base_dilation); });
  }
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; })) {
    add_field(" rhs_dilate", [](const WindowDimension& d) { return std::to_string(d.window_dilation); });
  }
  if (any([](const WindowDimension& d) { return d.window_reversal; })) {
    add_field(" rhs_reversal", [](const WindowDimension& d) { return std::string(d.window_reversal ? "1" : "0"); });
  }
  return out;
}

std::string ConvDnumsToString(const ConvolutionDimensionNumbers& d) {
  // Each operand's labels: one slot per logical dimension, '?' where no dimension number points.
  auto labels = [](int64_t a, char a_label, int64_t b, char b_label, const std::vector<int64_t>& spatial) {
    int64_t len = std::max(a, b);
    for (int64_t s : spatial) len = std::max(len, s);
    // Dimension numbers come from parsed labels, so they are small; the cap only bounds hostile IR.
    len = std::min<int64_t>(len, int64_t{1} << 16);
    std::vector<std::string> out(static_cast<size_t>(std::max<int64_t>(len + 1, 0)), "?");
    auto set = [&](int64_t i, std::string v) {
      if (i >= 0 && i < static_cast<int64_t>(out.size())) out[i] = std::move(v);
    };
    set(a, std::string(1, a_label));
    set(b, std::string(1, b_label));
    for (size_t i = 0; i < spatial.size(); ++i) set(spatial[i], std::to_string(i));
    return absl::StrJoin(out, "");
  };
  return absl::StrCat(
      labels(d.input_batch_dimension, 'b', d.input_feature_dimension, 'f', d.input_spatial_dimensions), "_",
      labels(d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension, 'o',
             d.kernel_spatial_dimensions),
      "->", labels(d.output_batch_dimension, 'b', d.output_feature_dimension, 'f', d.output_spatial_dimensions));
}

std::string PaddingConfigToString(const PaddingConfig& padding) {
  bool has_interior = std::any_of(padding.dimensions.begin(), padding.dimensions.end(),
                                  [](const PaddingDimension& d) { return d.interior_padding != 0; });
  std::vector<std::string> dims;
  for (const PaddingDimension& d : padding.dimensions) {
    std::string s = absl::StrCat(d.edge_padding_low, "_", d.edge_padding_high);
    if (has_interior) absl::StrAppend(&s, "_", d.interior_padding);
    dims.push_back(std::move(s));
  }
  return absl::StrJoin(dims, "x");
}

std::string SliceRangesToString(const std::vector<SliceRange>& slices) {
  bool omit_stride = std::all_of(slices.begin(), slices.end(), [](const SliceRange& r) { return r.stride == 1; });
  std::vector<std::string> parts;
  for (const SliceRange& r : slices) {
    std::string s = absl::StrCat("[", r.start, ":", r.limit);
    if (!omit_stride) absl::StrAppend(&s, ":", r.stride);
    parts.push_back(s + "]");
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string AliasingToString(const std::vector<OutputOperandAlias>& aliasing) {
  std::vector<std::string> parts;
  for (const OutputOperandAlias& a : aliasing) {
    parts.push_back(absl::StrCat(ShapeIndexToString(a.output_index), ": (", a.operand, ", ",
                                 ShapeIndexToString(a.operand_index), ")"));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string PrintableName(std::string_view name, bool after_percent) {
  auto identifier_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  };
  // The parser reads a name after '%' as a letter or '_' and identifier characters, and a bare name only when it
  // also lexes as an identifier (not a keyword such as shard_as, a type such as f32, nan, or dim labels).
  auto plain = [&](std::string_view n) {
    if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_') ||
        !std::all_of(n.begin(), n.end(), identifier_char)) {
      return false;
    }
    if (after_percent) return true;
    hlo::Lexer lexer(n);
    return lexer.Lex() == hlo::TokKind::kIdent && lexer.tok().str == n && lexer.Lex() == hlo::TokKind::kEof;
  };
  if (plain(name)) return std::string(name);
  // Names made from other sources (StableHLO symbols, fuzzed text) may be anything: keep what HLO allows.
  std::string out;
  for (char c : name) out += identifier_char(c) ? c : '_';
  if (!plain(out)) out = "_" + out;
  return out;
}

std::string NameRef(std::string_view name, const HloPrintOptions& options) {
  return options.print_percent ? "%" + PrintableName(name, true) : PrintableName(name, false);
}

}  // namespace xlac::hlo_print
