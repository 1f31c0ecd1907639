#include "ir/winograd.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/status_macros.h"

namespace xlac {

bool IsWinogradTarget(std::string_view target) {
  return target == kWinogradInputTarget || target == kWinogradOutputTarget || target == kWinogradConvTarget;
}

// A^T[i][k] = p_k^i; G[k][j] = p_k^j / f_k with f_k = prod_{l != k} (p_k - p_l); B^T's row k holds the coefficients
// of prod_{l != k} (x - p_l) (its row for infinity those of prod_l (x - p_l)).
WinogradMatrices MakeWinogradMatrices(int64_t m) {
  std::vector<double> points = {0, 1, -1, 2, -2, 0.5, -0.5};
  points.resize(m + 1);
  const int64_t n = m + 2;
  auto product_except = [&](int64_t skip) {  // coefficients of prod_{l != skip} (x - p_l), lowest first
    std::vector<double> poly = {1};
    for (int64_t l = 0; l <= m; ++l) {
      if (l == skip) continue;
      std::vector<double> next(poly.size() + 1, 0.0);
      for (size_t i = 0; i < poly.size(); ++i) {
        next[i + 1] += poly[i];
        next[i] -= points[l] * poly[i];
      }
      poly = std::move(next);
    }
    poly.resize(n, 0.0);
    return poly;
  };
  WinogradMatrices t{std::vector<std::vector<double>>(m, std::vector<double>(n, 0.0)),
                     std::vector<std::vector<double>>(n, std::vector<double>(3, 0.0)),
                     std::vector<std::vector<double>>(n)};
  for (int64_t k = 0; k <= m; ++k) {
    double f = 1;
    for (int64_t l = 0; l <= m; ++l) {
      if (l != k) f *= points[k] - points[l];
    }
    double power = 1;
    for (int64_t i = 0; i < std::max<int64_t>(m, 3); ++i, power *= points[k]) {
      if (i < m) t.at[i][k] = power;
      if (i < 3) t.g[k][i] = power / f;
    }
    t.bt[k] = product_except(k);
  }
  t.at[m - 1][n - 1] = 1;
  t.g[n - 1][2] = 1;
  t.bt[n - 1] = product_except(-1);
  return t;
}

namespace {

std::vector<float> Flat(const std::vector<std::vector<double>>& matrix) {
  std::vector<float> out;
  for (const auto& row : matrix) {
    for (double v : row) out.push_back(static_cast<float>(v));
  }
  return out;
}

}  // namespace

std::vector<float> WinogradBtF32(int64_t m) { return Flat(MakeWinogradMatrices(m).bt); }
std::vector<float> WinogradAtF32(int64_t m) { return Flat(MakeWinogradMatrices(m).at); }

namespace {

using ErrorFn = std::function<absl::Status(const std::string&)>;

ErrorFn CallError(const Instruction& call) {
  return [&call](const std::string& what) {
    return absl::InvalidArgumentError(fmt::format("{} (custom-call \"{}\"): {}", call.name(),
                                                  std::string(call.StringAttr("custom_call_target")), what));
  };
}

// The transform's m from its transform dimension n*n.
absl::StatusOr<int64_t> TileSize(int64_t nn, const ErrorFn& error) {
  for (int64_t m : {2, 4, 6}) {
    if ((m + 2) * (m + 2) == nn) return m;
  }
  return error(fmt::format("transform dimension {} is not (m+2)^2 for m = 2, 4 or 6", nn));
}

// The geometry of `image` (x when `input`, else y) in a call with the convolution's window and dim_labels.
absl::StatusOr<WinogradGeometry> ImageGeometry(const Instruction& call, const Shape& image, bool input, int64_t m,
                                               const ErrorFn& error) {
  const AttrValue* window = call.FindAttr("window");
  const AttrValue* labels = call.FindAttr("dim_labels");
  if (window == nullptr || window->kind != AttrKind::kWindow || labels == nullptr ||
      labels->kind != AttrKind::kConvDnums) {
    return error("needs the convolution's window and dim_labels");
  }
  const auto& w = window->get<Window>();
  const auto& dn = labels->get<ConvolutionDimensionNumbers>();
  if (w.dimensions.size() != 2 || dn.input_spatial_dimensions.size() != 2 || dn.output_spatial_dimensions.size() != 2) {
    return error("needs two spatial dimensions");
  }
  WinogradGeometry g;
  g.m = m;
  g.n = m + 2;
  if (input) {
    g.batch_dim = dn.input_batch_dimension;
    g.feature_dim = dn.input_feature_dimension;
    g.spatial_dims[0] = dn.input_spatial_dimensions[0];
    g.spatial_dims[1] = dn.input_spatial_dimensions[1];
  } else {
    g.batch_dim = dn.output_batch_dimension;
    g.feature_dim = dn.output_feature_dimension;
    g.spatial_dims[0] = dn.output_spatial_dimensions[0];
    g.spatial_dims[1] = dn.output_spatial_dimensions[1];
  }
  for (int64_t d : {g.batch_dim, g.feature_dim, g.spatial_dims[0], g.spatial_dims[1]}) {
    if (d < 0 || d >= 4) return error("dim_labels out of range");
  }
  g.batch = image.dimensions[g.batch_dim];
  g.features = image.dimensions[g.feature_dim];
  for (int i = 0; i < 2; ++i) {
    const WindowDimension& d = w.dimensions[i];
    if (d.size != 3 || d.stride != 1 || d.window_dilation != 1 || d.base_dilation != 1 || d.window_reversal ||
        d.padding_low < 0 || d.padding_high < 0) {
      return error("the window must be 3x3, stride 1, undilated, unreversed, with padding >= 0");
    }
    g.padding_low[i] = d.padding_low;
    g.image_size[i] = image.dimensions[g.spatial_dims[i]];
    g.out_size[i] = input ? g.image_size[i] + d.padding_low + d.padding_high - 2 : g.image_size[i];
    if (g.out_size[i] < 1) return error("the convolution's output is empty");
    g.tiles[i] = (g.out_size[i] + g.m - 1) / g.m;
  }
  return g;
}

bool IsStaticF32(const Shape& s) { return s.IsArray() && s.element_type == PrimitiveType::kF32 && s.IsStatic(); }

}  // namespace

absl::StatusOr<WinogradGeometry> WinogradGeometryOf(const Instruction& call) {
  const std::string_view target = call.StringAttr("custom_call_target");
  const ErrorFn error = CallError(call);
  const bool input = target == kWinogradInputTarget;
  if (!input && target != kWinogradOutputTarget) return error("not a Winograd transform");
  if (call.operand_count() != 1) return error("takes one operand");
  const Shape& operand = call.operand(0)->shape();
  const Shape& result = call.shape();
  if (!IsStaticF32(operand) || !IsStaticF32(result)) return error("operand and result must be static f32 arrays");
  const Shape& image = input ? operand : result;        // x or y
  const Shape& transformed = input ? result : operand;  // V or M
  if (image.rank() != 4 || transformed.rank() != 3) {
    return error(input ? "takes a rank-4 input and returns [n*n, C, N*T0*T1]"
                       : "takes [n*n, K, N*T0*T1] and returns a rank-4 output");
  }
  const int64_t nn = transformed.dimensions[0];
  XLAC_ASSIGN_OR_RETURN(const int64_t m, TileSize(nn, error));
  XLAC_ASSIGN_OR_RETURN(WinogradGeometry g, ImageGeometry(call, image, input, m, error));
  if (transformed.dimensions[1] != g.features || transformed.dimensions[2] != g.tile_count()) {
    return error(fmt::format("the transformed array must be f32[{}, {}, {}]", nn, g.features, g.tile_count()));
  }
  return g;
}

absl::StatusOr<WinogradConvGeometry> WinogradConvGeometryOf(const Instruction& call) {
  const ErrorFn error = CallError(call);
  if (call.StringAttr("custom_call_target") != kWinogradConvTarget) return error("not a Winograd convolution");
  if (call.operand_count() != 2) return error("takes two operands: the input and the transformed filter");
  const Shape& x = call.operand(0)->shape();
  const Shape& u = call.operand(1)->shape();
  const Shape& y = call.shape();
  if (!IsStaticF32(x) || !IsStaticF32(u) || !IsStaticF32(y))
    return error("operands and result must be static f32 arrays");
  if (x.rank() != 4 || u.rank() != 3 || y.rank() != 4) {
    return error("takes a rank-4 input and a filter [n*n, C, K] and returns a rank-4 output");
  }
  XLAC_ASSIGN_OR_RETURN(const int64_t m, TileSize(u.dimensions[0], error));
  WinogradConvGeometry g;
  XLAC_ASSIGN_OR_RETURN(g.input, ImageGeometry(call, x, /*input=*/true, m, error));
  XLAC_ASSIGN_OR_RETURN(g.output, ImageGeometry(call, y, /*input=*/false, m, error));
  if (g.output.batch != g.input.batch || g.output.image_size[0] != g.input.out_size[0] ||
      g.output.image_size[1] != g.input.out_size[1]) {
    return error("the result's batch and spatial sizes are not the convolution's");
  }
  if (u.dimensions[1] != g.input.features || u.dimensions[2] != g.output.features) {
    return error(fmt::format("the filter must be f32[{}, {}, {}] (transform points, input features, output features)",
                             u.dimensions[0], g.input.features, g.output.features));
  }
  return g;
}

absl::Status CheckWinogradCall(const Instruction& call) {
  if (call.StringAttr("custom_call_target") == kWinogradConvTarget) return WinogradConvGeometryOf(call).status();
  return WinogradGeometryOf(call).status();
}

}  // namespace xlac
