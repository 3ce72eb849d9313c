// The translation service on loopback, spoken to over real sockets: good requests answer what the
// model translates on its own (however requests are merged into batches), bad ones a JSON error
// with the right status, a full queue 503 at once, and attention comes back as the model's.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "decode/loaded_model.h"
#include "serve/http_server.h"
#include "support/random_model.h"

namespace transduce {
namespace {

using nlohmann::json;

// One connection to the service written byte by byte, for requests httplib's client does not send
// the way a test needs them (a chunked body of chosen chunks, several on one connection).
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    timeval timeout{120, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool send(const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return connected_;
  }
  // The next response's status and body (the service always sends a Content-Length); status 0
  // when the connection ends first.
  std::pair<int, std::string> response() {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return {0, ""};
    const std::string head = buffer_.substr(0, end);
    std::smatch m;
    if (!std::regex_search(head, m, std::regex("^HTTP/1\\.1 (\\d+)"))) return {0, head};
    const int status = std::stoi(m[1]);
    size_t length = 0;
    if (std::regex_search(head, m, std::regex("Content-Length: (\\d+)", std::regex::icase)))
      length = std::stoul(m[1]);
    while (buffer_.size() < end + 4 + length)
      if (!fill()) return {0, ""};
    std::string body = buffer_.substr(end + 4, length);
    buffer_.erase(0, end + 4 + length);
    return {status, body};
  }

 private:
  bool fill() {
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  int fd_;
  bool connected_ = false;
  std::string buffer_;
};

// POST /v1/translate with `body` in Content-Length form, or chunked in pieces of `chunk` bytes.
std::string post_request(const std::string& body, const char* type = "application/json") {
  return "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: " + std::string(type) +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}
std::string chunked_request(const std::string& body, size_t chunk) {
  std::string r =
      "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (size_t at = 0; at < body.size(); at += chunk) {
    const std::string piece = body.substr(at, chunk);
    r += fmt::format("{:x}\r\n{}\r\n", piece.size(), piece);
  }
  return r + "0\r\n\r\n";
}

// One service over a model with random weights, and a second copy of the model to translate
// with directly (a model object serves one thread at a time).
class Service : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new testing::RandomModelDir("transduce_service"); }
  static void TearDownTestSuite() { delete dir_; }

  void SetUp() override {
    served_ = std::make_unique<LoadedModel>(dir_->model());
    reference_ = std::make_unique<LoadedModel>(dir_->model());
    translator_ =
        std::make_unique<Translator>(served_->model(), served_->tokenizer(), TranslateOptions{});
    BatchingOptions b;
    b.max_wait = std::chrono::milliseconds(20);
    queue_ = std::make_unique<TranslationQueue>(
        [this](const std::vector<std::vector<int32_t>>& s, const std::vector<SentenceControls>& c,
               const TranslateOptions& o) { return translator_->translate_pieces(s, o, c); },
        b);
    ServerOptions o;
    o.port = 0;
    o.limits = {/*max_body_bytes=*/4096, /*max_sentences=*/8, /*max_sentence_tokens=*/40,
                /*max_beam=*/6};
    o.defaults.search.beam = 2;
    start(o, json{{"name", "random"}, {"parameters", served_->config().parameter_count()}});
  }
  void start(const ServerOptions& o, const json& model) {
    server_ = std::make_unique<TranslationServer>(served_->tokenizer(), *queue_, model, o);
    port_ = server_->bind();
    serving_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    serving_.join();
    queue_->stop();
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120, 0);
    return c;
  }
  // POST /v1/translate: the status and the parsed body (which must be JSON).
  std::pair<int, json> post(const std::string& body) const {
    auto res = client().Post("/v1/translate", body, "application/json");
    EXPECT_TRUE(res) << "no answer to " << body;
    if (!res) return {0, json()};
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json") << body;
    return {res->status, json::parse(res->body)};
  }
  // What the model gives for `text` on its own.
  std::vector<Translation> direct(const std::string& text, int beam, bool attention = false,
                                  int nbest = 1) {
    TranslateOptions o;
    o.search.beam = beam;
    o.search.nbest = nbest;
    o.attention = attention;
    Translator t(reference_->model(), reference_->tokenizer(), o);
    return t.translate({text}).at(0);
  }

  static testing::RandomModelDir* dir_;
  std::unique_ptr<LoadedModel> served_, reference_;
  std::unique_ptr<Translator> translator_;
  std::unique_ptr<TranslationQueue> queue_;
  std::unique_ptr<TranslationServer> server_;
  std::thread serving_;
  int port_ = 0;
};

