// Validation by the metric (train/validation.h) and the moving average of the weights
// (train/ema.h) in the training loop: the best weights are kept on improvement only and
// atomically, patience stops at the right validation, BLEU is that of the greedy translations, and
// the average is the hand-computed one and resumes bitwise.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/error.h"
#include "decode/search.h"
#include "io/model_dir.h"
#include "io/safetensors.h"
#include "support/reverse_task.h"
#include "support/run_command.h"
#include "support/toy_corpus.h"
#include "text/special_ids.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::reversal_config;
using testing::reversal_options;
using testing::reverse_task;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Whether two safetensors files hold bitwise the same tensors under the same names.
bool same_tensors(const fs::path& a_path, const fs::path& b_path) {
  const io::SafetensorsFile a = io::load_safetensors(a_path.string());
  const io::SafetensorsFile b = io::load_safetensors(b_path.string());
  if (a.tensors.size() != b.tensors.size()) return false;
  for (const auto& [name, ta] : a.tensors) {
    const auto it = b.tensors.find(name);
    if (it == b.tensors.end() || it->second.shape() != ta.shape() ||
        std::memcmp(ta.raw(), it->second.raw(), ta.nbytes()) != 0)
      return false;
  }
  return true;
}

ValidText reversal_valid_text(const std::vector<Example>& valid) {
  ValidText text;
  for (const Example& e : valid) text.references.push_back(testing::reversal_text(e.tgt));
  text.detokenize = testing::reversal_text;
  return text;
}

TEST(BestValidation, CountsValidationsWithoutImprovement) {
  BestValidation ppl;  // lower is better
  EXPECT_TRUE(ppl.record(5.0, 100));
  EXPECT_FALSE(ppl.record(5.0, 200));  // equal is no improvement
  EXPECT_EQ(ppl.stale, 1);
  EXPECT_TRUE(ppl.record(4.0, 300));
  EXPECT_EQ(ppl.stale, 0);
  EXPECT_FALSE(ppl.record(4.5, 400));
  EXPECT_FALSE(ppl.record(4.1, 500));
  EXPECT_EQ(ppl.step, 300);
  EXPECT_EQ(*ppl.score, 4.0);
  EXPECT_EQ(ppl.stale, 2);
  EXPECT_TRUE(ppl.out_of_patience(2));
  EXPECT_FALSE(ppl.out_of_patience(3));
  EXPECT_FALSE(ppl.out_of_patience(0));  // no patience: never

  BestValidation bleu;
  bleu.metric = ValidMetric::kBleu;  // higher is better
  EXPECT_TRUE(bleu.record(10.0, 1));
  EXPECT_FALSE(bleu.record(9.0, 2));
  EXPECT_TRUE(bleu.record(11.0, 3));
  EXPECT_EQ(bleu.step, 3);
}

TEST(BestValidation, RoundTripsThroughJsonAndStartsAfreshForAnotherMetric) {
  BestValidation b;
  b.metric = ValidMetric::kChrf;
  b.record(50.25, 700);
  b.record(49.0, 800);
  const nlohmann::json j = best_to_json(b);
  const BestValidation back = best_from_json(j, ValidMetric::kChrf);
  EXPECT_EQ(*back.score, 50.25);
  EXPECT_EQ(back.step, 700);
  EXPECT_EQ(back.stale, 1);
  // Resumed with another deciding metric: nothing to compare with yet.
  const BestValidation other = best_from_json(j, ValidMetric::kBleu);
  EXPECT_FALSE(other.score.has_value());
  EXPECT_EQ(other.stale, 0);
  EXPECT_EQ(other.metric, ValidMetric::kBleu);

  nlohmann::json bad = j;
  bad["score"] = "high";
  EXPECT_THROW(best_from_json(bad, ValidMetric::kChrf), Error);
  bad = j;
  bad["metric"] = "meteor";
  EXPECT_THROW(best_from_json(bad, ValidMetric::kChrf), Error);
  bad = j;
  bad.erase("stale");
  EXPECT_THROW(best_from_json(bad, ValidMetric::kChrf), Error);
}

