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
#include "core/utf8.h"

namespace transduce {

namespace {

using Spec = TrainOptionSpec;
using Kind = TrainOptionSpec::Kind;
using namespace option;

template <typename T>
Ref<TrainOptions, T> adam_field(T AdamOptions::*member) {
  return [member](TrainOptions& o) -> T& { return o.adam.*member; };
}

std::optional<Precision> training_precision(std::string_view name) {
  if (name == "fp32") return Precision::FP32;
  if (name == "bf16") return Precision::BF16;
  return std::nullopt;
}

// The validation metrics: a non-empty list of their names.
Spec metrics(std::string key, std::string help) {
  Spec s = base<TrainOptions>(std::move(key), std::move(help), Kind::kChoices);
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

std::vector<Spec> make_specs() {
  return {
      number<TrainOptions>("batch_tokens", "tokens per batch and side, padding included",
                           field(&TrainOptions::batch_tokens), at_least(1)),
      number<TrainOptions>("accum", "batches accumulated per update", field(&TrainOptions::accum),
                           at_least(1)),
      number<TrainOptions>("seed", "seed for initialisation, batch order and dropout",
                           field(&TrainOptions::seed)),
      number<TrainOptions>("warmup", "warmup steps of equation 3", field(&TrainOptions::warmup),
                           at_least(1)),
      number<TrainOptions>("lr_scale", "factor on equation 3's learning rate",
                           field(&TrainOptions::lr_scale), at_least(0)),
      choice<TrainOptions>(
          "lr_schedule",
          "inverse-sqrt (equation 3) | linear | cosine: after equation 3's warmup, fall from "
          "its peak to 0 at the end of the run (the first of max_steps, max_epochs, "
          "max_minutes reached)",
          field(&TrainOptions::lr_schedule), {"inverse-sqrt", "linear", "cosine"}, lr_schedule_name,
          lr_schedule_from_name),
      number<TrainOptions>("adam_beta1", "Adam's beta1 (section 5.3)",
                           adam_field(&AdamOptions::beta1), from_below(0, 1)),
      number<TrainOptions>("adam_beta2", "Adam's beta2 (section 5.3)",
                           adam_field(&AdamOptions::beta2), from_below(0, 1)),
      number<TrainOptions>("adam_eps", "Adam's epsilon (section 5.3)",
                           adam_field(&AdamOptions::eps), above(0)),
      with_old_key(
          choice<TrainOptions>(
              "compute_type",
              "fp32 | bf16: the GEMMs' inputs (bf16: fp32 sums, weights, gradients and Adam; "
              "native with AVX512-BF16 or AMX, else widened to fp32); a run may be resumed in "
              "the other",
              field(&TrainOptions::precision), {"fp32", "bf16"}, precision_name,
              training_precision),
          "precision"),
      number<TrainOptions>("max_steps", "stop after this many updates, in all (0: no limit)",
                           field(&TrainOptions::max_steps), at_least(0)),
      number<TrainOptions>("max_epochs", "stop after this many epochs, in all (0: no limit)",
                           field(&TrainOptions::max_epochs), at_least(0)),
      number<TrainOptions>("max_minutes",
                           "stop after this much training time, in all (0: no limit)",
                           field(&TrainOptions::max_minutes), at_least(0)),
      number<TrainOptions>("log_every", "updates between log lines",
                           field(&TrainOptions::log_every), at_least(1)),
      number<TrainOptions>("valid_every", "updates between validations (0: only at the end)",
                           field(&TrainOptions::valid_every), at_least(0)),
      with_old_key(metrics("valid_metric",
                           "what validation measures: ppl, bleu, chrf (several allowed; the "
                           "first decides which weights MODEL_DIR/best/ keeps and what patience "
                           "counts)"),
                   "valid_metrics"),
      number<TrainOptions>("valid_beam", "beam size for validation translations (1: greedy)",
                           field(&TrainOptions::valid_beam), at_least(1)),
      number<TrainOptions>("valid_alpha", "length penalty for validation translations",
                           field(&TrainOptions::valid_alpha), within(0, 10)),
      number<TrainOptions>("patience",
                           "stop after this many validations without improvement (0: never)",
                           field(&TrainOptions::patience), at_least(0)),
      text<TrainOptions>("valid_output",
                         "write each validation's translations here ({step} becomes the update)",
                         &TrainOptions::valid_output),
      number<TrainOptions>(
          "ema_decay",
          "keep an exponential moving average of the weights with this decay (e.g. 0.9999; "
          "0: none): validated, kept as best, written to MODEL_DIR/ema/",
          field(&TrainOptions::ema_decay), from_below(0, 1)),
      number<TrainOptions>(
          "subword_sampling",
          "segment the training pairs anew every epoch by sampling: with a BPE vocabulary "
          "each merge is skipped with this probability (BPE-dropout, e.g. 0.1), with a "
          "unigram one it smooths the sampling (e.g. 0.2); validation and translation keep "
          "the vocabulary's own segmentation (0: off)",
          field(&TrainOptions::subword_sampling), from_below(0, 1)),
      number<TrainOptions>(
          "rdrop",
          "R-Drop: run every batch twice through different dropout masks and add this weight "
          "times the symmetric KL divergence between the two passes' output distributions to "
          "the loss (the Multi30k recipe uses 1; an update costs about twice the compute; 0: "
          "off)",
          field(&TrainOptions::rdrop), at_least(0)),
      number<TrainOptions>("save_every", "updates between checkpoints (0: by time)",
                           field(&TrainOptions::save_every), at_least(0)),
      number<TrainOptions>("save_every_minutes", "minutes between checkpoints",
                           field(&TrainOptions::save_every_minutes), at_least(0)),
      number<TrainOptions>("keep", "checkpoints to keep (0: all)", field(&TrainOptions::keep),
                           at_least(0)),
  };
}

}  // namespace

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
  return name_options(std::move(message), option_keys(train_option_specs()), name);
}

}  // namespace transduce
