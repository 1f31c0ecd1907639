// TPU targets: what a TPU chip has (compute, HBM, interconnect) from Google's published specifications, and the
// slices (`--topology=4x4`, `4x4x4`) a program runs on: how many chips, which device sits at which torus coordinate
// and who its neighbours are. The numbers and their sources are in tpu_target.cc; docs/tpu_model.md says what is
// modeled and what is not.
//
// One JAX device is one chip on every version here: v4 and v5p run their two TensorCores as one "megacore" device,
// v5e and v6e have one TensorCore per chip. The emulated core count is therefore the chip count.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace xlac {

enum class TpuVersion { kV4, kV5e, kV5p, kV6e };

struct TpuChipSpec {
  TpuVersion version = TpuVersion::kV5e;
  std::string name;  // "v5e"
  int64_t tensor_cores_per_chip = 1;
  int64_t devices_per_chip = 1;  // JAX devices (megacore: 1)
  double peak_bf16_flops = 0;    // per chip, FLOP/s
  double peak_int8_ops = 0;      // per chip, OP/s; 0 where Google publishes none
  int64_t hbm_bytes = 0;         // per chip
  double hbm_bytes_per_second = 0;
  int64_t ici_ports = 0;                          // ICI links per chip
  double ici_bidirectional_bytes_per_second = 0;  // per chip, all links, both directions, as published
  double ici_link_bytes_per_second = 0;           // per link, one direction (what collective models use)
  int64_t torus_rank = 2;                         // 2 (2D torus) or 3 (3D torus)
  int64_t chips_per_host = 0;
  std::array<int64_t, 3> host_bounds = {1, 1, 1};  // the block of chips one host owns (x, y, z)
  int64_t pod_chips = 0;
  // Slice shapes Google lists for this version (v4/v5p also accept any full-cube multiple, see ParseTpuTopology).
  std::vector<std::string> listed_topologies;
};

// The four versions, in the order v4, v5e, v5p, v6e.
const std::vector<TpuChipSpec>& AllTpuChipSpecs();

// "v5e" (also "v5litepod"), "v4", "v5p", "v6e" (also "trillium"); case-insensitive.
absl::StatusOr<const TpuChipSpec*> FindTpuChipSpec(const std::string& name);

// A slice: chip extents along x, y (, z) and whether each axis wraps around.
class TpuTopology {
 public:
  const TpuChipSpec& chip() const { return *chip_; }
  // Extents, x first; rank() == chip().torus_rank.
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  bool wraps(int64_t axis) const { return wraps_[axis]; }
  int64_t num_chips() const { return static_cast<int64_t>(coords_.size()); }
  int64_t num_devices() const { return num_chips() * chip_->devices_per_chip; }
  // "4x4" / "4x4x4".
  std::string ToString() const;

  // Device order (device id = index): the order JAX lists the slice's devices in (jax.devices(), and the default
  // device assignment, so device i runs partition i): host by host, hosts in x-fastest order of the host grid, and
  // chips inside a host x-fastest.
  const std::vector<int64_t>& coords(int64_t device) const { return coords_[device]; }
  int64_t DeviceAt(const std::vector<int64_t>& coords) const;
  // The neighbour of `device` one step along `axis` in direction +1 or -1, or -1 when there is none (an edge of an
  // axis without wraparound, or an axis of extent 1).
  int64_t Neighbor(int64_t device, int64_t axis, int direction) const;
  // Hops between two devices along torus/mesh shortest paths (sum over axes).
  int64_t Distance(int64_t a, int64_t b) const;

 private:
  friend absl::StatusOr<TpuTopology> ParseTpuTopology(const TpuChipSpec& chip, const std::string& text);
  friend absl::StatusOr<TpuTopology> DefaultTpuTopology(const TpuChipSpec& chip, int64_t num_devices);
  static TpuTopology Build(const TpuChipSpec& chip, std::vector<int64_t> dims);
  const TpuChipSpec* chip_ = nullptr;
  std::vector<int64_t> dims_;
  std::vector<bool> wraps_;
  std::vector<std::vector<int64_t>> coords_;
  std::vector<int64_t> device_at_;  // x-fastest linear coordinate index -> device
};

// Parses and validates "AxB" (2D versions) or "AxBxC" (3D versions). Errors name the allowed shapes.
absl::StatusOr<TpuTopology> ParseTpuTopology(const TpuChipSpec& chip, const std::string& text);

// The listed topology with exactly `num_devices` devices (the first in listing order), for `--tpu=v5e` without
// `--topology`; an error naming the sizes there are when none matches.
absl::StatusOr<TpuTopology> DefaultTpuTopology(const TpuChipSpec& chip, int64_t num_devices);

}  // namespace xlac
