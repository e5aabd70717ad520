// CUDA kernels of the ResNet stem's max pooling (3x3 window, stride 2, padding 1) for a bf16
// channels-last tensor [n][height][width][channels], forward and backward. ATen's keeps each
// output's argmax as an int64 flat position and its backward adds gradients back through them;
// here the argmax is the position in its window (0-8, one byte a value) and the backward gathers:
// each input value sums the gradients of the (at most four) windows that chose it, in the order
// ATen's channels-last backward does (fp32 sums, one bf16 rounding), so the values are the same.
// Plain launchers on raw pointers, as batch_norm_kernels.h.
#pragma once

#include <cstdint>

namespace migscope::workloads::kernels {

using Bf16Bits = uint16_t;

// Whether the kernels take `channels`: a multiple of 8 (one 16-byte vector of 8 values).
bool max_pool_channels_supported(int64_t channels);

// The output's height or width for an input's: (size - 1) / 2 + 1.
int64_t max_pool_output_size(int64_t input_size);

// y[n][oh][ow][c] = the max of x over rows 2oh-1..2oh+1 and columns 2ow-1..2ow+1 inside the input
// (a NaN wins, as in ATen: the last NaN of the window), and argmax[n][oh][ow][c] its position in
// the window, 3 * row + column (an all -inf window: its first position inside the input).
void max_pool_forward(const Bf16Bits* x, int64_t batch, int64_t height, int64_t width,
                      int64_t channels, Bf16Bits* y, uint8_t* argmax, void* stream);

// dx[n][h][w][c] = the sum of dy over the windows whose argmax is (h, w): every dx value written.
void max_pool_backward(const Bf16Bits* dy, const uint8_t* argmax, int64_t batch, int64_t height,
                       int64_t width, int64_t channels, Bf16Bits* dx, void* stream);

}  // namespace migscope::workloads::kernels
