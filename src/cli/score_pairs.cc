// `transduce score-pairs`: the model's log-probability of given translations (force decoding),
// one line per sentence pair.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "decode/forced_score.h"
#include "decode/input_limit.h"
#include "decode/loaded_model.h"
#include "decode/search_options.h"
#include "io/atomic_file.h"
#include "text/corpus.h"
#include "text/special_ids.h"

namespace transduce::cli {

namespace {

struct ScorePairsFlags {
  std::string model_dir, src, tgt, output, compute_type;
  SearchOptions search;  // its length penalty and input limit, as translate's
  int64_t batch_tokens = 2000;
  bool tokens = false, json = false;
};

void run_score_pairs(const ScorePairsFlags& f) {
  LoadedModel loaded(f.model_dir, compute_type_choice(f.compute_type));
  const ParallelText text = read_parallel(f.src, f.tgt);
  const Tokenizer& tok = loaded.tokenizer();
  const PiecePairs pairs = encode_pairs(
      tok, loaded.config(), text.src, text.tgt,
      [&](int side, size_t i) { return fmt::format("{}:{}", side == 0 ? f.src : f.tgt, i + 1); },
      f.search, print_warning);
  const std::vector<std::vector<int32_t>>& targets = pairs.targets;
  const std::vector<PairScore> scores =
      score_pairs(loaded.model(), pairs.sources, targets, f.search.alpha, f.batch_tokens);

  auto write = [&](std::FILE* out) {
    for (size_t i = 0; i < scores.size(); ++i) {
      const PairScore& s = scores[i];
      if (f.json) {
        std::vector<std::string> pieces;
        for (int32_t id : targets[i]) pieces.push_back(tok.piece(id));
        pieces.push_back(tok.piece(kEosId));
        const nlohmann::json j = {{"log_prob", s.log_prob},
                                  {"score", s.score},
                                  {"pieces", pieces},
                                  {"token_log_probs", s.token_log_probs}};
        fmt::print(out, "{}\n", j.dump());
        continue;
      }
      fmt::print(out, "{:.4f}\t{:.4f}", s.log_prob, s.score);
      if (f.tokens) {
        std::string each;
        for (float lp : s.token_log_probs)
          each += fmt::format("{}{:.4f}", each.empty() ? "" : " ", lp);
        fmt::print(out, "\t{}", each);
      }
      fmt::print(out, "\n");
    }
  };
  if (f.output.empty()) {
    write(stdout);
    if (std::fflush(stdout) != 0) fail("cannot write the scores to standard output");
  } else {
    io::write_file_atomically(f.output, write);
  }
}

}  // namespace

void register_score_pairs(CLI::App& app) {
  auto f = std::make_shared<ScorePairsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "score-pairs",
      "the model's log-probability of given translations (force decoding), a line per pair: "
      "log-probability, length-normalised score");
  cmd->add_option("-m,--model", f->model_dir, "model directory")->required();
  cmd->add_option("--src", f->src, "source sentences, one a line")->required();
  cmd->add_option("--tgt", f->tgt, "their translations, one a line")->required();
  cmd->add_option("-o,--output", f->output, "write this file instead of stdout");
  add_compute_type(*cmd, f->compute_type);
  add_option_flags(*cmd, search_option_specs(), f->search,
                   {"alpha", "max_input_len", "long_input"});
  cmd->add_option("--batch-tokens", f->batch_tokens, "tokens per batch")->capture_default_str();
  cmd->add_flag("--tokens", f->tokens,
                "add a third field: each target token's log-probability, then EOS's");
  cmd->add_flag("--json", f->json,
                "a JSON object per pair: log_prob, score, pieces (EOS last), token_log_probs");
  cmd->callback([f] { naming_flags(kInputLimitKeys, [&] { run_score_pairs(*f); }); });
}

}  // namespace transduce::cli
