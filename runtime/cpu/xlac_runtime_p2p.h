/* Point-to-point transfers between the devices of a group (C99): send/recv without source-target pairs, as the
 * StableHLO interpreter runs them (host transfers between the programs of interpreter.run_parallel). */
#ifndef XLAC_RUNTIME_P2P_H_
#define XLAC_RUNTIME_P2P_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* struct XlacRtDevice is xlac_runtime.h's XlacRtDevice (spelled out so this header stands alone). */
/* Posts `bytes` bytes from `data` as the next message on `channel`: the k-th send on a channel by any device feeds
 * the k-th receive on it. Does not wait for the receiver. Returns 0, or the device's error code (nothing sent). */
int xlac_rt_p2p_send(struct XlacRtDevice* dev, int64_t channel, const void* data, int64_t bytes, const char* name);

/* Waits for the next message on `channel` and copies it to `data`, which must be as large as the message. Fails
 * (and returns the error code) on a size mismatch, on the group's timeout, at once when every other device has
 * finished, and when another device failed. */
int xlac_rt_p2p_recv(struct XlacRtDevice* dev, int64_t channel, void* data, int64_t bytes, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* XLAC_RUNTIME_P2P_H_ */
