#include "llm/study.hpp"

#include <set>

#include <fmt/core.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::llm {
namespace {

using io::Record;

// Every key of `r` must be one of `allowed`: a misspelt key is an error, not a silent default.
void check_keys(const Record& r, std::initializer_list<std::string_view> allowed) {
  for (auto it = r.json().begin(); it != r.json().end(); ++it) {
    bool ok = false;
    for (auto a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      r.fail_field(it.key(), fmt::format("is not a known key (known: {})", list));
    }
  }
}

std::filesystem::path resolve(const std::filesystem::path& base_dir, const std::string& p) {
  const std::filesystem::path path(p);
  return path.is_absolute() || base_dir.empty() ? path : base_dir / path;
}

void read_sampling(const Record& s, RunOptions& o) {
  check_keys(s, {"temperature", "top_p", "top_k", "seed", "frequency_penalty", "presence_penalty"});
  if (auto v = s.opt_number("temperature")) {
    if (*v < 0) s.fail_field("temperature", "must be >= 0");
    o.temperature = *v;
  }
  if (auto v = s.opt_number("top_p")) {
    if (*v < 0 || *v > 1) s.fail_field("top_p", "must be in [0, 1]");
    o.top_p = *v;
  }
  if (s.contains("top_k")) o.top_k = s.opt_integer("top_k", 0);  // null: not sent
  if (s.has("seed")) o.seed = s.unsigned_integer("seed");
  for (const char* k : {"frequency_penalty", "presence_penalty"}) {
    if (auto v = s.opt_number(k)) {
      if (*v < -2 || *v > 2) s.fail_field(k, "must be in [-2, 2]");
      (std::string_view(k) == "frequency_penalty" ? o.frequency_penalty : o.presence_penalty) = *v;
    }
  }
}

StudySystem read_system(const Record& r, const std::filesystem::path& base_dir) {
  check_keys(
      r, {"name", "endpoint", "endpoints", "model", "api", "api_key_env", "system", "inject", "sampling",
          "max_tokens", "extra_body", "system_prompt", "model_file", "concurrency", "timeout_s", "retries"});
  StudySystem sys;
  sys.name = r.string("name");
  if (!valid_system_name(sys.name)) {
    r.fail_field("name",
                 "must be 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or '-' (it names "
                 "the system's run folder)");
  }
  RunOptions& o = sys.options;
  if (r.has("endpoint") && r.has("endpoints"))
    r.fail_field("endpoints", "give 'endpoint' or 'endpoints', not both");
  if (auto e = r.opt_string("endpoint")) o.endpoints = {*e};
  if (auto e = r.opt_strings("endpoints")) o.endpoints = *e;
  if (auto s = r.opt_string("system")) {
    if (*s != "reference") r.fail_field("system", "must be \"reference\" (the simulated reference system)");
    o.system = *s;
  }
  if (o.system.empty() && o.endpoints.empty()) {
    r.fail_field("endpoint", "is missing (give 'endpoint' or 'endpoints', or \"system\": \"reference\")");
  }
  if (!o.system.empty() && !o.endpoints.empty()) r.fail_field("system", "is given together with an endpoint");
  if (auto m = r.opt_string("model")) o.model = *m;
  if (o.system.empty() && o.model.empty())
    r.fail_field("model", "is missing (the model name sent in requests)");
  if (auto a = r.opt_string("api")) {
    if (*a != "chat" && *a != "completions") r.fail_field("api", "must be \"chat\" or \"completions\"");
    o.api = *a;
  }
  if (auto k = r.opt_string("api_key_env")) {
    if (k->empty()) r.fail_field("api_key_env", "must name an environment variable");
    o.api_key_env = *k;
  }
  if (auto i = r.opt_string("inject")) {
    if (o.system.empty()) r.fail_field("inject", "applies only to \"system\": \"reference\"");
    o.inject = *i;
  }
  if (auto s = r.opt_object("sampling")) read_sampling(*s, o);
  if (auto m = r.opt_integer("max_tokens", 1)) o.max_tokens = *m;
  if (r.has("extra_body")) {
    const io::Json& eb = r.at("extra_body");
    if (!eb.is_object()) r.fail_field("extra_body", "must be a JSON object");
    o.extra_body = io::to_line(eb);
  }
  if (auto s = r.opt_string("system_prompt")) o.system_prompt = *s;
  if (auto f = r.opt_string("model_file")) {
    if (f->empty()) r.fail_field("model_file", "must be a path");
    o.model_file = resolve(base_dir, *f).string();
  }
  if (auto c = r.opt_integer("concurrency", 1, 1024)) o.concurrency = static_cast<std::size_t>(*c);
  if (auto t = r.opt_number("timeout_s")) {
    if (*t <= 0 || *t > 86400) r.fail_field("timeout_s", "must be in (0, 86400]");
    o.timeout_s = *t;
  }
  if (auto n = r.opt_integer("retries", 0, 100)) o.retries = static_cast<int>(*n);
  return sys;
}

}  // namespace

bool valid_system_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Study parse_study(std::string_view text, const std::string& where, const std::filesystem::path& base_dir) {
  const io::Json j = io::parse_json(text, where);
  const Record r = Record::of(j, where);
  check_keys(r, {"format", "seed", "selection", "systems", "description"});
  const std::string format = r.string("format");
  if (format != kStudyFormat) r.fail_field("format", fmt::format("must be \"{}\"", kStudyFormat));
  Study st;
  st.sha256 = io::sha256_hex(text);
  if (r.has("seed")) st.seed = r.unsigned_integer("seed");
  if (auto sel = r.opt_object("selection")) {
    check_keys(*sel, {"bases", "templates", "views", "base_ids_file", "seed"});
    if (auto n = sel->opt_integer("bases", 1)) st.selection.bases = static_cast<std::size_t>(*n);
    if (auto t = sel->opt_strings("templates")) st.selection.templates = *t;
    if (auto v = sel->opt_strings("views")) st.selection.views = *v;
    if (auto f = sel->opt_string("base_ids_file")) st.selection.base_ids_file = resolve(base_dir, *f);
    if (sel->has("seed")) st.selection.seed = sel->unsigned_integer("seed");
  }
  const auto systems = r.objects("systems");
  if (systems.empty()) r.fail_field("systems", "must list at least one system");
  std::set<std::string> names;
  for (const auto& s : systems) {
    st.systems.push_back(read_system(s, base_dir));
    if (!names.insert(st.systems.back().name).second) {
      s.fail_field("name", fmt::format("'{}' is used by two systems (each names its own run folder)",
                                       st.systems.back().name));
    }
  }
  return st;
}

Study load_study(const std::filesystem::path& file) {
  const std::string text = io::read_file(file, std::size_t{16} << 20);
  return parse_study(text, file.string(), file.parent_path());
}

}  // namespace numcheck::llm
