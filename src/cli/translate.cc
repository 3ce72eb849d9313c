// `transduce translate`: stdin to stdout (or files), streamed: each batch's lines are written as
// soon as they are translated, in input order.
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/line_stream.h"
#include "cli/model_flags.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "core/utf8.h"
#include "decode/loaded_model.h"
#include "decode/search_options.h"
#include "decode/translator.h"
#include "io/atomic_file.h"
#include "serve/api.h"

namespace transduce::cli {

namespace {

struct TranslateFlags {
  std::vector<std::string> model_dirs;  // several: an ensemble
  std::string input, output, attention;
  std::string compute_type;  // empty: the model's own
  TranslateOptions options;
  int chunk_lines = 0;  // 0: as many as a batch holds
};

// The --attention file: {"model": name, "sentences": [{"line", "source", "translation", "score",
// "attention"}, ...]}, one sentence per input line, written as the translation goes.
class AttentionWriter {
 public:
  AttentionWriter(std::FILE* out, const LoadedModel& m) : out_(out), tokenizer_(m.tokenizer()) {
    fmt::print(out_, "{{\"model\": {}, \"sentences\": [", nlohmann::json(m.name()).dump());
  }
  void add(int64_t line, const std::string& source, const Translation& best) {
    const nlohmann::json entry = attention_file_sentence(line, source, best, tokenizer_);
    fmt::print(out_, "{}\n{}", first_ ? "" : ",", entry.dump());
    first_ = false;
  }
  void finish() { fmt::print(out_, "\n]}}\n"); }

 private:
  std::FILE* out_;
  const Tokenizer& tokenizer_;
  bool first_ = true;
};

void run_translate(const TranslateFlags& f) {
  const auto members = load_ensemble(f.model_dirs, compute_type_choice(f.compute_type));
  const LoadedModel& loaded = *members.front();
  TranslateOptions options = f.options;
  options.attention = !f.attention.empty();
  Translator translator(ensemble_models(members), loaded.tokenizer(), options);

  LineStreams streams(f.input, f.output);
  std::FILE* out = streams.out();
  const std::string& in_name = streams.input_name();
  LineReader& reader = streams.reader();
  const size_t chunk = f.chunk_lines > 0
                           ? static_cast<size_t>(f.chunk_lines)
                           : static_cast<size_t>(std::max<int64_t>(1, f.options.batch_tokens / 8));
  auto translate_all = [&](AttentionWriter* attention) {
    int64_t line_number = 1;
    std::vector<std::string> lines;
    while (reader.read_available(lines, chunk)) {
      for (size_t i = 0; i < lines.size(); ++i) {
        size_t bad = 0;
        if (!valid_utf8(lines[i], &bad))
          fail("{}:{}: invalid UTF-8 at byte {}", in_name, line_number + static_cast<int64_t>(i),
               bad + 1);
      }
      const auto results = translator.translate(lines, line_number, [](const std::string& w) {
        fmt::print(stderr, "transduce: warning: {}\n", w);
      });
      for (size_t i = 0; i < results.size(); ++i) {
        const int64_t line = line_number + static_cast<int64_t>(i);
        if (f.options.search.nbest > 1) {
          for (const Translation& t : results[i])
            fmt::print(out, "{} ||| {} ||| {:.4f}\n", line - 1, t.text, t.score);
        } else {
          fmt::print(out, "{}\n", results[i].empty() ? "" : results[i][0].text);
        }
        if (attention) attention->add(line, lines[i], results[i].front());
      }
      std::fflush(out);
      line_number += static_cast<int64_t>(lines.size());
      lines.clear();
    }
  };
  if (f.attention.empty()) {
    translate_all(nullptr);
  } else {
    // Written whole or not at all: a failure part-way leaves no half file behind.
    io::write_file_atomically(f.attention, [&](std::FILE* file) {
      AttentionWriter writer(file, loaded);
      translate_all(&writer);
      writer.finish();
    });
  }
  streams.finish();
}

}  // namespace

void register_translate(CLI::App& app) {
  auto f = std::make_shared<TranslateFlags>();
  CLI::App* cmd = app.add_subcommand("translate", "translate text, one sentence a line");
  cmd->add_option("-m,--model", f->model_dirs,
                  "model directory; several (-m A -m B) translate as an ensemble, averaging "
                  "their probabilities at every step (one vocabulary; attention from the first)")
      ->required();
  cmd->add_option("--input", f->input, "read this file instead of stdin");
  cmd->add_option("-o,--output", f->output, "write this file instead of stdout");
  add_compute_type(*cmd, f->compute_type);
  add_option_flags(*cmd, search_option_specs(), f->options.search);
  cmd->add_option("--batch-tokens", f->options.batch_tokens, "source tokens per batch")
      ->capture_default_str();
  cmd->add_option("--attention", f->attention,
                  "write each best translation's attention weights (every layer and head) to "
                  "this JSON file");
  cmd->add_option("--chunk-lines", f->chunk_lines,
                  "most lines translated together when input arrives faster (default: a batch)");
  cmd->callback([f] { run_translate(*f); });
}

}  // namespace transduce::cli
