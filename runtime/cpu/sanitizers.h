// XLAC_ASAN: defined when this translation unit is built with AddressSanitizer (gcc or clang), for code that must
// tell ASan about stack switches or avoid what ASan supports only partly (swapcontext).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define XLAC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XLAC_ASAN 1
#endif
#endif