// The validation translations are the greedy search's, sentence by sentence: scored against those
// very sentences, BLEU and chrF are 100.
TEST(ValidationTranslation, TranslatesWithTheSearchAndScoresWithSacrebleusMetrics) {
  const std::vector<Example> train = reverse_task(400, 11), valid = reverse_task(60, 12);
  Transformer model(reversal_config());
  model.init_parameters(4);
  TrainOptions o = reversal_options();
  o.max_steps = 150;
  Trainer(model, train, nullptr, o).run(nullptr);

  // Each sentence alone, as a batch of one; kept when the model says something.
  std::vector<Example> said;
  ValidText text;
  text.detokenize = testing::reversal_text;
  SearchOptions greedy;
  greedy.beam = 1;
  for (const Example& e : valid) {
    Tensor src = Tensor::zeros({1, static_cast<int64_t>(e.src.size()) + 1}, DType::I32);
    std::copy(e.src.begin(), e.src.end(), src.i32());
    src.i32()[e.src.size()] = kEosId;
    const std::vector<Hypothesis> h = greedy_search(model, src, greedy);
    if (h[0].tokens.empty()) continue;
    said.push_back(e);
    text.references.push_back(testing::reversal_text(h[0].tokens));
  }
  ASSERT_GE(said.size(), valid.size() / 2) << "the model says nothing for most sentences";
  SingleProcess one;
  const ValidTranslations t = translate_validation(model, said, text, greedy, 64, one);
  EXPECT_EQ(t.hypotheses, text.references);
  EXPECT_DOUBLE_EQ(t.bleu, 100.0);
  EXPECT_DOUBLE_EQ(t.chrf, 100.0);

  // Against the true reversals the scores are what `transduce score` gives those translations
  // against those references (to its printed precision), below 100 for a model this young.
  ValidText truth = reversal_valid_text(said);
  const ValidTranslations u = translate_validation(model, said, truth, greedy, 64, one);
  EXPECT_EQ(u.hypotheses, t.hypotheses);
  testing::TempDir dir("transduce_valid_score");
  const std::string hyp = dir.path() + "/hyp.txt", ref = dir.path() + "/ref.txt";
  for (const auto& [path, lines] : {std::pair{hyp, u.hypotheses}, {ref, truth.references}}) {
    std::ofstream out(path);
    for (const std::string& line : lines) out << line << '\n';
  }
  const testing::CommandResult r =
      testing::run_transduce("score --json --width 6 --ref " + ref + " --hyp " + hyp, false);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json scored = nlohmann::json::parse(r.out);
  EXPECT_NEAR(u.bleu, scored.at("score").get<double>(), 1e-9);
  EXPECT_NEAR(u.chrf, scored.at("chrf").get<double>(), 1e-9);
  EXPECT_LT(u.bleu, 100.0);
  EXPECT_LT(u.chrf, 100.0);
}

TEST(ValidationTranslation, TheOutputFileKeepsTheValidationFilesLines) {
  testing::TempDir dir("transduce_valid_output");
  ValidText text;
  text.lines = {0, 2, 3};  // line 1 was skipped (empty or too long)
  text.file_lines = 5;
  const std::string path = dir.path() + "/valid.{step}.txt";
  write_valid_output(path, 1200, text, {"a", "b c", "d"});
  std::ifstream in(dir.path() + "/valid.1200.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "", "b c", "d", ""}));
}

class TrainerValidation : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"transduce_trainer_validation"};
  const std::string model_dir_ = tmp_.path() + "/model";
};

// With a learning rate of 0 the weights never change, so no validation after the first improves:
// patience 3 ends the run at the fourth validation, and the best is the first.
TEST_F(TrainerValidation, PatienceStopsAtTheRightValidation) {
  const std::vector<Example> train = reverse_task(200, 1), valid = reverse_task(30, 2);
  Transformer model(reversal_config());
  model.init_parameters(1);
  TrainOptions o = reversal_options();
  o.lr_scale = 0.0f;
  o.max_steps = 1000;
  o.valid_every = 10;
  o.patience = 3;
  o.out_dir = model_dir_;
  Trainer trainer(model, train, &valid, o);
  std::vector<TrainLog> valids;
  trainer.run([&](const TrainLog& l) {
    if (l.validation) valids.push_back(l);
  });
  EXPECT_EQ(trainer.step(), 40);
  ASSERT_EQ(valids.size(), 4u);
  EXPECT_TRUE(valids[0].best);
  for (size_t i = 1; i < valids.size(); ++i) {
    EXPECT_FALSE(valids[i].best) << i;
    EXPECT_EQ(valids[i].best_so_far.stale, static_cast<int64_t>(i));
  }
  EXPECT_EQ(read_json(fs::path(model_dir_) / "best" / "best.json")["step"], 10);
  EXPECT_TRUE(trainer.limits_reached());

  // Resumed, it stays stopped: patience is part of the checkpoint.
  Transformer resumed(reversal_config());
  Trainer again(resumed, train, &valid, o);
  again.restore(load_checkpoint(*latest_checkpoint(model_dir_), resumed, again.optimizer()));
  EXPECT_EQ(again.best().stale, 3);
  EXPECT_TRUE(again.limits_reached());
}

