#pragma once
// An AsyncSession over blocking Sessions: `threads` worker threads, each with its own Session,
// perform the attempts started on it. The runner drives every backend through one event loop;
// backends without an asynchronous interface (the reference system) get this adapter, so
// retries, records and failures take exactly one path whatever the backend.
//
// An exception thrown by Session::send becomes that attempt's result: Status::kFatal with the
// error "internal error: <what>" (the item fails and is recorded; the run goes on).
#include <cstddef>
#include <memory>

#include "llm/backend.hpp"

namespace numcheck::llm {

[[nodiscard]] std::unique_ptr<AsyncSession> make_threaded_session(Backend& backend, std::size_t threads);

// Performs one attempt on a blocking session; an exception becomes a kFatal attempt.
[[nodiscard]] Attempt send_guarded(Session& session, const Request& request, std::size_t endpoint);

}  // namespace numcheck::llm
