#include "serve/web_page.h"

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace transduce {

namespace web {
// Defined in the generated web_assets.cc (cmake/embed_files.cmake).
extern const std::string_view kAttentionJs, kStyleCss, kPageHtml, kExportHtml;
}  // namespace web

namespace {

// Replaces the one occurrence of `marker` in `page`.
void fill(std::string& page, std::string_view marker, std::string_view content) {
  const size_t at = page.find(marker);
  TD_CHECK(at != std::string::npos, "the page template has no {}", marker);
  page.replace(at, marker.size(), content);
}

std::string with_style_and_script(std::string_view page_template) {
  std::string page(page_template);
  fill(page, "/*@style*/", web::kStyleCss);
  fill(page, "/*@script*/", web::kAttentionJs);
  return page;
}

}  // namespace

std::string service_page() {
  return with_style_and_script(web::kPageHtml);
}

std::string attention_page(const nlohmann::json& data) {
  const std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Inside <script>, "</script" or "<!--" in the text (a "</s>" piece, say) would end or upset
  // the element: JSON has '<' only inside strings, where "\u003c" means the same.
  std::string safe;
  safe.reserve(json.size());
  for (char c : json) {
    if (c == '<')
      safe += "\\u003c";
    else
      safe += c;
  }
  // The templates' markers are filled before the data, so text in the data is never taken for one.
  std::string page = with_style_and_script(web::kExportHtml);
  fill(page, "/*@data*/", safe);
  return page;
}

}  // namespace transduce
