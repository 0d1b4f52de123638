// The viewer's API without a socket: the catalog, paged and filtered rows with their cursors,
// broken and long lines, orbits with flips, the claims join, escaping, and refused paths.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "temp_dir.hpp"
#include "view/api.hpp"
#include "view/catalog.hpp"
#include "view/claims.hpp"
#include "view/lines.hpp"
#include "view/records.hpp"
#include "view/runs.hpp"
#include "view_fixture.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kStatic = fs::path(NUMCHECK_SOURCE_DIR) / "data" / "view";

struct ViewFolder {
  fs::path dir = fresh_temp_dir("view", "api");
  ViewFolder() {
    write_view_run(dir / "runs" / "a", "model-a");
    write_view_run(dir / "runs" / "b", "model-b" + kViewPayload);
    write_view_claims(dir / "claims");
  }
  ~ViewFolder() { fs::remove_all(dir); }
};

io::Json get_json(view::Api& api, const std::string& path, const view::Params& p, int status = 200) {
  const view::Reply r = api.get(path, p);
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.content_type, "application/json; charset=utf-8");
  return io::parse_json(r.body, path);
}

std::vector<std::string> prompt_ids(const io::OrderedJson& page) {
  std::vector<std::string> out;
  for (const auto& r : page["rows"])
    out.push_back(r.contains("broken") ? "broken" : r["prompt_id"].get<std::string>());
  return out;
}

TEST(ViewCatalog, ListsEveryRunAndClaimsFile) {
  ViewFolder f;
  const view::Catalog c = view::discover(f.dir);
  ASSERT_EQ(c.runs.size(), 2u);
  EXPECT_EQ(c.runs[0].id, "runs/a");
  EXPECT_EQ(c.runs[0].name, "model-a");
  EXPECT_TRUE(c.runs[0].scores.has_value());
  ASSERT_EQ(c.claims.size(), 3u);
  EXPECT_EQ(c.claims[0].id, "claims/evidence.jsonl");
  EXPECT_EQ(c.claims[0].kind, view::ClaimFile::Kind::kEvidence);
  EXPECT_EQ(c.claims[1].kind, view::ClaimFile::Kind::kOrbits);
  EXPECT_EQ(c.claims[2].kind, view::ClaimFile::Kind::kPredictions);
  // A run folder given itself is the one run ".".
  const view::Catalog one = view::discover(f.dir / "runs" / "a");
  ASSERT_EQ(one.runs.size(), 1u);
  EXPECT_EQ(one.runs[0].id, ".");
  EXPECT_THROW((void)view::discover(f.dir / "nothing"), Error);
}

TEST(ViewRows, PagesJoinScoresAndShowBrokenLines) {
  ViewFolder f;
  const view::Catalog c = view::discover(f.dir);
  const auto& run = c.runs[0];
  const io::OrderedJson all = view::run_rows(run, {}, {});
  EXPECT_EQ(prompt_ids(all),
            (std::vector<std::string>{"CV-0001:canonical", "CV-0001:fraction", "CV-0001:percent", "broken",
                                      "DD-0002:canonical", "DD-0002:percent"}));
  EXPECT_TRUE(all["next"].is_null());
  const auto& rows = all["rows"];
  EXPECT_EQ(rows[3]["line"], 4);
  EXPECT_NE(rows[3]["broken"].get<std::string>().find("not valid JSON"), std::string::npos) << rows[3];
  EXPECT_EQ(rows[2]["strict"]["outcome"], "value_error");
  EXPECT_EQ(rows[2]["expected"], "64/5");
  EXPECT_EQ(rows[4]["line"], 5);
  EXPECT_EQ(rows[4]["audit"]["outcome"], "correct");
  EXPECT_FALSE(rows[5].contains("strict")) << "no score record: unscored";
  // The long response is cut with a marker, never inside a character.
  EXPECT_TRUE(rows[1]["response_cut"].get<bool>());
  EXPECT_EQ(rows[1]["response_bytes"], 2000 + 2 + 14);
  EXPECT_EQ(rows[1]["response"].get<std::string>().size(), 300u);
  // Pages of two rows, cursor to cursor, give the same rows.
  std::vector<std::string> paged;
  view::Cursor cur;
  view::PageLimits small;
  small.rows = 2;
  for (int guard = 0; guard < 10; ++guard) {
    const io::OrderedJson page = view::run_rows(run, {}, cur, small);
    for (const auto& id : prompt_ids(page)) paged.push_back(id);
    if (page["next"].is_null()) break;
    cur = view::Cursor::parse(page["next"].get<std::string>());
  }
  EXPECT_EQ(paged, prompt_ids(all));
  // A scan budget ends a page early with a cursor to go on from.
  view::PageLimits budget;
  budget.scan_bytes = 1;
  const io::OrderedJson first = view::run_rows(run, {}, {}, budget);
  EXPECT_EQ(first["rows"].size(), 1u);
  EXPECT_FALSE(first["next"].is_null());
}

