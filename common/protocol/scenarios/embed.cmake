# Writes OUTPUT, a C++ source defining linkem::detail::kBuiltinScenarios: the name (the
# file's stem) and text of each file in INPUTS (common/protocol/scenarios/*.json, ';'-separated) as
# raw string literals. Run by the build whenever a file changes (common/protocol/CMakeLists.txt).
# Stops the build when a file is not JSON, lacks a "steps" array, or its "name" is not its
# stem, so a broken edit shows at build time.
if(NOT INPUTS OR NOT OUTPUT)
  message(FATAL_ERROR "embed.cmake: run with -DINPUTS=<a.json;b.json> -DOUTPUT=<cpp>")
endif()
set(delim "linkem_scenario")
set(body "")
set(count 0)
foreach(input IN LISTS INPUTS)
  get_filename_component(stem "${input}" NAME_WE)
  file(READ "${input}" text)
  string(JSON kind ERROR_VARIABLE err TYPE "${text}" steps)
  if(err OR NOT kind STREQUAL "ARRAY")
    message(FATAL_ERROR "${input}: not a JSON object with a \"steps\" array: ${err}")
  endif()
  string(JSON name ERROR_VARIABLE err GET "${text}" name)
  if(err OR NOT name STREQUAL stem)
    message(FATAL_ERROR "${input}: \"name\" must be the file's stem, \"${stem}\"")
  endif()
  string(FIND "${text}" ")${delim}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${input}: contains the raw-string delimiter ')${delim}\"'")
  endif()
  string(APPEND body "    {\"${stem}\", R\"${delim}(${text})${delim}\"},\n")
  math(EXPR count "${count} + 1")
endforeach()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from common/protocol/scenarios/*.json by common/protocol/scenarios/embed.cmake. Do not edit.\n"
  "#include <cstddef>\n"
  "namespace linkem::detail {\n"
  "struct EmbeddedScenario {\n    const char* name;\n    const char* text;\n};\n"
  "extern const EmbeddedScenario kBuiltinScenarios[];\n"
  "extern const std::size_t kBuiltinScenarioCount;\n"
  "const EmbeddedScenario kBuiltinScenarios[] = {\n${body}};\n"
  "const std::size_t kBuiltinScenarioCount = ${count};\n"
  "}  // namespace linkem::detail\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
