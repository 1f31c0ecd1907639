#include "ir/attributes.h"

#include <numeric>

#include "ir/literal.h"

namespace xlac {

std::vector<int64_t> IotaList::ToList() const {
  int64_t n = 1;
  for (int64_t d : reshape_dims) n *= d;
  std::vector<int64_t> iota(static_cast<size_t>(n));
  std::iota(iota.begin(), iota.end(), 0);
  if (transpose_perm.empty()) return iota;
  // Transpose the row-major array of shape reshape_dims by transpose_perm.
  size_t rank = reshape_dims.size();
  std::vector<int64_t> out_dims(rank), in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * reshape_dims[i];
  for (size_t i = 0; i < rank; ++i) out_dims[i] = reshape_dims[transpose_perm[i]];
  std::vector<int64_t> out(static_cast<size_t>(n));
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += index[i] * in_strides[transpose_perm[i]];
    out[linear] = iota[src];
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < out_dims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> ReplicaGroups::Expanded() const {
  if (!iota) return groups;
  std::vector<int64_t> ids = iota->ToList();
  std::vector<std::vector<int64_t>> out;
  int64_t group_size = iota->dims.size() == 2 ? iota->dims[1] : static_cast<int64_t>(ids.size());
  if (group_size <= 0) return out;
  for (size_t i = 0; i < ids.size(); i += static_cast<size_t>(group_size)) {
    out.emplace_back(ids.begin() + i, ids.begin() + std::min(ids.size(), i + static_cast<size_t>(group_size)));
  }
  return out;
}

bool OpMetadata::empty() const { return *this == OpMetadata{}; }

bool AttrValue::operator==(const AttrValue& other) const {
  if (kind != other.kind) return false;
  if (kind == AttrKind::kLiteral) {
    const auto& a = get<std::shared_ptr<const Literal>>();
    const auto& b = other.get<std::shared_ptr<const Literal>>();
    if (!a || !b) return a == b;
    return *a == *b;
  }
  return value == other.value;
}

const AttrValue* AttrMap::Find(std::string_view name) const {
  for (const auto& [key, value] : entries_) {
    if (key == name) return &value;
  }
  return nullptr;
}

AttrValue* AttrMap::FindMutable(std::string_view name) {
  for (auto& [key, value] : entries_) {
    if (key == name) return &value;
  }
  return nullptr;
}

void AttrMap::Set(std::string name, AttrValue value) {
  if (AttrValue* existing = FindMutable(name)) {
    *existing = std::move(value);
    return;
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

bool AttrMap::Erase(std::string_view name) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == name) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

bool AttrMap::operator==(const AttrMap& other) const {
  if (entries_.size() != other.entries_.size()) return false;
  for (const auto& [key, value] : entries_) {
    const AttrValue* v = other.Find(key);
    if (!v || !(*v == value)) return false;
  }
  return true;
}

}  // namespace xlac
