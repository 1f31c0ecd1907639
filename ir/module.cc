#include "ir/module.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace xlac {

std::vector<Computation*> Module::MakeComputationList() const {
  std::vector<Computation*> out;
  for (const auto& c : computations_) out.push_back(c.get());
  return out;
}

std::vector<Computation*> Module::MakeComputationPostOrder() const {
  std::vector<Computation*> order;
  absl::flat_hash_map<const Computation*, uint8_t> state;
  auto visit_from = [&](Computation* seed) {
    if (seed == nullptr || state[seed] != 0) return;
    // Iterative DFS over called computations; each frame walks its instructions' callees in program order.
    struct Frame {
      Computation* comp;
      size_t inst = 0;
      size_t callee = 0;
    };
    std::vector<Frame> stack = {{seed}};
    state[seed] = 1;
    while (!stack.empty()) {
      Frame& f = stack.back();
      Computation* next = nullptr;
      while (f.inst < f.comp->instructions().size()) {
        const auto& callees = f.comp->instructions()[f.inst]->called_computations();
        if (f.callee < callees.size()) {
          Computation* c = callees[f.callee++];
          if (state[c] == 0) {
            next = c;
            break;
          }
          continue;
        }
        ++f.inst;
        f.callee = 0;
      }
      if (next != nullptr) {
        state[next] = 1;
        stack.push_back({next});
        continue;
      }
      state[f.comp] = 2;
      order.push_back(f.comp);
      stack.pop_back();
    }
  };
  visit_from(entry_);
  for (const auto& c : computations_) visit_from(c.get());
  return order;
}

void Module::RegisterInstruction(Instruction* inst) {
  inst->set_unique_id(NextUniqueId());
  instruction_names_.insert(inst->name());
}

Computation* Module::AddComputation(std::unique_ptr<Computation> comp) {
  Computation* raw = comp.get();
  raw->parent_ = this;
  raw->set_unique_id(NextUniqueId());
  for (const auto& inst : raw->instructions()) RegisterInstruction(inst.get());
  computations_.push_back(std::move(comp));
  return raw;
}

Computation* Module::AddEntryComputation(std::unique_ptr<Computation> comp) {
  Computation* raw = AddComputation(std::move(comp));
  entry_ = raw;
  return raw;
}

absl::Status Module::RemoveComputation(Computation* comp) {
  if (comp == entry_) return absl::FailedPreconditionError("cannot remove the entry computation");
  for (const auto& c : computations_) {
    for (const auto& inst : c->instructions()) {
      const auto& callees = inst->called_computations();
      if (std::find(callees.begin(), callees.end(), comp) != callees.end()) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot remove computation ", comp->name(), ": called by ", inst->name()));
      }
    }
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const std::unique_ptr<Computation>& p) { return p.get() == comp; });
  if (it == computations_.end()) return absl::NotFoundError(absl::StrCat(comp->name(), " is not in the module"));
  computations_.erase(it);
  return absl::OkStatus();
}

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  clone->config_ = config_;
  clone->source_name_ = source_name_;
  absl::flat_hash_map<const Computation*, Computation*> map;
  for (const auto& comp : computations_) {
    Computation* copy = clone->AddComputation(comp->Clone(comp->name()));
    copy->set_unique_id(comp->unique_id());
    map[comp.get()] = copy;
  }
  for (size_t c = 0; c < computations_.size(); ++c) {
    const auto& originals = computations_[c]->instructions();
    const auto& copies = clone->computations_[c]->instructions();
    for (size_t i = 0; i < originals.size(); ++i) {
      Instruction* copy = copies[i].get();
      copy->set_unique_id(originals[i]->unique_id());
      std::vector<Computation*> callees = copy->called_computations();
      for (Computation*& callee : callees) {
        auto it = map.find(callee);
        if (it != map.end()) callee = it->second;
      }
      copy->set_called_computations(std::move(callees));
    }
  }
  if (entry_ != nullptr) clone->entry_ = map.at(entry_);
  clone->next_unique_id_ = next_unique_id_;
  clone->instruction_names_ = instruction_names_;
  clone->next_name_suffix_ = next_name_suffix_;
  return clone;
}

namespace {

std::string Uniquify(std::string_view prefix, const absl::flat_hash_set<std::string>& used,
                     absl::flat_hash_map<std::string, int64_t>& next_suffix) {
  std::string base(prefix.empty() ? std::string_view("instruction") : prefix);
  if (!used.contains(base)) return base;
  int64_t& n = next_suffix[base];
  for (;;) {
    std::string candidate = absl::StrCat(base, ".", ++n);
    if (!used.contains(candidate)) return candidate;
  }
}

}  // namespace

std::string Module::UniqueInstructionName(std::string_view prefix) {
  std::string name = Uniquify(prefix, instruction_names_, next_name_suffix_);
  instruction_names_.insert(name);
  return name;
}

std::string Module::UniqueComputationName(std::string_view prefix) {
  absl::flat_hash_set<std::string> used;
  for (const auto& c : computations_) used.insert(c->name());
  absl::flat_hash_map<std::string, int64_t> suffix;
  return Uniquify(prefix, used, suffix);
}

}  // namespace xlac
