#include "train/run.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/threads.h"
#include "dist/gradient_sync.h"
#include "dist/launch.h"
#include "io/model_dir.h"
#include "parse/parse_settings.h"
#include "parse/tree_data.h"
#include "text/subword_sampler.h"
#include "text/tokenizer.h"
#include "train/checkpoint.h"
#include "train/train_log_file.h"
#include "train/training_data.h"

namespace transduce {

namespace {

namespace fs = std::filesystem;

Trainer* g_running = nullptr;
void request_stop(int) {
  if (g_running) g_running->stop();
}

// While it lives, SIGINT, SIGTERM and SIGUSR1 ask `trainer` to stop at its next update (mpirun
// passes SIGUSR1 on to the ranks and waits for them); the handlers before are put back however
// training ends (in the Python module, Python's own).
class StopOnSignals {
 public:
  explicit StopOnSignals(Trainer* trainer) {
    g_running = trainer;
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &before_[i]);
  }
  ~StopOnSignals() {
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &before_[i], nullptr);
    g_running = nullptr;
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGUSR1};
  struct sigaction before_[std::size(kSignals)]{};
};

// "new best ppl" or "best BLEU 35.12 at step 4000, 2 without improvement".
std::string best_string(const TrainLog& l) {
  const BestValidation& b = l.best_so_far;
  const std::string name = b.metric == ValidMetric::kBleu   ? "BLEU"
                           : b.metric == ValidMetric::kChrf ? "chrF"
                                                            : "ppl";
  if (l.best) return fmt::format("new best {}", name);
  return fmt::format("best {} {:.2f} at step {}, {} without improvement", name, b.score.value_or(0),
                     b.step, b.stale);
}

