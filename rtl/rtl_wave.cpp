#include "rtl/rtl_wave.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <queue>
#include <stdexcept>

#include "Vreduction_alu64_bf16.h"
#include "Vreduction_alu64_fp16.h"
#include "Vreduction_alu64_fp32.h"
#include "Vreduction_alu64_int32.h"
#include "models/core/errors.hpp"
#include "verilated.h"
#include "verilated_fst_c.h"

namespace fabricsim {

namespace {

constexpr std::size_t kLanes = 64;
constexpr std::size_t kBeatBytes = kLanes * 4;

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// One traced ALU and the folds queued for it, stepped a half cycle at a time
// by the replay loop. Falling edge: present the next beat. Rising edge: the
// beat is taken, and a result at the output is checked against the fold's.
class Replayer {
 public:
  Replayer(std::string name, Ps cycle_ps) : name_(std::move(name)), cycle_(cycle_ps) {}
  virtual ~Replayer() = default;
  virtual void attach(VerilatedFstC& tfp) = 0;

  void queue(const RtlWave::Fold* f) { todo_.push_back(f); }
  // Time of the first falling edge (the queue is in time order).
  Ps first_edge() const { return edge_at_or_after(todo_.front()->t, cycle_); }

  // Returns the time of this ALU's next half-cycle step, or kNever when idle.
  Ps falling(Ps t, const std::vector<std::uint8_t>& data) {
    if (cur_ == nullptr && next_ < todo_.size() && edge_at_or_after(todo_[next_]->t, cycle_) <= t) {
      cur_ = todo_[next_++];
      sent_ = 0;
    }
    const bool offer = cur_ != nullptr;
    std::uint32_t a[kLanes] = {}, b[kLanes] = {};
    if (offer) {
      const std::size_t off = sent_ * kBeatBytes;
      const std::size_t len = std::min(kBeatBytes, static_cast<std::size_t>(cur_->bytes) - off);
      std::memcpy(a, data.data() + cur_->data + off, len);
      std::memcpy(b, data.data() + cur_->data + cur_->bytes + off, len);
    }
    drive(false, offer, cur_, a, b);
    offered_ = offer && ready();
    return t + cycle_ / 2;
  }

  Ps rising(Ps t, const std::vector<std::uint8_t>& data, std::uint64_t& checked) {
    drive_clock(true);
    if (offered_) {
      inflight_.emplace_back(cur_, sent_);
      if (++sent_ * kBeatBytes >= cur_->bytes) cur_ = nullptr;
    }
    if (out_valid()) {
      if (inflight_.empty()) throw InvariantError("--wave-rtl: " + name_ + " gave a result nobody asked for");
      const auto [f, beat] = inflight_.front();
      inflight_.pop_front();
      check(*f, beat, data);
      ++checked;
    }
    const bool busy = cur_ != nullptr || !inflight_.empty() || out_valid();
    const Ps fall = t - cycle_ / 2 + cycle_;
    if (busy) return fall;
    if (next_ < todo_.size()) return std::max(fall, edge_at_or_after(todo_[next_]->t, cycle_));
    return kNever;
  }

 protected:
  virtual void drive(bool clk, bool valid, const RtlWave::Fold* f, const std::uint32_t* a,
                     const std::uint32_t* b) = 0;
  virtual void drive_clock(bool clk) = 0;
  virtual bool ready() const = 0;
  virtual bool out_valid() const = 0;
  virtual std::uint16_t out_tag() const = 0;
  virtual std::uint32_t out_lane(std::size_t l) const = 0;

 private:
  void check(const RtlWave::Fold& f, std::size_t beat, const std::vector<std::uint8_t>& data) const {
    const std::size_t off = beat * kBeatBytes;
    const std::size_t len = std::min(kBeatBytes, static_cast<std::size_t>(f.bytes) - off);
    std::uint32_t want[kLanes] = {};
    std::memcpy(want, data.data() + f.data + 2 * static_cast<std::size_t>(f.bytes) + off, len);
    const std::string where = "--wave-rtl: " + name_ + ", fold at " + std::to_string(ps_to_ns(f.t)) +
                              " ns (tag " + std::to_string(f.tag) + ")";
    if (out_tag() != f.tag)
      throw InvariantError(where + ": the RTL result carries tag " + std::to_string(out_tag()));
    for (std::size_t l = 0; l * 4 < len; ++l)
      if (out_lane(l) != want[l])
        throw InvariantError(where + ", beat " + std::to_string(beat) + ", lane " + std::to_string(l) +
                             ": the traced RTL gives " + hex32(out_lane(l)) + ", the engine computed " +
                             hex32(want[l]));
  }

  std::string name_;
  Ps cycle_;
  std::vector<const RtlWave::Fold*> todo_;
  std::size_t next_ = 0;
  const RtlWave::Fold* cur_ = nullptr;
  std::size_t sent_ = 0;
  bool offered_ = false;
  std::deque<std::pair<const RtlWave::Fold*, std::size_t>> inflight_;
};

template <class Model>
class ReplayerOf final : public Replayer {
 public:
  ReplayerOf(VerilatedContext& ctx, const std::string& name, Ps cycle_ps)
      : Replayer(name, cycle_ps), top_(&ctx, name.c_str()) {
    top_.clk = 0;
    top_.rst_n = 0;
    top_.in_valid = 0;
    top_.out_ready = 1;
    for (int i = 0; i < 3; ++i) {
      if (i == 2) top_.rst_n = 1;
      top_.clk = 0;
      top_.eval();
      top_.clk = 1;
      top_.eval();
    }
  }
  ~ReplayerOf() override { top_.final(); }
  ReplayerOf(const ReplayerOf&) = delete;
  ReplayerOf& operator=(const ReplayerOf&) = delete;
  void attach(VerilatedFstC& tfp) override { top_.trace(&tfp, 99); }

