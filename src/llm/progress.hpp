#pragma once
// Progress display for long runs: on a terminal a live line (done/total, rate, ETA, errors)
// rewritten in place; otherwise a plain line every interval, so logs stay readable.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace numcheck::llm {

enum class ProgressMode : std::uint8_t {
  kAuto,   // a live line on a terminal (stderr is a TTY), plain periodic lines otherwise
  kLive,   // always the live "\r" line
  kPlain,  // a plain line every `progress_interval`
  kNone,
};

class Progress {
 public:
  // total: items this session must finish; label: prefix shown ("run").
  Progress(ProgressMode mode, std::size_t total, std::chrono::milliseconds interval,
           std::string label = "run", std::FILE* out = stderr);
  // Called whenever counts change (cheap: prints only when due).
  void update(std::size_t done, std::size_t errors, std::size_t cached);
  // Prints the final state and ends a live line.
  void finish();
  // "1234/8600 (14.3%) 52.1/s ETA 2m21s errors 0 cached 10"
  [[nodiscard]] std::string line() const;

 private:
  void print(bool final);
  ProgressMode mode_;
  std::size_t total_;
  std::chrono::milliseconds interval_;
  std::string label_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_;
  std::size_t done_ = 0, errors_ = 0, cached_ = 0;
  bool printed_ = false;
};

}  // namespace numcheck::llm
