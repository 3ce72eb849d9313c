// Checkpoints: exact resume, pruning, averaging, and that no crash point leaves a checkpoint or
// model.safetensors that does not load.
#include "train/checkpoint.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include <fmt/format.h>
#include "core/error.h"

#include "io/model_dir.h"
#include "io/model_weights.h"
#include "io/safetensors.h"
#include "support/random_model.h"
#include "train/checkpoint_average.h"

namespace transduce {
namespace {

namespace fs = std::filesystem;

using testing::tiny_config;

// A model and its optimizer, with non-trivial weights and moments after `adam_steps` updates.
struct Trained {
  std::unique_ptr<Transformer> model;
  std::unique_ptr<Adam> adam;
};

Trained make_trained(uint64_t seed, int adam_steps = 3, ModelConfig config = tiny_config()) {
  Trained t;
  t.model = std::make_unique<Transformer>(config);
  t.model->init_parameters(seed);
  t.adam = std::make_unique<Adam>(t.model->parameters());
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int s = 0; s < adam_steps; ++s) {
    for (Param* p : t.model->parameters()) {
      float* g = p->grad.f32();
      for (int64_t i = 0; i < p->grad.numel(); ++i) g[i] = normal(rng);
    }
    t.adam->step(1e-3f);
  }
  return t;
}

// Every weight and moment set to `value`: a checkpoint's content then says which step wrote it.
void fill_all(Trained& t, float value) {
  for (Param* p : t.model->parameters()) std::fill_n(p->value.f32(), p->value.numel(), value);
  for (const Tensor& m : t.adam->first_moments()) std::fill_n(m.f32(), m.numel(), value);
  for (const Tensor& v : t.adam->second_moments()) std::fill_n(v.f32(), v.numel(), value);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

void expect_same(const Trained& a, const Trained& b) {
  const ParamList& pa = a.model->parameters();
  const ParamList& pb = b.model->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(same_bits(pa[i]->value, pb[i]->value)) << pa[i]->name;
    EXPECT_TRUE(same_bits(a.adam->first_moments()[i], b.adam->first_moments()[i])) << pa[i]->name;
    EXPECT_TRUE(same_bits(a.adam->second_moments()[i], b.adam->second_moments()[i])) << pa[i]->name;
  }
  EXPECT_EQ(a.adam->steps(), b.adam->steps());
}

bool all_equal(const Tensor& t, float value) {
  const float* x = t.f32();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (x[i] != value) return false;
  return true;
}

std::vector<std::string> names_of(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) out.push_back(fs::path(p).filename().string());
  return out;
}

// Entries of `dir` whose names contain ".tmp" (temporary dirs and files).
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp") != std::string::npos)
      out.push_back(e.path().filename().string());
  return out;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("transduce_ckpt_{}_{}_{}", ::getpid(),
                                                   info->test_suite_name(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    set_checkpoint_fault_hook(nullptr);
    fs::remove_all(dir_);
  }
  std::string model_dir() const { return (dir_ / "model").string(); }
  std::string ckpt(int64_t step) const {
    return (dir_ / "model" / "checkpoints" / fmt::format("step-{:08d}", step)).string();
  }
  fs::path dir_;
};

