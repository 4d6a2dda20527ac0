/* help.h - `agentrt --help`. */
#ifndef AGENTRT_HELP_H
#define AGENTRT_HELP_H
#include <stdio.h>
void print_help(FILE *f);
#endif
