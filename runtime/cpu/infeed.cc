// Infeed: compiled code asks the host for each execution's data through the group's handler.
#include <string>

#include "runtime/cpu/internal.h"

using namespace xlac::rt;

extern "C" {

void xlac_rt_group_set_infeed_handler(XlacRtGroup* group, XlacRtInfeedFn fn, void* user) {
  group->infeed = fn;
  group->infeed_user = user;
}

int xlac_rt_infeed(XlacRtDevice* dev, const char* site, void* const* leaves) {
  if (xlac_rt_failed(dev)) return dev->code;
  const char* name = site != nullptr ? site : "";
  XlacRtGroup* group = dev->group;
  if (group->infeed == nullptr) {
    RecordError(dev, XLAC_RT_ERROR_UNIMPLEMENTED, std::string("infeed '") + name + "' has no infeed handler",
                /*consequence=*/false);
    return dev->code;
  }
  int rc = group->infeed(group->infeed_user, name, leaves, dev);
  if (rc != 0 && !xlac_rt_failed(dev)) {
    RecordError(dev, XLAC_RT_ERROR_EXECUTION,
                std::string("infeed '") + name + "' failed (handler returned " + std::to_string(rc) + ")",
                /*consequence=*/false);
  }
  return xlac_rt_failed(dev) ? dev->code : XLAC_RT_OK;
}

}  // extern "C"
