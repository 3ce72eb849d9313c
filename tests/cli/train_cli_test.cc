// `transduce train` as a user runs it: vocabulary, a few updates, checkpoints, resume, stopping
// by signal and by the clock, and bad corpora refused with one line and a failing exit.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "core/child_process.h"
#include "io/safetensors.h"
#include "support/run_command.h"
#include "support/toy_corpus.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::run_transduce;
using namespace std::chrono_literals;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The checkpoints' state.json files, oldest first.
std::vector<nlohmann::json> checkpoint_states(const std::string& model) {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(model + "/checkpoints")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<nlohmann::json> states;
  for (const fs::path& d : dirs) states.push_back(read_json(d / "state.json"));
  return states;
}

class TrainCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_toy_corpus(dir_);
    const std::string failed = testing::make_toy_vocab(dir_);
    ASSERT_TRUE(failed.empty()) << failed;
  }

  std::string data_flags(const std::string& src = "train.src",
                         const std::string& tgt = "train.tgt") {
    return "--src " + dir_ + "/" + src + " --tgt " + dir_ + "/" + tgt;
  }
  static std::string model_flags() {
    return "--layers 1 --d-model 16 --d-ff 32 --heads 2 --batch-tokens 200 --warmup 10 "
           "--log-every 2";
  }
  testing::TempDir tmp_{"transduce_train_cli"};
  const std::string dir_ = tmp_.path();
};

TEST_F(TrainCommand, TrainsSavesAndResumes) {
  const std::string model = dir_ + "/model";
  CommandResult r =
      run_transduce("train " + data_flags() + " --valid-src " + dir_ + "/train.src --valid-tgt " +
                    dir_ + "/train.tgt --vocab " + dir_ + "/vocab --output " + model + " " +
                    model_flags() + " --max-steps 4 --save-every 2 --valid-every 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("step 4 | epoch 1 | loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("valid step 2 | loss "), std::string::npos) << r.out;
  for (const char* f :
       {"config.json", "spm.model", "model.safetensors",
        "checkpoints/step-00000002/optimizer.safetensors", "checkpoints/step-00000004/state.json"})
    EXPECT_TRUE(fs::exists(model + "/" + f)) << f;

  // A second `train --out` into the same directory is refused; `--resume` goes on.
  r = run_transduce("train " + data_flags() + " --vocab " + dir_ + "/vocab --output " + model +
                    " --max-steps 6");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  r = run_transduce("train --resume " + model + " " + data_flags() + " --max-steps 6");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("at step 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 6 | epoch"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(model + "/checkpoints/step-00000006/model.safetensors"));

  // Resuming it again at the same limit says there is nothing to do and leaves the log as it is.
  const auto log_text = [&] {
    std::ifstream in(model + "/train_log.jsonl");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = log_text();
  r = run_transduce("train --resume " + model + " " + data_flags() + " --valid-src " + dir_ +
                    "/train.src --valid-tgt " + dir_ + "/train.tgt --max-steps 6");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("at its limits already (step 6): nothing to train"), std::string::npos)
      << r.out;
  EXPECT_EQ(log_text(), before);
}

