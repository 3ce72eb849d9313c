// recipes/multi30k/run end to end in its tiny setting, on synthetic text laid out as the Multi30k
// release: every stage must leave its output and the report must parse and agree with the
// hypotheses it names. Nothing is asserted about translation quality (docs/recipes/multi30k.md
// measures that on the real data).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ops/ops.h"
#include "support/run_command.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;
using transduce::testing::run_shell;

std::string recipe() {
  return std::string(TRANSDUCE_SOURCE_DIR) + "/recipes/multi30k/run";
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool some_line_contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class Multi30kRecipe : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transduce_recipe_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    data_ = dir_ / "data";
    fs::create_directories(data_);
    // "German" is English with each word's letters reversed and capitalised: a learnable mapping
    // with an alphabet the vocabulary must cover on both sides.
    const std::vector<std::string> words = {
        "a",    "man",  "woman", "dog",  "runs",   "on",   "the",  "grass", "child", "plays",
        "with", "ball", "red",   "blue", "street", "sits", "near", "water", "two",   "people"};
    std::mt19937 rng(7);
    auto write_split = [&](const std::string& split, int lines) {
      std::ofstream en(data_ / (split + ".en")), de(data_ / (split + ".de"));
      for (int i = 0; i < lines; ++i) {
        const int n = 3 + static_cast<int>(rng() % 8);
        std::string e, d;
        for (int k = 0; k < n; ++k) {
          const std::string& w = words[rng() % words.size()];
          std::string r(w.rbegin(), w.rend());
          r[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(r[0])));
          e += (k ? " " : "") + w;
          d += (k ? " " : "") + r;
        }
        en << e << ".\n";
        de << d << ".\n";
      }
    };
    write_split("train", 320);
    write_split("val", 50);
    write_split("test_2016_flickr", 40);
    write_split("test_2017_flickr", 40);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string command(const std::string& extra, bool with_data = true,
                      const std::string& profile = "--tiny") const {
    return "python3 " + recipe() + " " + profile + " --threads 1 --transduce " + TRANSDUCE_BINARY +
           (with_data ? " --data " + data_.string() : std::string()) + " " + extra;
  }

  fs::path dir_, data_;
};

