// Attribute values: scalars and lists, window=, dim_labels=, padding=, slice=, replica_groups=, aliasing, metadata=,
// frontend_attributes=, backend_config= and the whole-instruction attributes kept as raw text.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "frontend/hlo/parse_impl.h"

namespace xlac::hlo {
namespace {

// Splits "1x2x3" / "0_1" into integers; false on overflow or malformed pieces.
bool SplitToInt64s(std::string_view text, char delim, std::vector<int64_t>* out) {
  size_t start = 0;
  while (true) {
    size_t end = text.find(delim, start);
    std::string_view piece = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), value);
    if (piece.empty() || ec != std::errc() || ptr != piece.data() + piece.size()) return false;
    out->push_back(value);
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

std::vector<std::string_view> Split(std::string_view text, char delim) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(delim, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// Cap on the device count of iota lists, so that expanding them later cannot exhaust memory.

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Scalars and lists

bool Parser::ParseInt64(int64_t* out) {
  if (kind() != TokKind::kInt) return TokenError("expects integer");
  if (tok().int_exceeds_int64) return TokenError("integer out of range for int64");
  *out = tok().int_val;
  Next();
  return true;
}

bool Parser::ParseInt32(int64_t* out) {
  size_t at = pos();
  if (!ParseInt64(out)) return false;
  if (*out < std::numeric_limits<int32_t>::min() || *out > std::numeric_limits<int32_t>::max()) {
    return Error(at, "value out of range for int32");
  }
  return true;
}

bool Parser::ParseDouble(double* out) {
  switch (kind()) {
    case TokKind::kDecimal:
      if (std::isinf(tok().decimal_val)) {
        return TokenError(fmt::format("constant is out of range for double (+/-{}) and so is unparsable",
                                      std::numeric_limits<double>::max()));
      }
      *out = tok().decimal_val;
      break;
    case TokKind::kInt:
      if (tok().int_exceeds_int64) {
        *out = static_cast<double>(static_cast<uint64_t>(tok().int_val));
      } else if (tok().int_val == 0 && lexer_.text()[tok().begin] == '-') {
        *out = -0.0;  // "-0" keeps its sign (XLA prints negative zero that way)
      } else {
        *out = static_cast<double>(tok().int_val);
      }
      break;
    case TokKind::kw_inf:
      *out = std::numeric_limits<double>::infinity();
      break;
    case TokKind::kNegInf:
      *out = -std::numeric_limits<double>::infinity();
      break;
    default:
      return TokenError("expects decimal or integer");
  }
  Next();
  return true;
}

bool Parser::ParseBool(bool* out) {
  if (kind() != TokKind::kw_true && kind() != TokKind::kw_false) return TokenError("expects true or false");
  *out = kind() == TokKind::kw_true;
  Next();
  return true;
}

bool Parser::ParseString(std::string* out) {
  if (kind() != TokKind::kString) return TokenError("expects string");
  *out = tok().str;
  Next();
  return true;
}

bool Parser::ParseName(std::string* out) {
  if (kind() != TokKind::kIdent && kind() != TokKind::kName) return TokenError("expects name");
  *out = tok().str;
  Next();
  return true;
}

bool Parser::ParseAttributeName(std::string* out) {
  if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name (name=)");
  *out = tok().str;
  Next();
  return true;
}

bool Parser::ParseList(TokKind start, TokKind end, TokKind delim, const std::function<bool()>& parse_item) {
  if (!Expect(start, "to start a list")) return false;
  if (kind() != end) {
    do {
      if (!parse_item()) return false;
    } while (EatIfPresent(delim));
  }
  return Expect(end, "to end a list");
}

bool Parser::ParseInt64List(TokKind start, TokKind end, TokKind delim, std::vector<int64_t>* out) {
  return ParseList(start, end, delim, [&] {
    int64_t value;
    if (!ParseInt64(&value)) return false;
    out->push_back(value);
    return true;
  });
}

bool Parser::ParseInt64ListList(std::vector<std::vector<int64_t>>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    out->emplace_back();
    return ParseInt64List(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, &out->back());
  });
}

bool Parser::ParseShapeIndex(std::vector<int64_t>* out) {
  if (!Expect(TokKind::kLbrace, "at the start of a shape index")) return false;
  while (kind() != TokKind::kRbrace) {
    int64_t index;
    if (!ParseInt64(&index)) return false;
    out->push_back(index);
    if (!EatIfPresent(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "at the end of a shape index");
}

bool Parser::ParseSubAttributes(std::string_view what,
                                const std::function<bool(const std::string&, size_t)>& parse_value) {
  if (!Expect(TokKind::kLbrace, fmt::format("to start {}", what))) return false;
  absl::flat_hash_set<std::string> seen;
  while (kind() != TokKind::kRbrace) {
    EatIfPresent(TokKind::kComma);
    size_t name_pos = pos();
    std::string name;
    if (!ParseAttributeName(&name)) return false;
    if (!seen.insert(name).second) return Error(name_pos, fmt::format("attribute {} already exists", name));
    if (!parse_value(name, name_pos)) return false;
  }
  Next();
  return true;
}

bool Parser::ParseBracedBlob(std::string* out) {
  if (kind() != TokKind::kLbrace) return TokenError("expects '{'");
  if (!lexer_.LexBracedBlob()) return TokenError("unbalanced braces (or an unterminated string) in braced value");
  *out = tok().str;
  Next();
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Typed attribute values

bool Parser::ParseAttrValue(const std::string& name, AttrKind kind_of_value,
                            const std::vector<std::string_view>& enum_values, bool enum_case_insensitive,
                            AttrValue* out) {
  auto parse_enum = [&](std::string* value) {
    if (kind() != TokKind::kIdent) return TokenError(fmt::format("expects an enumeration value for {}", name));
    std::string text = tok().str;
    if (enum_case_insensitive) text = absl::AsciiStrToLower(absl::string_view(text.data(), text.size()));
    if (!enum_values.empty() && std::find(enum_values.begin(), enum_values.end(), text) == enum_values.end()) {
      std::string allowed;
      for (std::string_view v : enum_values) allowed += fmt::format("{}{}", allowed.empty() ? "" : ", ", v);
      return TokenError(fmt::format("unknown value '{}' for {}; expected one of: {}", tok().str, name, allowed));
    }
    *value = std::move(text);
    Next();
    return true;
  };

  switch (kind_of_value) {
    case AttrKind::kInt: {
      int64_t v;
      if (!ParseInt64(&v)) return false;
      *out = AttrValue::Int(v);
      return true;
    }
    case AttrKind::kBool: {
      bool v;
      if (!ParseBool(&v)) return false;
      *out = AttrValue::Bool(v);
      return true;
    }
    case AttrKind::kFloat: {
      size_t at = pos();
      double v;
      if (!ParseDouble(&v)) return false;
      // XLA stores these (epsilon=) as float.
      if (std::isfinite(v) && std::abs(v) > std::numeric_limits<float>::max()) {
        return Error(at, "value out of range for float");
      }
      *out = AttrValue::Float(v);
      return true;
    }
    case AttrKind::kString: {
      std::string v;
      if (!ParseString(&v)) return false;
      *out = AttrValue::String(std::move(v));
      return true;
    }
    case AttrKind::kEnum: {
      std::string v;
      if (!parse_enum(&v)) return false;
      *out = AttrValue::Enum(std::move(v));
      return true;
    }
    case AttrKind::kIntList: {
      std::vector<int64_t> v;
      if (!ParseInt64List(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, &v)) return false;
      *out = AttrValue::IntList(std::move(v));
      return true;
    }
    case AttrKind::kIntListList: {
      std::vector<std::vector<int64_t>> v;
      if (!ParseInt64ListList(&v)) return false;
      *out = AttrValue::IntListList(std::move(v));
      return true;
    }
    case AttrKind::kEnumList: {
      std::vector<std::string> v;
      if (!ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
            v.emplace_back();
            return parse_enum(&v.back());
          })) {
        return false;
      }
      *out = AttrValue::EnumList(std::move(v));
      return true;
    }
    case AttrKind::kWindow: {
      Window v;
      if (!ParseWindow(&v)) return false;
      *out = AttrValue::Of(std::move(v));
      return true;
    }
    case AttrKind::kConvDnums: {
      ConvolutionDimensionNumbers v;
      if (!ParseConvolutionDimensionNumbers(&v)) return false;
      *out = AttrValue::Of(std::move(v));
      return true;
    }
    case AttrKind::kPaddingConfig: {
      PaddingConfig v;
      if (!ParsePaddingConfig(&v)) return false;
      *out = AttrValue::Of(std::move(v));
      return true;
    }
    case AttrKind::kSlice: {
      std::vector<SliceRange> v;
      if (!ParseSliceRanges(&v)) return false;
      *out = AttrValue::Of(std::move(v));
      return true;
    }
    case AttrKind::kReplicaGroups: {
      ReplicaGroups v;
      if (!ParseReplicaGroups(&v)) return false;
      *out = AttrValue::Of(std::move(v));
      return true;
    }
    case AttrKind::kShapeList: {
      std::vector<Shape> v;
      if (!ParseShapeList(&v)) return false;
      *out = AttrValue::Of(std::move(v));
      return true;
    }
    case AttrKind::kLiteral: {
      auto literal = std::make_shared<Literal>();
      if (!ParseLiteralWithShape(literal.get())) return false;
      *out = AttrValue::Of(std::shared_ptr<const Literal>(std::move(literal)));
      return true;
    }
    case AttrKind::kAliasing: {
      std::vector<OutputOperandAlias> v;
      if (!ParseInstructionAliasing(&v)) return false;
      *out = AttrValue::Of(std::move(v));
      return true;
    }
    case AttrKind::kRaw: {
      const size_t begin = pos();
      if (name == "sparsity") {
        // L.1@2:4 or L.1@2:4_R.0@2:4: side.dimension@n:m descriptors joined by '_'.
        if (kind() == TokKind::kEof || kind() == TokKind::kError) return TokenError("expects a sparsity descriptor");
        lexer_.LexRawRun("LR.0123456789@:_");
        std::string text = tok().str;
        for (std::string_view d : Split(text, '_')) {
          size_t at = d.find('@'), colon = d.find(':');
          std::vector<int64_t> ignored;
          if (d.size() < 3 || (d[0] != 'L' && d[0] != 'R') || d[1] != '.' || at == std::string_view::npos ||
              colon == std::string_view::npos || colon < at || !SplitToInt64s(d.substr(2, at - 2), ',', &ignored) ||
              !SplitToInt64s(d.substr(at + 1), ':', &ignored)) {
            return Error(begin, fmt::format("malformed sparsity descriptor '{}' (expected e.g. L.1@2:4)", text));
          }
        }
        Next();
        *out = AttrValue::Raw(std::move(text));
        return true;
      }
      if (name == "outfeed_shape") {
        Shape shape;
        if (!ParseShape(&shape)) return false;
      } else if (name == "domain") {
        if (!ParseDomain()) return false;
      } else {
        std::string blob;
        if (!ParseBracedBlob(&blob)) return false;
      }
      *out = AttrValue::Raw(std::string(SourceText(begin, prev_end())));
      return true;
    }
  }
  return TokenError("unsupported attribute kind");
}

// window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}
bool Parser::ParseWindow(Window* out) {
  const size_t window_pos = pos();
  if (!Expect(TokKind::kLbrace, "to start a window")) return false;
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, rhs_reversal;
  std::vector<std::pair<int64_t, int64_t>> pad;
  absl::flat_hash_set<std::string> seen;
  while (kind() != TokKind::kRbrace) {
    size_t field_pos = pos();
    std::string field;
    if (kind() != TokKind::kAttributeName) return TokenError("expects a window sub-attribute (size=, stride=, ...)");
    if (!ParseAttributeName(&field)) return false;
    if (!seen.insert(field).second) {
      return Error(field_pos, fmt::format("sub-attribute '{}=' already exists", field));
    }
    auto parse_dxd = [&](std::vector<int64_t>* values) {
      if (kind() == TokKind::kInt) {
        int64_t v;
        if (!ParseInt64(&v)) return false;
        values->push_back(v);
        return true;
      }
      if (kind() == TokKind::kDxD) {
        if (!SplitToInt64s(tok().str, 'x', values)) return TokenError(fmt::format("malformed '{}=' value", field));
        Next();
        return true;
      }
      return TokenError(fmt::format("expects '{}=' to be an integer or NxM... pattern", field));
    };
    bool ok;
    if (field == "size") {
      ok = parse_dxd(&size);
    } else if (field == "stride") {
      ok = parse_dxd(&stride);
    } else if (field == "lhs_dilate") {
      ok = parse_dxd(&lhs_dilate);
    } else if (field == "rhs_dilate") {
      ok = parse_dxd(&rhs_dilate);
    } else if (field == "rhs_reversal") {
      ok = parse_dxd(&rhs_reversal);
    } else if (field == "pad") {
      if (kind() != TokKind::kPad) return TokenError("expects a window pad pattern, e.g. 0_0x3_3");
      for (std::string_view dim : Split(tok().str, 'x')) {
        std::vector<int64_t> low_high;
        if (!SplitToInt64s(dim, '_', &low_high) || low_high.size() != 2) {
          return TokenError("expects padding_low and padding_high separated by '_'");
        }
        pad.emplace_back(low_high[0], low_high[1]);
      }
      Next();
      ok = true;
    } else {
      return Error(field_pos, fmt::format("unexpected window sub-attribute: {}", field));
    }
    if (!ok) return false;
  }
  Next();  // '}'
  auto check = [&](size_t n, std::string_view field) {
    return n == 0 || n == size.size()
               ? true
               : Error(window_pos, fmt::format("expects '{}=' to have the same size as 'size='", field));
  };
  if (!check(stride.size(), "stride") || !check(lhs_dilate.size(), "lhs_dilate") ||
      !check(rhs_dilate.size(), "rhs_dilate") || !check(pad.size(), "pad") ||
      !check(rhs_reversal.size(), "rhs_reversal")) {
    return false;
  }
  for (size_t i = 0; i < size.size(); ++i) {
    WindowDimension dim;
    dim.size = size[i];
    if (!stride.empty()) dim.stride = stride[i];
    if (!pad.empty()) {
      dim.padding_low = pad[i].first;
      dim.padding_high = pad[i].second;
    }
    if (!lhs_dilate.empty()) dim.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) dim.window_dilation = rhs_dilate[i];
    if (!rhs_reversal.empty()) dim.window_reversal = rhs_reversal[i] == 1;
    out->dimensions.push_back(dim);
  }
  return true;
}

// dim_labels=b01f_01io->b01f ('?' marks a dimension that is none of these).
bool Parser::ParseConvolutionDimensionNumbers(ConvolutionDimensionNumbers* out) {
  if (kind() != TokKind::kDimLabels) return TokenError("expects dim labels pattern, e.g. 'bf0_0io->0bf'");
  const std::string text = tok().str;
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  std::string_view lhs = std::string_view(text).substr(0, underscore);
  std::string_view rhs = std::string_view(text).substr(underscore + 1, arrow - underscore - 1);
  std::string_view output = std::string_view(text).substr(arrow + 2);

  // Assigns batch/feature (or input/output feature) positions and spatial dimensions for one of the three parts.
  auto parse_part = [&](std::string_view part, char first, char second, std::string_view what, int64_t* first_dim,
                        int64_t* second_dim, std::vector<int64_t>* spatial) {
    int64_t num_spatial = 0;
    for (char c : part) {
      if (c != first && c != second && c != '?') ++num_spatial;
    }
    spatial->assign(static_cast<size_t>(num_spatial), -1);
    bool seen_first = false, seen_second = false;
    for (size_t i = 0; i < part.size(); ++i) {
      char c = part[i];
      if (c == '?') continue;
      bool duplicate = false;
      if (c == first) {
        duplicate = seen_first;
        seen_first = true;
        *first_dim = static_cast<int64_t>(i);
      } else if (c == second) {
        duplicate = seen_second;
        seen_second = true;
        *second_dim = static_cast<int64_t>(i);
      } else if (c >= '0' && c <= '9') {
        int64_t index = c - '0';
        if (index >= num_spatial) {
          return TokenError(fmt::format("{} dimension numbers '{}' use spatial dimension {} but have only {}", what,
                                        part, index, num_spatial));
        }
        duplicate = (*spatial)[index] != -1;
        (*spatial)[index] = static_cast<int64_t>(i);
      } else {
        return TokenError(fmt::format("unexpected '{}' in {} dimension numbers '{}'", c, what, part));
      }
      if (duplicate) return TokenError(fmt::format("expects unique {} dimension numbers, but sees {}", what, part));
    }
    if (!seen_first || !seen_second) {
      return TokenError(fmt::format("{} dimension numbers '{}' must contain '{}' and '{}'", what, part, first, second));
    }
    return true;
  };
  if (!parse_part(lhs, 'b', 'f', "lhs", &out->input_batch_dimension, &out->input_feature_dimension,
                  &out->input_spatial_dimensions) ||
      !parse_part(rhs, 'i', 'o', "rhs", &out->kernel_input_feature_dimension, &out->kernel_output_feature_dimension,
                  &out->kernel_spatial_dimensions) ||
      !parse_part(output, 'b', 'f', "output", &out->output_batch_dimension, &out->output_feature_dimension,
                  &out->output_spatial_dimensions)) {
    return false;
  }
  if (out->input_spatial_dimensions.size() != out->kernel_spatial_dimensions.size() ||
      out->input_spatial_dimensions.size() != out->output_spatial_dimensions.size()) {
    return TokenError(fmt::format(
        "input, kernel, and output must have same number of spatial dimensions, but got {}, {}, {}, respectively",
        out->input_spatial_dimensions.size(), out->kernel_spatial_dimensions.size(),
        out->output_spatial_dimensions.size()));
  }
  Next();
  return true;
}

// padding=0_0x1_2_1: low_high[_interior] per dimension.
bool Parser::ParsePaddingConfig(PaddingConfig* out) {
  if (kind() != TokKind::kPad) return TokenError("expects padding config, e.g. '0_0_0x3_3_1'");
  for (std::string_view dim : Split(tok().str, 'x')) {
    std::vector<int64_t> values;
    if (!SplitToInt64s(dim, '_', &values) || (values.size() != 2 && values.size() != 3)) {
      return TokenError("expects padding config pattern like 'low_high_interior' or 'low_high'");
    }
    out->dimensions.push_back(PaddingDimension{values[0], values[1], values.size() == 3 ? values[2] : 0});
  }
  Next();
  return true;
}

// slice={[0:4:2], [1:3]}
bool Parser::ParseSliceRanges(std::vector<SliceRange>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    size_t range_pos = pos();
    std::vector<int64_t> values;
    if (!ParseInt64List(TokKind::kLsquare, TokKind::kRsquare, TokKind::kColon, &values)) return false;
    if (values.size() != 2 && values.size() != 3) {
      return Error(range_pos,
                   fmt::format("expects [start:limit:step] or [start:limit], but sees {} elements", values.size()));
    }
    out->push_back(SliceRange{values[0], values[1], values.size() == 3 ? values[2] : 1});
    return true;
  });
}

