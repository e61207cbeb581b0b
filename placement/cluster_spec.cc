#include "placement/cluster_spec.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <thread>
#include <vector>

#include "base/file.h"

namespace softwire {
namespace placement {
namespace {

Status ShorthandError(const std::string& text, const std::string& problem) {
  return InvalidArgumentError("cluster '" + text + "': " + problem +
                              " (expected e.g. 4cpu, 2x4cpu, 8sim or 2x4sim:16GiB)");
}

// Reads a positive decimal integer at `at`, advancing it; -1 when there is none.
int64_t ReadCount(const std::string& text, size_t* at) {
  size_t begin = *at;
  int64_t value = 0;
  while (*at < text.size() && std::isdigit(static_cast<unsigned char>(text[*at]))) {
    value = value * 10 + (text[*at] - '0');
    if (value > (int64_t{1} << 40)) return -1;
    ++*at;
  }
  return *at == begin ? -1 : value;
}

bool KindFromName(const std::string& name, proto::DeviceKind* kind) {
  if (name == "cpu")
    *kind = proto::DEVICE_KIND_CPU;
  else if (name == "sim")
    *kind = proto::DEVICE_KIND_SIM;
  else if (name == "cuda")
    *kind = proto::DEVICE_KIND_CUDA;
  else
    return false;
  return true;
}

class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) {
      first_ = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    }
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

StatusOr<int64_t> ParseByteSize(const std::string& text) {
  size_t at = 0;
  int64_t count = ReadCount(text, &at);
  if (count <= 0) return InvalidArgumentError("memory '" + text + "' must start with a count");
  const std::string unit = text.substr(at);
  struct Unit {
    const char* name;
    int64_t bytes;
  };
  const Unit units[] = {{"", 1},
                        {"B", 1},
                        {"KiB", int64_t{1} << 10},
                        {"MiB", int64_t{1} << 20},
                        {"GiB", int64_t{1} << 30},
                        {"TiB", int64_t{1} << 40},
                        {"KB", 1000},
                        {"MB", 1000 * 1000},
                        {"GB", 1000 * 1000 * 1000},
                        {"TB", int64_t{1000} * 1000 * 1000 * 1000}};
  for (const Unit& candidate : units) {
    if (unit == candidate.name) return count * candidate.bytes;
  }
  return InvalidArgumentError("memory '" + text +
                              "' has an unknown unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
}

StatusOr<proto::Cluster> ParseClusterShorthand(const std::string& text, int machine_cores) {
  size_t at = 0;
  int64_t first = ReadCount(text, &at);
  if (first <= 0) return ShorthandError(text, "it must start with a device count >= 1");
  int64_t nodes = 1;
  int64_t per_node = first;
  if (at < text.size() && text[at] == 'x') {
    ++at;
    nodes = first;
    per_node = ReadCount(text, &at);
    if (per_node <= 0) return ShorthandError(text, "a device count >= 1 must follow 'x'");
  }
  if (nodes * per_node > 65536) return ShorthandError(text, "more than 65536 devices");
  size_t kind_end = text.find(':', at);
  std::string kind_name =
      text.substr(at, kind_end == std::string::npos ? std::string::npos : kind_end - at);
  proto::DeviceKind kind;
  if (!KindFromName(kind_name, &kind)) {
    return ShorthandError(text, "unknown device kind '" + kind_name + "' (cpu, sim or cuda)");
  }
  int64_t memory = 0;
  if (kind_end != std::string::npos) {
    StatusOr<int64_t> parsed = ParseByteSize(text.substr(kind_end + 1));
    if (!parsed.ok()) return ShorthandError(text, parsed.status().message());
    memory = *parsed;
  }
  const int cores = std::max<int>(1, machine_cores / static_cast<int>(per_node));
  proto::Cluster cluster;
  for (int64_t n = 0; n < nodes; ++n) {
    proto::NodeSpec* node = cluster.add_node();
    node->set_name("node" + std::to_string(n));
    for (int64_t d = 0; d < per_node; ++d) {
      proto::DeviceSpec* device = node->add_device();
      device->set_name(kind_name + ":" + std::to_string(d));
      device->set_kind(kind);
      device->set_memory_bytes(memory);
      device->set_cores(kind == proto::DEVICE_KIND_CPU ? cores : 1);
    }
  }
  return cluster;
}

StatusOr<proto::Cluster> ParseClusterText(const std::string& text,
                                          const std::string& display_name) {
  proto::Cluster cluster;
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &cluster)) {
    return InvalidArgumentError(display_name + ":" + errors.first());
  }
  return cluster;
}

proto::Cluster SingleCpuCluster(int cores) {
  proto::Cluster cluster;
  proto::NodeSpec* node = cluster.add_node();
  node->set_name("node0");
  proto::DeviceSpec* device = node->add_device();
  device->set_name("cpu:0");
  device->set_kind(proto::DEVICE_KIND_CPU);
  device->set_cores(std::max(1, cores));
  return cluster;
}

StatusOr<proto::Cluster> LoadClusterSpec(const std::string& spec) {
  auto ends_with = [&spec](const std::string& suffix) {
    return spec.size() >= suffix.size() &&
           spec.compare(spec.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  std::error_code error;
  if (std::filesystem::is_regular_file(spec, error) || ends_with(".pbtxt") || ends_with(".txt")) {
    SOFTWIRE_ASSIGN_OR_RETURN(std::string text, ReadFile(spec));
    return ParseClusterText(text, spec);
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return ParseClusterShorthand(spec, cores);
}

}  // namespace placement
}  // namespace softwire
