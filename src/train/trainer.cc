#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/json_number.h"
#include "core/rng.h"
#include "text/special_ids.h"
#include "train/checkpoint.h"
#include "train/model_snapshot.h"

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

Trainer::Trainer(Transformer& model, const std::vector<Example>& train,
                 const std::vector<Example>* valid, TrainOptions options, Communicator* comm)
    : comm_(comm ? *comm : single_process_),
      model_(model),
      train_(train),
      valid_(valid && !valid->empty() ? valid : nullptr),
      options_(std::move(options)),
      batcher_(&train_, BatcherOptions{options_.batch_tokens, options_.seed}),
      adam_(model.parameters(), options_.adam) {
  check_train_options(options_);
  if (options_.ema_decay != 0.0f)
    ema_ = std::make_unique<WeightAverage>(model.parameters(), options_.ema_decay);
  best_.metric = options_.valid_metrics.front();
  if (comm_.size() > 1) gradient_sync_ = std::make_unique<GradientSync>(model.parameters(), comm_);
}

nlohmann::json Trainer::state() const {
  return {{"step", step_},
          {"epoch", epoch_},
          {"batch_in_epoch", batch_in_epoch_},
          {"elapsed_seconds", elapsed()},
          {"best_validation", best_to_json(best_)},
          // Not restored (a run may resume on other ranks); it says what the batch was a share of.
          {"ranks", comm_.size()},
          {"options", options_}};
}

bool Trainer::restore_average(const std::string& checkpoint_dir) {
  if (!ema_) return false;
  if (load_checkpoint_ema(checkpoint_dir, model_, ema_->values())) return true;
  ema_ = std::make_unique<WeightAverage>(model_.parameters(), options_.ema_decay);
  return false;
}

void Trainer::restore(const nlohmann::json& state) {
  if (!state.is_object())
    fail("the checkpoint's training state should be a JSON object, not {}", state.type_name());
  // A count saved by state(): present, an integer, not negative.
  const auto count = [&](const char* key) {
    const auto it = state.find(key);
    if (it == state.end()) fail("the checkpoint's training state has no {}", key);
    const std::optional<int64_t> v = json_number<int64_t>(*it);
    if (!v || *v < 0)
      fail("the checkpoint's training state: {} must be a whole number of at least 0, got {}", key,
           it->dump());
    return *v;
  };
  step_ = count("step");
  epoch_ = count("epoch");
  batch_in_epoch_ = count("batch_in_epoch");
  const auto elapsed = state.find("elapsed_seconds");
  const std::optional<double> seconds =
      elapsed == state.end() ? std::optional<double>(0.0) : json_number<double>(*elapsed);
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0)
    fail("the checkpoint's training state: elapsed_seconds must be a number of at least 0, got {}",
         elapsed->dump());
  elapsed_before_ = *seconds;
  if (const auto best = state.find("best_validation"); best != state.end())
    best_ = best_from_json(*best, options_.valid_metrics.front());
  if (adam_.steps() != step_)
    fail("checkpoint state says step {} but its optimizer has taken {} steps", step_,
         adam_.steps());
}

double Trainer::elapsed() const {
  return elapsed_before_ + (run_start_ > 0 ? now_seconds() - run_start_ : 0.0);
}

bool Trainer::limits_reached() const {
  return best_.out_of_patience(options_.patience) ||
         (options_.max_steps > 0 && step_ >= options_.max_steps) ||
         (options_.max_epochs > 0 && epoch_ >= options_.max_epochs) ||
         (options_.max_minutes > 0 && elapsed() >= options_.max_minutes * 60.0);
}

double Trainer::run_share(double seconds) const {
  double share = 0;
  if (options_.max_steps > 0)
    share = std::max(share, static_cast<double>(step_) / static_cast<double>(options_.max_steps));
  if (options_.max_epochs > 0) {
    double epochs = static_cast<double>(epoch_);
    if (plan_epoch_ == epoch_ && !plan_.empty())
      epochs += static_cast<double>(batch_in_epoch_) / static_cast<double>(plan_.size());
    share = std::max(share, epochs / static_cast<double>(options_.max_epochs));
  }
  if (options_.max_minutes > 0) share = std::max(share, seconds / (options_.max_minutes * 60.0));
  return std::min(share, 1.0);
}