TEST_F(CheckpointTest, SaveThenLoadRestoresWeightsMomentsStepAndStateBitwise) {
  Trained a = make_trained(1, 3);
  const nlohmann::json state = {{"epoch", 2}, {"batch_in_epoch", 7}, {"note", "hello"}};
  save_checkpoint(model_dir(), *a.model, *a.adam, 3, state, 0);
  EXPECT_EQ(names_of(list_checkpoints(model_dir())), std::vector<std::string>{"step-00000003"});

  Trained b = make_trained(2, 0);
  const nlohmann::json loaded = load_checkpoint(ckpt(3), *b.model, *b.adam);
  expect_same(a, b);
  EXPECT_EQ(b.adam->steps(), 3);
  EXPECT_EQ(loaded.at("step"), 3);
  EXPECT_EQ(loaded.at("epoch"), 2);
  EXPECT_EQ(loaded.at("batch_in_epoch"), 7);
  EXPECT_EQ(loaded.at("note"), "hello");

  // MODEL_DIR/model.safetensors holds the same weights, with the config in its metadata.
  const std::string latest = (fs::path(model_dir()) / "model.safetensors").string();
  io::SafetensorsFile f = io::load_safetensors(latest);
  EXPECT_EQ(nlohmann::json(io::config_from_metadata(f, latest)), nlohmann::json(tiny_config()));
  Transformer c(tiny_config());
  io::load_weights(c, f, latest);
  for (size_t i = 0; i < c.parameters().size(); ++i)
    EXPECT_TRUE(same_bits(c.parameters()[i]->value, a.model->parameters()[i]->value));
  EXPECT_TRUE(temporaries(fs::path(model_dir()) / "checkpoints").empty());
  EXPECT_TRUE(temporaries(model_dir()).empty());
}

TEST_F(CheckpointTest, ResavingAStepReplacesIt) {
  Trained a = make_trained(1);
  save_checkpoint(model_dir(), *a.model, *a.adam, 5, {{"v", 1}}, 0);
  Trained b = make_trained(2);
  save_checkpoint(model_dir(), *b.model, *b.adam, 5, {{"v", 2}}, 0);
  Trained c = make_trained(3, 0);
  EXPECT_EQ(load_checkpoint(ckpt(5), *c.model, *c.adam).at("v"), 2);
  expect_same(b, c);
  EXPECT_EQ(list_checkpoints(model_dir()).size(), 1u);
  EXPECT_TRUE(temporaries(fs::path(model_dir()) / "checkpoints").empty());
}

TEST_F(CheckpointTest, KeepLeavesTheNewestAndListIsOldestFirst) {
  Trained a = make_trained(1);
  // Steps out of lexical-vs-numeric trouble: 9 < 10 numerically.
  for (int64_t step : {8, 9, 10, 100000000}) {
    fill_all(a, static_cast<float>(step));
    save_checkpoint(model_dir(), *a.model, *a.adam, step, nlohmann::json::object(), 2);
  }
  EXPECT_EQ(names_of(list_checkpoints(model_dir())),
            (std::vector<std::string>{"step-00000010", "step-100000000"}));
  EXPECT_EQ(fs::path(*latest_checkpoint(model_dir())).filename().string(), "step-100000000");
  EXPECT_TRUE(temporaries(fs::path(model_dir()) / "checkpoints").empty());

  // keep <= 0 keeps everything.
  const std::string other = (dir_ / "other").string();
  for (int64_t step = 1; step <= 4; ++step)
    save_checkpoint(other, *a.model, *a.adam, step, nlohmann::json::object(), 0);
  EXPECT_EQ(names_of(list_checkpoints(other)),
            (std::vector<std::string>{"step-00000001", "step-00000002", "step-00000003",
                                      "step-00000004"}));
}

TEST_F(CheckpointTest, ListIgnoresIncompleteAndForeignDirs) {
  Trained a = make_trained(1);
  save_checkpoint(model_dir(), *a.model, *a.adam, 1, nlohmann::json::object(), 0);
  const fs::path ckpts = fs::path(model_dir()) / "checkpoints";
  fs::create_directories(ckpts / "step-00000002");  // empty: incomplete
  fs::copy(ckpt(1), ckpts / "step-00000003.tmp-12345", fs::copy_options::recursive);
  fs::copy(ckpt(1), ckpts / "step-3", fs::copy_options::recursive);  // not 8 digits
  fs::copy(ckpt(1), ckpts / "notes", fs::copy_options::recursive);
  EXPECT_EQ(names_of(list_checkpoints(model_dir())), std::vector<std::string>{"step-00000001"});
  EXPECT_TRUE(list_checkpoints((dir_ / "nowhere").string()).empty());
  EXPECT_FALSE(latest_checkpoint((dir_ / "nowhere").string()).has_value());
  // The next save removes the leftover temporary dir and nothing else.
  save_checkpoint(model_dir(), *a.model, *a.adam, 4, nlohmann::json::object(), 0);
  EXPECT_FALSE(fs::exists(ckpts / "step-00000003.tmp-12345"));
  EXPECT_TRUE(fs::exists(ckpts / "step-00000002"));
  EXPECT_TRUE(fs::exists(ckpts / "notes"));
}

