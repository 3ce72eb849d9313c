// `transduce attention`: the paper's Figures 3-5 for your own sentences. Translates them and writes
// a self-contained HTML file (and, if asked, the JSON) showing every layer's and head's attention;
// or renders a file written by `transduce translate --attention`.
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/model_flags.h"
#include "cli/option_flags.h"
#include "core/error.h"
#include "core/utf8.h"
#include "decode/loaded_model.h"
#include "decode/search_options.h"
#include "decode/translator.h"
#include "io/atomic_file.h"
#include "serve/api.h"
#include "serve/web_page.h"

namespace transduce::cli {

namespace {

struct AttentionFlags {
  std::string model_dir, from, html, json;
  std::string compute_type;  // empty: the model's own
  std::vector<std::string> sources;
  TranslateOptions options;
};

nlohmann::json read_attention_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("{}: cannot open", path);
  nlohmann::json data;
  try {
    data = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    fail("{}: not JSON: {}", path, e.what());
  }
  if (!data.is_object() || !data.contains("sentences") || !data["sentences"].is_array())
    fail("{}: not an attention file (no \"sentences\" list; see transduce translate --attention)",
         path);
  return data;
}

nlohmann::json translate_sources(const AttentionFlags& f) {
  LoadedModel loaded(f.model_dir, compute_type_choice(f.compute_type));
  TranslateOptions options = f.options;
  options.attention = true;
  Translator translator(loaded.model(), loaded.tokenizer(), options);
  for (size_t i = 0; i < f.sources.size(); ++i) {
    size_t bad = 0;
    if (!valid_utf8(f.sources[i], &bad)) fail("--src {}: invalid UTF-8 at byte {}", i + 1, bad + 1);
  }
  const auto results = translator.translate(f.sources, 1, print_warning);
  nlohmann::json sentences = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    sentences.push_back(attention_file_sentence(static_cast<int64_t>(i) + 1, f.sources[i],
                                                results[i].front(), loaded.tokenizer()));
  }
  return {{"model", loaded.name()}, {"sentences", std::move(sentences)}};
}

void run_attention(const AttentionFlags& f) {
  if (f.from.empty() == f.model_dir.empty())
    fail("give either -m MODEL_DIR with --sentence TEXT, or --from FILE.json");
  if (!f.model_dir.empty() && f.sources.empty()) fail("-m needs at least one --sentence TEXT");
  const nlohmann::json data = f.from.empty() ? translate_sources(f) : read_attention_file(f.from);
  if (!f.json.empty()) io::write_file_atomically(f.json, data.dump() + "\n");
  io::write_file_atomically(f.html, attention_page(data));
}

}  // namespace

void register_attention(CLI::App& app) {
  auto f = std::make_shared<AttentionFlags>();
  CLI::App* cmd = app.add_subcommand(
      "attention", "show a translation's attention, every layer and head, as an HTML page");
  cmd->add_option("-m,--model", f->model_dir, "model directory");
  cmd->add_option("--sentence", f->sources, "a sentence to translate (may repeat)");
  add_compute_type(*cmd, f->compute_type);
  cmd->add_option("--from", f->from, "render this file of `transduce translate --attention`");
  cmd->add_option("-o,--output", f->html, "the HTML file to write (self-contained)")->required();
  cmd->add_option("--attention", f->json,
                  "also write the attention weights to this JSON file (as translate --attention)");
  add_option_flags(*cmd, search_option_specs(), f->options.search,
                   {"beam", "alpha", "max_len_a", "max_len_b"});
  cmd->callback([f] { run_attention(*f); });
}

}  // namespace transduce::cli
