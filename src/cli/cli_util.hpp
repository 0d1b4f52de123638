#pragma once
// Small helpers shared by CLI commands.
#include <sstream>
#include <string>
#include <vector>

namespace numcheck::cli {

// "a, b,,c" -> {"a", "b", "c"}: comma-separated list items, trimmed, empty items dropped.
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

}  // namespace numcheck::cli
