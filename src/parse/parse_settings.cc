#include "parse/parse_settings.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_number.h"
#include "io/atomic_file.h"
#include "io/model_dir.h"
#include "parse/tree_vocab.h"

namespace transduce::parse {

namespace {

// 0.3f as 0.3 rather than 0.30000001192092896.
double rounded(float x) {
  return std::round(static_cast<double>(x) * 1e6) / 1e6;
}

// An int setting (see core/json_number.h).
int int_setting(const nlohmann::json& d, const char* key, int fallback, const std::string& path) {
  const auto it = d.find(key);
  if (it == d.end()) return fallback;
  if (!it->is_number()) fail("{}: \"{}\" must be an integer, not a {}", path, key, it->type_name());
  if (const std::optional<int> v = json_number<int>(*it)) return *v;
  fail("{}: \"{}\" must be an integer that fits in 32 bits, got {}", path, key, it->dump());
}

}  // namespace

void write_parse_settings(const std::string& model_dir, const ParseSettings& s) {
  nlohmann::json j = {
      {"task", "parse"},
      {"scheme", s.scheme},
      {"decoding",
       {{"beam", s.beam},
        {"alpha", rounded(s.alpha)},
        {"max_len_a", rounded(s.max_len_a)},
        {"max_len_b", s.max_len_b},
        {"constrained", s.constrained},
        {"max_opens", s.max_opens},
        {"bracket_bonus", rounded(s.bracket_bonus)}}},
  };
  if (s.tag_lexicon) j["tag_lexicon"] = tag_lexicon_json(*s.tag_lexicon);
  io::write_file_atomically(io::model_file(model_dir, io::kParseSettingsFile), j.dump(2) + "\n");
}

std::optional<ParseSettings> read_parse_settings(const std::string& model_dir) {
  const std::string path = io::model_file(model_dir, io::kParseSettingsFile);
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    fail("{}: cannot read", path);
  }
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail("{}: not a JSON object", path);
  ParseSettings s;
  try {
    if (j.value("task", "") != "parse") fail("{}: \"task\" is not \"parse\"", path);
    s.scheme = j.value("scheme", s.scheme);
    const nlohmann::json d = j.value("decoding", nlohmann::json::object());
    s.beam = int_setting(d, "beam", s.beam, path);
    s.alpha = d.value("alpha", s.alpha);
    s.max_len_a = d.value("max_len_a", s.max_len_a);
    s.max_len_b = int_setting(d, "max_len_b", s.max_len_b, path);
    s.constrained = d.value("constrained", s.constrained);
    s.max_opens = int_setting(d, "max_opens", s.max_opens, path);
    s.bracket_bonus = d.value("bracket_bonus", s.bracket_bonus);
    if (const auto it = j.find("tag_lexicon"); it != j.end())
      s.tag_lexicon = std::make_shared<TagLexicon>(tag_lexicon_from_json(*it, path));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: a value of the wrong type ({})", path, e.what());
  }
  if (!scheme_from_name(s.scheme))
    fail("{}: unknown tree scheme '{}' (this transduce knows {})", path, s.scheme,
         scheme_names_quoted());
  if (s.beam < 1) fail("{}: beam {} is not positive", path, s.beam);
  // A negative exponent would reward length without bound and void the search's early stop.
  if (!(s.alpha >= 0 && s.alpha <= 10)) fail("{}: alpha {} is not between 0 and 10", path, s.alpha);
  if (!(s.bracket_bonus >= -10 && s.bracket_bonus <= 10))
    fail("{}: bracket_bonus {} is not between -10 and 10", path, s.bracket_bonus);
  return s;
}

}  // namespace transduce::parse
