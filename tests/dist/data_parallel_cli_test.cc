// `mpirun -np K transduce train` as a user runs it: K ranks make the updates one process makes
// with K times the accumulation, resume works with another K, and a rank that dies or hangs ends
// the job with a message instead of a hang, leaving the last checkpoint loadable.
//
// Built only with MPI (the refusal path of a build without it: tests/dist/launch_test.cc); a
// missing mpirun is a failure.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "io/model_dir.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "model/transformer.h"
#include "support/file_text.h"
#include "support/run_command.h"
#include "support/toy_corpus.h"
#include "train/adam.h"
#include "train/checkpoint.h"

extern char** environ;

#if TRANSDUCE_WITH_MPI
namespace transduce {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::read_file;
using testing::run_shell;
using testing::run_transduce;

// In the sanitizer build, LeakSanitizer reports allocations Open MPI's plugins never free (with no
// symbols: the plugins are unloaded by then), so leak checking is off for the ranks; address and
// undefined-behaviour checks stay on. The release build ignores ASAN_OPTIONS.
const std::string kLauncher =
    "env ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 mpirun --allow-run-as-root --oversubscribe ";

std::string mpirun(int ranks) {
  return kLauncher + "-np " + std::to_string(ranks) + " " + TRANSDUCE_BINARY + " ";
}

// How far two weight files are apart: the largest |a - b| of a tensor relative to the tensor's
// largest |a|, over the tensors whose names do not end in `except`.
struct WeightDiff {
  double worst = 0;
  bool bitwise = true;
};
WeightDiff compare_weights(const std::string& a_path, const std::string& b_path,
                           const std::string& except = "") {
  const io::SafetensorsFile a = io::load_safetensors(a_path), b = io::load_safetensors(b_path);
  WeightDiff d;
  EXPECT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, ta] : a.tensors) {
    const Tensor& tb = b.tensors.at(name);
    if (std::memcmp(ta.raw(), tb.raw(), ta.nbytes()) != 0) d.bitwise = false;
    if (!except.empty() && name.ends_with(except)) continue;
    double diff = 0, scale = 1e-30;
    for (int64_t i = 0; i < ta.numel(); ++i) {
      diff = std::max(diff, static_cast<double>(std::abs(ta.f32()[i] - tb.f32()[i])));
      scale = std::max(scale, static_cast<double>(std::abs(ta.f32()[i])));
    }
    d.worst = std::max(d.worst, diff / scale);
  }
  return d;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::vector<nlohmann::json> read_log(const std::string& model) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(model + "/train_log.jsonl");
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

class DataParallel : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run_shell("command -v mpirun").status, 0) << "no mpirun: install openmpi-bin";
    testing::write_toy_corpus(dir_);
    const std::string failed = testing::make_toy_vocab(dir_);
    ASSERT_TRUE(failed.empty()) << failed;
  }
  // Dropout stays on (0.1): the ranks must draw the masks the single process draws. With a
  // shorter warmup this model's learning rate passes 0.05 and its training turns chaotic: there a
  // rounding difference grows tenfold every few updates, and runs could only be compared bitwise.
  std::string flags(const std::string& model, const std::string& src = "train.src") const {
    return "train --src " + dir_ + "/" + src + " --tgt " + dir_ + "/train.tgt --valid-src " + dir_ +
           "/train.src --valid-tgt " + dir_ +
           "/train.tgt --layers 1 --d-model 16 --d-ff 32 --heads 2 --batch-tokens 200 "
           "--warmup 30 --log-every 2 --valid-every 4 --save-every 4 --output " +
           model + " --vocab " + dir_ + "/vocab ";
  }
  std::string resume(const std::string& model) const {
    return "train --resume " + model + " --src " + dir_ + "/train.src --tgt " + dir_ +
           "/train.tgt --valid-src " + dir_ + "/train.src --valid-tgt " + dir_ + "/train.tgt ";
  }
  static std::string weights(const std::string& model, int step) {
    return checkpoint_dir(model, step) + "/model.safetensors";
  }
  testing::TempDir tmp_{"transduce_data_parallel"};
  const std::string dir_ = tmp_.path();
};