// --compute-type bf16 trains with bf16 GEMMs and says so in the log; checkpoints are fp32
// either way, so the run resumes in fp32 (which a later resume keeps) and in bf16 again.
TEST_F(TrainCommand, Bf16TrainsAndResumesInEitherPrecision) {
  const std::string model = dir_ + "/model";
  const std::string resume = "train --resume " + model + " " + data_flags();
  CommandResult r =
      run_transduce("train " + data_flags() + " --vocab " + dir_ + "/vocab --output " + model +
                    " " + model_flags() + " --compute-type bf16 --max-steps 4 --save-every 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("; GEMMs bf16 ("), std::string::npos) << r.out;
  EXPECT_EQ(checkpoint_states(model).back()["options"]["compute_type"], "bf16");
  const struct {
    const char* flag;
    int steps;
    const char* says;
  } stages[] = {{" --compute-type fp32", 6, "; GEMMs fp32 (OpenBLAS "},
                {"", 8, "; GEMMs fp32 (OpenBLAS "},  // the saved precision
                {" --compute-type bf16", 10, "; GEMMs bf16 ("}};
  for (const auto& stage : stages) {
    r = run_transduce(resume + stage.flag + " --max-steps " + std::to_string(stage.steps));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("at step " + std::to_string(stage.steps - 2)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(stage.says), std::string::npos) << stage.flag << "\n" << r.out;
    EXPECT_NE(r.out.find("saved " + model + " (step " + std::to_string(stage.steps) + ")"),
              std::string::npos)
        << r.out;
  }
}

// Where oneDNN finds no bf16 dot products (ONEDNN_MAX_CPU_ISA=AVX2 lowers what it may use, as a
// CPU without AVX512-BF16 would), --compute-type bf16 still trains, on the same bf16 products
// widened to fp32 for OpenBLAS, and says so in the log. An unknown precision is refused by the
// option.
//
// The numbers are compared on the first update's gradient over a fixed batch (Adam's first moment
// after one update is 0.1 times it; the checkpoint holds it), not on a loss after an update: Adam's
// first step moves every weight by about the learning rate times the sign of its gradient, so a
// gradient near 0 that rounding tips the other way moves its weight by a whole step, whatever the
// rounding was. Runs: fp32, and fp32 on OpenBLAS's Sandybridge kernels (other sums, in another
// order); bf16 on the kernels this CPU runs, on the widened fallback, and on the fallback with
// the Sandybridge kernels (the same bf16 products, summed in another order, on every CPU).
// - bf16 rounds every GEMM operand to 8 significant bits (u16 = 2^-8); fp32's own summation order
//   moves sums by u32 = 2^-24 times a few terms' size. So each bf16 gradient is at least 100 times
//   further from fp32's than fp32's other order is (measured: 5e4 times on a Zen 3).
// - Each bf16 gradient is within bf16's bound of fp32's: 10 u16 for all gradients together, as the
//   whole model's bf16 test (tests/model/bf16_model_test.cc) holds.
// - Two bf16 runs that differ in the order of their sums alone agree only as well as that, not to
//   fp32's order noise: where the two sums of an activation (or of its gradient) fall on either
//   side of a bf16 rounding boundary, the next GEMM reads two neighbouring bf16 numbers, a step as
//   large as bf16's rounding. Measured on a Zen 3, the fallback on Haswell and on Sandybridge
//   kernels differ by 0.35 times what bf16 and fp32 do (0.37 on a Sapphire Rapids, its AMX kernels
//   against the fallback). That the two paths multiply the same products is checked where it can
//   be, one GEMM at a time (tests/ops/gemm_bf16_test.cc, within (k + 2) u32 of the exact sums).
TEST_F(TrainCommand, Bf16WithoutBf16InstructionsTrainsOnWidenedProducts) {
  const std::string model = dir_ + "/model";
  const std::string avx2 = "ONEDNN_MAX_CPU_ISA=AVX2 ";
  CommandResult r = testing::run_shell(avx2 + TRANSDUCE_BINARY + " train " + data_flags() +
                                       " --vocab " + dir_ + "/vocab --output " + model + " " +
                                       model_flags() + " --compute-type bf16 --max-steps 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("; GEMMs bf16 (widened to fp32 for OpenBLAS "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("saved " + model + " (step 2)"), std::string::npos) << r.out;

  struct Run {
    std::string name, env, precision;
    std::vector<double> gradient;  // every parameter's, in name order
  };
  const std::string sandybridge = "OPENBLAS_CORETYPE=Sandybridge ";
  std::vector<Run> runs = {{"fp32", "", "fp32", {}},
                           {"fp32, Sandybridge kernels", sandybridge, "fp32", {}},
                           {"bf16, this CPU's kernels", "", "bf16", {}},
                           {"bf16, widened", avx2, "bf16", {}},
                           {"bf16, widened, Sandybridge kernels", avx2 + sandybridge, "bf16", {}}};
  for (Run& run : runs) {
    const std::string out = dir_ + "/first-update";
    fs::remove_all(out);
    // A real layer's sizes, one batch of the whole corpus, no dropout: one fixed batch.
    r = testing::run_shell(run.env + TRANSDUCE_BINARY + " --threads 2 train " + data_flags() +
                           " --vocab " + dir_ + "/vocab --output " + out +
                           " --layers 2 --d-model 128 --d-ff 256 --heads 4 --dropout 0"
                           " --batch-tokens 4000 --warmup 10 --max-steps 1 --compute-type " +
                           run.precision);
    ASSERT_EQ(r.status, 0) << run.name << "\n" << r.out;
    std::smatch gemms;
    ASSERT_TRUE(std::regex_search(r.out, gemms, std::regex("GEMMs [^\n]*"))) << r.out;
    std::cout << run.name << ": " << gemms[0] << std::endl;  // the kernels each side ran
    const io::SafetensorsFile optimizer =
        io::load_safetensors(out + "/checkpoints/step-00000001/optimizer.safetensors");
    for (const auto& [name, moment] : optimizer.tensors)
      if (name.starts_with("m."))
        for (int64_t i = 0; i < moment.numel(); ++i) run.gradient.push_back(moment.f32()[i] * 10.0);
  }
  auto distance = [](const Run& a, const Run& b) {
    double sum = 0;
    for (size_t i = 0; i < a.gradient.size(); ++i)
      sum += (a.gradient[i] - b.gradient[i]) * (a.gradient[i] - b.gradient[i]);
    return std::sqrt(sum);
  };
  const Run& fp32 = runs[0];
  Run zero = fp32;
  std::fill(zero.gradient.begin(), zero.gradient.end(), 0.0);
  const double norm = distance(fp32, zero), fp32_order = distance(fp32, runs[1]);
  constexpr double kU16 = 1.0 / 256;
  ASSERT_GT(norm, 0.0);
  for (size_t i = 2; i < runs.size(); ++i) {
    ASSERT_EQ(runs[i].gradient.size(), fp32.gradient.size());
    const double from_fp32 = distance(runs[i], fp32);
    EXPECT_GT(from_fp32, 100 * fp32_order)
        << runs[i].name << ": no further from fp32 than fp32's other order (" << fp32_order
        << "): did bf16 run?";
    EXPECT_LT(from_fp32, 10 * kU16 * norm) << runs[i].name << " (gradient norm " << norm << ")";
    std::cout << runs[i].name << ": " << from_fp32 / norm << " of the gradient from fp32's (fp32's "
              << "other order: " << fp32_order / norm << ")" << std::endl;
  }

  r = run_transduce("train " + data_flags() + " --vocab " + dir_ + "/vocab --output " + model +
                    " --compute-type fp16 --max-steps 2");
  testing::expect_one_line_error(r, "--compute-type must be \"fp32\" or \"bf16\", got \"fp16\"");
}

// Ctrl-C (SIGINT) or SIGTERM during training: the update in flight finishes, a checkpoint of it
// is saved, and the exit status is 0.
TEST_F(TrainCommand, ASignalFinishesTheUpdateAndSaves) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(strsignal(sig));
    const std::string model = dir_ + "/model-" + std::to_string(sig);
    ChildProcess train({TRANSDUCE_BINARY,
                        "--threads",
                        "1",
                        "train",
                        "--src",
                        dir_ + "/train.src",
                        "--tgt",
                        dir_ + "/train.tgt",
                        "--vocab",
                        dir_ + "/vocab",
                        "--output",
                        model,
                        "--layers",
                        "1",
                        "--d-model",
                        "16",
                        "--d-ff",
                        "32",
                        "--heads",
                        "2",
                        "--batch-tokens",
                        "200",
                        "--warmup",
                        "10",
                        "--log-every",
                        "1",
                        "--max-steps",
                        "1000000",
                        "--save-every-minutes",
                        "0"});
    ASSERT_TRUE(train.wait_for_output("step 3 |", 120s)) << train.output();
    train.signal(sig);
    ASSERT_EQ(train.wait(), 0) << train.output();
    std::smatch m;
    const std::string out = train.output();
    ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(saved \S+ \(step (\d+)\))"))) << out;
    const int64_t saved = std::stoll(m[1]);
    EXPECT_GE(saved, 3);
    EXPECT_LT(saved, 1000000);
    const std::vector<nlohmann::json> states = checkpoint_states(model);
    ASSERT_EQ(states.size(), 1u) << "only the final checkpoint (no time-based saves)";
    EXPECT_EQ(states.back()["step"], saved);
    // The saved weights are the last update's: the model file says the same step.
    CommandResult r = run_transduce("train --resume " + model + " " + data_flags() +
                                    " --max-steps " + std::to_string(saved + 1));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("at step " + std::to_string(saved)), std::string::npos) << r.out;
  }
}

// --max-minutes stops by the training clock and --save-every-minutes saves by it.
TEST_F(TrainCommand, MaxMinutesStopsAndSaveEveryMinutesSaves) {
  const std::string model = dir_ + "/model";
  // 3 seconds of training, a checkpoint every 0.6 seconds, and no step limit.
  CommandResult r = run_transduce("--threads 1 train " + data_flags() + " --vocab " + dir_ +
                                  "/vocab --output " + model + " " + model_flags() +
                                  " --max-minutes 0.05 --save-every-minutes 0.01 --keep 100");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<nlohmann::json> states = checkpoint_states(model);
  ASSERT_GE(states.size(), 3u) << r.out;
  const double last = states.back()["elapsed_seconds"];
  EXPECT_GE(last, 3.0);
  EXPECT_LT(last, 3.0 + 30.0) << "stopped long after the limit";
  // Saved by the clock: consecutive checkpoints at least 0.6 s of training apart, the final one
  // (at the stop) aside, and many updates in each interval.
  for (size_t i = 1; i + 1 < states.size(); ++i) {
    EXPECT_GE(
        states[i]["elapsed_seconds"].get<double>() - states[i - 1]["elapsed_seconds"].get<double>(),
        0.6)
        << i;
    EXPECT_GT(states[i]["step"].get<int64_t>(), states[i - 1]["step"].get<int64_t>()) << i;
  }
  EXPECT_GE(states.front()["elapsed_seconds"].get<double>(), 0.6);
}

TEST_F(TrainCommand, BadCorporaGetOneLineAndAFailingExit) {
  {
    std::ofstream(dir_ + "/short.tgt") << "ONE\nTWO\n";
    std::ofstream(dir_ + "/bad.tgt") << "RED DOG\n\xff\xfe BROKEN\n";
    std::ofstream(dir_ + "/two.src") << "red dog\nthe cat\n";
  }
  const std::string common = " --vocab " + dir_ + "/vocab " + model_flags() + " --max-steps 2";
  CommandResult r = run_transduce("train " + data_flags("train.src", "short.tgt") + " --output " +
                                  dir_ + "/m1" + common);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("train.src has 300 lines but " + dir_ + "/short.tgt has 2"),
            std::string::npos)
      << r.out;
  r = run_transduce("train " + data_flags("two.src", "bad.tgt") + " --output " + dir_ + "/m2" +
                    common);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("bad.tgt:2: invalid UTF-8"), std::string::npos) << r.out;
  r = run_transduce("train " + data_flags("missing.src", "train.tgt") + " --output " + dir_ +
                    "/m3" + common);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("missing.src"), std::string::npos) << r.out;
  r = run_transduce("train " + data_flags() + " --output " + dir_ + "/m4 --vocab " + dir_ +
                    "/vocab " + model_flags());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--max-steps"), std::string::npos) << r.out;
}