testing::RandomModelDir* Service::dir_ = nullptr;

TEST_F(Service, GoodRequestsGetWhatTheModelTranslates) {
  const std::vector<std::string> text{"red dog runs", "", "a cat over the street"};
  auto [status, body] = post(json{{"text", text}, {"beam", 3}, {"nbest", 2}}.dump());
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["model"], "random");
  ASSERT_EQ(body["translations"].size(), 3u);
  for (size_t i = 0; i < text.size(); ++i) {
    const json& t = body["translations"][i];
    const std::vector<Translation> want = direct(text[i], 3, false, /*nbest=*/2);
    EXPECT_EQ(t["text"], want[0].text) << i;
    EXPECT_NEAR(t["score"].get<double>(), want[0].score, 1e-5) << i;
    ASSERT_EQ(t["tokens"].size(), want[0].tokens.size()) << i;
    for (size_t k = 0; k < want[0].tokens.size(); ++k)
      EXPECT_EQ(t["tokens"][k], reference_->tokenizer().piece(want[0].tokens[k]));
    ASSERT_EQ(t["nbest"].size(), want.size()) << i;
    EXPECT_EQ(t["nbest"][0], json::object({{"text", t["text"]},
                                           {"score", t["score"]},
                                           {"log_prob", t["log_prob"]},
                                           {"tokens", t["tokens"]},
                                           {"token_log_probs", t["token_log_probs"]}}));
    // One per token and EOS (an empty source's empty translation has none).
    ASSERT_EQ(t["token_log_probs"].size(), want[0].token_log_probs.size()) << i;
    EXPECT_EQ(want[0].token_log_probs.size(), text[i].empty() ? 0 : want[0].tokens.size() + 1);
    for (size_t k = 0; k < want[0].token_log_probs.size(); ++k)
      EXPECT_NEAR(t["token_log_probs"][k].get<double>(), want[0].token_log_probs[k], 1e-5);
    EXPECT_EQ(t["nbest"][want.size() - 1]["text"], want.back().text) << i;
    EXPECT_FALSE(t.contains("attention"));
  }
  EXPECT_EQ(body["translations"][1]["text"], "");

  // One sentence as a string, with the server's default beam (2).
  std::tie(status, body) = post(R"({"text": "the street"})");
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["translations"][0]["text"], direct("the street", 2)[0].text);

  auto health = client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  const json h = json::parse(health->body);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["requests"], 2);
  EXPECT_EQ(h["sentences"], 4);

  auto model = client().Get("/v1/model");
  ASSERT_TRUE(model);
  const json m = json::parse(model->body);
  EXPECT_EQ(m["name"], "random");
  EXPECT_EQ(m["parameters"], served_->config().parameter_count());
  EXPECT_EQ(m["limits"]["max_sentences"], 8);
  EXPECT_EQ(m["defaults"]["beam"], 2);
  EXPECT_EQ(m["defaults"]["alpha"], 0.6);
}

// The decoding controls through the service are the translator's: a prefix, alternatives after
// it, and samples whose draws depend on the sentence's place in its request alone.
TEST_F(Service, PrefixesAlternativesAndSamplesAreTheTranslators) {
  const std::vector<std::string> text{"red dog runs", "a cat over the street"};
  const std::vector<std::string> prefix{"red", ""};
  auto [status, body] = post(
      json{{"text", text}, {"target_prefix", prefix}, {"alternatives", 3}, {"beam", 1}}.dump());
  ASSERT_EQ(status, 200) << body;
  TranslateOptions o;
  o.search.alternatives = 3;
  Translator t(reference_->model(), reference_->tokenizer(), o);
  const auto want = t.translate(text, 1, nullptr, prefix);
  for (size_t i = 0; i < text.size(); ++i) {
    const json& alternatives = body["translations"][i]["alternatives"];
    ASSERT_EQ(alternatives.size(), want[i].size()) << i;
    for (size_t j = 0; j < want[i].size(); ++j)
      EXPECT_EQ(alternatives[j]["text"], want[i][j].text) << i << " " << j;
  }
  const json sampling = {{"text", text}, {"sampling", "topk:5"}, {"nbest", 4}, {"seed", 7}};
  auto [s1, both] = post(sampling.dump());
  ASSERT_EQ(s1, 200) << both;
  json second_alone = sampling;
  second_alone["text"] = json::array({text[1]});
  auto [s2, alone] = post(second_alone.dump());
  ASSERT_EQ(s2, 200) << alone;
  ASSERT_EQ(both["translations"][1]["nbest"].size(), 4u);
  // The second sentence of the first request is the first of the second: another id, so other
  // draws; the same sentence in the same place draws the same.
  auto [s3, again] = post(sampling.dump());
  EXPECT_EQ(again["translations"], both["translations"]);
  EXPECT_EQ(alone["translations"][0]["nbest"].size(), 4u);
}

