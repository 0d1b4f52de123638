#pragma once
// The one project error type. Anything that stops a command (a bad data file, a server that
// cannot be reached, a usage mistake the argument parser could not catch) is an Error with a
// message that names the file, line or field at fault. Outcomes that are expected in normal
// operation (a model answer that does not parse, a prompt whose retries ran out) are values of
// their own result types, never exceptions. The CLI turns an Error into one line on stderr and
// the exit code below.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace numcheck {

// Exit codes scripts can trust: 0 success, 1 error, 2 usage, 3 ran but incomplete.
enum class ErrorCode {
  kInvalidInput,  // a data file, spec or record is malformed (exit 1)
  kIo,            // a file cannot be read or written (exit 1)
  kNetwork,       // a server failed in a way retries did not fix (exit 1)
  kUsage,         // the command line is wrong in a way the parser could not see (exit 2)
  kIncomplete,    // the command ran, but left work undone: unanswered prompts, failed checks (exit 3)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  explicit Error(const std::string& message) : Error(ErrorCode::kInvalidInput, message) {}
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  [[nodiscard]] int exit_code() const noexcept {
    switch (code_) {
      case ErrorCode::kUsage:
        return 2;
      case ErrorCode::kIncomplete:
        return 3;
      default:
        return 1;
    }
  }

 private:
  ErrorCode code_;
};

// fail("cannot read {}: {}", path, why) throws Error with a formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(ErrorCode::kInvalidInput, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void fail(ErrorCode code, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(code, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace numcheck
