// RingQueue: a FIFO of trivially copyable values in one growable power-of-two ring buffer.
// std::deque would do, but allocates a block every few hundred pushes even in steady state;
// this allocates only when the queue outgrows its capacity, and never shrinks.
#ifndef SOFTWIRE_SIMULATOR_RING_QUEUE_H_
#define SOFTWIRE_SIMULATOR_RING_QUEUE_H_

#include <glog/logging.h>

#include <cstddef>
#include <type_traits>
#include <vector>

namespace softwire {
namespace simulator {

template <typename T>
class RingQueue {
  static_assert(std::is_trivially_copyable<T>::value, "RingQueue moves values by copying");

 public:
  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }

  const T& front() const {
    DCHECK(!empty());
    return buffer_[head_ & mask_];
  }
  const T& back() const {
    DCHECK(!empty());
    return buffer_[(tail_ - 1) & mask_];
  }

  void push_back(const T& value) {
    if (tail_ - head_ == buffer_.size()) Grow();
    buffer_[tail_++ & mask_] = value;
  }

  void pop_front() {
    DCHECK(!empty());
    ++head_;
  }

 private:
  void Grow() {
    const size_t capacity = buffer_.empty() ? 64 : 2 * buffer_.size();
    std::vector<T> grown(capacity);
    const size_t count = size();
    for (size_t i = 0; i < count; ++i) grown[i] = buffer_[(head_ + i) & mask_];
    buffer_.swap(grown);
    head_ = 0;
    tail_ = count;
    mask_ = capacity - 1;
  }

  std::vector<T> buffer_;
  size_t head_ = 0;  // Index of the front, before masking; only grows.
  size_t tail_ = 0;  // One past the back, before masking.
  size_t mask_ = 0;
};

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_RING_QUEUE_H_
