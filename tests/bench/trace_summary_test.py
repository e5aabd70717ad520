#!/usr/bin/env python3
"""Tests of bench/trace_summary.py on a hand-made Kineto trace (no GPU needed)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "trace_summary.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import trace_summary  # noqa: E402


def trace(events):
    return {"traceEvents": events}


def op(name, external, dims):
    return {"cat": "cpu_op", "name": name, "ts": 0, "dur": 1, "args": {"External id": external, "Input Dims": dims}}


def launch(correlation, external):
    return {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 0, "dur": 1,
            "args": {"correlation": correlation, "External id": external}}


def kernel(name, ts, dur, correlation):
    return {"cat": "kernel", "name": name, "ts": ts, "dur": dur, "args": {"correlation": correlation}}


class TraceSummaryTest(unittest.TestCase):
    def summarise(self, events, steps):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(trace(events), f)
        try:
            return subprocess.run([sys.executable, SCRIPT, f.name, "--steps", str(steps)],
                                  capture_output=True, text=True)
        finally:
            os.unlink(f.name)

    def test_sums_per_step_by_kind_kernel_and_operator(self):
        events = [op("aten::mm", 7, [[8, 4], [4, 2]]), launch(1, 7), launch(2, 7),
                  op("aten::copy_", 8, [[8], [8]]), launch(3, 8),
                  kernel("nvjet_sm90_tst_128x128", 0, 3000, 1),  # 3 ms
                  kernel("nvjet_sm90_tst_128x128", 5000, 1000, 2),  # 1 ms, ends at 6 ms
                  kernel("void at::native::direct_copy_kernel_cuda", 7000, 1000, 3)]  # ends at 8 ms
        out = self.summarise(events, steps=2)
        self.assertEqual(out.returncode, 0, out.stderr)
        text = out.stdout
        # busy 5 ms over 2 steps; span 0..8 ms over 2 steps
        self.assertIn("GPU busy 2.5 ms/step of a 4.0 ms span/step", text)
        self.assertRegex(text, r"2\.00\s+80\.0 %\s+matmul")
        self.assertRegex(text, r"0\.50\s+20\.0 %\s+copy/cast")
        self.assertRegex(text, r"0\.50\s+20\.0 %\s+direct_copy_kernel_cuda")  # namespaces dropped
        self.assertRegex(text, r"2\.00\s+80\.0 %\s+aten::mm \[\[8, 4\], \[4, 2\]\]")

    def test_migscopes_fused_kernels_get_their_own_kinds(self):
        events = [kernel("migscope::workloads::kernels::gather_qkv_gradient_kernel", 0, 1000, 1),
                  kernel("migscope::workloads::kernels::column_sums_finish_kernel", 1000, 1000, 2),
                  kernel("migscope::workloads::kernels::add_layer_norm_backward_kernel", 2000, 2000, 3)]
        text = self.summarise(events, steps=1).stdout
        self.assertRegex(text, r"1\.00\s+25\.0 %\s+q/k/v gradient gather")
        self.assertRegex(text, r"1\.00\s+25\.0 %\s+column sums")
        self.assertRegex(text, r"2\.00\s+50\.0 %\s+layer norm")

    def test_cnn_kinds_name_cudnn_aten_and_inductor_kernels(self):
        names = {  # name -> kind
            "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64": "convolution",
            "sm90_xmma_wgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc": "convolution",
            "void at::native::batch_norm_collect_statistics_channels_last_kernel<c10::BFloat16>": "batch norm",
            "triton_red_fused__native_batch_norm_legit_functional_relu_12": "batch norm",
            "triton_per_fused_native_batch_norm_backward_threshold_backward_7": "batch norm",
            "triton_poi_fused_add_relu_threshold_backward_3": "relu/add",
            "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl": "relu/add",
            "void at::native::vectorized_elementwise_kernel<8, at::native::launch_clamp_scalar": "relu/add",
            "void migscope::workloads::kernels::(anonymous namespace)::batch_norm_apply_kernel<true, true>": "batch norm",
            "triton_poi_fused__to_copy_convert_element_type_1": "copy/cast",
            "void at::native::(anonymous namespace)::max_pool_forward_nhwc<c10::BFloat16>": "pooling",
            "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNN": "fc + loss",
            "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>": "fc + loss",
            "void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor<float, 4>>": "optimizer",
            "void at::native::reduce_kernel<512, 1, MeanOps<float>>": "other",
        }
        for name, kind in names.items():
            self.assertEqual(trace_summary.kind_of(name, trace_summary.CNN_KINDS), kind, name)

    def test_kinds_per_step_with_every_kind_present(self):
        kernels = [kernel("sm90_xmma_dgrad_implicit_gemm", 0, 3000, 1), kernel("fused_adamw", 3000, 1000, 2)]
        by_kind = trace_summary.ms_by_kind(kernels, 2, trace_summary.CNN_KINDS)
        self.assertEqual(list(by_kind)[:2], ["convolution", "optimizer"])
        self.assertEqual((by_kind["convolution"], by_kind["optimizer"], by_kind["pooling"]), (1.5, 0.5, 0.0))
        self.assertEqual(trace_summary.busy_and_span_ms(kernels, 2), (2.0, 2.0))

    def test_a_trace_without_kernels_is_refused_with_the_reason(self):
        out = self.summarise([op("aten::mm", 1, [])], steps=1)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no CUDA kernels", out.stderr)


if __name__ == "__main__":
    unittest.main()