// The key projections' biases have a gradient of zero in exact arithmetic (softmax ignores a
// score added to every key of a query), so theirs is rounding noise, which differs with the order
// the gradients are summed in, and Adam scales noise up to full steps. They are left out of the
// weight comparisons across rank counts; every other tensor must agree.
constexpr const char* kNoiseOnly = "k_proj.bias";

TEST_F(DataParallel, TwoRanksMakeTheUpdatesOfOneProcessAccumulatingTwo) {
  const std::string single = dir_ + "/single", one = dir_ + "/one_rank", two = dir_ + "/two_ranks";
  CommandResult r = run_transduce(flags(single) + "--accum 2 --max-steps 12");
  ASSERT_EQ(r.status, 0) << r.out;
  r = run_shell(mpirun(1) + flags(one) + "--accum 2 --max-steps 12");
  ASSERT_EQ(r.status, 0) << r.out;
  r = run_shell(mpirun(2) + flags(two) + "--max-steps 12");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("x 1 accumulated x 2 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| sync "), std::string::npos) << r.out;

  for (int step : {4, 8, 12}) {
    // mpirun with one rank is the single process itself.
    EXPECT_TRUE(compare_weights(weights(single, step), weights(one, step)).bitwise) << step;
    const WeightDiff d = compare_weights(weights(single, step), weights(two, step), kNoiseOnly);
    EXPECT_LT(d.worst, 1e-6) << "step " << step;
    EXPECT_FALSE(d.bitwise);  // the noise-only tensors do differ: the ranks summed for real
    // The position in the data is the same.
    const nlohmann::json a =
        read_json(fs::path(weights(single, step)).parent_path() / "state.json");
    const nlohmann::json b = read_json(fs::path(weights(two, step)).parent_path() / "state.json");
    for (const char* key : {"step", "epoch", "batch_in_epoch"}) EXPECT_EQ(a[key], b[key]) << key;
    // Each state names the ranks whose batches made an update.
    EXPECT_EQ(a["ranks"], 1);
    EXPECT_EQ(b["ranks"], 2);
  }
  // Only rank 0 logs: the same lines, with the losses of all ranks' batches.
  const std::vector<nlohmann::json> la = read_log(single), lb = read_log(two);
  ASSERT_EQ(la.size(), lb.size());
  ASSERT_EQ(la.size(), 9u);  // 6 training lines, 3 validations
  for (size_t i = 0; i < la.size(); ++i) {
    EXPECT_EQ(la[i]["kind"], lb[i]["kind"]);
    EXPECT_EQ(la[i]["step"], lb[i]["step"]);
    EXPECT_NEAR(la[i]["loss"].get<double>(), lb[i]["loss"].get<double>(),
                1e-6 * la[i]["loss"].get<double>())
        << i;
    if (la[i]["kind"] == "train") {
      EXPECT_EQ(la[i]["target_tokens"], lb[i]["target_tokens"]) << i;
      EXPECT_FALSE(la[i].contains("sync_share"));
      EXPECT_GT(lb[i].value("sync_share", 0.0), 0.0) << i;  // time spent summing gradients
    }
  }
}

TEST_F(DataParallel, ResumesWithAnotherNumberOfRanks) {
  // The reference: one process accumulating 2 for 8 updates.
  const std::string ref = dir_ + "/ref", a = dir_ + "/a", b = dir_ + "/b";
  CommandResult r = run_transduce(flags(ref) + "--accum 2 --max-steps 8");
  ASSERT_EQ(r.status, 0) << r.out;
  // 2 ranks for 4, then one process accumulating 2 for 4 more.
  r = run_shell(mpirun(2) + flags(a) + "--max-steps 4");
  ASSERT_EQ(r.status, 0) << r.out;
  r = run_transduce(resume(a) + "--accum 2 --max-steps 8");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_LT(compare_weights(weights(ref, 8), weights(a, 8), kNoiseOnly).worst, 1e-6);
  // And the other way round: one process for 4, then 2 ranks without accumulation.
  r = run_transduce(flags(b) + "--accum 2 --max-steps 4");
  ASSERT_EQ(r.status, 0) << r.out;
  r = run_shell(mpirun(2) + resume(b) + "--accum 1 --max-steps 8");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("at step 4"), std::string::npos) << r.out;
  EXPECT_LT(compare_weights(weights(ref, 8), weights(b, 8), kNoiseOnly).worst, 1e-6);
}

