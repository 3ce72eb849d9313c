// `transduce serve` as a user runs it: it says where it listens, answers, and on SIGTERM answers
// the requests it already has before it exits 0 (a second signal: at once, status 1); bad
// settings are one line and a non-zero exit.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "core/child_process.h"
#include "support/random_model.h"
#include "support/run_command.h"

namespace transduce {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class ServeCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new testing::RandomModelDir("transduce_serve_cli"); }
  static void TearDownTestSuite() { delete dir_; }
  static std::string model() { return dir_->model(); }

  static testing::RandomModelDir* dir_;
};

testing::RandomModelDir* ServeCommand::dir_ = nullptr;

// The port of "listening on http://127.0.0.1:PORT/" in the server's output, or 0.
int listening_port(const std::string& output) {
  std::smatch m;
  return std::regex_search(output, m, std::regex(R"(listening on http://127\.0\.0\.1:(\d+)/)"))
             ? std::stoi(m[1])
             : 0;
}

// A request that keeps the random model busy: it writes the longest outputs allowed.
json busy_request(int sentences, int beam) {
  json busy = {{"text", json::array()}, {"beam", beam}};
  for (int i = 0; i < sentences; ++i) busy["text"].push_back("red dog runs over the street a cat");
  return busy;
}

// Polls /health until one request is running and `queued` wait behind it; false if /health fails.
bool wait_for_queue(httplib::Client& client, int queued) {
  for (int tries = 0; tries < 60000; ++tries) {
    auto h = client.Get("/health");
    if (!h) return false;
    const json s = json::parse(h->body);
    if (s["running_requests"] == 1 && s["queued_requests"] == queued) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

TEST_F(ServeCommand, SigtermAnswersTheRequestsAlreadyReceivedThenExitsZero) {
  ChildProcess server({TRANSDUCE_BINARY, "--threads", "1", "serve", "-m", model(), "--port", "0",
                       "--max-wait-ms", "0"});
  ASSERT_TRUE(server.wait_for_output("listening on", 120s)) << server.output();
  const int port = listening_port(server.output());
  ASSERT_GT(port, 0) << server.output();
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(300, 0);
  auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  // Two requests that keep the model busy: the second waits in the queue behind the first.
  const json busy = busy_request(32, 8);
  std::vector<int> statuses(2, 0);
  std::vector<size_t> answered(2, 0);
  std::atomic<bool> signalled{false};
  std::vector<bool> after_signal(2, false);
  std::vector<std::thread> clients;
  for (int c = 0; c < 2; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client cli("127.0.0.1", port);
      cli.set_read_timeout(300, 0);
      auto res = cli.Post("/v1/translate", busy.dump(), "application/json");
      after_signal[c] = signalled;
      if (!res) return;
      statuses[c] = res->status;
      if (res->status == 200) answered[c] = json::parse(res->body)["translations"].size();
    });
    // The first must be running before the second is sent, and the second queued before the signal.
    EXPECT_TRUE(wait_for_queue(client, c)) << "the queue never held " << c << " behind one";
  }
  signalled = true;
  server.signal(SIGTERM);
  for (auto& t : clients) t.join();
  EXPECT_EQ(statuses, (std::vector<int>{200, 200}));
  EXPECT_EQ(answered, (std::vector<size_t>{32, 32}));
  EXPECT_TRUE(after_signal[1]) << "the queued request was answered before the signal";
  EXPECT_EQ(server.wait(), 0) << server.output();
  EXPECT_NE(server.output().find("answering the requests already received"), std::string::npos)
      << server.output();
  EXPECT_NE(server.output().find("stopped: 2 requests, 64 sentences"), std::string::npos)
      << server.output();
  EXPECT_FALSE(client.Get("/health")) << "still listening after the exit";
}

// While it stops, the server takes no new connection (a client's /health is refused) but goes on
// with the requests it has; a second signal ends it at once, with status 1, without them.
TEST_F(ServeCommand, WhileStoppingNewConnectionsAreRefusedAndASecondSignalExitsAtOnce) {
  ChildProcess server({TRANSDUCE_BINARY, "--threads", "1", "serve", "-m", model(), "--port", "0",
                       "--max-wait-ms", "0"});
  ASSERT_TRUE(server.wait_for_output("listening on", 120s)) << server.output();
  const int port = listening_port(server.output());
  ASSERT_GT(port, 0) << server.output();
  httplib::Client client("127.0.0.1", port);
  // Three requests that keep the model busy for seconds: one running, two queued.
  const json busy = busy_request(64, 16);
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&] {
      httplib::Client cli("127.0.0.1", port);
      cli.set_read_timeout(300, 0);
      auto res = cli.Post("/v1/translate", busy.dump(), "application/json");
      if (res && res->status == 200) ++answered;
    });
    EXPECT_TRUE(wait_for_queue(client, c)) << "the queue never held " << c << " behind one";
  }
  server.signal(SIGTERM);
  ASSERT_TRUE(server.wait_for_output("answering the requests already received", 60s))
      << server.output();
  bool refused = false;
  for (int tries = 0; tries < 2000 && !refused; ++tries) {
    httplib::Client probe("127.0.0.1", port);
    probe.set_connection_timeout(1, 0);
    refused = !probe.Get("/health");
    if (!refused) std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(refused) << "a new connection was still answered while stopping";
  EXPECT_LT(answered.load(), 3) << "every request was answered before the test could go on";
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 1) << server.output();
  EXPECT_NE(server.output().find("again: exiting now"), std::string::npos) << server.output();
  for (auto& t : clients) t.join();
  EXPECT_LT(answered.load(), 3) << "the second signal waited for every answer";
}

