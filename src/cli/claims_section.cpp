// numcheck claims section: gathers the claim pipeline's results (`claims evaluate --json` on the
// gold-evidence claims, `claims cv --json`, the QuanTemp paper's published figures) into one
// section file that `orbit report --claims FILE` renders into the main report; prints the section
// as Markdown.
#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "verify/section.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string eval, cv, paper, note, out, model, model_data, near_duplicates;
  std::vector<std::string> ours, notes;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--eval", a->eval, "JSON of `claims evaluate --by-category --json` (gold-evidence claims)");
  app.add_option("--cv", a->cv, "JSON of `claims cv --json`");
  app.add_option("--paper", a->paper,
                 "Published figures (default data/verify/quantemp_table2.json; 'none' to leave out)");
  app.add_option("--ours", a->ours,
                 "Name of one of numcheck's own systems in --eval (its prediction file's stem); repeatable, "
                 "the first is the one in bold")
      ->required();
  app.add_option("--gold-note", a->note, "One paragraph saying what the gold-evidence claims are");
  app.add_option("--model", a->model,
                 "Model file of the first --ours system (`claims train --out`): the section says what it was "
                 "trained on");
  app.add_option("--model-data", a->model_data,
                 "What the model's training records are, in words (e.g. \"the QuanTemp val split with its "
                 "shipped top-3 snippets\"); with --model");
  app.add_option(
      "--near-duplicates", a->near_duplicates,
      "JSON of `claims stats --near-duplicates` over the claim files (e.g. val and test): the section "
      "counts the near-duplicate claims across them");
  app.add_option("--note", a->notes, "Extra paragraph(s) for the section (e.g. a skipped stage); repeatable");
  app.add_option("--out", a->out, "Section file to write (JSON), the input of `orbit report --claims`")
      ->required();
  app.callback([a] {
    if (a->eval.empty() && a->cv.empty()) fail(ErrorCode::kUsage, "give --eval and/or --cv");
    io::OrderedJson j;
    j["format"] = "numcheck-claims-section";
    if (a->ours.size() == 1) {
      j["ours"] = a->ours[0];
    } else {
      j["ours"] = a->ours;
    }
    j["gold_note"] = a->note;
    if (!a->model_data.empty() && a->model.empty()) fail(ErrorCode::kUsage, "--model-data needs --model");
    const std::string trained_on =
        a->model.empty()
            ? std::string()
            : verify::trained_on_note(io::read_json_file(a->model), a->ours[0], a->model_data, a->model);
    j["trained_on"] = trained_on;
    const std::string near_duplicates =
        a->near_duplicates.empty()
            ? std::string()
            : verify::near_duplicates_note(io::read_json_file(a->near_duplicates), a->near_duplicates);
    j["near_duplicates"] = near_duplicates;
    j["notes"] = a->notes;
    j["eval"] = a->eval.empty() ? io::OrderedJson(nullptr) : io::OrderedJson::parse(io::read_file(a->eval));
    j["cv"] = a->cv.empty() ? io::OrderedJson(nullptr) : io::OrderedJson::parse(io::read_file(a->cv));
    const std::string paper =
        a->paper.empty() ? io::data_path("verify/quantemp_table2.json").string() : a->paper;
    j["paper"] = paper == "none" ? io::OrderedJson(nullptr) : io::OrderedJson::parse(io::read_file(paper));
    io::write_file_atomic(a->out, io::to_pretty(j));
    auto s = verify::build_claims_section(io::Json::parse(io::to_line(j["eval"])),
                                          io::Json::parse(io::to_line(j["cv"])),
                                          io::Json::parse(io::to_line(j["paper"])), a->ours, a->note);
    s.trained_on = trained_on;
    s.near_duplicates = near_duplicates;
    s.notes = a->notes;  // the Markdown on stdout shows the notes too, as the report does
    fmt::print("{}", verify::section_document(s).to_markdown());
  });
}

const CommandRegistration reg(
    {"claims",
     "section",
     "Gather claim results into the report's claims section",
     setup,
     "numcheck claims section --eval eval.json --cv cv.json --ours numcheck_trained --model model.json "
     "--out section.json",
     {"written"}});

}  // namespace
}  // namespace numcheck::cli