 protected:
  void drive(bool clk, bool valid, const RtlWave::Fold* f, const std::uint32_t* a,
             const std::uint32_t* b) override {
    top_.clk = clk;
    top_.in_valid = valid;
    if (valid) {
      top_.in_dtype = static_cast<std::uint8_t>(f->type);
      top_.in_op = static_cast<std::uint8_t>(f->op);
      top_.in_tag = f->tag;
      for (std::size_t l = 0; l < kLanes; ++l) {
        top_.in_a[l] = a[l];
        top_.in_b[l] = b[l];
      }
    }
    top_.eval();
  }
  void drive_clock(bool clk) override {
    top_.clk = clk;
    top_.eval();
  }
  bool ready() const override { return top_.in_ready; }
  bool out_valid() const override { return top_.out_valid; }
  std::uint16_t out_tag() const override { return top_.out_tag; }
  std::uint32_t out_lane(std::size_t l) const override { return top_.out_y[l]; }

 private:
  Model top_;
};

std::unique_ptr<Replayer> make_replayer(VerilatedContext& ctx, DType t, const std::string& name,
                                        Ps cycle_ps) {
  switch (t) {
    case DType::kFp32: return std::make_unique<ReplayerOf<Vreduction_alu64_fp32>>(ctx, name, cycle_ps);
    case DType::kFp16: return std::make_unique<ReplayerOf<Vreduction_alu64_fp16>>(ctx, name, cycle_ps);
    case DType::kBf16: return std::make_unique<ReplayerOf<Vreduction_alu64_bf16>>(ctx, name, cycle_ps);
    case DType::kInt32: return std::make_unique<ReplayerOf<Vreduction_alu64_int32>>(ctx, name, cycle_ps);
  }
  throw std::logic_error("RtlWave: unknown dtype");
}

}  // namespace

RtlWave::RtlWave(Options options) : options_(std::move(options)) {}
RtlWave::~RtlWave() = default;

int RtlWave::alu(const std::string& name, Ps cycle_ps) {
  const char* pat = options_.scope.c_str();
  if (fnmatch(pat, name.c_str(), 0) != 0 && fnmatch(pat, (name + ".clk").c_str(), 0) != 0) return -1;
  if (cycle_ps < 2) throw std::invalid_argument("RtlWave: " + name + " has no clock period");
  alus_.push_back({name, cycle_ps});
  return static_cast<int>(alus_.size()) - 1;
}

void RtlWave::fold(int alu, Ps t, std::uint16_t tag, RedOp op, DType type,
                   const std::uint8_t* acc_before, const std::uint8_t* in,
                   const std::uint8_t* acc_after, std::size_t bytes) {
  folds_.push_back({alu, t, tag, op, type, static_cast<std::uint32_t>(bytes), data_.size()});
  data_.insert(data_.end(), acc_before, acc_before + bytes);
  data_.insert(data_.end(), in, in + bytes);
  data_.insert(data_.end(), acc_after, acc_after + bytes);
}

void RtlWave::finish(Ps /*end_of_run*/) {
  // One replayer per (ALU, dtype) with folds; a run normally reduces one dtype.
  std::stable_sort(folds_.begin(), folds_.end(), [](const Fold& a, const Fold& b) { return a.t < b.t; });
  VerilatedContext ctx;
  ctx.traceEverOn(true);
  std::vector<std::unique_ptr<Replayer>> reps;
  std::vector<int> rep_of(alus_.size() * 4, -1);
  for (const Fold& f : folds_) {
    int& r = rep_of[static_cast<std::size_t>(f.alu) * 4 + static_cast<std::size_t>(f.type)];
    if (r < 0) {
      const Alu& a = alus_[static_cast<std::size_t>(f.alu)];
      bool several = false;
      for (const Fold& g : folds_) several = several || (g.alu == f.alu && g.type != f.type);
      r = static_cast<int>(reps.size());
      reps.push_back(make_replayer(ctx, f.type, several ? a.name + "_" + to_string(f.type) : a.name,
                                   a.cycle_ps));
    }
    reps[static_cast<std::size_t>(r)]->queue(&f);
  }
  alus_traced_ = reps.size();
  VerilatedFstC tfp;
  tfp.set_time_unit("1ps");
  tfp.set_time_resolution("1ps");
  for (auto& r : reps) r->attach(tfp);
  tfp.open(options_.path.c_str());
  if (!tfp.isOpen()) throw std::runtime_error("--wave-rtl: cannot write " + options_.path);

  // Every ALU's half-cycle steps in time order: all steps at one instant,
  // then one dump.
  struct Step {
    Ps t;
    std::size_t rep;
    bool rise;
    bool operator>(const Step& o) const { return t != o.t ? t > o.t : rep > o.rep; }
  };
  std::priority_queue<Step, std::vector<Step>, std::greater<>> steps;
  for (std::size_t i = 0; i < reps.size(); ++i) steps.push({reps[i]->first_edge(), i, false});
  while (!steps.empty()) {
    const Ps t = steps.top().t;
    while (!steps.empty() && steps.top().t == t) {
      const Step s = steps.top();
      steps.pop();
      Replayer& r = *reps[s.rep];
      const Ps next = s.rise ? r.rising(t, data_, beats_checked_) : r.falling(t, data_);
      if (next != kNever) steps.push({next, s.rep, !s.rise});
    }
    tfp.dump(static_cast<std::uint64_t>(t));
  }
  tfp.close();
  for (auto& r : reps) r.reset();
}

}  // namespace fabricsim
