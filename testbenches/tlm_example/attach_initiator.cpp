// The example of docs/tlm.md ("Attaching an initiator"), kept here so it is
// built and run: a CLI test checks that the page shows exactly this code
// (from the first include line on). It exits non-zero if a response status,
// the data read back or the fabric's end-of-run checks are wrong;
// attach_initiator_sabotage.cpp breaks each of them to prove it.
#include <algorithm>
#include <cstdio>
#include <iterator>

#include "tlm/tlm_fabric.hpp"

struct Core : sc_core::sc_module {               // your model: plain tlm_utils
  SC_HAS_PROCESS(Core);
  tlm_utils::simple_initiator_socket<Core> socket;
  std::uint64_t peer = 0;                        // GPU 1's memory
  bool ok = false;                               // the round trip gave back what was written
  explicit Core(const sc_core::sc_module_name& n) : sc_module(n), socket("socket") {
    SC_THREAD(run);
  }
  bool transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(t, delay);
    if (t.is_response_ok()) return true;
    std::printf("%s refused: %s\n", t.is_write() ? "write" : "read",
                t.get_response_string().c_str());
    return false;
  }
  void run() {
    float data[64], back[64] = {};
    for (int i = 0; i < 64; ++i) data[i] = 1.0f + static_cast<float>(i);
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(peer);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(data));
    t.set_data_length(sizeof data);
    t.set_streaming_width(sizeof data);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (!transport(t, delay)) return;            // posted: returns at once
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(back));
    if (!transport(t, delay)) return;            // waits for the data
    if (!std::equal(std::begin(data), std::end(data), std::begin(back))) {
      std::printf("read back other data than was written\n");
      return;
    }
    std::printf("round trip done at %s\n", sc_core::sc_time_stamp().to_string().c_str());
    ok = true;
  }
};

int sc_main(int /*argc*/, char* /*argv*/[]) {
  auto cfg = fabricsim::load_config("configs/dgx-h100.yaml",
                                    {"workload.kind=tlm", "tlm.multicast=16777216@0"});
  fabricsim::TlmFabric fabric("top", cfg);
  Core core("core");
  core.peer = fabric.address_map().gpu_base(1);
  core.socket.bind(fabric.target(0));            // GPU 0's NVLink ports
  sc_core::sc_start();
  if (!fabric.finish()) {                        // conservation and credit checks
    std::printf("%s\n", fabric.error().c_str());
    return 1;
  }
  return core.ok ? 0 : 1;
}
