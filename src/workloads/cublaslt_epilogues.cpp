// cuBLASLt GEMMs with bias-gradient and GELU epilogues, for row-major ATen tensors.
#include "workloads/cublaslt_epilogues.h"

#ifdef MIGSCOPE_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <cublasLt.h>
#include <dlfcn.h>

#include <array>
#include <optional>
#include <type_traits>
#endif

namespace migscope::workloads {

#ifdef MIGSCOPE_CUDA_KERNELS
namespace {

// The cuBLASLt entry points used here, from the library LibTorch loaded (libtorch_cuda needs it),
// so that these GEMMs run on the same cuBLASLt as ATen's.
struct LtApi {
    decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
    decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
    decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
    decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
    decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
    decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
    decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
    decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
    decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
    decltype(&cublasLtMatmul) matmul = nullptr;
};

// nullptr where the process has no cuBLASLt (or one without these symbols).
const LtApi* lt_api() {
    static const std::optional<LtApi> api = []() -> std::optional<LtApi> {
        LtApi a;
        bool complete = true;
        const auto load = [&](const char* symbol, auto& fn) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
                dlsym(RTLD_DEFAULT, symbol));
            complete = complete && fn != nullptr;
        };
        load("cublasLtMatmulDescCreate", a.desc_create);
        load("cublasLtMatmulDescDestroy", a.desc_destroy);
        load("cublasLtMatmulDescSetAttribute", a.desc_set);
        load("cublasLtMatrixLayoutCreate", a.layout_create);
        load("cublasLtMatrixLayoutDestroy", a.layout_destroy);
        load("cublasLtMatmulPreferenceCreate", a.preference_create);
        load("cublasLtMatmulPreferenceDestroy", a.preference_destroy);
        load("cublasLtMatmulPreferenceSetAttribute", a.preference_set);
        load("cublasLtMatmulAlgoGetHeuristic", a.heuristic);
        load("cublasLtMatmul", a.matmul);
        if (!complete)
            return std::nullopt;
        return a;
    }();
    return api ? &*api : nullptr;
}

void check(cublasStatus_t status, const char* what) {
    TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, "cuBLASLt ", what, " failed with status ",
                static_cast<int>(status));
}

// D [m, n] = op(A) op(B) with an epilogue, every matrix bf16 and column-major, as cuBLAS sees
// them: a row-major ATen matrix [r, c] is a column-major [c, r] one with leading dimension c.
struct LtGemm {
    cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
    int64_t m = 0, n = 0, k = 0;
    const void* a = nullptr;
    int64_t lda = 0;
    const void* b = nullptr;
    int64_t ldb = 0;
    void* d = nullptr;
    int64_t ldd = 0;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    void* bias = nullptr;  // the bias (read) or the bias gradient (written)
    void* aux = nullptr;   // GELU's input, written by GELU_AUX_BIAS
    int64_t aux_ld = 0;
};

// Runs the GEMM on the current stream; false where cuBLASLt has no algorithm for it.
bool run(const LtApi& api, const LtGemm& g) {
    cublasLtMatmulDesc_t desc = nullptr;
    check(api.desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate");
    std::array<cublasLtMatrixLayout_t, 3> layouts{};  // A, B, D (also C: beta is 0)
    cublasLtMatmulPreference_t preference = nullptr;
    struct Cleanup {
        const LtApi& api;
        cublasLtMatmulDesc_t& desc;
        std::array<cublasLtMatrixLayout_t, 3>& layouts;
        cublasLtMatmulPreference_t& preference;
        ~Cleanup() {
            for (cublasLtMatrixLayout_t layout : layouts)
                if (layout)
                    api.layout_destroy(layout);
            if (preference)
                api.preference_destroy(preference);
            api.desc_destroy(desc);
        }
    } cleanup{api, desc, layouts, preference};

    const auto set = [&](cublasLtMatmulDescAttributes_t attribute, const auto& value) {
        check(api.desc_set(desc, attribute, &value, sizeof(value)), "MatmulDescSetAttribute");
    };
    set(CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(g.trans_a));
    set(CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(g.trans_b));
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(g.epilogue));
    if (g.bias)
        set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias);
    if (g.aux) {
        set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, g.aux);
        set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, g.aux_ld);
    }
    const auto layout = [&](cublasLtMatrixLayout_t& out, int64_t rows, int64_t cols, int64_t ld) {
        check(api.layout_create(&out, CUDA_R_16BF, rows, cols, ld), "MatrixLayoutCreate");
    };
    const bool a_plain = g.trans_a == CUBLAS_OP_N, b_plain = g.trans_b == CUBLAS_OP_N;
    layout(layouts[0], a_plain ? g.m : g.k, a_plain ? g.k : g.m, g.lda);
    layout(layouts[1], b_plain ? g.k : g.n, b_plain ? g.n : g.k, g.ldb);
    layout(layouts[2], g.m, g.n, g.ldd);

    const uint64_t workspace_bytes = at::cuda::getCUDABlasLtWorkspaceSize();
    check(api.preference_create(&preference), "MatmulPreferenceCreate");
    check(api.preference_set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                             sizeof(workspace_bytes)),
          "MatmulPreferenceSetAttribute");
    cublasLtHandle_t handle = at::cuda::getCurrentCUDABlasLtHandle();
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t status = api.heuristic(handle, desc, layouts[0], layouts[1], layouts[2],
                                                layouts[2], preference, 1, &result, &found);
    if (status != CUBLAS_STATUS_SUCCESS || found == 0)
        return false;
    const float alpha = 1.0F, beta = 0.0F;
    check(api.matmul(handle, desc, &alpha, g.a, layouts[0], g.b, layouts[1], &beta, g.d, layouts[2],
                     g.d, layouts[2], &result.algo, at::cuda::getCUDABlasLtWorkspace(),
                     workspace_bytes, at::cuda::getCurrentCUDAStream()),
          "Matmul");
    return true;
}

