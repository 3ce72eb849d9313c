#include "io/safetensors.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/atomic_file.h"

// Tensor bytes are copied between memory and the file as they are; safetensors data is
// little-endian, so this is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "transduce assumes a little-endian host");

namespace transduce::io {
namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the limit the reference implementation uses
constexpr const char* kMetadataKey = "__metadata__";

std::string errno_message(int e) {
  return std::error_code(e, std::generic_category()).message();
}

std::string dump(const json& v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A JSON value as it would appear in an error message: short, with its type. Arrays and objects
// show one level ([1,[...],{...}]): dump() recurses once per level of nesting, and a header of
// 100000 nested arrays overflowed the stack (found with fuzz/safetensors_fuzz.cc).
std::string brief(const json& v) {
  std::string s;
  if (v.is_structured()) {
    s.push_back(v.is_array() ? '[' : '{');
    for (auto it = v.begin(); it != v.end() && s.size() <= 40; ++it) {
      if (it != v.begin()) s += ',';
      if (v.is_object()) {
        s += dump(it.key());
        s += ':';
      }
      if (it->is_structured())
        s += it->is_array() ? "[...]" : "{...}";
      else
        s += dump(*it);
    }
    s.push_back(v.is_array() ? ']' : '}');
  } else {
    s = dump(v);
  }
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return fmt::format("{} ({})", s, v.type_name());
}

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, CloseFile>;

void read_exact(std::FILE* f, void* out, size_t n, const std::string& path, const char* what) {
  if (n == 0) return;
  const size_t got = std::fread(out, 1, n, f);
  if (got == n) return;
  if (std::feof(f))
    fail("{}: truncated while reading {}: expected {} bytes, got {} (did the file change?)", path,
         what, n, got);
  const int e = errno;
  fail("{}: reading {} failed: {}", path, what, errno_message(e));
}

struct Entry {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

const json& field(const json& entry, const char* key, const std::string& path,
                  const std::string& name) {
  auto it = entry.find(key);
  if (it == entry.end()) fail("{}: tensor '{}' has no \"{}\" in the header", path, name, key);
  return *it;
}

// A non-negative JSON integer, or a failure naming what it is.
uint64_t unsigned_value(const json& v, const std::string& path, const std::string& name,
                        const char* what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer())
    fail("{}: tensor '{}' has a negative {}: {}", path, name, what, v.get<int64_t>());
  fail("{}: tensor '{}': each {} should be a non-negative integer, not {}", path, name, what,
       brief(v));
}

Entry parse_entry(const std::string& path, const std::string& name, const json& v) {
  if (!v.is_object())
    fail("{}: the header entry for tensor '{}' should be an object, not {}", path, name, brief(v));
  Entry e;
  e.name = name;

  const json& dtype = field(v, "dtype", path, name);
  if (!dtype.is_string())
    fail("{}: tensor '{}': \"dtype\" should be a string, not {}", path, name, brief(dtype));
  const std::string& dtype_str = dtype.get_ref<const std::string&>();
  if (!dtype_from_name(dtype_str, &e.dtype))
    fail(
        "{}: tensor '{}' has dtype \"{}\", which transduce does not support (it supports F32, "
        "BF16, F16, I32, I64, U8, I8)",
        path, name, dtype_str);

  const json& shape = field(v, "shape", path, name);
  if (!shape.is_array())
    fail("{}: tensor '{}': \"shape\" should be an array, not {}", path, name, brief(shape));
  if (shape.size() > static_cast<size_t>(Shape::kMaxDims))
    fail("{}: tensor '{}' has {} dimensions; transduce supports at most {}", path, name,
         shape.size(), Shape::kMaxDims);
  bool has_zero = false;
  for (const json& d : shape) {
    const uint64_t dim = unsigned_value(d, path, name, "dimension");
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail("{}: tensor '{}' has an absurd dimension {}", path, name, dim);
    e.shape.push_back(static_cast<int64_t>(dim));
    has_zero = has_zero || dim == 0;
  }
  // Overflow checked. Zero dimensions are left out of the product so that no partial product
  // (in Shape::numel, contiguous_strides) can overflow either.
  uint64_t numel = 1;
  uint64_t nbytes = 0;
  bool overflow = false;
  for (int64_t d : e.shape)
    if (d != 0)
      overflow = overflow || __builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel);
  overflow = overflow || numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (has_zero) numel = 0;
  overflow = overflow || __builtin_mul_overflow(numel, dtype_size(e.dtype), &nbytes);
  if (overflow) fail("{}: tensor '{}' has shape {}, too large to hold", path, name, e.shape.str());

  const json& offsets = field(v, "data_offsets", path, name);
  if (!offsets.is_array() || offsets.size() != 2)
    fail("{}: tensor '{}': \"data_offsets\" should be an array [begin, end], not {}", path, name,
         brief(offsets));
  e.begin = unsigned_value(offsets[0], path, name, "data offset");
  e.end = unsigned_value(offsets[1], path, name, "data offset");
  if (e.begin > e.end)
    fail("{}: tensor '{}' has data_offsets [{}, {}]: begin is after end", path, name, e.begin,
         e.end);
  if (e.end - e.begin != nbytes)
    fail("{}: tensor '{}' has data_offsets [{}, {}], {} bytes, but shape {} of {} needs {} bytes",
         path, name, e.begin, e.end, e.end - e.begin, e.shape.str(), dtype_name(e.dtype), nbytes);
  return e;
}

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == kMetadataKey)
      fail("{}: a tensor may not be named \"{}\": the format reserves it for metadata", path,
           kMetadataKey);
    if (!t.defined()) fail("{}: tensor '{}' has no data", path, name);
    if (t.device() != Device::CPU)
      fail("{}: tensor '{}' is on {}; copy it to the CPU before saving", path, name,
           device_name(t.device()));
    if (!t.is_contiguous())
      fail("{}: tensor '{}' is not contiguous; clone() it before saving", path, name);
    json shape = json::array();
    for (int64_t d : t.shape()) shape.push_back(d);
    json entry = json::object();
    entry["dtype"] = std::string(dtype_name(t.dtype()));
    entry["shape"] = std::move(shape);
    entry["data_offsets"] = json::array({offset, offset + t.nbytes()});
    header[name] = std::move(entry);
    offset += t.nbytes();
  }
  if (!metadata.empty()) header[kMetadataKey] = metadata;

  std::string text;
  try {
    text = header.dump();  // compact; keys sorted (json objects are std::maps)
  } catch (const json::exception&) {
    fail("{}: a tensor name or metadata string is not valid UTF-8", path);
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(text.size() >> (8 * i));

  write_file_atomically(path, [&](std::FILE* f) {
    if (std::fwrite(length, 1, 8, f) != 8) return;  // the error flag is checked by the caller
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) return;
    for (const auto& [name, t] : tensors) {  // the order the offsets were given in
      if (t.nbytes() != 0 && std::fwrite(t.raw(), 1, t.nbytes(), f) != t.nbytes()) return;
    }
  });
}