TEST_F(CheckpointTest, AverageIsTheElementwiseMean) {
  Trained a = make_trained(1), b = make_trained(2), c = make_trained(3);
  save_checkpoint(model_dir(), *a.model, *a.adam, 1, nlohmann::json::object(), 0);
  save_checkpoint(model_dir(), *b.model, *b.adam, 2, nlohmann::json::object(), 0);
  save_checkpoint(model_dir(), *c.model, *c.adam, 3, nlohmann::json::object(), 0);
  const std::string out = (dir_ / "avg.safetensors").string();
  average_checkpoints({ckpt(1), ckpt(2)}, out);

  io::SafetensorsFile f = io::load_safetensors(out);
  EXPECT_EQ(nlohmann::json(io::config_from_metadata(f, out)), nlohmann::json(tiny_config()));
  Transformer m(tiny_config());
  io::load_weights(m, f, out);  // strict: exactly the model's tensors
  for (size_t i = 0; i < m.parameters().size(); ++i) {
    const float* x = a.model->parameters()[i]->value.f32();
    const float* y = b.model->parameters()[i]->value.f32();
    const float* got = m.parameters()[i]->value.f32();
    for (int64_t k = 0; k < m.parameters()[i]->value.numel(); ++k)
      ASSERT_EQ(got[k], static_cast<float>((static_cast<double>(x[k]) + y[k]) / 2.0))
          << m.parameters()[i]->name << "[" << k << "]";
  }

  // Three, in double: (x + y + z) / 3 rounded once.
  average_checkpoints({ckpt(1), ckpt(2), ckpt(3)}, out);
  f = io::load_safetensors(out);
  io::load_weights(m, f, out);
  const Param* p = m.parameters().front();
  const float* x = a.model->parameters().front()->value.f32();
  const float* y = b.model->parameters().front()->value.f32();
  const float* z = c.model->parameters().front()->value.f32();
  for (int64_t k = 0; k < p->value.numel(); ++k)
    ASSERT_EQ(p->value.f32()[k],
              static_cast<float>((static_cast<double>(x[k]) + y[k] + z[k]) / 3.0));

  // One checkpoint averages to itself.
  average_checkpoints({ckpt(2)}, out);
  f = io::load_safetensors(out);
  io::load_weights(m, f, out);
  for (size_t i = 0; i < m.parameters().size(); ++i)
    EXPECT_TRUE(same_bits(m.parameters()[i]->value, b.model->parameters()[i]->value));
}

TEST_F(CheckpointTest, AverageRefusesDifferentConfigsAndTensorSets) {
  Trained a = make_trained(1);
  ModelConfig wider = tiny_config();
  wider.d_ff = 16;
  Trained b = make_trained(2, 1, wider);
  save_checkpoint(model_dir(), *a.model, *a.adam, 1, nlohmann::json::object(), 0);
  const std::string other = (dir_ / "other").string();
  save_checkpoint(other, *b.model, *b.adam, 1, nlohmann::json::object(), 0);
  const std::string b1 = (fs::path(other) / "checkpoints" / "step-00000001").string();
  const std::string out = (dir_ / "avg.safetensors").string();
  try {
    average_checkpoints({ckpt(1), b1}, out);
    FAIL() << "averaged different configs";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("config"), std::string::npos) << what;
    EXPECT_NE(what.find("d_ff"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(out));

  // Same config in the metadata, but one tensor too many.
  io::SafetensorsFile f = io::load_safetensors(ckpt(1) + "/model.safetensors");
  f.tensors.emplace("extra.weight", Tensor::zeros(Shape({2})));
  const fs::path odd = dir_ / "odd";
  fs::create_directories(odd);
  io::save_safetensors((odd / "model.safetensors").string(), f.tensors, f.metadata);
  try {
    average_checkpoints({ckpt(1), odd.string()}, out);
    FAIL() << "averaged different tensor sets";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("extra.weight"), std::string::npos) << e.what();
  }
  EXPECT_THROW(average_checkpoints({odd.string(), ckpt(1)}, out), Error);
  EXPECT_THROW(average_checkpoints({}, out), Error);
  EXPECT_THROW(average_checkpoints({(dir_ / "missing").string()}, out), Error);
}

