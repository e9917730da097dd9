# nasd_rpcgen_library(TARGET OUT_DIR PROTO...): a static library of the XDR routines rpcgen makes
# from our own xdr/<PROTO>.x files (beside the calling CMakeLists.txt).
# rpcgen runs inside xdr/ with a bare file name so the generated .c includes "<name>.h" from its
# own folder; C++ code includes the headers by their path below the build tree, e.g.
# "server/nfs/xdr/<name>.h", hence OUT_DIR and the build tree on the include path.
find_program(RPCGEN rpcgen REQUIRED)

function(nasd_rpcgen_library target out_dir)
  set(sources)
  foreach(proto ${ARGN})
    add_custom_command(
      OUTPUT ${out_dir}/${proto}.h ${out_dir}/${proto}_xdr.c
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND ${CMAKE_COMMAND} -E remove -f ${out_dir}/${proto}.h ${out_dir}/${proto}_xdr.c
      COMMAND ${RPCGEN} -h -o ${out_dir}/${proto}.h ${proto}.x
      COMMAND ${RPCGEN} -c -o ${out_dir}/${proto}_xdr.c ${proto}.x
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/xdr
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/xdr/${proto}.x
      COMMENT "rpcgen ${proto}.x"
      VERBATIM)
    list(APPEND sources ${out_dir}/${proto}.h ${out_dir}/${proto}_xdr.c)
  endforeach()
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC PkgConfig::TIRPC)
  # rpcgen declares an unused `buf` in every routine.
  target_compile_options(${target} PRIVATE -Wno-unused-variable -Wno-unused-parameter)
endfunction()
