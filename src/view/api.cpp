#include "view/api.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::view {
namespace {

namespace fs = std::filesystem;

struct StaticFile {
  const char* url;
  const char* file;
  const char* type;
};
constexpr std::array<StaticFile, 4> kStaticFiles = {{
    {"/", "index.html", "text/html; charset=utf-8"},
    {"/index.html", "index.html", "text/html; charset=utf-8"},
    {"/view.js", "view.js", "text/javascript; charset=utf-8"},
    {"/view.css", "view.css", "text/css; charset=utf-8"},
}};
constexpr const char* kJson = "application/json; charset=utf-8";
// A report's HTML: its own inline styles and SVG, never a script.
constexpr const char* kReportCsp =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'";

std::string param(const Params& p, const char* key, std::string fallback = "") {
  const auto it = p.find(key);
  return it == p.end() ? fallback : it->second;
}

Reply json_reply(const io::OrderedJson& j) { return {200, kJson, io::to_line(j), ""}; }
Reply json_reply(const io::Json& j) { return {200, kJson, io::to_line(j), ""}; }

Reply error_reply(int status, const std::string& message) {
  return {status, kJson, io::to_line(io::OrderedJson{{"error", message}}), ""};
}

}  // namespace

fs::path static_dir() { return io::data_path("view/index.html").parent_path(); }

Api::Api(Catalog catalog, fs::path static_dir)
    : catalog_(std::move(catalog)), static_dir_(std::move(static_dir)), claims_(catalog_) {}

Reply Api::get(const std::string& path, const Params& params) {
  try {
    return route(path, params);
  } catch (const Error& e) {
    return error_reply(e.code() == ErrorCode::kUsage ? 400 : 500, e.what());
  } catch (const std::exception& e) {
    return error_reply(500, fmt::format("internal error: {}", e.what()));
  }
}

Reply Api::route(const std::string& path, const Params& params) {
  for (const auto& f : kStaticFiles)
    if (path == f.url) return {200, f.type, io::read_file(static_dir_ / f.file), ""};
  if (path == "/api/catalog") return json_reply(catalog_json(catalog_));
  if (path == "/api/rows") return rows(params);
  if (path == "/api/orbit") return orbit(params);
  if (path == "/api/report") return report(params);
  if (path == "/api/claims") {
    ClaimQuery q;
    q.query = param(params, "q");
    if (const std::string c = param(params, "cursor"); !c.empty()) {
      const Cursor cur = Cursor::parse(c);
      q.offset = cur.offset;
      q.lines = cur.lines;
    }
    return json_reply(claims_.page(param(params, "file"), q));
  }
  return error_reply(404, "not found");
}

Reply Api::rows(const Params& params) {
  const RunSource* run = catalog_.run(param(params, "run"));
  if (run == nullptr) return error_reply(404, "no such run in this folder");
  RowFilter f;
  f.template_id = param(params, "template");
  f.view = param(params, "view");
  f.outcome = param(params, "outcome");
  f.layer = param(params, "layer", "strict");
  f.query = param(params, "q");
  const std::string c = param(params, "cursor");
  return json_reply(run_rows(*run, f, c.empty() ? Cursor{} : Cursor::parse(c)));
}

Reply Api::orbit(const Params& params) {
  const std::string id = param(params, "run");
  const RunSource* run = catalog_.run(id);
  if (run == nullptr) return error_reply(404, "no such run in this folder");
  const std::string base = param(params, "base");
  if (base.empty()) return error_reply(400, "which base? (base=<base id>)");
  OrbitIndex* index = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = orbits_[id];
    if (!slot) slot = std::make_unique<OrbitIndex>(*run);
    index = slot.get();
  }
  return json_reply(index->orbit(base));
}

Reply Api::report(const Params& params) {
  const ReportSource* r = catalog_.report(param(params, "id"));
  if (r == nullptr || !r->html) return error_reply(404, "no such report in this folder");
  return {200, "text/html; charset=utf-8", io::read_file(r->dir / "report.html"), kReportCsp};
}

}  // namespace numcheck::view
