#include "runtime/net/shm_ring.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <thread>

namespace softwire {
namespace runtime {
namespace net {
namespace {

constexpr int64_t kStateBytes = 64;  // One cache line per cell state: no false sharing.
constexpr auto kTimeout = std::chrono::seconds(30);
// How long one futex wait lasts before the waiter checks `keep_waiting` again.
constexpr int64_t kWaitStepNs = 2'000'000;

// The futex calls on a word of shared memory (not FUTEX_PRIVATE: the two sides are processes).
// The operation numbers of <linux/futex.h> (kernel ABI), spelled here to keep the includes POSIX.
constexpr int kFutexWait = 0;
constexpr int kFutexWake = 1;

void FutexWait(std::atomic<int32_t>* word, int32_t while_value) {
  timespec step{0, kWaitStepNs};
  syscall(SYS_futex, reinterpret_cast<int32_t*>(word), kFutexWait, while_value, &step, nullptr, 0);
}

void FutexWakeAll(std::atomic<int32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<int32_t*>(word), kFutexWake, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

struct ShmRing::Header {
  int64_t cells;
  int64_t cell_bytes;
};

int RemoveOrphanedRings() {
  DIR* directory = opendir("/dev/shm");  // Where Linux keeps POSIX shared memory.
  if (directory == nullptr) return 0;
  int removed = 0;
  while (const dirent* entry = readdir(directory)) {
    const std::string name = std::string("/") + entry->d_name;
    if (!IsRingName(name)) continue;
    const size_t pid_begin = std::strlen("/softwire-dp-");
    const std::string pid_text = name.substr(pid_begin, name.find('-', pid_begin) - pid_begin);
    if (pid_text.size() > 9) continue;  // Not a pid this system gives.
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;  // Alive, or not ours to ask.
    if (shm_unlink(name.c_str()) == 0) ++removed;
  }
  closedir(directory);
  return removed;
}

StatusOr<std::unique_ptr<ShmRing>> ShmRing::Create(int cells, int64_t cell_bytes) {
  static std::once_flag swept;
  std::call_once(swept, [] { RemoveOrphanedRings(); });
  static std::atomic<int> counter{0};
  const std::string name =
      "/softwire-dp-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1));
  const int64_t bytes = kStateBytes * (1 + cells) + cells * cell_bytes;
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return UnavailableError("shm_open " + name + ": " + std::strerror(errno));
  if (ftruncate(fd, bytes) != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return UnavailableError("ftruncate " + name + ": " + std::strerror(errno));
  }
  void* base = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    shm_unlink(name.c_str());
    return UnavailableError("mmap " + name + ": " + std::strerror(errno));
  }
  std::unique_ptr<ShmRing> ring(new ShmRing(name, /*owner=*/true, base, bytes));
  ring->header_->cells = cells;
  ring->header_->cell_bytes = cell_bytes;
  for (int64_t c = 0; c < cells; ++c) {
    new (ring->state(c)) std::atomic<int32_t>(0);
    new (ring->sleeper(c)) std::atomic<int32_t>(0);
  }
  return ring;
}

bool IsRingName(const std::string& name) {
  const std::string prefix = "/softwire-dp-";
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string rest = name.substr(prefix.size());
  const size_t dash = rest.find('-');
  const auto digits = [](const std::string& text) {
    return !text.empty() && text.size() <= 20 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dash != std::string::npos && digits(rest.substr(0, dash)) && digits(rest.substr(dash + 1));
}

StatusOr<std::unique_ptr<ShmRing>> ShmRing::Open(const std::string& name) {
  if (!IsRingName(name)) {
    return InvalidArgumentError("'" + name + "' is not a data-plane ring's name");
  }
  const int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return UnavailableError("shm_open " + name + ": " + std::strerror(errno));
  struct stat info {};
  if (fstat(fd, &info) != 0 || info.st_size < kStateBytes) {
    close(fd);
    return UnavailableError("shared memory " + name + " is not a data-plane ring");
  }
  void* base =
      mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return UnavailableError("mmap " + name + ": " + std::strerror(errno));
  std::unique_ptr<ShmRing> ring(new ShmRing(name, /*owner=*/false, base, info.st_size));
  const Header& header = *ring->header_;
  // Sizes from another process: bounded before they are multiplied.
  constexpr int64_t kMaxCells = int64_t{1} << 20;
  if (header.cells < 1 || header.cells > kMaxCells || header.cell_bytes < 1 ||
      header.cell_bytes > info.st_size ||
      kStateBytes * (1 + header.cells) + header.cells * header.cell_bytes > info.st_size) {
    return UnavailableError("shared memory " + name + " is not a data-plane ring");
  }
  shm_unlink(name.c_str());  // Mapped by both from here on; gone once both unmap.
  return ring;
}

ShmRing::ShmRing(std::string name, bool owner, void* base, int64_t mapped_bytes)
    : name_(std::move(name)),
      owner_(owner),
      base_(base),
      mapped_bytes_(mapped_bytes),
      header_(static_cast<Header*>(base)) {}

ShmRing::~ShmRing() {
  munmap(base_, static_cast<size_t>(mapped_bytes_));
  if (owner_) shm_unlink(name_.c_str());  // Harmless when the reader unlinked it already.
}

std::atomic<int32_t>* ShmRing::state(int64_t c) const {
  return reinterpret_cast<std::atomic<int32_t>*>(static_cast<char*>(base_) + kStateBytes * (1 + c));
}

int64_t ShmRing::cell_bytes() const {
  return header_->cell_bytes;
}

std::atomic<int32_t>* ShmRing::sleeper(int64_t c) const {
  return state(c) + 1;  // The next word of the cell's state line.
}

char* ShmRing::cell(int64_t c) const {
  return static_cast<char*>(base_) + kStateBytes * (1 + header_->cells) + c * header_->cell_bytes;
}

Status ShmRing::Await(int64_t c, int32_t wanted, const std::function<bool()>& keep_waiting) const {
  std::atomic<int32_t>* flag = state(c);
  for (int spin = 0; spin < 2000; ++spin) {
    if (flag->load(std::memory_order_acquire) == wanted) return Status::Ok();
  }
  // Asleep on the state word until the other side changes it (Publish wakes it). The sleeper
  // flag is raised before the last look, and Publish stores before it looks at the flag, both
  // sequentially consistent: either this side sees the new state or the other sees the flag;
  // the futex itself sleeps only while the word still holds the old state.
  const auto give_up = std::chrono::steady_clock::now() + kTimeout;
  while (true) {
    sleeper(c)->store(1, std::memory_order_seq_cst);
    const int32_t seen = flag->load(std::memory_order_seq_cst);
    if (seen == wanted) return Status::Ok();
    if (!keep_waiting() || std::chrono::steady_clock::now() > give_up) {
      return UnavailableError("shared-memory ring " + name_ + ": the peer stopped");
    }
    FutexWait(flag, seen);
  }
}

void ShmRing::Publish(int64_t c, int32_t value) const {
  state(c)->store(value, std::memory_order_seq_cst);
  if (sleeper(c)->exchange(0, std::memory_order_seq_cst) != 0) FutexWakeAll(state(c));
}

Status ShmRing::Write(const char* data, int64_t bytes, const std::function<bool()>& keep_waiting) {
  const int64_t cell_bytes = header_->cell_bytes;
  for (int64_t at = 0; at < bytes; at += cell_bytes) {
    const int64_t c = next_;
    SOFTWIRE_RETURN_IF_ERROR(Await(c, 0, keep_waiting));
    std::memcpy(cell(c), data + at, static_cast<size_t>(std::min(cell_bytes, bytes - at)));
    Publish(c, 1);
    next_ = (next_ + 1) % header_->cells;
  }
  return Status::Ok();
}

Status ShmRing::Read(char* data, int64_t bytes, const std::function<bool()>& keep_waiting) {
  const int64_t cell_bytes = header_->cell_bytes;
  for (int64_t at = 0; at < bytes; at += cell_bytes) {
    const int64_t c = next_;
    SOFTWIRE_RETURN_IF_ERROR(Await(c, 1, keep_waiting));
    if (data != nullptr) {
      std::memcpy(data + at, cell(c), static_cast<size_t>(std::min(cell_bytes, bytes - at)));
    }
    Publish(c, 0);
    next_ = (next_ + 1) % header_->cells;
  }
  return Status::Ok();
}

}  // namespace net
}  // namespace runtime
}  // namespace softwire
