#include "claimsllm/batch.hpp"

#include <utility>

#include "io/files.hpp"

namespace numcheck::claimsllm {

llm::RunSettings stage_batch_settings(llm::RunSettings s, const std::string& kind) {
  s.kind = kind;
  s.id_field = "id";
  return s;
}

std::size_t export_stage_batch(const std::vector<llm::WorkItem>& items, const llm::RunSettings& settings,
                               llm::Api api, const std::filesystem::path& file) {
  const llm::BatchRequests r = llm::batch_requests(items, settings, api);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  io::write_file_atomic(file, r.lines);
  return r.custom_ids.size();
}

llm::BatchImport import_stage_batch(const std::vector<llm::WorkItem>& items, const llm::RunSettings& settings,
                                    llm::Api api, const std::vector<std::filesystem::path>& outputs,
                                    const std::filesystem::path& out_dir) {
  return llm::import_batch(items, settings, api, outputs, io::OrderedJson::object(), out_dir);
}

}  // namespace numcheck::claimsllm
