/* Check macros shared by the C tests in capi_tests/. Each failed check is printed with the last
 * yirage error and counted in `failures`; main returns non-zero when any failed. */
#ifndef YIRAGE_CAPI_TESTS_CHECK_H_
#define YIRAGE_CAPI_TESTS_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "yirage.h"

static int failures = 0;

#define CHECK(cond)                                                                                                 \
  do {                                                                                                              \
    if (!(cond)) {                                                                                                  \
      fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond, yirage_last_error_message()); \
      ++failures;                                                                                                   \
    }                                                                                                               \
  } while (0)

#define OK(call) CHECK((call) == YIRAGE_OK)

/* The call must fail with INVALID_ARGUMENT and a message containing `fragment`. */
#define EXPECT_INVALID(call, fragment) \
  CHECK((call) == YIRAGE_ERROR_INVALID_ARGUMENT && strstr(yirage_last_error_message(), (fragment)) != NULL)

/* Ends main: prints the outcome and returns the exit status. */
static int finish(const char *what) {
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all %s checks passed\n", what);
  return 0;
}

#endif /* YIRAGE_CAPI_TESTS_CHECK_H_ */
