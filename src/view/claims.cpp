#include "view/claims.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "view/lines.hpp"
#include "view/records.hpp"

namespace numcheck::view {
namespace {

constexpr std::size_t kEvidenceShown = 10;
constexpr std::size_t kEvidenceBytes = 1200;
constexpr std::uint64_t kClaimScanBytes = std::uint64_t{64} << 20;  // a page stops after reading this much

std::string claim_text_of(const io::Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string clipped(const std::string& text, std::size_t n) {
  bool cut = false;
  std::string out(clip_utf8(text, n, cut));
  if (cut) out += fmt::format(" [... {} bytes in all]", text.size());
  return out;
}

io::OrderedJson evidence_json(const io::Json& record) {
  io::OrderedJson out = io::OrderedJson::array();
  const auto ev = record.find("evidence");
  if (ev == record.end() || !ev->is_array()) return out;
  for (const auto& e : *ev) {
    if (out.size() == kEvidenceShown) break;
    if (!e.is_object()) continue;
    io::OrderedJson item = {{"doc_id", claim_text_of(e, "doc_id")},
                            {"text", clipped(claim_text_of(e, "text"), kEvidenceBytes)}};
    if (e.contains("rank")) item["rank"] = e["rank"];
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

std::optional<io::Json> IdIndex::find(std::string_view id) {
  std::lock_guard<std::mutex> lock(mutex_);
  LineParser parser;
  const std::string name = path_.filename().string();
  if (!built_) {
    LineReader reader(path_, 0);
    FileLine fl;
    std::size_t line = 0;
    while (reader.next(fl)) {
      if (parser.parse(fl, ++line, name, reader.readable_after(fl)) != LineParser::Kind::kRecord) continue;
      const std::string_view rid = text_field(parser.record(), "id");
      if (!rid.empty()) entries_.emplace_back(fnv1a64(rid), fl.offset);
    }
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    entries_.shrink_to_fit();
    built_ = true;
  }
  const std::uint64_t h = fnv1a64(id);
  auto it = std::lower_bound(entries_.begin(), entries_.end(), h,
                             [](const auto& e, std::uint64_t v) { return e.first < v; });
  for (; it != entries_.end() && it->first == h; ++it) {
    LineReader reader(path_, it->second);
    FileLine fl;
    if (!reader.next(fl) || parser.parse(fl, 0, name, reader.readable_after(fl)) != LineParser::Kind::kRecord)
      continue;
    if (text_field(parser.record(), "id") == id) return io::unflatten(parser.record().values(), 0);
  }
  return std::nullopt;
}

std::optional<io::OrderedJson> span_segments(const io::Json& variant) {
  const std::string text = claim_text_of(variant, "text");
  io::OrderedJson out = io::OrderedJson::array();
  const auto spans = variant.find("spans");
  if (spans == variant.end() || !spans->is_array()) {
    out.push_back({{"text", text}});
    return out;
  }
  std::size_t at = 0;
  for (const auto& s : *spans) {
    if (!s.is_object() || !s.contains("begin") || !s.contains("end") || !s["begin"].is_number_unsigned() ||
        !s["end"].is_number_unsigned())
      return std::nullopt;
    const auto b = s["begin"].get<std::uint64_t>();
    const auto e = s["end"].get<std::uint64_t>();
    if (b < at || e < b || e > text.size()) return std::nullopt;
    if (b > at) out.push_back({{"text", text.substr(at, b - at)}});
    out.push_back({{"text", text.substr(b, e - b)},
                   {"value", claim_text_of(s, "value")},
                   {"original", claim_text_of(s, "original")}});
    at = e;
  }
  if (at < text.size()) out.push_back({{"text", text.substr(at)}});
  return out;
}

ClaimsView::ClaimsView(const Catalog& catalog) : catalog_(catalog) {
  for (const auto& f : catalog.claims) indexes_.emplace(f.id, std::make_unique<IdIndex>(f.path));
}

io::OrderedJson ClaimsView::verdicts(const std::string& id) {
  io::OrderedJson out = io::OrderedJson::array();
  for (const auto& f : catalog_.claims) {
    if (f.kind != ClaimFile::Kind::kPredictions) continue;
    const auto r = indexes_.find(f.id)->second->find(id);
    io::OrderedJson v = {{"verifier", f.id}};
    v["label"] = r && r->contains("label") && (*r)["label"].is_string()
                     ? io::OrderedJson((*r)["label"].get<std::string>())
                     : io::OrderedJson();
    out.push_back(std::move(v));
  }
  return out;
}

io::OrderedJson ClaimsView::claim_json(const io::Json& record, const ClaimFile& from) {
  const std::string id = claim_text_of(record, "id");
  io::OrderedJson c = {{"id", id}, {"claim", clipped(claim_text_of(record, "claim"), kEvidenceBytes * 4)}};
  if (record.contains("label")) c["label"] = record["label"];
  // The evidence: the record's own (an evidence file), else the first evidence file that has the id.
  io::OrderedJson evidence = evidence_json(record);
  c["evidence_source"] = from.kind == ClaimFile::Kind::kEvidence ? from.id : "";
  for (const auto& f : catalog_.claims) {
    if (!evidence.empty() || f.kind != ClaimFile::Kind::kEvidence) continue;
    if (auto r = indexes_.find(f.id)->second->find(id)) {
      evidence = evidence_json(*r);
      c["evidence_source"] = f.id;
      if (!c.contains("label") && r->contains("label")) c["label"] = (*r)["label"];
    }
  }
  c["evidence"] = std::move(evidence);
  c["verdicts"] = verdicts(id);
  // The variants: the record's own (an orbits file), else those of the first orbits file with the id.
  std::optional<io::Json> orbit;
  if (from.kind == ClaimFile::Kind::kOrbits) orbit = record;
  for (const auto& f : catalog_.claims)
    if (!orbit && f.kind == ClaimFile::Kind::kOrbits) orbit = indexes_.find(f.id)->second->find(id);
  io::OrderedJson variants = io::OrderedJson::array();
  if (orbit && orbit->contains("variants") && (*orbit)["variants"].is_array()) {
    for (const auto& v : (*orbit)["variants"]) {
      if (!v.is_object()) continue;
      const std::string vid = claim_text_of(v, "id");
      io::OrderedJson item = {{"id", vid}, {"form", claim_text_of(v, "form")}};
      auto segments = span_segments(v);
      item["segments"] =
          segments ? std::move(*segments) : io::OrderedJson::array({{{"text", claim_text_of(v, "text")}}});
      item["spans_ok"] = segments.has_value();
      item["verdicts"] = verdicts(vid);
      variants.push_back(std::move(item));
    }
  }
  c["variants"] = std::move(variants);
  return c;
}

io::OrderedJson ClaimsView::page(std::string_view file, const ClaimQuery& q) {
  const ClaimFile* f = catalog_.claim_file(file);
  if (f == nullptr || f->kind == ClaimFile::Kind::kPredictions)
    fail(ErrorCode::kUsage, "no claims file '{}' in this folder", file.substr(0, 200));
  LineReader reader(f->path, q.offset);
  LineParser parser;
  const std::string name = f->path.filename().string();
  io::OrderedJson claims = io::OrderedJson::array();
  std::uint64_t line = q.lines;
  FileLine fl;
  std::uint64_t read = 0;
  while (claims.size() < q.limit && read < kClaimScanBytes) {
    if (!reader.next(fl)) break;
    ++line;
    read += fl.next - fl.offset;
    const auto kind = parser.parse(fl, line, name, reader.readable_after(fl));
    if (kind == LineParser::Kind::kBlank) continue;
    if (kind == LineParser::Kind::kBroken) {
      if (q.query.empty()) claims.push_back({{"line", line}, {"broken", parser.error()}});
      continue;
    }
    const io::LineRecord r = parser.record();
    if (!q.query.empty() && !contains_folded(text_field(r, "id"), q.query) &&
        !contains_folded(text_field(r, "claim"), q.query))
      continue;
    io::OrderedJson c = claim_json(io::unflatten(r.values(), 0), *f);
    c["line"] = line;
    claims.push_back(std::move(c));
  }
  FileLine peek;
  LineReader probe(f->path, reader.offset(), 64);
  const bool more = probe.next(peek);
  io::OrderedJson out = io::OrderedJson::object();
  out["claims"] = std::move(claims);
  out["next"] = more ? io::OrderedJson(fmt::format("{}.{}.0", reader.offset(), line)) : io::OrderedJson();
  return out;
}

}  // namespace numcheck::view
