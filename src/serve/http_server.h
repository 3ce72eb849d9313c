// The translation service over HTTP (cpp-httplib): the JSON API of serve/api.h in front of a
// TranslationQueue, and the web page. Each connection has a thread that parses its requests and
// waits for the queue's worker; the translation itself happens on the worker alone.
//
//   GET  /               the web page: translate a sentence and look at its attention
//   GET  /health         {"status": "ok", queue counters}; 503 {"status": "stopping"} on the way
//   out GET  /v1/model       the model's configuration, vocabulary size, parameter count, limits
//   POST /v1/translate   see serve/api.h
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/api.h"
#include "serve/translation_queue.h"

namespace httplib {
class ContentReader;
class Server;
struct Response;
}  // namespace httplib

namespace transduce {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  ServiceLimits limits;
  TranslateOptions defaults;  // search settings a request does not give
};

class TranslationServer {
 public:
  // Connection threads beyond the queue's max_requests: a request the queue refuses, /health and
  // the page are answered at once even when every admitted request holds a thread.
  static constexpr int kSpareThreads = 8;

  // `model` is what GET /v1/model answers, with "name" (which translations name too).
  TranslationServer(const Tokenizer& tokenizer, TranslationQueue& queue, nlohmann::json model,
                    ServerOptions options);
  ~TranslationServer();

  // Opens the listening socket; returns its port. A port in use is a transduce::Error.
  int bind();
  // Answers requests until stop(); returns once every request in progress has been answered.
  void serve();
  // From any thread, before or after serve() starts: stop accepting connections; requests being
  // handled are still answered.
  void stop();

 private:
  // A body over the limit is read on (and dropped) up to this many times the limit before the
  // 413, so that the connection can carry the next request.
  static constexpr uint64_t kDrainFactor = 16;

  void routes();
  // The request body, read through `read` and held to limits.max_body_bytes (a 413 ApiError
  // beyond it, whether sent with a Content-Length or chunked); a body cut short is a 400.
  std::string read_body(const httplib::ContentReader& read, httplib::Response& res) const;
  ApiError body_too_large() const;

  const Tokenizer& tokenizer_;
  TranslationQueue& queue_;
  nlohmann::json model_;
  std::string model_name_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
  int listen_socket_ = -1;
  // stop() before, during or after serve()'s start (see stop()).
  std::atomic<bool> stop_requested_{false}, serve_entered_{false}, serve_done_{false};
};

}  // namespace transduce
