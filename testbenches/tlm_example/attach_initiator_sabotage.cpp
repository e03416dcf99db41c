// Negative tests of the attach-initiator example (attach_initiator.cpp, the
// code docs/tlm.md shows): each mode breaks one thing the example must catch,
// and CTest requires the example to exit 1 with the matching message
// (testbenches/CMakeLists.txt). The example is compiled in as it is, with its
// sc_main renamed; a Saboteur module, built before the example's modules,
// does the damage from outside.
//   status      the core addresses past every window: its write is refused
//   data        GPU 1's memory flips a bit in every read: the data read back
//               is not what was written
//   end-of-run  after the round trip a link counts an arrival twice (a model
//               bug): the fabric's packet conservation check fails
// usage: tlm_attach_initiator_sabotage status|data|end-of-run
#define sc_main attach_initiator_main
#include "testbenches/tlm_example/attach_initiator.cpp"  // NOLINT(bugprone-suspicious-include)
#undef sc_main

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

// A memory that keeps what is written and flips the low bit of the first
// byte of every read: a faulty memory model.
struct FlippingMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<FlippingMemory> socket;
  std::map<std::uint64_t, unsigned char> bytes;
  explicit FlippingMemory(const sc_core::sc_module_name& n) : sc_module(n), socket("socket") {
    socket.register_b_transport(this, &FlippingMemory::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& /*delay*/) {
    unsigned char* p = t.get_data_ptr();
    const std::uint64_t a = t.get_address();
    for (unsigned i = 0; i < t.get_data_length(); ++i) {
      if (t.is_write())
        bytes[a + i] = p[i];
      else
        p[i] = bytes[a + i];
    }
    if (t.is_read() && t.get_data_length() > 0) p[0] ^= 1U;
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct Saboteur : sc_core::sc_module {
  SC_HAS_PROCESS(Saboteur);
  Saboteur(const sc_core::sc_module_name& n, std::string mode)
      : sc_module(n), mode_(std::move(mode)) {
    if (mode_ == "data") memory_ = std::make_unique<FlippingMemory>("flipping_memory");
    SC_THREAD(run);
  }

 private:
  static fabricsim::TlmFabric& fabric() {
    auto* f = dynamic_cast<fabricsim::TlmFabric*>(sc_core::sc_find_object("top"));
    if (f == nullptr) throw std::runtime_error("sabotage: the example has no TlmFabric 'top'");
    return *f;
  }
  // Before the fabric's own hook gives GPU 1 the default memory (this module
  // was built first, so its hook runs first).
  void before_end_of_elaboration() override {
    if (mode_ == "data") fabric().bind_memory(1, memory_->socket);
  }
  // After the example's sc_main has set the core's peer.
  void start_of_simulation() override {
    if (mode_ != "status") return;
    auto* core = dynamic_cast<Core*>(sc_core::sc_find_object("core"));
    if (core == nullptr) throw std::runtime_error("sabotage: the example has no Core 'core'");
    core->peer = ~std::uint64_t{0} - 4096;  // in no GPU window and no multicast object
  }
  // end-of-run: long after the round trip, when nothing moves any more, a
  // link's receiver counts an arrival twice.
  void run() {
    if (mode_ != "end-of-run") return;
    sc_core::wait(1, sc_core::SC_MS);
    fabricsim::Link& link = *fabric().fabric().links().front();
    doubled_ = link.transmissions() + 1;
    link.count_arrivals_at(&doubled_);
  }

  std::string mode_;
  std::uint64_t doubled_ = 0;  // end-of-run: the arrivals the sabotaged link reads
  std::unique_ptr<FlippingMemory> memory_;  // data only: unbound, its socket would be an error
};

}  // namespace

// The kernel's entry point (its declaration was renamed with the example's).
extern "C" int sc_main(int argc, char* argv[]);
int sc_main(int argc, char* argv[]) {
  const std::string mode = argc == 2 ? argv[1] : "";
  if (mode != "status" && mode != "data" && mode != "end-of-run") {
    std::fprintf(stderr, "usage: tlm_attach_initiator_sabotage status|data|end-of-run (got '%s')\n",
                 mode.c_str());
    return 2;
  }
  Saboteur saboteur("saboteur", mode);
  return attach_initiator_main(argc, argv);
}