// Both ranks fail to open the file; whichever aborts first ends the other, perhaps before it
// could say so, so the line may come from either rank.
TEST_F(DataParallel, BadInputEndsEveryRankWithOneLine) {
  const CommandResult r =
      run_shell(mpirun(2) + flags(dir_ + "/m", "missing.src") + "--max-steps 4");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("transduce: error: rank [01] of 2: [^\n]*/missing\\.src: cannot open")))
      << r.out;
}

TEST_F(DataParallel, AnOutputDirectoryThatIsNotSharedIsNamed) {
  // Two "machines": each rank in its own working directory, the model directory relative.
  fs::create_directories(dir_ + "/machine0");
  fs::create_directories(dir_ + "/machine1");
  const std::string train =
      " " + std::string(TRANSDUCE_BINARY) + " " + flags("model") + "--max-steps 2";
  const CommandResult r = run_shell(
      "env ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 mpirun --allow-run-as-root "
      "--oversubscribe -np 1 -wdir " +
      dir_ + "/machine0" + train + " : -np 1 -wdir " + dir_ + "/machine1" + train);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("rank 1 of 2: model holds no config.json here although rank 0 has "
                       "prepared it: the output directory must be shared"),
            std::string::npos)
      << r.out;
}

// A job started in the background, its output in a file.
class BackgroundJob {
 public:
  explicit BackgroundJob(const std::string& command, const std::string& log) {
    const std::string line = "exec " + command + " > " + log + " 2>&1";
    const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group, to clean up
    if (posix_spawn(&pid_, "/bin/sh", nullptr, &attr, const_cast<char**>(argv), environ) != 0)
      pid_ = -1;
    posix_spawnattr_destroy(&attr);
  }
  ~BackgroundJob() {
    if (pid_ > 0 && !exited_) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  // The pid of the child whose environment says it is `rank` (children are listed under the
  // thread that started them).
  pid_t rank_pid(int rank) const {
    const std::string want = std::string(1, '\0') + "OMPI_COMM_WORLD_RANK=" + std::to_string(rank) +
                             std::string(1, '\0');
    std::error_code ec;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
      std::ifstream children(task.path() / "children");
      for (pid_t child; children >> child;) {
        std::stringstream env;
        env << '\0' << std::ifstream("/proc/" + std::to_string(child) + "/environ").rdbuf();
        if (env.str().find(want) != std::string::npos) return child;
      }
    }
    return -1;
  }
  // Waits up to `limit` for the job to end; its exit status, or nullopt when it did not end.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (exited_) return exit_status_;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_status_ = 0;
};

// Waits until the model has a checkpoint and the job has its rank 1; returns rank 1's pid, or -1
// when the job ended or a minute passed first.
pid_t wait_for_training(BackgroundJob& job, const std::string& model) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !job.wait({})) {
    if (!list_checkpoints(model).empty()) {
      const pid_t pid = job.rank_pid(1);
      if (pid > 0) return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// The newest checkpoint loads into a model and an optimizer.
void expect_loadable(const std::string& model_dir) {
  const std::optional<std::string> latest = latest_checkpoint(model_dir);
  ASSERT_TRUE(latest.has_value());
  Transformer model(io::read_model_config(model_dir));
  Adam adam(model.parameters());
  const nlohmann::json state = load_checkpoint(*latest, model, adam);
  EXPECT_GT(state.at("step").get<int64_t>(), 0);
}

// How a training job of 2 ranks ended after a signal.
struct Ending {
  bool signalled = false;     // the job trained until a checkpoint, and the signal went out
  std::optional<int> status;  // its exit status, or nullopt when it still ran a minute later
  std::string log;            // its output
};

// Starts `command` (2 ranks training without end, writing `model`), waits for its first checkpoint,
// sends `sig` to mpirun (or to rank 1 when `to_rank1`), and waits up to a minute for the job to
// end.
Ending signal_training(const std::string& command, const std::string& model, const std::string& log,
                       bool to_rank1, int sig) {
  Ending e;
  BackgroundJob job(command, log);
  const pid_t rank1 = job.pid() > 0 ? wait_for_training(job, model) : -1;
  const pid_t target = to_rank1 ? rank1 : job.pid();
  if (rank1 > 0 && kill(target, sig) == 0) {
    e.signalled = true;
    e.status = job.wait(std::chrono::seconds(60));
    if (!e.status && to_rank1) kill(rank1, SIGKILL);  // a stopped rank left behind
  }
  e.log = read_file(log);
  return e;
}

// Validation by BLEU shares the translating out among the ranks and gathers every translation:
// rank 0 writes all of them, as a single process translates with the same weights, and logs
// `transduce score`'s BLEU of them.
TEST_F(DataParallel, TwoRanksShareTheValidationTranslations) {
  const std::string two = dir_ + "/two_ranks";
  CommandResult r = run_shell(mpirun(2) + flags(two) + "--max-steps 8 --valid-metric bleu " +
                              "--valid-output " + dir_ + "/valid.{step}");
  ASSERT_EQ(r.status, 0) << r.out;
  r = testing::run_transduce_apart("translate -m " + two + " --beam 1 --input " + dir_ +
                                   "/train.src");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_file(dir_ + "/valid.8"));
  r = run_transduce("score --json --ref " + dir_ + "/train.tgt --hyp " + dir_ + "/valid.8");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<nlohmann::json> log = read_log(two);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back()["step"], 8);
  EXPECT_NEAR(log.back()["bleu"].get<double>(), nlohmann::json::parse(r.out)["score"].get<double>(),
              1e-9);
  EXPECT_TRUE(fs::exists(two + "/best/model.safetensors"));
}

