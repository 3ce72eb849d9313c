// `transduce train`: a model from parallel text with the recipe of section 5, or `--resume` one.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/config_file.h"
#include "cli/model_flags.h"
#include "cli/train_option_flags.h"
#include "core/error.h"
#include "core/option_names.h"
#include "core/shortest_float.h"
#include "core/threads.h"
#include "dist/gradient_sync.h"
#include "dist/launch.h"
#include "io/atomic_file.h"
#include "parse/parse_settings.h"
#include "parse/tree_data.h"
#include "parse/word_swap.h"
#include "text/corpus.h"
#include "text/subword_sampler.h"
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
  std::string trees, valid_trees;  // a parser: treebanks instead of parallel text
  std::string tree_scheme = "xx";
  bool subtrees = false;
  int word_swaps = 0;  // a parser's word-swapped copies of the training trees
  double word_swap_rate = 0.2;
  int max_len = 256;
  double dist_timeout = 600;
  TrainOptions options;
  ConfigFlags config;
  CLI::App* cmd = nullptr;
  std::function<void(const TrainLog&)> progress;
};

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

// `valid_text`, when given, receives what validation by translation scores against;
// `kept_text`, the raw lines of the pairs returned (for subword sampling; moved there, so not
// with valid_text).
std::vector<Example> load_examples(const std::string& src, const std::string& tgt,
                                   const Tokenizer& tokenizer, int max_len, const char* what,
                                   ValidText* valid_text = nullptr,
                                   ParallelText* kept_text = nullptr) {
  ParallelText text = read_parallel(src, tgt);
  EncodeStats stats;
  std::vector<int64_t> kept;
  std::vector<Example> examples = encode_parallel(text, tokenizer, max_len, &stats, &kept);
  TD_CHECK(!(kept_text && valid_text), "load_examples moves the lines to one of them");
  if (kept_text) {
    for (int64_t line : kept) {
      kept_text->src.push_back(std::move(text.src[static_cast<size_t>(line)]));
      kept_text->tgt.push_back(std::move(text.tgt[static_cast<size_t>(line)]));
    }
  }
  if (valid_text) {
    valid_text->file_lines = static_cast<int64_t>(text.tgt.size());
    for (int64_t line : kept)
      valid_text->references.push_back(std::move(text.tgt[static_cast<size_t>(line)]));
    valid_text->lines = std::move(kept);
    valid_text->detokenize = [&tokenizer](const std::vector<int32_t>& ids) {
      return tokenizer.decode(ids);
    };
  }
  spdlog::info(
      "{} data: {} pairs, {} kept, {} skipped as empty, {} skipped as longer than {} tokens", what,
      stats.pairs, stats.kept, stats.skipped_empty, stats.skipped_long, max_len);
  if (examples.empty()) fail("{} data: no usable sentence pairs in {} and {}", what, src, tgt);
  return examples;
}

// How a parser's training trees are augmented (validation trees are not).
struct TreeAugmentation {
  bool subtrees = false;
  int word_swaps = 0;
  double word_swap_rate = 0;
  uint64_t seed = 1;
};