SafetensorsFile load_safetensors(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    const int e = errno;
    fail("{}: cannot open: {}", path, errno_message(e));
  }
  struct stat st;
  if (::fstat(::fileno(f.get()), &st) != 0) {
    const int e = errno;
    fail("{}: cannot stat: {}", path, errno_message(e));
  }
  if (!S_ISREG(st.st_mode)) fail("{}: not a regular file", path);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size == 0) fail("{}: the file is empty, not a safetensors file", path);
  if (file_size < 8)
    fail("{}: truncated: the file is {} bytes, too short for the 8-byte header length", path,
         file_size);

  unsigned char length[8];
  read_exact(f.get(), length, 8, path, "the header length");
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(length[i]) << (8 * i);
  if (header_len > kMaxHeaderBytes)
    fail(
        "{}: the header length field says {} bytes, over the {} byte limit: not a safetensors "
        "file?",
        path, header_len, kMaxHeaderBytes);
  if (header_len > file_size - 8)
    fail("{}: truncated: the header says it is {} bytes but only {} bytes follow the length field",
         path, header_len, file_size - 8);
  const uint64_t data_len = file_size - 8 - header_len;

  std::string text(header_len, '\0');
  read_exact(f.get(), text.data(), text.size(), path, "the header");

  // Tensor names must be unique; json::parse would silently keep only the last of duplicates.
  std::set<std::string> names;
  std::string duplicate;
  json header;
  try {
    header = json::parse(text, [&](int depth, json::parse_event_t event, json& parsed) {
      if (depth == 1 && event == json::parse_event_t::key && duplicate.empty() &&
          !names.insert(parsed.get<std::string>()).second)
        duplicate = parsed.get<std::string>();
      return true;
    });
  } catch (const json::exception& e) {
    // A parse_error, or an out_of_range for a number too large for a double ("1e999"), which
    // json::parse throws too (found by fuzz/safetensors_fuzz.cc).
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    if (const size_t p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    fail("{}: the header is not valid JSON: {}", path, what);
  }
  if (!header.is_object())
    fail("{}: the header should be a JSON object, not {}", path, brief(header));
  if (!duplicate.empty()) fail("{}: the header lists tensor '{}' more than once", path, duplicate);

  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      if (!value.is_object())
        fail("{}: \"{}\" should be an object, not {}", path, kMetadataKey, brief(value));
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string())
          fail("{}: metadata '{}' should be a string, not {}", path, mk, brief(mv));
        out.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(path, key, value));
  }

  // The data section must be covered exactly: no tensor past its end, no overlaps, no holes,
  // nothing after the last tensor.
  const Entry* last = nullptr;
  for (const Entry& e : entries)
    if (!last || e.end > last->end) last = &e;
  const uint64_t covered = last ? last->end : 0;
  if (covered > data_len)
    fail(
        "{}: truncated: the header says the data section is {} bytes (tensor '{}' ends there) "
        "but the file holds {}",
        path, covered, last->name, data_len);
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < expected)
      fail(
          "{}: tensors '{}' (bytes [{}, {})) and '{}' (bytes [{}, {})) overlap in the data section",
          path, prev->name, prev->begin, prev->end, e.name, e.begin, e.end);
    if (e.begin > expected)
      fail(
          "{}: a hole in the data section: bytes [{}, {}) belong to no tensor (the format "
          "forbids holes)",
          path, expected, e.begin);
    expected = e.end;
    prev = &e;
  }
  if (covered < data_len)
    fail("{}: {} trailing bytes: the tensors cover {} bytes of data but the file holds {}", path,
         data_len - covered, covered, data_len);

  // No holes: the tensors follow one another, in offset order, right after the header.
  for (const Entry& e : entries) {
    Tensor t = Tensor::empty(e.shape, e.dtype);
    read_exact(f.get(), t.raw(), t.nbytes(), path, fmt::format("tensor '{}'", e.name).c_str());
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

}  // namespace transduce::io
