#include "train/train_options.h"

#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/json_number.h"
#include "core/option_names.h"
#include "core/shortest_float.h"
#include "text/utf8.h"

namespace transduce {

namespace {

using Spec = TrainOptionSpec;
using Kind = TrainOptionSpec::Kind;

// Where an option lives in TrainOptions (a field, or one of Adam's).
template <typename T>
using Ref = std::function<T&(TrainOptions&)>;

template <typename T>
Ref<T> field(T TrainOptions::*member) {
  return [member](TrainOptions& o) -> T& { return o.*member; };
}

template <typename T>
Ref<T> adam_field(T AdamOptions::*member) {
  return [member](TrainOptions& o) -> T& { return o.adam.*member; };
}

// A value as a message quotes it (bytes that are not UTF-8 shown as U+FFFD, not thrown on).
std::string shown(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

template <typename T>
T& at(const Ref<T>& ref, const TrainOptions& o) {
  return ref(const_cast<TrainOptions&>(o));  // read only: get() takes const options
}

struct Range {
  std::optional<double> min, max;
  bool min_open = false, max_open = false;
};
Range at_least(double v) {
  return {v, std::nullopt};
}
Range above(double v) {
  return {v, std::nullopt, true};
}
Range from_below(double lo, double hi) {
  return {lo, hi, false, true};
}  // [lo, hi)
Range within(double lo, double hi) {
  return {lo, hi};
}

Spec base(std::string key, std::string help, Kind kind, const Range& range = {}) {
  Spec s;
  s.key = std::move(key);
  s.help = std::move(help);
  s.kind = kind;
  s.min = range.min;
  s.max = range.max;
  s.min_open = range.min_open;
  s.max_open = range.max_open;
  return s;
}

// An integer or real option: JSON numbers of T's type within the range.
template <typename T>
Spec number(std::string key, std::string help, Ref<T> ref, const Range& range = {}) {
  Spec s = base(std::move(key), std::move(help),
                std::is_floating_point_v<T> ? Kind::kReal : Kind::kInteger, range);
  s.get = [ref](const TrainOptions& o) {
    const T x = at(ref, o);
    if constexpr (std::is_same_v<T, float>) return nlohmann::json(shortest_float(x));
    return nlohmann::json(x);
  };
  s.set = [ref, s](const nlohmann::json& v, TrainOptions& o) {
    if (!v.is_number()) fail("must be a number, not {}", v.type_name());
    const std::optional<T> x = json_number<T>(v);
    if (!x)
      fail("must be an integer within [{}, {}], got {}", std::numeric_limits<T>::min(),
           std::numeric_limits<T>::max(), shown(v));
    if (const std::optional<std::string> problem = s.range_problem(static_cast<double>(*x)))
      fail("{}, got {}", *problem, shown(v));
    ref(o) = *x;
  };
  return s;
}

Spec text(std::string key, std::string help, Ref<std::string> ref) {
  Spec s = base(std::move(key), std::move(help), Kind::kText);
  s.get = [ref](const TrainOptions& o) { return nlohmann::json(at(ref, o)); };
  s.set = [ref](const nlohmann::json& v, TrainOptions& o) {
    if (!v.is_string()) fail("must be a string, got {}", shown(v));
    // Written into state.json with the options: JSON strings are UTF-8.
    if (!valid_utf8(v.get_ref<const std::string&>())) fail("must be UTF-8 text, got {}", shown(v));
    ref(o) = v.get<std::string>();
  };
  return s;
}

// "\"a\", \"b\" or \"c\"" (joined by `last`).
std::string quoted_list(const std::vector<std::string>& names, std::string_view last) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? fmt::format(" {} ", last) : ", ";
    out += fmt::format("\"{}\"", names[i]);
  }
  return out;
}

// One of `names`: E written by to_name, read by from_name.
template <typename E, typename ToName, typename FromName>
Spec choice(std::string key, std::string help, Ref<E> ref, std::vector<std::string> names,
            ToName to_name, FromName from_name) {
  Spec s = base(std::move(key), std::move(help), Kind::kChoice);
  s.choices = names;
  s.get = [ref, to_name](const TrainOptions& o) {
    return nlohmann::json(std::string(to_name(at(ref, o))));
  };
  s.set = [ref, names, from_name](const nlohmann::json& v, TrainOptions& o) {
    const std::optional<E> e = v.is_string() ? from_name(v.get<std::string>()) : std::optional<E>{};
    if (!e) fail("must be {}, got {}", quoted_list(names, "or"), shown(v));
    ref(o) = *e;
  };
  return s;
}

std::optional<Precision> training_precision(std::string_view name) {
  if (name == "fp32") return Precision::FP32;
  if (name == "bf16") return Precision::BF16;
  return std::nullopt;
}

// The validation metrics: a non-empty list of their names.
Spec metrics(std::string key, std::string help) {
  Spec s = base(std::move(key), std::move(help), Kind::kChoices);
  s.choices = {"ppl", "bleu", "chrf"};
  s.get = [](const TrainOptions& o) {
    nlohmann::json names = nlohmann::json::array();
    for (ValidMetric m : o.valid_metrics) names.push_back(std::string(valid_metric_name(m)));
    return names;
  };
  s.set = [choices = s.choices](const nlohmann::json& v, TrainOptions& o) {
    std::vector<ValidMetric> metrics;
    for (const nlohmann::json& m : v.is_array() ? v : nlohmann::json::array()) {
      const auto metric =
          m.is_string() ? valid_metric_from_name(m.get<std::string>()) : std::nullopt;
      if (!metric) break;
      metrics.push_back(*metric);
    }
    if (metrics.empty() || metrics.size() != v.size())
      fail("must be a list of {}, got {}", quoted_list(choices, "and"), shown(v));
    o.valid_metrics = std::move(metrics);
  };
  return s;
}

Spec with_old_key(Spec s, std::string old_key) {
  s.old_key = std::move(old_key);
  return s;
}

std::vector<Spec> make_specs() {
  return {
      number("batch_tokens", "tokens per batch and side, padding included",
             field(&TrainOptions::batch_tokens), at_least(1)),
      number("accum", "batches accumulated per update", field(&TrainOptions::accum), at_least(1)),
      number("seed", "seed for initialisation, batch order and dropout",
             field(&TrainOptions::seed)),
      number("warmup", "warmup steps of equation 3", field(&TrainOptions::warmup), at_least(1)),
      number("lr_scale", "factor on equation 3's learning rate", field(&TrainOptions::lr_scale),
             at_least(0)),
      choice("lr_schedule",
             "inverse-sqrt (equation 3) | linear | cosine: after equation 3's warmup, fall from "
             "its peak to 0 at the end of the run (the first of max_steps, max_epochs, "
             "max_minutes reached)",
             field(&TrainOptions::lr_schedule), {"inverse-sqrt", "linear", "cosine"},
             lr_schedule_name, lr_schedule_from_name),
      number("adam_beta1", "Adam's beta1 (section 5.3)", adam_field(&AdamOptions::beta1),
             from_below(0, 1)),
      number("adam_beta2", "Adam's beta2 (section 5.3)", adam_field(&AdamOptions::beta2),
             from_below(0, 1)),
      number("adam_eps", "Adam's epsilon (section 5.3)", adam_field(&AdamOptions::eps), above(0)),
      with_old_key(
          choice("compute_type",
                 "fp32 | bf16: the GEMMs' inputs (bf16: fp32 sums, weights, gradients and Adam; "
                 "native with AVX512-BF16 or AMX, else widened to fp32); a run may be resumed in "
                 "the other",
                 field(&TrainOptions::precision), {"fp32", "bf16"}, precision_name,
                 training_precision),
          "precision"),
      number("max_steps", "stop after this many updates, in all (0: no limit)",
             field(&TrainOptions::max_steps), at_least(0)),
      number("max_epochs", "stop after this many epochs, in all (0: no limit)",
             field(&TrainOptions::max_epochs), at_least(0)),
      number("max_minutes", "stop after this much training time, in all (0: no limit)",
             field(&TrainOptions::max_minutes), at_least(0)),
      number("log_every", "updates between log lines", field(&TrainOptions::log_every),
             at_least(1)),
      number("valid_every", "updates between validations (0: only at the end)",
             field(&TrainOptions::valid_every), at_least(0)),
      with_old_key(metrics("valid_metric",
                           "what validation measures: ppl, bleu, chrf (several allowed; the "
                           "first decides which weights MODEL_DIR/best/ keeps and what patience "
                           "counts)"),
                   "valid_metrics"),
      number("valid_beam", "beam size for validation translations (1: greedy)",
             field(&TrainOptions::valid_beam), at_least(1)),
      number("valid_alpha", "length penalty for validation translations",
             field(&TrainOptions::valid_alpha), within(0, 10)),
      number("patience", "stop after this many validations without improvement (0: never)",
             field(&TrainOptions::patience), at_least(0)),
      text("valid_output", "write each validation's translations here ({step} becomes the update)",
           field(&TrainOptions::valid_output)),
      number("ema_decay",
             "keep an exponential moving average of the weights with this decay (e.g. 0.9999; "
             "0: none): validated, kept as best, written to MODEL_DIR/ema/",
             field(&TrainOptions::ema_decay), from_below(0, 1)),
      number("subword_sampling",
             "segment the training pairs anew every epoch by sampling: with a BPE vocabulary "
             "each merge is skipped with this probability (BPE-dropout, e.g. 0.1), with a "
             "unigram one it smooths the sampling (e.g. 0.2); validation and translation keep "
             "the vocabulary's own segmentation (0: off)",
             field(&TrainOptions::subword_sampling), from_below(0, 1)),
      number("rdrop",
             "R-Drop: run every batch twice through different dropout masks and add this weight "
             "times the symmetric KL divergence between the two passes' output distributions to "
             "the loss (the Multi30k recipe uses 1; an update costs about twice the compute; 0: "
             "off)",
             field(&TrainOptions::rdrop), at_least(0)),
      number("save_every", "updates between checkpoints (0: by time)",
             field(&TrainOptions::save_every), at_least(0)),
      number("save_every_minutes", "minutes between checkpoints",
             field(&TrainOptions::save_every_minutes), at_least(0)),
      number("keep", "checkpoints to keep (0: all)", field(&TrainOptions::keep), at_least(0)),
  };
}

std::string number_text(double v) {
  return fmt::format("{}", v);
}

}  // namespace