// MODEL_DIR/best/ changes at each validation that improves on all before it, and only then: its
// weights are bitwise those of the checkpoint of the best step.
void expect_best_follows_the_metric(const std::string& model_dir, ValidMetric metric) {
  const std::vector<Example> train = reverse_task(400, 3), valid = reverse_task(40, 4);
  Transformer model(reversal_config());
  model.init_parameters(2);
  TrainOptions o = reversal_options();
  o.lr_scale = 1.0f;
  o.max_steps = 200;
  o.valid_every = 20;
  o.save_every = 20;
  o.keep = 0;
  o.valid_metrics = {metric, ValidMetric::kPerplexity};
  o.out_dir = model_dir;
  Trainer trainer(model, train, &valid, o);
  trainer.set_valid_text(reversal_valid_text(valid));
  std::vector<TrainLog> valids;
  trainer.run([&](const TrainLog& l) {
    if (l.validation) valids.push_back(l);
  });
  ASSERT_EQ(valids.size(), 10u);
  const auto score = [&](const TrainLog& l) {
    return metric == ValidMetric::kBleu ? *l.bleu : l.perplexity;
  };
  size_t best = 0, improvements = 0;
  for (size_t i = 0; i < valids.size(); ++i) {
    const bool better =
        i == 0 || (metric == ValidMetric::kBleu ? score(valids[i]) > score(valids[best])
                                                : score(valids[i]) < score(valids[best]));
    EXPECT_EQ(valids[i].best, better) << "validation at step " << valids[i].step;
    if (better) {
      best = i;
      ++improvements;
    }
  }
  EXPECT_GE(improvements, 2u);
  const nlohmann::json info = read_json(fs::path(model_dir) / "best" / "best.json");
  EXPECT_EQ(info["step"], valids[best].step);
  EXPECT_EQ(info["metric"], valid_metric_name(metric));
  EXPECT_DOUBLE_EQ(info["score"].get<double>(), score(valids[best]));
  EXPECT_TRUE(
      same_tensors(fs::path(model_dir) / "best" / "model.safetensors",
                   fs::path(checkpoint_dir(model_dir, valids[best].step)) / "model.safetensors"));
  // A model directory of its own.
  EXPECT_EQ(io::read_model_config(model_dir + "/best").d_model, reversal_config().d_model);
}

TEST_F(TrainerValidation, TheBestByPerplexityIsKeptOnlyWhenItImproves) {
  expect_best_follows_the_metric(model_dir_, ValidMetric::kPerplexity);
}

TEST_F(TrainerValidation, TheBestByBleuIsKeptOnlyWhenItImproves) {
  expect_best_follows_the_metric(model_dir_, ValidMetric::kBleu);
}

