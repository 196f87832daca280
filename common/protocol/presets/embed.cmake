# Writes OUTPUT, a C++ source defining linkem::detail::kBuiltinPresetsJson with the text of
# INPUT (common/protocol/presets/builtin.json) as a raw string literal. Run by the build
# whenever the JSON changes (see common/protocol/CMakeLists.txt). Stops the build when the
# file is not JSON or lacks a "presets" array, so a broken edit shows at build time, not at
# start-up.
if(NOT INPUT OR NOT OUTPUT)
  message(FATAL_ERROR "embed.cmake: run with -DINPUT=<json> -DOUTPUT=<cpp>")
endif()
file(READ "${INPUT}" text)
string(JSON kind ERROR_VARIABLE err TYPE "${text}" presets)
if(err)
  message(FATAL_ERROR "${INPUT}: not a JSON object with a \"presets\" array: ${err}")
endif()
if(NOT kind STREQUAL "ARRAY")
  message(FATAL_ERROR "${INPUT}: \"presets\" must be an array, is ${kind}")
endif()
set(delim "linkem_presets")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT}: contains the raw-string delimiter ')${delim}\"'")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by common/protocol/presets/embed.cmake. Do not edit.\n"
  "namespace linkem::detail {\n"
  "extern const char kBuiltinPresetsJson[];\n"
  "const char kBuiltinPresetsJson[] = R\"${delim}(${text})${delim}\";\n"
  "}  // namespace linkem::detail\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
