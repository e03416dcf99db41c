// main() for GoogleTest binaries that elaborate SystemC models.
// libsystemc defines main() and calls sc_main; we define main() ourselves to
// silence the banner, and sc_main runs the tests. Any SystemC warning or
// error becomes an exception, so it fails the test that caused it.
#include <systemc>

#include <gtest/gtest.h>

#include <cstdlib>

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING,
                                          sc_core::SC_DISPLAY | sc_core::SC_THROW);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

int main(int argc, char* argv[]) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