bool Parser::ParseTileAssignment(std::vector<int64_t>* dims, std::optional<IotaList>* iota,
                                 std::vector<int64_t>* devices) {
  const size_t start = pos();
  if (!Expect(TokKind::kLsquare, "to start the device array shape")) return false;
  do {
    int64_t dim;
    if (!ParseInt64(&dim)) return false;
    dims->push_back(dim);
  } while (EatIfPresent(TokKind::kComma));
  if (!Expect(TokKind::kRsquare, "to end the device array shape")) return false;

  // Overflow-safe product of non-negative sizes, capped.
  auto product = [&](const std::vector<int64_t>& v, int64_t* result) {
    int64_t p = 1;
    for (int64_t d : v) {
      if (d < 0) return false;
      if (d != 0 && p > kMaxIotaDevices / d) return false;
      p *= d;
    }
    *result = p;
    return true;
  };
  int64_t num_devices = 0;
  if (!product(*dims, &num_devices)) {
    return Error(start, fmt::format("invalid device array shape (negative or more than {} devices)", kMaxIotaDevices));
  }

  if (!EatIfPresent(TokKind::kLeq)) {
    if (devices == nullptr) return TokenError("expects '<=' of an iota device list");
    do {
      int64_t device;
      if (!ParseInt64(&device)) return false;
      devices->push_back(device);
    } while (EatIfPresent(TokKind::kComma));
    return true;
  }

  IotaList list;
  list.dims = *dims;
  const size_t reshape_pos = pos();
  if (!Expect(TokKind::kLsquare, "to start the iota reshape dims")) return false;
  do {
    int64_t dim;
    if (!ParseInt64(&dim)) return false;
    list.reshape_dims.push_back(dim);
  } while (EatIfPresent(TokKind::kComma));
  if (!Expect(TokKind::kRsquare, "to end the iota reshape dims")) return false;
  if (list.reshape_dims.size() > 1) {
    if (!(kind() == TokKind::kIdent && tok().str == "T")) {
      return TokenError("expects 'T(' to start the iota transpose permutation");
    }
    Next();
    const size_t perm_pos = pos();
    if (!ParseInt64List(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, &list.transpose_perm)) return false;
    std::vector<int64_t> sorted = list.transpose_perm;
    std::sort(sorted.begin(), sorted.end());
    bool is_permutation = sorted.size() == list.reshape_dims.size();
    for (size_t i = 0; is_permutation && i < sorted.size(); ++i) is_permutation = sorted[i] == static_cast<int64_t>(i);
    if (!is_permutation) {
      return Error(perm_pos, fmt::format("iota transpose must be a permutation of [0, {})", list.reshape_dims.size()));
    }
  }
  int64_t reshape_devices = 0;
  if (!product(list.reshape_dims, &reshape_devices) || reshape_devices != num_devices) {
    return Error(reshape_pos, fmt::format("iota reshape dims must hold the same number of devices ({}) as the device "
                                          "array shape",
                                          num_devices));
  }
  *iota = std::move(list);
  return true;
}

