#include "train/trainer.h"

#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/rng.h"
#include "train/checkpoint.h"

namespace transduce {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t count_tokens(const Tensor& ids) {
  int64_t n = 0;
  const int32_t* p = ids.i32();
  for (int64_t i = 0; i < ids.numel(); ++i) n += p[i] != kPadId;
  return n;
}

}  // namespace

void to_json(nlohmann::json& j, const TrainOptions& o) {
  j = nlohmann::json{{"batch_tokens", o.batch_tokens},
                     {"accum", o.accum},
                     {"seed", o.seed},
                     {"warmup", o.warmup},
                     {"lr_scale", o.lr_scale},
                     {"adam_beta1", o.adam.beta1},
                     {"adam_beta2", o.adam.beta2},
                     {"adam_eps", o.adam.eps},
                     {"max_steps", o.max_steps},
                     {"max_epochs", o.max_epochs},
                     {"max_minutes", o.max_minutes},
                     {"log_every", o.log_every},
                     {"valid_every", o.valid_every},
                     {"save_every", o.save_every},
                     {"save_every_minutes", o.save_every_minutes},
                     {"keep", o.keep}};
}

void update_from_json(const nlohmann::json& j, TrainOptions& o) {
  o.batch_tokens = j.value("batch_tokens", o.batch_tokens);
  o.accum = j.value("accum", o.accum);
  o.seed = j.value("seed", o.seed);
  o.warmup = j.value("warmup", o.warmup);
  o.lr_scale = j.value("lr_scale", o.lr_scale);
  o.adam.beta1 = j.value("adam_beta1", o.adam.beta1);
  o.adam.beta2 = j.value("adam_beta2", o.adam.beta2);
  o.adam.eps = j.value("adam_eps", o.adam.eps);
  o.max_steps = j.value("max_steps", o.max_steps);
  o.max_epochs = j.value("max_epochs", o.max_epochs);
  o.max_minutes = j.value("max_minutes", o.max_minutes);
  o.log_every = j.value("log_every", o.log_every);
  o.valid_every = j.value("valid_every", o.valid_every);
  o.save_every = j.value("save_every", o.save_every);
  o.save_every_minutes = j.value("save_every_minutes", o.save_every_minutes);
  o.keep = j.value("keep", o.keep);
}

Trainer::Trainer(Transformer& model, const std::vector<Example>& train,
                 const std::vector<Example>* valid, TrainOptions options)
    : model_(model),
      train_(train),
      valid_(valid && !valid->empty() ? valid : nullptr),
      options_(std::move(options)),
      batcher_(&train_, BatcherOptions{options_.batch_tokens, options_.seed}),
      adam_(model.parameters(), options_.adam) {
  if (options_.accum < 1) fail("--accum must be at least 1, got {}", options_.accum);
  if (options_.warmup < 1) fail("--warmup must be at least 1, got {}", options_.warmup);
  if (options_.max_steps <= 0 && options_.max_epochs <= 0 && options_.max_minutes <= 0)
    fail("training needs a limit: give --max-steps, --max-epochs or --max-minutes");
}

nlohmann::json Trainer::state() const {
  return {{"step", step_},
          {"epoch", epoch_},
          {"batch_in_epoch", batch_in_epoch_},
          {"elapsed_seconds", elapsed()},
          {"options", options_}};
}

void Trainer::restore(const nlohmann::json& state) {
  step_ = state.at("step").get<int64_t>();
  epoch_ = state.at("epoch").get<int64_t>();
  batch_in_epoch_ = state.at("batch_in_epoch").get<int64_t>();
  elapsed_before_ = state.value("elapsed_seconds", 0.0);
  if (adam_.steps() != step_)
    fail("checkpoint state says step {} but its optimizer has taken {} steps", step_,
         adam_.steps());
}

double Trainer::elapsed() const {
  return elapsed_before_ + (run_start_ > 0 ? now_seconds() - run_start_ : 0.0);
}

bool Trainer::limits_reached() const {
  return (options_.max_steps > 0 && step_ >= options_.max_steps) ||
         (options_.max_epochs > 0 && epoch_ >= options_.max_epochs) ||
         (options_.max_minutes > 0 && elapsed() >= options_.max_minutes * 60.0);
}

const std::vector<int64_t>* Trainer::next_batch() {
  if (options_.max_epochs > 0 && epoch_ >= options_.max_epochs) return nullptr;
  if (plan_epoch_ != epoch_) {
    plan_ = batcher_.epoch_plan(epoch_);
    plan_epoch_ = epoch_;
  }
  const std::vector<int64_t>* batch = &plan_[static_cast<size_t>(batch_in_epoch_)];
  return batch;
}

