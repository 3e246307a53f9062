# Writes OUTPUT (a C header with SAFS_VERSION and SAFS_SOURCE_COMMIT) unless
# it already says the same, so an unchanged commit leaves it untouched and
# nothing recompiles. Run with cmake -P; inputs: SOURCE_DIR, OUTPUT, VERSION,
# GIT_EXECUTABLE (may be empty).
set(commit "")
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE commit RESULT_VARIABLE described_rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT described_rc EQUAL 0)
    set(commit "")
  endif()
endif()
# A tarball made by `git archive` has .source-commit filled in (export-subst
# in .gitattributes); in a checkout it still holds the placeholder.
if(NOT commit AND EXISTS ${SOURCE_DIR}/.source-commit)
  file(STRINGS ${SOURCE_DIR}/.source-commit archived LIMIT_COUNT 1)
  if(archived MATCHES "^[0-9a-f]+$")
    set(commit ${archived})
  endif()
endif()
if(NOT commit)
  set(commit unknown)
endif()
set(text "// Generated at build time by cmake/source_version.cmake.
#pragma once
#define SAFS_VERSION \"${VERSION}\"
#define SAFS_SOURCE_COMMIT \"${commit}\"
")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
