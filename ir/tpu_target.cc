// The TPU target table and slice topologies. Every number below carries its source. Where Google's pages disagree
// with each other (they have been revised and translated at different times) the choice is stated next to the number.
//
// Sources:
//  [v4]  "TPU v4", Google Cloud TPU documentation, https://cloud.google.com/tpu/docs/v4
//  [v5e] "TPU v5e", Google Cloud TPU documentation, https://cloud.google.com/tpu/docs/v5e
//  [v5p] "TPU v5p", Google Cloud TPU documentation, https://cloud.google.com/tpu/docs/v5p
//  [v6e] "TPU v6e", Google Cloud TPU documentation, https://cloud.google.com/tpu/docs/v6e
//  [book] "How to Scale Your Model", part 2 "How to Think About TPUs" (Austin et al., Google DeepMind),
//         https://jax-ml.github.io/scaling-book/tpus/ - the per-link one-way ICI bandwidths its worked examples use.
#include "ir/tpu_target.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace xlac {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

std::vector<TpuChipSpec> MakeSpecs() {
  std::vector<TpuChipSpec> specs;
  {
    TpuChipSpec s;
    s.version = TpuVersion::kV4;
    s.name = "v4";
    s.tensor_cores_per_chip = 2;      // [v4] "Each TPU v4 chip contains two TensorCores"
    s.devices_per_chip = 1;           // megacore: JAX shows one device per v4 chip
    s.peak_bf16_flops = 275e12;       // [v4] "Peak compute per chip 275 teraflops (bf16 or int8)"
    s.peak_int8_ops = 275e12;         // [v4] same line
    s.hbm_bytes = 32 * kGiB;          // [v4] "HBM2 capacity and bandwidth 32 GiB, 1200 GBps"
    s.hbm_bytes_per_second = 1200e9;  // [v4] same line
    s.ici_ports = 6;                  // [v4] "direct connection to the nearest neighboring chips in 3 dimensions"
    s.ici_bidirectional_bytes_per_second = 0;  // [v4] publishes no per-chip ICI figure
    s.ici_link_bytes_per_second = 4.5e10;      // [book] table "ICI BW (uni-di)" per link, TPU v4p
    s.torus_rank = 3;                          // [v4] "3D mesh and 3D torus"
    s.chips_per_host = 4;                      // [v4] v4-8 = 4 chips on one host (2x2x1)
    s.host_bounds = {2, 2, 1};
    s.pod_chips = 4096;  // [v4] "TPU Pod size 4096 chips"
    // [v4] configuration table; larger slices: any AxBxC of full 4x4x4 cubes (see ParseTpuTopology).
    s.listed_topologies = {"2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16"};
    specs.push_back(s);
  }
  {
    TpuChipSpec s;
    s.version = TpuVersion::kV5e;
    s.name = "v5e";
    s.tensor_cores_per_chip = 1;  // [v5e] "Each v5e chip contains one TensorCore"
    s.devices_per_chip = 1;
    s.peak_bf16_flops = 197e12;  // [v5e] "Peak compute per chip (bf16) 197 TFLOPs"
    s.peak_int8_ops = 393e12;    // [v5e] "Peak compute per chip (Int8) 393 TOPs"
    // [v5e] "HBM capacity per chip 16 GB". HBM stacks are sized in GiB and XLA reports "16.00G" of HBM per v5e core,
    // so 16 GiB.
    s.hbm_bytes = 16 * kGiB;
    // [v5e] "HBM2 capacity and bandwidth 16 GB, 819 GBps" (a later revision says "800 GiBps"; [book] uses 8.1e11).
    s.hbm_bytes_per_second = 819e9;
    s.ici_ports = 4;                               // [v5e] "ICI ports per chip 4"
    s.ici_bidirectional_bytes_per_second = 400e9;  // [v5e] "Bidirectional ICI bandwidth (per chip) 400 GBps"
    // [book] per link one way 4.5e10 (400 GBps / 4 ports / 2 directions would be 5e10).
    s.ici_link_bytes_per_second = 4.5e10;
    s.torus_rank = 2;           // [v5e] "Interconnect topology 2D torus"
    s.chips_per_host = 8;       // [v5e] "Chips per host 8"
    s.host_bounds = {2, 4, 1};  // [v5e] topology 2x4 = 8 chips = 1 host
    s.pod_chips = 256;          // [v5e] "TPU Pod size 256 chips"
    // [v5e] "v5e supports the following 2D slice shapes"
    s.listed_topologies = {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"};
    specs.push_back(s);
  }
  {
    TpuChipSpec s;
    s.version = TpuVersion::kV5p;
    s.name = "v5p";
    s.tensor_cores_per_chip = 2;                    // [v5p] "Number of TensorCores per chip 2"
    s.devices_per_chip = 1;                         // megacore, as v4
    s.peak_bf16_flops = 459e12;                     // [v5p] "Peak compute per chip (bf16) 459 TFLOPs"
    s.peak_int8_ops = 0;                            // [v5p] lists FP8 (459 TFLOPs), no int8 figure
    s.hbm_bytes = 95 * kGiB;                        // [v5p] "HBM capacity per chip (GiB) 95"
    s.hbm_bytes_per_second = 2765e9;                // [v5p] "HBM2e capacity and bandwidth 95 GB, 2765 GBps"
    s.ici_ports = 6;                                // 3D torus: two links per axis
    s.ici_bidirectional_bytes_per_second = 1200e9;  // [v5p] "Bidirectional ICI bandwidth (per chip) 1200 GBps"
    s.ici_link_bytes_per_second = 9e10;             // [book] per link one way, TPU v5p
    s.torus_rank = 3;                               // [v5p] "Interconnect topology 3D torus"
    s.chips_per_host = 4;                           // [v5p] topology 2x2x1: 4 chips, 1 host
    s.host_bounds = {2, 2, 1};
    s.pod_chips = 8960;  // [v5p] "TPU Pod size 8960 chips"; largest slice 16x16x24 (6144 chips)
    // [v5p] "the most common single-slice shapes", and 2x2x4: the accelerator type v5p-32 (16 chips) of the same
    // page's AcceleratorType list ("v5p-8, v5p-16, v5p-32, v5p-64, v5p-128 ..."). Other full-cube shapes are
    // accepted (see ParseTpuTopology).
    s.listed_topologies = {"2x2x1", "2x2x2", "2x2x4",  "2x4x4",   "4x4x4",    "4x4x8",
                           "4x8x8", "8x8x8", "8x8x16", "8x16x16", "16x16x16", "16x16x24"};
    specs.push_back(s);
  }
  {
    TpuChipSpec s;
    s.version = TpuVersion::kV6e;
    s.name = "v6e";
    s.tensor_cores_per_chip = 1;  // [v6e] "Each v6e chip contains one TensorCore"
    s.devices_per_chip = 1;
    s.peak_bf16_flops = 918e12;  // [v6e] "Peak compute per chip (bf16) 918 TFLOPs"
    s.peak_int8_ops = 1836e12;   // [v6e] "Peak compute per chip (Int8) 1836 TOPs"
    s.hbm_bytes = 32 * kGiB;     // [v6e] "HBM capacity per chip 32 GB" (GiB-sized stacks, as v5e)
    // [v6e] "HBM bandwidth per chip 1640 GBps" (later revisions: 1600 / 1638 GBps; [book] uses 1.64e12).
    s.hbm_bytes_per_second = 1640e9;
    s.ici_ports = 4;                               // [v6e] "ICI ports per chip 4"
    s.ici_bidirectional_bytes_per_second = 800e9;  // [v6e] "Bidirectional ICI bandwidth (per chip) 800 GBps"
    s.ici_link_bytes_per_second = 9e10;            // [book] per link one way, TPU v6e
    s.torus_rank = 2;                              // [v6e] "Interconnect topology 2D torus"
    s.chips_per_host = 8;                          // [v6e] "Chips per host 8"
    s.host_bounds = {2, 4, 1};
    s.pod_chips = 256;  // [v6e] "TPU Pod size 256 chips"
    // [v6e] "2D slice shapes that are supported for v6e"
    s.listed_topologies = {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"};
    specs.push_back(s);
  }
  return specs;
}

bool Is3D(const TpuChipSpec& chip) { return chip.torus_rank == 3; }

// The largest slice one job may use: [v5p] "The largest job that can be scheduled is a 96 cube (6144 chip) job";
// v4: the pod (4096); v5e/v6e: the 16x16 pod.
int64_t MaxSliceChips(const TpuChipSpec& chip) { return chip.version == TpuVersion::kV5p ? 6144 : chip.pod_chips; }

std::string AllowedShapes(const TpuChipSpec& chip) {
  std::string text = absl::StrJoin(chip.listed_topologies, ", ");
  if (Is3D(chip)) {
    absl::StrAppend(&text, ", or AxBxC with every extent a multiple of 4 (whole 4x4x4 cubes) and at most ",
                    MaxSliceChips(chip), " chips");
  }
  return text;
}

}  // namespace

const std::vector<TpuChipSpec>& AllTpuChipSpecs() {
  static const std::vector<TpuChipSpec>* specs = new std::vector<TpuChipSpec>(MakeSpecs());
  return *specs;
}

absl::StatusOr<const TpuChipSpec*> FindTpuChipSpec(const std::string& name) {
  std::string key = absl::AsciiStrToLower(name);
  if (key == "v5litepod" || key == "v5lite") key = "v5e";
  if (key == "trillium") key = "v6e";
  for (const TpuChipSpec& spec : AllTpuChipSpecs()) {
    if (spec.name == key) return &spec;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown TPU version '", name, "' (known: v4, v5e, v5p, v6e)"));
}

TpuTopology TpuTopology::Build(const TpuChipSpec& chip, std::vector<int64_t> dims) {
  TpuTopology t;
  t.chip_ = &chip;
  t.dims_ = std::move(dims);
  const int64_t rank = t.rank();
  // Wraparound. v4/v5p: a slice made of whole 4x4x4 cubes is closed into a torus on every axis by the optical
  // switches ([v4] "configured as a 3D torus on slices where ... each dimension is a multiple of 4"); smaller slices
  // are meshes. v5e/v6e: [book] wraparound links exist only on an axis spanning the whole 16-chip pod edge; smaller
  // 2D slices are meshes.
  t.wraps_.assign(rank, false);
  if (Is3D(chip)) {
    bool cubes = std::all_of(t.dims_.begin(), t.dims_.end(), [](int64_t d) { return d % 4 == 0; });
    t.wraps_.assign(rank, cubes);
  } else {
    for (int64_t a = 0; a < rank; ++a) t.wraps_[a] = t.dims_[a] == 16;
  }
  // Device order: host blocks (clipped to the slice), hosts x-fastest, chips in a host x-fastest.
  std::vector<int64_t> host(rank), hosts(rank);
  int64_t total = 1;
  for (int64_t a = 0; a < rank; ++a) {
    host[a] = std::min(chip.host_bounds[a], t.dims_[a]);
    hosts[a] = t.dims_[a] / host[a];
    total *= t.dims_[a];
  }
  t.device_at_.assign(total, -1);
  int64_t per_host = 1;
  for (int64_t v : host) per_host *= v;
  std::vector<int64_t> h(rank, 0);
  for (int64_t host_index = 0; host_index < total / per_host; ++host_index) {
    int64_t rest = host_index;
    for (int64_t a = 0; a < rank; ++a) {
      h[a] = rest % hosts[a];
      rest /= hosts[a];
    }
    for (int64_t c = 0; c < per_host; ++c) {
      std::vector<int64_t> coord(rank);
      int64_t r = c;
      for (int64_t a = 0; a < rank; ++a) {
        coord[a] = h[a] * host[a] + r % host[a];
        r /= host[a];
      }
      int64_t linear = 0;
      for (int64_t a = rank - 1; a >= 0; --a) linear = linear * t.dims_[a] + coord[a];
      t.device_at_[linear] = static_cast<int64_t>(t.coords_.size());
      t.coords_.push_back(std::move(coord));
    }
  }
  return t;
}

std::string TpuTopology::ToString() const { return absl::StrJoin(dims_, "x"); }

int64_t TpuTopology::DeviceAt(const std::vector<int64_t>& coords) const {
  assert(static_cast<int64_t>(coords.size()) == rank());
  int64_t linear = 0;
  for (int64_t a = rank() - 1; a >= 0; --a) {
    assert(coords[a] >= 0 && coords[a] < dims_[a]);
    linear = linear * dims_[a] + coords[a];
  }
  return device_at_[linear];
}

int64_t TpuTopology::Neighbor(int64_t device, int64_t axis, int direction) const {
  assert(direction == 1 || direction == -1);
  const int64_t extent = dims_[axis];
  if (extent == 1) return -1;
  std::vector<int64_t> c = coords_[device];
  int64_t next = c[axis] + direction;
  if (next < 0 || next >= extent) {
    if (!wraps_[axis]) return -1;
    next = (next + extent) % extent;
  }
  c[axis] = next;
  return DeviceAt(c);
}

int64_t TpuTopology::Distance(int64_t a, int64_t b) const {
  int64_t hops = 0;
  for (int64_t axis = 0; axis < rank(); ++axis) {
    int64_t d = std::abs(coords_[a][axis] - coords_[b][axis]);
    if (wraps_[axis]) d = std::min(d, dims_[axis] - d);
    hops += d;
  }
  return hops;
}

absl::StatusOr<TpuTopology> ParseTpuTopology(const TpuChipSpec& chip, const std::string& text) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("invalid --topology=", text, " for TPU ", chip.name, ": ", why,
                                                   "; allowed: ", AllowedShapes(chip)));
  };
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(absl::AsciiStrToLower(text), 'x')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v) || v <= 0 || v > 4096) return bad("expected positive extents like 4x4");
    dims.push_back(v);
  }
  if (static_cast<int64_t>(dims.size()) != chip.torus_rank) {
    return bad(
        absl::StrCat(chip.name, " slices are ", chip.torus_rank, "D (", chip.torus_rank == 2 ? "AxB" : "AxBxC", ")"));
  }
  std::string canonical = absl::StrJoin(dims, "x");
  bool listed = std::find(chip.listed_topologies.begin(), chip.listed_topologies.end(), canonical) !=
                chip.listed_topologies.end();
  if (!listed) {
    int64_t chips = 1;
    for (int64_t d : dims) chips *= d;
    bool cubes = Is3D(chip) && std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d % 4 == 0; });
    if (!cubes) return bad("not a supported slice shape");
    if (chips > MaxSliceChips(chip)) return bad(absl::StrCat(chips, " chips is more than the largest slice"));
  }
  return TpuTopology::Build(chip, std::move(dims));
}

absl::StatusOr<TpuTopology> DefaultTpuTopology(const TpuChipSpec& chip, int64_t num_devices) {
  std::vector<std::string> sizes;
  for (const std::string& shape : chip.listed_topologies) {
    absl::StatusOr<TpuTopology> t = ParseTpuTopology(chip, shape);
    assert(t.ok());
    if (t->num_devices() == num_devices) return t;
    sizes.push_back(absl::StrCat(shape, " (", t->num_devices(), ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat("no TPU ", chip.name, " slice has ", num_devices,
                                                 " devices; pass --topology (listed: ", absl::StrJoin(sizes, ", "),
                                                 ")"));
}

}  // namespace xlac
