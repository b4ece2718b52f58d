/* yirage.h must compile as strict C99 (built with -std=c99 -pedantic -Werror). */
#include "yirage.h"

int main(void) {
  return yirage_abi_version() == YIRAGE_ABI_VERSION ? 0 : 1;
}