TEST_F(DataParallel, SignallingTheLauncherStopsEveryRankAtOneUpdateAndSaves) {
  // mpirun passes SIGUSR1 on to the ranks (Ctrl-C it answers by ending them within a second).
  // The ranks agree on the update to stop after: a rank going on alone would wait for the others
  // until the job's time limit.
  const std::string model = dir_ + "/m";
  const Ending e = signal_training(mpirun(2) + flags(model) + "--max-steps 1000000", model,
                                   dir_ + "/log", /*to_rank1=*/false, SIGUSR1);
  ASSERT_TRUE(e.signalled) << e.log;
  ASSERT_TRUE(e.status.has_value()) << "the job still runs 60 s after SIGUSR1";
  EXPECT_EQ(*e.status, 0) << e.log;
  // Rank 0 saved the step they stopped at.
  const std::optional<std::string> latest = latest_checkpoint(model);
  ASSERT_TRUE(latest.has_value());
  const int64_t step = read_json(*latest + "/state.json").at("step").get<int64_t>();
  EXPECT_NE(e.log.find("(step " + std::to_string(step) + ")"), std::string::npos) << e.log;
  expect_loadable(model);
}

TEST_F(DataParallel, ADeadRankEndsTheJobAndTheCheckpointStaysGood) {
  const std::string model = dir_ + "/m";
  const Ending e = signal_training(mpirun(2) + flags(model) + "--max-steps 1000000", model,
                                   dir_ + "/log", /*to_rank1=*/true, SIGKILL);
  ASSERT_TRUE(e.signalled) << e.log;
  ASSERT_TRUE(e.status.has_value()) << "the job still runs 60 s after its rank 1 died";
  EXPECT_NE(*e.status, 0);
  EXPECT_NE(e.log.find("rank 1"), std::string::npos) << e.log;
  EXPECT_NE(e.log.find("signal 9"), std::string::npos) << e.log;
  expect_loadable(model);
}

TEST_F(DataParallel, AHangingRankEndsTheJobAfterTheTimeout) {
  const std::string model = dir_ + "/m";
  const Ending e =  // SIGSTOP: rank 1 stays alive but silent
      signal_training(mpirun(2) + flags(model) + "--max-steps 1000000 --dist-timeout 5", model,
                      dir_ + "/log", /*to_rank1=*/true, SIGSTOP);
  ASSERT_TRUE(e.signalled) << e.log;
  ASSERT_TRUE(e.status.has_value()) << "the job still runs 60 s after its rank 1 stopped";
  EXPECT_NE(*e.status, 0);
  EXPECT_NE(e.log.find("rank 0 of 2: no answer from the other ranks for 5 s"), std::string::npos)
      << e.log;
  expect_loadable(model);
}

}  // namespace
}  // namespace transduce
#endif  // TRANSDUCE_WITH_MPI
