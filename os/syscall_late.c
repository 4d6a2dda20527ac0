/* syscall_late.c - see syscall_late.h */
#include "os/syscall_late.h"

#include <stddef.h>
#include <string.h>

static const struct {
  const char *name;
  int nr;
} late[] = {
    {"statmount", 457},         {"listmount", 458},        {"lsm_get_self_attr", 459},
    {"lsm_set_self_attr", 460}, {"lsm_list_modules", 461}, {"mseal", 462},
    {"setxattrat", 463},        {"getxattrat", 464},       {"listxattrat", 465},
    {"removexattrat", 466},     {"open_tree_attr", 467},   {"file_getattr", 468},
    {"file_setattr", 469},
};

int syscall_late_nr(const char *name)
{
  for (size_t i = 0; name != NULL && i < sizeof late / sizeof late[0]; i++)
    if (strcmp(late[i].name, name) == 0)
      return late[i].nr;
  return -1;
}

const char *syscall_late_name(long nr)
{
  for (size_t i = 0; i < sizeof late / sizeof late[0]; i++)
    if (late[i].nr == nr)
      return late[i].name;
  return NULL;
}