// replica_groups={{0,1},{2,3}} or replica_groups=[2,2]<=[4] / [2,2]<=[2,2]T(1,0).
bool Parser::ParseReplicaGroups(ReplicaGroups* out) {
  if (kind() == TokKind::kLbrace) return ParseInt64ListList(&out->groups);
  const size_t start = pos();
  std::vector<int64_t> dims;
  std::optional<IotaList> iota;
  if (!ParseTileAssignment(&dims, &iota, nullptr)) return false;
  if (dims.size() != 2) {
    return Error(start, fmt::format("expects an iota replica group list of rank 2 ([groups,group_size]), but it has "
                                    "rank {}",
                                    dims.size()));
  }
  out->iota = std::move(iota);
  return true;
}

// output_to_operand_aliasing={{0}: (1, {}), {1}: (0, {2})}
bool Parser::ParseInstructionAliasing(std::vector<OutputOperandAlias>* out) {
  if (!Expect(TokKind::kLbrace, "at the start of the instruction aliasing description")) return false;
  constexpr std::string_view kFormat = "(expected <output_shape_index>: (<operand_index>, <operand_shape_index>))";
  while (kind() != TokKind::kRbrace) {
    OutputOperandAlias alias;
    if (!ParseShapeIndex(&alias.output_index) || !Expect(TokKind::kColon, kFormat) ||
        !Expect(TokKind::kLparen, kFormat) || !ParseInt64(&alias.operand) || !Expect(TokKind::kComma, kFormat) ||
        !ParseShapeIndex(&alias.operand_index) || !Expect(TokKind::kRparen, kFormat)) {
      return false;
    }
    out->push_back(std::move(alias));
    if (!EatIfPresent(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "at the end of the instruction aliasing description");
}

// metadata={op_type="Add" op_name="a/b" source_file="x.py" source_line=12}; unknown fields are errors (as in XLA).
bool Parser::ParseMetadata(OpMetadata* out) {
  OpMetadata metadata;
  if (!ParseSubAttributes("metadata", [&](const std::string& field, size_t field_pos) {
        if (field == "op_type") return ParseString(&metadata.op_type);
        if (field == "op_name") return ParseString(&metadata.op_name);
        if (field == "source_file") return ParseString(&metadata.source_file);
        if (field == "deduplicated_name") return ParseString(&metadata.deduplicated_name);
        if (field == "scheduling_name") return ParseString(&metadata.scheduling_name);
        if (field == "source_line") return ParseInt32(&metadata.source_line);
        if (field == "source_end_line") return ParseInt32(&metadata.source_end_line);
        if (field == "source_column") return ParseInt32(&metadata.source_column);
        if (field == "source_end_column") return ParseInt32(&metadata.source_end_column);
        if (field == "stack_frame_id") return ParseInt32(&metadata.stack_frame_id);
        if (field == "preserve_layout") return ParseBool(&metadata.preserve_layout);
        if (field == "profile_type") {
          return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
            size_t at = pos();
            int64_t type;
            if (!ParseInt64(&type)) return false;
            // ProfileType: INVALID=0, WINDOW=1, FLAG=2, INTEGER=3.
            if (type < 0 || type > 3) return Error(at, fmt::format("invalid profile type {}", type));
            metadata.profile_type.push_back(std::to_string(type));
            return true;
          });
        }
        return Error(field_pos, fmt::format("unexpected attribute \"{}\" in metadata", field));
      })) {
    return false;
  }
  *out = std::move(metadata);
  return true;
}