std::string clock_string(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

// What is wrong with the request as a whole, before anything is read or written.
void check_request(const TrainRequest& r) {
  const auto& n = r.name;
  const bool resume = !r.resume.empty();
  if ((resume ? r.resume : r.output).empty())
    fail("give {} MODEL_DIR for a new model or {} MODEL_DIR", n("output"), n("resume"));
  if (!resume && r.vocab.empty()) fail("give {} DIR (made by `transduce vocab`)", n("vocab"));
  if (r.valid_src.empty() != r.valid_tgt.empty())
    fail("give both {} and {}, or neither", n("valid_src"), n("valid_tgt"));
  const bool parallel = !r.src.empty() || !r.tgt.empty();
  if (parallel == !r.trees.empty())
    fail("give training data: {} and {} (parallel text) or {} (a treebank)", n("src"), n("tgt"),
         n("trees"));
  if (parallel && (r.src.empty() || r.tgt.empty())) fail("give both {} and {}", n("src"), n("tgt"));
  if (!r.valid_trees.empty() && parallel) fail("{} goes with {}", n("valid_trees"), n("trees"));
  if (!r.valid_src.empty() && !parallel)
    fail("with {}, validate with {}", n("trees"), n("valid_trees"));
  if (parallel && (r.subtrees || r.word_swaps > 0))
    fail("{} and {} augment a treebank: they go with {}", n("subtrees"), n("word_swaps"),
         n("trees"));
  if (!parallel && r.options.subword_sampling > 0)
    fail("{} segments {}/{} text; it does not apply to {}", n("subword_sampling"), n("src"),
         n("tgt"), n("trees"));
  if (!parse::scheme_from_name(r.tree_scheme))
    fail("{} must be one of {}, got \"{}\"", n("tree_scheme"), parse::scheme_names_quoted(),
         r.tree_scheme);
  if (!resume) {  // before the model directory is made
    try {
      check_train_options(r.options);
    } catch (const Error& e) {
      fail("{}", name_train_options(e.what(), r.name));
    }
  }
  if (!parallel && needs_translation(r.options.valid_metrics))
    fail("{} bleu and chrf score translations: they go with {}/{}", n("valid_metric"),
         n("valid_src"), n("valid_tgt"));
}

// Rank 0 (or the only process) checks the model directory and, for a new model, creates it with
// its vocabulary and config. Returns the checkpoint to resume from, if any.
std::optional<std::string> prepare_model_dir(const TrainRequest& r, const std::string& model_dir) {
  if (!r.resume.empty()) return checkpoint_to_resume(model_dir);
  if (!list_checkpoints(model_dir).empty())
    fail("{} already holds a trained model: use {} {} or another {}", model_dir, r.name("resume"),
         model_dir, r.name("output"));
  if (!fs::is_regular_file(fs::path(r.vocab) / io::kVocabularyFile))
    fail("{}: no {}: {} takes a directory made by `transduce vocab`", r.vocab, io::kVocabularyFile,
         r.name("vocab"));
  fs::create_directories(model_dir);
  fs::copy_file(fs::path(r.vocab) / io::kVocabularyFile,
                io::model_file(model_dir, io::kVocabularyFile),
                fs::copy_options::overwrite_existing);
  const Tokenizer tokenizer(io::model_file(model_dir, io::kVocabularyFile));
  ModelConfig config = r.model;
  config.vocab_size = tokenizer.vocab_size();
  config.validate();
  io::write_model_config(model_dir, config);
  // A parser: its linearisation and the paper's decoding defaults for parsing (section 6.3).
  if (!r.trees.empty()) {
    parse::ParseSettings settings;
    settings.scheme = r.tree_scheme;
    const std::vector<parse::Tree> trees = parse::read_normalised_trees(r.trees);
    settings.max_opens = static_cast<int>(parse::max_opens_in_a_row(trees));
    if (parse::scheme_has_tags(*parse::scheme_from_name(r.tree_scheme)))
      settings.tag_lexicon = std::make_shared<parse::TagLexicon>(parse::tag_lexicon(trees));
    parse::write_parse_settings(model_dir, settings);
  }
  return std::nullopt;
}

// The checkpoint rank 0 chose, on every rank: its step goes out (-1 for a new model). This is
// also where the other ranks wait for rank 0 to set up the model directory.
std::optional<std::string> share_checkpoint(Communicator& comm, const std::string& model_dir,
                                            const std::optional<std::string>& chosen) {
  int64_t step = -1;
  if (comm.rank() == 0 && chosen) step = read_checkpoint_state(*chosen).at("step").get<int64_t>();
  comm.broadcast(&step, sizeof(step), "the start (rank 0 preparing the model directory)");
  if (step < 0) return std::nullopt;
  if (comm.rank() == 0) return chosen;
  return checkpoint_dir(model_dir, step);
}

// Writes each record to the log (and, on a terminal, keeps a step counter on the last line).
struct ProgressLog {
  bool tty;
  int ranks;
  int64_t max_steps;

  void record(const TrainLog& l) const {
    if (tty) fmt::print(stderr, "\r\033[K");
    if (l.validation)
      spdlog::info("valid step {} | loss {:.4f} | ppl {:.2f}{}{} | {}", l.step, l.loss,
                   l.perplexity, l.bleu ? fmt::format(" | BLEU {:.2f}", *l.bleu) : "",
                   l.chrf ? fmt::format(" | chrF {:.2f}", *l.chrf) : "", best_string(l));
    else
      spdlog::info(
          "step {} | epoch {} | loss {:.4f} | ppl {:.2f}{} | lr {:.3e} | {:.0f} tok/s | {}{}",
          l.step, l.epoch, l.loss, l.perplexity,
          l.consistency ? fmt::format(" | kl {:.4f}", *l.consistency) : "", l.learning_rate,
          l.tokens_per_second, clock_string(l.elapsed_seconds),
          ranks > 1 ? fmt::format(" | sync {:.1f}%", 100 * l.sync_share) : "");
  }
  void step(int64_t step) const {
    if (tty)
      fmt::print(stderr, "\r  step {}{}", step, max_steps > 0 ? fmt::format("/{}", max_steps) : "");
  }
};

}  // namespace

