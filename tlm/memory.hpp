// The default memory behind each TLM endpoint: a byte array of the GPU's
// window (tlm.window_bytes), reserved but only backed where written (an
// anonymous mapping: untouched pages cost no RAM and read as zero).
// b_transport with the configured latencies, DMI over the whole array
// (read/write latencies reported in the descriptor) and transport_dbg.
// Byte enables are honoured; a streaming width below the data length is a
// TLM_BURST_ERROR_RESPONSE; an address past the end a TLM_ADDRESS_ERROR_RESPONSE.
#pragma once
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>

namespace fabricsim {

class Memory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Memory> socket;

  Memory(const sc_core::sc_module_name& name, std::uint64_t bytes,
         const sc_core::sc_time& read_latency, const sc_core::sc_time& write_latency);
  ~Memory() override;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  std::uint64_t size() const { return size_; }
  // The bytes themselves (tests and examples look at them directly).
  std::uint8_t* data() { return data_; }
  std::uint64_t reads() const { return reads_; }
  std::uint64_t writes() const { return writes_; }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& t);
  // Checks and performs the access; returns false (status set) if refused.
  bool access(tlm::tlm_generic_payload& t);

  std::uint64_t size_;
  std::uint8_t* data_;
  sc_core::sc_time read_latency_, write_latency_;
  std::uint64_t reads_ = 0, writes_ = 0;
};

}  // namespace fabricsim