TEST(ViewRows, FiltersByTemplateViewOutcomeAndText) {
  ViewFolder f;
  const view::Catalog c = view::discover(f.dir);
  const auto& run = c.runs[0];
  auto ids = [&](view::RowFilter filter) { return prompt_ids(view::run_rows(run, filter, {})); };
  view::RowFilter by_view;
  by_view.view = "percent";
  EXPECT_EQ(ids(by_view), (std::vector<std::string>{"CV-0001:percent", "DD-0002:percent"}));
  view::RowFilter by_template;
  by_template.template_id = "DD";
  EXPECT_EQ(ids(by_template), (std::vector<std::string>{"DD-0002:canonical", "DD-0002:percent"}));
  view::RowFilter wrong;
  wrong.outcome = "wrong";
  EXPECT_EQ(ids(wrong), (std::vector<std::string>{"CV-0001:percent", "DD-0002:canonical"}));
  wrong.layer = "audit";
  EXPECT_EQ(ids(wrong), (std::vector<std::string>{"CV-0001:percent"}));
  view::RowFilter unscored;
  unscored.outcome = "unscored";
  EXPECT_EQ(ids(unscored), (std::vector<std::string>{"DD-0002:percent"}));
  view::RowFilter broken;
  broken.outcome = "broken";
  EXPECT_EQ(ids(broken), (std::vector<std::string>{"broken"}));
  view::RowFilter text;
  text.query = "DOCUMENT.TITLE";
  EXPECT_EQ(ids(text), (std::vector<std::string>{"DD-0002:percent"}));
  text.query = "(fraction)";  // the prompt's text
  EXPECT_EQ(ids(text), (std::vector<std::string>{"CV-0001:fraction"}));
  view::RowFilter bad;
  bad.outcome = "nonsense";
  EXPECT_THROW((void)view::run_rows(run, bad, {}), Error);
}

TEST(ViewRows, TheErrorFilterPagesErrorsJsonl) {
  ViewFolder f;
  io::write_file_atomic(f.dir / "runs" / "a" / "errors.jsonl",
                        "{\"prompt_id\":\"CV-0009:words\",\"base_id\":\"CV-0009\",\"view\":\"words\","
                        "\"error\":\"HTTP 500: " +
                            kViewPayload + "\"}\nnot json\n");
  const view::Catalog c = view::discover(f.dir);
  view::RowFilter errors;
  errors.outcome = "error";
  const io::OrderedJson page = view::run_rows(c.runs[0], errors, {});
  ASSERT_EQ(page["rows"].size(), 2u);
  EXPECT_EQ(page["rows"][0]["prompt_id"], "CV-0009:words");
  EXPECT_EQ(page["rows"][0]["error"], "HTTP 500: " + kViewPayload);
  EXPECT_EQ(page["rows"][1]["line"], 2);
  EXPECT_TRUE(page["rows"][1].contains("broken"));
  EXPECT_TRUE(page["next"].is_null());
  // A run without errors.jsonl: no rows.
  EXPECT_TRUE(view::run_rows(c.runs[1], errors, {})["rows"].empty());
}