std::string TrainOptionSpec::flag() const {
  return flag_of_key(key);
}

std::optional<std::string> TrainOptionSpec::range_problem(double v) const {
  if (kind != Kind::kInteger && kind != Kind::kReal) return std::nullopt;
  const bool low = min && (min_open ? !(v > *min) : !(v >= *min));
  const bool high = max && (max_open ? !(v < *max) : !(v <= *max));
  if (!std::isfinite(v) || low || high) return "must be " + range_text();
  return std::nullopt;
}

std::string TrainOptionSpec::range_text() const {
  std::string lower, upper;
  if (min) lower = fmt::format("{} {}", min_open ? "above" : "at least", number_text(*min));
  if (max) upper = fmt::format("{} {}", max_open ? "below" : "at most", number_text(*max));
  if (!min && !max) return kind == Kind::kReal ? "a finite number" : "";
  if (!max) return lower;
  if (!min) return upper;
  return lower + " and " + upper;
}

const std::vector<TrainOptionSpec>& train_option_specs() {
  static const std::vector<TrainOptionSpec> specs = make_specs();
  return specs;
}

const TrainOptionSpec* find_train_option(std::string_view key) {
  for (const TrainOptionSpec& s : train_option_specs())
    if (s.key == key) return &s;
  return nullptr;
}

