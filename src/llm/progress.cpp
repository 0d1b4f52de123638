#include "llm/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace numcheck::llm {

namespace {

std::string duration_text(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8) return "?";
  const auto s = std::llround(seconds);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

Progress::Progress(ProgressMode mode, std::size_t total, std::chrono::milliseconds interval,
                   std::string label, std::FILE* out)
    : mode_(mode), total_(total), interval_(interval), label_(std::move(label)), out_(out) {
  if (mode_ == ProgressMode::kAuto)
    mode_ = ::isatty(::fileno(out_)) != 0 ? ProgressMode::kLive : ProgressMode::kPlain;
  start_ = last_ = std::chrono::steady_clock::now();
}

std::string Progress::line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t fetched = done_ - std::min(done_, cached_);
  const double rate = elapsed > 0 ? static_cast<double>(fetched) / elapsed : 0.0;
  const std::size_t remaining = total_ - std::min(total_, done_ + errors_);
  const double pct =
      total_ == 0 ? 100.0 : 100.0 * static_cast<double>(done_ + errors_) / static_cast<double>(total_);
  return fmt::format(
      "{}/{} ({:.1f}%) {:.1f}/s ETA {} errors {} cached {}", done_ + errors_, total_, pct, rate,
      remaining == 0 ? "0s" : (rate > 0 ? duration_text(static_cast<double>(remaining) / rate) : "?"),
      errors_, cached_);
}

void Progress::update(std::size_t done, std::size_t errors, std::size_t cached) {
  done_ = done;
  errors_ = errors;
  cached_ = cached;
  if (mode_ == ProgressMode::kNone) return;
  const auto now = std::chrono::steady_clock::now();
  const auto due = mode_ == ProgressMode::kLive ? std::chrono::milliseconds(200) : interval_;
  if (now - last_ < due) return;
  last_ = now;
  print(false);
}

void Progress::print(bool final) {
  if (mode_ == ProgressMode::kLive) {
    fmt::print(out_, "\r\x1b[2K[{}] {}{}", label_, line(), final ? "\n" : "");
  } else {
    fmt::print(out_, "[{}] {}\n", label_, line());
  }
  std::fflush(out_);
  printed_ = true;
}

void Progress::finish() {
  if (mode_ == ProgressMode::kNone) return;
  if (mode_ == ProgressMode::kLive || printed_) print(true);
}

}  // namespace numcheck::llm
