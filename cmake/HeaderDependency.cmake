# nlohmann-json and CLI11 are header-only Debian packages. The GPU machine has
# no package registry: there, QFUSE_THIRD_PARTY_DIR may hold a copy of their
# headers (runtime/tools/vendor-headers.sh writes one into build-vendor/,
# which git ignores; carry it along).

set(QFUSE_THIRD_PARTY_DIR "${PROJECT_SOURCE_DIR}/build-vendor" CACHE PATH
    "Fallback headers (include/nlohmann, include/CLI) and googletest sources")

# find_package(<pkg>) or, failing that, an imported target over the vendored
# headers; `header` is the file that must exist under include/.
function(qfuse_header_dependency package target header)
  if(TARGET ${target})
    return()
  endif()
  find_package(${package} QUIET)
  if(TARGET ${target})
    # Visible to the unit tests' directories too.
    set_target_properties(${target} PROPERTIES IMPORTED_GLOBAL TRUE)
    message(STATUS "qfuse: ${package} from ${${package}_DIR}")
    return()
  endif()
  if(EXISTS "${QFUSE_THIRD_PARTY_DIR}/include/${header}")
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${QFUSE_THIRD_PARTY_DIR}/include")
    message(STATUS "qfuse: ${package} from ${QFUSE_THIRD_PARTY_DIR}")
    return()
  endif()
  message(FATAL_ERROR "qfuse needs ${package}: install the Debian "
    "package (scripts/install-deps.sh) or put its headers under "
    "${QFUSE_THIRD_PARTY_DIR}/include (runtime/tools/vendor-headers.sh)")
endfunction()