TEST_F(Multi30kRecipe, TinySettingRunsEveryStageAndWritesAReport) {
  const fs::path out = dir_ / "run";
  const auto r = run_shell(command("--output " + out.string()));
  ASSERT_EQ(r.status, 0) << r.out;

  // Stage outputs.
  EXPECT_TRUE(fs::is_regular_file(out / "vocab" / "spm.model"));
  EXPECT_TRUE(fs::is_regular_file(out / "model" / "config.json"));
  EXPECT_TRUE(fs::is_regular_file(out / "model" / "model.safetensors"));
  EXPECT_TRUE(fs::is_regular_file(out / "model-averaged" / "model.safetensors"));
  int checkpoints = 0;
  for (const auto& e : fs::directory_iterator(out / "model" / "checkpoints"))
    checkpoints += e.is_directory();
  EXPECT_EQ(checkpoints, 2);  // --keep = the number averaged

  // The JSON-lines training log: every line parses; training and validation records; the last
  // training record is the last step.
  const std::vector<std::string> log = read_lines(out / "model" / "train_log.jsonl");
  ASSERT_FALSE(log.empty());
  int train_records = 0, valid_records = 0;
  int64_t last_step = 0;
  for (const std::string& line : log) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["kind"] == "train") {
      ++train_records;
      last_step = j["step"].get<int64_t>();
      EXPECT_GT(j["tokens_per_second"].get<double>(), 0.0);
    } else {
      EXPECT_EQ(j["kind"], "valid");
      ++valid_records;
      EXPECT_GT(j["ppl"].get<double>(), 1.0);
      EXPECT_TRUE(j.contains("bleu")) << line;  // the recipe validates by BLEU
    }
  }
  EXPECT_EQ(train_records, 6);  // 30 steps, a line every 5
  EXPECT_EQ(valid_records, 3);  // every 10 steps
  EXPECT_EQ(last_step, 30);

  // The report.
  const nlohmann::json results = read_json(out / "results.json");
  EXPECT_EQ(results["pair"], "en-de");
  EXPECT_EQ(results["profile"], "tiny");
  EXPECT_EQ(results["training"]["steps"], 30);
  // One process makes each update of the profile's two length-sorted batches of half its tokens.
  EXPECT_NE(r.out.find("batches of 300 tokens x 2 accumulated;"), std::string::npos) << r.out;
  EXPECT_EQ(results["training"]["batch_tokens"], 600);
  EXPECT_EQ(results["training"]["batch_parts"], 2);
  // bf16 by default where oneDNN finds bf16 dot products (the recipe reads the CPU's flags).
  EXPECT_EQ(results["training"]["precision"], ops::bf16_support().available ? "bf16" : "fp32");
  EXPECT_EQ(results["model"]["layers"], 1);
  for (const char* stage : {"vocab", "train", "average", "tune", "translate", "score"})
    EXPECT_TRUE(results["stage_seconds"].contains(stage)) << stage;
  const nlohmann::json& grid = results["decoding"]["grid"];
  ASSERT_GE(grid.size(), 3u);
  bool chosen_in_grid = false;
  double best = -1;
  for (const auto& g : grid) {
    chosen_in_grid |= g == results["decoding"]["chosen"];
    if (g["weights"] == results["decoding"]["chosen"]["weights"])
      best = std::max(best, g["val_bleu"].get<double>());
  }
  EXPECT_TRUE(chosen_in_grid);
  // The best-validated weights are among the candidates.
  EXPECT_TRUE(
      std::any_of(grid.begin(), grid.end(), [](const auto& g) { return g["weights"] == "best"; }));
  EXPECT_EQ(results["decoding"]["chosen"]["val_bleu"].get<double>(), best);

  for (const char* test : {"test_2016_flickr", "test_2017_flickr"}) {
    SCOPED_TRACE(test);
    const nlohmann::json& t = results["tests"][test];
    const fs::path hyp = out / t["hypotheses"].get<std::string>();
    ASSERT_TRUE(fs::is_regular_file(hyp));
    EXPECT_EQ(read_lines(hyp).size(), 30u);  // the tiny profile's first 30 lines
    // The reported scores are those `transduce score` gives the hypotheses it names.
    const fs::path ref = out / "data" / (std::string(test) + ".de");
    std::vector<std::string> first = read_lines(data_ / (std::string(test) + ".de"));
    first.resize(30);
    EXPECT_EQ(read_lines(ref), first);
    for (const bool lower : {false, true}) {
      const auto s =
          run_shell(std::string(TRANSDUCE_BINARY) + " score --json --width 4 --ref " +
                        ref.string() + " --hyp " + hyp.string() + (lower ? " --lowercase" : ""),
                    /*merge_stderr=*/false);
      ASSERT_EQ(s.status, 0);
      const nlohmann::json j = nlohmann::json::parse(s.out);
      EXPECT_DOUBLE_EQ(t[lower ? "bleu_lowercase" : "bleu"].get<double>(),
                       j["score"].get<double>());
      EXPECT_DOUBLE_EQ(t[lower ? "chrf_lowercase" : "chrf"].get<double>(), j["chrf"].get<double>());
    }
  }

  const std::vector<std::string> md = read_lines(out / "results.md");
  ASSERT_FALSE(md.empty());
  EXPECT_EQ(md[0], "# Multi30k en-de (tiny recipe)");
  bool table_row = false;
  for (const std::string& line : md) table_row |= line.rfind("| test_2016_flickr | ", 0) == 0;
  EXPECT_TRUE(table_row);
  EXPECT_TRUE(some_line_contains(md, "batches of 600 tokens a side in 2 length-sorted parts"));

  std::ifstream svg_in(out / "training.svg");
  const std::string svg((std::istreambuf_iterator<char>(svg_in)), {});
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1))
    ++polylines;
  EXPECT_EQ(polylines, 3u);  // training loss, validation perplexity and BLEU
  EXPECT_NE(svg.find("</svg>"), std::string::npos);

  // --decode-only redoes averaging, tuning and the tests with the trained model, untouched.
  const auto again = run_shell(command("--decode-only --output " + out.string()));
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(again.out.find(" train "), std::string::npos) << again.out;
  EXPECT_EQ(read_lines(out / "model" / "train_log.jsonl"), log);
  const nlohmann::json redone = read_json(out / "results.json");
  EXPECT_TRUE(redone["decode_only"].get<bool>());
  EXPECT_FALSE(redone["stage_seconds"].contains("train"));
  EXPECT_EQ(redone["tests"], results["tests"]);  // the same model and settings: the same output
}

