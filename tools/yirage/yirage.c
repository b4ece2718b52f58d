/* yirage — the command-line tool (docs/cli.md); its commands are in cli.c. */
#include "cli.h"

int main(int argc, char **argv) {
  return cli_main(argc, argv, NULL);
}