// A save of best/ that fails before its rename leaves the previous best/ whole, and no temporary
// directory behind.
TEST_F(TrainerValidation, AFailedSaveLeavesThePreviousBestWhole) {
  const std::vector<Example> train = reverse_task(300, 5), valid = reverse_task(30, 6);
  Transformer model(reversal_config());
  model.init_parameters(3);
  TrainOptions o = reversal_options();
  o.lr_scale = 1.0f;
  o.max_steps = 60;
  o.valid_every = 20;
  o.save_every = 20;
  o.keep = 0;
  o.out_dir = model_dir_;
  Trainer trainer(model, train, &valid, o);
  int snapshots = 0;
  set_checkpoint_fault_hook([&](const char* point) {
    if (std::string(point) == "snapshot-before-rename" && ++snapshots == 2)
      throw std::runtime_error("injected fault");
  });
  std::vector<TrainLog> valids;
  EXPECT_THROW(trainer.run([&](const TrainLog& l) {
    if (l.validation) valids.push_back(l);
  }),
               std::runtime_error);
  set_checkpoint_fault_hook(nullptr);
  ASSERT_EQ(snapshots, 2) << "the second validation did not improve on the first";
  EXPECT_EQ(read_json(fs::path(model_dir_) / "best" / "best.json")["step"], 20);
  EXPECT_TRUE(same_tensors(fs::path(model_dir_) / "best" / "model.safetensors",
                           fs::path(checkpoint_dir(model_dir_, 20)) / "model.safetensors"));
  for (const fs::directory_entry& e : fs::directory_iterator(model_dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

// After each update t the average is d_t * average + (1 - d_t) * weights, d_t = min(decay,
// (1 + t) / (10 + t)), starting from the initial weights: computed here in double from the
// weights seen after every update.
TEST(WeightAverage, EqualsTheHandComputedAverage) {
  const std::vector<Example> train = reverse_task(200, 7);
  Transformer model(reversal_config());
  model.init_parameters(6);
  TrainOptions o = reversal_options();
  o.max_steps = 6;
  o.ema_decay = 0.3f;  // below (1 + t) / (10 + t) from update 3 on: both sides of the min
  std::vector<std::vector<double>> expected;
  for (const Param* p : model.parameters())
    expected.emplace_back(p->value.f32(), p->value.f32() + p->value.numel());
  Trainer trainer(model, train, nullptr, o);
  trainer.run(nullptr, [&](int64_t step) {
    const double d = std::min(0.3, (1.0 + static_cast<double>(step)) / (10.0 + step));
    EXPECT_FLOAT_EQ(trainer.average()->decay_at(step), static_cast<float>(d));
    for (size_t i = 0; i < model.parameters().size(); ++i) {
      const float* w = model.parameters()[i]->value.f32();
      for (size_t k = 0; k < expected[i].size(); ++k)
        expected[i][k] = d * expected[i][k] + (1 - d) * static_cast<double>(w[k]);
    }
  });
  ASSERT_EQ(trainer.step(), 6);
  double worst = 0, moved = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const Tensor& avg = trainer.average()->values()[i];
    const Tensor& w = model.parameters()[i]->value;
    for (size_t k = 0; k < expected[i].size(); ++k) {
      worst = std::max(worst, std::abs(static_cast<double>(avg.f32()[k]) - expected[i][k]));
      moved = std::max(moved, std::abs(static_cast<double>(w.f32()[k]) - expected[i][k]));
    }
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_GT(moved, 1e-4);  // the average is not the weights themselves
}

// 20 updates, a checkpoint, 20 more after a restore: the average is bitwise that of 40 straight
// updates, and validation measures the average, not the weights.
TEST(WeightAverage, ResumesBitwiseAndIsWhatValidationMeasures) {
  testing::TempDir tmp("transduce_ema_resume");
  const std::vector<Example> train = reverse_task(300, 3), valid = reverse_task(30, 9);
  ModelConfig c = reversal_config();
  c.dropout = 0.1f;
  TrainOptions o = reversal_options();
  o.batch_tokens = 120;
  o.ema_decay = 0.9f;

  Transformer straight(c);
  straight.init_parameters(5);
  o.max_steps = 40;
  Trainer whole(straight, train, &valid, o);
  whole.run(nullptr);

  Transformer first(c);
  first.init_parameters(5);
  o.out_dir = tmp.path() + "/model";
  o.max_steps = 20;
  Trainer(first, train, &valid, o).run(nullptr);
  EXPECT_TRUE(fs::exists(checkpoint_dir(o.out_dir, 20) + "/ema.safetensors"));
  EXPECT_TRUE(same_tensors(o.out_dir + "/ema/model.safetensors",
                           checkpoint_dir(o.out_dir, 20) + "/ema.safetensors"));

  Transformer resumed(c);
  o.max_steps = 40;
  Trainer trainer(resumed, train, &valid, o);
  const std::string latest = *latest_checkpoint(o.out_dir);
  trainer.restore(load_checkpoint(latest, resumed, trainer.optimizer()));
  EXPECT_TRUE(trainer.restore_average(latest));
  trainer.run(nullptr);
  ASSERT_EQ(trainer.step(), 40);
  for (size_t i = 0; i < straight.parameters().size(); ++i) {
    const Tensor& a = whole.average()->values()[i];
    const Tensor& b = trainer.average()->values()[i];
    EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes()))
        << straight.parameters()[i]->name << "'s average differs after resume";
  }

  // Validation with the average equals validation of a model holding the average's values.
  Transformer averaged(c);
  for (size_t i = 0; i < averaged.parameters().size(); ++i)
    averaged.parameters()[i]->value.copy_from(whole.average()->values()[i]);
  TrainOptions plain = o;
  plain.ema_decay = 0;
  plain.out_dir.clear();
  const double of_average = Trainer(averaged, train, &valid, plain).validate().perplexity;
  const double of_weights = Trainer(straight, train, &valid, plain).validate().perplexity;
  EXPECT_DOUBLE_EQ(whole.validate().perplexity, of_average);
  EXPECT_NE(of_average, of_weights);
}

}  // namespace
}  // namespace transduce
