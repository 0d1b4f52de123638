// numcheck orbit supplement: the study's supplement archive (docs/report.md, "Supplement").
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "report/supplement.hpp"

namespace numcheck::cli {
namespace {

struct SupplementArgs {
  std::string report;
  std::string out;
  std::size_t examples = 3;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<SupplementArgs>();
  app.add_option(
         "--report", a->report,
         "Output folder of `orbit report` (its metrics.json names every input; run this command from the "
         "folder the report was made in)")
      ->required();
  app.add_option("--out", a->out, "The archive to write (a ustar .tar file)")->required();
  app.add_option("--examples", a->examples, "The --examples the report was made with")->capture_default_str();
  app.footer(
      "Packs the benchmark, each system's scores, scores manifest, responses, run.json and repeat.json, the "
      "consensus and claims section files, the report settings, the original metrics.json and report.md, and "
      "a SHA256SUMS manifest into one deterministic archive (the same inputs give the same bytes). `orbit "
      "report --from-supplement FILE --out DIR` rebuilds the report from it.");
  app.callback([a] {
    if (!std::filesystem::is_regular_file(std::filesystem::path(a->report) / "metrics.json")) {
      fail(ErrorCode::kUsage, "--report {}: no metrics.json there (the output folder of `orbit report`)",
           a->report);
    }
    if (std::filesystem::is_directory(a->out))
      fail(ErrorCode::kUsage, "--out {} is a folder; give a file name", a->out);
    const std::string tar = report::build_supplement(a->report, a->examples);
    io::write_file_atomic(a->out, tar);
    const auto s = report::read_supplement(tar, a->out);
    fmt::print("wrote {}: {} members, {} bytes, sha256 {}\n", a->out, s.members.size(), tar.size(),
               io::sha256_hex(tar));
    fmt::print("check: numcheck orbit report --from-supplement {} --out DIR\n", a->out);
  });
}

const CommandRegistration reg{
    {"orbit",
     "supplement",
     "Supplement archive of a report: its inputs, settings and a per-member SHA-256 manifest (deterministic "
     "ustar)",
     setup,
     "numcheck orbit supplement --report out/report --out supplement.tar",
     {"written"}}};

}  // namespace
}  // namespace numcheck::cli