std::string checkpoint_to_resume(const std::string& model_dir) {
  std::optional<std::string> checkpoint = latest_checkpoint(model_dir);
  if (!checkpoint) fail("{}: no complete checkpoint to resume from", model_dir);
  return *checkpoint;
}

TrainOptions resolved_train_options(const TrainRequest& r,
                                    const std::optional<std::string>& checkpoint) {
  TrainOptions options = r.options;
  if (checkpoint) {
    update_from_json(read_checkpoint_state(*checkpoint).value("options", nlohmann::json::object()),
                     options);
    for (const std::string& key : r.given_options)
      if (const TrainOptionSpec* spec = find_train_option(key))
        spec->set(spec->get(r.options), options);
  }
  return options;
}

void train_model(const TrainRequest& r, Communicator* comm) {
  check_request(r);
  const std::string model_dir = r.resume.empty() ? r.output : r.resume;
  const int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  std::optional<std::string> checkpoint;
  if (rank == 0) checkpoint = prepare_model_dir(r, model_dir);
  if (comm) checkpoint = share_checkpoint(*comm, model_dir, checkpoint);
  if (rank > 0 && !fs::exists(io::model_file(model_dir, io::kConfigFile)))
    fail(
        "{} holds no {} here although rank 0 has prepared it: the output directory must be shared "
        "by every machine of the job (docs/distributed.md)",
        model_dir, io::kConfigFile);
  const ModelConfig config = io::read_model_config(model_dir);
  Tokenizer tokenizer(io::model_file(model_dir, io::kVocabularyFile));
  if (config.vocab_size != tokenizer.vocab_size())
    fail("{}: the model has {} vocabulary entries but {} has {}", model_dir, config.vocab_size,
         io::kVocabularyFile, tokenizer.vocab_size());

  TrainOptions options = resolved_train_options(r, checkpoint);
  options.out_dir = model_dir;
  if (rank == 0 && r.on_start) r.on_start(model_dir, options, config);
  const int max_len = std::min(r.max_len, config.max_positions);
  std::vector<Example> train, valid;
  ValidText valid_text;
  std::optional<SubwordSampler> sampler;  // with subword sampling; outlives the trainer
  if (!r.trees.empty()) {
    // The scheme the model directory was made with (a resumed parser keeps its own).
    const std::optional<parse::ParseSettings> settings = parse::read_parse_settings(model_dir);
    if (!settings) fail("{}: not a parser (no parse.json) to train on trees", model_dir);
    const parse::TreeScheme scheme = *parse::scheme_from_name(settings->scheme);
    const TreeAugmentation augment{r.subtrees, r.word_swaps, r.word_swap_rate, options.seed};
    train = load_tree_examples(r.trees, tokenizer, scheme, max_len, "training", augment);
    if (!r.valid_trees.empty())
      valid = load_tree_examples(r.valid_trees, tokenizer, scheme, max_len, "validation");
  } else {
    ParallelText kept;
    train = load_examples(r.src, r.tgt, tokenizer, max_len, "training", nullptr,
                          options.subword_sampling > 0 ? &kept : nullptr);
    if (options.subword_sampling > 0)
      sampler.emplace(tokenizer, std::move(kept.src), std::move(kept.tgt), max_len,
                      options.subword_sampling, options.seed);
    if (!r.valid_src.empty())
      valid =
          load_examples(r.valid_src, r.valid_tgt, tokenizer, max_len, "validation", &valid_text);
  }

  Transformer model(config);
  std::unique_ptr<Trainer> trainer;
  if (checkpoint) {
    // The trainer owns the optimizer that load_checkpoint fills.
    trainer = std::make_unique<Trainer>(model, train, &valid, options, comm);
    trainer->restore(load_checkpoint(*checkpoint, model, trainer->optimizer()));
    spdlog::info("resuming {} at step {}", *checkpoint, trainer->step());
    if (options.ema_decay > 0 && !trainer->restore_average(*checkpoint))
      spdlog::info("{} has no moving average of the weights: it starts from the restored weights",
                   *checkpoint);
  } else {
    model.init_parameters(options.seed);
    trainer = std::make_unique<Trainer>(model, train, &valid, options, comm);
  }
  if (!valid.empty() && !r.valid_src.empty()) trainer->set_valid_text(std::move(valid_text));
  if (sampler) {
    trainer->set_epoch_encoder([&s = *sampler](int64_t epoch, std::vector<Example>& examples) {
      s.encode_epoch(epoch, examples);
    });
    spdlog::info("subword sampling: each epoch segments the training pairs anew (alpha {})",
                 sampler->alpha());
  }
  // Every rank starts from rank 0's weights.
  if (comm) broadcast_parameters(model.parameters(), *comm);
  spdlog::info(
      "model: {} parameters (layers {}, d_model {}, d_ff {}, heads {}, d_k {}, d_v {}, "
      "vocab {}); {} training pairs, batches of {} tokens x {} accumulated{}; GEMMs {}",
      config.parameter_count(), config.layers, config.d_model, config.d_ff, config.heads,
      config.d_k, config.d_v, config.vocab_size, train.size(), options.batch_tokens, options.accum,
      ranks > 1 ? fmt::format(" x {} ranks ({} thread{} each)", ranks, num_threads(),
                              num_threads() == 1 ? "" : "s")
                : "",
      gemm_description(options.precision));

  std::unique_ptr<TrainLogFile> json_log;
  if (rank == 0)
    json_log = std::make_unique<TrainLogFile>((fs::path(model_dir) / "train_log.jsonl").string(),
                                              checkpoint ? trainer->step() : -1);
  const int64_t first_step = trainer->step();
  std::optional<StopOnSignals> stop_on_signals(std::in_place, trainer.get());
  // A launcher gives its ranks a terminal even when its own output goes to a file.
  const ProgressLog log{!comm && isatty(STDERR_FILENO) != 0, ranks, options.max_steps};
  trainer->run(
      [&](const TrainLog& l) {
        if (json_log) json_log->write(l);
        if (r.progress) r.progress(l);
        log.record(l);
      },
      [&](int64_t step) { log.step(step); });
  stop_on_signals.reset();
  if (log.tty) fmt::print(stderr, "\r\033[K");
  if (checkpoint && trainer->step() == first_step && trainer->limits_reached())
    spdlog::info(
        "{} is at its limits already (step {}): nothing to train; raise {}, {} or {} to go on",
        model_dir, first_step, r.name("max_steps"), r.name("max_epochs"), r.name("max_minutes"));
  else
    spdlog::info("saved {} (step {})", model_dir, trainer->step());
}

void train_model_on_ranks(const TrainRequest& request, bool threads_given) {
  std::unique_ptr<Communicator> comm = connect_ranks(request.dist_timeout);
  if (!comm) return train_model(request, nullptr);
  // One of several ranks: only rank 0 reports progress; the ranks of one machine share its cores
  // unless the threads were given.
  spdlog::set_default_logger(spdlog::stdout_logger_mt("transduce"));  // no colour codes
  if (comm->rank() != 0) spdlog::set_level(spdlog::level::warn);
  const int local_ranks = launch_info().value_or(LaunchInfo{}).local_size;
  if (!threads_given) set_threads(default_threads_per_rank(local_ranks));
  const std::string warning =
      binding_warning(num_cores(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), local_ranks);
  if (!warning.empty() && comm->rank() == 0) spdlog::warn("{}", warning);
  try {
    train_model(request, comm.get());
  } catch (const std::exception& e) {
    // The other ranks may be waiting in a collective: end them all, with this rank's reason.
    fmt::print(stderr, "transduce: error: rank {} of {}: {}\n", comm->rank(), comm->size(),
               e.what());
    comm->abort(1);
  }
}

}  // namespace transduce