// Validation by BLEU: the translations go to --valid-output with the validation files' lines
// (a skipped pair stays an empty line), the logged BLEU is `transduce score`'s of them, best/ and
// ema/ are model directories that translate, and best/ reproduces its step's translations.
TEST_F(TrainCommand, ValidatesByBleuKeepsTheBestAndTheAverage) {
  std::vector<std::string> src, tgt;
  {
    std::ifstream s(dir_ + "/train.src"), t(dir_ + "/train.tgt");
    for (std::string a, b; src.size() < 40 && std::getline(s, a) && std::getline(t, b);) {
      src.push_back(a);
      tgt.push_back(b);
    }
    src[2] = "";  // skipped as empty
    std::ofstream vs(dir_ + "/valid.src"), vt(dir_ + "/valid.tgt"), ks(dir_ + "/kept.tgt");
    for (size_t i = 0; i < src.size(); ++i) {
      vs << src[i] << "\n";
      vt << tgt[i] << "\n";
      if (i != 2) ks << tgt[i] << "\n";
    }
  }
  const std::string model = dir_ + "/model";
  CommandResult r = run_transduce(
      "train " + data_flags() + " --valid-src " + dir_ + "/valid.src --valid-tgt " + dir_ +
      "/valid.tgt --vocab " + dir_ + "/vocab --output " + model + " " + model_flags() +
      " --max-steps 12 --valid-every 4 --save-every 4 --valid-metric bleu chrf --ema-decay 0.99 "
      "--attention-window 3 "
      "--valid-output " +
      dir_ + "/out.{step}");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("| BLEU "), std::string::npos) << r.out;

  std::vector<nlohmann::json> valids;
  {
    std::ifstream in(model + "/train_log.jsonl");
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      if (j["kind"] == "valid") valids.push_back(j);
    }
  }
  ASSERT_EQ(valids.size(), 3u);
  for (const nlohmann::json& v : valids) {
    const std::string out = dir_ + "/out." + std::to_string(v["step"].get<int>());
    std::vector<std::string> lines;
    {
      std::ifstream in(out);
      for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), src.size()) << out;
    EXPECT_EQ(lines[2], "");
    {
      std::ofstream kept(out + ".kept");
      for (size_t i = 0; i < lines.size(); ++i)
        if (i != 2) kept << lines[i] << "\n";
    }
    r = run_transduce("score --json --ref " + dir_ + "/kept.tgt --hyp " + out + ".kept");
    ASSERT_EQ(r.status, 0) << r.out;
    const nlohmann::json score = nlohmann::json::parse(r.out);
    EXPECT_NEAR(score["score"].get<double>(), v["bleu"].get<double>(), 1e-9) << out;
    EXPECT_NEAR(score["chrf"].get<double>(), v["chrf"].get<double>(), 1e-9) << out;
  }

  EXPECT_EQ(read_json(fs::path(model) / "config.json")["attention_window"], 3);
  const nlohmann::json best = read_json(fs::path(model) / "best" / "best.json");
  EXPECT_EQ(best["metric"], "bleu");
  EXPECT_EQ(best["weights"], "ema");
  const int best_step = best["step"].get<int>();
  for (const nlohmann::json& v : valids)
    if (v["best"].get<bool>()) {
      EXPECT_LE(v["step"].get<int>(), best_step);
    }
  // The best weights translate as they did in their validation (greedy, like --valid-beam 1).
  r = testing::run_transduce_apart("translate -m " + model + "/best --beam 1 --input " + dir_ +
                                   "/valid.src");
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream at_best(dir_ + "/out." + std::to_string(best_step));
  std::string expected((std::istreambuf_iterator<char>(at_best)), std::istreambuf_iterator<char>());
  EXPECT_EQ(r.out, expected);
  r = run_transduce("translate -m " + model + "/ema --beam 1 --input " + dir_ + "/valid.src");
  EXPECT_EQ(r.status, 0) << r.out;
}

