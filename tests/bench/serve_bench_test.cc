// `transduce bench serve` at a small scale: it starts the service, loads it, and stops it by
// itself; every request is answered, and one-request-at-a-time serving runs one batch a request.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/random_model.h"
#include "support/run_command.h"

namespace transduce {
namespace {

TEST(ServeBench, ABoundedLoadEndsByItselfWithEveryRequestAnswered) {
  testing::RandomModelDir dir("transduce_serve_bench");
  std::ofstream(dir.path() + "/load.txt") << "red dog runs\na cat\n\nthe street over a dog\n";

  const testing::CommandResult r =
      testing::run_transduce("--threads 1 bench serve -m " + dir.path() + "/model --input " +
                                 dir.path() + "/load.txt --clients 4 --requests 3 --beam 2 --json",
                             /*merge_stderr=*/false);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 2u);
  for (const nlohmann::json& run : j["runs"]) {
    SCOPED_TRACE(run["mode"].get<std::string>());
    EXPECT_EQ(run["requests"], 12);
    EXPECT_EQ(run["errors"], 0);
    EXPECT_EQ(run["server_exit"], 0);
    EXPECT_GT(run["requests_per_second"].get<double>(), 0);
    EXPECT_LE(run["p50_ms"].get<double>(), run["p95_ms"].get<double>());
    EXPECT_LE(run["p95_ms"].get<double>(), run["p99_ms"].get<double>());
    EXPECT_LE(run["p99_ms"].get<double>(), run["max_ms"].get<double>());
  }
  // 12 timed requests and one warm-up request per client.
  EXPECT_EQ(j["runs"][1]["mode"], "one request at a time");
  EXPECT_EQ(j["runs"][1]["batches"], 16);
  EXPECT_LE(j["runs"][0]["batches"].get<int>(), 16);
  EXPECT_GT(j["batching_speedup"].get<double>(), 0);
}

}  // namespace
}  // namespace transduce