TEST_F(Service, BadRequestsGetAJsonErrorWithTheirStatus) {
  struct Case {
    std::string body;
    int status;
    const char* says;
    const char* limit;
  };
  std::string long_sentence;
  for (int i = 0; i < 30; ++i) long_sentence += "red dog ";
  const std::vector<Case> cases{
      {R"({"text": ["red dog")", 400, "malformed JSON: parse error at line 1", ""},
      {R"({"text": [1]})", 400, "\"text\"[0] must be a string, got a number", ""},
      {R"({"text": "a", "beam": "wide"})", 400, "\"beam\" must be an integer", ""},
      {R"({"text": "a", "beam": 7})", 400, "\"beam\" must be between 1 and 6", "max_beam"},
      {R"(["red dog"])", 400, "must be a JSON object", ""},
      {R"({"text": ["a","b","c","d","e","f","g","h","i"]})", 413, "at most 8", "max_sentences"},
      {json{{"text", {"a", long_sentence}}}.dump(), 400,
       "subword pieces; this server takes at most 40", "max_sentence_tokens"},
      {json{{"text", std::string(5000, 'a')}}.dump(), 413, "larger than this server takes",
       "max_body_bytes"},
  };
  for (const Case& c : cases) {
    auto [status, body] = post(c.body);
    EXPECT_EQ(status, c.status) << c.body.substr(0, 80);
    ASSERT_TRUE(body.contains("error")) << body;
    EXPECT_EQ(body["error"]["status"], c.status);
    const std::string message = body["error"]["message"];
    EXPECT_NE(message.find(c.says), std::string::npos) << message;
    if (*c.limit) {
      EXPECT_EQ(body["error"]["limit"], c.limit) << message;
    } else {
      EXPECT_FALSE(body["error"].contains("limit")) << message;
    }
  }
  auto missing = client().Get("/v2/translate");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"]["message"], "no such endpoint: GET /v2/translate");
  // Nothing refused reached the model.
  EXPECT_EQ(queue_->stats().requests, 0);
}

// A chunked body is held to --max-body-bytes as one with a Content-Length is: refused with 413
// once read, and the connection carries the next request.
TEST_F(Service, ChunkedBodiesAreHeldToTheBodyLimit) {
  RawConnection c(port_);
  ASSERT_TRUE(c.send(chunked_request(R"({"text": ["red dog runs"]})", 5)));
  auto [status, body] = c.response();
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(json::parse(body)["translations"][0]["text"], direct("red dog runs", 2)[0].text);

  const std::string big = json{{"text", std::string(5000, 'a')}}.dump();  // the limit is 4096
  ASSERT_TRUE(c.send(chunked_request(big, 1000)));
  std::tie(status, body) = c.response();
  EXPECT_EQ(status, 413) << body;
  const json error = json::parse(body)["error"];
  EXPECT_EQ(error["limit"], "max_body_bytes");
  EXPECT_EQ(error["max"], 4096);

  ASSERT_TRUE(c.send(post_request(R"({"text": "a cat"})")));
  std::tie(status, body) = c.response();
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(json::parse(body)["translations"][0]["text"], direct("a cat", 2)[0].text);
  EXPECT_EQ(queue_->stats().requests, 2);
}