// --subword-sampling trains on sampled segmentations, says so, and is saved with the options, so
// a resumed run samples too; out of range or with --trees it is one line.
TEST_F(TrainCommand, SubwordSamplingTrainsAndResumesWithIt) {
  const std::string model = dir_ + "/model";
  CommandResult r =
      run_transduce("train " + data_flags() + " --vocab " + dir_ + "/vocab --output " + model +
                    " " + model_flags() + " --max-steps 4 --save-every 2 --subword-sampling 0.1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("subword sampling: each epoch segments the training pairs anew (alpha 0.1)"),
            std::string::npos)
      << r.out;
  const std::vector<nlohmann::json> states = checkpoint_states(model);
  ASSERT_FALSE(states.empty());
  EXPECT_FLOAT_EQ(states.back().at("options").at("subword_sampling").get<float>(), 0.1f);
  r = run_transduce("train --resume " + model + " " + data_flags() + " --max-steps 6");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("subword sampling: each epoch"), std::string::npos) << r.out;

  const std::string base = "train " + data_flags() + " --vocab " + dir_ + "/vocab " +
                           model_flags() + " --max-steps 2 --output " + dir_ + "/m";
  testing::expect_one_line_error(run_transduce(base + " --subword-sampling 1"),
                                 "--subword-sampling");
  testing::expect_one_line_error(run_transduce(base + " --subword-sampling -0.5"),
                                 "--subword-sampling");
  testing::expect_one_line_error(
      run_transduce("train --trees " + dir_ + "/t.mrg --vocab " + dir_ + "/vocab --output " + dir_ +
                    "/m --max-steps 2 --subword-sampling 0.1"),
      "does not apply to --trees");
  EXPECT_FALSE(fs::exists(dir_ + "/m")) << "a refused run made its model directory";
}

