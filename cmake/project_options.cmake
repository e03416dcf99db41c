# Compiler options for the project's own targets (not third-party headers).

# IEEE arithmetic exactly as written: no fused multiply-add contraction, no
# fast-math, so C++ reference arithmetic matches RTL bit for bit.
add_compile_options(-ffp-contract=off)

if(FABRICSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# fabricsim_target_options(<target>): warnings (as errors) for our code.
function(fabricsim_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                           -Wnon-virtual-dtor -Woverloaded-virtual)
  if(FABRICSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()