// Contiguous bf16 matrices (or vectors) on one GPU, every size a multiple of 8 (cuBLASLt's
// 16-byte alignment of rows, and the GELU input's leading dimension).
bool eligible(std::initializer_list<const torch::Tensor*> tensors) {
    const torch::Tensor& first = **tensors.begin();
    for (const torch::Tensor* t : tensors) {
        if (!t->is_cuda() || t->device() != first.device() ||
            t->scalar_type() != torch::kBFloat16 || !t->is_contiguous() || t->dim() > 2)
            return false;
        for (int64_t size : t->sizes())
            if (size % 8 != 0)
                return false;
    }
    return true;
}

void* data(const torch::Tensor& t) {
    return t.data_ptr();
}

}  // namespace

bool weight_and_bias_grad(const torch::Tensor& grad_output, const torch::Tensor& input,
                          torch::Tensor& grad_weight, torch::Tensor& grad_bias) {
    const LtApi* api = lt_api();
    if (!api || !eligible({&grad_output, &input}) || grad_output.dim() != 2 || input.dim() != 2)
        return false;
    const int64_t tokens = input.size(0), in = input.size(1), out = grad_output.size(1);
    torch::Tensor weight = torch::empty({out, in}, input.options());
    torch::Tensor bias = torch::empty({out}, input.options());
    // dW^T [in, out] (column-major) = X^T [in, tokens] . dY [tokens, out]; the bias gradient
    // reduces B = dY over k.
    LtGemm g;
    g.trans_a = CUBLAS_OP_N;
    g.trans_b = CUBLAS_OP_T;
    g.m = in, g.n = out, g.k = tokens;
    g.a = data(input), g.lda = in;
    g.b = data(grad_output), g.ldb = out;
    g.d = data(weight), g.ldd = in;
    g.epilogue = CUBLASLT_EPILOGUE_BGRADB;
    g.bias = data(bias);
    if (!run(*api, g))
        return false;
    grad_weight = std::move(weight);
    grad_bias = std::move(bias);
    return true;
}

bool linear_gelu_tanh(const torch::Tensor& input, const torch::Tensor& weight,
                      const torch::Tensor& bias, torch::Tensor& output,
                      torch::Tensor& pre_activation) {
    const LtApi* api = lt_api();
    if (!api || !eligible({&input, &weight, &bias}) || input.dim() != 2 || weight.dim() != 2)
        return false;
    const int64_t tokens = input.size(0), in = input.size(1), hidden = weight.size(0);
    torch::Tensor out = torch::empty({tokens, hidden}, input.options());
    torch::Tensor pre = torch::empty({tokens, hidden}, input.options());
    // H^T [hidden, tokens] = W [hidden, in] . X^T [in, tokens]; the bias runs along the rows.
    LtGemm g;
    g.trans_a = CUBLAS_OP_T;
    g.trans_b = CUBLAS_OP_N;
    g.m = hidden, g.n = tokens, g.k = in;
    g.a = data(weight), g.lda = in;
    g.b = data(input), g.ldb = in;
    g.d = data(out), g.ldd = hidden;
    g.epilogue = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    g.bias = data(bias);
    g.aux = data(pre), g.aux_ld = hidden;
    if (!run(*api, g))
        return false;
    output = std::move(out);
    pre_activation = std::move(pre);
    return true;
}

#else  // no CUDA in this build: the callers use ATen

bool weight_and_bias_grad(const torch::Tensor&, const torch::Tensor&, torch::Tensor&,
                          torch::Tensor&) {
    return false;
}
bool linear_gelu_tanh(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                      torch::Tensor&, torch::Tensor&) {
    return false;
}
#endif

}  // namespace migscope::workloads