// frontend_attributes={a="b", c={...json...}}; XLA keeps them sorted by key, the last duplicate winning.
bool Parser::ParseFrontendAttributes(StringMap* out) {
  if (!Expect(TokKind::kLbrace, "to start frontend attributes")) return false;
  std::map<std::string, std::string> sorted;
  if (kind() != TokKind::kRbrace) {
    do {
      std::string key, value;
      if (!ParseAttributeName(&key)) return false;
      if (kind() == TokKind::kString) {
        if (!ParseString(&value)) return false;
      } else if (kind() == TokKind::kLbrace) {
        if (!ParseBracedBlob(&value)) return false;
      } else {
        return TokenError("expects a string or a braced value for a frontend attribute");
      }
      sorted[std::move(key)] = std::move(value);
    } while (EatIfPresent(TokKind::kComma));
  }
  if (!Expect(TokKind::kRbrace, "at the end of frontend attributes")) return false;
  out->assign(sorted.begin(), sorted.end());
  return true;
}

bool Parser::ParseBackendConfig(std::string* text, bool* is_raw) {
  if (kind() == TokKind::kString) {
    *is_raw = false;
    return ParseString(text);
  }
  if (kind() == TokKind::kLbrace) {
    *is_raw = true;
    return ParseBracedBlob(text);
  }
  return TokenError("expects a string or a braced JSON value for backend_config");
}

