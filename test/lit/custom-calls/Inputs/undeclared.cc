#include <xlac/custom_call.h>
XLAC_ELEMENTWISE("test.swish")
float Swish(float x) { return x * sigmoid(x); }
