// A growable ring buffer (FIFO). Unlike std::deque it keeps its storage when
// it empties, so a steady-state simulation never allocates on push/pop.
#pragma once
#include <cstddef>
#include <vector>

namespace fabricsim {

template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return buf_[(head_ + size_ - 1) & mask()]; }
  const T& back() const { return buf_[(head_ + size_ - 1) & mask()]; }
  const T& operator[](std::size_t i) const { return buf_[(head_ + i) & mask()]; }

  void push_back(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & mask()] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask();
    --size_;
  }

 private:
  std::size_t mask() const { return buf_.size() - 1; }
  void grow() {
    std::vector<T> next(buf_.empty() ? 16 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) next[i] = buf_[(head_ + i) & mask()];
    buf_.swap(next);
    head_ = 0;
  }
  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace fabricsim
