// Kernels for the custom calls PyTorch/XLA emits on AWS Neuron (torch-neuronx), so programs exported there run on
// xlac: `xla-run program.hlo --custom-call-src=examples/custom_call/neuron_gelu.cc`. See docs/custom_calls.md.
// Each target has an f32 and a bf16 kernel (overloads: a call's element types pick one), since torch-neuronx exports
// bf16 models (NeuronX Distributed) as often as f32 ones; the bf16 kernels compute in f32 and round once.
#include <xlac/custom_call.h>

#include <cmath>

namespace neuron {

// torch-neuronx lowers torch.nn.functional.gelu (approximate="none") to AwsNeuronGelu: x * Phi(x).
XLAC_ELEMENTWISE("AwsNeuronGelu")
float Gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

XLAC_ELEMENTWISE("AwsNeuronGelu")
__bf16 GeluBf16(__bf16 x) { return static_cast<__bf16>(Gelu(static_cast<float>(x))); }

// Its gradient with respect to x, which the backward pass multiplies by the incoming gradient:
// d/dx [x Phi(x)] = Phi(x) + x phi(x).
XLAC_ELEMENTWISE("AwsNeuronGeluBackward")
float GeluBackward(float x) {
  const float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * std::exp(-0.5f * x * x);
  return cdf + x * pdf;
}

XLAC_ELEMENTWISE("AwsNeuronGeluBackward")
__bf16 GeluBackwardBf16(__bf16 x) { return static_cast<__bf16>(GeluBackward(static_cast<float>(x))); }

// Moves a parameter into the device's static ring buffer: on a host the value itself.
XLAC_ELEMENTWISE("AwsNeuronTransferWithStaticRing")
float TransferWithStaticRing(float x) { return x; }

XLAC_ELEMENTWISE("AwsNeuronTransferWithStaticRing")
__bf16 TransferWithStaticRingBf16(__bf16 x) { return x; }

}  // namespace neuron