// `curl -d` sends application/x-www-form-urlencoded: the body is read as JSON all the same, to
// the server's limit (httplib alone refuses such bodies over 8 KiB).
TEST_F(Service, FormEncodedBodiesAreReadAsJsonUpToTheBodyLimit) {
  server_->stop();
  serving_.join();
  ServerOptions o;
  o.port = 0;
  o.limits.max_body_bytes = 65536;
  o.defaults.search.beam = 2;
  start(o, json{{"name", "random"}});
  const std::string spaced = R"({"text": "red dog")" + std::string(9000, ' ') + "}";
  auto res = client().Post("/v1/translate", spaced, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["translations"][0]["text"], direct("red dog", 2)[0].text);
  res = client().Post("/v1/translate", spaced + std::string(60000, ' '),
                      "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(json::parse(res->body)["error"]["max"], 65536) << res->body;
}

TEST_F(Service, EmptyListsAndUnicodeText) {
  auto [status, body] = post(R"({"text": []})");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body["translations"], json::array());
  const std::string unicode = "Gr\u00fc\u00dfe aus K\u00f6ln \u4e16\u754c \U0001F642 caf\u00e9";
  std::tie(status, body) = post(json{{"text", {unicode, "red dog"}}}.dump());
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["translations"][0]["text"], direct(unicode, 2)[0].text);
  EXPECT_EQ(body["translations"][1]["text"], direct("red dog", 2)[0].text);
  std::tie(status, body) = post("{\"text\": [\"caf\xc3\"]}");  // a UTF-8 sequence cut short
  EXPECT_EQ(status, 400);
  EXPECT_NE(body["error"]["message"].get<std::string>().find("malformed JSON"), std::string::npos);
}

TEST_F(Service, AttentionComesBackAsTheModelComputesIt) {
  auto [status, body] = post(R"({"text": ["a red cat", "the dog"], "attention": true})");
  ASSERT_EQ(status, 200) << body;
  for (const std::string text : {"a red cat", "the dog"}) {
    const json& a = body["translations"][text == "a red cat" ? 0 : 1]["attention"];
    const Translation want = direct(text, 2, /*attention=*/true)[0];
    ASSERT_TRUE(want.attention);
    EXPECT_EQ(a["source_ids"].get<std::vector<int32_t>>(), want.attention->source);
    EXPECT_EQ(a["target_ids"].get<std::vector<int32_t>>(), want.attention->target);
    const int64_t ls = static_cast<int64_t>(want.attention->source.size());
    const int64_t lt = static_cast<int64_t>(want.attention->target.size());
    ASSERT_EQ(a["source_tokens"].size(), static_cast<size_t>(ls));
    ASSERT_EQ(a["target_input_tokens"][0], "<s>");
    for (const char* kind : {"encoder_self", "decoder_self", "cross"}) {
      const std::vector<Tensor>& mine =
          std::string(kind) == "encoder_self"   ? want.attention->encoder_self
          : std::string(kind) == "decoder_self" ? want.attention->decoder_self
                                                : want.attention->cross;
      ASSERT_EQ(a[kind].size(), 2u) << kind;  // layers
      for (int l = 0; l < 2; ++l) {
        ASSERT_EQ(a[kind][l].size(), 4u) << kind;  // heads
        for (int h = 0; h < 4; ++h) {
          const json& w = a[kind][l][h];
          ASSERT_EQ(static_cast<int64_t>(w.size()), std::string(kind) == "encoder_self" ? ls : lt);
          for (size_t i = 0; i < w.size(); ++i) {
            double sum = 0;
            for (size_t j = 0; j < w[i].size(); ++j) {
              const double x = w[i][j];
              sum += x;
              EXPECT_NEAR(x, mine[l].f32()[(h * mine[l].dim(1) + i) * mine[l].dim(2) + j], 1e-6);
              if (std::string(kind) == "decoder_self" && j > i) {
                EXPECT_EQ(x, 0.0);
              }
            }
            EXPECT_NEAR(sum, 1.0, 1e-5) << kind << " " << l << " " << h << " " << i;
          }
        }
      }
    }
  }
}

