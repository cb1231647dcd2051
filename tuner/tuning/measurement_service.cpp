#include "tuner/tuning/measurement_service.hpp"

#include <unistd.h>

namespace swr {

ProtocolOutput::ProtocolOutput() {
  const int protocol_fd = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  stream_ = fdopen(protocol_fd, "w");
}

void ProtocolOutput::send(const nlohmann::json& message) {
  const std::string line = message.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), stream_);
  std::fflush(stream_);
}

}  // namespace swr