// statistics={visualizing_index=1,stat-1=33,stat-2=44}
bool Parser::ParseStatistics() {
  if (!Expect(TokKind::kLbrace, "to start statistics")) return false;
  if (kind() != TokKind::kRbrace) {
    std::string name;
    int64_t index;
    if (!ParseAttributeName(&name) || !ParseInt64(&index)) return false;
    while (EatIfPresent(TokKind::kComma)) {
      double value;
      if (!ParseAttributeName(&name) || !ParseDouble(&value)) return false;
    }
  }
  return Expect(TokKind::kRbrace, "at the end of statistics");
}

// origin={({"a" {0}}, {"b"})} or origin={[synthetic_call]}: a tuple tree of original arrays.
bool Parser::ParseOriginalValue() {
  if (!Expect(TokKind::kLbrace, "to start an original value")) return false;
  if (EatIfPresent(TokKind::kLsquare)) {
    if (!(kind() == TokKind::kIdent && tok().str == "synthetic_call")) {
      return TokenError("expects 'synthetic_call' after '[' in an original value");
    }
    Next();
    return Expect(TokKind::kRsquare, "after synthetic_call") && Expect(TokKind::kRbrace, "to end an original value");
  }
  int64_t depth = 0;
  while (kind() != TokKind::kRbrace) {
    switch (kind()) {
      case TokKind::kLparen:
        if (++depth > options_.max_nesting_depth) return DepthExceeded();
        Next();
        break;
      case TokKind::kRparen:
        if (depth == 0) return TokenError("unbalanced ')' in original value");
        --depth;
        Next();
        break;
      case TokKind::kComma:
        if (depth == 0) return TokenError("unexpected ',' outside of a tuple in original value");
        Next();
        break;
      case TokKind::kLbrace: {
        Next();
        // XLA's parser (the version of the parser tests this project checks against) reads a string first: an
        // empty leaf {} is rejected, not taken as "no original array".
        if (kind() != TokKind::kString) {
          return TokenError("expects the name of an original array (a string) in an original value leaf");
        }
        Next();
        if (kind() == TokKind::kLbrace) {
          std::vector<int64_t> index;
          if (!ParseShapeIndex(&index)) return false;
        }
        if (!Expect(TokKind::kRbrace, "at the end of an original array")) return false;
        break;
      }
      default:
        return TokenError("expects '[synthetic_call]' or a tuple tree of original arrays in an original value");
    }
  }
  if (depth != 0) return TokenError("expects ')' before the end of the original value");
  Next();
  return true;
}