TEST_F(Service, ConcurrentClientsEachGetTheirOwnTranslations) {
  const char* const words[] = {"red", "dog", "runs", "over", "the", "street", "a", "cat"};
  std::vector<std::string> sentences;
  for (int i = 0; i < 24; ++i)
    sentences.push_back(std::string(words[i % 8]) + " " + words[(i * 3 + 1) % 8] + " " +
                        words[(i * 5 + 2) % 8]);
  std::vector<std::string> got(sentences.size());
  std::vector<int> statuses(sentences.size());
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&, c] {
      httplib::Client cli = client();
      for (size_t i = static_cast<size_t>(c); i < sentences.size(); i += 8) {
        auto res =
            cli.Post("/v1/translate", json{{"text", {sentences[i]}}}.dump(), "application/json");
        statuses[i] = res ? res->status : -1;
        if (res && res->status == 200) got[i] = json::parse(res->body)["translations"][0]["text"];
      }
    });
  for (auto& t : clients) t.join();
  for (size_t i = 0; i < sentences.size(); ++i) {
    EXPECT_EQ(statuses[i], 200) << i;
    EXPECT_EQ(got[i], direct(sentences[i], 2)[0].text) << sentences[i];
  }
  EXPECT_EQ(queue_->stats().requests, 24);
}

TEST_F(Service, ABurstOfNewConnectionsIsAllAnswered) {
  // 128 clients connecting at the same moment: more than a short listen backlog holds.
  constexpr int kClients = 128;
  std::vector<int> statuses(kClients, 0);
  std::atomic<bool> go{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      httplib::Client cli("127.0.0.1", port_);
      cli.set_read_timeout(120, 0);
      while (!go) std::this_thread::yield();
      auto res = cli.Get("/health");
      statuses[c] = res ? res->status : -1;
    });
  go = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 200), kClients);
}

// The worker held inside its first batch, so the queue fills up.
class FullQueue : public Service {
 protected:
  void SetUp() override {
    served_ = std::make_unique<LoadedModel>(dir_->model());
    BatchingOptions b;
    b.max_queued_sentences = 10;
    b.max_requests = 3;
    b.max_wait = std::chrono::milliseconds(0);
    queue_ = std::make_unique<TranslationQueue>(
        [this](const std::vector<std::vector<int32_t>>& s, const std::vector<SentenceControls>&,
               const TranslateOptions&) {
          std::unique_lock<std::mutex> lock(mutex_);
          ++batches_;
          changed_.notify_all();
          changed_.wait(lock, [&] { return open_; });
          return Translations(s.size(), std::vector<Translation>(1));
        },
        b);
    ServerOptions o;
    o.port = 0;
    start(o, json{{"name", "held"}});
  }
  void TearDown() override {
    open();
    Service::TearDown();
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  int batches_ = 0;
  bool open_ = false;
};

TEST_F(FullQueue, AFullQueueAnswers503AtOnceAndTheAdmittedRequestsAreStillAnswered) {
  std::vector<int> statuses(3, 0);
  std::vector<std::thread> waiting;
  waiting.emplace_back([&] { statuses[0] = post(R"({"text": ["red"]})").first; });
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ASSERT_TRUE(changed_.wait_for(lock, std::chrono::seconds(60), [&] { return batches_ == 1; }));
  }
  waiting.emplace_back([&] { statuses[1] = post(R"({"text": ["dog"]})").first; });
  waiting.emplace_back([&] { statuses[2] = post(R"({"text": ["cat"]})").first; });
  while (queue_->stats().queued_requests < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  // 2 sentences wait: 9 more would pass --max-queue 10.
  auto res = client().Post("/v1/translate", R"({"text": ["a","a","a","a","a","a","a","a","a"]})",
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
  json e = json::parse(res->body)["error"];
  EXPECT_EQ(e["limit"], "max_queue");
  EXPECT_EQ(e["max"], 10);
  // 3 requests are in already: one more would pass --max-requests 3.
  res = client().Post("/v1/translate", R"({"text": ["a"]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  e = json::parse(res->body)["error"];
  EXPECT_EQ(e["limit"], "max_requests");
  EXPECT_EQ(e["max"], 3);
  auto health = client().Get("/health");  // the service itself still answers
  ASSERT_TRUE(health);
  EXPECT_EQ(json::parse(health->body)["queued_sentences"], 2);
  EXPECT_EQ(json::parse(health->body)["running_requests"], 1);

  open();
  for (auto& t : waiting) t.join();
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 200}));
}

}  // namespace
}  // namespace transduce