void Trainer::set_epoch_encoder(EpochEncoder encode) {
  epoch_encoder_ = std::move(encode);
  epoch_examples_.resize(train_.size());  // written by the encoder before the first plan
  batcher_ = Batcher(&epoch_examples_, batcher_.options());
  plan_epoch_ = -1;
}

const std::vector<int64_t>* Trainer::next_batch() {
  if (options_.max_epochs > 0 && epoch_ >= options_.max_epochs) return nullptr;
  if (plan_epoch_ != epoch_) {
    if (epoch_encoder_) {
      epoch_encoder_(epoch_, epoch_examples_);
      TD_CHECK(epoch_examples_.size() == train_.size(),
               "the epoch encoder made {} examples of {} pairs", epoch_examples_.size(),
               train_.size());
    }
    plan_ = batcher_.epoch_plan(epoch_);
    plan_epoch_ = epoch_;
  }
  // Only a resumed run can be past the end: its checkpoint was made on other training data.
  if (batch_in_epoch_ >= static_cast<int64_t>(plan_.size()))
    fail(
        "the checkpoint stopped at batch {} of epoch {}, but this training data makes {} batches "
        "an epoch: resume with the data (and --batch-tokens) it was trained on",
        batch_in_epoch_ + 1, epoch_ + 1, plan_.size());
  return &plan_[static_cast<size_t>(batch_in_epoch_)];
}

bool Trainer::update(Interval& sums) {
  // Gather the update's batches first: the gradient is the mean over all their target tokens, on
  // all ranks. Every rank walks the whole plan so that all keep the same position.
  const int accum = options_.accum, rank = comm_.rank();
  const double share = run_share(agreed_elapsed_);
  std::vector<Batch> batches;
  std::vector<uint64_t> streams;  // the batch's place in the update: its dropout stream
  double counts[2] = {0, 0};      // target tokens and batches of this rank
  for (int k = 0; k < comm_.size() * accum; ++k) {
    const std::vector<int64_t>* indices = next_batch();
    if (!indices) break;
    if (k / accum == rank) {
      Batch batch = batcher_.make_batch(*indices);
      batches.push_back(passes() == 2 ? repeated_twice(batch) : std::move(batch));
      streams.push_back(static_cast<uint64_t>(k));
      counts[0] += static_cast<double>(count_tokens(batches.back().tgt_out));
      counts[1] += 1;
    }
    if (++batch_in_epoch_ >= static_cast<int64_t>(plan_.size())) {
      ++epoch_;
      batch_in_epoch_ = 0;
    }
  }
  comm_.sum(counts, 2, "the token count");
  if (counts[1] == 0) return false;

  model_.zero_grad();
  const float grad_scale = 1.0f / static_cast<float>(std::max(counts[0], 1.0));
  for (size_t k = 0; k < batches.size(); ++k) {
    arena_.reset();
    Context ctx(arena_, /*train=*/true,
                hash_u64(options_.seed, static_cast<uint64_t>(step_), streams[k]));
    const ops::CrossEntropySums s = model_.train_step(ctx, batches[k], grad_scale, options_.rdrop);
    sums.loss += s.loss;
    sums.nll += s.nll;
    sums.tokens += static_cast<double>(s.tokens);
    sums.consistency += s.consistency;
    // The data's tokens: R-Drop's second pass over a batch is not more data.
    sums.all_tokens += static_cast<double>(s.tokens + count_tokens(batches[k].src)) / passes();
  }
  if (gradient_sync_) {
    const double start = now_seconds();
    gradient_sync_->sum();
    sums.sync_seconds += now_seconds() - start;
  }
  ++step_;
  ++sums.updates;
  last_lr_ = scheduled_learning_rate(options_.lr_schedule, step_, share, model_.config().d_model,
                                     options_.warmup, options_.lr_scale);
  adam_.step(last_lr_);
  if (ema_) ema_->update(step_);
  return true;
}

