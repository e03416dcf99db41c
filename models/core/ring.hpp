// A growable ring buffer (FIFO). Unlike std::deque it keeps its storage when
// it empties, so a steady-state simulation never allocates on push/pop.
// The header is 24 bytes (a pointer and three 32-bit counts): switches keep
// one per VOQ (inputs x VCs x outputs of them), links and GPUs several, and
// the headers are read on every queue test, so two of them share a line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace fabricsim {

template <class T>
class Ring {
 public:
  Ring() = default;
  Ring(const Ring& o) : cap_(o.cap_), size_(o.size_) {
    if (cap_ > 0) buf_.reset(new T[cap_]);
    for (std::uint32_t i = 0; i < size_; ++i) buf_[i] = o[i];
  }
  Ring& operator=(const Ring& o) {
    if (this != &o) {
      Ring copy(o);
      *this = std::move(copy);
    }
    return *this;
  }
  ~Ring() = default;
  Ring(Ring&& o) noexcept
      : buf_(std::move(o.buf_)), cap_(o.cap_), head_(o.head_), size_(o.size_) {
    o.cap_ = o.head_ = o.size_ = 0;
  }
  Ring& operator=(Ring&& o) noexcept {
    if (this == &o) return *this;
    buf_ = std::move(o.buf_);
    cap_ = o.cap_;
    head_ = o.head_;
    size_ = o.size_;
    o.cap_ = o.head_ = o.size_ = 0;
    return *this;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return buf_[(head_ + size_ - 1) & mask()]; }
  const T& back() const { return buf_[(head_ + size_ - 1) & mask()]; }
  const T& operator[](std::size_t i) const {
    return buf_[(head_ + static_cast<std::uint32_t>(i)) & mask()];
  }

  void push_back(const T& v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & mask()] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask();
    --size_;
  }

 private:
  std::uint32_t mask() const { return cap_ - 1; }
  void grow() {
    if (cap_ >= (std::uint32_t{1} << 31)) throw std::length_error("Ring: more than 2^31 entries");
    const std::uint32_t cap = cap_ == 0 ? 16 : cap_ * 2;
    std::unique_ptr<T[]> next(new T[cap]);
    for (std::uint32_t i = 0; i < size_; ++i) next[i] = buf_[(head_ + i) & mask()];
    buf_ = std::move(next);
    cap_ = cap;
    head_ = 0;
  }
  std::unique_ptr<T[]> buf_;
  std::uint32_t cap_ = 0;  // a power of two, or 0
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace fabricsim
