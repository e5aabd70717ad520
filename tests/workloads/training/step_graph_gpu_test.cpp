// GPU check of the captured step (trainer.h, step_graph.h): a replayed CUDA graph trains like the
// eager step on changing batches (the optimizer's step count advances on replay, new batches reach
// the graph), also when each step is launched before the last one's loss is read; a step that
// cannot be captured goes on eagerly, and a group job's capture shares the job's memory pool.
// Labelled gpu: run on the GPU host (ctest -L gpu).
#include "workloads/training/step_graph.h"

#include <ATen/cuda/MemPool.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <gtest/gtest.h>

#include "workloads/models/registry.h"
#include "workloads/training/trainer.h"

using namespace migscope::workloads;

namespace {

constexpr int kSteps = 8;

// A model that reads its loss on the host inside the step: a host sync, which a capture refuses.
class HostSyncingModel : public Model {
  public:
    explicit HostSyncingModel(std::unique_ptr<Model> inner) : inner_(std::move(inner)) {}
    torch::nn::Module& module() override { return inner_->module(); }
    void to_device(torch::Device device) override { inner_->to_device(device); }
    Batch synthetic_batch(int64_t batch, torch::Device device) override {
        return inner_->synthetic_batch(batch, device);
    }
    HostBatchMaker file_data(const std::string& path, int64_t batch) override {
        return inner_->file_data(path, batch);
    }
    torch::Tensor loss(const Batch& batch) override {
        torch::Tensor loss = inner_->loss(batch);
        EXPECT_TRUE(std::isfinite(loss.item<float>()));
        return loss;
    }
    int64_t items_per_sample() const override { return inner_->items_per_sample(); }
    std::string item_unit() const override { return inner_->item_unit(); }
    std::optional<double> train_flops_per_sample() const override {
        return inner_->train_flops_per_sample();
    }
    void prepare_finetune(const FinetuneOptions& options) override {
        inner_->prepare_finetune(options);
    }
    bool trains_with_bf16_weights() const override { return inner_->trains_with_bf16_weights(); }

  private:
    std::unique_ptr<Model> inner_;
};

struct TrainingRun {
    std::vector<double> losses;
    std::vector<torch::Tensor> initial, final;  // the parameters, fp32
    bool replaying = false;
    std::string failure;
};

std::vector<torch::Tensor> parameters_fp32(Model& model) {
    std::vector<torch::Tensor> out;
    for (const torch::Tensor& p : model.module().parameters())
        out.push_back(p.detach().to(torch::kFloat32).clone());
    return out;
}

// kSteps steps of `name` on a stream of its own, alternating two batches that arrive as new
// tensors every step (as file data does).
// launch_ahead: each step launched before the previous step's loss is read (Trainer::launch).
TrainingRun train(const std::string& name, bool cuda_graph, bool host_sync = false,
                  std::optional<c10::MempoolId_t> job_pool = std::nullopt,
                  bool launch_ahead = false) {
    torch::manual_seed(0);
    std::unique_ptr<Model> model = make_model(name);
    if (host_sync)
        model = std::make_unique<HostSyncingModel>(std::move(model));
    const int64_t batch = 4;
    torch::manual_seed(1);
    const Batch a = model->synthetic_batch(batch, torch::kCUDA);
    torch::manual_seed(2);
    const Batch b = model->synthetic_batch(batch, torch::kCUDA);
    TrainerOptions options;
    options.device = torch::kCUDA;
    options.cuda_graph = cuda_graph;
    options.job_pool = job_pool;
    TrainingRun run;
    {
        Trainer trainer(*model, options);
        run.initial = parameters_fp32(*model);
        for (int i = 0; i < kSteps; ++i) {
            const Batch& next = i % 2 ? b : a;
            if (!launch_ahead) {
                run.losses.push_back(trainer.step({next.inputs.clone(), next.targets.clone()}));
                continue;
            }
            trainer.launch({next.inputs.clone(), next.targets.clone()});
            if (trainer.unread() > 1)
                run.losses.push_back(*trainer.wait_oldest());
        }
        while (const auto loss = trainer.wait_oldest())
            run.losses.push_back(*loss);
        run.replaying = trainer.graph_replaying();
        run.failure = trainer.graph_failure();
        trainer.finish();
    }
    run.final = parameters_fp32(*model);
    return run;
}

// ||a - b|| / ||b - initial|| over all parameters: how far the graph's weights are from the eager
// ones, relative to how far training moved them.
double relative_distance(const TrainingRun& graph, const TrainingRun& eager) {
    double apart = 0, moved = 0;
    for (size_t i = 0; i < eager.final.size(); ++i) {
        apart += (graph.final[i] - eager.final[i]).pow(2).sum().item<double>();
        moved += (eager.final[i] - eager.initial[i]).pow(2).sum().item<double>();
    }
    return std::sqrt(apart / moved);
}

void expect_same_training(const TrainingRun& graph, const TrainingRun& eager) {
    ASSERT_EQ(graph.losses.size(), eager.losses.size());
    for (size_t i = 0; i < eager.losses.size(); ++i) {
        EXPECT_NEAR(graph.losses[i], eager.losses[i], 1e-2 * std::abs(eager.losses[i]) + 1e-3)
            << "step " << i;
    }
    // A frozen AdamW step count (bias corrections of the capture step) moves the weights
    // differently by tens of percent within these steps; a stale batch changes the losses.
    EXPECT_LT(relative_distance(graph, eager), 0.05);
}

}  // namespace

class GraphStepGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GraphStepGpu, TrainsLikeTheEagerStepOnChangingBatches) {
    ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
    c10::cuda::CUDAStreamGuard on_side_stream(c10::cuda::getStreamFromPool());
    const TrainingRun eager = train(GetParam(), false);
    const TrainingRun graph = train(GetParam(), true);
    EXPECT_FALSE(eager.replaying);
    EXPECT_TRUE(graph.replaying) << graph.failure;
    EXPECT_EQ(graph.failure, "");
    expect_same_training(graph, eager);
}

// With the next step launched before the loss of the one before is read, the batches freed as
// soon as they are launched, the graph trains the same.
TEST_P(GraphStepGpu, LaunchedAheadTrainsLikeOneStepAtATime) {
    ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
    c10::cuda::CUDAStreamGuard on_side_stream(c10::cuda::getStreamFromPool());
    const TrainingRun one_at_a_time = train(GetParam(), true);
    const TrainingRun ahead = train(GetParam(), true, false, std::nullopt, /*launch_ahead=*/true);
    EXPECT_TRUE(ahead.replaying) << ahead.failure;
    expect_same_training(ahead, one_at_a_time);
}

// The transformers (bf16 weights, migscope's AdamW kernel), the CNN and mlp (fp32 weights under
// autocast, ATen's fused AdamW).
INSTANTIATE_TEST_SUITE_P(TinyWorkloads, GraphStepGpu,
                         ::testing::Values("gpt2-tiny", "bert-tiny", "vit-tiny", "resnet-tiny",
                                           "mlp-tiny"));

TEST(GraphStepFallbackGpu, AStepThatSyncsWithTheHostGoesOnEagerlyAndSaysWhy) {
    ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
    c10::cuda::CUDAStreamGuard on_side_stream(c10::cuda::getStreamFromPool());
    const TrainingRun eager = train("gpt2-tiny", false, /*host_sync=*/true);
    const TrainingRun graph = train("gpt2-tiny", true, /*host_sync=*/true);
    EXPECT_FALSE(graph.replaying);
    EXPECT_NE(graph.failure, "");
    expect_same_training(graph, eager);
}

TEST(GraphStepPoolGpu, AGroupJobsCaptureSharesItsPoolAndTheStreamStaysRoutedThere) {
    ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
    namespace alloc = c10::cuda::CUDACachingAllocator;
    const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard on_job_stream(stream);
    const c10::MempoolId_t pool = at::cuda::MemPool::graph_pool_handle(/*is_user_created=*/true);
    allocate_stream_to_pool(stream.device_index(), pool, stream.stream());
    const TrainingRun eager = train("gpt2-tiny", false);
    const TrainingRun graph = train("gpt2-tiny", true, false, pool);
    EXPECT_TRUE(graph.replaying) << graph.failure;
    expect_same_training(graph, eager);
    // After the capture, the job's own allocations still land in its pool.
    const torch::Tensor after = torch::empty({1 << 20}, torch::kCUDA);
    bool in_pool = false;
    for (const auto& segment : alloc::snapshot(pool, false).segments) {
        const auto begin = static_cast<uintptr_t>(segment.address);
        const auto p = reinterpret_cast<uintptr_t>(after.data_ptr());
        if (segment.owner_private_pool_id == pool && p >= begin && p < begin + segment.total_size)
            in_pool = true;
    }
    EXPECT_TRUE(in_pool);
    alloc::endAllocateToPool(stream.device_index(), pool);
}