template <typename F>
void Trainer::with_validated_weights(F&& f) {
  if (!ema_) return f();
  // The bf16 copies follow the weights in: the GEMMs read them.
  const auto swap = [&] {
    ema_->swap_with_parameters();
    if (model_.precision() == Precision::BF16) model_.set_precision(Precision::BF16);
  };
  swap();
  try {
    f();
  } catch (...) {
    swap();
    throw;
  }
  swap();
}

TrainLog Trainer::validate() {
  TrainLog log;
  log.validation = true;
  log.step = step_;
  log.epoch = epoch_ + 1;
  log.elapsed_seconds = elapsed();
  if (!valid_) return log;
  with_validated_weights([&] {
    Batcher valid_batches(valid_, BatcherOptions{options_.batch_tokens, options_.seed});
    // Rank r validates every K-th batch; the sums are added up across ranks.
    double sums[3] = {0, 0, 0};  // loss, nll, tokens
    const std::vector<std::vector<int64_t>> plan = valid_batches.epoch_plan(0);
    for (size_t i = static_cast<size_t>(comm_.rank()); i < plan.size();
         i += static_cast<size_t>(comm_.size())) {
      arena_.reset();
      Context ctx(arena_, /*train=*/false);
      const ops::CrossEntropySums s = model_.forward(ctx, valid_batches.make_batch(plan[i]));
      sums[0] += s.loss;
      sums[1] += s.nll;
      sums[2] += static_cast<double>(s.tokens);
    }
    comm_.sum(sums, 3, "the validation sums");
    log.loss = sums[0] / std::max(sums[2], 1.0);
    log.perplexity = std::exp(sums[1] / std::max(sums[2], 1.0));
    if (!needs_translation(options_.valid_metrics)) return;
    if (!valid_text_)
      fail("validation by {} needs the validation text to translate and score",
           valid_metric_name(options_.valid_metrics.front()));
    arena_.reset();
    SearchOptions search;
    search.beam = options_.valid_beam;
    search.alpha = options_.valid_alpha;
    const ValidTranslations t =
        translate_validation(model_, *valid_, *valid_text_, search, options_.batch_tokens, comm_);
    log.bleu = t.bleu;
    log.chrf = t.chrf;
    if (!options_.valid_output.empty() && comm_.rank() == 0)
      write_valid_output(options_.valid_output, step_, *valid_text_, t.hypotheses);
  });
  return log;
}

void Trainer::validate_and_keep_best(const std::function<void(const TrainLog&)>& log) {
  TrainLog l = validate();
  if (!valid_) return;
  double value = l.perplexity;
  if (best_.metric == ValidMetric::kBleu) value = *l.bleu;
  if (best_.metric == ValidMetric::kChrf) value = *l.chrf;
  // Rank 0's verdict for every rank, so that all keep or stop alike.
  comm_.broadcast(&value, sizeof(value), "the validation score");
  l.best = best_.record(value, step_);
  l.best_so_far = best_;
  if (l.best && comm_.rank() == 0 && !options_.out_dir.empty()) {
    nlohmann::json scores = {{"ppl", l.perplexity}, {"loss", l.loss}};
    if (l.bleu) scores["bleu"] = *l.bleu;
    if (l.chrf) scores["chrf"] = *l.chrf;
    const nlohmann::json info = {{"step", step_},
                                 {"metric", valid_metric_name(best_.metric)},
                                 {"score", value},
                                 {"scores", scores},
                                 {"weights", ema_ ? "ema" : "trained"},
                                 {"valid_beam", options_.valid_beam},
                                 {"valid_alpha", options_.valid_alpha}};
    with_validated_weights([&] { save_model_snapshot(options_.out_dir, "best", model_, info); });
  }
  if (comm_.rank() == 0 && log) log(l);
}

