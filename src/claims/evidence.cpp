#include "claims/evidence.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::claims {
namespace fs = std::filesystem;

bool valid_selection(std::string_view s) noexcept {
  constexpr std::string_view kEmb = "embeddings:";
  if (s.substr(0, kEmb.size()) == kEmb) return s.size() > kEmb.size();
  return s == "lexical" || s == "claim-top3" || s == "val-top3" || s == "gold";
}

std::string claim_id(const Claim& c) {
  if (!c.id.empty()) return c.id;
  return fmt::format("{}:{}", fs::path(c.source).stem().string(), c.record);
}

io::OrderedJson evidence_json(const EvidenceRecord& r) {
  io::OrderedJson j;
  j["id"] = r.id;
  j["claim"] = r.claim;
  if (r.label) j["label"] = std::string(verdict_name(*r.label));
  if (r.category) j["category"] = std::string(category_name(*r.category));
  j["questions"] = r.questions;
  io::OrderedJson ev = io::OrderedJson::array();
  for (const auto& d : r.evidence) {
    io::OrderedJson e;
    e["doc_id"] = d.doc_id;
    e["text"] = d.text;
    if (!d.query.empty()) e["query"] = d.query;
    if (d.score) e["score"] = *d.score;
    if (d.rank) e["rank"] = *d.rank;
    ev.push_back(std::move(e));
  }
  j["evidence"] = std::move(ev);
  j["selection"] = r.selection;
  return j;
}

EvidenceRecord evidence_from_json(const io::Json& json, std::string_view where) {
  if (!json.is_object()) fail("{}: not a JSON object", where);
  const io::Record j = io::Record::of(json, where);
  EvidenceRecord r;
  r.id = j.string("id");
  if (r.id.empty()) j.fail_field("id", "is empty");
  r.claim = j.string("claim");
  if (const auto s = j.opt_string("label")) {
    r.label = LabelMap::builtin().map(*s);
    if (!r.label) j.fail_field("label", fmt::format("holds an unknown label '{}'", *s));
  }
  if (const auto s = j.opt_string("category")) {
    r.category = category_from_name(*s);
    if (!r.category) j.fail_field("category", fmt::format("holds an unknown category '{}'", *s));
  }
  if (auto q = j.opt_strings("questions")) r.questions = std::move(*q);
  for (const auto& e : j.objects("evidence")) {
    EvidenceDoc d;
    d.doc_id = e.string("doc_id");
    d.text = e.string("text");
    if (auto q = e.opt_string("query")) d.query = std::move(*q);
    if (auto sc = e.opt_number("score")) d.score = *sc;
    if (auto k = e.opt_integer("rank", 1)) d.rank = static_cast<std::size_t>(*k);
    r.evidence.push_back(std::move(d));
  }
  r.selection = j.string("selection");
  if (!valid_selection(r.selection))
    j.fail_field("selection",
                 fmt::format("'{}' is not one of embeddings:<model>, lexical, claim-top3, val-top3, gold",
                             r.selection));
  return r;
}

// io's JSONL rule (io/json.hpp): blank lines skipped, malformed or torn lines are errors naming
// file:line.
void for_each_evidence(const fs::path& path, const std::function<void(EvidenceRecord&&)>& fn) {
  (void)io::read_jsonl(
      path, [&](const io::Record& rec, std::size_t) { fn(evidence_from_json(rec.json(), rec.where())); });
}

std::vector<EvidenceRecord> read_evidence(const fs::path& path) {
  std::vector<EvidenceRecord> out;
  for_each_evidence(path, [&](EvidenceRecord&& r) { out.push_back(std::move(r)); });
  return out;
}

fs::path evidence_manifest_path(const fs::path& evidence_file) {
  fs::path p = evidence_file;
  p += ".manifest.json";
  return p;
}

EvidenceWriter::EvidenceWriter(fs::path path) : path_(std::move(path)) {}

void EvidenceWriter::add_input(const fs::path& input) {
  inputs_.push_back({input.string(), io::sha256_file(input)});
}

void EvidenceWriter::write(const EvidenceRecord& r) {
  if (!valid_selection(r.selection)) fail("evidence record '{}': invalid selection '{}'", r.id, r.selection);
  buf_ += io::to_line(evidence_json(r));
  buf_ += '\n';
  ++counts_.records;
  if (r.label) {
    ++counts_.labelled;
    ++counts_.by_label[std::string(verdict_name(*r.label))];
  }
  if (r.category) ++counts_.with_category;
  counts_.documents += r.evidence.size();
  if (r.evidence.empty()) ++counts_.without_evidence;
  ++counts_.by_selection[r.selection];
}

EvidenceCounts EvidenceWriter::finish(const io::OrderedJson& extra) {
  io::write_file_atomic(path_, buf_);
  io::OrderedJson m;
  m["numcheck_version"] = kVersion;
  m["file"] = path_.filename().string();
  m["sha256"] = io::sha256_hex(buf_);
  io::OrderedJson in = io::OrderedJson::array();
  for (const auto& i : inputs_) in.push_back({{"path", i.path}, {"sha256", i.sha256}});
  m["inputs"] = std::move(in);
  io::OrderedJson c;
  c["records"] = counts_.records;
  c["labelled"] = counts_.labelled;
  c["with_category"] = counts_.with_category;
  c["documents"] = counts_.documents;
  c["without_evidence"] = counts_.without_evidence;
  c["by_selection"] = counts_.by_selection;
  c["by_label"] = counts_.by_label;
  m["counts"] = std::move(c);
  for (const auto& [k, v] : extra.items()) m[k] = v;
  io::write_file_atomic(evidence_manifest_path(path_), io::to_pretty(m));
  return counts_;
}

EvidenceRecord evidence_from_claim(const Claim& c, std::string_view fallback_selection) {
  EvidenceRecord r;
  r.id = claim_id(c);
  r.claim = c.text;
  r.label = c.label;
  r.category = c.category;
  r.questions = c.questions;
  if (!c.evidences.empty()) {
    r.selection = "val-top3";
    std::size_t k = 0;
    for (const auto& e : c.evidences) {
      for (const auto& doc : e.top_k_doc) {
        ++k;
        EvidenceDoc d;
        d.doc_id = fmt::format("{}#{}", r.id, k);
        d.text = doc;
        d.query = e.questions == c.text ? std::string() : e.questions;
        d.rank = k;
        r.evidence.push_back(std::move(d));
      }
    }
  } else if (!c.doc.empty()) {
    r.selection = "gold";
    EvidenceDoc d;
    d.doc_id = r.id + "#gold";
    d.text = c.doc;
    d.rank = 1;
    r.evidence.push_back(std::move(d));
  } else {
    r.selection = std::string(fallback_selection);
  }
  return r;
}

}  // namespace numcheck::claims
