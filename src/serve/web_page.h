// The web pages, built from the files in serve/web/ (compiled into the binary): one
// attention renderer (attention.js) for the service's page and for exported files.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace transduce {

// The service's page (GET /): a text box, Translate, the translation and its attention.
std::string service_page();

// A self-contained HTML file showing `data`, an attention file as `transduce translate
// --attention` writes it: {"model", "sentences": [{"line", "source", "translation", "score",
// "attention"}]}.
std::string attention_page(const nlohmann::json& data);

}  // namespace transduce