// A parser's pairs: each tree's words and its linearisation (parse/linearize.h).
std::vector<Example> load_tree_examples(const std::string& path, const Tokenizer& tokenizer,
                                        parse::TreeScheme scheme, int max_len, const char* what,
                                        const TreeAugmentation& augment = {}) {
  const parse::TreeVocab vocab(tokenizer);
  std::vector<parse::Tree> trees = parse::read_normalised_trees(path);
  if (augment.word_swaps > 0) {
    std::vector<parse::Tree> more =
        parse::word_swapped_copies(trees, augment.word_swaps, augment.word_swap_rate, augment.seed);
    const std::set<std::string> open = parse::open_class_tags(trees);
    spdlog::info("{} trees: {} {} added with words of the open-class tags ({}) swapped at rate {}",
                 what, augment.word_swaps, augment.word_swaps == 1 ? "copy" : "copies",
                 fmt::join(open, " "), augment.word_swap_rate);
    trees.insert(trees.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  if (augment.subtrees) {
    std::vector<parse::Tree> more = parse::subtrees(trees);
    spdlog::info("{} trees: {} constituents of two or more words added as trees of their own", what,
                 more.size());
    trees.insert(trees.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  parse::TreeDataStats stats;
  std::vector<Example> examples =
      parse::encode_trees(trees, tokenizer, vocab, scheme, max_len, &stats);
  spdlog::info(
      "{} trees: {} read, {} kept, {} skipped as empty, {} skipped as longer than {} tokens{}",
      what, stats.trees, stats.kept, stats.skipped_empty, stats.skipped_long, max_len,
      stats.skipped_unknown > 0
          ? fmt::format(", {} skipped for labels the vocabulary lacks (first: {})",
                        stats.skipped_unknown, stats.unknown_label)
          : "");
  if (examples.empty()) fail("{} trees: no usable tree in {}", what, path);
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

// Rank 0 (or the only process) checks the model directory and, for a new model, creates it with
// its vocabulary and config. Returns the checkpoint to resume from, if any.
std::optional<std::string> prepare_model_dir(const TrainFlags& f, const std::string& model_dir) {
  if (!f.resume_dir.empty()) {
    std::optional<std::string> checkpoint = latest_checkpoint(model_dir);
    if (!checkpoint) fail("{}: no complete checkpoint to resume from", model_dir);
    return checkpoint;
  }
  if (!list_checkpoints(model_dir).empty())
    fail("{} already holds a trained model: use --resume {} or another --output", model_dir,
         model_dir);
  if (!fs::is_regular_file(fs::path(f.vocab_dir) / "spm.model"))
    fail("{}: no spm.model: --vocab takes a directory made by `transduce vocab`", f.vocab_dir);
  fs::create_directories(model_dir);
  fs::copy_file(fs::path(f.vocab_dir) / "spm.model", fs::path(model_dir) / "spm.model",
                fs::copy_options::overwrite_existing);
  const Tokenizer tokenizer((fs::path(model_dir) / "spm.model").string());
  ModelConfig config = f.model.resolve();
  config.vocab_size = tokenizer.vocab_size();
  config.validate();
  write_model_config(model_dir, config);
  // A parser: its linearisation and the paper's decoding defaults for parsing (section 6.3).
  if (!f.trees.empty()) {
    parse::ParseSettings settings;
    settings.scheme = f.tree_scheme;
    settings.max_opens =
        static_cast<int>(parse::max_opens_in_a_row(parse::read_normalised_trees(f.trees)));
    parse::write_parse_settings(model_dir, settings);
  }
  return std::nullopt;
}

// The checkpoint rank 0 chose, on every rank: its step goes out (-1 for a new model). This is
// also where the other ranks wait for rank 0 to set up the model directory.
std::optional<std::string> share_checkpoint(Communicator& comm, const std::string& model_dir,
                                            const std::optional<std::string>& chosen) {
  int64_t step = -1;
  if (comm.rank() == 0 && chosen) step = read_state(*chosen).at("step").get<int64_t>();
  comm.broadcast(&step, sizeof(step), "the start (rank 0 preparing the model directory)");
  if (step < 0) return std::nullopt;
  if (comm.rank() == 0) return chosen;
  return checkpoint_dir(model_dir, step);
}

// The options a run trains with: a new model's from its flags, a resumed one's those saved with
// its checkpoint, overridden by the flags given (the seed among the saved ones, so that word
// swaps remake the same training trees).
TrainOptions resolved_options(const TrainFlags& f, const std::optional<std::string>& checkpoint) {
  TrainOptions options = f.options;
  if (checkpoint) {
    update_from_json(read_state(*checkpoint).value("options", nlohmann::json::object()), options);
    apply_given_train_options(*f.cmd, f.options, options);
  }
  return options;
}

// A value the command line holds as a word, as a configuration file writes it: a number or text.
nlohmann::json word_json(const std::string& word) {
  nlohmann::json v = nlohmann::json::parse(word, nullptr, false);
  return v.is_number() ? v : nlohmann::json(word);
}

// Every flag of `train` with the value the run uses: the training options resolved, the model's
// hyper-parameters as built (or, resumed, as saved), the rest as given or by default.
std::vector<ConfigEntry> config_entries(const TrainFlags& f, const TrainOptions& options,
                                        const ModelConfig& model) {
  nlohmann::json model_values = model;
  // config.json leaves out the settings that are off; a configuration file lists every key.
  model_values["attention_window"] = model.attention_window;
  model_values["src_word_dropout"] = model.src_word_dropout;
  model_values["tgt_word_dropout"] = model.tgt_word_dropout;
  std::vector<ConfigEntry> entries;
  for (const CLI::Option* opt : f.cmd->get_options()) {
    const std::string key = key_of_flag(opt->get_name());
    if (reserved_key(key)) continue;
    if (const TrainOptionSpec* spec = find_train_option(key)) {
      entries.emplace_back(key, spec->get(options));
    } else if (model_values.contains(key)) {
      nlohmann::json v = model_values[key];
      // Shortest text of the float the model holds: 0.1, not 0.10000000149011612.
      if (v.is_number_float()) v = shortest_float(v.get<float>());
      entries.emplace_back(key, v);
    } else if (is_switch(*opt)) {
      entries.emplace_back(key, opt->count() > 0);  // a switch
    } else if (opt->count() > 0) {
      const std::vector<std::string>& words = opt->results();
      entries.emplace_back(
          key, opt->get_expected_max() == 1 ? word_json(words.front()) : nlohmann::json(words));
    } else if (!opt->get_default_str().empty()) {
      entries.emplace_back(key, word_json(opt->get_default_str()));
    } else {
      entries.emplace_back(key, std::nullopt);
    }
  }
  return entries;
}

// What --dump-config prints: the configuration `train` would run with, as a --config file.
std::string resolved_config(const TrainFlags& f) {
  if (f.resume_dir.empty()) return config_text(config_entries(f, f.options, f.model.resolve()));
  const std::optional<std::string> checkpoint = latest_checkpoint(f.resume_dir);
  if (!checkpoint) fail("{}: no complete checkpoint to resume from", f.resume_dir);
  return config_text(
      config_entries(f, resolved_options(f, checkpoint), read_model_config(f.resume_dir)));
}

void train(TrainFlags& f, Communicator* comm) {
  const bool resume = !f.resume_dir.empty();
  const std::string model_dir = resume ? f.resume_dir : f.out_dir;
  if (model_dir.empty()) fail("give --output MODEL_DIR for a new model or --resume MODEL_DIR");
  if (!resume && f.vocab_dir.empty()) fail("give --vocab DIR (made by `transduce vocab`)");
  if ((f.valid_src.empty()) != (f.valid_tgt.empty()))
    fail("give both --valid-src and --valid-tgt, or neither");
  const bool parallel = !f.src.empty() || !f.tgt.empty();
  if (parallel == !f.trees.empty())
    fail("give training data: --src and --tgt (parallel text) or --trees (a treebank)");
  if (parallel && (f.src.empty() || f.tgt.empty())) fail("give both --src and --tgt");
  if (!f.valid_trees.empty() && parallel) fail("--valid-trees goes with --trees");
  if (!f.valid_src.empty() && !parallel) fail("with --trees, validate with --valid-trees");
  if (parallel && (f.subtrees || f.word_swaps > 0))
    fail("--subtrees and --word-swaps augment a treebank: they go with --trees");
  if (!parallel && f.options.subword_sampling > 0)
    fail("--subword-sampling segments --src/--tgt text; it does not apply to --trees");
  const int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  if (!resume) check_train_options_as_flags(f.options);  // before the model directory is made
  if (!parallel && needs_translation(f.options.valid_metrics))
    fail("--valid-metric bleu and chrf score translations: they go with --valid-src/--valid-tgt");
  std::optional<std::string> checkpoint;
  if (rank == 0) checkpoint = prepare_model_dir(f, model_dir);
  if (comm) checkpoint = share_checkpoint(*comm, model_dir, checkpoint);
  if (rank > 0 && !fs::exists(fs::path(model_dir) / "config.json"))
    fail(
        "{} holds no config.json here although rank 0 has prepared it: the output directory "
        "must be shared by every machine of the job (docs/distributed.md)",
        model_dir);
  const ModelConfig config = read_model_config(model_dir);
  Tokenizer tokenizer((fs::path(model_dir) / "spm.model").string());
  if (config.vocab_size != tokenizer.vocab_size())
    fail("{}: the model has {} vocabulary entries but spm.model has {}", model_dir,
         config.vocab_size, tokenizer.vocab_size());

  TrainOptions options = resolved_options(f, checkpoint);
  options.out_dir = model_dir;
  // The whole configuration this run trains with, kept with the model (a --config file).
  if (rank == 0)
    io::write_file_atomically((fs::path(model_dir) / "train.yml").string(),
                              config_text(config_entries(f, options, config)));
  const int max_len = std::min(f.max_len, config.max_positions);
  std::vector<Example> train, valid;
  ValidText valid_text;
  std::optional<SubwordSampler> sampler;  // with --subword-sampling; outlives the trainer
  if (!f.trees.empty()) {
    // The scheme the model directory was made with (a resumed parser keeps its own).
    const std::optional<parse::ParseSettings> settings = parse::read_parse_settings(model_dir);
    if (!settings) fail("{}: not a parser (no parse.json) to train on trees", model_dir);
    const parse::TreeScheme scheme = *parse::scheme_from_name(settings->scheme);
    const TreeAugmentation augment{f.subtrees, f.word_swaps, f.word_swap_rate, options.seed};
    train = load_tree_examples(f.trees, tokenizer, scheme, max_len, "training", augment);
    if (!f.valid_trees.empty())
      valid = load_tree_examples(f.valid_trees, tokenizer, scheme, max_len, "validation");
  } else {
    ParallelText kept;
    train = load_examples(f.src, f.tgt, tokenizer, max_len, "training", nullptr,
                          options.subword_sampling > 0 ? &kept : nullptr);
    if (options.subword_sampling > 0)
      sampler.emplace(tokenizer, std::move(kept.src), std::move(kept.tgt), max_len,
                      options.subword_sampling, options.seed);
    if (!f.valid_src.empty())
      valid =
          load_examples(f.valid_src, f.valid_tgt, tokenizer, max_len, "validation", &valid_text);
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
  if (!valid.empty() && !f.valid_src.empty()) trainer->set_valid_text(std::move(valid_text));
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
  const bool tty = !comm && isatty(STDERR_FILENO);
  trainer->run(
      [&](const TrainLog& l) {
        if (tty) fmt::print(stderr, "\r\033[K");
        if (json_log) json_log->write(l);
        if (f.progress) f.progress(l);
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
      },
      [&](int64_t step) {
        if (tty)
          fmt::print(stderr, "\r  step {}{}", step,
                     options.max_steps > 0 ? fmt::format("/{}", options.max_steps) : "");
      });
  stop_on_signals.reset();
  if (tty) fmt::print(stderr, "\r\033[K");
  if (checkpoint && trainer->step() == first_step && trainer->limits_reached())
    spdlog::info(
        "{} is at its limits already (step {}): nothing to train; raise --max-steps, "
        "--max-epochs or --max-minutes to go on",
        model_dir, first_step);
  else
    spdlog::info("saved {} (step {})", model_dir, trainer->step());
}

void run_train(TrainFlags& f) {
  std::unique_ptr<Communicator> comm = connect_ranks(f.dist_timeout);
  if (!comm) return train(f, nullptr);
  // One of several ranks: only rank 0 reports progress; the ranks of one machine share its cores
  // unless --threads says otherwise.
  spdlog::set_default_logger(spdlog::stdout_logger_mt("transduce"));  // no colour codes
  if (comm->rank() != 0) spdlog::set_level(spdlog::level::warn);
  const int local_ranks = launch_info().value_or(LaunchInfo{}).local_size;
  if (f.cmd->get_parent()->get_option("--threads")->count() == 0)
    set_threads(default_threads_per_rank(local_ranks));
  const std::string warning =
      binding_warning(num_cores(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), local_ranks);
  if (!warning.empty() && comm->rank() == 0) spdlog::warn("{}", warning);
  try {
    train(f, comm.get());
  } catch (const std::exception& e) {
    // The other ranks may be waiting in a collective: end them all, with this rank's reason.
    fmt::print(stderr, "transduce: error: rank {} of {}: {}\n", comm->rank(), comm->size(),
               e.what());
    comm->abort(1);
  }
}

}  // namespace

void register_train(CLI::App& app, std::function<void(const TrainLog&)> progress) {
  auto f = std::make_shared<TrainFlags>();
  f->progress = std::move(progress);
  CLI::App* cmd = app.add_subcommand("train", "train a model on parallel text (section 5)");
  f->cmd = cmd;
  f->model.add_to(*cmd, /*with_vocab_size=*/false);
  cmd->add_option("--src", f->src, "training source text, one sentence a line");
  cmd->add_option("--tgt", f->tgt, "training target text, aligned with --src");
  cmd->add_option("--valid-src", f->valid_src, "validation source text");
  cmd->add_option("--valid-tgt", f->valid_tgt, "validation target text");
  cmd->add_option("--trees", f->trees,
                  "train a parser instead: a treebank (Penn Treebank brackets); the vocabulary "
                  "must come from `transduce vocab --trees`");
  cmd->add_option("--valid-trees", f->valid_trees, "a parser's validation treebank");
  cmd->add_option("--tree-scheme", f->tree_scheme,
                  "a new parser's target: brackets with each word as XX (xx) or as itself (words)")
      ->capture_default_str()
      ->check(CLI::IsMember({"xx", "words"}));
  cmd->add_flag("--subtrees", f->subtrees,
                "a parser's data augmentation: also train on every constituent of two or more "
                "words as a sentence of its own");
  cmd->add_option("--word-swaps", f->word_swaps,
                  "a parser's data augmentation: add this many copies of the training trees in "
                  "which words of open-class tags are replaced by other words of the same tag")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  cmd->add_option("--word-swap-rate", f->word_swap_rate,
                  "the share of open-class words --word-swaps replaces")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--vocab", f->vocab_dir, "directory made by `transduce vocab`");
  cmd->add_option("-o,--output", f->out_dir, "model directory to create");
  cmd->add_option("--resume", f->resume_dir, "model directory to continue training");
  cmd->add_option("--max-len", f->max_len, "skip pairs with a side longer than this (tokens)")
      ->capture_default_str();
  add_train_option_flags(*cmd, f->options);
  cmd->add_option("--dist-timeout", f->dist_timeout,
                  "under mpirun: seconds to wait for the other ranks before giving up")
      ->capture_default_str();
  add_config_flags(*cmd, f->config);
  cmd->callback([f] {
    if (!f->config.path.empty()) apply_config_file(*f->cmd, f->config.path);
    if (f->config.dump) {
      fmt::print("{}", resolved_config(*f));
      return;
    }
    run_train(*f);
  });
}

}  // namespace transduce::cli
