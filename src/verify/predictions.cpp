#include "verify/predictions.hpp"

#include <map>

#include "core/version.hpp"
#include "io/files.hpp"

namespace numcheck::verify {

void write_predictions(const std::filesystem::path& dir, const std::vector<Prediction>& preds,
                       io::OrderedJson manifest) {
  std::string p, s;
  std::map<std::string, std::size_t> by_label;
  std::size_t scored = 0, correct = 0, with_gold = 0;
  for (const auto& x : preds) {
    const std::string label =
        x.label ? std::string(claims::verdict_name(*x.label)) : std::string(kUnparseable);
    ++by_label[label];
    io::OrderedJson j;
    j["id"] = x.id;
    j["claim"] = x.claim;
    j["label"] = label;
    p += io::to_line(j) + "\n";
    if (x.gold) {
      ++with_gold;
      correct += x.label == x.gold ? 1 : 0;
    }
    if (x.scores || x.gold) {
      io::OrderedJson o;
      o["id"] = x.id;
      o["label"] = label;
      if (x.scores) {
        ++scored;
        io::OrderedJson sc;
        for (auto v : claims::kVerdicts)
          sc[std::string(claims::verdict_name(v))] = (*x.scores)[static_cast<std::size_t>(v)];
        o["scores"] = std::move(sc);
      }
      if (x.gold) o["gold"] = std::string(claims::verdict_name(*x.gold));
      s += io::to_line(o) + "\n";
    }
  }
  std::filesystem::create_directories(dir);
  io::write_file_atomic(dir / "predictions.jsonl", p);
  io::write_file_atomic(dir / "scores.jsonl", s);
  manifest["numcheck_version"] = kVersion;
  manifest["counts"] = {{"predictions", preds.size()},
                        {"by_label", by_label},
                        {"with_scores", scored},
                        {"with_gold", with_gold},
                        {"correct_of_gold", correct}};
  io::write_file_atomic(dir / "manifest.json", io::to_pretty(manifest));
}

}  // namespace numcheck::verify
