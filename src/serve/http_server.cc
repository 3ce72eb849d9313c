#include "serve/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "decode/search_options.h"
#include "serve/web_page.h"

namespace transduce {

namespace {

using nlohmann::json;

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Subword pieces and decoded text are UTF-8; replace rather than throw if one is not.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  send_json(res, e.status, error_json(e));
}

// Why the queue did not take a request: a 503 naming the limit, if one was hit.
ApiError refusal(TranslationQueue::Admission::Status status, const BatchingOptions& b) {
  switch (status) {
    case TranslationQueue::Admission::Full:
      return ApiError(503,
                      fmt::format("the queue is full ({} sentences wait); try again shortly",
                                  b.max_queued_sentences),
                      "max_queue", b.max_queued_sentences);
    case TranslationQueue::Admission::Busy:
      return ApiError(
          503,
          fmt::format("{} requests are being served already; try again shortly", b.max_requests),
          "max_requests", b.max_requests);
    default:
      return ApiError(503, "the server is shutting down");
  }
}

}  // namespace

TranslationServer::TranslationServer(const Tokenizer& tokenizer, TranslationQueue& queue,
                                     json model, ServerOptions options)
    : tokenizer_(tokenizer),
      queue_(queue),
      model_(std::move(model)),
      model_name_(model_.value("name", "")),
      options_(std::move(options)),
      http_(std::make_unique<httplib::Server>()) {
  const size_t threads = static_cast<size_t>(queue_.options().max_requests + kSpareThreads);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(static_cast<size_t>(options_.limits.max_body_bytes));
  http_->set_keep_alive_max_count(1000);
  // SO_REUSEADDR alone: a restart may reuse the port at once, but a second server cannot share
  // it with a running one (httplib's default, SO_REUSEPORT, lets both listen and split the
  // connections between them). The socket is remembered for bind().
  http_->set_socket_options([this](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_socket_ = sock;
  });
  routes();
}

TranslationServer::~TranslationServer() = default;

void TranslationServer::routes() {
  const std::string page = service_page();
  http_->Get("/", [page](const httplib::Request&, httplib::Response& res) {
    res.set_content(page, "text/html; charset=utf-8");
  });

  http_->Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (queue_.stopping()) return send_json(res, 503, {{"status", "stopping"}});
    const QueueStats s = queue_.stats();
    send_json(res, 200,
              {{"status", "ok"},
               {"queued_requests", s.queued_requests},
               {"queued_sentences", s.queued_sentences},
               {"running_requests", s.running_requests},
               {"batches", s.batches},
               {"requests", s.requests},
               {"sentences", s.sentences}});
  });

  json model = model_;
  const ServiceLimits& l = options_.limits;
  const BatchingOptions& b = queue_.options();
  model["limits"] = {
      {"max_body_bytes", l.max_body_bytes},           {"max_sentences", l.max_sentences},
      {"max_sentence_tokens", l.max_sentence_tokens}, {"max_beam", l.max_beam},
      {"max_queue", b.max_queued_sentences},          {"max_requests", b.max_requests}};
  model["batching"] = {{"batch_tokens", b.batch_tokens},
                       {"batch_requests", b.batch_requests},
                       {"max_wait_ms", static_cast<double>(b.max_wait.count()) / 1000.0}};
  model["defaults"] = search_options_json(options_.defaults.search, kRequestSearchOptions);
  http_->Get("/v1/model", [model](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, model);
  });

  // The body is read here rather than by httplib, which holds a chunked body to no limit and a
  // form-encoded one (curl -d's content type) to 8 KiB of its own.
  http_->Post("/v1/translate", [this](const httplib::Request&, httplib::Response& res,
                                      const httplib::ContentReader& read) {
    try {
      const std::string body = read_body(read, res);
      const TranslateRequest request =
          parse_translate_request(body, tokenizer_, options_.limits, options_.defaults);
      std::vector<std::vector<Translation>> results;
      if (!request.sources.empty()) {
        TranslationQueue::Admission admission =
            queue_.submit(request.sources, request.options, request.controls);
        if (admission.status != TranslationQueue::Admission::Queued) {
          res.set_header("Retry-After", "1");
          throw refusal(admission.status, queue_.options());
        }
        try {
          results = admission.result.get();
        } catch (const std::exception& e) {
          throw ApiError(500, std::string("translation failed: ") + e.what());
        }
      }
      send_json(res, 200, translate_response(request, results, tokenizer_, model_name_));
    } catch (const ApiError& e) {
      send_error(res, e);
    }
  });

  // What httplib answers by itself (no such path, a body over the limit, an unreadable request)
  // gets a JSON body too.
  http_->set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    switch (res.status) {
      case 404:
        return send_error(
            res, ApiError(404, fmt::format("no such endpoint: {} {}", req.method, req.path)));
      case 413:
        return send_error(res, body_too_large());
      case 400:
        return send_error(res, ApiError(400, "the request is not valid HTTP"));
      default:
        return send_error(res, ApiError(res.status, fmt::format("HTTP error {}", res.status)));
    }
  });
  http_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        send_error(res, ApiError(500, "internal error: " + what));
      });
}

ApiError TranslationServer::body_too_large() const {
  return ApiError(413,
                  fmt::format("the body is larger than this server takes ({} bytes)",
                              options_.limits.max_body_bytes),
                  "max_body_bytes", options_.limits.max_body_bytes);
}

std::string TranslationServer::read_body(const httplib::ContentReader& read,
                                         httplib::Response& res) const {
  const auto limit = static_cast<uint64_t>(options_.limits.max_body_bytes);
  std::string body;
  uint64_t seen = 0;
  // Past the limit the rest of the body is read and dropped, so that the answer comes after it
  // and the connection stays usable; a body over kDrainFactor times the limit is not waited for.
  const bool complete = read([&](const char* data, size_t n) {
    seen += n;
    if (seen <= limit) body.append(data, n);
    return seen <= limit * kDrainFactor;
  });
  // httplib answers 413 itself (and reads nothing) for a Content-Length over the limit.
  if (seen > limit || res.status == 413) {
    if (!complete) res.set_header("Connection", "close");
    throw body_too_large();
  }
  if (!complete) throw ApiError(400, "the body could not be read (cut short or badly chunked)");
  return body;
}

int TranslationServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
    if (port < 0) fail("cannot listen on {}: no free port", options_.host);
  } else if (!http_->bind_to_port(options_.host, port)) {
    fail("cannot listen on {}:{}: the address is in use or not this machine's", options_.host,
         port);
  }
  // httplib listens with a backlog of 5: a burst of new connections (64 clients starting at
  // once) overflows it and some are dropped. Listening again only sets the backlog.
  if (::listen(listen_socket_, SOMAXCONN) != 0)
    fail("cannot listen on {}:{}: {}", options_.host, port, std::strerror(errno));
  return port;
}

void TranslationServer::serve() {
  serve_entered_ = true;
  if (!stop_requested_) http_->listen_after_bind();
  serve_done_ = true;
}

void TranslationServer::stop() {
  stop_requested_ = true;
  if (!serve_entered_) return;  // serve() has yet to check the request: it will not listen
  // httplib's stop() does nothing until its loop has started: serve() may be just before it (a
  // signal at startup, or a test that stops a server it has just started).
  while (!serve_done_) {
    if (http_->is_running()) {
      http_->stop();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace transduce