// A server's answers to 8 concurrent requests of two sentences each, with `workers` workers;
// `says` is its start-up line's account of them.
std::vector<std::string> translate_concurrently(const std::string& model, const char* workers,
                                                const std::string& says,
                                                const char* compute_type = "fp32") {
  ChildProcess server({TRANSDUCE_BINARY, "--threads", "2", "serve", "-m", model, "--port", "0",
                       "--workers", workers, "--max-wait-ms", "0", "--compute-type", compute_type});
  EXPECT_TRUE(server.wait_for_output("listening on", 120s)) << server.output();
  const int port = listening_port(server.output());
  const std::vector<std::string> words = {"red", "dog", "runs", "over", "the", "street", "a"};
  std::vector<std::string> out(8);
  std::vector<std::thread> clients;
  for (size_t c = 0; c < out.size(); ++c)
    clients.emplace_back([&, c] {
      std::string text;
      for (size_t w = 0; w <= c % 5; ++w) text += words[(c + w) % words.size()] + " ";
      httplib::Client cli("127.0.0.1", port);
      cli.set_read_timeout(300, 0);
      auto res = cli.Post("/v1/translate", json{{"text", {text, "a cat"}}, {"beam", 2}}.dump(),
                          "application/json");
      if (res && res->status == 200) {
        const json t = json::parse(res->body)["translations"];
        out[c] = t[0]["text"].get<std::string>() + " | " + t[1]["text"].get<std::string>();
      } else {
        out[c] = res ? "status " + std::to_string(res->status) : "no answer";
      }
    });
  for (auto& t : clients) t.join();
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0) << server.output();
  EXPECT_NE(server.output().find(says), std::string::npos) << server.output();
  return out;
}

TEST_F(ServeCommand, TwoWorkersAnswerAsOneWorkerDoes) {
  const std::vector<std::string> one = translate_concurrently(model(), "1", "1 worker x 2 threads");
  const std::vector<std::string> two =
      translate_concurrently(model(), "2", "2 workers x 1 threads");
  for (const std::string& t : one) EXPECT_EQ(t.find("status"), std::string::npos) << t;
  EXPECT_EQ(two, one);
  EXPECT_NE(one[0], one[1]);  // different requests, different translations
}

// int8 workers each quantize their copy of the model and run their products side by side (each
// with its own buffers): two answer as one does.
TEST_F(ServeCommand, TwoInt8WorkersAnswerAsOneInt8WorkerDoes) {
  const std::vector<std::string> one =
      translate_concurrently(model(), "1", "1 worker x 2 threads", "int8");
  const std::vector<std::string> two =
      translate_concurrently(model(), "2", "2 workers x 1 threads", "int8");
  for (const std::string& t : one) EXPECT_EQ(t.find("status"), std::string::npos) << t;
  EXPECT_EQ(two, one);
}

TEST_F(ServeCommand, BadSettingsAreOneLineAndANonZeroExit) {
  const auto one_line_error = testing::expect_one_line_error;
  one_line_error(testing::run_transduce("serve -m " + dir_->path() + "/nowhere --port 0"),
                 "nowhere");
  one_line_error(
      testing::run_transduce("serve -m " + model() + " --port 0 --max-sentence-tokens 500"),
      "--max-sentence-tokens must be between 1 and the model's 127");
  one_line_error(testing::run_transduce("serve -m " + model() + " --port 0 --beam 20"),
                 "--beam must be between 1 and --max-beam 16");
  one_line_error(
      testing::run_transduce("serve -m " + model() + " --port 0 --max-queue 4 --max-sentences 8"),
      "--max-sentences 8 is more than --max-queue 4");
  one_line_error(testing::run_transduce("serve -m " + model() + " --port 0 --workers 0"),
                 "--workers must be at least 1, got 0");

  // A port that is taken.
  ChildProcess first({TRANSDUCE_BINARY, "--threads", "1", "serve", "-m", model(), "--port", "0"});
  ASSERT_TRUE(first.wait_for_output("listening on", 120s)) << first.output();
  const int port = listening_port(first.output());
  one_line_error(testing::run_transduce("serve -m " + model() + " --port " + std::to_string(port)),
                 "cannot listen on 127.0.0.1:" + std::to_string(port));
  first.signal(SIGTERM);
  EXPECT_EQ(first.wait(), 0);
}

}  // namespace
}  // namespace transduce