#if TRANSDUCE_WITH_MPI
TEST_F(Multi30kRecipe, TrainsOnTwoRanks) {
  ASSERT_EQ(run_shell("command -v mpirun").status, 0) << "no mpirun: install openmpi-bin";
  const fs::path out = dir_ / "run";
  // Leak checking off for this run's processes in the sanitizer build: Open MPI's plugins leak
  // (see tests/dist/data_parallel_cli_test.cc); the other recipe tests keep it on.
  const auto r = run_shell("env ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 " +
                           command("--ranks 2 --output " + out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  // 2 ranks with half the profile's 600 tokens each, 30 updates, and the recipe went on to decode.
  EXPECT_NE(r.out.find("batches of 300 tokens x 1 accumulated x 2 ranks"), std::string::npos)
      << r.out;
  const std::vector<std::string> log = read_lines(out / "model" / "train_log.jsonl");
  ASSERT_FALSE(log.empty());
  const nlohmann::json last_train = nlohmann::json::parse(log[log.size() - 2]);
  EXPECT_EQ(last_train["step"], 30) << log[log.size() - 2];
  EXPECT_GT(last_train.value("sync_share", 0.0), 0.0);
  // The report states the global batch, not each rank's, and the ranks; so does --decode-only
  // without --ranks (the tiny profile's default is one process), from the checkpoints.
  for (const bool decode_only : {false, true}) {
    SCOPED_TRACE(decode_only ? "--decode-only" : "trained");
    if (decode_only) {
      const auto again = run_shell(command("--decode-only --output " + out.string()));
      ASSERT_EQ(again.status, 0) << again.out;
    }
    const nlohmann::json t = read_json(out / "results.json")["training"];
    EXPECT_EQ(t["batch_tokens"], 600);
    EXPECT_EQ(t["batch_parts"], 2);  // one batch a rank
    EXPECT_EQ(t["ranks"], 2);
    EXPECT_TRUE(some_line_contains(read_lines(out / "results.md"), ", 2 data-parallel MPI ranks"));
  }
}
#endif

// --precision bf16 trains with bf16 GEMMs and the report says so; --steps sets the updates in
// place of the profile's limit.
TEST_F(Multi30kRecipe, TrainsInBf16ForAGivenNumberOfSteps) {
  const fs::path out = dir_ / "run";
  const auto r = run_shell(command("--compute-type bf16 --steps 12 --output " + out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("; GEMMs bf16 ("), std::string::npos) << r.out;
  std::ifstream in(out / "results.json");
  const nlohmann::json results = nlohmann::json::parse(in);
  EXPECT_EQ(results["training"]["precision"], "bf16");
  EXPECT_EQ(results["training"]["steps"], 12);
  EXPECT_EQ(results["training"]["steps_limit"], 12);
  const std::vector<std::string> md = read_lines(out / "results.md");
  EXPECT_TRUE(some_line_contains(md, "; GEMMs in bf16"));
}

// --rdrop reaches `transduce train` (the log reports the divergence), --vocab the vocabulary,
// --label-smoothing the model and --batch-parts the accumulation, and the report states the
// settings the run trained with, also when --decode-only reports it with other flags or none.
TEST_F(Multi30kRecipe, RDropWeightAndTheTrainedSettingsReachTheReport) {
  const fs::path out = dir_ / "run";
  const auto r = run_shell(
      command("--rdrop 0.5 --lr-scale 0.7 --ema-decay 0.99 --lr-schedule cosine --steps 10 "
              "--vocab-size 150 --label-smoothing 0.2 --dropout 0.25 --batch-parts 3 --output " +
              out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("batches of 200 tokens x 3 accumulated;"), std::string::npos) << r.out;
  const std::vector<std::string> log = read_lines(out / "model" / "train_log.jsonl");
  const auto trained = nlohmann::json::parse(log.front());
  ASSERT_EQ(trained["kind"], "train");
  EXPECT_TRUE(trained.contains("consistency")) << log.front();
  const auto expect_trained_settings = [&](const char* when) {
    SCOPED_TRACE(when);
    const nlohmann::json t = read_json(out / "results.json")["training"];
    EXPECT_EQ(t["rdrop"], 0.5);
    EXPECT_EQ(t["lr_scale"], 0.7);  // saved as a float, reported as given
    EXPECT_EQ(t["ema_decay"], 0.99);
    EXPECT_EQ(t["lr_schedule"], "cosine");
    EXPECT_EQ(t["steps_limit"], 10);
    EXPECT_EQ(t["batch_tokens"], 600);  // the tiny profile's
    EXPECT_EQ(t["batch_parts"], 3);
    const nlohmann::json results = read_json(out / "results.json");
    EXPECT_EQ(results["vocab"]["size"], 150);  // not the tiny profile's 300
    EXPECT_EQ(results["model"]["vocab_size"], 150);
    EXPECT_FLOAT_EQ(results["model"]["label_smoothing"].get<float>(), 0.2f);
    EXPECT_FLOAT_EQ(results["model"]["dropout"].get<float>(), 0.25f);
    const std::vector<std::string> md = read_lines(out / "results.md");
    EXPECT_TRUE(some_line_contains(md,
                                   "learning-rate scale 0.7 on equation 3, then a cosine "
                                   "fall to 0; GEMMs in "));
    EXPECT_TRUE(some_line_contains(md, "; R-Drop, weight 0.5"));
    EXPECT_TRUE(some_line_contains(md, "moving average of the weights, decay 0.99"));
  };
  expect_trained_settings("trained");

  const auto again = run_shell(command("--decode-only --output " + out.string()));
  ASSERT_EQ(again.status, 0) << again.out;
  expect_trained_settings("--decode-only");
  const auto other = run_shell(command(
      "--decode-only --lr-scale 2 --rdrop 0 --lr-schedule linear --batch-parts 1 --output " +
      out.string()));
  ASSERT_EQ(other.status, 0) << other.out;
  expect_trained_settings("--decode-only with other flags");
  // The vocabulary is the trained model's: --decode-only refuses another.
  const auto vocab = run_shell(command("--decode-only --vocab-size 100 --output " + out.string()));
  EXPECT_NE(vocab.status, 0);
  EXPECT_NE(vocab.out.find("--vocab-size goes without --decode-only"), std::string::npos)
      << vocab.out;
  const auto parts = run_shell(command("--batch-parts 0 --output " + (dir_ / "x").string()));
  EXPECT_NE(parts.status, 0);
  EXPECT_NE(parts.out.find("--batch-parts must be at least 1, got 0"), std::string::npos)
      << parts.out;
}

// The quick profile trains bf16 on 4,000-token updates at scale 1.5 and fp32 (which makes a
// quarter of the updates in its minutes) on 2,000-token ones; --lr-scale still overrides.
TEST_F(Multi30kRecipe, QuickSettingTakesItsFp32ValuesForFp32) {
  const auto run = [&](const std::string& flags, const std::string& name) {
    const fs::path out = dir_ / name;
    const auto r = run_shell(
        command(flags + " --steps 2 --vocab-size 150 --output " + out.string(), true, "--quick"));
    EXPECT_EQ(r.status, 0) << r.out;
    return std::make_pair(r.out, read_json(out / "results.json")["training"]);
  };
  const auto [bf16_out, bf16] = run("--compute-type bf16", "bf16");
  EXPECT_EQ(bf16["batch_tokens"], 4000);
  EXPECT_EQ(bf16["lr_scale"], 1.5);
  EXPECT_NE(bf16_out.find("batches of 1000 tokens x 4 accumulated;"), std::string::npos)
      << bf16_out;
  // Two runs, not three (each decodes with a 4+4-layer model, slow under the sanitizers): the
  // fp32 one with --lr-scale, which must win over the fp32 values' 1.0.
  const auto [fp32_out, fp32] = run("--compute-type fp32 --lr-scale 0.8", "fp32");
  EXPECT_EQ(fp32["batch_tokens"], 2000);
  EXPECT_EQ(fp32["lr_scale"], 0.8);
  EXPECT_NE(fp32_out.find("batches of 500 tokens x 4 accumulated;"), std::string::npos) << fp32_out;
}

// --reverse-model: val scores the n-best reranked with each weight of a de-en model's score, where
// weight 0 is exactly translate's 1-best at the same beam and alpha; with --rerank-weight the
// tests are reranked with it (here from --rerank-beam 3's n-best of up to 3 a line, wider than the
// tiny profile's beam 2), each line the hypothesis of its n-best that maximises the beam's
// score plus the weight times the reverse log-probability per piece (recomputed here; the choice
// itself against hand-computed values is tests/recipes/common/test_rerank.py's).
TEST_F(Multi30kRecipe, RerankingWithAReverseModel) {
  const fs::path rev = dir_ / "rev", out = dir_ / "run";
  const auto trained = run_shell(command("--pair de-en --output " + rev.string()));
  ASSERT_EQ(trained.status, 0) << trained.out;
  const std::string reverse = " --reverse-model " + (rev / "model").string();
  const auto r = run_shell(command("--output " + out.string() + reverse));
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json results = read_json(out / "results.json");
  const nlohmann::json rr = results["decoding"]["reranking"];
  ASSERT_TRUE(rr.is_object()) << results["decoding"].dump();
  ASSERT_EQ(rr["grid"].size(), 8u);
  EXPECT_EQ(rr["grid"][0]["weight"], 0.0);
  const std::string model =
      (out / results["members"]["translated_with"][0].get<std::string>()).string();
  const fs::path plain = dir_ / "val.plain";
  const auto translated =
      run_shell(std::string(TRANSDUCE_BINARY) + " --threads 1 translate -m " + model + " --input " +
                (out / "data" / "val.en").string() + " --output " + plain.string() + " --beam " +
                std::to_string(rr["beam"].get<int>()) + " --alpha " + rr["alpha"].dump());
  ASSERT_EQ(translated.status, 0) << translated.out;
  const std::vector<std::string> weight0 = read_lines(out / "tuning" / "val.rerank0.de"),
                                 one_best = read_lines(plain);
  ASSERT_EQ(weight0.size(), one_best.size());
  for (size_t i = 0; i < one_best.size(); ++i)
    EXPECT_EQ(weight0[i], one_best[i]) << "line " << i + 1;

  const auto again = run_shell(command(
      "--decode-only --rerank-weight 0.5 --rerank-beam 3 --output " + out.string() + reverse));
  ASSERT_EQ(again.status, 0) << again.out;
  results = read_json(out / "results.json");
  EXPECT_EQ(results["decoding"]["reranking"]["weight"], 0.5);
  EXPECT_EQ(results["decoding"]["reranking"]["beam"], 3);
  EXPECT_TRUE(
      some_line_contains(read_lines(out / "results.md"), "reranked with the given weight 0.5"));
  for (const std::string test : {"test_2016_flickr", "test_2017_flickr"}) {
    SCOPED_TRACE(test);
    const std::vector<std::string> nbest = read_lines(out / (test + ".de.nbest"));
    const std::vector<std::string> scores = read_lines(out / (test + ".de.nbest.reverse.jsonl"));
    const std::vector<std::string> hyps = read_lines(out / (test + ".de.hyp"));
    ASSERT_EQ(nbest.size(), scores.size());
    std::vector<std::string> expected(hyps.size());
    std::vector<double> top(hyps.size(), -1e300);
    std::vector<int> listed(hyps.size(), 0);
    for (size_t i = 0; i < nbest.size(); ++i) {
      const size_t a = nbest[i].find(" ||| "), b = nbest[i].rfind(" ||| ");
      ASSERT_TRUE(a != std::string::npos && b > a) << nbest[i];
      const size_t line = std::stoul(nbest[i].substr(0, a));
      ASSERT_LT(line, hyps.size());
      ++listed[line];
      const auto s = nlohmann::json::parse(scores[i]);
      const double combined = std::stod(nbest[i].substr(b + 5)) +
                              0.5 * s["log_prob"].get<double>() / s["pieces"].size();
      if (combined > top[line]) {
        top[line] = combined;
        expected[line] = nbest[i].substr(a + 5, b - a - 5);
      }
    }
    EXPECT_EQ(hyps, expected);
    EXPECT_EQ(*std::max_element(listed.begin(), listed.end()), 3);  // --rerank-beam 3's n-best
  }

  const std::map<std::string, std::string> refused = {
      {"--rerank-beam 1" + reverse, "--rerank-beam needs --reverse-model and must be 2 or more"},
      {"--rerank-beam 3", "--rerank-beam needs --reverse-model and must be 2 or more"},
      {"--rerank-weight -1" + reverse,
       "--rerank-weight needs --reverse-model and must be 0 or more"},
      {"--rerank-weight 0.5", "--rerank-weight needs --reverse-model and must be 0 or more"}};
  for (const auto& [flags, line] : refused) {
    const auto bad = run_shell(command("--decode-only " + flags + " --output " + out.string()));
    EXPECT_EQ(bad.status, 1) << flags;
    EXPECT_EQ(bad.out, "recipes/multi30k: " + line + "\n") << flags;
  }
}

// --hold-out keeps train's last pairs out of training, and --back-translate adds their target
// side with sources the reverse model samples: what `transduce translate --sampling` draws for
// them with the run's seed. The data given is left as it was.
TEST_F(Multi30kRecipe, BackTranslationJoinsTraining) {
  const fs::path rev = dir_ / "rev", out = dir_ / "bt";
  const auto reverse = run_shell(command("--pair de-en --hold-out 100 --output " + rev.string()));
  ASSERT_EQ(reverse.status, 0) << reverse.out;
  EXPECT_EQ(read_lines(rev / "data" / "train.de").size(), 200u);  // of the tiny profile's 300
  const auto r = run_shell(command("--hold-out 100 --seed 3 --back-translate " +
                                   (rev / "model").string() + " --output " + out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> en = read_lines(data_ / "train.en"),
                                 de = read_lines(data_ / "train.de");
  ASSERT_EQ(en.size(), 320u);  // untouched
  const std::vector<std::string> train_en = read_lines(out / "data" / "train.en"),
                                 train_de = read_lines(out / "data" / "train.de");
  ASSERT_EQ(train_en.size(), 300u);
  ASSERT_EQ(train_de.size(), 300u);
  EXPECT_TRUE(std::equal(en.begin(), en.begin() + 200, train_en.begin()));
  EXPECT_TRUE(std::equal(de.begin(), de.begin() + 300, train_de.begin()));  // held-out German too

  const fs::path sampled = dir_ / "sampled.en";
  const auto drawn =
      run_shell(std::string(TRANSDUCE_BINARY) + " --threads 1 translate -m " +
                (rev / "model").string() + " --input " + (out / "data" / "heldout.de").string() +
                " --output " + sampled.string() + " --sampling topk:10 --seed 3 --beam 1");
  ASSERT_EQ(drawn.status, 0) << drawn.out;
  const std::vector<std::string> synthetic = read_lines(sampled);
  ASSERT_EQ(synthetic.size(), 100u);
  EXPECT_TRUE(std::equal(synthetic.begin(), synthetic.end(), train_en.begin() + 200));
  const nlohmann::json results = read_json(out / "results.json");
  EXPECT_EQ(results["hold_out"], 100);
  EXPECT_EQ(results["back_translation"]["pairs"], 100);
  EXPECT_EQ(results["back_translation"]["sampling"], "topk:10");
  EXPECT_TRUE(some_line_contains(read_lines(out / "results.md"), "100 back-translated pairs"));

  const std::map<std::string, std::string> refused = {
      {"--back-translate " + (rev / "model").string(),
       "--back-translate needs monolingual text: give --monolingual FILE or --hold-out N"},
      {"--monolingual " + (data_ / "val.de").string(),
       "--monolingual is the text --back-translate translates: give --back-translate too"},
      {"--back-translate " + dir_.string(),
       "--back-translate " + dir_.string() + ": not a model directory (no config.json)"},
      {"--hold-out 300", "--hold-out 300: train has 300 pairs; hold out between 1 and 299"}};
  for (const auto& [flags, line] : refused) {
    const auto bad = run_shell(command(flags + " --force --output " + (dir_ / "bad").string()));
    EXPECT_EQ(bad.status, 1) << flags;
    EXPECT_EQ(bad.out, "recipes/multi30k: " + line + "\n") << flags;
  }
}

// --members 2 trains two models at once with consecutive seeds, val compares each member's
// choice with their ensemble, and the tests are translated with what val chose: the reported
// scores are those of `transduce translate` with those models.
TEST_F(Multi30kRecipe, TrainsMembersAtOnceAndLetsValChooseTheirEnsemble) {
  const fs::path out = dir_ / "run";
  const auto r = run_shell(command("--members 2 --seed 5 --steps 12 --output " + out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* m : {"model", "model-2"}) {
    SCOPED_TRACE(m);
    EXPECT_TRUE(fs::is_regular_file(out / m / "model.safetensors"));
    EXPECT_TRUE(fs::is_regular_file(out / (std::string(m) + "-averaged") / "model.safetensors"));
    const std::vector<std::string> log = read_lines(out / m / "train_log.jsonl");
    ASSERT_FALSE(log.empty());
  }
  EXPECT_TRUE(fs::is_regular_file(out / "model-2.log"));
  // Different seeds: different weights.
  const auto differ = run_shell("cmp -s " + (out / "model" / "model.safetensors").string() + " " +
                                (out / "model-2" / "model.safetensors").string());
  EXPECT_NE(differ.status, 0) << "the members have the same weights";

  const nlohmann::json results = read_json(out / "results.json");
  EXPECT_EQ(results["members"]["count"], 2);
  EXPECT_EQ(results["members"]["seeds"], nlohmann::json::array({5, 6}));
  const nlohmann::json& grid = results["decoding"]["grid"];
  // The first setting tried of each candidate: both members' choices and both ensembles.
  std::map<std::string, double> first;
  double best_member = -1;
  for (const auto& g : grid) {
    const std::string w = g["weights"];
    first.emplace(w, g["val_bleu"].get<double>());
    if (w.rfind("member", 0) == 0) best_member = std::max(best_member, g["val_bleu"].get<double>());
  }
  ASSERT_TRUE(first.count("ensemble") && first.count("ensemble-log-prob")) << grid.dump();
  ASSERT_GE(best_member, 0) << grid.dump();
  const std::string chosen = results["decoding"]["chosen"]["weights"];
  const bool ensemble = chosen.rfind("ensemble", 0) == 0;
  const double best_ensemble = std::max(first["ensemble"], first["ensemble-log-prob"]);
  EXPECT_EQ(ensemble, best_ensemble >= best_member) << grid.dump();
  const nlohmann::json& used = results["members"]["translated_with"];
  EXPECT_EQ(used.size(), ensemble ? 2u : 1u);

  // test_2016's hypotheses are what translate gives with the models and settings reported.
  std::string models;
  for (const auto& m : used) models += " -m " + (out / m.get<std::string>()).string();
  if (chosen == "ensemble-log-prob") models += " --ensemble-mean log-prob";
  const nlohmann::json& c = results["decoding"]["chosen"];
  const auto again = run_shell(std::string(TRANSDUCE_BINARY) + " --threads 1 translate" + models +
                                   " --beam " + std::to_string(c["beam"].get<int>()) + " --alpha " +
                                   fmt::format("{}", c["alpha"].get<double>()) + " --input " +
                                   (out / "data" / "test_2016_flickr.en").string(),
                               /*merge_stderr=*/false);
  ASSERT_EQ(again.status, 0) << again.out;
  std::string want;
  for (const std::string& l :
       read_lines(out / results["tests"]["test_2016_flickr"]["hypotheses"].get<std::string>()))
    want += l + "\n";
  EXPECT_EQ(again.out, want);

  const auto both = run_shell(command("--members 2 --ranks 2 --output " + (dir_ / "x").string()));
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.out.find("--members or --ranks"), std::string::npos) << both.out;
}

TEST_F(Multi30kRecipe, MissingDataFileIsOneClearLine) {
  fs::remove(data_ / "val.de");
  const auto r = run_shell(command("--output " + (dir_ / "run").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "recipes/multi30k: " + data_.string() +
                       ": missing val.de (expected raw Multi30k task 1 files)\n");
}

TEST_F(Multi30kRecipe, RefusesToOverwriteAnEarlierRun) {
  fs::create_directories(dir_ / "run");
  const auto r = run_shell(command("--output " + (dir_ / "run").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("exists: give --force"), std::string::npos) << r.out;
}

TEST_F(Multi30kRecipe, DownloadsTheReleaseWhenAsked) {
  // The official release as gzipped files under a URL; here a file:// one.
  const fs::path release = dir_ / "release";
  fs::create_directories(release);
  for (const auto& e : fs::directory_iterator(data_))
    fs::copy_file(e.path(), release / e.path().filename());
  ASSERT_EQ(run_shell("gzip " + (release / "*").string()).status, 0);
  const fs::path out = dir_ / "run";
  const auto r = run_shell(
      command("--download --release-url file://" + release.string() + " --output " + out.string(),
              /*with_data=*/false));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("downloading file://" + release.string() + "/train.en.gz"),
            std::string::npos);
  // What was fetched is what was published (then cut to the tiny profile's 300 training lines).
  std::vector<std::string> expected = read_lines(data_ / "train.de");
  expected.resize(300);
  EXPECT_EQ(read_lines(out / "data" / "train.de"), expected);
  EXPECT_TRUE(fs::is_regular_file(out / "results.json"));
}

TEST_F(Multi30kRecipe, UnreachableReleaseIsOneClearLine) {
  const auto r =
      run_shell(command("--download --release-url file://" + (dir_ / "nowhere").string() +
                            " --output " + (dir_ / "run").string(),
                        /*with_data=*/false));
  EXPECT_EQ(r.status, 1);
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("recipes/multi30k: no data: file://" + (dir_ / "nowhere").string() +
                           "/train.en.gz could not be fetched",
                       0),
            0u)
      << r.out;
  EXPECT_NE(last.find("give --data DIR"), std::string::npos) << last;
}

}  // namespace
}  // namespace transduce
