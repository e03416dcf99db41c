// The example of docs/tlm.md ("Attaching an initiator"), kept here so it is
// built and run: a CLI test checks that the page shows exactly this code
// (from the first include line on).
#include <cstdio>

#include "tlm/tlm_fabric.hpp"

struct Core : sc_core::sc_module {               // your model: plain tlm_utils
  SC_HAS_PROCESS(Core);
  tlm_utils::simple_initiator_socket<Core> socket;
  std::uint64_t peer;                            // GPU 1's memory
  explicit Core(sc_core::sc_module_name n) : sc_module(n), socket("socket") { SC_THREAD(run); }
  void run() {
    float data[64] = {1.0f};
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(peer);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(data));
    t.set_data_length(sizeof data);
    t.set_streaming_width(sizeof data);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, delay);               // posted: returns at once
    t.set_command(tlm::TLM_READ_COMMAND);
    socket->b_transport(t, delay);               // waits for the data
    std::printf("round trip done at %s\n", sc_core::sc_time_stamp().to_string().c_str());
  }
};

int sc_main(int, char*[]) {
  auto cfg = fabricsim::load_config("configs/dgx-h100.yaml",
                                    {"workload.kind=tlm", "tlm.multicast=16777216@0"});
  fabricsim::TlmFabric fabric("top", cfg);
  Core core("core");
  core.peer = fabric.address_map().gpu_base(1);
  core.socket.bind(fabric.target(0));            // GPU 0's NVLink ports
  sc_core::sc_start();
  return fabric.finish() ? 0 : 1;                // conservation and credit checks
}
