#include "embeddings_server.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "io/json.hpp"

namespace numcheck::testing {

struct EmbeddingsServer::Impl {
  httplib::Server svr;
  std::thread th;
  int port = 0;
  std::string model;
  std::size_t dim;
  mutable std::mutex mu;
  std::vector<EmbeddingFault> faults;
  std::map<std::string, int> seen;  // (fault index + text) -> requests so far
};

EmbeddingsServer::EmbeddingsServer(std::string model, std::size_t dimension)
    : impl_(std::make_unique<Impl>()) {
  impl_->model = std::move(model);
  impl_->dim = dimension;
  Impl* im = impl_.get();
  im->svr.Get("/v1/models", [im](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> l(im->mu);
    io::Json j = {{"object", "list"}, {"data", io::Json::array({{{"id", im->model}, {"object", "model"}}})}};
    res.set_content(j.dump(), "application/json");
  });
  im->svr.Post("/v1/embeddings", [this, im](const httplib::Request& req, httplib::Response& res) {
    ++posts_;
    io::Json body = io::Json::parse(req.body, nullptr, false);
    std::vector<std::string> inputs;
    bool ok = !body.is_discarded() && body.is_object() && body.contains("input") && body.contains("model");
    if (ok && body["input"].is_string()) {
      inputs.push_back(body["input"].get<std::string>());
    } else if (ok && body["input"].is_array() && !body["input"].empty()) {
      for (const auto& x : body["input"]) {
        if (!x.is_string()) ok = false;
        if (ok) inputs.push_back(x.get<std::string>());
      }
    } else {
      ok = false;
    }
    if (!ok) {
      res.status = 400;
      res.set_content(R"({"error":{"message":"need model and input, a string or an array of strings"}})",
                      "application/json");
      return;
    }
    texts_ += inputs.size();
    // The fault of each input text (its first matching fault still in force).
    std::vector<std::string> fault(inputs.size());
    std::string model;
    {
      std::lock_guard<std::mutex> l(im->mu);
      model = im->model;
      std::size_t largest = largest_batch_.load();
      if (inputs.size() > largest) largest_batch_ = inputs.size();
      for (std::size_t t = 0; t < inputs.size(); ++t) {
        for (std::size_t i = 0; i < im->faults.size(); ++i) {
          const auto& f = im->faults[i];
          if (inputs[t].find(f.match) == std::string::npos) continue;
          int& n = im->seen[std::to_string(i) + "\n" + inputs[t]];
          if (f.times < 0 || n < f.times) {
            ++n;
            fault[t] = f.kind;
            break;
          }
        }
      }
    }
    auto any = [&](const char* kind) { return std::find(fault.begin(), fault.end(), kind) != fault.end(); };
    if (any("429")) {  // the whole request
      res.status = 429;
      res.set_header("Retry-After", "0");
      res.set_content(R"({"error":{"message":"rate limited"}})", "application/json");
      return;
    }
    if (any("500")) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"internal error"}})", "application/json");
      return;
    }
    if (any("model")) model = "impostor-model";  // the answer says another model made it
    io::Json data = io::Json::array();
    for (std::size_t t = 0; t < inputs.size(); ++t) {
      if (fault[t] == "count") continue;  // this text's vector is left out of the answer
      io::Json vec = io::Json::array();
      if (fault[t] == "malformed") {
        vec = io::Json::array({"not", "a", "number"});
      } else {
        for (double x : vector_for(inputs[t])) vec.push_back(x);
        if (fault[t] == "dimension") vec.push_back(1.0);
      }
      data.push_back({{"object", "embedding"}, {"index", data.size()}, {"embedding", vec}});
    }
    if (data.empty())
      data.push_back({{"object", "embedding"}, {"index", 0}, {"embedding", io::Json::array()}});
    // Answered in reverse index order: the client must place vectors by "index".
    io::Json reversed = io::Json::array();
    for (std::size_t k = data.size(); k-- > 0;) reversed.push_back(data[k]);
    io::Json j = {{"object", "list"},
                  {"model", model},
                  {"data", reversed},
                  {"usage", {{"prompt_tokens", 1}, {"total_tokens", 1}}}};
    res.set_content(j.dump(), "application/json");
  });
}

EmbeddingsServer::~EmbeddingsServer() { stop(); }

int EmbeddingsServer::start() {
  impl_->port = impl_->svr.bind_to_any_port("127.0.0.1");
  impl_->th = std::thread([im = impl_.get()] { im->svr.listen_after_bind(); });
  for (int i = 0; i < 2000 && !impl_->svr.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return impl_->port;
}

void EmbeddingsServer::stop() {
  if (impl_->th.joinable()) {
    impl_->svr.stop();
    impl_->th.join();
  }
}

std::string EmbeddingsServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + "/v1";
}

void EmbeddingsServer::set_faults(std::vector<EmbeddingFault> f) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->faults = std::move(f);
  impl_->seen.clear();
}

void EmbeddingsServer::set_model(std::string model) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->model = std::move(model);
}

std::vector<double> EmbeddingsServer::vector_for(const std::string& text) const {
  std::vector<double> v(impl_->dim, 0.0);
  std::string w;
  auto flush = [&] {
    if (w.empty()) return;
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : w) h = (h ^ c) * 1099511628211ull;
    v[h % impl_->dim] += 1.0;
    w.clear();
  };
  for (char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      w += c;
    } else if (c >= 'A' && c <= 'Z') {
      w += static_cast<char>(c - 'A' + 'a');
    } else {
      flush();
    }
  }
  flush();
  return v;
}

}  // namespace numcheck::testing