TEST(ViewRows, CursorsRoundTripAndRefuseJunk) {
  const view::Cursor c{123, 4, 56};
  EXPECT_EQ(c.str(), "123.4.56");
  const view::Cursor back = view::Cursor::parse("123.4.56");
  EXPECT_EQ(back.offset, 123u);
  EXPECT_EQ(back.lines, 4u);
  EXPECT_EQ(back.score_offset, 56u);
  for (const char* junk : {"", "1.2", "a.b.c", "1.2.3x", "-1.2.3", "1..3", "99999999999999999999.1.1"})
    EXPECT_THROW((void)view::Cursor::parse(junk), Error) << junk;
}

TEST(ViewOrbit, GroupsTheBaseAndItsViewsWithFlips) {
  ViewFolder f;
  const view::Catalog c = view::discover(f.dir);
  view::OrbitIndex index(c.runs[0]);
  const io::Json o = index.orbit("CV-0001");
  ASSERT_EQ(o["members"].size(), 3u);
  EXPECT_EQ(o["members"][0]["view"], "canonical");
  EXPECT_EQ(o["members"][0]["prompt"], "How much? (canonical)");
  EXPECT_EQ(o["members"][2]["strict"]["outcome"], "value_error");
  EXPECT_TRUE(o["members"][2]["flip_strict"].get<bool>());
  EXPECT_TRUE(o["members"][2]["flip_audit"].get<bool>());
  EXPECT_FALSE(o["members"][1]["flip_strict"].get<bool>());
  EXPECT_EQ(o["index"]["records"], 5);
  const io::Json d = index.orbit("DD-0002");
  ASSERT_EQ(d["members"].size(), 2u);
  EXPECT_FALSE(d["members"][1].contains("strict"));
  EXPECT_FALSE(d["members"][1]["flip_strict"].get<bool>()) << "unscored: no flip";
  EXPECT_THROW((void)index.orbit("XX-9999"), Error);
}

TEST(ViewClaims, JoinsEvidenceVerdictsAndVariantSpans) {
  ViewFolder f;
  const view::Catalog c = view::discover(f.dir);
  view::ClaimsView claims(c);
  const io::OrderedJson page = claims.page("claims/orbits/claims.jsonl", {});
  ASSERT_EQ(page["claims"].size(), 2u);
  const auto& c1 = page["claims"][0];
  EXPECT_EQ(c1["label"], "True");
  EXPECT_EQ(c1["evidence"][0]["text"], "Sales grew by half.");
  EXPECT_EQ(c1["evidence_source"], "claims/evidence.jsonl");
  EXPECT_EQ(c1["verdicts"][0]["verifier"], "claims/verify/predictions.jsonl");
  EXPECT_EQ(c1["verdicts"][0]["label"], "True");
  const auto& v = c1["variants"][0];
  EXPECT_EQ(v["verdicts"][0]["label"], "False");
  ASSERT_EQ(v["segments"].size(), 3u);
  EXPECT_EQ(v["segments"][1]["text"], "1/2");
  EXPECT_EQ(v["segments"][1]["original"], "50%");
  EXPECT_FALSE(c1["variants"][1]["spans_ok"].get<bool>()) << "a span past the text's end";
  EXPECT_TRUE(page["claims"][1]["verdicts"][0]["label"].is_null());
  // From the evidence file, the variants come from the orbits file.
  const io::OrderedJson ev = claims.page("claims/evidence.jsonl", {});
  EXPECT_EQ(ev["claims"][0]["variants"].size(), 2u);
  view::ClaimQuery q;
  q.query = "TOWN";
  EXPECT_EQ(claims.page("claims/orbits/claims.jsonl", q)["claims"].size(), 1u);
  EXPECT_THROW((void)claims.page("claims/verify/predictions.jsonl", {}), Error);
  EXPECT_THROW((void)claims.page("../../etc/passwd", {}), Error);
}