const char* const kFaultPoints[] = {"after-weights", "before-rename", "after-optimizer",
                                    "after-state",   "after-rename",  "after-latest"};

bool renamed_by(const std::string& point) {
  return point == "after-rename" || point == "after-latest";
}

// After a save of step 3 broke at `point` (step 2 having been saved): the newest checkpoint and
// model.safetensors load, and hold what their step saved (every value equal to the step).
void expect_consistent_after_fault(const std::string& model_dir, const std::string& point) {
  SCOPED_TRACE(point);
  for (const std::string& c : list_checkpoints(model_dir))
    EXPECT_EQ(fs::path(c).filename().string().find(".tmp"), std::string::npos) << c;
  std::optional<std::string> latest = latest_checkpoint(model_dir);
  ASSERT_TRUE(latest.has_value());
  const std::string name = fs::path(*latest).filename().string();
  EXPECT_EQ(name, renamed_by(point) ? "step-00000003" : "step-00000002");
  Trained t = make_trained(9, 0);
  nlohmann::json state;
  ASSERT_NO_THROW(state = load_checkpoint(*latest, *t.model, *t.adam));
  const int64_t step = state.at("step").get<int64_t>();
  EXPECT_EQ(t.adam->steps(), step);
  for (const Param* p : t.model->parameters())
    EXPECT_TRUE(all_equal(p->value, static_cast<float>(step))) << p->name;
  for (const Tensor& m : t.adam->first_moments())
    EXPECT_TRUE(all_equal(m, static_cast<float>(step)));

  const std::string weights = (fs::path(model_dir) / "model.safetensors").string();
  Transformer m(tiny_config());
  io::SafetensorsFile f;
  ASSERT_NO_THROW(f = io::load_safetensors(weights));
  ASSERT_NO_THROW(io::load_weights(m, f, weights));
  const float expected = point == "after-latest" ? 3.0f : 2.0f;
  for (const Param* p : m.parameters()) EXPECT_TRUE(all_equal(p->value, expected)) << p->name;
}

// A save whose steps are numbered by content: weights and moments all equal to the step.
void save_step(const std::string& model_dir, Trained& t, int64_t step, int keep) {
  fill_all(t, static_cast<float>(step));
  t.adam->set_steps(step);
  save_checkpoint(model_dir, *t.model, *t.adam, step, {{"epoch", 0}}, keep);
}

TEST_F(CheckpointTest, AFaultThrownAtAnyPointLeavesALoadableCheckpoint) {
  for (const char* point : kFaultPoints) {
    const std::string dir = (dir_ / point).string();
    Trained t = make_trained(1);
    save_step(dir, t, 1, 2);
    save_step(dir, t, 2, 2);
    const std::string at = point;
    set_checkpoint_fault_hook([at](const char* p) {
      if (at == p) throw std::runtime_error(std::string("injected fault at ") + p);
    });
    EXPECT_THROW(save_step(dir, t, 3, 2), std::runtime_error) << point;
    set_checkpoint_fault_hook(nullptr);
    expect_consistent_after_fault(dir, point);

    save_step(dir, t, 4, 2);
    EXPECT_TRUE(temporaries(fs::path(dir) / "checkpoints").empty()) << point;
    EXPECT_TRUE(temporaries(dir).empty()) << point;
    EXPECT_EQ(fs::path(*latest_checkpoint(dir)).filename().string(), "step-00000004");
    EXPECT_EQ(list_checkpoints(dir).size(), 2u);
  }
}