// result_accuracy={mode=highest} or result_accuracy={tolerance={atol=1e-5,rtol=0,ulps=2}}
bool Parser::ParseResultAccuracy() {
  if (!Expect(TokKind::kLbrace, "to start result_accuracy")) return false;
  const size_t name_pos = pos();
  std::string name;
  if (!ParseAttributeName(&name)) return false;
  if (name == "mode") {
    if (kind() != TokKind::kIdent) return TokenError("expects a result accuracy mode");
    std::string mode = absl::AsciiStrToLower(absl::string_view(tok().str.data(), tok().str.size()));
    if (mode != "default" && mode != "highest" && mode != "tolerance") {
      return TokenError(fmt::format("unknown result accuracy mode '{}'; expected DEFAULT or HIGHEST", tok().str));
    }
    Next();
  } else if (name == "tolerance") {
    if (!Expect(TokKind::kLbrace, "to start the result accuracy tolerance")) return false;
    if (kind() != TokKind::kRbrace) {
      do {
        const size_t field_pos = pos();
        std::string field;
        if (!ParseAttributeName(&field)) return false;
        if (field != "atol" && field != "rtol" && field != "ulps") {
          return Error(field_pos, fmt::format("invalid attribute name: {} (expected atol, rtol or ulps)", field));
        }
        double value;
        if (!ParseDouble(&value)) return false;
      } while (EatIfPresent(TokKind::kComma));
    }
    if (!Expect(TokKind::kRbrace, "at the end of the result accuracy tolerance")) return false;
  } else {
    return Error(name_pos, fmt::format("invalid attribute name: {} (expected mode or tolerance)", name));
  }
  return Expect(TokKind::kRbrace, "to end result_accuracy");
}

