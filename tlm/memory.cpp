#include "tlm/memory.hpp"

#include <sys/mman.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace fabricsim {

Memory::Memory(const sc_core::sc_module_name& name, std::uint64_t bytes,
               const sc_core::sc_time& read_latency, const sc_core::sc_time& write_latency)
    : sc_core::sc_module(name),
      socket("socket"),
      size_(bytes),
      read_latency_(read_latency),
      write_latency_(write_latency) {
  // Reserved, not committed: a 1-GiB window per GPU costs only what is written.
  void* p = mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error(std::string(this->name()) + ": cannot reserve " +
                             std::to_string(bytes) + " bytes of address space");
  data_ = static_cast<std::uint8_t*>(p);
  socket.register_b_transport(this, &Memory::b_transport);
  socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &Memory::transport_dbg);
}

Memory::~Memory() { munmap(data_, static_cast<std::size_t>(size_)); }

bool Memory::access(tlm::tlm_generic_payload& t) {
  const std::uint64_t a = t.get_address();
  const unsigned len = t.get_data_length();
  if (a >= size_ || len > size_ - a) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  if (t.get_streaming_width() < len) {
    t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  std::uint8_t* mem = data_ + a;
  unsigned char* d = t.get_data_ptr();
  const unsigned char* be = t.get_byte_enable_ptr();
  const unsigned be_len = t.get_byte_enable_length();
  switch (t.get_command()) {
    case tlm::TLM_READ_COMMAND:
      for (unsigned i = 0; i < len; ++i)
        if (!be || be[i % be_len] == TLM_BYTE_ENABLED) d[i] = mem[i];
      break;
    case tlm::TLM_WRITE_COMMAND:
      if (!be) {
        std::memcpy(mem, d, len);
      } else {
        for (unsigned i = 0; i < len; ++i)
          if (be[i % be_len] == TLM_BYTE_ENABLED) mem[i] = d[i];
      }
      break;
    case tlm::TLM_IGNORE_COMMAND:
      break;
  }
  t.set_response_status(tlm::TLM_OK_RESPONSE);
  return true;
}

void Memory::b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
  if (!access(t)) return;
  if (t.is_read()) {
    ++reads_;
    delay += read_latency_;
  } else if (t.is_write()) {
    ++writes_;
    delay += write_latency_;
  }
  t.set_dmi_allowed(true);
}

bool Memory::get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
  if (t.get_address() >= size_) return false;
  dmi.set_dmi_ptr(data_);
  dmi.set_start_address(0);
  dmi.set_end_address(size_ - 1);
  dmi.allow_read_write();
  dmi.set_read_latency(read_latency_);
  dmi.set_write_latency(write_latency_);
  return true;
}

unsigned int Memory::transport_dbg(tlm::tlm_generic_payload& t) {
  const std::uint64_t a = t.get_address();
  if (a >= size_) return 0;
  const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(t.get_data_length(), size_ - a));
  if (t.is_read()) std::memcpy(t.get_data_ptr(), data_ + a, n);
  if (t.is_write()) std::memcpy(data_ + a, t.get_data_ptr(), n);
  return n;
}

}  // namespace fabricsim