bool Trainer::update(double* loss_sum, double* nll_sum, int64_t* tokens, int64_t* all_tokens) {
  // Gather the update's batches first: the gradient is the mean over all their target tokens.
  std::vector<Batch> batches;
  int64_t target_tokens = 0;
  for (int k = 0; k < options_.accum; ++k) {
    const std::vector<int64_t>* indices = next_batch();
    if (!indices) break;
    batches.push_back(batcher_.make_batch(*indices));
    target_tokens += count_tokens(batches.back().tgt_out);
    if (++batch_in_epoch_ >= static_cast<int64_t>(plan_.size())) {
      ++epoch_;
      batch_in_epoch_ = 0;
    }
  }
  if (batches.empty()) return false;

  model_.zero_grad();
  const float grad_scale = 1.0f / static_cast<float>(std::max<int64_t>(target_tokens, 1));
  for (size_t k = 0; k < batches.size(); ++k) {
    arena_.reset();
    Context ctx(arena_, /*train=*/true, hash_u64(options_.seed, static_cast<uint64_t>(step_), k));
    const ops::CrossEntropySums sums = model_.forward(ctx, batches[k]);
    model_.backward(ctx, grad_scale);
    *loss_sum += sums.loss;
    *nll_sum += sums.nll;
    *tokens += sums.tokens;
    *all_tokens += sums.tokens + count_tokens(batches[k].src);
  }
  ++step_;
  adam_.step(
      noam_learning_rate(step_, model_.config().d_model, options_.warmup, options_.lr_scale));
  return true;
}

TrainLog Trainer::validate() {
  TrainLog log;
  log.validation = true;
  log.step = step_;
  log.epoch = epoch_ + 1;
  log.elapsed_seconds = elapsed();
  if (!valid_) return log;
  Batcher valid_batches(valid_, BatcherOptions{options_.batch_tokens, options_.seed});
  double loss = 0, nll = 0;
  int64_t tokens = 0;
  for (const std::vector<int64_t>& indices : valid_batches.epoch_plan(0)) {
    arena_.reset();
    Context ctx(arena_, /*train=*/false);
    const ops::CrossEntropySums sums = model_.forward(ctx, valid_batches.make_batch(indices));
    loss += sums.loss;
    nll += sums.nll;
    tokens += sums.tokens;
  }
  log.loss = loss / std::max<int64_t>(tokens, 1);
  log.perplexity = std::exp(nll / std::max<int64_t>(tokens, 1));
  return log;
}

void Trainer::save() {
  if (options_.out_dir.empty()) return;
  save_checkpoint(options_.out_dir, model_, adam_, step_, state(), options_.keep);
  last_save_time_ = elapsed();
}

void Trainer::run(const std::function<void(const TrainLog&)>& log,
                  const std::function<void(int64_t)>& progress) {
  run_start_ = now_seconds();
  last_save_time_ = elapsed();
  int64_t last_saved_step = step_, last_valid_step = -1;
  double loss = 0, nll = 0, interval_start = now_seconds();
  int64_t tokens = 0, all_tokens = 0, updates = 0;

  auto report = [&] {
    if (updates == 0) return;
    TrainLog l;
    l.step = step_;
    l.epoch = (batch_in_epoch_ == 0 ? epoch_ : epoch_ + 1);
    l.loss = loss / std::max<int64_t>(tokens, 1);
    l.perplexity = std::exp(nll / std::max<int64_t>(tokens, 1));
    l.learning_rate =
        noam_learning_rate(step_, model_.config().d_model, options_.warmup, options_.lr_scale);
    l.tokens_per_second = all_tokens / std::max(now_seconds() - interval_start, 1e-9);
    l.elapsed_seconds = elapsed();
    l.target_tokens = tokens;
    if (log) log(l);
    loss = nll = 0;
    tokens = all_tokens = updates = 0;
    interval_start = now_seconds();
  };

  while (!limits_reached() && !stop_requested_) {
    if (!update(&loss, &nll, &tokens, &all_tokens)) break;
    ++updates;
    if (progress) progress(step_);
    if (options_.log_every > 0 && step_ % options_.log_every == 0) report();
    if (valid_ && options_.valid_every > 0 && step_ % options_.valid_every == 0) {
      if (log) log(validate());
      last_valid_step = step_;
    }
    const bool by_steps = options_.save_every > 0 && step_ % options_.save_every == 0;
    const bool by_time = options_.save_every_minutes > 0 &&
                         elapsed() - last_save_time_ >= options_.save_every_minutes * 60.0;
    if (by_steps || by_time) {
      save();
      last_saved_step = step_;
    }
  }
  report();
  if (valid_ && last_valid_step != step_ && log) log(validate());
  if (last_saved_step != step_) save();
  elapsed_before_ = elapsed();
  run_start_ = 0;
}

}  // namespace transduce
