// `transduce translate`: stdin to stdout (or files), streamed: each batch's lines are written as
// soon as they are translated, in input order.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/line_stream.h"
#include "cli/model_flags.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "core/utf8.h"
#include "decode/input_limit.h"
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
  std::string prefix;             // a file of target prefixes, one a line
  bool prefix_after_tab = false;  // or each input line is SOURCE<TAB>PREFIX
  std::string constraints;        // a file of constraints: tab-separated phrases a line
  std::string output_format = "text";
  bool alignment = false;    // word alignments from attention
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

// A file read a line for each input line (--prefix, --constraints).
class SideFile {
 public:
  SideFile(const std::string& path, std::string what) : path_(path), what_(std::move(what)) {
    if (path.empty()) return;
    in_.open(path);
    if (!in_) fail("cannot read the {} file {}", what_, path);
  }
  bool given() const { return !path_.empty(); }
  // The next `n` prefixes; the file ending first is an error naming it.
  std::vector<std::string> take(size_t n, int64_t first_line) {
    std::vector<std::string> out(n);
    for (size_t i = 0; i < n; ++i) {
      if (!std::getline(in_, out[i]))
        fail("{} has {} lines, fewer than the input ({} a line, empty for none)", path_,
             first_line + static_cast<int64_t>(i) - 1, what_);
      size_t bad = 0;
      if (!valid_utf8(out[i], &bad))
        fail("{}:{}: invalid UTF-8 at byte {}", path_, first_line + static_cast<int64_t>(i),
             bad + 1);
    }
    return out;
  }
  // The file must end with the input.
  void finish(int64_t lines) {
    std::string extra;
    if (given() && std::getline(in_, extra))
      fail("{} has more lines than the input's {}", path_, lines);
  }

 private:
  std::string path_, what_;
  std::ifstream in_;
};

// "a\tb c" -> {"a", "b c"}; an empty line: none.
std::vector<std::string> tab_separated(const std::string& line) {
  std::vector<std::string> out;
  for (size_t start = 0; start < line.size();) {
    const size_t tab = std::min(line.find('\t', start), line.size());
    out.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  return out;
}

void run_translate(const TranslateFlags& f) {
  if (f.prefix_after_tab && !f.prefix.empty())
    fail("--prefix and --prefix-after-tab both give prefixes: choose one");
  SideFile prefix_file(f.prefix, "prefix");
  SideFile constraint_file(f.constraints, "constraints");
  const auto members = load_ensemble(f.model_dirs, compute_type_choice(f.compute_type));
  const LoadedModel& loaded = *members.front();
  TranslateOptions options = f.options;
  options.attention = !f.attention.empty();
  options.alignment = f.alignment;
  Translator translator(ensemble_models(members), loaded.tokenizer(), options);

  LineStreams streams(f.input, f.output);
  std::FILE* out = streams.out();
  const std::string& in_name = streams.input_name();
  LineReader& reader = streams.reader();
  const size_t chunk = f.chunk_lines > 0
                           ? static_cast<size_t>(f.chunk_lines)
                           : static_cast<size_t>(std::max<int64_t>(1, f.options.batch_tokens / 8));
  const bool json_lines = f.output_format == "json";
  const bool several = outputs_per_sentence(options.search) > 1;
  auto translate_all = [&](AttentionWriter* attention) {
    int64_t line_number = 1;
    std::vector<std::string> lines, prefixes;
    std::vector<std::vector<std::string>> constraints;
    while (reader.read_available(lines, chunk)) {
      for (size_t i = 0; i < lines.size(); ++i) {
        size_t bad = 0;
        if (!valid_utf8(lines[i], &bad))
          fail("{}:{}: invalid UTF-8 at byte {}", in_name, line_number + static_cast<int64_t>(i),
               bad + 1);
      }
      prefixes.clear();
      if (prefix_file.given()) prefixes = prefix_file.take(lines.size(), line_number);
      constraints.clear();
      if (constraint_file.given())
        for (const std::string& l : constraint_file.take(lines.size(), line_number))
          constraints.push_back(tab_separated(l));
      if (f.prefix_after_tab) {
        for (std::string& line : lines) {
          const size_t tab = line.find('\t');
          prefixes.push_back(tab == std::string::npos ? "" : line.substr(tab + 1));
          if (tab != std::string::npos) line.resize(tab);
        }
      }
      const auto results =
          translator.translate(lines, line_number, print_warning, prefixes, constraints);
      for (size_t i = 0; i < results.size(); ++i) {
        const int64_t line = line_number + static_cast<int64_t>(i);
        if (json_lines) {
          nlohmann::json translations = nlohmann::json::array();
          for (const Translation& t : results[i])
            translations.push_back(translation_json(t, loaded.tokenizer(), f.alignment));
          fmt::print(
              out, "{}\n",
              nlohmann::json{{"line", line}, {"translations", std::move(translations)}}.dump());
        } else if (several) {
          for (const Translation& t : results[i])
            fmt::print(out, "{} ||| {} ||| {:.4f}{}\n", line - 1, t.text, t.score,
                       f.alignment ? fmt::format(" ||| {}", pharaoh(t.alignment)) : std::string());
        } else if (f.alignment) {
          fmt::print(out, "{} ||| {}\n", results[i][0].text, pharaoh(results[i][0].alignment));
        } else {
          fmt::print(out, "{}\n", results[i].empty() ? "" : results[i][0].text);
        }
        if (attention) attention->add(line, lines[i], results[i].front());
      }
      std::fflush(out);
      line_number += static_cast<int64_t>(lines.size());
      lines.clear();
    }
    prefix_file.finish(line_number - 1);
    constraint_file.finish(line_number - 1);
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
  cmd->add_option("--prefix", f->prefix,
                  "a file of target prefixes, one for each input line (empty: none): each "
                  "translation starts with its prefix and goes on from it");
  cmd->add_flag("--prefix-after-tab", f->prefix_after_tab,
                "each input line is the source, a tab, then its target prefix");
  cmd->add_option("--constraints", f->constraints,
                  "a file of phrases each translation must hold: tab-separated phrases for each "
                  "input line (empty: none); beam search with dynamic beam allocation");
  cmd->add_flag("--alignment", f->alignment,
                "word alignments from the penultimate decoder layer's attention, averaged over "
                "its heads (Garg et al. 2019): TEXT ||| 0-0 1-2 ... (source word-target word, "
                "from 0), or \"alignment\" in JSON");
  cmd->add_option("--output-format", f->output_format,
                  "text (one translation a line; with several a sentence, ID ||| TEXT ||| SCORE "
                  "lines) or json (a line per sentence: its translations with their scores per "
                  "token)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--chunk-lines", f->chunk_lines,
                  "most lines translated together when input arrives faster (default: a batch)");
  cmd->callback([f] { naming_flags(kInputLimitKeys, [&] { run_translate(*f); }); });
}

}  // namespace transduce::cli
