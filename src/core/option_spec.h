// An option declared once: its key, help, kind, range and how it is read from and written into the
// struct it belongs to. Lists of these (train/train_options.h, decode/search_options.h) are the one
// declaration from which the command line's flags, configuration files, saved JSON, the service's
// request fields and the Python keyword arguments are all derived.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_number.h"
#include "core/shortest_float.h"

namespace transduce {

// What every option has, whatever struct it sets.
struct OptionInfo {
  // How its value is written: in JSON a number (integer or real), a string, one of `choices`, a
  // list of them, or true/false.
  enum class Kind { kInteger, kReal, kText, kChoice, kChoices, kSwitch };

  std::string key;  // JSON, configuration files, Python; the flag is --key with '-' for '_'
  std::string help;
  Kind kind = Kind::kInteger;
  std::vector<std::string> choices;  // kChoice and kChoices
  // The range of a number: at least `min` (above, when min_open), at most `max` (below, when
  // max_open).
  std::optional<double> min, max;
  bool min_open = false, max_open = false;
  std::string old_key;     // the key older saved files used, read when `key` is absent
  std::string short_flag;  // a one-letter flag the command line also takes ("-o"), if any

  std::string flag() const;  // "--batch-tokens"
  // What is wrong with the number v against the range ("must be at least 1"), if anything.
  std::optional<std::string> range_problem(double v) const;
  // The range in words, for help texts and errors ("at least 0", "between 1 and 16").
  std::string range_text() const;
};

// One option of the struct Options.
template <typename Options>
struct OptionSpec : OptionInfo {
  // The option's value in `o` as JSON, and `v` written into `o`; set() fails with "must be ..."
  // (without the key) when v is not of the option's kind, its type's range or its range.
  std::function<nlohmann::json(const Options& o)> get;
  std::function<void(const nlohmann::json& v, Options& o)> set;
};

// The option of `specs` with this key (nullptr: none).
template <typename Options>
const OptionSpec<Options>* find_option(const std::vector<OptionSpec<Options>>& specs,
                                       std::string_view key) {
  for (const OptionSpec<Options>& s : specs)
    if (s.key == key) return &s;
  return nullptr;
}

// `message` with every key of `specs` in it (a whole word) spelled as `name` says: a library
// error said in the words of its caller ("max_steps" -> "--max-steps").
std::string name_options(std::string message, const std::vector<std::string>& keys,
                         const std::function<std::string(std::string_view key)>& name);
template <typename Options>
std::vector<std::string> option_keys(const std::vector<OptionSpec<Options>>& specs) {
  std::vector<std::string> keys;
  for (const OptionSpec<Options>& s : specs) keys.push_back(s.key);
  return keys;
}

// Building the lists.
namespace option {

// A value as a message quotes it (bytes that are not UTF-8 shown as U+FFFD, not thrown on).
std::string shown(const nlohmann::json& v);
// "\"a\", \"b\" or \"c\"" (joined by `last`).
std::string quoted_list(const std::vector<std::string>& names, std::string_view last);
// Fails unless v is a UTF-8 string.
void expect_text(const nlohmann::json& v);

struct Range {
  std::optional<double> min, max;
  bool min_open = false, max_open = false;
};
inline Range at_least(double v) {
  return {v, std::nullopt};
}
inline Range above(double v) {
  return {v, std::nullopt, true};
}
inline Range from_below(double lo, double hi) {  // [lo, hi)
  return {lo, hi, false, true};
}
inline Range within(double lo, double hi) {
  return {lo, hi};
}

// Where an option lives in Options: a field, or a field of a field.
template <typename Options, typename T>
using Ref = std::function<T&(Options&)>;

template <typename Options, typename T>
Ref<Options, T> field(T Options::*member) {
  return [member](Options& o) -> T& { return o.*member; };
}

template <typename Options, typename T>
T& at(const Ref<Options, T>& ref, const Options& o) {
  return ref(const_cast<Options&>(o));  // read only: get() takes const options
}

template <typename Options>
OptionSpec<Options> base(std::string key, std::string help, OptionInfo::Kind kind,
                         const Range& range = {}) {
  OptionSpec<Options> s;
  s.key = std::move(key);
  s.help = std::move(help);
  s.kind = kind;
  s.min = range.min;
  s.max = range.max;
  s.min_open = range.min_open;
  s.max_open = range.max_open;
  return s;
}

// An integer or real option: JSON numbers of T's type within the range.
template <typename Options, typename T>
OptionSpec<Options> number(std::string key, std::string help, Ref<Options, T> ref,
                           const Range& range = {}) {
  OptionSpec<Options> s = base<Options>(
      std::move(key), std::move(help),
      std::is_floating_point_v<T> ? OptionInfo::Kind::kReal : OptionInfo::Kind::kInteger, range);
  s.get = [ref](const Options& o) {
    const T x = at(ref, o);
    if constexpr (std::is_same_v<T, float>) return nlohmann::json(shortest_float(x));
    return nlohmann::json(x);
  };
  s.set = [ref, info = static_cast<const OptionInfo&>(s)](const nlohmann::json& v, Options& o) {
    if (!v.is_number())
      fail("must be {}, not {}", std::is_floating_point_v<T> ? "a number" : "an integer",
           v.type_name());
    const std::optional<T> x = json_number<T>(v);
    if (!x)
      fail("must be an integer within [{}, {}], got {}", std::numeric_limits<T>::min(),
           std::numeric_limits<T>::max(), shown(v));
    if (const std::optional<std::string> problem = info.range_problem(static_cast<double>(*x)))
      fail("{}, got {}", *problem, shown(v));
    ref(o) = *x;
  };
  return s;
}
template <typename Options, typename T>
OptionSpec<Options> number(std::string key, std::string help, T Options::*member,
                           const Range& range = {}) {
  return number<Options, T>(std::move(key), std::move(help), field(member), range);
}

// A text option: any UTF-8 string.
template <typename Options>
OptionSpec<Options> text(std::string key, std::string help, std::string Options::*member) {
  OptionSpec<Options> s = base<Options>(std::move(key), std::move(help), OptionInfo::Kind::kText);
  s.get = [member](const Options& o) { return nlohmann::json(o.*member); };
  s.set = [member](const nlohmann::json& v, Options& o) {
    expect_text(v);
    o.*member = v.get<std::string>();
  };
  return s;
}

// A switch: true or false.
template <typename Options>
OptionSpec<Options> switch_(std::string key, std::string help, bool Options::*member) {
  OptionSpec<Options> s = base<Options>(std::move(key), std::move(help), OptionInfo::Kind::kSwitch);
  s.get = [member](const Options& o) { return nlohmann::json(o.*member); };
  s.set = [member](const nlohmann::json& v, Options& o) {
    if (!v.is_boolean()) fail("must be true or false, got {}", shown(v));
    o.*member = v.get<bool>();
  };
  return s;
}

// One of `names`: E written by to_name, read by from_name (std::optional<E>; nullopt: unknown).
template <typename Options, typename E, typename ToName, typename FromName>
OptionSpec<Options> choice(std::string key, std::string help, Ref<Options, E> ref,
                           std::vector<std::string> names, ToName to_name, FromName from_name) {
  OptionSpec<Options> s = base<Options>(std::move(key), std::move(help), OptionInfo::Kind::kChoice);
  s.choices = names;
  s.get = [ref, to_name](const Options& o) {
    return nlohmann::json(std::string(to_name(at(ref, o))));
  };
  s.set = [ref, names, from_name](const nlohmann::json& v, Options& o) {
    const std::optional<E> e = v.is_string() ? from_name(v.get<std::string>()) : std::optional<E>{};
    if (!e) fail("must be {}, got {}", quoted_list(names, "or"), shown(v));
    ref(o) = *e;
  };
  return s;
}

// One of `names`, held as the name itself.
template <typename Options>
OptionSpec<Options> text_choice(std::string key, std::string help, std::string Options::*member,
                                std::vector<std::string> names) {
  return choice<Options, std::string>(
      std::move(key), std::move(help), field(member), names,
      [](const std::string& name) { return name; },
      [names](const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end()
                   ? std::optional<std::string>(name)
                   : std::nullopt;
      });
}

// A value on its own, for the options below that wrap another kind.
template <typename T>
struct Boxed {
  T value{};
};

// `inner` for an option that may be left unset: JSON null unsets it.
template <typename Options, typename T>
OptionSpec<Options> optional_of(const OptionSpec<Boxed<T>>& inner,
                                std::optional<T> Options::*member) {
  OptionSpec<Options> s;
  static_cast<OptionInfo&>(s) = inner;
  s.get = [get = inner.get, member](const Options& o) {
    const std::optional<T>& v = o.*member;
    return v ? get(Boxed<T>{*v}) : nlohmann::json(nullptr);
  };
  s.set = [set = inner.set, member](const nlohmann::json& v, Options& o) {
    if (v.is_null()) {
      (o.*member).reset();
      return;
    }
    Boxed<T> b;
    set(v, b);
    o.*member = std::move(b.value);
  };
  return s;
}

// A number that may be left unset.
template <typename Options, typename T>
OptionSpec<Options> optional_number(std::string key, std::string help,
                                    std::optional<T> Options::*member, const Range& range = {}) {
  return optional_of<Options, T>(
      number<Boxed<T>, T>(std::move(key), std::move(help), &Boxed<T>::value, range), member);
}

// One of `names` that may be left unset.
template <typename Options>
OptionSpec<Options> optional_choice(std::string key, std::string help,
                                    std::optional<std::string> Options::*member,
                                    std::vector<std::string> names) {
  return optional_of<Options, std::string>(
      text_choice<Boxed<std::string>>(std::move(key), std::move(help), &Boxed<std::string>::value,
                                      std::move(names)),
      member);
}

template <typename Options>
OptionSpec<Options> with_old_key(OptionSpec<Options> s, std::string old_key) {
  s.old_key = std::move(old_key);
  return s;
}

template <typename Options>
OptionSpec<Options> with_short_flag(OptionSpec<Options> s, std::string short_flag) {
  s.short_flag = std::move(short_flag);
  return s;
}

}  // namespace option

}  // namespace transduce
