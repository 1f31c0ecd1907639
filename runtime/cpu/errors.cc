// Device errors and host-API statuses.
#include <algorithm>
#include <cstring>

#include "runtime/cpu/internal.h"

namespace xlac::rt {

void FillStatus(XlacRtStatus* status, int code, int64_t device, const std::string& message) {
  if (status == nullptr) return;
  status->code = code;
  status->device = device;
  size_t n = std::min(message.size(), static_cast<size_t>(XLAC_RT_MESSAGE_CAPACITY - 1));
  std::memcpy(status->message, message.data(), n);
  status->message[n] = '\0';
}

void RecordErrorLocked(XlacRtDevice* dev, int code, const std::string& message, bool consequence) {
  if (dev->failed.load(std::memory_order_relaxed)) return;
  XlacRtGroup* group = dev->group;
  dev->code = code == XLAC_RT_OK ? XLAC_RT_ERROR_EXECUTION : code;
  dev->message = message;
  dev->state = DeviceState::kFailed;
  dev->failed.store(1, std::memory_order_release);
  if (!consequence && group->first_error_device < 0) {
    group->first_error_device = dev->id;
    // Peers in other processes may be waiting for this process in an exchange: tell them now, not at the timeout.
    const XlacRtTransport* transport = group->transport;
    if (transport != nullptr && transport->fail != nullptr) {
      transport->fail(transport->user, ("device " + std::to_string(dev->id) + ": " + message).c_str());
    }
  }
  group->failed = true;
  WakeAllLocked(group);
}

void RecordError(XlacRtDevice* dev, int code, const std::string& message, bool consequence) {
  std::lock_guard<std::mutex> lock(dev->group->mu);
  RecordErrorLocked(dev, code, message, consequence);
}

}  // namespace xlac::rt

using xlac::rt::RecordError;

extern "C" {

void xlac_rt_set_error(XlacRtDevice* dev, const char* message) {
  xlac_rt_set_error_code(dev, XLAC_RT_ERROR_EXECUTION, message);
}

void xlac_rt_set_error_code(XlacRtDevice* dev, int code, const char* message) {
  RecordError(dev, code, message != nullptr ? message : "(no message)", /*consequence=*/false);
}

int xlac_rt_failed(XlacRtDevice* dev) { return dev->failed.load(std::memory_order_acquire); }

int xlac_rt_group_device_status(XlacRtGroup* group, int64_t device, XlacRtStatus* status) {
  if (device < 0 || device >= static_cast<int64_t>(group->devices.size())) {
    xlac::rt::FillStatus(status, XLAC_RT_ERROR_INVALID_ARGUMENT, -1,
                         "device " + std::to_string(device) + " is not in the group");
    return XLAC_RT_ERROR_INVALID_ARGUMENT;
  }
  std::lock_guard<std::mutex> lock(group->mu);
  const XlacRtDevice& dev = *group->devices[static_cast<size_t>(device)];
  if (!dev.failed.load()) {
    xlac::rt::FillStatus(status, XLAC_RT_OK, -1, "");
    return XLAC_RT_OK;
  }
  xlac::rt::FillStatus(status, dev.code, device, dev.message);
  return dev.code;
}

}  // extern "C"