// R-Drop (the default dropout 0.1 makes the passes differ): the log lines and train_log.jsonl
// report the passes' divergence, the weight is saved with the options and kept on resume.
TEST_F(TrainCommand, RDropLogsTheDivergenceAndResumesWithIt) {
  const std::string model = dir_ + "/model";
  CommandResult r =
      run_transduce("train " + data_flags() + " --vocab " + dir_ + "/vocab --output " + model +
                    " " + model_flags() + " --max-steps 4 --save-every 2 --rdrop 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" | kl "), std::string::npos) << r.out;
  const std::vector<nlohmann::json> states = checkpoint_states(model);
  ASSERT_FALSE(states.empty());
  EXPECT_FLOAT_EQ(states.back().at("options").at("rdrop").get<float>(), 2.0f);
  std::ifstream log(model + "/train_log.jsonl");
  int train_lines = 0;
  for (std::string line; std::getline(log, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.at("kind") != "train") continue;
    ++train_lines;
    EXPECT_GT(j.at("consistency").get<double>(), 0.0) << line;
  }
  EXPECT_EQ(train_lines, 2);
  r = run_transduce("train --resume " + model + " " + data_flags() + " --max-steps 6");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("step 6 | epoch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" | kl "), std::string::npos) << r.out;

  const std::string base = "train " + data_flags() + " --vocab " + dir_ + "/vocab " +
                           model_flags() + " --max-steps 2 --output " + dir_ + "/m";
  testing::expect_one_line_error(run_transduce(base + " --rdrop -1"), "--rdrop");
  EXPECT_FALSE(fs::exists(dir_ + "/m")) << "a refused run made its model directory";
}

TEST_F(TrainCommand, BadValidationSettingsGetOneLine) {
  const std::string base = "train " + data_flags() + " --vocab " + dir_ + "/vocab " +
                           model_flags() + " --max-steps 2 --output " + dir_ + "/m";
  testing::expect_one_line_error(run_transduce(base + " --valid-metric meteor"), "--valid-metric");
  testing::expect_one_line_error(run_transduce(base + " --ema-decay 1"), "--ema-decay");
  testing::expect_one_line_error(run_transduce(base + " --valid-beam 0"), "--valid-beam");
  testing::expect_one_line_error(run_transduce(base + " --patience -1"), "--patience");
  EXPECT_FALSE(fs::exists(dir_ + "/m")) << "a refused run made its model directory";
  testing::expect_one_line_error(run_transduce("train " + data_flags() + " --vocab " + dir_ +
                                               "/no-vocab --max-steps 2 --output " + dir_ + "/m"),
                                 "no-vocab: no spm.model");
  testing::expect_one_line_error(
      run_transduce("train --trees " + dir_ + "/t.mrg --valid-trees " + dir_ + "/v.mrg --vocab " +
                    dir_ + "/vocab --output " + dir_ +
                    "/p --max-steps 2 "
                    "--valid-metric bleu"),
      "--valid-src");
}

}  // namespace
}  // namespace transduce