void Trainer::save() {
  if (options_.out_dir.empty()) return;
  // The ranks apply the same updates to the same weights; a checkpoint certifies it.
  if (comm_.size() > 1 && !comm_.agree(parameters_digest(model_.parameters()), "the weights check"))
    fail("the ranks hold different weights at step {}; no checkpoint written", step_);
  if (comm_.rank() == 0) {
    save_checkpoint(options_.out_dir, model_, adam_, step_, state(), options_.keep,
                    ema_ ? &ema_->values() : nullptr);
    if (ema_) {
      const nlohmann::json info = {{"step", step_}, {"ema_decay", options_.ema_decay}};
      with_validated_weights([&] { save_model_snapshot(options_.out_dir, "ema", model_, info); });
    }
  }
  last_save_time_ = elapsed();
}

void Trainer::run(const std::function<void(const TrainLog&)>& log,
                  const std::function<void(int64_t)>& progress) {
  const bool leader = comm_.rank() == 0;
  // After restore and broadcast: the bf16 copies are rounded from the weights the run starts from.
  model_.set_precision(options_.precision);
  run_start_ = now_seconds();
  last_save_time_ = elapsed();
  // The step a run resumes from is not validated again: a finished run ended with a validation,
  // and a killed one is validated when the resumed run makes an update and ends.
  int64_t last_saved_step = step_, last_valid_step = step_ > 0 ? step_ : -1;
  double interval_start = now_seconds();
  Interval interval;

  auto report = [&] {
    // Every rank reaches this at the same step; the log line shows the sums of all of them.
    double sums[6] = {interval.loss,       interval.nll,          interval.tokens,
                      interval.all_tokens, interval.sync_seconds, interval.consistency};
    comm_.sum(sums, 6, "the log sums");
    const double seconds = std::max(now_seconds() - interval_start, 1e-9);
    if (interval.updates > 0 && leader && log) {
      TrainLog l;
      l.step = step_;
      l.epoch = (batch_in_epoch_ == 0 ? epoch_ : epoch_ + 1);
      l.loss = sums[0] / std::max(sums[2], 1.0);
      l.perplexity = std::exp(sums[1] / std::max(sums[2], 1.0));
      l.learning_rate = last_lr_;
      l.tokens_per_second = sums[3] / seconds;
      l.elapsed_seconds = elapsed();
      l.target_tokens = static_cast<int64_t>(sums[2] / passes());
      l.sync_share = sums[4] / comm_.size() / seconds;
      // Each pair of tokens (one per pass) holds one divergence.
      if (passes() == 2) l.consistency = sums[5] / std::max(sums[2] / 2, 1.0);
      log(l);
    }
    interval = Interval{};
    interval_start = now_seconds();
  };
  auto validate_and_log = [&] {
    validate_and_keep_best(log);
    last_valid_step = step_;
  };

  while (true) {
    // Stopping and saving by the clock are decided together, so that all ranks go on or stop at
    // the same update even when a signal or a time limit reaches only one of them; the clock an
    // annealing schedule follows is their mean, so that all ranks apply the same learning rate.
    double flags[3] = {stop_requested_ || limits_reached() ? 1.0 : 0.0,
                       options_.save_every_minutes > 0 &&
                               elapsed() - last_save_time_ >= options_.save_every_minutes * 60.0
                           ? 1.0
                           : 0.0,
                       elapsed()};
    comm_.sum(flags, 3, "the stop check");
    agreed_elapsed_ = flags[2] / comm_.size();
    if (flags[1] > 0 && last_saved_step != step_) {
      save();
      last_saved_step = step_;
    }
    if (flags[0] > 0 || !update(interval)) break;
    if (progress && leader) progress(step_);
    if (options_.log_every > 0 && step_ % options_.log_every == 0) report();
    if (valid_ && options_.valid_every > 0 && step_ % options_.valid_every == 0) validate_and_log();
    if (options_.save_every > 0 && step_ % options_.save_every == 0) {
      save();
      last_saved_step = step_;
    }
  }
  if (interval.updates > 0) report();
  if (valid_ && last_valid_step != step_) validate_and_log();
  if (last_saved_step != step_) save();
  elapsed_before_ = elapsed();
  run_start_ = 0;
}

}  // namespace transduce
