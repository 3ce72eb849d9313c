// `transduce train`: a model from parallel text with the recipe of section 5, or `--resume` one.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "core/error.h"
#include "text/corpus.h"
#include "text/tokenizer.h"
#include "train/checkpoint.h"
#include "train/train_log_file.h"
#include "train/trainer.h"

namespace transduce::cli {

namespace {

namespace fs = std::filesystem;

struct TrainFlags {
  ModelFlags model;
  std::string src, tgt, valid_src, valid_tgt, vocab_dir, out_dir, resume_dir;
  int max_len = 256;
  TrainOptions options;
  CLI::App* cmd = nullptr;
};

Trainer* g_running = nullptr;
void request_stop(int) {
  if (g_running) g_running->stop();
}

std::string clock_string(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::vector<Example> load_examples(const std::string& src, const std::string& tgt,
                                   const Tokenizer& tokenizer, int max_len, const char* what) {
  ParallelText text = read_parallel(src, tgt);
  EncodeStats stats;
  std::vector<Example> examples = encode_parallel(text, tokenizer, max_len, &stats);
  spdlog::info(
      "{} data: {} pairs, {} kept, {} skipped as empty, {} skipped as longer than {} tokens", what,
      stats.pairs, stats.kept, stats.skipped_empty, stats.skipped_long, max_len);
  if (examples.empty()) fail("{} data: no usable sentence pairs in {} and {}", what, src, tgt);
  return examples;
}

nlohmann::json read_state(const std::string& checkpoint) {
  const std::string path = (fs::path(checkpoint) / "state.json").string();
  std::ifstream in(path);
  if (!in) fail("{}: cannot read the training state", path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail("{}: the training state is not a JSON object", path);
  return j;
}

// Training options given on this command line override those saved with a resumed model.
void apply_given_flags(const TrainFlags& given, TrainOptions& o) {
  auto set = [&](const char* flag, auto value, auto& field) {
    if (given.cmd->get_option(flag)->count() > 0) field = value;
  };
  const TrainOptions& g = given.options;
  set("--batch-tokens", g.batch_tokens, o.batch_tokens);
  set("--accum", g.accum, o.accum);
  set("--warmup", g.warmup, o.warmup);
  set("--lr-scale", g.lr_scale, o.lr_scale);
  set("--max-steps", g.max_steps, o.max_steps);
  set("--max-epochs", g.max_epochs, o.max_epochs);
  set("--max-minutes", g.max_minutes, o.max_minutes);
  set("--log-every", g.log_every, o.log_every);
  set("--valid-every", g.valid_every, o.valid_every);
  set("--save-every", g.save_every, o.save_every);
  set("--save-every-minutes", g.save_every_minutes, o.save_every_minutes);
  set("--keep", g.keep, o.keep);
}

void run_train(TrainFlags& f) {
  const bool resume = !f.resume_dir.empty();
  const std::string model_dir = resume ? f.resume_dir : f.out_dir;
  if (model_dir.empty()) fail("give --out MODEL_DIR for a new model or --resume MODEL_DIR");
  if (!resume && f.vocab_dir.empty()) fail("give --vocab DIR (made by `transduce vocab`)");
  if ((f.valid_src.empty()) != (f.valid_tgt.empty()))
    fail("give both --valid-src and --valid-tgt, or neither");

  ModelConfig config;
  TrainOptions options = f.options;
  std::optional<std::string> checkpoint;
  if (resume) {
    config = read_model_config(model_dir);
    checkpoint = latest_checkpoint(model_dir);
    if (!checkpoint) fail("{}: no complete checkpoint to resume from", model_dir);
  } else {
    if (!list_checkpoints(model_dir).empty())
      fail("{} already holds a trained model: use --resume {} or another --out", model_dir,
           model_dir);
    fs::create_directories(model_dir);
    fs::copy_file(fs::path(f.vocab_dir) / "spm.model", fs::path(model_dir) / "spm.model",
                  fs::copy_options::overwrite_existing);
  }
  Tokenizer tokenizer((fs::path(model_dir) / "spm.model").string());
  if (!resume) {
    config = f.model.resolve();
    config.vocab_size = tokenizer.vocab_size();
    config.validate();
    write_model_config(model_dir, config);
  } else if (config.vocab_size != tokenizer.vocab_size()) {
    fail("{}: the model has {} vocabulary entries but spm.model has {}", model_dir,
         config.vocab_size, tokenizer.vocab_size());
  }

  const int max_len = std::min(f.max_len, config.max_positions);
  const std::vector<Example> train = load_examples(f.src, f.tgt, tokenizer, max_len, "training");
  std::vector<Example> valid;
  if (!f.valid_src.empty())
    valid = load_examples(f.valid_src, f.valid_tgt, tokenizer, max_len, "validation");

  Transformer model(config);
  options.out_dir = model_dir;
  std::unique_ptr<Trainer> trainer;
  if (resume) {
    // The trainer owns the optimizer that load_checkpoint fills, so the saved options are read
    // first, then overridden by the flags this command line sets.
    const nlohmann::json saved = read_state(*checkpoint);
    update_from_json(saved.value("options", nlohmann::json::object()), options);
    apply_given_flags(f, options);
    options.out_dir = model_dir;
    trainer = std::make_unique<Trainer>(model, train, &valid, options);
    trainer->restore(load_checkpoint(*checkpoint, model, trainer->optimizer()));
    spdlog::info("resuming {} at step {}", *checkpoint, trainer->step());
  } else {
    model.init_parameters(options.seed);
    trainer = std::make_unique<Trainer>(model, train, &valid, options);
  }
  spdlog::info(
      "model: {} parameters (layers {}, d_model {}, d_ff {}, heads {}, d_k {}, d_v {}, "
      "vocab {}); {} training pairs, batches of {} tokens x {} accumulated",
      config.parameter_count(), config.layers, config.d_model, config.d_ff, config.heads,
      config.d_k, config.d_v, config.vocab_size, train.size(), options.batch_tokens, options.accum);

  TrainLogFile json_log((fs::path(model_dir) / "train_log.jsonl").string(),
                        resume ? trainer->step() : -1);
  g_running = trainer.get();
  signal(SIGINT, request_stop);
  signal(SIGTERM, request_stop);
  const bool tty = isatty(STDERR_FILENO);
  trainer->run(
      [&](const TrainLog& l) {
        if (tty) fmt::print(stderr, "\r\033[K");
        json_log.write(l);
        if (l.validation)
          spdlog::info("valid step {} | loss {:.4f} | ppl {:.2f}", l.step, l.loss, l.perplexity);
        else
          spdlog::info(
              "step {} | epoch {} | loss {:.4f} | ppl {:.2f} | lr {:.3e} | {:.0f} tok/s | {}",
              l.step, l.epoch, l.loss, l.perplexity, l.learning_rate, l.tokens_per_second,
              clock_string(l.elapsed_seconds));
      },
      [&](int64_t step) {
        if (tty)
          fmt::print(stderr, "\r  step {}{}", step,
                     options.max_steps > 0 ? fmt::format("/{}", options.max_steps) : "");
      });
  g_running = nullptr;
  if (tty) fmt::print(stderr, "\r\033[K");
  spdlog::info("saved {} (step {})", model_dir, trainer->step());
}

}  // namespace

void register_train(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand("train", "train a model on parallel text (section 5)");
  f->cmd = cmd;
  f->model.add_to(*cmd, /*with_vocab_size=*/false);
  cmd->add_option("--src", f->src, "training source text, one sentence a line")->required();
  cmd->add_option("--tgt", f->tgt, "training target text, aligned with --src")->required();
  cmd->add_option("--valid-src", f->valid_src, "validation source text");
  cmd->add_option("--valid-tgt", f->valid_tgt, "validation target text");
  cmd->add_option("--vocab", f->vocab_dir, "directory made by `transduce vocab`");
  cmd->add_option("--out", f->out_dir, "model directory to create");
  cmd->add_option("--resume", f->resume_dir, "model directory to continue training");
  cmd->add_option("--max-len", f->max_len, "skip pairs with a side longer than this (tokens)")
      ->capture_default_str();
  TrainOptions& o = f->options;
  cmd->add_option("--batch-tokens", o.batch_tokens, "tokens per batch and side")
      ->capture_default_str();
  cmd->add_option("--accum", o.accum, "batches accumulated per update")->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed for initialisation, batch order and dropout")
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "warmup steps of equation 3")->capture_default_str();
  cmd->add_option("--lr-scale", o.lr_scale, "factor on equation 3's learning rate")
      ->capture_default_str();
  cmd->add_option("--max-steps", o.max_steps, "stop after this many updates (in all)");
  cmd->add_option("--max-epochs", o.max_epochs, "stop after this many epochs (in all)");
  cmd->add_option("--max-minutes", o.max_minutes, "stop after this much training time (in all)");
  cmd->add_option("--log-every", o.log_every, "updates between log lines")->capture_default_str();
  cmd->add_option("--valid-every", o.valid_every, "updates between validations")
      ->capture_default_str();
  cmd->add_option("--save-every", o.save_every, "updates between checkpoints (0: by time)");
  cmd->add_option("--save-every-minutes", o.save_every_minutes, "minutes between checkpoints")
      ->capture_default_str();
  cmd->add_option("--keep", o.keep, "checkpoints to keep")->capture_default_str();
  cmd->callback([f] { run_train(*f); });
}

}  // namespace transduce::cli
