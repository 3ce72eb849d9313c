// `transduce parse`: sentences in (one a line, words separated by spaces), constituency trees out
// (one a line, Penn Treebank brackets), streamed like `translate`; decoding defaults come from the
// model directory's parse.json.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/line_stream.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "core/utf8.h"
#include "decode/loaded_model.h"
#include "decode/search_options.h"
#include "io/atomic_file.h"
#include "parse/parse_settings.h"
#include "parse/parser.h"

namespace transduce::cli {

namespace {

struct ParseFlags {
  std::string model_dir, input, output, stats;
  parse::ParseRequest request;
  std::string word_score = "any";
  SearchOptions search;  // the search options given, by their flags
  CLI::App* cmd = nullptr;
};

nlohmann::json repairs_json(const parse::Repairs& r) {
  return {{"unclosed", r.unclosed},           {"unopened", r.unopened},
          {"mismatched", r.mismatched},       {"extra_slots", r.extra_slots},
          {"missing_words", r.missing_words}, {"empty", r.empty}};
}

void run_parse(const ParseFlags& f) {
  const auto start = std::chrono::steady_clock::now();
  LoadedModel loaded(f.model_dir);
  // The model's own defaults, unless this command line says otherwise.
  parse::ParseRequest request = f.request;
  request.exact_pieces = f.word_score == "pieces";
  for (const std::string& key : given_options(*f.cmd, search_option_specs()))
    request.search[key] = find_option(search_option_specs(), key)->get(f.search);
  const parse::ParseOptions options =
      parse::parse_options(parse::require_parse_settings(f.model_dir), request);
  parse::Parser parser(loaded.model(), loaded.tokenizer(), options);

  LineStreams streams(f.input, f.output);
  const size_t chunk = static_cast<size_t>(std::max<int64_t>(1, options.batch_tokens / 16));
  int64_t line_number = 1, sentences = 0, words = 0, repaired = 0;
  parse::Repairs repairs;
  std::vector<std::string> lines;
  while (streams.reader().read_available(lines, chunk)) {
    std::vector<std::vector<std::string>> batch;
    for (size_t i = 0; i < lines.size(); ++i) {
      size_t bad = 0;
      if (!valid_utf8(lines[i], &bad))
        fail("{}:{}: invalid UTF-8 at byte {}", streams.input_name(),
             line_number + static_cast<int64_t>(i), bad + 1);
      batch.push_back(parse::split_words(lines[i]));
    }
    const auto parsed = parser.parse(batch, line_number, print_warning);
    for (size_t i = 0; i < parsed.size(); ++i) {
      const parse::ParsedSentence& p = parsed[i];
      fmt::print(streams.out(), "{}\n", p.tree.children.empty() ? "" : parse::to_string(p.tree));
      if (batch[i].empty()) continue;
      ++sentences;
      words += static_cast<int64_t>(batch[i].size());
      repaired += p.repairs.total() > 0;
      repairs += p.repairs;
    }
    std::fflush(streams.out());
    line_number += static_cast<int64_t>(lines.size());
    lines.clear();
  }
  streams.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stderr,
             "parse: {} sentences, {} words, {:.1f} s ({:.2f} sentences/s, beam {}{}); {} "
             "repaired ({} unclosed, {} unopened, {} mismatched brackets, {} extra slots, {} "
             "missing words, {} empty constituents)\n",
             sentences, words, seconds, seconds > 0 ? sentences / seconds : 0.0,
             options.search.beam, options.constrained ? ", constrained" : ", free", repaired,
             repairs.unclosed, repairs.unopened, repairs.mismatched, repairs.extra_slots,
             repairs.missing_words, repairs.empty);
  if (!f.stats.empty()) {
    const nlohmann::json j = {
        {"sentences", sentences},
        {"words", words},
        {"seconds", seconds},
        {"beam", options.search.beam},
        {"alpha", options.search.alpha},
        {"bracket_bonus", options.bracket_bonus},
        {"max_len_a", options.search.max_len_a},
        {"max_len_b", options.search.max_len_b},
        {"constrained", options.constrained},
        {"repaired_sentences", repaired},
        {"repairs", repairs_json(repairs)},
    };
    io::write_file_atomically(f.stats, j.dump(2) + "\n");
  }
}

}  // namespace

void register_parse(CLI::App& app) {
  auto f = std::make_shared<ParseFlags>();
  CLI::App* cmd = app.add_subcommand(
      "parse", "parse sentences (words separated by spaces, one a line) into constituency trees");
  cmd->add_option("-m,--model", f->model_dir, "a parser's model directory")->required();
  cmd->add_option("--input", f->input, "read this file instead of stdin");
  cmd->add_option("-o,--output", f->output, "write this file instead of stdout");
  parse::ParseRequest& r = f->request;
  f->cmd = cmd;
  // Their defaults: the model's parse.json, which has these unless the parser was trained so.
  add_option_flags(*cmd, search_option_specs(), f->search,
                   {"beam", "alpha", "max_len_a", "max_len_b"},
                   parse::search_defaults(parse::ParseSettings{}));
  cmd->add_option("--bracket-bonus", r.bracket_bonus,
                  "added to the log-probability of each opening bracket: above 0, more "
                  "constituents (default: parse.json, 0)")
      ->check(CLI::Range(-10.0, 10.0));
  cmd->add_option(
         "--word-score", f->word_score,
         "the words and tagged schemes: score the next word as any word (any) or as its exact "
         "pieces (pieces)")
      ->capture_default_str()
      ->check(CLI::IsMember({"any", "pieces"}));
  cmd->add_flag("--any-tag", r.any_tag,
                "the tagged scheme: let any word take any tag (default: the tags parse.json's "
                "lexicon gives it)");
  cmd->add_flag("--free", r.free,
                "decode without the tree constraint (outputs are repaired into trees instead)");
  cmd->add_option("--batch-tokens", r.batch_tokens, "source tokens per batch")
      ->capture_default_str();
  cmd->add_option("--stats", f->stats, "write the summary (counts, repairs, time) to this JSON");
  cmd->callback([f] { run_parse(*f); });
}

}  // namespace transduce::cli