void to_json(nlohmann::json& j, const TrainOptions& o) {
  j = nlohmann::json::object();
  for (const TrainOptionSpec& s : train_option_specs()) j[s.key] = s.get(o);
}

void update_from_json(const nlohmann::json& j, TrainOptions& o) {
  if (!j.is_object())
    fail("the saved training options should be a JSON object, not {}", j.type_name());
  for (const TrainOptionSpec& s : train_option_specs()) {
    auto it = j.find(s.key);
    if (it == j.end() && !s.old_key.empty()) it = j.find(s.old_key);
    if (it == j.end()) continue;
    try {
      s.set(*it, o);
    } catch (const Error& e) {
      fail("the saved training options: {} {}", s.key, e.what());
    }
  }
}

void check_train_options(const TrainOptions& o) {
  for (const TrainOptionSpec& s : train_option_specs()) {
    const nlohmann::json v = s.get(o);
    if (!v.is_number()) continue;
    if (const std::optional<std::string> problem = s.range_problem(v.get<double>()))
      fail("{} {}, got {}", s.key, *problem, v.dump());
  }
  if (o.max_steps <= 0 && o.max_epochs <= 0 && o.max_minutes <= 0)
    fail("training needs a limit: max_steps, max_epochs or max_minutes");
  if (o.valid_metrics.empty()) fail("valid_metric needs at least one metric");
}

std::string name_train_options(std::string message,
                               const std::function<std::string(std::string_view key)>& name) {
  const auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (const TrainOptionSpec& spec : train_option_specs()) {
    const std::string named = name(spec.key);
    for (size_t at = message.find(spec.key); at != std::string::npos;
         at = message.find(spec.key, at + named.size())) {
      const size_t end = at + spec.key.size();
      if ((at > 0 && (word_char(message[at - 1]) || message[at - 1] == '-')) ||
          (end < message.size() && word_char(message[end])))
        continue;
      message.replace(at, spec.key.size(), named);
    }
  }
  return message;
}

}  // namespace transduce