TEST_F(CheckpointTest, AProcessDyingAtAnyPointLeavesALoadableCheckpoint) {
  for (const char* point : kFaultPoints) {
    const std::string dir = (dir_ / point).string();
    Trained t = make_trained(1);
    save_step(dir, t, 1, 2);
    save_step(dir, t, 2, 2);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const std::string at = point;
      set_checkpoint_fault_hook([at](const char* p) {
        if (at == p) ::_exit(0);
      });
      try {
        save_step(dir, t, 3, 2);
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(1);  // the hook should have ended the process
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << point << " status " << status;
    expect_consistent_after_fault(dir, point);

    save_step(dir, t, 4, 2);
    EXPECT_TRUE(temporaries(fs::path(dir) / "checkpoints").empty()) << point;
    EXPECT_TRUE(temporaries(dir).empty()) << point;
    EXPECT_EQ(names_of(list_checkpoints(dir)),
              (std::vector<std::string>{renamed_by(point) ? "step-00000003" : "step-00000002",
                                        "step-00000004"}))
        << point;
  }
}

TEST_F(CheckpointTest, SurvivesSigkillAtRandomMoments) {
  const std::string dir = model_dir();
  Trained t = make_trained(1);
  save_step(dir, t, 1, 3);
  std::mt19937 rng(20170612);
  std::uniform_int_distribution<int> delay_us(500, 40000);
  int64_t saves_seen = 1;
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(round);
    const std::vector<std::string> before = list_checkpoints(dir);
    ASSERT_FALSE(before.empty());
    const int64_t next = std::stoll(fs::path(before.back()).filename().string().substr(5)) + 1;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        for (int64_t step = next;; ++step) save_step(dir, t, step, 3);
      } catch (...) {
        ::_exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the saving child ended on its own: status " << status;

    for (const std::string& c : list_checkpoints(dir))
      EXPECT_EQ(fs::path(c).filename().string().find(".tmp"), std::string::npos) << c;
    std::optional<std::string> latest = latest_checkpoint(dir);
    ASSERT_TRUE(latest.has_value());
    Trained u = make_trained(9, 0);
    nlohmann::json state;
    ASSERT_NO_THROW(state = load_checkpoint(*latest, *u.model, *u.adam));
    const int64_t step = state.at("step").get<int64_t>();
    EXPECT_EQ(fs::path(*latest).filename().string(), fmt::format("step-{:08d}", step));
    EXPECT_GE(step, next - 1);
    saves_seen = std::max(saves_seen, step);
    for (const Param* p : u.model->parameters())
      ASSERT_TRUE(all_equal(p->value, static_cast<float>(step))) << p->name;
    for (const Tensor& v : u.adam->second_moments())
      ASSERT_TRUE(all_equal(v, static_cast<float>(step)));

    const std::string weights = (fs::path(dir) / "model.safetensors").string();
    Transformer m(tiny_config());
    io::SafetensorsFile f;
    ASSERT_NO_THROW(f = io::load_safetensors(weights));
    ASSERT_NO_THROW(io::load_weights(m, f, weights));
    // model.safetensors holds one save's weights, never newer than the newest checkpoint (it lags
    // when the kill came between the rename and its rewrite).
    const float w = m.parameters().front()->value.f32()[0];
    EXPECT_TRUE(w >= 1.0f && w <= static_cast<float>(step) && w == std::floor(w)) << w;
    for (const Param* p : m.parameters()) ASSERT_TRUE(all_equal(p->value, w)) << p->name;
  }
  // The next save cleans whatever the kills left.
  save_step(dir, t, saves_seen + 1, 3);
  EXPECT_TRUE(temporaries(fs::path(dir) / "checkpoints").empty());
  EXPECT_TRUE(temporaries(dir).empty());
  EXPECT_LE(list_checkpoints(dir).size(), 3u);
}

