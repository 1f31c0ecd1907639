/* Random-bit generation and top-k kernels shared by the reference interpreter and compiled code (C99). */
#ifndef XLAC_RUNTIME_RNG_H_
#define XLAC_RUNTIME_RNG_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  XLAC_RT_RNG_THREE_FRY = 0,
  XLAC_RT_RNG_PHILOX = 1 /* also rng_default, as on XLA's CPU and GPU backends */
};

/* rng-bit-generator, bit-exact with XLA's ThreeFry and Philox expansions (xla/hlo/builder/lib/prng.cc).
 * `state` holds `state_size` u64 words (key first); the advanced state goes to `new_state` (which may alias it).
 * `data` is a row-major array of `dims[rank]` elements of `elem_bytes` bytes; each gets the low `bit_width` bits of
 * its random word, sign-extended to the storage width when `sign_extend` (signed sub-byte integers) and
 * zero-extended otherwise. Returns 0, or 1 when the state is too small for the algorithm (nothing written). */
int32_t xlac_rt_rng_bit_generator(int32_t algorithm, const uint64_t* state, int64_t state_size, uint64_t* new_state,
                                  void* data, const int64_t* dims, int64_t rank, int32_t bit_width, int32_t elem_bytes,
                                  int32_t sign_extend);

/* topk over `rows` rows of `len` order keys (signed 64-bit, larger = greater): the indices of the k greatest keys
 * (smallest when !largest) of each row, in order, ties by lower index (a stable sort), to indices[rows * k]. */
void xlac_rt_topk_keys(const int64_t* keys, int64_t rows, int64_t len, int64_t k, int32_t largest, int64_t* indices);

#ifdef __cplusplus
}
#endif

#endif /* XLAC_RUNTIME_RNG_H_ */
