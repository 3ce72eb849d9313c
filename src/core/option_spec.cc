#include "core/option_spec.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "core/option_names.h"
#include "core/utf8.h"

namespace transduce {

namespace {

std::string number_text(double v) {
  return fmt::format("{}", v);
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

std::string OptionInfo::flag() const {
  return flag_of_key(key);
}

std::optional<std::string> OptionInfo::range_problem(double v) const {
  if (kind != Kind::kInteger && kind != Kind::kReal) return std::nullopt;
  const bool low = min && (min_open ? !(v > *min) : !(v >= *min));
  const bool high = max && (max_open ? !(v < *max) : !(v <= *max));
  if (!std::isfinite(v) || low || high) return "must be " + range_text();
  return std::nullopt;
}

std::string OptionInfo::range_text() const {
  if (min && max && !min_open && !max_open)
    return fmt::format("between {} and {}", number_text(*min), number_text(*max));
  std::string lower, upper;
  if (min) lower = fmt::format("{} {}", min_open ? "above" : "at least", number_text(*min));
  if (max) upper = fmt::format("{} {}", max_open ? "below" : "at most", number_text(*max));
  if (!min && !max) return kind == Kind::kReal ? "a finite number" : "";
  if (!max) return lower;
  if (!min) return upper;
  return lower + " and " + upper;
}

std::string name_options(std::string message, const std::vector<std::string>& keys,
                         const std::function<std::string(std::string_view key)>& name) {
  for (const std::string& key : keys) {
    const std::string named = name(key);
    for (size_t at = message.find(key); at != std::string::npos;
         at = message.find(key, at + named.size())) {
      const size_t end = at + key.size();
      if ((at > 0 && (word_char(message[at - 1]) || message[at - 1] == '-')) ||
          (end < message.size() && word_char(message[end])))
        continue;
      message.replace(at, key.size(), named);
    }
  }
  return message;
}

namespace option {

std::string shown(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string quoted_list(const std::vector<std::string>& names, std::string_view last) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? fmt::format(" {} ", last) : ", ";
    out += fmt::format("\"{}\"", names[i]);
  }
  return out;
}

void expect_text(const nlohmann::json& v) {
  if (!v.is_string()) fail("must be a string, got {}", shown(v));
  // Written into saved JSON: JSON strings are UTF-8.
  if (!valid_utf8(v.get_ref<const std::string&>())) fail("must be UTF-8 text, got {}", shown(v));
}

}  // namespace option

}  // namespace transduce