TEST(ViewApi, RefusesPathsAndAnswersJsonWithTheModelTextEscaped) {
  ViewFolder f;
  view::Api api(view::discover(f.dir), kStatic);
  // Only the three front-end files and the API: never a path from the request.
  for (const char* path : {"/../README.md", "/data/view/view.js", "/etc/passwd", "/runs/a/responses.jsonl",
                           "/view.js/../../README.md", "/api/../view.js"})
    EXPECT_EQ(api.get(path, {}).status, 404) << path;
  EXPECT_EQ(get_json(api, "/api/rows", {{"run", "../runs/a"}}, 404)["error"], "no such run in this folder");
  EXPECT_EQ(get_json(api, "/api/rows", {{"run", "/etc"}}, 404).count("error"), 1u);
  EXPECT_EQ(get_json(api, "/api/report", {{"id", "../.."}}, 404).count("error"), 1u);
  EXPECT_EQ(get_json(api, "/api/rows", {{"run", "runs/a"}, {"cursor", "x"}}, 400)["error"],
            "not a cursor: 'x'");
  EXPECT_EQ(get_json(api, "/api/orbit", {{"run", "runs/a"}}, 400).count("error"), 1u);
  const view::Reply js = api.get("/view.js", {});
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(js.body.find("innerHTML"), std::string::npos) << "the front end never writes markup from data";
  // The payload travels as a JSON string: parsed back it is the same text.
  const io::Json page =
      get_json(api, "/api/rows", {{"run", "runs/a"}, {"view", "percent"}, {"template", "DD"}});
  const std::string text = page["rows"][0]["response"];
  EXPECT_EQ(text.rfind(kViewPayload, 0), 0u);
  EXPECT_NE(text.find("\xEF\xBF\xBD"), std::string::npos) << "invalid UTF-8 replaced";
  const io::Json cat = get_json(api, "/api/catalog", {});
  EXPECT_EQ(cat["runs"][1]["name"], "model-b" + kViewPayload);
  const io::Json orbit = get_json(api, "/api/orbit", {{"run", "runs/b"}, {"base", "DD-0002"}});
  EXPECT_EQ(orbit["members"].size(), 2u);
}

TEST(ViewLines, CutsLongLinesAndReadsAnUnterminatedTail) {
  const fs::path dir = fresh_temp_dir("view", "lines");
  const std::string text = "{\"a\":1}\n" + std::string(5000, 'y') + "\n{\"b\":2}\n\xFF\xFE binary\n{\"c\":3}";
  io::write_file_atomic(dir / "f.jsonl", text);
  view::LineReader reader(dir / "f.jsonl", 0, 100);
  view::FileLine l;
  ASSERT_TRUE(reader.next(l));
  EXPECT_EQ(l.text, "{\"a\":1}");
  ASSERT_TRUE(reader.next(l));
  EXPECT_TRUE(l.cut);
  EXPECT_EQ(l.bytes, 5000u);
  EXPECT_EQ(l.text.size(), 100u);
  EXPECT_EQ(l.next, 8u + 5001u);
  ASSERT_TRUE(reader.next(l));
  EXPECT_EQ(l.text, "{\"b\":2}");
  view::LineParser parser;
  ASSERT_TRUE(reader.next(l));
  EXPECT_EQ(parser.parse(l, 4, "f.jsonl", reader.readable_after(l)), view::LineParser::Kind::kBroken);
  ASSERT_TRUE(reader.next(l));
  EXPECT_FALSE(l.terminated);
  EXPECT_EQ(l.text, "{\"c\":3}");
  EXPECT_FALSE(reader.next(l));
  // From an offset in the middle of the file.
  view::LineReader mid(dir / "f.jsonl", 8 + 5001, 100);
  ASSERT_TRUE(mid.next(l));
  EXPECT_EQ(l.text, "{\"b\":2}");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::testing
