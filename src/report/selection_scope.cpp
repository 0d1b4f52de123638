#include "report/selection_scope.hpp"

#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "orbit/selection.hpp"
#include "report/scores.hpp"

namespace numcheck::report {

namespace {

using OJ = io::OrderedJson;

// What makes two selections the same: the views and the bases.
OJ identity(const OJ& sel) {
  if (sel.is_null()) return nullptr;
  return OJ{{"views", sel.value("views", OJ())}, {"base_ids", sel.value("base_ids", OJ())}};
}

}  // namespace

orbit::Benchmark scope_to_scores(orbit::Benchmark bench, const std::vector<std::filesystem::path>& scores) {
  std::optional<OJ> first;
  std::string first_file;
  for (const auto& file : scores) {
    OJ sel;
    if (const auto side = find_sidecar(file)) {
      const OJ m = io::parse_ordered_json(io::read_file(*side, std::size_t{1} << 28), side->string());
      if (m.is_object() && m.contains("selection")) sel = m["selection"];
    }
    if (!first) {
      first = sel;
      first_file = file.string();
    } else if (identity(*first) != identity(sel)) {
      fail(ErrorCode::kUsage,
           "{} and {} were scored on different selections of the benchmark ({} and {}); a report compares "
           "systems on the same bases and views: run both on the same selection",
           first_file, file.string(),
           first->is_null() ? std::string("the whole benchmark")
                            : fmt::format("{} bases", first->value("bases", std::size_t{0})),
           sel.is_null() ? std::string("the whole benchmark")
                         : fmt::format("{} bases", sel.value("bases", std::size_t{0})));
    }
  }
  if (!first || first->is_null()) return bench;
  const orbit::Selection s = orbit::selection_from_json(*first, bench, first_file + " (manifest selection)");
  if (s.whole()) return bench;
  return orbit::restrict(bench, s);
}

std::string selection_note(const OJ& sel) {
  const OJ spec = sel.value("spec", OJ::object());
  std::string how;
  auto add = [&how](const std::string& part) { how += (how.empty() ? "" : "; ") + part; };
  if (spec.contains("bases") && spec["bases"].is_number()) {
    add(fmt::format("a stratified sample of {} bases across templates (seed {})",
                    spec["bases"].get<std::size_t>(), spec.value("seed", std::uint64_t{0})));
  }
  if (spec.contains("templates") && spec["templates"].is_array()) {
    std::string t;
    for (const auto& x : spec["templates"]) t += (t.empty() ? "" : ", ") + x.get<std::string>();
    add("templates " + t);
  }
  if (spec.contains("base_ids_file") && spec["base_ids_file"].is_object()) {
    add(fmt::format("base ids from {}", spec["base_ids_file"].value("path", std::string("a file"))));
  }
  std::string views;
  const OJ view_list = sel.value("views", OJ::array());
  for (const auto& v : view_list) views += (views.empty() ? "" : ", ") + v.get<std::string>();
  add("views " + views);
  return fmt::format(
      "Scope: this report covers a selection of {} of the benchmark's {} bases and {} prompts ({}). Every "
      "metric is computed on the selection only: denominators count the selected bases and prompts, a "
      "family is tested on its selected eligible bases, and prompts that were not asked are counted "
      "nowhere (neither as failures nor as missing).",
      sel.value("bases", std::size_t{0}), sel.value("of_bases", std::size_t{0}),
      sel.value("prompts", std::size_t{0}), how);
}

}  // namespace numcheck::report