bool Parser::ParseParameterReplication(std::vector<bool>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    bool value;
    if (!ParseBool(&value)) return false;
    out->push_back(value);
    return true;
  });
}

// domain={kind="sharding", entry={maximal device=1}, exit={maximal device=0}}
bool Parser::ParseDomain() {
  const size_t start = pos();
  std::optional<std::string> domain_kind;
  size_t kind_pos = 0;
  bool has_entry = false, has_exit = false;
  if (!ParseSubAttributes("domain", [&](const std::string& field, size_t field_pos) {
        if (field == "kind") {
          kind_pos = pos();
          domain_kind.emplace();
          return ParseString(&*domain_kind);
        }
        if (field == "entry" || field == "exit") {
          (field == "entry" ? has_entry : has_exit) = true;
          Sharding sharding;
          return ParseSharding(&sharding);
        }
        return Error(field_pos, fmt::format("unexpected attribute \"{}\" in domain", field));
      })) {
    return false;
  }
  if (!domain_kind.has_value()) return Error(start, "sub-attribute kind is expected but not seen");
  if (!has_entry) return Error(start, "sub-attribute entry is expected but not seen");
  if (!has_exit) return Error(start, "sub-attribute exit is expected but not seen");
  if (*domain_kind != "sharding") return Error(kind_pos, fmt::format("unsupported domain kind: {}", *domain_kind));
  return true;
}

}  // namespace xlac::hlo