TEST_F(CheckpointTest, CorruptFilesAreNamedAndSkipped) {
  Trained a = make_trained(1);
  save_step(model_dir(), a, 1, 0);
  save_step(model_dir(), a, 2, 0);
  const std::string weights2 = ckpt(2) + "/model.safetensors";
  fs::resize_file(weights2, fs::file_size(weights2) / 2);

  Trained b = make_trained(5);
  const Tensor before = b.model->parameters().front()->value.clone();
  try {
    load_checkpoint(ckpt(2), *b.model, *b.adam);
    FAIL() << "loaded a truncated checkpoint";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(weights2), std::string::npos) << e.what();
  }
  EXPECT_TRUE(same_bits(before, b.model->parameters().front()->value));
  ASSERT_TRUE(latest_checkpoint(model_dir()).has_value());
  EXPECT_EQ(*latest_checkpoint(model_dir()), ckpt(1));
  EXPECT_NO_THROW(load_checkpoint(*latest_checkpoint(model_dir()), *b.model, *b.adam));

  // A truncated optimizer file and a corrupt state: each named; the model is left as it was.
  save_step(model_dir(), a, 3, 0);
  const std::string opt3 = ckpt(3) + "/optimizer.safetensors";
  fs::resize_file(opt3, fs::file_size(opt3) - 4);
  Trained c = make_trained(6);
  const Tensor c_before = c.model->parameters().front()->value.clone();
  try {
    load_checkpoint(ckpt(3), *c.model, *c.adam);
    FAIL() << "loaded a truncated optimizer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(opt3), std::string::npos) << e.what();
  }
  EXPECT_TRUE(same_bits(c_before, c.model->parameters().front()->value));

  save_step(model_dir(), a, 4, 0);
  const std::string state4 = ckpt(4) + "/state.json";
  std::ofstream(state4, std::ios::trunc) << "{\"step\": 4, \"epo";
  try {
    load_checkpoint(ckpt(4), *c.model, *c.adam);
    FAIL() << "loaded a corrupt state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(state4), std::string::npos) << e.what();
  }
  EXPECT_EQ(*latest_checkpoint(model_dir()), ckpt(1));

  // A missing file: the checkpoint is not listed, and loading it names the file.
  save_step(model_dir(), a, 5, 0);
  fs::remove(ckpt(5) + "/optimizer.safetensors");
  EXPECT_EQ(names_of(list_checkpoints(model_dir())).back(), "step-00000004");
  try {
    load_checkpoint(ckpt(5), *c.model, *c.adam);
    FAIL() << "loaded an incomplete checkpoint";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(ckpt(5) + "/optimizer.safetensors"), std::string::npos)
        << e.what();
  }

  // A checkpoint of another model: refused, naming the file and the tensor.
  ModelConfig wider = tiny_config();
  wider.d_ff = 16;
  Trained w = make_trained(7, 1, wider);
  EXPECT_THROW(load_checkpoint(ckpt(1), *w.model, *w.adam), Error);
}

TEST_F(CheckpointTest, ModelConfigFileRoundTripsAndNamesItsErrors) {
  ModelConfig c = tiny_config();
  c.positions = Positions::Learned;
  c.d_k = 3;
  io::write_model_config(model_dir(), c);
  EXPECT_EQ(nlohmann::json(io::read_model_config(model_dir())), nlohmann::json(c));
  const std::string path = model_dir() + "/config.json";
  std::ifstream in(path);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(text.find("\n  \"d_model\": 8"), std::string::npos) << text;  // pretty-printed

  auto expect_error_naming = [&](const std::string& dir, const std::string& file) {
    try {
      io::read_model_config(dir);
      ADD_FAILURE() << "read a bad config in " << dir;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  };
  expect_error_naming((dir_ / "missing").string(), (dir_ / "missing" / "config.json").string());
  std::ofstream(path, std::ios::trunc) << "{\"layers\": 2,";
  expect_error_naming(model_dir(), path);
  std::ofstream(path, std::ios::trunc) << "{\"layers\": \"two\"}";
  expect_error_naming(model_dir(), path);
  std::ofstream(path, std::ios::trunc) << "{\"layers\": 0}";
  expect_error_naming(model_dir(), path);
  std::ofstream(path, std::ios::trunc) << "[1, 2]";
  expect_error_naming(model_dir(), path);
}

}  // namespace
}  // namespace transduce
